"""Calibration diagnostics of regression forecasts from their PIT values.

All functions take the PIT values :math:`u_t = F_t(y_t)` of a test set
(:func:`~bece.regression.pit`), so they work for every forecast form.

At levels :math:`p_1 < \\dots < p_J` the *calibration curve* (Kuleshov et al.
2018) is

.. math::

    \\hat p_j = \\frac{|\\{t : u_t \\le p_j\\}|}{T},

the fraction of targets at or below the forecast's :math:`p_j`-quantile; a
calibrated forecaster has :math:`\\hat p_j \\approx p_j`.

Relation to uncertainty-toolbox (``uct``): its ``mean_absolute_calibration_error``,
``root_mean_squared_calibration_error`` and ``miscalibration_area`` use the grid
``linspace(0, 1, 100)`` (our default here) and two kinds of proportions.
``prop_type="interval"`` (its default) is the fraction inside the central
:math:`p`-interval, :math:`|\\{t: |u_t - 1/2| \\le p/2\\}|/T`; ``kind="interval"``
here equals it. ``prop_type="quantile"`` compares the residual
``y_pred - y_true`` (not ``y_true - y_pred``) with :math:`\\Phi^{-1}(p)`, which
counts :math:`|\\{t: u_t \\ge 1 - p\\}|/T`, the curve reflected through the
point (1/2, 1/2), not :math:`\\hat p_j`. ``kind="quantile"`` (our default) uses
the correct direction. Because uct's grid is symmetric, :math:`|p - \\text{uct}(p)|
= |(1-p) - \\hat p(1-p)|` when no :math:`u_t` equals a level, so its three
summaries equal ours on that grid even though its curve is wrong: a forecaster
that under-predicts (curve below the diagonal) shows as over-predicting in its
plots. On any other grid, and for the curve itself, the two differ.

References
----------
Kuleshov, Fenner & Ermon (2018), "Accurate uncertainties for deep learning
using calibrated regression", ICML. Chung et al. (2021),
"Uncertainty Toolbox", arXiv:2109.10254.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._stats.inputs import describe_bad
from .forecast import check_dist, check_levels, check_pit, real_array

__all__ = [
    "calibration_curve",
    "calibration_error",
    "count_weights",
    "DEFAULT_LEVELS",
    "mean_absolute_calibration_error",
    "miscalibration_area",
    "observed_frequency",
    "root_mean_squared_calibration_error",
    "sharpness",
    "UCT_LEVELS",
]

#: Default levels of the calibration curve and the cal score: 0.01, ..., 0.99.
DEFAULT_LEVELS = np.arange(1, 100) / 100.0
#: uncertainty-toolbox's grid ``linspace(0, 1, 100)``, the default of the
#: MACE, RMSCE and miscalibration area.
UCT_LEVELS = np.linspace(0.0, 1.0, 100)

KINDS = ("quantile", "interval")


def observed_frequency(u: np.ndarray, levels: np.ndarray, kind: str) -> np.ndarray:
    """Observed proportions at each level; (J,) float64 from int64 counts."""
    us = np.sort(u)
    n = us.size
    if kind == "quantile":
        counts = np.searchsorted(us, levels, side="right")
    elif kind == "interval":
        counts = np.searchsorted(us, 0.5 + levels / 2, side="right") - np.searchsorted(
            us, 0.5 - levels / 2, side="left"
        )
    else:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    return counts.astype(np.int64) / n


def calibration_curve(pit: ArrayLike, levels: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Expected and observed proportions of the calibration curve.

    .. math::

        \\hat p_j = \\frac{|\\{t : u_t \\le p_j\\}|}{T}, \\qquad j = 1..J.

    Parameters
    ----------
    pit : array_like of shape (T,)
        PIT values in [0, 1].
    levels : array_like of shape (J,), optional
        Levels :math:`p_j`, strictly increasing in (0, 1); default
        :data:`DEFAULT_LEVELS` (0.01, ..., 0.99: fine enough to draw the curve,
        with every level informative).

    Returns
    -------
    expected : ndarray of shape (J,)
        The levels :math:`p_j`.
    observed : ndarray of shape (J,)
        :math:`\\hat p_j`.

    Examples
    --------
    >>> from bece.regression import calibration_curve
    >>> calibration_curve([0.1, 0.4, 0.4, 0.9], levels=[0.25, 0.5, 0.75])[1]
    array([0.25, 0.75, 0.75])
    """
    u = check_pit(pit)
    p = DEFAULT_LEVELS.copy() if levels is None else check_levels(levels)
    return p, observed_frequency(u, p, "quantile")


