"""Calibration slope and intercept, calibration-in-the-large, Spiegelhalter's Z,
Hosmer-Lemeshow, KS error.

The measures of calibration that clinical prediction papers report, for
pairs :math:`(z_i, p_i)` with weights :math:`w_i` (:mod:`bece._metrics.pairs`;
(n, K) input is read top-label), :math:`x_i = \\mathrm{logit}\\,p_i`:

Calibration slope and intercept (Cox 1958; Van Calster et al. 2019): the
weighted maximum-likelihood fit of :math:`\\mathrm{logit}\\,P(z = 1) = a + b x`
gives the slope :math:`b` (1 when calibrated, below 1 when over-confident)
and :math:`a`; the calibration-in-the-large intercept :math:`a_0` is the fit
of :math:`a_0 + x` (slope fixed at 1, 0 when calibrated). Newton's method to
a step below 1e-12; standard errors from the inverse Fisher information.

Calibration-in-the-large as a difference of means (Van Calster et al. 2016,
the "mean calibration"): :math:`\\sum_i w_i (p_i - z_i) / \\sum_i w_i`, the
mean predicted probability less the observed frequency (positive when the
predictions are too high; for top-label pairs, mean confidence less
accuracy). Unlike :math:`a_0` it is a sum, so it comes from one pass over
chunks (:mod:`bece._metrics.streaming`).

Spiegelhalter's (1986) Z:

.. math::

    Z = \\frac{\\sum_i w_i (z_i - p_i)(1 - 2p_i)}
             {\\sqrt{\\sum_i w_i^2 (1 - 2p_i)^2 p_i (1 - p_i)}},

standard Normal under calibration; two-sided p-value :math:`2\\Phi(-|Z|)`.

Hosmer & Lemeshow (1980): the pairs grouped by :math:`p` at its
quantiles, as R's ``ResourceSelection::hoslem.test`` does: the breaks are
the type-7 quantiles of the predictions (R's default, computed with R's
arithmetic) at :math:`0, 1/G, \\dots, 1`, duplicates removed, and the
groups are right-closed intervals, the first closed at both ends (R's
``cut(..., include.lowest = TRUE)``). Equal predictions always share a
group, so the statistic does not depend on the order of the rows; where
ties make breaks coincide there are fewer groups, and empty intervals
count for nothing (R gives NaN there): ``n_groups`` of the result is the
number of groups used. Sample weights weigh the sums, not the breaks.
Observed :math:`O_g = \\sum w z`, expected :math:`E_g = \\sum w p`, size
:math:`N_g = \\sum w`:

.. math::

    H = \\sum_g \\frac{(O_g - E_g)^2}{E_g (1 - E_g / N_g)}
    \\sim \\chi^2_{G}

for predictions evaluated on data they were not fitted to (a test set: the
default), and :math:`\\chi^2_{G - 2}` (Hosmer & Lemeshow's setting) for a
logistic model fitted to the same data (``fitted=True``), with :math:`G`
the groups used (R's ``hoslem.test`` always takes :math:`g - 2` of the
groups asked for, so its p-value differs where ties merge groups; its
statistic is the same). With the
:math:`G - 2` degrees of freedom on test-set predictions the test rejects
calibrated predictions far too often: 11.9% at the 5% level, against 5.8%
with :math:`G` (3,000 calibrated data sets of n = 300, uniform p, 10 groups).

Kolmogorov-Smirnov calibration error (Gupta et al. 2021, "Calibration of
neural networks using splines"): with the pairs sorted by :math:`p`,

.. math::

    \\mathrm{KS} = \\max_i \\Big|\\frac{1}{W}\\sum_{j \\le i} w_j (z_j - p_j)\\Big|,

the maximum taken at the last of each run of equal confidences (so the
result does not depend on the order of ties).

Of these, calibration-in-the-large and Spiegelhalter's Z are sums over the
pairs (one pass over chunks); the slope and :math:`a_0` (Newton iterations),
Hosmer-Lemeshow (groups cut at the quantiles of :math:`p`) and the KS error
(cumulative sums in sorted order) need all pairs at once.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from .._base.checks import positive_int
from .._stats.inputs import Inputs
from .pairs import weighted_pairs

__all__ = [
    "CalibrationSlope",
    "HosmerLemeshow",
    "SpiegelhalterZ",
    "calibration_in_the_large",
    "calibration_slope",
    "hosmer_lemeshow",
    "ks_calibration_error",
    "spiegelhalter_z",
]


class CalibrationSlope(NamedTuple):
    """Logistic recalibration fit ``logit P(y=1) = intercept + slope * logit(p)``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # over-confident
    >>> from bece.metrics import calibration_slope
    >>> s = calibration_slope(y, p)
    >>> round(s.slope, 2), bool(s.slope_se > 0)
    (1.17, True)
    """

    slope: float
    intercept: float
    intercept_in_the_large: float  # a0 of logit P = a0 + logit(p)
    slope_se: float
    intercept_se: float
    intercept_in_the_large_se: float


class SpiegelhalterZ(NamedTuple):
    """Spiegelhalter's z test of calibration: its statistic and two-sided p-value.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # over-confident
    >>> from bece.metrics import spiegelhalter_z
    >>> z = spiegelhalter_z(y, p)
    >>> round(z.statistic, 2), round(z.p_value, 2)
    (-1.24, 0.22)
    """

    statistic: float
    p_value: float


class HosmerLemeshow(NamedTuple):
    """The Hosmer-Lemeshow test: its statistic, degrees of freedom, p-value and groups.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # over-confident
    >>> from bece.metrics import hosmer_lemeshow
    >>> h = hosmer_lemeshow(y, p)
    >>> h.df, h.n_groups, bool(h.p_value < 1e-6)
    (10, 10, True)
    """

    statistic: float
    df: int
    p_value: float
    n_groups: int


def _expit(t: np.ndarray) -> np.ndarray:
    from scipy.special import expit

    return np.asarray(expit(t), dtype=np.float64)


def _newton(x: np.ndarray, z: np.ndarray, w: np.ndarray, offset: np.ndarray,
            design: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weighted logistic MLE of ``z`` on ``design`` with ``offset``: (beta, cov)."""
    beta = np.zeros(design.shape[1])
    for _ in range(200):
        mu = _expit(offset + design @ beta)
        grad = design.T @ (w * (z - mu))
        info = design.T @ (design * (w * mu * (1.0 - mu))[:, None])
        try:
            step = np.linalg.solve(info, grad)
        except np.linalg.LinAlgError:
            if beta.any():  # singular only after steps: the weights underflowed (separation)
                break
            raise ValueError("the calibration fit is singular: y_prob needs at least two "
                             "distinct values (with positive weight)") from None
        beta = beta + step
        if np.max(np.abs(step)) <= 1e-12 * (1.0 + np.max(np.abs(beta))):
            mu = _expit(offset + design @ beta)
            info = design.T @ (design * (w * mu * (1.0 - mu))[:, None])
            return beta, np.linalg.inv(info)
        if np.max(np.abs(beta)) > 1e6:
            break
    raise ValueError("the calibration fit did not converge: the outcomes are (nearly) "
                     "separated by y_prob, so the maximum-likelihood slope does not exist")


