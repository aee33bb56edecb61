"""bece._validation.smooth: the PSIS-corrected Laplace posterior of the smooth
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


def test_the_default_cross_check_above_the_fine_grid_switch():
    """cross_check(y, p) with no model= checks the default (the smooth model
    averaged with exact calibration). Above 2,000 rows the smooth model's
    likelihood is Binomial on a fine grid, where NumPyro 0.22 / JAX 0.10 made
    the cross-check crash (TracerArrayConversionError). At n = 2,001 on
    calibrated data it agrees under the rule, with the probability of exact
    calibration from bridge sampling on the NUTS draws. The rule's
    family-wise false-alarm rate is at most 0.05 (convergence included, as
    measured on the conjugate model); the seed is fixed."""
    g = np.random.default_rng(11)
    n = 2001
    p = g.uniform(size=n)
    y = (g.uniform(size=n) < p).astype(int)
    cc = bece.cross_check(y, p, seed=1, progress_bar=False)
    assert cc.model == "smooth" and cc.closed_form.params.grid is not None  # the fine grid
    assert cc.agree, cc.reasons
    probabilities = cc.table[cc.table["quantile"].isna()]
    assert set(probabilities["variable"]) == {"P(exactly calibrated)", "P(tau > 0.3)"}
    e = cc.evidence
    assert e["prior_odds"] == 0.02 and 0 < e["se"] < 0.2
    assert abs(e["fast"] - e["nuts"]) <= max(4 * e["se"], 0.5)
    assert "log Bayes factor of exact calibration" in str(cc)
