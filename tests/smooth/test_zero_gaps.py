"""bece._smooth.zero_gaps: a spike at zero gap for each ECE bin.

The prior density of a bin's gap at 0 is checked against a closed form (a
curve with only an intercept and a slope, one confidence per bin) and
against a brute-force Monte Carlo density that neither finds roots nor
Rao-Blackwellises; the Bayes factor and probability by hand; the draws by
what they must be. Stochastic comparisons use fixed seeds and tolerances of
4.5 Monte Carlo standard errors (false-alarm rate below 1e-5 per compared
number).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from bece._smooth.atoms import make_atoms
from bece._smooth.fit import fit_smooth
from bece._smooth.posterior import smooth_ece
from bece._smooth.zero_gaps import (
    DEFAULT_ZERO_GAP_PRIOR,
    ZERO_GAP_TAU,
    average_bins_with_zero_gap,
    prior_gap_density,
    rough_probability,
    zero_gap_probabilities,
)
from bece._stats import make_binning

from ..conftest import simulate_binary


def _atoms(y, p):
    return make_atoms(y, p, make_binning(p, 15), None)


def test_prior_density_closed_form_for_a_linear_curve():
    # two confidences only: no spline (fewer than 3 distinct logits), no bin
    # deviations; the gap of a bin holding one confidence p is
    # sigma(x + a + b x) - p with a ~ N(0, 1), b ~ N(0, 0.5^2), so its
    # density at 0 is N(0; 0, 1 + 0.25 x^2) / (p (1 - p))
    p = np.repeat([0.3, 0.8], 50)
    y = (np.arange(100) % 3 == 0).astype(np.int64)
    atoms = _atoms(y, p)
    post = fit_smooth(atoms, bin_scale=None)
    assert post.basis.n_spline == 0 and post.basis.n_bins == 0
    n_draws = 20_000
    dens = prior_gap_density(atoms, post, np.random.default_rng(0), num_draws=n_draws)
    for q in (0.3, 0.8):
        m = min(int(q * 15), 14)
        x = math.log(q / (1 - q))
        want = math.exp(0) / math.sqrt(2 * math.pi * (1 + 0.25 * x**2)) / (q * (1 - q))
        # each term is N(-b x; 0, 1) / (q (1 - q)) <= its value at 0: sd <= that / 2
        se = 1 / math.sqrt(2 * math.pi) / (q * (1 - q)) / 2 / math.sqrt(n_draws)
        assert abs(dens[m] - want) < 4.5 * se
    empty = np.setdiff1d(np.arange(15), [4, 12])
    assert np.all(np.isnan(dens[empty]))


def test_prior_density_agrees_with_brute_force_prior_simulation():
    y, p = simulate_binary(150, np.random.default_rng(1), power=1.5)
    atoms = _atoms(y, p)
    post = fit_smooth(atoms)
    assert post.basis.n_spline > 0 and post.basis.n_bins == 15
    # brute force: whole prior curves (intercept included), the fraction of
    # bin gaps within h of 0
    rng = np.random.default_rng(2)
    n_prior, h = 100_000, 0.005
    count = np.zeros(15)
    for _ in range(n_prior // 20_000):
        comp = rng.choice(post.lambdas.size, size=20_000, p=post.prior_mass)
        theta = rng.standard_normal((20_000, post.prior_scales.size)) * post.prior_scales
        beta = theta * post.column_scale(post.lambdas[comp], post.taus[comp])
        s = 1 / (1 + np.exp(-post.basis.logits(atoms.x, atoms.bin, beta)))
        gap = np.stack([(s[:, atoms.bin == m] - atoms.p[atoms.bin == m]).mean(axis=1)
                        for m in range(15)], axis=1)
        count += np.sum(np.abs(gap) < h, axis=0)
    brute = count / (n_prior * 2 * h)
    se_brute = np.sqrt(count) / (n_prior * 2 * h)
    runs = np.array([prior_gap_density(atoms, post, np.random.default_rng(10 + i), num_draws=2000)
                     for i in range(8)])
    fast, se_fast = runs.mean(axis=0), runs.std(axis=0, ddof=1) / np.sqrt(len(runs))
    used = np.unique(atoms.bin)
    assert used.size >= 12
    # the window's own bias (curvature of the density over +-h) is below 1e-3 relative here
    tol = 4.5 * np.sqrt(se_brute[used] ** 2 + se_fast[used] ** 2) + 2e-3 * brute[used]
    np.testing.assert_array_less(np.abs(fast[used] - brute[used]), tol)


def test_zero_gap_probability_by_hand():
    # gap draws with mean 0 / 0.02 and sd 0.01 exactly
    gap = np.array([[-0.01, 0.01], [0.01, 0.03]])
    dens = np.array([2.0, 2.0])
    pi = zero_gap_probabilities(gap, dens, 0.05)
    for mu, got in ((0.0, pi[0]), (0.02, pi[1])):
        bf = math.exp(-0.5 * (mu / 0.01) ** 2) / (math.sqrt(2 * math.pi) * 0.01) / 2.0
        assert got == pytest.approx(0.05 * bf / (0.95 + 0.05 * bf), rel=1e-12)
    assert pi[0] == pytest.approx(0.5122, abs=1e-4)  # 0.05 * 19.947 / (0.95 + 0.997)
    assert np.all(zero_gap_probabilities(gap, np.array([np.nan, 2.0]), 0.05)[:1] == 0)
    np.testing.assert_array_equal(zero_gap_probabilities(gap, dens, 0.0), [0.0, 0.0])
    # a prior density of 0 (no curve reaches a zero gap): H_0m is impossible, not certain
    assert zero_gap_probabilities(gap, np.array([0.0, 2.0]), 0.05)[0] == 0


@pytest.mark.parametrize("y, p", [([0], [1.0]), ([1], [0.0]), ([0, 1], [1.0, 0.0])])
def test_maximally_wrong_certain_predictions_are_not_calibrated_bins(y, p):
    """A prediction of exactly 0 or 1 that is wrong: its bin's mean confidence
    is 0 or 1, which no smooth curve reaches, so no draw zeroes its gap. The
    ECE posterior keeps the curve's uncertainty (the plug-in is 1): its mean
    is above 0.5 and its 90% interval wide, not [0, 0]."""
    import bece

    r = bece.bayesian_ece(y, p, seed=0)
    assert r.params.prob_zero_gap.max() == 0
    lo, hi = r.interval(0.9)
    assert r.mean > 0.5 and hi > 0.95 and hi - lo > 0.5


def _staircase(n, rng):
    p = rng.uniform(size=n)
    truth = (np.minimum(np.floor(p * 5.0), 4.0) + 0.5) / 5.0
    return (rng.uniform(size=n) < truth).astype(np.int64), p


def test_zeroed_bins_are_exactly_calibrated_at_their_probability():
    y, p = _staircase(3000, np.random.default_rng(3))
    alone = smooth_ece(y, p, num_samples=2000, seed=4, prior_odds=0, zero_gap_prior=0)
    assert alone.params.zero_gap_prior == 0 and np.all(alone.params.prob_zero_gap == 0)
    atoms = _atoms(y, p)
    out = average_bins_with_zero_gap(alone, atoms, 0.2, np.random.default_rng(5), tau_gate=None)
    pi = out.params.prob_zero_gap
    assert out.params.zero_gap_prior == 0.2 and pi.shape == (15,)
    zero = out.accuracy == out.confidence
    moved = out.accuracy != alone.accuracy
    np.testing.assert_array_equal(moved, zero & (alone.accuracy != alone.confidence))
    se = np.sqrt(pi * (1 - pi) / zero.shape[0])
    np.testing.assert_array_less(np.abs(zero.mean(axis=0) - pi), 4.5 * se + 1e-12)
    # each draw's ECE is the sum over the bins left of weight x |gap|
    ece = np.sum(np.where(zero, 0.0, alone.weight * np.abs(alone.accuracy - alone.confidence)), axis=1)
    np.testing.assert_allclose(out.draws, ece, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(out.draws[~zero.any(axis=1)], alone.draws[~zero.any(axis=1)])
    assert np.all(out.draws <= alone.draws + 1e-15)
    # bins whose gap is 6 sd from 0 are never zeroed; those the data cannot
    # tell from 0 are (the staircase's middle bins, true gap 0)
    gap = alone.accuracy - alone.confidence
    z = np.abs(gap.mean(axis=0)) / gap.std(axis=0)
    assert np.all(pi[z > 6] < 1e-6)
    assert np.any(pi[z < 1] > 0.3)


def test_through_smooth_ece_default_and_checks():
    y, p = simulate_binary(300, np.random.default_rng(6), power=1.0)
    default = smooth_ece(y, p, num_samples=500, seed=7)
    assert DEFAULT_ZERO_GAP_PRIOR == 0.1 and default.params.zero_gap_prior == 0.1
    off = smooth_ece(y, p, num_samples=500, seed=7, zero_gap_prior=0)
    assert off.params.zero_gap_prior == 0
    np.testing.assert_array_equal(off.params.prob_zero_gap, np.zeros(15))
    # the default is the gated spike: at most omega x P(tau > tau_0) a priori per bin
    gate = rough_probability(default.params)
    assert 0 < gate < 1 and np.all(default.params.prob_zero_gap < 1)
    r = smooth_ece(y, p, num_samples=500, seed=7, zero_gap_prior=0.05)
    pi = r.params.prob_zero_gap
    assert r.params.zero_gap_prior == 0.05 and np.all((pi >= 0) & (pi < 1)) and pi.max() > 0
    s = smooth_ece(y, p, num_samples=500, seed=7, zero_gap_prior=0.05)
    np.testing.assert_array_equal(r.draws, s.draws)
    # the statistics route runs the same steps
    from bece import CalibrationStats
    from bece.smooth import fine_binning, smooth_posterior_ece
    stats = CalibrationStats.from_arrays(y, p, binning=fine_binning(15))
    t = smooth_posterior_ece(stats, n_bins=15, num_samples=500, seed=7, zero_gap_prior=0.05)
    g = smooth_ece(y, p, n_bins=15, grid=128, num_samples=500, seed=7, zero_gap_prior=0.05)
    np.testing.assert_allclose(t.draws, g.draws, rtol=1e-9, atol=0)
    for bad in (-0.1, 1.0, float("nan"), "0.1", True):
        with pytest.raises(ValueError, match="zero_gap_prior"):
            smooth_ece(y, p, num_samples=100, zero_gap_prior=bad)
        with pytest.raises(ValueError, match="zero_gap_prior"):
            smooth_posterior_ece(stats, n_bins=15, num_samples=100, zero_gap_prior=bad)


def test_the_gate_scales_the_prior_probability_by_the_rough_curves_posterior_mass():
    """The gated spike's prior is omega x P(tau > tau_0 | data): the same probabilities
    and draws as the ungated spike at that prior (same random numbers). On the staircase
    at n = 3,000 the probability is most of the mass (its steps are rough at the bin
    scale); on a smooth curve at n = 10^4 near 0, so the spike is off there."""
    from dataclasses import replace

    y, p = _staircase(3000, np.random.default_rng(3))
    alone = smooth_ece(y, p, num_samples=1000, seed=4, prior_odds=0, zero_gap_prior=0)
    post = alone.params
    by_hand = rough_probability(post)
    assert by_hand > 0.5
    atoms = _atoms(y, p)
    gated = average_bins_with_zero_gap(alone, atoms, 0.2, np.random.default_rng(5))
    plain = average_bins_with_zero_gap(alone, atoms, 0.2 * by_hand, np.random.default_rng(5),
                                       tau_gate=None)
    np.testing.assert_allclose(gated.params.prob_zero_gap, plain.params.prob_zero_gap, rtol=1e-12)
    np.testing.assert_array_equal(gated.draws, plain.draws)
    assert gated.params.zero_gap_prior == 0.2
    # no posterior mass at the grid's points above 0.1: none above tau_0, no spike at all
    w = np.where(post.taus > 0.1, 0.0, post.weights)
    low = replace(post, weights=w / w.sum())
    assert rough_probability(low) == 0.0
    off = average_bins_with_zero_gap(replace(alone, params=low), atoms, 0.2, np.random.default_rng(5))
    np.testing.assert_array_equal(off.params.prob_zero_gap, np.zeros(15))
    np.testing.assert_array_equal(off.draws, alone.draws)
    ys, ps = simulate_binary(10_000, np.random.default_rng(8), power=1.25)
    smooth = smooth_ece(ys, ps, num_samples=200, seed=9, prior_odds=0, zero_gap_prior=0)
    assert rough_probability(smooth.params) < 0.01


def _tau_grid_posterior(likelihood, scale=0.25, size=25, low=1e-4, high=40.0):
    """A smooth posterior whose (lambda, tau) grid has the marginal likelihood
    ``likelihood(tau)`` at its tau points: 2 lambda points, Exponential(mean
    ``scale``) mass between geometric mid-points, as the fit builds it."""
    from dataclasses import replace

    y, p = simulate_binary(300, np.random.default_rng(6), power=1.0)
    post = smooth_ece(y, p, num_samples=100, seed=1, zero_gap_prior=0).params
    taus = scale * np.geomspace(low, high, size)
    mids = np.sqrt(taus[:-1] * taus[1:])
    mass = np.diff(np.concatenate([[0.0], -np.expm1(-mids / scale), [1.0]]))
    lam_mass = np.array([0.3, 0.7])
    prior = np.outer(lam_mass, mass).ravel()
    weights = prior * np.tile(likelihood(taus), 2)
    return replace(post, taus=np.tile(taus, 2), prior_mass=prior, weights=weights / weights.sum(),
                   bin_scale=scale)


def test_rough_probability_integrates_the_tau_likelihood_against_its_exponential_prior():
    """P(tau > tau_0 | data) from the grid: the likelihood interpolated between the
    grid's points, times the Exponential prior. By hand: a flat likelihood gives the
    prior's survival exp(-tau_0 / s); a likelihood tau^2 gives the Gamma(3, s)
    posterior's survival (scipy's regularised incomplete gamma), up to the
    interpolation's error (the grid's ratio is 1.71, a chord of log tau^2 in log tau
    is exact) and the tails beyond the grid (Gamma(3) mass above 40 s is 1e-14)."""
    from scipy import special

    s = 0.25
    flat = _tau_grid_posterior(lambda t: np.ones_like(t), scale=s)
    for t0 in (0.01, 0.3, 0.5, 1.0):
        assert rough_probability(flat, t0) == pytest.approx(np.exp(-t0 / s), rel=1e-8)
    square = _tau_grid_posterior(lambda t: t**2, scale=s)
    for t0 in (0.05, 0.3, 0.6):
        assert rough_probability(square, t0) == pytest.approx(special.gammaincc(3, t0 / s), rel=1e-6)
    # counting whole cells puts the cell around tau_0 on one side: a thousand times further off
    exact = special.gammaincc(3, 0.3 / s)
    cells = float(square.weights[square.taus > 0.3].sum())
    assert abs(cells - exact) > 1000 * abs(rough_probability(square, 0.3) - exact)


def test_rough_probability_against_adaptive_quadrature_on_a_fitted_posterior():
    """On the staircase's fitted grid: the same interpolated density integrated by
    scipy's adaptive quadrature (an independent rule) gives the same probability."""
    from scipy import integrate

    y, p = _staircase(3000, np.random.default_rng(3))
    post = smooth_ece(y, p, num_samples=200, seed=4, prior_odds=0, zero_gap_prior=0).params
    values, index = np.unique(post.taus, return_inverse=True)
    lik = np.bincount(index, weights=post.weights) / np.bincount(index, weights=post.prior_mass)
    s = post.bin_scale

    def density(t):
        inside = np.interp(np.log(t), np.log(values), np.log(lik))
        return np.exp(inside - t / s) / s

    edges = np.concatenate([[0.0], values, [np.inf]])

    def above(t0):
        total = 0.0
        for a, b in zip(edges[:-1], edges[1:]):
            a = max(a, t0)
            if a < b:
                total += integrate.quad(density, a, b, epsabs=0, epsrel=1e-11, limit=200)[0]
        return total

    for t0 in (ZERO_GAP_TAU, 0.1, 1.0):
        assert rough_probability(post, t0) == pytest.approx(above(t0) / above(0.0), rel=1e-7, abs=1e-12)
