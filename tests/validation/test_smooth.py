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
    assert cc.parameterisation in ("centred", "non-centred")
    assert cc.to_dict()["parameterisation"] == cc.parameterisation
    probabilities = cc.table[cc.table["quantile"].isna()]
    assert set(probabilities["variable"]) == {"P(exactly calibrated)", "P(tau > 0.3)"}
    e = cc.evidence
    assert e["prior_odds"] == 0.02 and 0 < e["se"] < 0.2
    assert abs(e["fast"] - e["nuts"]) <= max(4 * e["se"], 0.5)
    assert "log Bayes factor of exact calibration" in str(cc)


def test_nuts_centering_is_one_minus_the_laplace_variance():
    """nuts_centering: c_k = 1 - sum_j w_j [H_j^{-1}]_kk, clipped to [0, 1], for
    the spline coefficients (after a, b) and the bin ones; against numpy's
    inverse of each H_j = L_j L_j^T on a hand-made two-component fit."""
    from types import SimpleNamespace

    from bece._validation.smooth import nuts_centering

    rng = np.random.default_rng(5)
    p_dim = 2 + 3 + 2
    chol = []
    for _ in range(2):
        a = rng.normal(size=(p_dim, p_dim))
        chol.append(np.linalg.cholesky(a @ a.T + np.diag(rng.uniform(0.2, 3.0, size=p_dim))))
    post = SimpleNamespace(weights=np.array([0.3, 0.7]), chol=np.stack(chol),
                           modes=np.zeros((2, p_dim)), basis=SimpleNamespace(n_spline=3, n_bins=2))
    var = sum(w * np.diag(np.linalg.inv(lo @ lo.T)) for w, lo in zip(post.weights, chol))
    c = nuts_centering(post)
    np.testing.assert_allclose(c["spline_centering"], np.clip(1 - var[2:5], 0, 1), rtol=1e-12)
    np.testing.assert_allclose(c["bin_centering"], np.clip(1 - var[5:], 0, 1), rtol=1e-12)
    post.basis.n_bins, post.chol, post.modes = 0, post.chol[:, :5, :5], post.modes[:, :5]
    assert set(nuts_centering(post)) == {"spline_centering"}


def test_a_run_that_does_not_converge_is_repeated_non_centred(monkeypatch):
    """cross_check_smooth_atoms runs NUTS centred first; when that run does
    not converge it runs the non-centred model once and keeps the run that
    converged (the centred one when neither did). The NUTS runs are replaced
    by stand-ins that record their parameterisation."""
    from types import SimpleNamespace

    import bece._validation.smooth as vs

    g = np.random.default_rng(2)
    p = g.uniform(size=300)
    y = (g.uniform(size=300) < p).astype(int)
    atoms, stats, grid_points = vs.prepare_atoms(y, p, None, None, "uniform", "auto")
    for converges, kept in (({"centred"}, "centred"), ({"non-centred"}, "non-centred"),
                            (set(), "centred")):
        calls: list[tuple[str, dict]] = []

        def fake(*args, converges=converges, calls=calls, **kwargs):
            parameterisation, centering = args[6], args[7]
            calls.append((parameterisation, centering))
            return SimpleNamespace(converged=parameterisation in converges,
                                   parameterisation=parameterisation)

        monkeypatch.setattr(vs, "_nuts_against", fake)
        cc = vs.cross_check_smooth_atoms(atoms, stats, grid_points, num_closed_form=200,
                                         progress_bar=False)
        assert cc.parameterisation == kept
        assert [c[0] for c in calls] == (["centred"] if "centred" in converges
                                         else ["centred", "non-centred"])
        assert set(calls[0][1]) == {"spline_centering", "bin_centering"}
        assert all(c[1] == {} for c in calls[1:])