def calibration_slope(
    y_true: ArrayLike, y_prob: ArrayLike, *, y_pred: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None, labels: ArrayLike | None = None,
    pos_label: Any = None, from_logits: bool = False,
) -> CalibrationSlope:
    """Calibration slope, intercept and calibration-in-the-large.

    Parameters
    ----------
    y_true, y_prob, y_pred, labels, pos_label, from_logits
        As :func:`bece.expected_calibration_error`; (n, K) ``y_prob`` is read
        top-label. Probabilities of exactly 0 or 1 have no logit and raise
        ``ValueError`` (pass logits with ``from_logits=True``).
    sample_weight : array_like of shape (n,), optional

    Returns
    -------
    CalibrationSlope

    Examples
    --------
    >>> from bece.metrics import calibration_slope
    >>> fit = calibration_slope([0, 0, 1, 0, 1, 1], [0.1, 0.3, 0.4, 0.6, 0.7, 0.9])
    >>> round(fit.slope, 4), round(fit.intercept_in_the_large, 4)
    (1.5048, 0.0)
    """
    z, p, w = weighted_pairs(y_true, y_prob, y_pred=y_pred, sample_weight=sample_weight,
                             inputs=Inputs(labels, pos_label, from_logits))
    edge = (p <= 0.0) | (p >= 1.0)
    if edge.any():
        i = int(np.argmax(edge))
        raise ValueError(f"y_prob has {int(edge.sum())} value(s) of exactly 0 or 1 (e.g. index "
                         f"{i}: {float(p[i])!r}), whose logit is infinite; the calibration slope "
                         "needs probabilities in (0, 1)")
    x = np.log(p) - np.log1p(-p)
    keep = w > 0
    x, z, w = x[keep], z[keep], w[keep]
    ones = np.ones_like(x)
    beta, cov = _newton(x, z, w, np.zeros_like(x), np.column_stack([ones, x]))
    a0, cov0 = _newton(x, z, w, x, ones[:, None])
    return CalibrationSlope(float(beta[1]), float(beta[0]), float(a0[0]),
                            float(np.sqrt(cov[1, 1])), float(np.sqrt(cov[0, 0])),
                            float(np.sqrt(cov0[0, 0])))


