"""bece._smooth.draws: the importance correction of the Laplace draws and the
Bayesian-bootstrap ECE draws, against a naive loop fed the same bootstrap
weights.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

from bece._smooth.atoms import make_atoms
from bece._smooth.draws import ece_draws, importance_draws
from bece._smooth.fit import fit_smooth
from bece._smooth.grid_error import CellCurve, draw_bounds
from bece._smooth.posterior import smooth_ece
from bece._stats import make_binning

from ..conftest import _data
from .conftest import _problem


def test_importance_correction_is_reliable_and_estimates_the_evidence(rng):
    at, _ = _problem(rng, n=1000)
    post = fit_smooth(at)
    beta, lam, tau, corrected = importance_draws(at, post, 4000, np.random.default_rng(8))
    assert beta.shape == (4000, post.basis.n_coef) and lam.shape == tau.shape == (4000,)
    assert corrected.pareto_k < 0.7 and corrected.is_ess > 0.5 * 4000
    # IS and Laplace marginal likelihoods agree to the Laplace error (measured 0.01)
    assert abs(corrected.log_marginal_is - post.log_marginal) < 0.1
    assert corrected.log_marginal_smooth == corrected.log_marginal_is
    assert np.isnan(post.log_marginal_is) and post.log_marginal_smooth == post.log_marginal


# --------------------------------------------------------------- draws
class _FixedRng:
    """Stands in for a Generator: returns given bootstrap weights."""

    def __init__(self, g):
        self.g = g
        self.at = 0

    def _take(self, size):
        out = self.g[self.at:self.at + size[0]]
        self.at += size[0]
        return out.copy()

    def standard_exponential(self, size):
        return self._take(size)

    def standard_gamma(self, shape, size):
        return self._take(size)


@pytest.mark.parametrize("grid", [None, 8])
def test_ece_draws_match_a_naive_loop(rng, grid):
    z, p = _data(600, rng)
    p[:3] = [0.0, 1.0, 0.5]
    bins = make_binning(p, 6)
    at = make_atoms(z, p, bins, grid)
    post = fit_smooth(at)
    beta, *_ = post.sample(7, np.random.default_rng(5))
    g = np.random.default_rng(6).gamma(at.trials.astype(float), size=(7, at.p.size))
    ece, acc, conf, wt, bound = ece_draws(at, post.basis, beta, _FixedRng(g), chunk_elems=3 * at.p.size)
    design = post.basis.design(at.x, at.bin)
    for s in range(7):
        w = g[s] / g[s].sum()
        curve = special.expit(at.x + design @ beta[s])
        total = 0.0
        for m in range(6):
            inside = at.bin == m
            total += abs(np.sum(w[inside] * (curve[inside] - at.p[inside])))
            np.testing.assert_allclose(wt[s, m], w[inside].sum(), rtol=1e-12)
            if inside.any():
                np.testing.assert_allclose(acc[s, m], np.sum(w[inside] * curve[inside]) / w[inside].sum(),
                                           rtol=1e-10)
                np.testing.assert_allclose(conf[s, m], np.sum(w[inside] * at.p[inside]) / w[inside].sum(),
                                           rtol=1e-10)
        assert ece[s] == pytest.approx(total, rel=1e-10)
        if grid:
            f = post.basis.logits(at.x, at.bin, beta[s:s + 1])
            assert bound[s] == pytest.approx(
                draw_bounds(CellCurve(at, post.basis), post.basis, beta[s:s + 1], f, w[None])[0],
                rel=1e-10)
    assert not grid or 0 < bound.max() < 0.1


def test_empty_bins_have_zero_weight_and_the_curve_at_their_centre(rng):
    p = rng.uniform(0.5, 1.0, size=300)  # bins below 0.5 are empty
    z = (rng.uniform(size=300) < p).astype(int)
    r = smooth_ece(z, p, n_bins=10, num_samples=500, seed=1)
    assert np.all(r.weight[:, :5] == 0)
    np.testing.assert_allclose(r.confidence[:, :5], np.broadcast_to(np.arange(5) / 10 + 0.05, (500, 5)))
    assert np.all((r.accuracy[:, :5] > 0) & (r.accuracy[:, :5] < 1))
    np.testing.assert_allclose(r.weight.sum(axis=1), 1.0)
