"""bece.validation.smooth_toplabel: the importance-corrected Laplace posterior of the
hierarchical smooth top-label model against NUTS on the same NumPyro model
(bece.cross_check(..., model="smooth", top_label=True)).

Each check compares quantiles in probability space with a family-wise
false-alarm rate of 1e-4 (Bonferroni over the table's rows; see
bece.validation.crosscheck).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

import bece


def _data(n, k, seed):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, k)) * 2.0
    prob = np.exp(logits - logits.max(axis=1, keepdims=True))
    prob /= prob.sum(axis=1, keepdims=True)
    pred, conf = prob.argmax(axis=1), prob.max(axis=1)
    shift = np.linspace(-0.6, 0.5, k)
    correct = rng.uniform(size=n) < special.expit(0.7 * special.logit(conf) + shift[pred])
    y = np.where(correct, pred, (pred + 1 + rng.integers(0, k - 1, n)) % k)
    return y, prob


def test_laplace_agrees_with_nuts_on_a_small_problem():
    """K = 3, n = 500 (one atom per prediction); 4 chains x 800 draws. (400
    draws gave a minimum ESS of 350, below the 400 that "converged" needs, with
    jax 0.10 / numpyro 0.22; with 800, seeds 0, 1, 2: ESS 1225 to 1329, max z
    2.4 to 3.7 against a threshold of 4.9, at most one divergence.)"""
    y, prob = _data(500, 3, seed=3)
    cc = bece.cross_check(y, prob, model="smooth", top_label=True, num_warmup=400, num_samples=800,
                          seed=0, num_closed_form=4000)
    assert cc.model == "smooth-top-label"
    assert cc.nuts.method == "nuts" and cc.closed_form.method == "laplace"
    assert set(cc.table["variable"]) == {"ece", "label_ece", "curve"}
    assert cc.converged, cc
    assert cc.agree, cc.table.sort_values("z").tail()
    assert cc.divergences < 10


@pytest.mark.slow
@pytest.mark.parametrize("n, k, average", [(2000, 5, "label"), (6000, 4, "sample")])
def test_laplace_agrees_with_nuts_larger(n, k, average):
    """K = 5, n = 2,000 (exact atoms) and K = 4, n = 6,000 (fine-grid atoms,
    Binomial likelihood); 4 chains x 1,000 draws."""
    y, prob = _data(n, k, seed=n)
    cc = bece.cross_check(y, prob, model="smooth", top_label=True, average=average,
                          num_warmup=1000, num_samples=1000, seed=1, num_closed_form=20_000)
    assert cc.converged, cc
    assert cc.agree, cc.table.sort_values("z").tail()


@pytest.mark.parametrize("kwargs, match", [
    ({"alpha": 0.1}, "alpha"),
    ({"y_pred": np.zeros(50, dtype=int)}, "y_pred"),
    ({"num_chains": 0}, "num_chains"),
    ({"average": "mean"}, "average"),
])
def test_bad_arguments_are_refused(kwargs, match):
    y, prob = _data(50, 3, seed=0)
    with pytest.raises(ValueError, match=match):
        bece.cross_check(y, prob, model="smooth", top_label=True, **kwargs)


def test_closed_form_does_not_apply():
    y, prob = _data(50, 3, seed=0)
    r = bece.bayesian_top_label_ece(y, prob, model="smooth", num_samples=100)
    with pytest.raises(ValueError, match="closed_form"):
        bece.cross_check(y, prob, model="smooth", top_label=True, closed_form=r)