#: The named level weights of the calibration error.
WEIGHTS = ("mean", "sum", "count")


def count_weights(weights: str | ArrayLike | None, observed: np.ndarray) -> np.ndarray:
    """The level weights :math:`w_j` of :func:`calibration_error` (see there)."""
    j = observed.size
    if weights is None or (isinstance(weights, str) and weights == "mean"):
        return np.full(j, 1.0 / j)
    if isinstance(weights, str):
        if weights == "sum":
            return np.ones(j)
        if weights != "count":
            raise ValueError(f"weights must be 'mean', 'sum', 'count' or an array of shape ({j},), "
                             f"got {weights!r}")
        total = observed.sum()
        if total == 0:
            raise ValueError(
                "weights='count' needs at least one PIT value at or below the largest level; "
                "all are above it, so every weight would be 0"
            )
        return observed / total
    w = real_array(weights, "weights", ndim=(1,))
    if w.shape[0] != j:
        raise ValueError(f"weights has {w.shape[0]} entries but there are {j} levels; they must match")
    neg = w < 0
    if neg.any():
        raise ValueError(f"weights must be >= 0; {describe_bad(w, neg)} are negative")
    return w


def calibration_error(
    pit: ArrayLike, levels: ArrayLike | None = None, *, weights: str | ArrayLike | None = "mean"
) -> float:
    """The calibration error :math:`\\sum_j w_j (p_j - \\hat p_j)^2` over the levels :math:`p_j`.

    Parameters
    ----------
    pit : array_like of shape (T,)
        PIT values in [0, 1].
    levels : array_like of shape (J,), optional
        Default :data:`DEFAULT_LEVELS`; see :func:`calibration_curve`.
    weights : "mean", "sum", "count" or array_like of shape (J,), default "mean"
        ``"mean"`` (or None): :math:`w_j = 1/J`, the mean squared gap over the
        levels, which does not grow with J: forecasts scored on different
        level grids (99 levels of a Gaussian, 5 quantile columns) are
        comparable, and on uncertainty-toolbox's levels it is the square of
        its root-mean-squared calibration error
        (:func:`root_mean_squared_calibration_error`).
        ``"sum"``: :math:`w_j = 1`, Kuleshov et al. (2018)'s
        :math:`\\mathrm{cal}`, J times the mean; it grows with J, so compare
        such scores on the same levels only.
        ``"count"``: :math:`w_j \\propto |\\{t: u_t \\le p_j\\}|`, normalised to
        sum to 1, i.e. :math:`w_j = \\hat p_j / \\sum_i \\hat p_i` (weights
        proportional to the number of targets below each level, normalised
        so that the score does not depend on T).
        An array: non-negative weights used as given.

    Returns
    -------
    float

    Notes
    -----
    :math:`E[(p_j - \\hat p_j)^2] = (p_j - P_j)^2 + P_j(1-P_j)/T` with
    :math:`P_j = P(u \\le p_j)`: the plug-in score is biased upwards by
    sampling noise, about :math:`\\sum_j w_j p_j(1-p_j)/T` for a calibrated
    forecaster. :func:`~bece.regression.bayesian_calibration_error` gives the
    uncertainty.

    Examples
    --------
    >>> from bece.regression import calibration_error
    >>> u = [0.1, 0.4, 0.4, 0.9]        # observed frequencies 0.25, 0.75, 0.75
    >>> round(calibration_error(u, levels=[0.25, 0.5, 0.75]), 10)    # (0 + 0.0625 + 0) / 3
    0.0208333333
    >>> round(calibration_error(u, levels=[0.25, 0.5, 0.75], weights="sum"), 10)  # Kuleshov's cal
    0.0625
    """
    p, obs = calibration_curve(pit, levels)
    w = count_weights(weights, obs)
    return float(np.sum(w * (p - obs) ** 2))