def calibration_in_the_large(
    y_true: ArrayLike, y_prob: ArrayLike, *, y_pred: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None, labels: ArrayLike | None = None,
    pos_label: Any = None, from_logits: bool = False,
) -> float:
    """Calibration-in-the-large: mean predicted probability less observed frequency.

    ``sum(w * (p - z)) / sum(w)`` over the pairs: positive when the
    predictions are too high on average (for (n, K) input, read top-label:
    mean confidence less accuracy), 0 when they are right on average, which
    calibration implies but does not need. Compare the logistic intercept
    ``calibration_slope(...).intercept_in_the_large``, which answers the
    same question on the logit scale by Newton iterations. This one is a
    sum, so ``bece report --metrics citl`` computes it in one pass
    over a file.

    Parameters are those of :func:`calibration_slope` (0 and 1 allowed).

    Returns
    -------
    float

    Examples
    --------
    >>> from bece.metrics import calibration_in_the_large
    >>> round(calibration_in_the_large([0, 1, 1, 0], [0.2, 0.6, 0.9, 0.5]), 6)  # 2.2/4 - 2/4
    0.05
    """
    z, p, w = weighted_pairs(y_true, y_prob, y_pred=y_pred, sample_weight=sample_weight,
                             inputs=Inputs(labels, pos_label, from_logits))
    return float(np.dot(w, p - z) / w.sum())


def spiegelhalter_z(
    y_true: ArrayLike, y_prob: ArrayLike, *, y_pred: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None, labels: ArrayLike | None = None,
    pos_label: Any = None, from_logits: bool = False,
) -> SpiegelhalterZ:
    """Spiegelhalter's Z test of calibration (two-sided p-value).

    Parameters are those of :func:`calibration_slope` (0 and 1 allowed).

    Examples
    --------
    >>> from bece.metrics import spiegelhalter_z
    >>> t = spiegelhalter_z([0, 1, 1], [0.2, 0.6, 0.9])
    >>> round(t.statistic, 6)
    -0.792594
    """
    from scipy.stats import norm

    z, p, w = weighted_pairs(y_true, y_prob, y_pred=y_pred, sample_weight=sample_weight,
                             inputs=Inputs(labels, pos_label, from_logits))
    c = 1.0 - 2.0 * p
    var = float(np.sum(w * w * c * c * p * (1.0 - p)))
    if not var > 0:
        raise ValueError("Spiegelhalter's Z is undefined: its variance is 0 because every "
                         "y_prob is 0, 0.5 or 1")
    stat = float(np.dot(w, (z - p) * c) / np.sqrt(var))
    return SpiegelhalterZ(stat, float(2.0 * norm.sf(abs(stat))))


