"""bece.validation.smooth: the PSIS-corrected Laplace posterior of the smooth
model against NUTS on the same model (bece.cross_check(..., model="smooth"))."""

from __future__ import annotations

import numpy as np
from scipy import special

import bece


def test_laplace_agrees_with_nuts_on_a_well_specified_problem():
    """NUTS (4 chains x 1000 draws) on the smooth model against the
    PSIS-corrected Laplace path: quantile comparison with a family-wise
    false-alarm rate of 1e-4 (bece.cross_check)."""
    g = np.random.default_rng(0)
    p = g.uniform(size=1000)
    y = (g.uniform(size=1000) < special.expit(0.8 * special.logit(p) + 0.2)).astype(int)
    cc = bece.cross_check(y, p, model="smooth", num_warmup=500, num_samples=1000, seed=0,
                          num_closed_form=10_000)
    assert cc.model == "smooth" and cc.nuts.method == "nuts" and cc.closed_form.method == "laplace"
    assert cc.converged, cc
    assert cc.agree, cc.table.sort_values("ratio").tail()
    assert cc.divergences < 20