def _ut_curve(pit: ArrayLike, levels: ArrayLike | None, kind: str) -> tuple[np.ndarray, np.ndarray]:
    u = check_pit(pit)
    p = UCT_LEVELS.copy() if levels is None else check_levels(levels, closed=True)
    return p, observed_frequency(u, p, kind)


def mean_absolute_calibration_error(
    pit: ArrayLike, levels: ArrayLike | None = None, *, kind: str = "quantile"
) -> float:
    """Mean absolute calibration error :math:`\\frac1J\\sum_j |p_j - \\hat p_j|`.

    Parameters
    ----------
    pit : array_like of shape (T,)
        PIT values in [0, 1].
    levels : array_like of shape (J,), optional
        Strictly increasing in [0, 1]; default :data:`UCT_LEVELS`
        (uncertainty-toolbox's ``linspace(0, 1, 100)``).
    kind : {"quantile", "interval"}, default "quantile"
        ``"quantile"``: :math:`\\hat p_j = |\\{t: u_t \\le p_j\\}|/T` (the
        calibration curve). ``"interval"``: the fraction inside the central
        :math:`p_j`-interval, :math:`|\\{t: |u_t - 1/2| \\le p_j/2\\}|/T`,
        uncertainty-toolbox's default ``prop_type``. See the module docstring
        for uncertainty-toolbox's ``prop_type="quantile"``.

    Examples
    --------
    >>> from bece.regression import mean_absolute_calibration_error
    >>> round(mean_absolute_calibration_error([0.1, 0.4, 0.4, 0.9], levels=[0.25, 0.5, 0.75]), 10)
    0.0833333333
    """
    p, obs = _ut_curve(pit, levels, kind)
    return float(np.mean(np.abs(p - obs)))


def root_mean_squared_calibration_error(
    pit: ArrayLike, levels: ArrayLike | None = None, *, kind: str = "quantile"
) -> float:
    """Root mean squared calibration error :math:`\\sqrt{\\frac1J\\sum_j (p_j - \\hat p_j)^2}`.

    Parameters as :func:`mean_absolute_calibration_error`. On the same
    levels, ``calibration_error = rmsce**2`` (and ``J * rmsce**2`` with
    ``weights="sum"``, Kuleshov et al.'s cal).

    Examples
    --------
    >>> from bece.regression import calibration_error, root_mean_squared_calibration_error
    >>> u, levels = [0.1, 0.4, 0.4, 0.9], [0.25, 0.5, 0.75]   # observed 0.25, 0.75, 0.75
    >>> round(root_mean_squared_calibration_error(u, levels), 10)   # sqrt(0.25**2 / 3)
    0.1443375673
    >>> round(root_mean_squared_calibration_error(u, levels) ** 2, 10) == round(
    ...     calibration_error(u, levels), 10)
    True
    """
    p, obs = _ut_curve(pit, levels, kind)
    return float(np.sqrt(np.mean((p - obs) ** 2)))


