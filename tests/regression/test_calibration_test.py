"""bece.regression.pit_calibration_test: Anderson-Darling on the PIT grid, its
resampled p-value, scipy's tests, and the Bayes factor.

The statistic is checked by hand on a 10-cell grid and against the
continuous Anderson-Darling statistic (a naive loop over the sorted
values, itself checked against ``scipy.stats.goodness_of_fit``).
Stochastic tests use fixed seeds: the resampled null against histograms of
uniform values (two-sample KS, p > 1e-4: false alarm 1e-4), and the
p-value's validity over 1000 calibrated data sets (rejection rate at 0.05
within 3 binomial sd above 0.05: false alarm 0.13%).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats as sps

from bece._regression.pit_bayes_factor import anderson_darling_grid, resampled_statistic
from bece.regression import (
    DiscretePITWarning,
    PITHistogram,
    RegressionCalibrationTest,
    bayesian_calibration_error,
    pit,
    pit_calibration_test,
)


def _ad_continuous(u):
    """A^2 = -n - (1/n) sum_i (2i - 1) [log u_(i) + log(1 - u_(n+1-i))], by a loop."""
    x = np.sort(u)
    n = x.size
    total = 0.0
    for i in range(1, n + 1):
        total += (2 * i - 1) * (np.log(x[i - 1]) + np.log(1 - x[n - i]))
    return -n - total / n


def test_statistic_by_hand_on_ten_cells():
    counts = np.array([3, 0, 0, 0, 0, 0, 0, 0, 0, 1])
    # F_hat = 0.75 from k = 1 to 9, F = k/10: (n/G) sum (0.75 - k/10)^2 / (k/10 (1 - k/10))
    k = np.arange(1, 10) / 10
    hand = 4 / 10 * sum((0.75 - f) ** 2 / (f * (1 - f)) for f in k)
    assert anderson_darling_grid(counts) == pytest.approx(hand, rel=1e-14)
    assert anderson_darling_grid(np.stack([counts, counts]))[1] == pytest.approx(hand, rel=1e-14)


def test_grid_statistic_approaches_the_continuous_one(rng):
    u = rng.beta(1.3, 0.9, size=60)
    res = sps.goodness_of_fit(sps.uniform, u, known_params={"loc": 0.0, "scale": 1.0}, statistic="ad",
                              n_mc_samples=9, rng=np.random.default_rng(0))
    assert _ad_continuous(u) == pytest.approx(res.statistic, rel=1e-10)
    fine = anderson_darling_grid(PITHistogram.from_pit(u, n_cells=10**6).counts)
    assert fine == pytest.approx(_ad_continuous(u), rel=2e-3)


def test_resampled_null_is_the_histogram_of_uniform_values():
    n, g, b = 50, 100, 2000
    null = resampled_statistic(n, g, b, np.random.default_rng(1))
    r = np.random.default_rng(2)
    direct = np.array([anderson_darling_grid(PITHistogram.from_pit(r.uniform(size=n), n_cells=g).counts)
                       for _ in range(b)])
    assert sps.ks_2samp(null, direct).pvalue > 1e-4


def test_p_value_is_valid_under_calibration():
    """1000 data sets of 100 uniform PIT values on 100 cells, 99 resamples
    each: the resampled p-value rejects at 0.05 at most 0.05 + 3 sd of the
    time (it is exactly valid: P(p <= 0.05) <= 0.05, whatever the grid)."""
    r = np.random.default_rng(3)
    reject = 0
    for _ in range(1000):
        h = PITHistogram.from_pit(r.uniform(size=100), n_cells=100)
        stat = anderson_darling_grid(h.counts)
        null = resampled_statistic(100, 100, 99, r)
        reject += (1 + np.count_nonzero(null >= stat)) / 100 <= 0.05
    assert reject / 1000 <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 1000)


def test_result_fields_and_p_value(rng):
    u = pit(rng.normal(size=300), mean=0.2, std=1.3)
    t = pit_calibration_test(u, num_resamples=199, num_samples=300, seed=4)
    assert isinstance(t, RegressionCalibrationTest) and t.method == "anderson-darling"
    assert t.statistic == anderson_darling_grid(PITHistogram.from_pit(u).counts)
    assert t.resampled.shape == (199,)
    assert t.p_value == (1 + np.count_nonzero(t.resampled >= t.statistic)) / 200
    assert t.reject(t.p_value) and not t.reject(t.p_value * 0.99)
    bf = t.bayes_factor
    assert t.prior_odds == 0.1 and t.prob_calibrated == pytest.approx(0.1 * bf / (1 + 0.1 * bf), rel=1e-12)
    assert t.n == 300 and t.n_cells == 1000
    assert repr(t).startswith("RegressionCalibrationTest(method='anderson-darling', statistic=")
    # the Bayes factor comes from the same smooth model as bayesian_calibration_error
    r = bayesian_calibration_error(u, num_samples=300, seed=4)
    assert t.posterior.log_marginal == r.params.log_marginal
    assert t.posterior.log_marginal_calibrated == r.params.log_marginal_calibrated
    # prior odds change prob_calibrated only
    t4 = pit_calibration_test(u, num_resamples=199, num_samples=300, seed=4, prior_odds=4.0)
    assert t4.log_bayes_factor == t.log_bayes_factor and t4.p_value == t.p_value
    assert t4.prob_calibrated == pytest.approx(4 * t.bayes_factor / (1 + 4 * t.bayes_factor), rel=1e-12)


def test_values_and_histogram_agree(rng):
    u = rng.uniform(size=500)
    a = pit_calibration_test(u, num_resamples=99, num_samples=200, seed=5)
    b = pit_calibration_test(sum(PITHistogram.from_pit(u[i:i + 100]) for i in range(0, 500, 100)),
                         num_resamples=99, num_samples=200, seed=5)
    assert (a.statistic, a.p_value, a.log_bayes_factor) == (b.statistic, b.p_value, b.log_bayes_factor)


@pytest.mark.parametrize("method, fn", [("cramer-von-mises", "cramervonmises"),
                                        ("kolmogorov-smirnov", "kstest")])
def test_scipy_methods(rng, method, fn):
    u = rng.beta(1.2, 1.0, size=200)
    t = pit_calibration_test(u, method=method, num_samples=100)
    ref = getattr(sps, fn)(u, "uniform")
    assert (t.statistic, t.p_value) == (ref.statistic, ref.pvalue) and t.resampled is None
    with pytest.raises(ValueError, match="PIT values"):
        pit_calibration_test(PITHistogram.from_pit(u), method=method)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(method="chi2"), "method"),
        (dict(num_resamples=0), "num_resamples"),
        (dict(num_samples=1.5), "num_samples"),
        (dict(prior_odds=-1.0), "prior_odds"),
        (dict(shift_scale=0.0), "shift_scale"),
        (dict(n_cells=3), "n_cells"),
        (dict(seed="x"), "seed"),
    ],
)
def test_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        pit_calibration_test([0.1, 0.5, 0.7], **kwargs)


def test_bad_inputs_and_levels():
    with pytest.raises(ValueError, match="pit"):
        pit_calibration_test([0.1, np.nan])
    with pytest.raises(ValueError, match="empty"):
        pit_calibration_test(PITHistogram(np.zeros(100, dtype=np.int64)))
    t = pit_calibration_test([0.1, 0.5, 0.7], num_resamples=9, num_samples=50)
    for bad in (0.0, 1.0, True, "0.05"):
        with pytest.raises(ValueError, match="level"):
            t.reject(bad)


def test_discrete_pit_warns():
    r = np.random.default_rng(6)
    y = r.normal(size=500)
    q = np.tile([-1.0, 0.0, 1.0], (500, 1))
    with pytest.warns(DiscretePITWarning):
        pit_calibration_test(pit(y, quantiles=q, levels=[0.16, 0.5, 0.84]), num_resamples=9, num_samples=50)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pit_calibration_test(pit(y, quantiles=q, levels=[0.16, 0.5, 0.84], randomize=True, seed=0),
                         num_resamples=9, num_samples=50)


@pytest.mark.slow
def test_false_alarm_rate_of_the_full_test():
    """pit_calibration_test on 1000 calibrated Gaussian forecasts of n = 1000 (the
    study's design): rejection rate at 0.05 at most 0.05 + 3 binomial sd."""
    import importlib.util
    import sys
    from pathlib import Path

    name = "bece_benchmarks_regression_study"
    if name not in sys.modules:
        path = Path(__file__).resolve().parents[2] / "benchmarks" / "regression_study.py"
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    study = sys.modules[name]
    row = study.rejection(study.FORECASTERS[0], "gaussian", 1000, 1000, seed=77)
    assert row.ad <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 1000)


