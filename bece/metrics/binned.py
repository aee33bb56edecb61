"""Plug-in (classical) binned calibration errors.

.. math::

    \\mathrm{ECE} = \\sum_{m=1}^{M} \\frac{n_m}{n}\\,|\\mathrm{acc}_m - \\mathrm{conf}_m|
                = \\frac{1}{n} \\sum_{m=1}^{M} |c_{1,m} - S_m|,
    \\qquad
    \\mathrm{MCE} = \\max_{m:\\, n_m > 0} |\\mathrm{acc}_m - \\mathrm{conf}_m|,

with :math:`\\mathrm{acc}_m = c_{1,m}/n_m` and :math:`\\mathrm{conf}_m =
S_m/n_m` from :class:`~bece.stats.CalibrationStats`. Empty bins contribute
nothing. With uniform bins these equal the ECE computed from scikit-learn's
``calibration_curve`` and netcal's ``ECE`` on the same bins.

References
----------
Naeini, Cooper & Hauskrecht (2015), "Obtaining well calibrated probabilities
using Bayesian binning", AAAI. Guo et al. (2017), "On calibration of modern
neural networks", ICML.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..base.typing import BinningSpec
from ..stats.binning import Binning
from ..stats.calibration_stats import CalibrationStats

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
        See :mod:`bece.stats.binning`.

    Returns
    -------
    float
        :math:`\\sum_m (n_m/n)|\\mathrm{acc}_m - \\mathrm{conf}_m|`.

    Examples
    --------
    >>> from bece import expected_calibration_error
    >>> round(expected_calibration_error([0, 1, 1, 1], [0.2, 0.6, 0.7, 0.9], n_bins=2), 12)
    0.25
    """
    return plugin_ece(
        CalibrationStats.from_arrays(y_true, y_prob, y_pred=y_pred, n_bins=n_bins, binning=binning)
    )


def maximum_calibration_error(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    y_pred: ArrayLike | None = None,
    n_bins: int | None = None,
    binning: BinningSpec | Binning = "uniform",
) -> float:
    """Binned maximum calibration error: the worst non-empty bin's gap.

    Parameters are those of :func:`expected_calibration_error`.

    Examples
    --------
    >>> from bece import maximum_calibration_error
    >>> round(maximum_calibration_error([0, 1, 1, 1], [0.2, 0.6, 0.7, 0.9], n_bins=2), 12)
    0.266666666667
    """
    return plugin_mce(
        CalibrationStats.from_arrays(y_true, y_prob, y_pred=y_pred, n_bins=n_bins, binning=binning)
    )
