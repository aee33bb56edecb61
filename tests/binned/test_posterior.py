"""bece._binned.posterior: the ECE posterior from statistics against an
independent implementation of the whole posterior, and its behaviour in n,
seeds and per-bin priors.

Tolerances come from Monte Carlo error: a comparison of two sample means
passes when the gap is below ``Z = 5`` standard errors (false-alarm rate
5.7e-7); the two-sample KS tests use a p-value threshold of 1e-5.
"""

from __future__ import annotations

import numpy as np
from scipy import stats as sps

import bece
from bece import CalibrationStats, posterior_ece
from bece._stats import make_binning

from ..conftest import simulate_binary

Z = 5.0


# ---------------------------------------------------------------- whole posterior
def _reference_posterior(counts, sum_p, edges, alpha, sigma, tau, size, rng, weighting="bin"):
    """Independent implementation with scipy.stats, one draw at a time."""
    m = counts.shape[1]
    lower, upper = edges[:-1], edges[1:]
    center = (lower + upper) / 2
    n = counts.sum(axis=0)
    out = np.empty(size)
    for s in range(size):
        q = sps.dirichlet.rvs((alpha + counts).ravel(), random_state=rng)[0].reshape(2, m)
        mu = np.empty(m)
        for j in range(m):
            v = 1 / (1 / tau[j] ** 2 + n[j] / sigma[j] ** 2)
            mean = v * (center[j] / tau[j] ** 2 + sum_p[j] / sigma[j] ** 2)
            sd = np.sqrt(v)
            mu[j] = sps.truncnorm.rvs(
                (lower[j] - mean) / sd, (upper[j] - mean) / sd, loc=mean, scale=sd, random_state=rng
            )
        if weighting == "bin":
            out[s] = np.sum(np.abs(q[1] - (q[0] + q[1]) * mu))
        else:
            pz = q[1] / (q[0] + q[1])
            out[s] = np.sum(q[1] / q[1].sum() * np.abs(pz - mu))
    return out


def _compare(ours, ref):
    se = np.sqrt(ours.var() / ours.size + ref.var() / ref.size)
    assert abs(ours.mean() - ref.mean()) <= Z * se
    assert sps.ks_2samp(ours, ref).pvalue > 1e-5


def test_default_posterior_matches_independent_implementation(rng):
    y, p = simulate_binary(60, rng, power=2.0)
    s = CalibrationStats.from_arrays(y, p, n_bins=6)
    r = posterior_ece(s, num_samples=20_000, seed=1)
    w = np.diff(s.edges) / np.sqrt(12)
    ref = _reference_posterior(s.counts, s.sum_p, s.edges, 1 / 12, w, w, 3000, rng)
    _compare(r.draws, ref)


def test_preset_matches_a_port_of_the_reference_algorithm(rng):
    y, p = simulate_binary(40, rng, power=0.5)
    m = 5
    s = CalibrationStats.from_arrays(y, p, n_bins=m)
    r = posterior_ece(s, preset="uncertainty-metrics", num_samples=20_000, seed=2)
    sd = np.full(m, np.sqrt(1 / (12 * m)))
    ref = _reference_posterior(s.counts, s.sum_p, s.edges, 1 / m, sd, sd, 3000, rng, "correct")
    _compare(r.draws, ref)


def test_posterior_concentrates_on_plugin_at_large_n(rng):
    sds = {}
    for n in (10_000, 1_000_000):
        y, p = simulate_binary(n, rng, power=1.5)
        r = bece.bayesian_ece(y, p, seed=3, model="binned")
        assert abs(r.mean - r.plugin) <= 3 * r.std
        sds[n] = r.std
    # sd ~ 1/sqrt(n): ratio 10 for a 100-fold n; MC error of each sd is ~0.7%
    assert 8.0 <= sds[10_000] / sds[1_000_000] <= 12.5


def test_confidence_draws_centre_on_bin_means_at_large_n(rng):
    y, p = simulate_binary(200_000, rng)
    r = bece.bayesian_ece(y, p, n_bins=10, num_samples=2000, model="binned")
    np.testing.assert_allclose(r.confidence.mean(axis=0), r.stats.confidence, atol=1e-3)
    np.testing.assert_allclose(np.nanmean(r.accuracy, axis=0), r.stats.accuracy, atol=5e-3)


def test_same_seed_same_draws_different_seed_differs(rng):
    y, p = simulate_binary(300, rng)
    a = bece.bayesian_ece(y, p, seed=7, num_samples=1000, model="binned")
    b = bece.bayesian_ece(y, p, seed=7, num_samples=1000, model="binned")
    c = bece.bayesian_ece(y, p, seed=8, num_samples=1000, model="binned")
    assert np.array_equal(a.draws, b.draws)
    assert not np.array_equal(a.draws, c.draws)
    g = bece.bayesian_ece(y, p, seed=np.random.default_rng(7), num_samples=1000, model="binned")
    assert g.draws.shape == (1000,)


def test_single_observation_and_explicit_edges():
    r = bece.bayesian_ece([1], [0.8], binning=make_binning(None, None, [0.5, 0.75, 1.0]), num_samples=200,
                          model="binned")
    assert r.draws.shape == (200,) and np.all((r.draws >= 0) & (r.draws <= 1))
    assert np.all((r.confidence[:, 1] >= 0.75) & (r.confidence[:, 1] <= 1.0))


def test_per_bin_sigma_and_alpha_arrays(rng):
    y, p = simulate_binary(200, rng)
    r = bece.bayesian_ece(y, p, n_bins=3, sigma=[0.05, 0.1, 0.2], alpha=np.ones((2, 3)), num_samples=100,
                          model="binned")
    np.testing.assert_allclose(r.params.sigma, [0.05, 0.1, 0.2])
    np.testing.assert_allclose(r.params.concentration, 1 + r.stats.counts)


def test_empty_statistics_are_refused():
    """Robustness #20: n = 0 gave a prior-only result with plugin = NaN and a
    RuntimeWarning (the smooth model refuses n = 0)."""
    import pytest

    empty = CalibrationStats(make_binning(None, 15), np.zeros((2, 15), int), np.zeros(15),
                             np.zeros(15))
    with pytest.raises(ValueError, match=r"stats holds no predictions \(n = 0\)"):
        posterior_ece(empty, num_samples=100)


def test_draws_beyond_the_memory_limit_are_refused_before_allocating(monkeypatch):
    """Robustness #12: num_samples=10**9 or n_bins=10**6 ended in numpy's
    MemoryError (or a long swap) that did not name the argument."""
    import pytest

    monkeypatch.setenv("BECE_MEMORY_LIMIT", "1GiB")
    y, p = [0, 1, 1], [0.2, 0.6, 0.9]
    with pytest.raises(ValueError, match=r"^num_samples=1000000000 with n_bins=15: the posterior "
                                         r"draws .* would take 1006 GiB, more than .* 1 GiB"):
        bece.bayesian_ece(y, p, num_samples=10**9, model="binned")
    with pytest.raises(ValueError, match=r"num_samples=10000 with n_bins=1000000: .* 671 GiB"):
        bece.bayesian_ece(y, p, n_bins=10**6, model="binned")
    assert bece.bayesian_ece(y, p, num_samples=1000, model="binned").draws.shape == (1000,)
