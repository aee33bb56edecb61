"""bece._regression.cells: the smooth model fitted to counts between a forecast's levels.

Deterministic checks use hand-computed shares, an independently written
log likelihood (tests/regression/test_smooth.py's ``_log_probs`` summed over
the observed cells) with finite differences, and the reduction to the fine
model when every cell is its own observed cell. Stochastic tests use fixed
seeds; their tolerances and false-alarm rates are stated where they are.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

from bece._regression.cells import cell_curve, cell_derivatives, observed_cells, rank_grid_edges
from bece._regression.smooth import _gauss_terms, _newton, fit_pit_model, pit_grid
from bece.regression import PITHistogram, bayesian_calibration_error, pit

from .conftest import hetero
from .test_smooth import _log_probs, _probs

G = 40
SUB = [0, 1, 2, 3, 9, 25]  # parameters whose second derivatives are checked


def test_shares_by_hand():
    # fine cells of 0.1; observed cells (0, 0.25], (0.25, 0.3], (0.3, 1]
    cells = observed_cells([0.25, 0.3], PITHistogram(np.arange(10)), np.array([0.1, 0.26, 0.9, 1.0]))
    np.testing.assert_array_equal(cells.counts, [1, 1, 2])
    a = cells.share
    assert a.shape == (3, 10)
    np.testing.assert_allclose(a[:, 0], [1, 0, 0])
    np.testing.assert_allclose(a[:, 2], [0.5, 0.5, 0])  # (0.2, 0.3] is split at 0.25
    np.testing.assert_allclose(a[:, 3], [0, 0, 1])
    np.testing.assert_allclose(a.sum(axis=0), 1.0, rtol=0, atol=1e-15)
    # counts from the histogram: cells 0, 1 | 2 | 3..9 (0.3 is on the grid, 0.25 is not)
    with pytest.raises(ValueError, match=r"forecast_levels must lie on the PIT histogram's grid"):
        observed_cells([0.25, 0.3], PITHistogram(np.arange(10)), None)
    ok = observed_cells([0.2, 0.3], PITHistogram(np.arange(10)), None)
    np.testing.assert_array_equal(ok.counts, [0 + 1, 2, sum(range(3, 10))])


def test_counts_from_values_equal_counts_from_the_histogram(rng):
    u = rng.uniform(size=5000)
    hist = PITHistogram.from_pit(u)
    levels = np.array([0.05, 0.25, 0.5, 0.75, 0.95])
    a = observed_cells(levels, hist, u)
    b = observed_cells(levels, hist, None)
    np.testing.assert_array_equal(a.counts, b.counts)
    np.testing.assert_array_equal(a.counts, np.histogram(u, np.concatenate([[0], levels, [1]]))[0])
    assert a.counts.dtype == np.int64


def _independent_loglik(theta, lam, edges_idx, counts, g=G):
    """sum_j N_j log sum_{k in cell j} pi_k, cells on the grid (edge indices)."""
    p = _probs(theta[0], theta[1], lam, theta[2:], g)
    big = np.add.reduceat(p, edges_idx[:-1])
    return counts @ np.log(big)


def test_derivatives_match_finite_differences_of_an_independent_likelihood(rng):
    grid = pit_grid(G)
    idx = np.array([0, 3, 10, 20, 21, 33, G])  # observed cells of 3, 7, 10, 1, 12, 7 fine cells
    levels = idx[1:-1] / G
    u = special.ndtr(0.4 + 0.6 * special.ndtri(rng.uniform(size=700)))
    cells = observed_cells(levels, PITHistogram.from_pit(u, n_cells=G), u)
    theta = np.concatenate([[0.2, -0.3], 0.5 * rng.normal(size=24)])
    lam = 0.4
    log_m, g2, h2 = _gauss_terms(theta[0], theta[1], grid.z)
    r = log_m + lam * grid.basis @ theta[2:]
    p = np.exp(r - special.logsumexp(r))
    jac = np.concatenate([g2, lam * grid.basis], axis=1)
    ll, grad, fisher, observed = cell_derivatives(p, jac, h2, cells)

    def f(th):
        return _independent_loglik(th, lam, idx, cells.counts.astype(float))

    assert ll == pytest.approx(f(theta), rel=1e-12)
    h = 1e-4
    eye = np.eye(theta.size) * h
    fd = np.array([(f(theta + e) - f(theta - e)) / (2 * h) for e in eye])
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-6)
    sub = SUB  # the (a, b) block, its cross terms and some tilt coefficients (time)
    hess = np.array([[(f(theta + e + d) - f(theta + e - d) - f(theta - e + d) + f(theta - e - d))
                      / (4 * h * h) for d in eye[sub]] for e in eye[sub]])
    np.testing.assert_allclose(observed[np.ix_(sub, sub)], -hess, rtol=2e-3, atol=2e-3)
    # Fisher information: n sum_j P_j s_j s_j^T with s_j = grad log P_j (finite differences)
    n = cells.counts.sum()

    def log_big(th):
        return np.log(np.add.reduceat(_probs(th[0], th[1], lam, th[2:], G), idx[:-1]))

    score = np.array([(log_big(theta + e) - log_big(theta - e)) / (2 * h) for e in eye])  # (D, m)
    big = np.exp(log_big(theta))
    np.testing.assert_allclose(fisher, n * (score * big) @ score.T, rtol=1e-5, atol=1e-5)


def test_every_cell_observed_reduces_to_the_fine_model(rng):
    u = special.ndtr(-0.2 + 0.8 * special.ndtri(rng.uniform(size=600)))
    hist = PITHistogram.from_pit(u, n_cells=G)
    cells = observed_cells(np.arange(1, G) / G, hist, u)
    fine = fit_pit_model(hist)
    coarse = fit_pit_model(hist, cells=cells)
    np.testing.assert_allclose(coarse.modes, fine.modes, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(coarse.log_evidence, fine.log_evidence, rtol=1e-10)
    assert coarse.log_marginal_calibrated == pytest.approx(fine.log_marginal_calibrated, rel=1e-12)


def test_newton_mode_with_cells(rng):
    """At the mode the finite-difference gradient of the independent log posterior vanishes
    and L L^T is its negative Hessian."""
    grid = pit_grid(G)
    idx = np.array([0, 4, 8, 20, 32, 36, G])
    counts = rng.multinomial(500, np.add.reduceat(_probs(0.3, -0.5, 0.0, np.zeros(24), G), idx[:-1]))
    hist = PITHistogram(np.bincount(idx[:-1], weights=counts, minlength=G).astype(np.int64))
    cells = observed_cells(idx[1:-1] / G, hist, None)
    np.testing.assert_array_equal(cells.counts, counts)
    prec = np.concatenate([[1 / 0.6**2, 1 / 0.67**2], np.ones(24)])
    lam = 0.3

    def logpost(th):
        return _independent_loglik(th, lam, idx, counts) - 0.5 * np.sum(prec * th**2)

    theta, chol, obj = _newton(hist.counts, grid, lam, prec, np.zeros(26), cells=cells)
    assert obj == pytest.approx(logpost(theta), rel=1e-12)
    h = 1e-4
    eye = np.eye(26) * h
    grad = np.array([(logpost(theta + e) - logpost(theta - e)) / (2 * h) for e in eye])
    assert np.max(np.abs(grad)) < 1e-5
    hess = np.array([[(logpost(theta + e + d) - logpost(theta + e - d) - logpost(theta - e + d)
                       + logpost(theta - e - d)) / (4 * h * h) for d in eye[SUB]] for e in eye[SUB]])
    np.testing.assert_allclose((chol @ chol.T)[np.ix_(SUB, SUB)], -hess, rtol=2e-3, atol=2e-3)


def test_calibrated_evidence_is_the_cell_widths():
    hist = PITHistogram(np.array([5, 0, 0, 7, 1, 1, 0, 0, 0, 2]))
    cells = observed_cells([0.3, 0.6], hist, None)
    post = fit_pit_model(hist, cells=cells)
    np.testing.assert_array_equal(cells.counts, [5, 9, 2])
    assert post.log_marginal_calibrated == pytest.approx(5 * np.log(0.3) + 9 * np.log(0.3) + 2 * np.log(0.4))


def test_curve_is_linear_between_the_levels(rng):
    hist = PITHistogram.from_pit(rng.uniform(size=300), n_cells=G)
    cells = observed_cells([0.25, 0.5], hist, None)
    p = np.exp(_log_probs(np.array([0.3, -0.2]), np.array([-0.4, 0.2]), np.array([0.5, 0.1]),
                          rng.normal(size=(2, 24)), G))
    levels = np.array([0.1, 0.25, 0.4, 0.5, 0.75])
    c = cell_curve(p, cells, levels)
    big = np.stack([p[:, :10].sum(1), p[:, 10:20].sum(1), p[:, 20:].sum(1)], axis=1)
    expect = np.stack([big[:, 0] * 0.4, big[:, 0], big[:, 0] + big[:, 1] * 0.6, big[:, :2].sum(1),
                       big[:, :2].sum(1) + big[:, 2] * 0.5], axis=1)
    np.testing.assert_allclose(c, expect, rtol=1e-12)


def test_bad_forecast_levels(rng):
    u = rng.uniform(size=200)
    with pytest.raises(ValueError, match="forecast_levels"):
        bayesian_calibration_error(u, forecast_levels=[0.5, 0.2], num_samples=50)
    with pytest.raises(ValueError, match="forecast_levels belong to model='smooth'|forecast_levels"):
        bayesian_calibration_error(u, model="dirichlet", forecast_levels=[0.5], num_samples=50)
    with pytest.raises(ValueError, match="more than the 10 cells"):
        bayesian_calibration_error(u, n_cells=10, levels=[0.5], forecast_levels=np.arange(1, 20) / 20,
                                   num_samples=50)
    with pytest.raises(ValueError, match="grid"):
        bayesian_calibration_error(PITHistogram.from_pit(u), forecast_levels=[1 / 3], num_samples=50)


def test_quantile_forecast_sd_half_at_n_1e5_is_centred_on_the_truth():
    """The case the fine model missed (0.765 coverage at 200 replications): a
    quantile forecast at 0.01..0.99 with predictive sd x 0.5, n = 10^5 from chunk
    histograms. The posterior mean lies within 4 posterior sd of the true cal score
    (false alarm 6e-5 for a calibrated normal posterior). The coverage itself is
    measured by benchmarks/regression_study.py."""
    levels = np.round(np.arange(1, 100) / 100, 2)
    truth = float(np.mean((levels - special.ndtr(0.5 * special.ndtri(levels))) ** 2))
    rng = np.random.default_rng(16)
    hist = PITHistogram(np.zeros(1000, dtype=np.int64))
    for _ in range(5):
        mu, sd, y = hetero(rng, 20_000)
        q = mu[:, None] + 0.5 * sd[:, None] * special.ndtri(levels)[None, :]
        hist = hist + PITHistogram.from_pit(pit(y, quantiles=q, levels=levels, randomize=True, seed=rng))
    r = bayesian_calibration_error(hist, num_samples=2000, seed=1, forecast_levels=levels)
    assert abs(r.mean - truth) < 4 * np.std(r.draws)


def test_a_finer_histogram_gives_the_fit_of_its_values(rng):
    """Levels k/101 of 100 draws are on a 10,100-cell histogram's grid; the model
    keeps its 1000-cell grid, so the histogram gives the fit of the PIT values."""
    u = special.ndtr(0.3 + 0.7 * special.ndtri(rng.uniform(size=3000)))
    levels = np.arange(1, 101) / 101
    from_values = bayesian_calibration_error(u, num_samples=300, seed=3, forecast_levels=levels)
    hist = PITHistogram.from_pit(u, n_cells=10_100)
    from_hist = bayesian_calibration_error(hist, num_samples=300, seed=3, forecast_levels=levels)
    assert from_hist.params.n_cells == 1000
    np.testing.assert_array_equal(from_hist.params.cells.counts, from_values.params.cells.counts)
    np.testing.assert_allclose(from_hist.params.modes, from_values.params.modes, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(from_hist.draws, from_values.draws, rtol=1e-10, atol=1e-14)


@pytest.mark.filterwarnings("ignore::scipy.integrate.IntegrationWarning")  # quad on integrands below 1e-30
def test_binomial_share_against_quadrature():
    """A_rk = integral over fine cell k of Binom(r; S, u) du / its width, against scipy's quad,
    on the ranks' fine grid: the edges k/1000 in [0.01, 0.99] and probit-spaced
    edges Phi(z), z = -8, -7.95, ..., below 0.01 and mirrored above 0.99, whatever grid
    counted the ranks (here a histogram of 2(S + 1) = 16 cells)."""
    from scipy import integrate, stats

    size = 7
    hist = PITHistogram(np.ones(2 * (size + 1), dtype=np.int64))
    cells = observed_cells(np.arange(1, size + 1) / (size + 1), hist, np.array([0.3, 0.6]), draws=size)
    e = cells.fine_edges
    np.testing.assert_array_equal(e, rank_grid_edges(1000))
    tail = special.ndtr(np.arange(-8.0, special.ndtri(0.01) - 0.025, 0.05))
    np.testing.assert_array_equal(e[1:tail.size + 1], tail)
    middle = e[tail.size + 1:tail.size + 982]
    np.testing.assert_allclose(middle, np.arange(10, 991) / 1000, rtol=0, atol=1e-16)
    np.testing.assert_allclose(1.0 - e[::-1][1:tail.size + 1], tail, rtol=1e-6, atol=2.3e-16)
    assert e[0] == 0.0 and e[-1] == 1.0 and np.all(np.diff(e) > 0)
    assert cells.share.shape == (size + 1, e.size - 1) == (size + 1, 982 + 2 * tail.size)
    np.testing.assert_allclose(cells.share.sum(axis=0), 1.0, rtol=0, atol=1e-13)
    for r in (0, 3, 7):
        for k in (0, 5, tail.size, tail.size + 3, tail.size + 490, e.size - 2 - tail.size, e.size - 2):
            lo, hi = e[k], e[k + 1]
            ref = integrate.quad(lambda u: stats.binom.pmf(r, size, u), lo, hi, epsabs=0, epsrel=1e-12)[0]
            # quad is unreliable for integrands below 1e-30
            assert cells.share[r, k] == pytest.approx(ref / (hi - lo), rel=1e-7, abs=1e-30)


def test_rank_grid_puts_the_ranks_of_a_narrow_forecast_where_they_are():
    """The model's rank probabilities at the exact latent PIT of a forecast with sd x 0.5
    (u = Phi(2 z)), S = 100, against an independent computation of P(R = r) (trapezoid rule
    over y of E[Binom(r; S, F(y))], the study's truth): within 0.2% at every rank on the
    ranks' grid; on 1000 equal cells rank 1 was 4.7% off (the reason for the grid)."""
    from scipy import stats

    size = 100
    x = np.linspace(-12, 12, 4001)
    truth = stats.binom.pmf(np.arange(size + 1)[:, None], size, special.ndtr(2 * x)[None, :]) @ (
        stats.norm.pdf(x) * (x[1] - x[0]))
    cells = observed_cells(np.arange(1, size + 1) / (size + 1), PITHistogram(np.ones(1000, dtype=np.int64)),
                           np.array([0.5]), draws=size)
    latent = np.diff(special.ndtr(0.5 * special.ndtri(cells.fine_edges)))  # P(u in fine cell k)
    model = cells.share @ latent
    assert np.max(np.abs(model / truth - 1)) < 2e-3
    assert abs(model[1] / truth[1] - 1) < 3e-3


def test_rank_grid_for_a_thousand_draws_and_more():
    """S = 1001 draws (more cells than the 1000 of the default PIT grid; refused before):
    the ranks' model at the exact latent PIT of a forecast with sd x 0.5 is within 0.5% of
    an independent P(R = r) (trapezoid rule in t = probit(u), step 0.005, where the
    binomial kernel's sd is at least 0.04) at every rank with P(R = r) > 1e-6; the
    benchmark over S = 100, 1000, 10^4 and sd x 0.5, 0.7, 1.5 found at most 1.2% (0.04
    binomial standard errors at n = 10^5)."""
    from scipy import stats

    size = 1001
    cells = observed_cells(np.arange(1, size + 1) / (size + 1), PITHistogram(np.ones(1000, dtype=np.int64)),
                           np.array([0.5]), draws=size)
    latent = np.diff(special.ndtr(0.5 * special.ndtri(cells.fine_edges)))
    model = cells.share @ latent
    t = np.linspace(-12, 12, 4801)
    w = stats.norm.pdf(t, scale=2.0) * (t[1] - t[0])   # t = probit(u) = y / 0.5
    truth = np.concatenate([stats.binom.pmf(np.arange(a, min(a + 200, size + 1))[:, None], size,
                                            special.ndtr(t)[None, :]) @ w for a in range(0, size + 1, 200)])
    keep = truth > 1e-6
    assert keep.sum() > 900
    assert np.max(np.abs(model[keep] / truth[keep] - 1)) < 5e-3


def test_ranks_from_a_coarse_histogram_equal_ranks_from_values(rng):
    """Ranks counted on a coarse histogram (the statistics path; 100 cells hold the levels
    k/25 of S = 24 draws and the 99 levels of the calibration error) give the model of the
    PIT values themselves: same counts, same fine grid, same draws. Before, the fine grid
    was the histogram's 100 cells, 1.3% off the truth at S = 100 (sd x 0.5)."""
    size, n = 24, 3000
    y = rng.normal(size=n)
    u = pit(y, samples=0.7 * rng.normal(size=(n, size)), randomize=True, seed=rng)
    hist = PITHistogram.from_pit(u, n_cells=100)
    a = bayesian_calibration_error(u, num_samples=300, seed=4, forecast_draws=size)
    b = bayesian_calibration_error(hist, num_samples=300, seed=4, forecast_draws=size)
    np.testing.assert_array_equal(a.params.cells.counts, b.params.cells.counts)
    np.testing.assert_array_equal(a.params.cells.fine_edges, b.params.cells.fine_edges)
    np.testing.assert_allclose(b.draws, a.draws, rtol=1e-10, atol=1e-14)


def test_forecast_draws(rng):
    """Calibrated evidence -n log(S + 1); both keywords refused together; the model
    follows the ranks of draws from a too-narrow forecast (sd x 0.5, S = 20): the
    posterior mean curve at the forecast's levels is within 4 posterior sd of the truth
    at every level (false alarm < 1e-3 over the 20 levels for calibrated posteriors)."""
    from scipy import stats

    size, n = 20, 4000
    y = rng.normal(size=n)
    draws = 0.5 * rng.normal(size=(n, size))
    u = pit(y, samples=draws, randomize=True, seed=rng)
    r = bayesian_calibration_error(u, num_samples=2000, seed=2, forecast_draws=size)
    assert r.params.log_marginal_calibrated == pytest.approx(-n * np.log(size + 1), rel=1e-12)
    x = np.linspace(-12, 12, 4001)
    prob = stats.binom.pmf(np.arange(size + 1)[:, None], size, special.ndtr(2 * x)[None, :]) @ (
        stats.norm.pdf(x) * (x[1] - x[0]))
    levels = np.arange(1, size + 1) / (size + 1)
    res = bayesian_calibration_error(u, levels, num_samples=2000, seed=2, forecast_draws=size)
    truth = np.cumsum(prob)[:-1]
    m, sd = res.curve.mean(axis=0), res.curve.std(axis=0)
    assert np.all(np.abs(m - truth) < 4 * sd)
    with pytest.raises(ValueError, match="not both"):
        bayesian_calibration_error(u, forecast_draws=size, forecast_levels=levels, num_samples=50)
    with pytest.raises(ValueError, match="forecast_draws"):
        bayesian_calibration_error(u, forecast_draws=0, num_samples=50)
