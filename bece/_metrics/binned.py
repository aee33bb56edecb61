"""Plug-in (classical) binned calibration errors.

.. math::

    \\mathrm{ECE} = \\sum_{m=1}^{M} \\frac{n_m}{n}\\,|\\mathrm{acc}_m - \\mathrm{conf}_m|
                = \\frac{1}{n} \\sum_{m=1}^{M} |c_{1,m} - S_m|,
    \\qquad
    \\mathrm{MCE} = \\max_{m:\\, n_m > 0} |\\mathrm{acc}_m - \\mathrm{conf}_m|,

with :math:`\\mathrm{acc}_m = c_{1,m}/n_m` and :math:`\\mathrm{conf}_m =
S_m/n_m` from :class:`~bece._stats.CalibrationStats`. Empty bins contribute
nothing. With uniform bins these equal the ECE computed from scikit-learn's
``calibration_curve`` and netcal's ``ECE`` on the same bins.

References
----------
Naeini, Cooper & Hauskrecht (2015), "Obtaining well calibrated probabilities
using Bayesian binning", AAAI. Guo et al. (2017), "On calibration of modern
neural networks", ICML.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._base.typing import BinningSpec
from .._stats.binning import Binning
from .._stats.calibration_stats import CalibrationStats

__all__ = [
    "expected_calibration_error",
    "maximum_calibration_error",
    "plugin_ece",
    "plugin_mce",
]


def plugin_ece(stats: CalibrationStats) -> float:
    """Plug-in ECE :math:`\\frac1n\\sum_m |c_{1,m} - S_m|` of statistics."""
    return float(np.abs(stats.counts[1] - stats.sum_p).sum() / stats.n)


def plugin_mce(stats: CalibrationStats) -> float:
    """Plug-in MCE: the largest ``|acc_m - conf_m|`` over non-empty bins."""
    nonempty = stats.bin_counts > 0
    gap = np.abs(stats.accuracy - stats.confidence)
    return float(gap[nonempty].max())


def expected_calibration_error(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    y_pred: ArrayLike | None = None,
    n_bins: int | None = None,
    binning: BinningSpec | Binning = "uniform",
    labels: ArrayLike | None = None,
    pos_label: Any = None,
    from_logits: bool = False,
    row_sum_tol: float | None = None,
) -> float:
    """Binned expected calibration error (plug-in).

    Parameters
    ----------
    y_true : array_like of shape (n,)
        True labels (0/1 for a 1-D ``y_prob`` without ``y_pred``).
    y_prob : array_like of shape (n,) or (n, K)
        ``P(y=1)``, or class probabilities (top-label confidence), or with
        ``y_pred`` the confidence of ``y_pred``.
    y_pred : array_like of shape (n,), optional
        Predicted labels.
    n_bins : int, default 15
        Number of bins.
    binning : {"uniform", "quantile"} or array_like, default "uniform"
        See :mod:`bece._stats.binning`.
    labels : array_like, optional
        The class of each column of ``y_prob`` (``clf.classes_``) when the
        labels are not ``0 .. K-1``; for a 1-D ``y_prob`` its two classes,
        negative then positive (:mod:`bece._stats.labels`).
    pos_label : optional
        The value of ``y_true`` that is ``y = 1`` for a 1-D ``y_prob``
        (default 1 for labels 0/1 and -1/1, as scikit-learn).
    from_logits : bool, default False
        ``y_prob`` holds logits (sigmoid or softmax applied in float64).
    row_sum_tol : float, optional
        Row-sum tolerance of a 2-D ``y_prob`` (default strict); rows are
        used as given.

    Returns
    -------
    float
        :math:`\\sum_m (n_m/n)|\\mathrm{acc}_m - \\mathrm{conf}_m|`.

    Notes
    -----
    An (n, K) ``y_prob`` is read top-label for every K, K = 2 included:
    scikit-learn's ``calibration_curve`` reads a binary classifier's
    ``predict_proba(X)[:, 1]``, which is ``y_prob[:, 1]`` here.

    Examples
    --------
    >>> from bece import expected_calibration_error
    >>> round(expected_calibration_error([0, 1, 1, 1], [0.2, 0.6, 0.7, 0.9], n_bins=2), 12)
    0.25
    """
    return plugin_ece(CalibrationStats.from_arrays(
        y_true, y_prob, y_pred=y_pred, n_bins=n_bins, binning=binning, labels=labels,
        pos_label=pos_label, from_logits=from_logits, row_sum_tol=row_sum_tol,
    ))


def maximum_calibration_error(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    y_pred: ArrayLike | None = None,
    n_bins: int | None = None,
    binning: BinningSpec | Binning = "uniform",
    labels: ArrayLike | None = None,
    pos_label: Any = None,
    from_logits: bool = False,
    row_sum_tol: float | None = None,
) -> float:
    """Binned maximum calibration error: the worst non-empty bin's gap.

    Parameters are those of :func:`expected_calibration_error`.

    Examples
    --------
    >>> from bece import maximum_calibration_error
    >>> round(maximum_calibration_error([0, 1, 1, 1], [0.2, 0.6, 0.7, 0.9], n_bins=2), 12)
    0.266666666667
    """
    return plugin_mce(CalibrationStats.from_arrays(
        y_true, y_prob, y_pred=y_pred, n_bins=n_bins, binning=binning, labels=labels,
        pos_label=pos_label, from_logits=from_logits, row_sum_tol=row_sum_tol,
    ))
