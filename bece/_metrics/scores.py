"""Proper scores and their decompositions: Brier score (Murphy), CORP, log loss.

For pairs :math:`(z_i, p_i)` with weights :math:`w_i` (:mod:`bece._metrics.pairs`;
(n, K) input is read top-label: the score of the top confidence against
correctness, not the multiclass Brier score over all K classes)

.. math::

    \\mathrm{BS} = \\frac{\\sum_i w_i (p_i - z_i)^2}{\\sum_i w_i}, \\qquad
    \\mathrm{LL} = -\\frac{\\sum_i w_i [z_i \\log p_i + (1 - z_i) \\log(1 - p_i)]}{\\sum_i w_i}.

Murphy (1973): with groups :math:`g` of forecasts (by default the distinct
forecast values), :math:`\\bar p_g`, :math:`\\bar z_g` their weighted means,
:math:`\\pi_g` their weight share and :math:`\\bar z` the overall mean,

.. math::

    \\mathrm{BS} = \\underbrace{\\sum_g \\pi_g (\\bar p_g - \\bar z_g)^2}_{\\text{REL}}
    - \\underbrace{\\sum_g \\pi_g (\\bar z_g - \\bar z)^2}_{\\text{RES}}
    + \\underbrace{\\bar z (1 - \\bar z)}_{\\text{UNC}} + \\text{WB},

where the within-group term WB (Stephenson et al. 2008: within-bin variance
less covariance of the forecasts) is exactly 0 when every group holds one
forecast value, and is reported so that the parts always add up.

CORP (Dimitriadis, Gneiting & Jordan 2021): :math:`\\hat p` the isotonic
(PAV) regression of :math:`z` on :math:`p` (scikit-learn's
``IsotonicRegression``, ties pooled), :math:`S` a mean score,

.. math::

    S(p) = \\underbrace{S(p) - S(\\hat p)}_{\\text{MCB}}
    - \\underbrace{(S(\\bar z) - S(\\hat p))}_{\\text{DSC}} + \\underbrace{S(\\bar z)}_{\\text{UNC}}.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from .._base.typing import BinningSpec
from .._stats.binning import Binning, make_binning
from .._stats.inputs import Inputs
from .pairs import weighted_pairs

__all__ = [
    "BrierDecomposition",
    "CORPDecomposition",
    "brier_decomposition",
    "brier_score",
    "corp_decomposition",
    "log_loss",
]

_SCORES = ("brier", "log")


def brier_score(
    y_true: ArrayLike, y_prob: ArrayLike, *, y_pred: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None, labels: ArrayLike | None = None,
    pos_label: Any = None, from_logits: bool = False,
) -> float:
    """Brier score of the pairs (weighted mean of :math:`(p - z)^2`).

    Parameters
    ----------
    y_true, y_prob, y_pred, labels, pos_label, from_logits
        As :func:`bece.expected_calibration_error`; (n, K) ``y_prob`` is read
        top-label (confidence against correctness).
    sample_weight : array_like of shape (n,), optional
        Non-negative weights.

    Examples
    --------
    >>> from bece.metrics import brier_score
    >>> round(brier_score([0, 1, 1], [0.2, 0.6, 0.9]), 12)
    0.07
    """
    z, p, w = weighted_pairs(y_true, y_prob, y_pred=y_pred, sample_weight=sample_weight,
                             inputs=Inputs(labels, pos_label, from_logits))
    return float(np.dot(w, (p - z) ** 2) / w.sum())


def _log_terms(z: np.ndarray, p: np.ndarray) -> np.ndarray:
    """-log of the probability given to the outcome (inf where it is 0; no clipping)."""
    q = np.where(z > 0.5, p, 1.0 - p)
    with np.errstate(divide="ignore"):
        return -np.log(q)


def log_loss(
    y_true: ArrayLike, y_prob: ArrayLike, *, y_pred: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None, labels: ArrayLike | None = None,
    pos_label: Any = None, from_logits: bool = False,
) -> float:
    """Log loss (negative mean log-likelihood) of the pairs.

    Parameters are those of :func:`brier_score`. Nothing is clipped: a
    probability of 0 given to what happened gives ``inf`` (scikit-learn's
    ``log_loss`` clips to the dtype's eps instead).

    Examples
    --------
    >>> from bece.metrics import log_loss
    >>> round(log_loss([0, 1], [0.5, 0.5]), 6)
    0.693147
    """
    z, p, w = weighted_pairs(y_true, y_prob, y_pred=y_pred, sample_weight=sample_weight,
                             inputs=Inputs(labels, pos_label, from_logits))
    t = _log_terms(z, p)
    pos = w > 0  # a zero weight on an infinite term contributes nothing
    return float(np.dot(w[pos], t[pos]) / w.sum())


class BrierDecomposition(NamedTuple):
    """Murphy's decomposition ``brier = reliability - resolution + uncertainty + within``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # over-confident
    >>> from bece.metrics import brier_decomposition
    >>> d = brier_decomposition(y, p)
    >>> bool(abs(d.reliability - d.resolution + d.uncertainty + d.within - d.brier) < 1e-12)
    True
    """

    brier: float
    reliability: float
    resolution: float
    uncertainty: float
    within: float  # within-group term; 0 when each group holds one forecast value
    n_groups: int


def brier_decomposition(
    y_true: ArrayLike, y_prob: ArrayLike, *, y_pred: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None, n_bins: int | None = None,
    binning: BinningSpec | Binning | None = None, labels: ArrayLike | None = None,
    pos_label: Any = None, from_logits: bool = False,
) -> BrierDecomposition:
    """Murphy's decomposition of the Brier score.

    Parameters
    ----------
    y_true, y_prob, y_pred, sample_weight, labels, pos_label, from_logits
        As :func:`brier_score`.
    binning : {"uniform", "quantile"} or array_like, optional
        Group the forecasts into bins (:mod:`bece._stats.binning`) instead of
        by distinct value (the default, which makes ``within`` 0: Murphy's
        exact decomposition).
    n_bins : int, optional
        Number of bins with ``binning`` (default 15).

    Returns
    -------
    BrierDecomposition
        ``reliability - resolution + uncertainty + within == brier`` to
        float64 rounding.

    Examples
    --------
    >>> from bece.metrics import brier_decomposition
    >>> d = brier_decomposition([0, 1, 1, 1], [0.5, 0.5, 0.9, 0.9])
    >>> round(d.reliability, 12), round(d.resolution, 12), round(d.uncertainty, 12)
    (0.005, 0.0625, 0.1875)
    """
    z, p, w = weighted_pairs(y_true, y_prob, y_pred=y_pred, sample_weight=sample_weight,
                             inputs=Inputs(labels, pos_label, from_logits))
    if binning is None:
        if n_bins is not None:
            raise ValueError("n_bins applies with binning=; without it the groups are the "
                             "distinct forecast values")
        _, group = np.unique(p, return_inverse=True)
        group = group.reshape(-1)
    else:
        group = make_binning(p, n_bins, binning).index(p)
    size = int(group.max()) + 1
    wsum = w.sum()
    pi = np.bincount(group, weights=w, minlength=size) / wsum
    sz = np.bincount(group, weights=w * z, minlength=size) / wsum
    sp = np.bincount(group, weights=w * p, minlength=size) / wsum
    seen = pi > 0
    zbar_g = sz[seen] / pi[seen]
    pbar_g = sp[seen] / pi[seen]
    zbar = float(np.dot(w, z) / wsum)
    brier = float(np.dot(w, (p - z) ** 2) / wsum)
    rel = float(np.dot(pi[seen], (pbar_g - zbar_g) ** 2))
    res = float(np.dot(pi[seen], (zbar_g - zbar) ** 2))
    unc = zbar * (1.0 - zbar)
    # within = mean over points of (p - pbar_g)^2 - 2 (p - pbar_g)(z - zbar_g), computed directly
    pg = np.zeros(size)
    zg = np.zeros(size)
    pg[seen], zg[seen] = pbar_g, zbar_g
    dp = p - pg[group]
    within = float(np.dot(w, dp * dp - 2.0 * dp * (z - zg[group])) / wsum)
    return BrierDecomposition(brier, rel, res, unc, within, int(seen.sum()))


class CORPDecomposition(NamedTuple):
    """CORP decomposition ``score = miscalibration - discrimination + uncertainty``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # over-confident
    >>> from bece.metrics import corp_decomposition
    >>> c = corp_decomposition(y, p)
    >>> bool(abs(c.miscalibration - c.discrimination + c.uncertainty - c.score) < 1e-12)
    True
    """

    score: float
    miscalibration: float  # MCB >= 0
    discrimination: float  # DSC >= 0
    uncertainty: float
    recalibrated: np.ndarray  # (n,) the PAV-recalibrated probabilities


def _mean_score(kind: str, z: np.ndarray, q: np.ndarray, w: np.ndarray) -> float:
    if kind == "brier":
        return float(np.dot(w, (q - z) ** 2) / w.sum())
    t = _log_terms(z, q)
    pos = w > 0
    return float(np.dot(w[pos], t[pos]) / w.sum())


def corp_decomposition(
    y_true: ArrayLike, y_prob: ArrayLike, *, y_pred: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None, score: str = "brier",
    labels: ArrayLike | None = None, pos_label: Any = None, from_logits: bool = False,
) -> CORPDecomposition:
    """CORP decomposition of the Brier score or log loss (Dimitriadis et al. 2021).

    Parameters
    ----------
    y_true, y_prob, y_pred, sample_weight, labels, pos_label, from_logits
        As :func:`brier_score`.
    score : {"brier", "log"}, default "brier"
        The proper score decomposed.

    Returns
    -------
    CORPDecomposition
        ``miscalibration - discrimination + uncertainty == score`` to float64
        rounding; ``recalibrated`` is the isotonic fit at each point.

    Examples
    --------
    >>> from bece.metrics import corp_decomposition
    >>> d = corp_decomposition([0, 1, 0, 1], [0.1, 0.4, 0.6, 0.9])
    >>> round(d.miscalibration, 12), round(d.discrimination, 12)
    (0.06, 0.125)
    """
    if score not in _SCORES:
        raise ValueError(f"score must be one of {_SCORES}, got {score!r}")
    from sklearn.isotonic import IsotonicRegression

    z, p, w = weighted_pairs(y_true, y_prob, y_pred=y_pred, sample_weight=sample_weight,
                             inputs=Inputs(labels, pos_label, from_logits))
    iso = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip")
    fitted = np.asarray(iso.fit(p, z, sample_weight=w).predict(p), dtype=np.float64)
    zbar = np.full_like(p, np.dot(w, z) / w.sum())
    s_p = _mean_score(score, z, p, w)
    s_hat = _mean_score(score, z, fitted, w)
    s_bar = _mean_score(score, z, zbar, w)
    fitted.setflags(write=False)
    return CORPDecomposition(s_p, s_p - s_hat, s_bar - s_hat, s_bar, fitted)
