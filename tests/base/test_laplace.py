"""bece._base.laplace: draws of a Laplace mixture and their importance ratios,
against scipy's multivariate Normal densities."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from bece._base.laplace import laplace_mixture_draws


def test_draws_and_log_ratios_are_the_mixtures():
    rng = np.random.default_rng(0)
    p, k = 3, 2
    modes = rng.normal(size=(k, p))
    hess = [a @ a.T + p * np.eye(p) for a in rng.normal(size=(k, p, p))]
    chol = np.stack([np.linalg.cholesky(h) for h in hess])
    weights, mass = np.array([0.3, 0.7]), np.array([0.5, 0.5])
    scales = np.array([1.0, 0.5, 2.0])
    comp, theta, log_ratio = laplace_mixture_draws(modes, chol, weights, mass, scales, 4000,
                                                   np.random.default_rng(1))
    prior = stats.multivariate_normal(np.zeros(p), np.diag(scales**2))
    for j in range(k):
        sel = comp == j
        q = stats.multivariate_normal(modes[j], np.linalg.inv(hess[j]))
        expected = prior.logpdf(theta[sel]) - q.logpdf(theta[sel]) + np.log(mass[j] / weights[j])
        np.testing.assert_allclose(log_ratio[sel], expected, rtol=1e-10, atol=1e-10)
        # each component's draws have its mean and covariance (4 standard errors:
        # a false alarm below 1e-3 per coordinate)
        n = sel.sum()
        cov = np.linalg.inv(hess[j])
        assert np.all(np.abs(theta[sel].mean(axis=0) - modes[j]) < 4 * np.sqrt(np.diag(cov) / n))
    # the components in proportion to the weights (4 standard errors)
    assert abs((comp == 1).mean() - 0.7) < 4 * np.sqrt(0.21 / 4000)


def test_backtrack_takes_the_first_halved_step_that_rises_enough():
    """Hand-computed: maximise f(x) = -x**4 from x = 1 along the step -2.5
    (a Newton step of a different curvature), decrement 10. Armijo's rule
    f(1 - 2.5 t) >= f(1) + 0.25 * t * 10 fails at t = 1 (f = -5.0625) and
    t = 0.5 (f = -0.0039 < 0.25), holds at t = 0.25 (f(0.375) = -0.0198 >= -0.375)."""
    from bece._base.laplace import ARMIJO, backtrack, converged

    tried = []

    def along(t):
        tried.append(t)
        x = 1.0 - 2.5 * t
        return -(x**4), x

    t, value, x = backtrack(along, -1.0, 10.0)
    assert tried == [1.0, 0.5, 0.25] and t == 0.25 and x == 0.375
    assert value == -(0.375**4) and value >= -1.0 + ARMIJO * t * 10.0
    # a step that never rises stops below the smallest step, and is taken
    t, _, _ = backtrack(lambda t: (-1e9, None), 0.0, 1.0)
    assert t < 1e-8
    assert converged(1e-11) and not converged(1e-9)


def test_backtrack_takes_newtons_step_when_the_rise_is_below_rounding():
    """Hand-computed: at value -1e6 the rounding allowance is
    OBJECTIVE_ROUNDOFF * 1e6 = 1e-7. A decrement of 1e-9 predicts a rise of
    2.5e-10 under Armijo's rule, which no comparison can confirm: the full
    step is taken when it falls by less than 1e-7 (here 5e-8), and halved as
    usual when it falls by more (2e-7), or when the decrement is large
    enough to be seen (1e-5: 2.5e-6 > 1e-7). (The halving then stops where
    the fall rounds away against 1e6, below 1e-10.)"""
    from bece._base.laplace import OBJECTIVE_ROUNDOFF, backtrack

    assert OBJECTIVE_ROUNDOFF * 1e6 == pytest.approx(1e-7)
    t, value, kept = backtrack(lambda t: (-1e6 - 5e-8, t), -1e6, 1e-9)
    assert (t, value, kept) == (1.0, -1e6 - 5e-8, 1.0)
    tried = []

    def falls(drop):
        def along(t):
            tried.append(t)
            return -1e6 - drop * t, t
        return along

    t, _, _ = backtrack(falls(2e-7), -1e6, 1e-9)
    assert t < 1.0 and tried[:2] == [1.0, 0.5]
    tried.clear()
    t, _, _ = backtrack(falls(5e-8), -1e6, 1e-5)
    assert t < 1.0 and tried[:2] == [1.0, 0.5]


def test_the_objective_rounds_to_far_less_than_the_allowance():
    """OBJECTIVE_ROUNDOFF's premise: summed in another order, the smooth
    curve's log likelihood of 4 * 10^7 trials (about -1.8e7) changes by
    under a twentieth of the allowance, relative to its size."""
    from bece._base.laplace import OBJECTIVE_ROUNDOFF
    from bece._smooth.fit import _loglik_sigmoid

    rng = np.random.default_rng(5)
    f = rng.normal(0.0, 2.0, size=4000)
    t = rng.integers(5000, 15000, size=4000).astype(np.float64)
    c = np.floor(t * rng.uniform(size=4000))
    ll, _ = _loglik_sigmoid(f, c, t)
    worst = 0.0
    for _ in range(20):
        order = rng.permutation(4000)
        other, _ = _loglik_sigmoid(f[order], c[order], t[order])
        worst = max(worst, abs(other - ll) / abs(ll))
    assert 0.0 < worst < OBJECTIVE_ROUNDOFF / 20


def test_the_smooth_fit_of_forty_million_trials_converges():
    """Near the mode of a log likelihood of about -1.8e7 the predicted rises
    fall below its rounding error: before the line search allowed for it,
    every such fit ran out of iterations (a NewtonWarning, decrement
    1.7e-10 against 1e-10). The fit is now silent, and its mode has a
    decrement under NEWTON_TOL."""
    import dataclasses
    import warnings

    from bece._base.laplace import NewtonWarning
    from bece._smooth.atoms import make_atoms
    from bece._smooth.fit import fit_smooth
    from bece._stats.binning import make_binning

    rng = np.random.default_rng(3)
    p = rng.uniform(size=400)
    z = (rng.uniform(size=400) < p**2).astype(np.int64)
    atoms = make_atoms(z, p, make_binning(p, 10, "uniform"), None)
    many = dataclasses.replace(atoms, trials=atoms.trials * 100_000,
                               successes=atoms.successes * 100_000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NewtonWarning)
        fit_smooth(many)


def test_grid_fits_give_the_exact_evidence_of_a_gaussian_model():
    """y ~ N(theta, 1), theta ~ N(0, s_k^2): the Laplace evidence is exact,
    log N(y; 0, 1 + s_k^2), and the weights are proportional to it times the
    grid's prior mass (hand-derived; scipy's normal density as reference)."""
    from scipy.special import logsumexp

    from bece._base.laplace import grid_fits

    y, s = 1.3, np.array([0.5, 2.0, 4.0])
    mass = np.array([0.2, 0.5, 0.3])

    def fit_at(k, start):
        h = 1.0 + 1.0 / s[k] ** 2
        mode = y / h
        obj = stats.norm.logpdf(y, mode, 1.0) - 0.5 * mode**2 / s[k] ** 2
        return np.array([mode]), np.array([[np.sqrt(h)]]), obj

    # each point's own prior scale: one call per point, as the fits use them
    for k in range(3):
        _, _, log_ev, _, _ = grid_fits(lambda i, start: fit_at(k, start), mass[k:k + 1], s[k:k + 1])
        np.testing.assert_allclose(log_ev, stats.norm.logpdf(y, 0.0, np.sqrt(1 + s[k] ** 2)),
                                   rtol=1e-12)
    exact = stats.norm.logpdf(y, 0.0, np.sqrt(1 + s**2))
    from bece._base.laplace import mixture_weights

    weights, log_marg = mixture_weights(exact, mass)
    np.testing.assert_allclose(weights, np.exp(exact) * mass / np.sum(np.exp(exact) * mass),
                               rtol=1e-12)
    assert log_marg == pytest.approx(float(logsumexp(exact + np.log(mass))), rel=1e-14)


def test_a_newton_fit_that_runs_out_of_iterations_says_so():
    """The shared diagnostic: the smooth curve's fit stopped after one
    iteration warns with its decrement; run to convergence it is silent."""
    import warnings

    from bece._base.laplace import NewtonWarning
    from bece._smooth.atoms import make_atoms
    from bece._smooth.fit import fit_smooth
    from bece._stats.binning import make_binning

    rng = np.random.default_rng(3)
    p = rng.uniform(size=400)
    z = (rng.uniform(size=400) < p**2).astype(np.int64)
    atoms = make_atoms(z, p, make_binning(p, 10, "uniform"), None)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NewtonWarning)
        fit_smooth(atoms)  # converges: no warning
    import bece._smooth.fit as fit_module

    original = fit_module._newton.__defaults__
    try:
        fit_module._newton.__defaults__ = (1,)  # max_iter = 1
        with pytest.warns(NewtonWarning, match="stopped after 1 iterations with decrement"):
            fit_smooth(atoms)
    finally:
        fit_module._newton.__defaults__ = original


def test_draws_of_a_posterior_in_parts_have_the_joint_ratio():
    """mixture_draws with two parts (prior scales, then standard normal) and a
    Gaussian supplied by the posterior (here a dense one over both parts):
    the log ratio is scipy's log prior - log q + log(m_k / pi_k) of the
    joint parameter, and the normals are drawn part after part."""
    from bece._base.laplace import mixture_draws

    rng = np.random.default_rng(2)
    p1, p2, k = 2, 3, 2
    modes = rng.normal(size=(k, p1 + p2))
    hess = [a @ a.T + 5 * np.eye(p1 + p2) for a in rng.normal(size=(k, p1 + p2, p1 + p2))]
    chol = [np.linalg.cholesky(h) for h in hess]
    weights, mass = np.array([0.6, 0.4]), np.array([0.2, 0.8])
    scales = np.array([0.5, 3.0])

    def draw(j, eps):
        dev = np.linalg.solve(chol[j].T, np.concatenate(eps, axis=1).T).T
        theta = modes[j] + dev
        return [theta[:, :p1], theta[:, p1:]], float(np.sum(np.log(np.diag(chol[j]))))

    parts = [((p1,), 1.0 / scales**2), ((p2,), None)]
    comp, (t1, t2), log_ratio = mixture_draws(weights, mass, parts, draw, 3000, np.random.default_rng(3))
    theta = np.concatenate([t1, t2], axis=1)
    prior = stats.multivariate_normal(np.zeros(p1 + p2), np.diag(np.r_[scales**2, np.ones(p2)]))
    for j in range(k):
        sel = comp == j
        q = stats.multivariate_normal(modes[j], np.linalg.inv(hess[j]))
        expected = prior.logpdf(theta[sel]) - q.logpdf(theta[sel]) + np.log(mass[j] / weights[j])
        np.testing.assert_allclose(log_ratio[sel], expected, rtol=1e-10, atol=1e-10)
    # the random stream: components, then part 1's normals, then part 2's
    g = np.random.default_rng(3)
    assert np.array_equal(comp, g.choice(2, size=3000, p=weights))
    e1, e2 = g.standard_normal((3000, p1)), g.standard_normal((3000, p2))
    j0 = np.flatnonzero(comp == 0)
    np.testing.assert_allclose(t1[j0], draw(0, [e1[j0], e2[j0]])[0][0], rtol=1e-12)


def test_climb_and_flood_finds_every_point_near_each_mode():
    """A two-mode log density on a 30 x 20 grid: from a start in each basin
    the walk reaches both maxima, and every point within ``drop`` of the best
    is evaluated (a brute-force check over the whole grid); the walk starts
    each fit from a neighbour's."""
    from bece._base.laplace import climb_and_flood

    def log_joint(i, j):
        return max(-((i - 5) ** 2 + (j - 4) ** 2) / 4.0, -1.0 - ((i - 22) ** 2 + (j - 15) ** 2) / 2.0)

    starts_from = {}

    def evaluate(idx, start):
        starts_from[idx] = start
        return idx, log_joint(*idx)

    done = climb_and_flood(evaluate, (30, 20), [(0, 0), (29, 19)], drop=3.0)
    values = {idx: v for idx, (_, v) in done.items()}
    assert max(values, key=values.get) == (5, 4)
    assert (22, 15) in values
    best = log_joint(5, 4)
    near = {(i, j) for i in range(30) for j in range(20) if log_joint(i, j) >= best - 3.0}
    assert near <= set(values)
    assert len(values) < 30 * 20  # not the whole grid
    # every fit but the starts' begins at a point evaluated before it, nearby (a
    # neighbour's, or during a climb the point it just moved to: two steps)
    order = list(starts_from)
    for idx, start in starts_from.items():
        assert (start is None) == (idx in ((0, 0), (29, 19)))
        if start is not None:
            assert order.index(start) < order.index(idx)
            assert sum(abs(a - b) for a, b in zip(idx, start)) <= 2
