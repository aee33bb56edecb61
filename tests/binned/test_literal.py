"""bece._binned.literal: the literal BECE model's posterior by exact 1-D sampling.

Independent references: scipy.stats.truncnorm (normaliser, mean and the
per-observation likelihood), and brute-force numerical integration of each
bin mean's posterior density (scipy.integrate.quad). Stochastic checks use
fixed seeds; a Kolmogorov-Smirnov p-value below 1e-4 fails (false-alarm
rate 1e-4 per check for an exact sampler), moments within 4.5 Monte Carlo
standard errors (two-sided false-alarm rate below 1e-5).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import bece
from bece._binned.conjugate import closed_form, conjugate_posterior, sample_truncated_normal
from bece._binned.literal import (
    REFERENCE_FORM,
    _alias_table,
    _Cells,
    _envelope,
    _round,
    binned_form,
    literal_log_density,
    log_normalizer,
    sample_bin_confidence,
    sample_literal_mu,
    truncated_mean,
)
from bece._stats.calibration_stats import CalibrationStats


def _post(counts, sum_p, lower, upper, sigma, tau, alpha=0.1):
    counts = np.asarray(counts, dtype=np.float64)
    b = counts.shape[1]
    return closed_form(counts, np.asarray(sum_p, dtype=np.float64), np.asarray(lower, float),
                       np.asarray(upper, float), np.full((2, b), alpha),
                       np.asarray(sigma, float), np.asarray(tau, float))


def _brute_cdf(post, j):
    """CDF of bin j's mean, and the posterior mean of its truncated-Normal mean,
    by numerical integration of the unnormalised density
    N(mu; loc, scale^2) Z(mu)^(-n) on [l, u] written with scipy.stats.

    The density is evaluated on a dense grid refined geometrically towards
    both edges and towards its mode (at large n the mass can sit within 1e-8
    of an edge), and integrated by the trapezoidal rule on the log-linear
    interpolant between grid points (exact for the exponential shape the
    density has at that scale)."""
    lo, hi, sig = post.lower[j], post.upper[j], post.sigma[j]
    n = float(np.rint(post.concentration[:, j] - post.alpha[:, j]).sum())
    w = hi - lo

    def logf(mu):
        return (stats.norm.logpdf(mu, post.loc[j], post.scale[j])
                - n * np.log(stats.norm.cdf((hi - mu) / sig) - stats.norm.cdf((lo - mu) / sig)))

    steps = np.geomspace(1e-16 * w, w, 3000)
    coarse = np.linspace(lo, hi, 20_001)
    mode = coarse[np.argmax(logf(coarse))]
    grid = np.unique(np.clip(np.concatenate(
        [coarse, lo + steps, hi - steps, mode + steps, mode - steps]), lo, hi))
    lf = logf(grid)
    lf -= lf.max()
    dx = np.diff(grid)
    d = np.diff(lf)
    # integral of exp(linear) between neighbours: (e^{f1} - e^{f0}) / (f1 - f0) * dx
    with np.errstate(divide="ignore", invalid="ignore"):
        seg = np.where(np.abs(d) < 1e-9, np.exp(lf[:-1]) * dx,
                       (np.exp(lf[1:]) - np.exp(lf[:-1])) / d * dx)
    cum = np.concatenate([[0.0], np.cumsum(seg)])
    total = cum[-1]
    # the textbook truncated-Normal mean (no tails for mu inside the bin)
    a, b = (lo - grid) / sig, (hi - grid) / sig
    conf = grid + sig * (stats.norm.pdf(a) - stats.norm.pdf(b)) / (stats.norm.cdf(b) - stats.norm.cdf(a))
    mean_conf = np.sum(seg * 0.5 * (conf[:-1] + conf[1:])) / total

    def cdf(x):
        return np.interp(x, grid, cum / total)

    return cdf, mean_conf


def test_normaliser_and_mean_match_scipy_including_tails():
    lo, hi = 0.2, 0.3
    for mu, sig in [(0.25, 0.03), (0.2, 0.01), (0.3, 0.5), (0.9, 0.01), (-0.5, 0.02), (0.21, 1e-4)]:
        a, b = (lo - mu) / sig, (hi - mu) / sig
        ref = stats.truncnorm(a, b, loc=mu, scale=sig)
        # log Z from scipy's truncated-Normal density at a point of the interval
        x = 0.5 * (lo + hi)
        log_z = stats.norm.logpdf(x, mu, sig) - ref.logpdf(x)
        assert log_normalizer(np.array(mu), np.array(sig), lo, hi) == pytest.approx(log_z, rel=1e-9)
        assert truncated_mean(np.array(mu), np.array(sig), lo, hi) == pytest.approx(ref.mean(), abs=1e-12)


def test_truncated_mean_by_hand():
    # mu at the lower edge of [0, 1], sigma = 1: phi(0) - phi(1) over Phi(1) - 1/2
    phi0, phi1 = 1 / np.sqrt(2 * np.pi), np.exp(-0.5) / np.sqrt(2 * np.pi)
    big_phi1 = 0.8413447460685429
    assert truncated_mean(np.array(0.0), np.array(1.0), 0.0, 1.0) == pytest.approx(
        (phi0 - phi1) / (big_phi1 - 0.5), rel=1e-13)


def test_log_density_is_the_per_observation_likelihood_up_to_a_constant():
    rng = np.random.default_rng(0)
    lo, hi, sig, tau = 0.6, 0.8, 0.05, 0.04
    p = stats.truncnorm.rvs((lo - 0.75) / sig, (hi - 0.75) / sig, loc=0.75, scale=sig, size=12,
                            random_state=rng)
    post = _post([[5], [7]], [p.sum()], [lo], [hi], [sig], [tau])
    mus = np.linspace(lo + 1e-3, hi - 1e-3, 9)
    direct = np.array([
        stats.truncnorm.logpdf(p, (lo - m) / sig, (hi - m) / sig, loc=m, scale=sig).sum()
        + stats.truncnorm.logpdf(m, (lo - 0.7) / tau, (hi - 0.7) / tau, loc=0.7, scale=tau)
        for m in mus])
    ours = literal_log_density(mus[:, None], post)[:, 0]
    diff = direct - ours
    assert np.ptp(diff) < 1e-9
    assert literal_log_density(np.array([[lo - 0.01]]), post)[0, 0] == -np.inf


CASES = {
    # name: counts (2, 1), mean confidence, bin, sigma, tau
    "few points mid-bin": ([[2], [3]], 0.55, (0.5, 0.6), 0.1 / np.sqrt(12), 0.1 / np.sqrt(12)),
    "piled at the top edge": ([[3], [40]], 0.9995, (14 / 15, 1.0), 1 / 15 / np.sqrt(12),
                              1 / 15 / np.sqrt(12)),
    "wide sigma": ([[4], [6]], 0.31, (0.25, 0.5), 0.5, 0.5),
    "piled at the bottom, large n": ([[400_000], [600_000]], 0.00021, (0.0, 1 / 15),
                                     1 / 15 / np.sqrt(12), 1 / 15 / np.sqrt(12)),
    "narrow sigma, data at the edge": ([[10], [10]], 0.3999, (0.3, 0.4), 1e-3, 0.03),
}


@pytest.mark.parametrize("name", list(CASES))
def test_draws_match_numerical_integration(name):
    counts, pbar, (lo, hi), sig, tau = CASES[name]
    n = sum(c[0] for c in counts)
    post = _post(counts, [pbar * n], [lo], [hi], [sig], [tau])
    cdf, mean_conf = _brute_cdf(post, 0)
    mu = sample_literal_mu(post, 20_000, np.random.default_rng(1))[:, 0]
    assert np.all((mu >= lo) & (mu <= hi))
    ks = stats.kstest(mu, cdf)
    assert ks.pvalue > 1e-4, (name, ks)
    conf = truncated_mean(mu, sig, lo, hi)
    se = conf.std() / np.sqrt(conf.size)
    assert abs(conf.mean() - mean_conf) < 4.5 * se + 1e-12, name


def test_bins_without_data_sample_the_prior_and_points_stay_put():
    post = _post([[0, 3, 0], [0, 4, 0]], [0.0, 0.4 * 7, 0.0], [0.0, 0.25, 0.7], [0.25, 0.5, 0.7],
                 [0.07, 0.07, 0.0], [0.07, 0.07, 0.0])
    mu = sample_literal_mu(post, 20_000, np.random.default_rng(2))
    prior = sample_truncated_normal(post.loc[:1], post.scale[:1], post.lower[:1], post.upper[:1],
                                    20_000, np.random.default_rng(3))[:, 0]
    assert stats.ks_2samp(mu[:, 0], prior).pvalue > 1e-4
    assert np.all(mu[:, 2] == 0.7)
    conf = sample_bin_confidence(post, 100, np.random.default_rng(2), "literal")
    assert np.all(conf[:, 2] == 0.7) and np.all(np.isfinite(conf))


def test_envelope_bounds_the_log_density_everywhere():
    """The tangent envelope must lie above the log density (it is what makes
    the sampler exact); checked on a dense grid for very different cells."""
    rng = np.random.default_rng(4)
    b = 40
    lower = np.sort(rng.uniform(0, 0.9, b))
    upper = lower + rng.uniform(1e-3, 0.1, b)
    n = rng.integers(1, 10**7, b).astype(float)
    pbar = lower + (upper - lower) * rng.beta(0.3, 0.3, b)
    sigma = (upper - lower) * 10 ** rng.uniform(-2, 1, b)
    tau = (upper - lower) * 10 ** rng.uniform(-1, 1, b)
    post = _post(np.stack([np.floor(n / 2), n - np.floor(n / 2)]), pbar * n, lower, upper, sigma, tau)
    idx = np.arange(b)
    cells = _Cells(post, n, idx)
    env = _envelope(cells)
    kk = env["x"].size // b
    for j in range(b):
        grid = np.linspace(lower[j], upper[j], 2001)
        t = cells.take(np.full(grid.size, j)).log_density(grid) - env["ref"][j]
        x, tt = env["x"][j * kk:(j + 1) * kk], env["t"][j * kk:(j + 1) * kk]
        slopes = cells.take(np.full(kk, j)).slope(x)
        envelope = np.min(tt[:, None] + slopes[:, None] * (grid[None, :] - x[:, None]), axis=0)
        assert np.all(t <= envelope + 1e-9 * (1 + np.abs(t))), j


def test_alias_table_gives_each_segment_its_probability_exactly():
    rng = np.random.default_rng(11)
    w = rng.dirichlet(np.ones(15) * 0.3, size=50)
    w[0] = [0.5, 0.25, 0.25] + [0.0] * 12  # by hand: zeros are never drawn
    prob, alias = _alias_table(w)
    # P(k) = (prob[k] + sum over columns i aliased to k of (1 - prob[i])) / K
    got = prob.copy()
    for i in range(15):
        np.add.at(got, (np.arange(50), alias[:, i]), 1.0 - prob[:, i])
    np.testing.assert_allclose(got / 15, w, atol=1e-14)
    assert np.all((prob >= 0) & (prob <= 1))


@pytest.mark.parametrize("n", [10, 1000, 10**6, 10**9])
def test_acceptance_is_high(n):
    edges = np.linspace(0, 1, 16)
    rng = np.random.default_rng(5)
    pbar = edges[:-1] + np.diff(edges) * rng.beta(0.3, 0.3, 15)
    counts = np.stack([np.full(15, n // 2), np.full(15, n - n // 2)]).astype(float)
    w = np.diff(edges) / np.sqrt(12)
    post = _post(counts, pbar * n, edges[:-1], edges[1:], w, w)
    cells = _Cells(post, counts.sum(axis=0), np.arange(15))
    accept, draw = _round(_envelope(cells), cells, np.tile(np.arange(15), 2000), rng)
    assert accept.mean() > 0.85
    cell = np.tile(np.arange(15), 2000)
    assert np.all((draw >= edges[:-1][cell]) & (draw <= edges[1:][cell]))


def test_same_seed_same_draws_and_no_nan_at_extreme_counts():
    stats_ = CalibrationStats.from_arrays([0, 1, 1, 1], [0.01, 0.5, 0.99, 1.0], n_bins=5)
    a = bece.posterior_ece(stats_, model="literal", num_samples=500, seed=3)
    b = bece.posterior_ece(stats_, model="literal", num_samples=500, seed=3)
    assert np.array_equal(a.draws, b.draws)
    post = _post([[10**9], [10**9]], [0.9999 * 2e9], [0.8], [1.0], [0.2 / np.sqrt(12)],
                 [0.2 / np.sqrt(12)])
    mu = sample_literal_mu(post, 1000, np.random.default_rng(0))
    assert np.all(np.isfinite(mu)) and np.all(mu <= 1.0)


# --------------------------------------------------------------- entry points

def test_entry_points_name_the_forms():
    rng = np.random.default_rng(6)
    p = rng.beta(0.3, 0.3, 3000)
    y = (rng.uniform(size=3000) < p).astype(int)
    lit = bece.bayesian_ece(y, p, model="literal", num_samples=2000, seed=1)
    assert (lit.model, lit.method) == ("binned-literal", "exact")
    ref = bece.bayesian_ece(y, p, model="binned", num_samples=2000, seed=1)
    named = bece.bayesian_ece(y, p, model=REFERENCE_FORM, num_samples=2000, seed=1)
    assert np.array_equal(ref.draws, named.draws)
    conj = bece.bayesian_ece(y, p, model="conjugate", num_samples=2000, seed=1)
    assert (conj.model, conj.method) == ("binned", "conjugate")
    # each bin's literal confidence is a truncated-Normal mean, inside the bin
    edges = lit.stats.edges
    assert np.all((lit.confidence >= edges[:-1]) & (lit.confidence <= edges[1:]))
    assert binned_form("binned") == REFERENCE_FORM
    with pytest.raises(ValueError, match="model must be one of"):
        bece.bayesian_ece(y, p, model="literally")
    with pytest.raises(ValueError, match="preset='uncertainty-metrics' reproduces"):
        bece.bayesian_ece(y, p, model="literal", preset="uncertainty-metrics")


def test_literal_confidence_tracks_the_data_mean_in_the_bulk():
    """At large n the literal posterior of each bin's mean confidence
    concentrates where the truncated-Normal mean equals the data's mean,
    when that is reachable (away from the bin edges)."""
    rng = np.random.default_rng(7)
    p = rng.uniform(0.05, 0.95, 200_000)
    y = (rng.uniform(size=p.size) < p).astype(int)
    st = CalibrationStats.from_arrays(y, p, n_bins=10)
    r = bece.posterior_ece(st, model="literal", num_samples=2000, seed=0)
    pbar = st.sum_p / st.bin_counts
    assert np.allclose(r.confidence.mean(axis=0), pbar, atol=3e-4)


def test_top_label_literal_form():
    rng = np.random.default_rng(8)
    prob = rng.dirichlet(np.ones(3) * 0.5, size=2000)
    y = np.array([rng.choice(3, p=row) for row in prob])
    lit = bece.bayesian_top_label_ece(y, prob, n_bins=5, model="literal", num_samples=1000, seed=2)
    assert (lit.model, lit.method) == ("binned-top-label-literal", "exact")
    conj = bece.bayesian_top_label_ece(y, prob, n_bins=5, model="conjugate", num_samples=1000,
                                       seed=2)
    # same Dirichlet draws (same seed), different bin means
    assert np.allclose(lit.weight, conj.weight)
    assert not np.allclose(lit.label_confidence, conj.label_confidence)
    with pytest.raises(ValueError, match="model must be one of"):
        bece.bayesian_top_label_ece(y, prob, model="smooth-ish")


def test_literal_differs_from_conjugate_by_prior_only_in_the_dirichlet():
    """The Dirichlet part is the same in both forms: with the same seed the
    accuracy and weight draws are identical."""
    st = CalibrationStats.from_arrays([0, 1, 1, 0, 1], [0.1, 0.4, 0.8, 0.6, 0.95], n_bins=4)
    a = bece.posterior_ece(st, model="literal", num_samples=300, seed=9)
    b = bece.posterior_ece(st, model="conjugate", num_samples=300, seed=9)
    assert np.array_equal(a.weight, b.weight)
    assert np.array_equal(np.nan_to_num(a.accuracy), np.nan_to_num(b.accuracy))
    post = conjugate_posterior(st)
    assert post.loc.shape == (4,)
