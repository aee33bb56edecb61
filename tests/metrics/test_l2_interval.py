"""The l2 ECE interval of Sun, Chaudhari, Barnett & Dobriban (2024):
hand-computed case, a naive implementation (pair double sum, influence-
function variance), chunked sums, input checks, and its sampling behaviour.

The authors' own ``T_mn_estimator`` (github.com/sylydya/CI-ECE) was compared
once outside the test suite (its code is not part of bece): statistic and
standard error equal to 3e-15 relative on 20 random cases.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import norm

from bece._metrics.l2_interval import l2_interval_from_sums
from bece._stats.binning import make_binning
from bece.metrics import l2_calibration_error, l2_ece_interval


def test_hand_computed_case():
    # bin [0, .5): (z, p) = (1, .2), (0, .4), (1, .3); bin [.5, 1]: (1, .6), (1, .9)
    y = [1, 0, 1, 1, 1]
    p = [0.2, 0.4, 0.3, 0.6, 0.9]
    iv = l2_ece_interval(y, p, n_bins=2, prob=0.9)
    F = Fraction
    # u = z - p: .8, -.4, .7 | .4, .1 ; T = sum_b ((sum u)^2 - sum u^2) / (n_b - 1) / n
    s1a, s2a = F(11, 10), F(64 + 16 + 49, 100)
    s1b, s2b = F(5, 10), F(16 + 1, 100)
    t = ((s1a**2 - s2a) / 2 + (s1b**2 - s2b) / 1) / 5
    assert t == F(8, 1000)
    ua, ub = s1a / 3, s1b / 2
    first = F(3, 5) * (4 * ua**2 * (s2a / 3) - 3 * ua**4) + F(2, 5) * (4 * ub**2 * (s2b / 2) - 3 * ub**4)
    second = (F(3, 5) * ua**2 + F(2, 5) * ub**2) ** 2
    se = float(first - second) ** 0.5 / 5**0.5
    assert iv.statistic == pytest.approx(float(t), abs=1e-15)
    assert iv.se == pytest.approx(se, rel=1e-13)
    # T = 0.008 < 2 z_{0.9} se: the one-sided rule, lower end 0
    assert iv.rule == "one-sided"
    assert iv.squared_low == 0.0 and iv.low == 0.0
    assert iv.squared_high == pytest.approx(0.008 + norm.ppf(0.95) * se, rel=1e-13)
    assert iv.estimate == pytest.approx(0.008**0.5, rel=1e-13)
    assert iv.high == pytest.approx(iv.squared_high**0.5, rel=1e-13)
    assert iv.n == 5 and iv.prob == 0.9


def _naive(z, p, edges):
    """Pair double sum per bin and the plug-in variance of the influence
    values 2 mean_b(u) u_i - mean_b(u)^2."""
    z, p = np.asarray(z, float), np.asarray(p, float)
    b = make_binning(p, None, edges).index(p)
    u = z - p
    n = len(u)
    total = 0.0
    infl = np.empty(n)
    for m in np.unique(b):
        um = u[b == m]
        k = len(um)
        if k >= 2:
            pairs = sum(um[i] * um[j] for i in range(k) for j in range(k) if i != j)
            total += k * pairs / (k * (k - 1))
        infl[b == m] = 2 * um.mean() * um - um.mean() ** 2
    return total / n, np.sqrt(np.var(infl) / n)


@pytest.mark.parametrize("seed", range(4))
def test_equals_naive_implementation(seed):
    rng = np.random.default_rng(seed)
    n = 150
    p = rng.uniform(size=n) ** (0.5 + seed)
    z = (rng.uniform(size=n) < p**1.7).astype(int)
    edges = np.linspace(0, 1, 8)
    t, se = _naive(z, p, edges)
    iv = l2_ece_interval(z, p, binning=edges)
    assert iv.statistic == pytest.approx(t, rel=1e-12, abs=1e-15)
    assert iv.se == pytest.approx(se, rel=1e-10)


def test_rules_and_monotone_in_prob():
    # a large gap: the two-sided rule, ends T -/+ z_{1-a/2} se
    rng = np.random.default_rng(5)
    p = rng.uniform(size=3000)
    z = (rng.uniform(size=3000) < p**2).astype(int)
    iv = l2_ece_interval(z, p, n_bins=10, prob=0.95)
    zq = norm.ppf(0.975)
    assert iv.rule == "two-sided"
    assert iv.squared_low == pytest.approx(iv.squared - zq * iv.se, rel=1e-13)
    assert iv.squared_high == pytest.approx(iv.squared + zq * iv.se, rel=1e-13)
    wider = l2_ece_interval(z, p, n_bins=10, prob=0.99)
    assert wider.low < iv.low and wider.high > iv.high
    # the middle rule: 2 z_{1-a} se <= T < 2 z_{1-a/2} se gives T / 2
    half = l2_interval_from_sums(np.array([100, 100]), [14.0, -1.0], [6.96, 5.0], prob=0.9)
    assert 2 * norm.ppf(0.9) * half.se <= half.squared < 2 * norm.ppf(0.95) * half.se
    assert half.rule == "halved"
    assert half.squared_low == half.squared / 2
    assert half.squared_high == pytest.approx(half.squared + norm.ppf(0.95) * half.se, rel=1e-13)


def test_debiasing_differs_from_kumar_unless_confidences_equal_within_bins():
    # equal confidences within each bin: Sun et al.'s and Kumar's estimators agree
    p = np.repeat([0.15, 0.45, 0.85], 40)
    rng = np.random.default_rng(2)
    z = (rng.uniform(size=p.size) < p + 0.05).astype(int)
    iv = l2_ece_interval(z, p, n_bins=3)
    kumar = l2_calibration_error(z, p, n_bins=3, debiased=True)
    assert iv.estimate == pytest.approx(kumar, rel=1e-12)


def test_chunked_sums_equal_whole():
    rng = np.random.default_rng(3)
    p = rng.uniform(size=1000)
    z = (rng.uniform(size=1000) < p**1.3).astype(int)
    spec = make_binning(p, 12, "uniform")
    whole = l2_ece_interval(z, p, n_bins=12)
    sums = np.zeros((3, 12))
    for part in np.array_split(np.arange(1000), 7):
        b = spec.index(p[part])
        u = z[part] - p[part]
        sums[0] += np.bincount(b, minlength=12)
        sums[1] += np.bincount(b, weights=u, minlength=12)
        sums[2] += np.bincount(b, weights=u * u, minlength=12)
    merged = l2_interval_from_sums(sums[0].astype(np.int64), sums[1], sums[2])
    for a, b in zip(whole, merged):
        assert a == b if isinstance(a, str) else a == pytest.approx(b, rel=1e-12, abs=1e-15)


def test_top_label_reads_correctness_and_confidence():
    rng = np.random.default_rng(4)
    probs = rng.dirichlet(np.ones(4), size=500)
    y = rng.integers(0, 4, size=500)
    iv = l2_ece_interval(y, probs, n_bins=10)
    correct = (probs.argmax(1) == y).astype(int)
    ref = l2_ece_interval(correct, probs.max(1), n_bins=10)
    assert iv == ref


def test_bad_input():
    with pytest.raises(ValueError, match="prob"):
        l2_ece_interval([0, 1], [0.2, 0.8], prob=1.5)
    with pytest.raises(ValueError, match="at least 2"):
        l2_ece_interval([1], [0.5])
    with pytest.raises(ValueError, match="count"):
        l2_interval_from_sums([1.5, 2.0], [0.1, 0.2], [0.1, 0.2])
    with pytest.raises(ValueError, match="same shape"):
        l2_interval_from_sums([1, 2], [0.1], [0.1, 0.2])
    with pytest.raises(ValueError, match="finite"):
        l2_interval_from_sums([1, 2], [0.1, np.nan], [0.1, 0.2])
    with pytest.raises(ValueError, match="y_prob"):
        l2_ece_interval([0, 1], [0.2, 1.2])


def _truth_sq(k, m):
    """Binned ECE_2^2 of p ~ U(0, 1), P(y = 1 | p) = p**k, m uniform bins."""
    e = np.linspace(0, 1, m + 1)
    acc = m * (e[1:] ** (k + 1) - e[:-1] ** (k + 1)) / (k + 1)
    return float(np.mean((acc - (e[1:] + e[:-1]) / 2) ** 2))


def test_sampling_behaviour_miscalibrated():
    # 400 data sets of n = 2000, p ~ U(0, 1), y ~ Bernoulli(p^2), 10 bins.
    # T unbiased: |mean - truth| <= 4 MC s.e. (false alarm 6e-5); the se
    # estimate matches the spread of T to 20% (MC s.e. of an sd from 400
    # draws: 3.5%; the asymptotic formula's own error at n = 2000: ~3%
    # measured); 90% coverage within 4 MC s.e. = 0.06 of 0.9 (measured 0.889
    # on 1,000 other data sets).
    rng = np.random.default_rng(11)
    truth = _truth_sq(2.0, 10)
    reps, n = 400, 2000
    t = np.empty(reps)
    se = np.empty(reps)
    hit = 0
    for r in range(reps):
        p = rng.uniform(size=n)
        z = (rng.uniform(size=n) < p**2).astype(np.int64)
        iv = l2_ece_interval(z, p, n_bins=10)
        t[r], se[r] = iv.statistic, iv.se
        hit += iv.squared_low <= truth <= iv.squared_high
    assert abs(t.mean() - truth) <= 4 * t.std() / np.sqrt(reps)
    assert se.mean() / t.std() == pytest.approx(1.0, abs=0.2)
    assert abs(hit / reps - 0.9) <= 4 * np.sqrt(0.09 / reps)


def test_sampling_behaviour_calibrated():
    # calibrated data: the interval reaches 0 in >= 90% of 400 data sets
    # (measured 0.98 on 1,000 others; P(< 0.9) under 0.98 is ~1e-12)
    rng = np.random.default_rng(12)
    reps, n = 400, 1000
    zero = 0
    for _ in range(reps):
        p = rng.uniform(size=n)
        z = (rng.uniform(size=n) < p).astype(np.int64)
        zero += l2_ece_interval(z, p, n_bins=15).low == 0.0
    assert zero / reps >= 0.9