def hosmer_lemeshow(
    y_true: ArrayLike, y_prob: ArrayLike, *, y_pred: ArrayLike | None = None,
    n_groups: int = 10, fitted: bool = False, sample_weight: ArrayLike | None = None,
    labels: ArrayLike | None = None, pos_label: Any = None, from_logits: bool = False,
) -> HosmerLemeshow:
    """Hosmer-Lemeshow goodness-of-fit test over groups cut at the quantiles of ``y_prob``.

    The groups are R's ``ResourceSelection::hoslem.test``'s (module
    docstring): right-closed intervals between the type-7 quantiles, equal
    predictions in one group whatever the order of the rows. They need all
    pairs at once: ``bece report --metrics`` reads the prediction columns
    whole for it (not in one pass over chunks) and refuses it above 10
    million rows.

    Parameters
    ----------
    y_true, y_prob, y_pred, sample_weight, labels, pos_label, from_logits
        As :func:`spiegelhalter_z`.
    n_groups : int, default 10
        Groups asked for (deciles of risk); at least 3 and at most n. Ties
        can merge some: the result's ``n_groups`` are those used.
    fitted : bool, default False
        Whether ``y_prob`` comes from a logistic model fitted to these same
        data: the groups used minus 2 degrees of freedom instead of the
        groups used (module docstring).

    Examples
    --------
    >>> from bece.metrics import hosmer_lemeshow
    >>> t = hosmer_lemeshow([0, 1, 0, 1, 1, 1], [0.2, 0.3, 0.5, 0.6, 0.8, 0.9], n_groups=3)
    >>> round(t.statistic, 5), t.df
    (1.03981, 3)
    """
    from scipy.stats import chi2

    g = positive_int(n_groups, "n_groups")
    if not isinstance(fitted, (bool, np.bool_)):
        raise ValueError(f"fitted must be True or False, got {fitted!r}")
    z, p, w = weighted_pairs(y_true, y_prob, y_pred=y_pred, sample_weight=sample_weight,
                             inputs=Inputs(labels, pos_label, from_logits))
    if g < 3 or g > p.size:
        raise ValueError(f"n_groups must be between 3 and the number of predictions ({p.size}), "
                         f"got {g}")
    # sums in one order whatever the rows' order: sorted by (p, z, w)
    order = np.lexsort((w, z, p))
    z, p, w = z[order], p[order], w[order]
    breaks = np.unique(_quantile_type7(p, np.arange(g + 1) / g))
    # right-closed (b_{i-1}, b_i], the lowest break included in the first group
    group = np.maximum(np.searchsorted(breaks, p, side="left") - 1, 0)
    used = np.unique(group)
    stat = 0.0
    for k in used:
        idx = group == k
        o, e, m = np.dot(w[idx], z[idx]), np.dot(w[idx], p[idx]), w[idx].sum()
        den = e * (1.0 - e / m) if m > 0 else 0.0
        if den > 0:
            stat += (o - e) ** 2 / den
        elif o != e:
            stat = np.inf
    df = used.size - 2 if fitted else used.size
    if df < 1:
        raise ValueError(f"n_groups: the predictions take too few distinct values for {g} groups "
                         f"({used.size} used, {'fitted=True needs 3' if fitted else 'at least 1 needed'})")
    return HosmerLemeshow(float(stat), df, float(chi2.sf(stat, df)), int(used.size))


def _quantile_type7(x: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """R's ``quantile(x, probs)`` (type 7) with R's arithmetic: index
    :math:`1 + (n - 1) p`, and :math:`(1 - h) x_{lo} + h x_{hi}` where it
    interpolates (so that breaks fall on the same floats as R's)."""
    xs = np.sort(x)
    index = 1.0 + (xs.size - 1) * probs
    lo = np.floor(index).astype(np.int64)
    hi = np.ceil(index).astype(np.int64)
    qs = xs[lo - 1]
    h = index - lo
    interpolate = (index > lo) & (xs[hi - 1] != qs)
    return np.where(interpolate, (1.0 - h) * qs + h * xs[hi - 1], qs)


def ks_calibration_error(
    y_true: ArrayLike, y_prob: ArrayLike, *, y_pred: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None, labels: ArrayLike | None = None,
    pos_label: Any = None, from_logits: bool = False,
) -> float:
    """Kolmogorov-Smirnov calibration error (Gupta et al. 2021).

    Parameters are those of :func:`spiegelhalter_z`.

    Examples
    --------
    >>> from bece.metrics import ks_calibration_error
    >>> round(ks_calibration_error([0, 1, 1], [0.2, 0.6, 0.9]), 12)
    0.1
    """
    z, p, w = weighted_pairs(y_true, y_prob, y_pred=y_pred, sample_weight=sample_weight,
                             inputs=Inputs(labels, pos_label, from_logits))
    order = np.argsort(p, kind="stable")
    ps = p[order]
    cum = np.cumsum(w[order] * (z[order] - ps)) / w.sum()
    last = np.r_[ps[1:] != ps[:-1], True]  # the end of each run of equal confidences
    return float(np.max(np.abs(cum[last])))
