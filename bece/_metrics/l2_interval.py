"""The asymptotic confidence interval for the binned l2 ECE of Sun, Chaudhari,
Barnett & Dobriban (2024, "A confidence interval for the l2 expected
calibration error", arXiv:2408.08998), for top-1 (confidence) calibration.

For pairs :math:`(z_i, p_i)` (outcome, confidence; :mod:`bece._metrics.pairs`)
let :math:`u_i = z_i - p_i`. In bin :math:`b` with :math:`n_b` pairs, the
unbiased estimate of :math:`\\mu_b^2`, :math:`\\mu_b = E[z - p \\mid b]`, is
the U-statistic :math:`\\sum_{i \\ne j \\in b} u_i u_j / (n_b (n_b - 1))`;
weighted by :math:`n_b / n` they give the debiased squared l2 ECE

.. math::

    T = \\frac{1}{n} \\sum_{b:\\, n_b \\ge 2}
        \\frac{(\\sum_{i \\in b} u_i)^2 - \\sum_{i \\in b} u_i^2}{n_b - 1},

unbiased for :math:`\\mathrm{ECE}_2^2 = \\sum_b P(b)\\, \\mu_b^2` given the
bin counts (bins with one pair contribute 0). It is not Kumar et al.'s
estimator (:func:`~bece.metrics.l2_calibration_error` with ``debiased=True``),
which subtracts :math:`\\bar z_b (1 - \\bar z_b) / (n_b - 1)`: Sun et al.
subtract the within-bin variance of :math:`u = z - p` instead of that of
:math:`z`; the two agree when the confidences within a bin are equal.

For a miscalibrated model (:math:`\\mathrm{ECE}_2 > 0`, bins fixed),
:math:`\\sqrt n (T - \\mathrm{ECE}_2^2) \\to N(0, \\sigma_1^2)` with
:math:`\\sigma_1^2 = \\sum_b P(b)(4 \\mu_b^2 E[u^2 \\mid b] - 3 \\mu_b^4)
- \\mathrm{ECE}_2^4` (the delta method on the bin means), estimated by
plugging in the bin means :math:`\\bar u_b` and :math:`\\overline{u^2}_b`
with weights :math:`n_b / n`. For a calibrated model :math:`\\sigma_1 = 0`
and :math:`T` converges at rate :math:`1/n` instead. The interval for
:math:`\\mathrm{ECE}_2^2` at level :math:`1 - \\alpha` accounts for both and
for :math:`\\mathrm{ECE}_2^2 \\ge 0`: with :math:`T_+ = \\max(T, 0)`,
:math:`s = \\hat\\sigma_1 / \\sqrt n` and the normal quantiles
:math:`z_{1-\\alpha/2}`, :math:`z_{1-\\alpha}`, the upper end is
:math:`T_+ + z_{1-\\alpha/2}\\, s` and the lower end is

* :math:`T_+ - z_{1-\\alpha/2}\\, s` when :math:`T_+ \\ge 2 z_{1-\\alpha/2}\\, s`
  (``rule="two-sided"``),
* :math:`T_+ / 2` when :math:`2 z_{1-\\alpha}\\, s \\le T_+ < 2 z_{1-\\alpha/2}\\, s`
  (``rule="halved"``),
* :math:`\\max(T_+ - z_{1-\\alpha}\\, s, 0)` below that (``rule="one-sided"``),

as in the authors' public code (``experiments/estimator.py`` and the
interval of ``experiments/plot.ipynb`` of github.com/sylydya/CI-ECE). The
interval on the ECE scale is the square root of both ends (a monotone map
keeps the coverage). Only ``(count, sum u, sum u^2)`` per bin enter, so the
interval is computed from statistics added across chunks of a file
(:func:`l2_interval_from_sums`).

The paper's top-1-to-k form (k > 1: vector :math:`u` over the k largest
probabilities, bins on :math:`[0, 1]^k`) is not implemented; top-1 is the
confidence calibration every other metric of this package reads.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import ndtri

from .._base.checks import check_prob
from .._base.typing import BinningSpec
from .._stats.binning import Binning, make_binning
from .._stats.inputs import Inputs
from .pairs import weighted_pairs

__all__ = [
    "L2ECEInterval",
    "l2_ece_interval",
    "l2_interval_from_sums",
]


class L2ECEInterval(NamedTuple):
    """The debiased l2 ECE with the interval of Sun et al. (2024).

    ``estimate``, ``low`` and ``high`` are on the ECE scale (square roots of
    the squared-scale values ``squared`` = :math:`\\max(T, 0)`,
    ``squared_low`` and ``squared_high``); ``statistic`` is :math:`T`
    itself (it can be negative), ``se`` its estimated standard error
    :math:`\\hat\\sigma_1 / \\sqrt n` for a miscalibrated model, ``rule``
    which lower end was taken (module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # over-confident
    >>> from bece.metrics import l2_ece_interval
    >>> r = l2_ece_interval(y, p)
    >>> round(r.estimate, 3), r.prob, bool(r.low < r.estimate < r.high)
    (0.114, 0.9, True)
    """

    estimate: float
    low: float
    high: float
    prob: float
    statistic: float
    squared: float
    squared_low: float
    squared_high: float
    se: float
    rule: str
    n: int


def l2_interval_from_sums(count: ArrayLike, sum_u: ArrayLike, sum_u2: ArrayLike, *,
                          prob: float = 0.9) -> L2ECEInterval:
    """The interval of Sun et al. from per-bin sums of :math:`u = z - p`.

    Parameters
    ----------
    count : array_like of int, shape (M,)
        Pairs per bin.
    sum_u, sum_u2 : array_like of shape (M,)
        Per bin, :math:`\\sum u_i` and :math:`\\sum u_i^2`.
    prob : float, default 0.9
        Probability of the interval (:math:`1 - \\alpha`).

    Returns
    -------
    L2ECEInterval

    Examples
    --------
    >>> from bece._metrics.l2_interval import l2_interval_from_sums
    >>> iv = l2_interval_from_sums([2, 2], [0.4, -0.2], [0.1, 0.04])
    >>> round(iv.statistic, 12)  # ((0.16 - 0.1) + (0.04 - 0.04)) / 4
    0.015
    """
    prob = check_prob(prob)
    raw = np.asarray(count)
    if raw.dtype.kind not in "iu" or raw.ndim != 1 or (raw < 0).any():
        raise ValueError(f"count must be a 1-d array of non-negative integers, got {raw!r}")
    cnt = raw.astype(np.int64)
    s1 = np.asarray(sum_u, dtype=np.float64)
    s2 = np.asarray(sum_u2, dtype=np.float64)
    if s1.shape != cnt.shape or s2.shape != cnt.shape:
        raise ValueError(f"count, sum_u and sum_u2 must have the same shape, got {cnt.shape}, "
                         f"{s1.shape}, {s2.shape}")
    if not (np.isfinite(s1).all() and np.isfinite(s2).all()):
        raise ValueError("sum_u and sum_u2 must be finite")
    n = int(cnt.sum())
    if n < 2:
        raise ValueError(f"the interval needs at least 2 pairs, got {n}")
    seen = cnt > 0
    c, s1, s2 = cnt[seen].astype(np.float64), s1[seen], s2[seen]
    two = c >= 2
    term = np.zeros_like(c)
    term[two] = (s1[two] ** 2 - s2[two]) / (c[two] - 1.0)
    stat = float(term.sum() / n)
    share = c / n
    ubar = s1 / c
    u2bar = s2 / c
    first = float(np.dot(share, 4.0 * ubar**2 * u2bar - 3.0 * ubar**4))
    second = float(np.dot(share, ubar**2)) ** 2
    se = float(np.sqrt(max(first - second, 0.0) / n))  # >= 0 in exact arithmetic (Jensen)
    alpha = 1.0 - prob
    zh = float(ndtri(1.0 - alpha / 2.0))  # the standard normal's quantiles
    z1 = float(ndtri(1.0 - alpha))
    tplus = max(stat, 0.0)
    if tplus >= 2.0 * zh * se:
        lo, rule = tplus - zh * se, "two-sided"
    elif tplus >= 2.0 * z1 * se:
        lo, rule = tplus / 2.0, "halved"
    else:
        lo, rule = max(tplus - z1 * se, 0.0), "one-sided"
    hi = tplus + zh * se
    return L2ECEInterval(float(np.sqrt(tplus)), float(np.sqrt(lo)), float(np.sqrt(hi)), prob,
                         stat, tplus, float(lo), float(hi), se, rule, n)


def l2_ece_interval(
    y_true: ArrayLike, y_prob: ArrayLike, *, y_pred: ArrayLike | None = None,
    n_bins: int | None = None, binning: BinningSpec | Binning = "uniform", prob: float = 0.9,
    labels: ArrayLike | None = None, pos_label: Any = None, from_logits: bool = False,
) -> L2ECEInterval:
    """Debiased binned l2 ECE with the asymptotic interval of Sun, Chaudhari,
    Barnett & Dobriban (2024).

    Parameters
    ----------
    y_true, y_prob, y_pred, labels, pos_label, from_logits
        As :func:`bece.metrics.l2_calibration_error`; (n, K) ``y_prob`` is
        read top-label (confidence against correctness).
    n_bins : int, default 15
    binning : {"uniform", "quantile"} or array_like, default "uniform"
        Bins of :mod:`bece._stats.binning` (fixed bins are what the
        asymptotics assume; quantile edges are taken from the data).
    prob : float, default 0.9
        Probability of the interval.

    Returns
    -------
    L2ECEInterval
        ``estimate`` :math:`\\sqrt{\\max(T, 0)}` and ``[low, high]`` on the
        ECE scale; the squared-scale values beside them.

    Notes
    -----
    The formulas, and how the interval behaves near 0, are in the module
    docstring (:mod:`bece._metrics.l2_interval`). The interval is asymptotic
    (n large for fixed bins); its coverage beside bece's posterior and the
    bootstrap, on the authors' simulation design, is measured by
    ``benchmarks/l2_coverage.py --sun`` (``docs/tables/l2_coverage.md``).
    Unweighted: the U-statistic is defined for counts, so there is no
    ``sample_weight``. The authors' code bins :math:`[l, u)` and leaves a
    confidence of exactly 1 out; here it is in the last bin, as for every
    binned metric of bece.

    Examples
    --------
    >>> import numpy as np
    >>> from bece.metrics import l2_ece_interval
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 2).astype(int)  # over-confident
    >>> iv = l2_ece_interval(y, p, n_bins=10)
    >>> bool(iv.low < iv.estimate < iv.high), iv.rule
    (True, 'two-sided')
    """
    z, p, _ = weighted_pairs(y_true, y_prob, y_pred=y_pred,
                             inputs=Inputs(labels, pos_label, from_logits))
    spec = make_binning(p, n_bins, binning)
    index = spec.index(p)
    u = z - p
    size = spec.n_bins
    return l2_interval_from_sums(np.bincount(index, minlength=size),
                                 np.bincount(index, weights=u, minlength=size),
                                 np.bincount(index, weights=u * u, minlength=size), prob=prob)