def _prior_mc_log_marginal(counts, tau, g, draws, rng, chunk=50_000):
    """log p(N | smooth model) of the counts N between the levels ``tau`` by plain Monte Carlo
    over the prior (a ~ N(0, 0.6^2), b ~ N(0, 0.67^2), lambda ~ Exp(mean 0.25), w ~ N(0, I_24)),
    written from the model's definition with scipy: cell masses Phi(a + e^b z_{k+1}) -
    Phi(a + e^b z_k) on g equal cells, tilt sqrt(2) cos(j pi c) j^-2 / (sum i^-4)^(1/2).
    Returns the estimate and its relative Monte Carlo standard error."""
    from scipy import special

    edges = np.arange(g + 1) / g
    z = special.ndtri(edges)
    centre = (edges[:-1] + edges[1:]) / 2
    j = np.arange(1, 25)
    psi = np.sqrt(2) * np.cos(np.pi * np.outer(centre, j)) * j**-2.0 / np.sqrt(np.sum(j**-4.0))
    cell = np.searchsorted(np.concatenate([[0.0], tau, [1.0]]), centre) - 1  # observed cell of each fine cell
    like = []
    for a in range(0, draws, chunk):
        m = min(chunk, draws - a)
        sa, sb = rng.normal(0, 0.6, m), rng.normal(0, 0.67, m)
        lam, w = rng.exponential(0.25, m), rng.normal(size=(m, 24))
        x = sa[:, None] + np.exp(sb)[:, None] * z[None, :]
        mass = np.diff(special.ndtr(x), axis=1)
        pi = mass * np.exp(lam[:, None] * (w @ psi.T))
        pi /= pi.sum(axis=1, keepdims=True)
        big_p = np.stack([pi[:, cell == c].sum(axis=1) for c in range(tau.size + 1)], axis=1)
        like.append(np.prod(big_p**counts, axis=1))
    like = np.concatenate(like)
    return float(np.log(like.mean())), float(like.std() / like.mean() / np.sqrt(draws))


