"""bece.calibration_test: consistency-resampling p-value and Bayes factor of perfect calibration.

The statistic is checked against the plug-in ECE, the resampling against a
naive loop fed the same random numbers, the Bayes factor against a
brute-force Monte Carlo marginal likelihood (draws from the prior). The
false-alarm and power tests are binomial; each docstring gives the
probability that it fails when the method is right (its false-alarm rate).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

import bece
from bece import calibration_test
from bece._smooth.atoms import make_atoms
from bece._smooth.bayes_factor import CalibrationTest, resampled_ece
from bece._smooth.draws import importance_draws
from bece._smooth.fit import fit_smooth
from bece._stats import make_binning
from bece._stats.inputs import as_outcomes

Z = 5.0


def _calibrated(n, rng):
    p = rng.uniform(size=n)
    return (rng.uniform(size=n) < p).astype(np.int64), p


def _atoms(z, p, grid=None, n_bins=15):
    return make_atoms(z, p, make_binning(p, n_bins), grid)


@pytest.mark.parametrize("grid", [None, 32])
def test_statistic_is_the_plugin_ece(rng, grid):
    z, p = _calibrated(3000, rng)
    stat, res = resampled_ece(_atoms(z, p, grid), 5, rng)
    assert stat == pytest.approx(bece.expected_calibration_error(z, p), rel=1e-12)
    assert res.shape == (5,) and np.all(res >= 0)


class _FixedUniforms:
    def __init__(self, u):
        self.u = u
        self.at = 0

    def random(self, size):
        out = self.u[self.at:self.at + size[0]]
        self.at += size[0]
        return out


def test_resamples_match_a_naive_loop(rng):
    z, p = _calibrated(200, rng)
    at = _atoms(z, p, n_bins=5)
    u = np.random.default_rng(1).uniform(size=(6, 200))
    _, res = resampled_ece(at, 6, _FixedUniforms(u), chunk_elems=400)
    for b in range(6):
        zstar = (u[b] < at.p).astype(int)
        assert res[b] == pytest.approx(bece.expected_calibration_error(zstar, at.p, n_bins=5), rel=1e-12)


def test_grid_resamples_have_the_binomial_moments(rng):
    """Per-bin correct counts of the grid resamples: mean sum(t p), variance
    sum(t p (1 - p)) over the sub-cells. Checked through the statistic's
    mean with one bin (|C - S|/n has the folded-normal mean sqrt(2 V/pi)/n);
    Z standard errors over 20,000 resamples."""
    z, p = _calibrated(50_000, rng)
    at = _atoms(z, p, grid=64, n_bins=1)
    _, res = resampled_ece(at, 20_000, np.random.default_rng(2))
    var = np.sum(at.trials * at.p * (1 - at.p))
    expected = np.sqrt(2 * var / np.pi) / at.n
    assert abs(res.mean() - expected) <= Z * res.std() / np.sqrt(res.size)


def test_p_value_counts_resamples_at_least_as_large(rng):
    z, p = _calibrated(300, rng)
    t = calibration_test(z, p, num_resamples=199, num_samples=500, seed=3)
    assert isinstance(t, CalibrationTest)
    assert t.p_value == pytest.approx((1 + np.sum(t.resampled >= t.statistic)) / 200)
    assert 1 / 200 <= t.p_value <= 1
    assert t.statistic == pytest.approx(bece.expected_calibration_error(z, p))
    assert t.reject(level=0.999) and t.reject(level=t.p_value)
    assert "p_value" in repr(t)


def test_false_alarm_rate_is_at_most_the_level():
    """300 calibrated data sets (n = 200, p ~ U(0, 1)), 99 resamples each.
    The p-value is valid, so rejections at 0.05 are at most Binomial(300,
    0.05); P(more than 26) = 0.0026."""
    rejections = 0
    for r in range(300):
        g = np.random.default_rng([11, r])
        z, p = _calibrated(200, g)
        stat, res = resampled_ece(_atoms(z, p), 99, g)
        rejections += (1 + np.sum(res >= stat)) / 100 <= 0.05
    assert rejections <= 26


def test_false_alarm_rate_on_calibrated_top_label_data():
    """Labels drawn from the predicted class probabilities are calibrated in
    the top-label sense; 200 data sets of n = 300 (K = 4), 99 resamples:
    P(Binomial(200, 0.05) > 19) = 0.0027."""
    rejections = 0
    for r in range(200):
        g = np.random.default_rng([12, r])
        prob = special.softmax(g.normal(scale=2.0, size=(300, 4)), axis=1)
        y = (g.uniform(size=(300, 1)) > prob.cumsum(axis=1)).sum(axis=1)
        z, conf = as_outcomes(y, prob)  # what calibration_test resamples
        stat, res = resampled_ece(_atoms(z, conf), 99, g)
        rejections += (1 + np.sum(res >= stat)) / 100 <= 0.05
    assert rejections <= 19


def test_power_against_an_overconfident_classifier():
    """p ~ U(0, 1), P(y=1|p) = p^1.5 (ECE 0.1), n = 800: the p-value rejects
    at 0.05 and P(calibrated) < 0.05 in at least 18 of 20 data sets.
    Measured over 150 other data sets: 150/150 for both; were the power only
    0.98 (the 95% lower confidence bound), 3 or more misses in 20 would
    happen with probability 0.008. (At n = 400 the power was 0.79 for the
    p-value at 0.01 and 0.945 for the Bayes factor.)"""
    p_rej = bf_rej = 0
    for r in range(20):
        g = np.random.default_rng([13, r])
        p = g.uniform(size=800)
        z = (g.uniform(size=800) < p**1.5).astype(int)
        t = calibration_test(z, p, num_resamples=199, num_samples=500, seed=g)
        p_rej += t.reject(0.05)
        bf_rej += t.bayes_factor < 0.05 / 0.95  # P(calibrated) < 0.05 at even prior odds
    assert p_rej >= 18 and bf_rej >= 18


def test_bayes_factor_against_brute_force_marginal_likelihood():
    """A small alternative (4 knots, no bin deviations, n = 60): log p(data |
    smooth) by 400,000 draws from the prior, against the Laplace mixture and
    its importance-sampling correction. Allowance 0.05 (the hyper-grid's
    quadrature; measured 0.02) plus Z Monte Carlo standard errors."""
    g = np.random.default_rng(0)
    p = g.uniform(size=60)
    z = (g.uniform(size=60) < p**1.5).astype(int)
    at = _atoms(z, p)
    post = fit_smooth(at, n_knots=4, bin_scale=None)
    *_, post_is = importance_draws(at, post, 4000, np.random.default_rng(1))
    S = 400_000
    h = np.random.default_rng(2)
    beta = np.column_stack([h.normal(0, 1.0, S), h.normal(0, 0.5, S),
                            h.exponential(0.5, S)[:, None] * h.normal(size=(S, 2))])
    design = post.basis.design(at.x)
    ll = np.concatenate([
        (at.x + beta[i:i + 50_000] @ design.T) @ at.successes
        - np.logaddexp(0, at.x + beta[i:i + 50_000] @ design.T).sum(axis=1)
        for i in range(0, S, 50_000)
    ])
    w = np.exp(ll - ll.max())
    brute = ll.max() + np.log(w.mean())
    se = w.std() / np.sqrt(S) / w.mean()
    assert abs(post.log_marginal - brute) <= 0.05 + Z * se
    assert post_is.pareto_k < 0.7
    assert abs(post_is.log_marginal_is - brute) <= 0.05 + Z * se + Z / np.sqrt(post_is.is_ess)


def test_prob_calibrated_and_prior_odds(rng):
    z, p = _calibrated(2000, rng)
    even = calibration_test(z, p, num_resamples=99, num_samples=500, seed=1, prior_odds=1.0)
    odds = calibration_test(z, p, num_resamples=99, num_samples=500, seed=1, prior_odds=0.25)
    default = calibration_test(z, p, num_resamples=99, num_samples=500, seed=1)
    assert default.prior_odds == 0.02 and default.log_bayes_factor == even.log_bayes_factor
    post = even.posterior
    assert even.log_bayes_factor == pytest.approx(post.log_marginal_calibrated - post.log_marginal_smooth)
    assert even.bayes_factor == pytest.approx(np.exp(even.log_bayes_factor))
    assert even.prob_calibrated == pytest.approx(even.bayes_factor / (1 + even.bayes_factor))
    assert odds.prob_calibrated == pytest.approx(0.25 * odds.bayes_factor / (1 + 0.25 * odds.bayes_factor))
    assert even.prob_calibrated > 0.5  # calibrated data, n = 2000 (fixed seed)


def test_large_n_uses_the_grid_and_still_decides(rng):
    p = rng.uniform(size=200_000)
    z = (rng.uniform(size=200_000) < p**1.1).astype(int)
    t = calibration_test(z, p, num_resamples=200, num_samples=500, seed=0)
    assert t.posterior.grid == 128 and t.n == 200_000
    assert t.p_value == pytest.approx(1 / 201) and t.prob_calibrated < 1e-6


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"num_resamples": 0}, "num_resamples"),
        ({"num_samples": 1.5}, "num_samples"),
        ({"prior_odds": 0}, "prior_odds"),
        ({"prior_odds": float("inf")}, "prior_odds"),
        ({"seed": "a"}, "seed"),
        ({"grid": -2}, "grid"),
    ],
)
def test_bad_options_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        calibration_test([0, 1, 1, 0], [0.2, 0.7, 0.9, 0.4], **kwargs)


def test_bad_data_and_level_raise():
    with pytest.raises(ValueError, match="y_true must hold labels in 0..1"):
        calibration_test([0, 2], [0.2, 0.4])
    t = calibration_test([0, 1, 1, 0], [0.2, 0.7, 0.9, 0.4], num_resamples=9, num_samples=50)
    with pytest.raises(ValueError, match="level"):
        t.reject(1.5)


def test_resamples_beyond_the_memory_limit_are_refused(monkeypatch):
    """Robustness #12: num_resamples = 10**9 ended in numpy's MemoryError."""
    monkeypatch.setenv("BECE_MEMORY_LIMIT", "1GiB")
    rng = np.random.default_rng(0)
    p = rng.uniform(size=100)
    y = (rng.uniform(size=100) < p).astype(int)
    with pytest.raises(ValueError, match=r"^num_resamples=1000000000: the resampled statistics .* "
                                         r"7\.54 GiB.*BECE_MEMORY_LIMIT"):
        bece.calibration_test(y, p, num_resamples=10**9)
    with pytest.raises(ValueError, match=r"^num_samples=100000000: the smooth model's posterior"):
        bece.calibration_test(y, p, num_samples=10**8)


