"""bece._validation.smooth_toplabel: the importance-corrected Laplace posterior of the
hierarchical smooth top-label model against NUTS on the same NumPyro model
(bece.cross_check(..., model="smooth", top_label=True)).

Each check compares quantiles in probability space with a family-wise
false-alarm rate of 1e-4 (Bonferroni over the table's rows; see
bece._validation.crosscheck).
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
    """K = 3, n = 500 (one atom per prediction) under the default two-part
    prior of the label scales; 4 chains x 800 draws after 400 warm-up.
    Failure rate: the agreement rule's family-wise false-alarm rate, 0.05,
    plus NUTS's failure to converge. On the model as written NUTS mixed
    poorly on data this small (the scales' posterior spans both parts of
    their prior): in 5 seeds one or two runs had an ESS of 120 to 330. With
    the coefficients scaled by the data's information and the scales sampled
    by their probit (the first run of the check), seeds 0 to 4 converged
    without a repeat: ESS 800 to 1,590, 30 to 32 leapfrog steps per
    transition, worst ratio 0.45 to 0.77, log Bayes factors within 2.2
    standard errors of the fast path's."""
    from bece._validation.smooth_toplabel import cross_check_smooth_top_label

    y, prob = _data(500, 3, seed=3)
    cc = cross_check_smooth_top_label(y, prob, num_warmup=400, num_samples=800, seed=0,
                                      num_closed_form=4000)
    assert cc.parameterisation == "scaled"
    assert cc.model == "smooth-top-label"
    assert cc.nuts.method == "nuts" and cc.closed_form.method == "laplace"
    assert set(cc.table["variable"]) == {"ece", "label_ece", "curve", "P(exactly calibrated)"}
    assert abs(cc.evidence["fast"] - cc.evidence["nuts"]) <= max(4 * cc.evidence["se"], 0.5), cc.evidence
    assert cc.converged, cc
    assert cc.agree, cc.table.sort_values("ratio").tail()
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
    assert cc.agree, cc.table.sort_values("ratio").tail()


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


def test_scaled_information_is_read_from_the_laplace_blocks():
    """scaled_information: component j's label block has diagonal 1 +
    kappa_j^2 I^c_l and 1 + omega_j^2 I^e_l, its shared Schur complement 1 +
    lam_j^2 I^u_k for the spline and 1 + tau_j^2 I^v_m for the bins (prior
    precision 1); a hand-made fit built that way, with off-diagonal terms and
    other informations per component, gives back their weighted means."""
    from types import SimpleNamespace

    from bece._validation.smooth_toplabel import scaled_information

    rng = np.random.default_rng(5)
    n_labels, k2, m = 4, 3, 2
    weights = np.array([0.1, 0.6, 0.3])
    scales = {name: rng.uniform(0.005, 1.5, size=3) for name in ("lam", "tau", "kappa", "omega")}
    info = {name: rng.uniform(1.0, 1e4, size=(3, size))
            for name, size in (("u", k2), ("v", m), ("c", n_labels), ("e", n_labels))}
    label_chol, chol = [], []
    for j in range(3):
        blk = np.empty((n_labels, 2, 2))
        blk[:, 0, 0] = 1 + scales["kappa"][j] ** 2 * info["c"][j]
        blk[:, 1, 1] = 1 + scales["omega"][j] ** 2 * info["e"][j]
        blk[:, 0, 1] = blk[:, 1, 0] = 0.3 * np.sqrt(blk[:, 0, 0] * blk[:, 1, 1])
        label_chol.append(np.linalg.cholesky(blk))
        a = rng.normal(size=(2 + k2 + m, 2 + k2 + m)) * 0.1
        s = a @ a.T
        s[np.arange(2, 2 + k2), np.arange(2, 2 + k2)] = 1 + scales["lam"][j] ** 2 * info["u"][j]
        s[np.arange(2 + k2, 2 + k2 + m), np.arange(2 + k2, 2 + k2 + m)] = (
            1 + scales["tau"][j] ** 2 * info["v"][j])
        s[:2, :2] += np.eye(2) * 5.0
        chol.append(np.linalg.cholesky(s))
    post = SimpleNamespace(weights=weights, label_chol=np.stack(label_chol), chol=np.stack(chol),
                           prior_scales=np.ones(2 + k2 + m), lambdas=scales["lam"], taus=scales["tau"],
                           kappas=scales["kappa"], omegas=scales["omega"],
                           basis=SimpleNamespace(n_spline=k2, n_bins=m))
    out = scaled_information(post)
    for key, name in (("spline", "u"), ("bin", "v"), ("shift", "c"), ("tilt", "e")):
        np.testing.assert_allclose(out[f"{key}_information"], weights @ info[name], rtol=1e-9)


def test_nuts_runs_scaled_first_then_as_written(monkeypatch):
    """cross_check_smooth_top_label runs NUTS on the model with its
    coefficients scaled by the data's information and its label scales by
    their probit first, and on the model as written when that run does not
    converge (bece._validation.agreement.first_converged). The NUTS runs
    are replaced by stand-ins that record their options."""
    from types import SimpleNamespace

    import bece._validation.smooth_toplabel as st

    calls = []

    def fake(*args, **kwargs):
        calls.append((args[-2], args[-1]))
        return SimpleNamespace(converged=False, parameterisation=args[-2])

    monkeypatch.setattr(st, "_nuts_against_top_label", fake)
    y, prob = _data(300, 3, seed=1)
    cc = st.cross_check_smooth_top_label(y, prob, num_closed_form=200, progress_bar=False)
    assert [c[0] for c in calls] == ["scaled", "non-centred"] and cc.parameterisation == "scaled"
    scaled = calls[0][1]
    assert scaled.pop("probit_scales") is True
    assert set(scaled) == {"spline_information", "shift_information", "tilt_information"}
    assert all(np.all(np.asarray(v) >= 0) for v in scaled.values())
    assert calls[1][1] == {}