def test_grouped_bayes_factor_by_hand_and_against_prior_monte_carlo():
    """With forecast_levels, the Bayes factor is that of the counts between the levels:
    log p(N | calibrated) = sum_j N_j log(width_j) by hand (12 log 0.25 here), and the smooth
    model's marginal likelihood against plain Monte Carlo over its prior (200,000 draws,
    written independently of bece), within 4 combined standard errors (that of the prior
    Monte Carlo and the importance estimate's, sqrt(1/ESS - 1/S)); false alarm 6e-5. The
    Bayes factor is the one bayesian_calibration_error reports with the same keyword."""
    tau = np.array([0.25, 0.5, 0.75])
    u = np.array([0.01, 0.1, 0.2, 0.2, 0.24, 0.3, 0.6, 0.8, 0.9, 0.95, 0.99, 1.0])  # counts 5, 1, 1, 5
    t = pit_calibration_test(u, method="cramer-von-mises", n_cells=100, forecast_levels=tau,
                             num_samples=20_000, seed=1)
    post = t.posterior
    np.testing.assert_array_equal(post.cells.counts, [5, 1, 1, 5])
    assert post.log_marginal_calibrated == pytest.approx(12 * np.log(0.25), rel=1e-14)
    assert post.pareto_k < 0.7  # the importance estimate is the one used
    log_p1, rel_se = _prior_mc_log_marginal(np.array([5, 1, 1, 5]), tau, 100, 200_000,
                                            np.random.default_rng(2))
    se_is = np.sqrt(1.0 / post.is_ess - 1.0 / 20_000)
    assert abs(post.log_marginal_is - log_p1) < 4 * np.hypot(rel_se, se_is)
    assert t.log_bayes_factor == pytest.approx(12 * np.log(0.25) - post.log_marginal_is, rel=1e-14)
    r = bayesian_calibration_error(u, n_cells=100, forecast_levels=tau, num_samples=20_000, seed=1)
    assert r.log_bayes_factor == pytest.approx(t.log_bayes_factor, rel=1e-12)


def test_forecast_draws_gives_the_ranks_bayes_factor(rng):
    """forecast_draws=S: the calibrated evidence -n log(S + 1), the Bayes factor that of
    bayesian_calibration_error with the same keyword; both keywords together refused."""
    size, n = 20, 500
    u = pit(rng.normal(size=n), samples=rng.normal(size=(n, size)), randomize=True, seed=rng)
    t = pit_calibration_test(u, method="kolmogorov-smirnov", forecast_draws=size, num_samples=500, seed=4)
    assert t.posterior.log_marginal_calibrated == pytest.approx(-n * np.log(size + 1), rel=1e-12)
    r = bayesian_calibration_error(u, forecast_draws=size, num_samples=500, seed=4)
    assert r.log_bayes_factor == pytest.approx(t.log_bayes_factor, rel=1e-12)
    with pytest.raises(ValueError, match="not both"):
        pit_calibration_test(u, forecast_draws=size, forecast_levels=[0.5], num_samples=50)
    with pytest.raises(ValueError, match="forecast_draws"):
        pit_calibration_test(u, forecast_draws=-1, num_samples=50)