def test_a_strongly_miscalibrated_model_warns_of_nothing():
    """Issue 17: 'overflow encountered in exp' on every strongly
    miscalibrated model (log B far below -709). P(calibrated) is
    expit(log B + log O), the Bayes factor underflows quietly to 0."""
    import warnings

    rng = np.random.default_rng(3)
    p = rng.uniform(0.5, 1.0, size=3000)
    y = (rng.uniform(size=3000) < 0.2).astype(int)  # right 20% of the time at 0.5-1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = calibration_test(y, p, num_resamples=99, num_samples=300)
        assert t.log_bayes_factor < -745  # exp underflows: the case that overflowed
        assert t.prob_calibrated == 0.0 and t.bayes_factor == 0.0
        str(t), repr(t)
    for log_b, odds in [(-3.0, 1.0), (0.5, 0.25), (40.0, 2.0)]:
        moderate = CalibrationTest(statistic=t.statistic, p_value=t.p_value, resampled=t.resampled,
                                   log_bayes_factor=log_b, prior_odds=odds, n=t.n,
                                   n_bins=t.n_bins, posterior=t.posterior)
        b = np.exp(log_b)
        assert moderate.prob_calibrated == pytest.approx(b * odds / (1 + b * odds), rel=1e-14)
        assert moderate.bayes_factor == pytest.approx(b, rel=1e-14)
