"""bece._smooth.scale_prior: the deviation scales' mixture priors and their grids,
against scipy, and the NumPyro model's prior of the same scales."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from bece._base.jaxcompat import enable_x64
from bece._base.laplace import exponential_grid
from bece._smooth.scale_prior import SHARED_PROB, SHARED_RATIO, scale_grid
from bece._smooth.toplabel_fit import fit_top_label_smooth
from bece.models._toplabel_smooth import scale_prior


def _mixture(scale, p):
    shared, wide = sps.expon(scale=SHARED_RATIO * scale), sps.expon(scale=scale)
    return lambda v: p * shared.cdf(v) + (1 - p) * wide.cdf(v)


@pytest.mark.parametrize("p", [0.0, 0.3, SHARED_PROB])
def test_grid_masses_are_the_mixture_between_geometric_midpoints(p):
    values, mass = scale_grid(0.25, 8, p)
    np.testing.assert_array_equal(values, exponential_grid(0.25, 8)[0])
    assert mass.sum() == pytest.approx(1.0, abs=1e-14)
    mids = np.sqrt(values[:-1] * values[1:])
    cdf = _mixture(0.25, p)
    np.testing.assert_allclose(mass[1:-1], np.diff(cdf(mids)), rtol=1e-10)
    assert mass[0] == pytest.approx(cdf(mids[0]), rel=1e-12)
    assert mass[-1] == pytest.approx(1 - cdf(mids[-1]), rel=1e-10)


@pytest.mark.parametrize("v", [0.002, 0.01, 0.3, 1.5])
def test_numpyro_prior_is_the_same_mixture(v):
    with enable_x64():
        got = float(scale_prior(0.5, SHARED_PROB, SHARED_RATIO).log_prob(v))
        alone = float(scale_prior(0.5, 0.0, SHARED_RATIO).log_prob(v))
    want = np.log(SHARED_PROB * sps.expon(scale=SHARED_RATIO * 0.5).pdf(v)
                  + (1 - SHARED_PROB) * sps.expon(scale=0.5).pdf(v))
    assert got == pytest.approx(want, rel=1e-12)
    assert alone == pytest.approx(sps.expon(scale=0.5).logpdf(v), rel=1e-12)


@pytest.mark.parametrize("bad", [-0.1, 1.0, 2, "0.5", True, float("nan")])
def test_bad_shared_prob_is_refused(bad):
    from bece._smooth.toplabel_atoms import label_atoms_exact
    from bece._stats import make_binning

    rng = np.random.default_rng(0)
    p = rng.uniform(0.4, 1.0, 50)
    atoms = label_atoms_exact(rng.integers(0, 2, 50), (rng.uniform(size=50) < p).astype(np.int64), p, 2,
                              make_binning(None, 5, "uniform"))
    with pytest.raises(ValueError, match="shared_prob"):
        fit_top_label_smooth(atoms, shared_prob=bad)