def miscalibration_area(
    pit: ArrayLike, levels: ArrayLike | None = None, *, kind: str = "quantile"
) -> float:
    """Area between the calibration curve and the diagonal, over ``[p_1, p_J]``.

    With :math:`d_j = \\hat p_j - p_j` and :math:`d` linear between levels,

    .. math::

        A = \\int_{p_1}^{p_J} |d(p)|\\,dp = \\sum_{j<J} (p_{j+1}-p_j)
        \\begin{cases}
        |d_j + d_{j+1}|/2 & d_j d_{j+1} \\ge 0 \\\\
        (d_j^2 + d_{j+1}^2) / (2(|d_j| + |d_{j+1}|)) & \\text{otherwise (the curves cross)}
        \\end{cases}

    which is uncertainty-toolbox's trapezoid/hourglass rule. Parameters as
    :func:`mean_absolute_calibration_error`; needs J >= 2 levels.

    Examples
    --------
    >>> from bece.regression import miscalibration_area
    >>> u, levels = [0.1, 0.4, 0.4, 0.9], [0.25, 0.5, 0.75]   # d = 0, 0.25, 0
    >>> round(miscalibration_area(u, levels), 10)             # two triangles of 0.25 x 0.25 / 2
    0.0625
    >>> miscalibration_area([0.1, 0.4, 0.6, 0.9], levels)       # observed 0.25, 0.5, 0.75
    0.0
    """
    p, obs = _ut_curve(pit, levels, kind)
    if p.size < 2:
        raise ValueError(f"levels must hold at least 2 values for an area, got {p.size}")
    d = obs - p
    dl, dr = d[:-1], d[1:]
    width = np.diff(p)
    cross = dl * dr < 0
    same = np.abs(dl + dr) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        hourglass = (dl**2 + dr**2) / (2 * (np.abs(dl) + np.abs(dr)))
    return float(np.sum(width * np.where(cross, hourglass, same)))


def sharpness(
    *, std: ArrayLike | None = None, samples: ArrayLike | None = None,
    dist: Any = None,  # a frozen scipy.stats distribution
    root: bool = False,
) -> float:
    """Sharpness: the mean predictive variance :math:`\\frac1T\\sum_t \\mathrm{var}(F_t)`.

    Parameters
    ----------
    std : array_like of shape (T,)
        Predictive standard deviations (> 0).
    samples : array_like of shape (T, S)
        Predictive draws, S >= 2; :math:`\\mathrm{var}(F_t)` is estimated by
        the unbiased sample variance (``ddof=1``).
    dist : frozen scipy.stats distribution
        ``dist.var()`` (its batch holds the T forecasts).
    root : bool, default False
        Return :math:`\\sqrt{\\frac1T\\sum_t \\mathrm{var}(F_t)}`, which is
        uncertainty-toolbox's ``sharpness`` (the root mean variance, in the
        units of y). Default: the mean variance, Kuleshov et al.'s sharpness.

    Examples
    --------
    >>> from bece.regression import sharpness
    >>> sharpness(std=[1.0, 3.0]), sharpness(std=[1.0, 3.0], root=True)
    (5.0, 2.23606797749979)
    """
    given = [k for k, v in (("std", std), ("samples", samples), ("dist", dist)) if v is not None]
    if len(given) != 1:
        raise ValueError(f"give exactly one of std=, samples= or dist=; got {given or 'none'}")
    if not isinstance(root, (bool, np.bool_)):
        raise ValueError(f"root must be True or False, got {root!r}")
    if std is not None:
        var = real_array(std, "std", ndim=(1,), positive=True) ** 2
    elif samples is not None:
        s = real_array(samples, "samples", ndim=(2,))
        if s.shape[1] < 2:
            raise ValueError(f"samples needs at least 2 draws per row for a variance, got {s.shape[1]}")
        var = s.var(axis=1, ddof=1)
    else:
        var = np.atleast_1d(np.asarray(check_dist(dist).var(), dtype=np.float64))
        bad = ~(np.isfinite(var) & (var >= 0))
        if bad.any():
            raise ValueError(f"dist.var() is not a finite variance at {describe_bad(var, bad)}")
    m = float(np.mean(var))
    return float(np.sqrt(m)) if root else m
