"""bece._smooth.grid_error: the bound on the fine grid's ECE error, and the
fine cells that make it small where confidences pile up at 0 and 1.

Deterministic (fixed seeds, no Monte Carlo tolerance): the curve's
derivatives against finite differences; the bound against a hand computation
(scalar formulas written out below); each cell's term against a brute-force
maximum of |r(p) - r(p_mean)| over a lattice of the cell (it must not be
smaller, and is at most 5% larger in total); the bound against the exact ECE
of the same curve draw under the same bootstrap weights, and under the worst
weights inside the cells, on confidences piled at 0 and 1 (exact 0s and 1s,
values within 1e-6 of the ends); the fine cells themselves (logit widths,
clip points, the same sub-cells as 15 x 128 uniform bins away from the ends,
the same draws there as from statistics in those uniform bins).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from scipy import special

from bece._smooth.atoms import END_LOGIT_WIDTH, Atoms, atoms_from_stats, cell_knots, make_atoms
from bece._smooth.basis import SmoothBasis, logit_confidence, natural_cubic_basis, natural_cubic_derivatives
from bece._smooth.draws import ece_draws
from bece._smooth.fit import fit_smooth
from bece._smooth.grid_error import CellCurve, draw_bounds
from bece._stats import CalibrationStats, make_binning
from bece.smooth import fine_binning, smooth_posterior_ece

from ..conftest import _data

N_PILED = 20_000


def _piled(n, rng):
    """Confidences piled at 0 and 1: Beta(0.3, 0.3), with exact 0s and 1s and
    values within 1e-6 of 1 (where the curve's logit is clipped); outcomes
    from an over-confident curve, so the curve keeps moving near the ends."""
    p = rng.beta(0.3, 0.3, n)
    p[:300] = 1.0
    p[300:500] = 0.0
    p[500:700] = 1.0 - 10.0 ** rng.uniform(-9, -5, 200)
    z = (rng.uniform(size=n) < special.expit(0.6 * logit_confidence(p) + 0.3)).astype(np.int64)
    return z, p


@pytest.fixture(scope="module")
def piled():
    z, p = _piled(N_PILED, np.random.default_rng(5))
    atoms = make_atoms(z, p, make_binning(None, 15), 128)
    post = fit_smooth(atoms)
    beta = post.sample(100, np.random.default_rng(6))[0]
    return z, p, atoms, post, beta


def _cell_of(atoms, p):
    """Atom (non-empty cell) of each prediction."""
    cell = np.searchsorted(atoms.lower, p, side="right") - 1
    assert np.all((atoms.lower[cell] <= p) & (p <= atoms.upper[cell]))
    return cell


# ------------------------------------------------------------ derivatives
def test_curve_derivatives_match_finite_differences(piled):
    *_, post, beta = piled
    basis = post.basis
    knots = basis.knots
    # below the first knot, between knots, beyond the last (the tangent continuation)
    x = np.concatenate([np.linspace(knots[0] - 3, knots[-1] + 3, 301), knots[1:-1] + 1e-3])
    eps = 1e-4
    n0, n1 = natural_cubic_basis(x - eps, knots), natural_cubic_basis(x + eps, knots)
    d1, d2 = natural_cubic_derivatives(x, knots)
    np.testing.assert_allclose(d1, (n1 - n0) / (2 * eps), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(d2, (n1 - 2 * natural_cubic_basis(x, knots) + n0) / eps**2,
                               rtol=1e-4, atol=1e-3)
    bins = np.zeros(x.size, dtype=np.int64)
    f = lambda t: basis.logits(t, bins, beta[:5])  # noqa: E731
    f1, f2 = basis.derivatives(x, beta[:5])
    np.testing.assert_allclose(f1, (f(x + eps) - f(x - eps)) / (2 * eps), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(f2, (f(x + eps) - 2 * f(x) + f(x - eps)) / eps**2, rtol=1e-4, atol=1e-3)
    linear = SmoothBasis(np.empty(0), np.empty((0, 0)), 0)
    g1, g2 = linear.derivatives(x, np.array([[0.3, -0.2]]))
    np.testing.assert_array_equal(g1, np.full((1, x.size), 0.8))
    np.testing.assert_array_equal(g2, np.zeros((1, x.size)))


# ------------------------------------------------------------- hand case
def _sigma(t):
    return 1.0 / (1.0 + math.exp(-t))


def _dsigma(t):
    return _sigma(t) * (1.0 - _sigma(t))


def test_bound_by_hand():
    """Four cells in 2 ECE bins, curve f(x) = x + 0.5 - 0.2 x (no spline):
    f' = 0.8, f'' = 0. A kinked cell [0, 0.001) (contains the clip point
    1e-6), two regular cells [0.25, 0.5) and [0.5, 0.75), a flat cell
    [1 - 1e-6, 1]; weights 0.1, 0.4, 0.3, 0.2."""
    lower = np.array([0.0, 0.25, 0.5, 1 - 1e-6])
    upper = np.array([0.001, 0.5, 0.75, 1.0])
    pm = np.array([0.0004, 0.4, 0.6, 1 - 4e-7])
    atoms = Atoms(pm, logit_confidence(pm), np.array([3, 5, 4, 2]), np.array([1, 2, 3, 2]),
                  np.array([0, 0, 1, 1]), lower, upper, make_binning(None, 2), 2)
    basis = SmoothBasis(np.empty(0), np.empty((0, 0)), 0)
    beta = np.array([[0.5, -0.2]])
    f = lambda x: 0.8 * x + 0.5  # noqa: E731
    w = np.array([0.1, 0.4, 0.3, 0.2])

    # kinked cell: d + sigma'(f_min) F1 dx, f monotone so f_min = |f(x_u)|
    xl, xu = math.log(1e-6 / (1 - 1e-6)), math.log(0.001 / 0.999)
    f_min = (abs(f(xl)) + abs(f(xu)) - 0.8 * (xu - xl)) / 2
    kinked = 0.0006 + _dsigma(f_min) * 0.8 * (xu - xl)
    assert f_min == pytest.approx(abs(f(xu)), rel=1e-12)

    def regular(lo, up, mean):
        xl, xu = math.log(lo / (1 - lo)), math.log(up / (1 - up))
        f_min = max(0.0, (abs(f(xl)) + abs(f(xu)) - 0.8 * (xu - xl)) / 2)
        x1 = 1 / min(lo * (1 - lo), up * (1 - up))
        x2 = max(abs(2 * lo - 1) / (lo * (1 - lo)) ** 2, abs(2 * up - 1) / (up * (1 - up)) ** 2)
        k = _dsigma(f_min) * (0.8**2 * x1**2 + 0.8 * x2)
        slope = _dsigma(f(math.log(mean / (1 - mean)))) * 0.8 / (mean * (1 - mean))
        d = max(mean - lo, up - mean)
        return abs(slope - 1) * d + 0.5 * k * d**2

    # [0.25, 0.5): f_min = 0 (f crosses 0 inside), sigma'_max = 1/4, X1 = 16/3, X2 = 128/9
    r1 = regular(0.25, 0.5, 0.4)
    assert r1 == pytest.approx(0.17306 * 0.15 + 0.5 * 0.25 * (0.64 * 256 / 9 + 0.8 * 128 / 9) * 0.0225,
                               rel=1e-4)
    r2 = regular(0.5, 0.75, 0.6)
    flat = 6e-7  # s is constant on the cell: |r(p) - r(mean)| = |p - mean| <= d
    expected = 0.1 * kinked + 0.4 * r1 + 0.3 * r2 + 0.2 * flat
    cells = CellCurve(atoms, basis)
    assert cells.kinked.tolist() == [True, False, False, False]
    assert cells.regular.tolist() == [False, True, True, False]
    assert cells.flat.tolist() == [False, False, False, True]
    got = draw_bounds(cells, basis, beta, basis.logits(atoms.x, atoms.bin, beta), w[None])
    assert got[0] == pytest.approx(expected, rel=1e-12)


# ------------------------------------------------ each cell, brute force
def test_each_cell_term_bounds_the_curve_over_the_cell(piled):
    """Per cell, the term must be at least max |r(p) - r(p_mean)| over the
    cell (here over a lattice of 201 points and the mean), r(p) = s(p) - p;
    weighted by the cells' counts it is within 5% of it (measured 1.2-1.3%
    on these curves: the second-order term and the sup of the slope)."""
    _, _, every, post, beta = piled
    # every third cell (their terms do not depend on the others)
    pick = np.arange(0, every.p.size, 3)
    atoms = replace(every, **{name: getattr(every, name)[pick]
                              for name in ("p", "x", "trials", "successes", "bin", "lower", "upper")})
    basis, J = post.basis, atoms.p.size
    cells = CellCurve(atoms, basis)
    assert cells.flat.sum() >= 1 and cells.regular.sum() > 500
    lattice = atoms.lower[:, None] + (atoms.upper - atoms.lower)[:, None] * np.linspace(0, 1, 201)
    share = atoms.trials / atoms.trials.sum()
    for k in range(3):
        b = beta[k:k + 1]
        per_cell = draw_bounds(cells, basis, np.repeat(b, J, axis=0),
                               np.repeat(basis.logits(atoms.x, atoms.bin, b), J, axis=0), np.eye(J))

        def r(q):
            s = special.expit(basis.logits(logit_confidence(q.ravel()), np.repeat(atoms.bin, q.shape[1]), b))
            return s.reshape(q.shape) - q

        worst = np.abs(r(lattice) - r(atoms.p[:, None])).max(axis=1)
        assert np.all(worst <= per_cell + 1e-15)  # float rounding of s(p) - p
        assert np.sum(share * per_cell) <= 1.05 * np.sum(share * worst)


# --------------------------------------------------------- draw by draw
def test_bound_holds_draw_by_draw_where_confidences_pile_up(piled):
    """For 100 posterior curve draws and exact Bayesian-bootstrap weights w_i
    (cell totals W_g their sums: the grid's weights), the exact ECE (one atom
    per prediction) and the grid ECE differ by at most the bound; also under
    the worst weights inside the cells (each cell's weight on the prediction
    that moves its bin's gap furthest in the direction of the gap's sign),
    which reach at least 1/8 of the bound (measured 0.19-0.37: sparse cells'
    predictions do not reach the cell ends); random weights reach ~2%. The
    bound is what ece_draws reports for those weights (drawing one Gamma
    variate per atom in every bin)."""
    z, p, atoms, post, beta = piled
    basis = post.basis
    bins = make_binning(None, 15)
    cell = _cell_of(atoms, p)
    b_exact = bins.index(p)
    assert np.array_equal(atoms.bin[cell], b_exact)
    s_exact = special.expit(basis.logits(logit_confidence(p), b_exact, beta))
    f_grid = basis.logits(atoms.x, atoms.bin, beta)
    s_grid = special.expit(f_grid)
    w = np.random.default_rng(7).standard_exponential((beta.shape[0], p.size))
    W = np.stack([np.bincount(cell, wk, minlength=atoms.p.size) for wk in w])
    bound = draw_bounds(CellCurve(atoms, basis), basis, beta, f_grid, W / W.sum(axis=1, keepdims=True))

    class _Fixed:
        def standard_gamma(self, shape, size):
            return W[:size[0]].copy()

    # one Gamma variate per atom in every bin, as the bound's weights here
    # (equal to the order of the float64 sums that normalise the weights)
    reported = ece_draws(atoms, basis, beta, _Fixed(), normal_bin_min=atoms.n + 1)[4]
    np.testing.assert_allclose(reported, bound, rtol=1e-12, atol=0)
    random, worst = [], []
    for k in range(beta.shape[0]):
        wk = w[k] / w[k].sum()
        Wk = W[k] / W[k].sum()
        exact = np.abs(np.bincount(b_exact, wk * (s_exact[k] - p), minlength=15)).sum()
        gap = np.bincount(atoms.bin, Wk * (s_grid[k] - atoms.p), minlength=15)
        assert abs(np.abs(gap).sum() - exact) <= bound[k]
        random.append(abs(np.abs(gap).sum() - exact) / bound[k])
        move = np.sign(gap)[b_exact] * ((s_exact[k] - p) - (s_grid[k] - atoms.p)[cell])
        best = np.full(atoms.p.size, -np.inf)
        np.maximum.at(best, cell, move)
        adversarial = np.abs(gap + np.bincount(atoms.bin, Wk * best, minlength=15)).sum() - np.abs(gap).sum()
        assert adversarial <= bound[k]
        worst.append(adversarial / bound[k])
    assert min(worst) >= 1 / 8 and max(random) < 0.1


def test_bound_is_small_where_confidences_pile_up(piled):
    """The former bound sum_g W_g (h_g + |s(u_g) - s(l_g)|) was 9e-3 on
    Beta(0.3, 0.3) confidences at n = 1000 (benchmarks/grid_error.py), most
    of it from the cells next to 0 and 1; the new one stays near the middle
    cells' |s' - 1| h / 2 (here 1.4e-4 for all 100 draws)."""
    *_, atoms, post, beta = piled
    f = post.basis.logits(atoms.x, atoms.bin, beta)
    w = np.broadcast_to(atoms.trials / atoms.trials.sum(), f.shape)
    bound = draw_bounds(CellCurve(atoms, post.basis), post.basis, beta, f, w)
    assert bound.max() < 3e-4


# ------------------------------------------------------------ fine cells
def test_fine_cells_by_hand():
    """One ECE bin, one sub-cell: [0, 1e-6], then 885 cells of equal clipped
    logit width 2 logit(1 - 1e-6) / 885 = 0.03122 (ceil(27.631 * 32) = 885),
    then [1 - 1e-6, 1]."""
    e = fine_binning(1, grid=1).edges
    width = 2 * math.log((1 - 1e-6) / 1e-6) / 885
    assert e.size == 888 and e[0] == 0.0 and e[1] == 1e-6 and e[-2] == 1 - 1e-6 and e[-1] == 1.0
    np.testing.assert_allclose(np.diff(logit_confidence(e[1:-1])), width, rtol=1e-4)
    assert width < END_LOGIT_WIDTH


def test_fine_cells_refine_the_ece_bins_and_are_narrow_in_logit():
    for fine, coarse in ((fine_binning(15), make_binning(None, 15)),
                         (fine_binning(7, grid=100), make_binning(None, 7)),
                         (fine_binning(binning=[0.0, 0.5, 0.9, 1.0], grid=2),
                          make_binning(None, binning=[0.0, 0.5, 0.9, 1.0]))):
        e = fine.edges
        assert np.all(np.diff(e) > 0) and e[0] == 0.0 and e[-1] == 1.0
        assert np.isin([1e-6, 1 - 1e-6], e).all()
        assert np.diff(logit_confidence(e)).max() <= END_LOGIT_WIDTH * (1 + 1e-6)
        grid = {15: 128, 7: 100, 3: 2}[coarse.n_bins]
        assert np.diff(e).max() <= np.diff(coarse.edges).max() / grid * (1 + 1e-12)
        # every confidence lands in a cell of its own ECE bin, edges and their neighbours included
        rng = np.random.default_rng(0)
        q = np.concatenate([rng.uniform(size=10_000), rng.beta(0.05, 0.05, 10_000), coarse.edges,
                            np.nextafter(coarse.edges, 0), np.nextafter(coarse.edges, 1)])
        q = np.clip(q, 0.0, 1.0)
        z = np.zeros(q.size, dtype=np.int64)
        atoms = atoms_from_stats(CalibrationStats.from_arrays(z, q, binning=fine), n_bins=coarse.n_bins,
                                 binning=coarse)
        cell = _cell_of(atoms, q)
        np.testing.assert_array_equal(atoms.bin[cell], coarse.index(q))


def test_nothing_changes_away_from_the_ends():
    """For confidences in [0.02, 0.98] the fine cells are the 15 x 128
    uniform sub-cells (also for the floats on and next to their edges), and
    the posterior equals the one from statistics in 1920 uniform bins, which
    atoms_from_stats still takes, draw for draw (to float rounding)."""
    fine, uniform = fine_binning(15), make_binning(None, 1920)
    j = np.arange(39, 1882)  # edges from 0.02 to 0.98
    q = np.concatenate([np.random.default_rng(1).uniform(0.02, 0.98, 100_000),
                        j / 1920, np.nextafter(j / 1920, 0), np.nextafter(j / 1920, 1)])
    shift = fine.index(q) - uniform.index(q)
    assert np.unique(shift).size == 1
    rng = np.random.default_rng(2)
    p = rng.uniform(0.02, 0.98, 10_000)
    z = (rng.uniform(size=p.size) < p**1.5).astype(np.int64)
    new = smooth_posterior_ece(CalibrationStats.from_arrays(z, p, binning=fine), num_samples=200, seed=4)
    old = smooth_posterior_ece(CalibrationStats.from_arrays(z, p, binning=uniform), num_samples=200, seed=4)
    # the same cells; their edges are recorded as the smallest float of each
    # cell here and as j / 1920 there (an ulp apart at most), which moves the
    # knots and so the draws by float rounding only
    np.testing.assert_allclose(new.draws, old.draws, rtol=1e-12, atol=0)
    assert new.params.grid_error == pytest.approx(old.params.grid_error, rel=1e-9)


# ----------------------------------------------------------------- knots
def test_cell_knots_are_quantiles_of_the_cells_spread_sample():
    """Against np.quantile of the explicit sample: t_g logits spread evenly
    over each cell, one for a cell of constant (clipped) logit; and close to
    the exact path's knots (quantiles of the distinct logits) -- within a
    cell's logit width."""
    rng = np.random.default_rng(3)
    z, p = _data(20_000, rng, a=4.0, b=1.5)
    p[:50] = 1.0
    atoms = make_atoms(z, p, make_binning(None, 15), 128)
    xl, xu = logit_confidence(atoms.lower), logit_confidence(atoms.upper)
    sample = np.concatenate([
        [a] if b == a else a + (b - a) * (np.arange(t) + 0.5) / t
        for a, b, t in zip(xl, xu, atoms.trials)
    ])
    knots = cell_knots(atoms, 10)
    np.testing.assert_allclose(knots, np.quantile(sample, np.linspace(0, 1, 10)), rtol=0, atol=1e-12)
    exact = np.quantile(np.unique(logit_confidence(p)), np.linspace(0, 1, 10))
    width = np.max(xu - xl)
    assert np.max(np.abs(knots - exact)) <= 2 * width
    assert fit_smooth(atoms).basis.knots.tolist() == knots.tolist()
