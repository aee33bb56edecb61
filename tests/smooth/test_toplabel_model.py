"""The hierarchical smooth top-label model in NumPyro (bece.models._toplabel_smooth).

The log density is compared with a direct per-observation computation
(scipy.stats log densities and a loop over the observations, in float64
under a scoped ``jax.enable_x64``); the JAX curve with the numpy twin used
by the fast path. All checks are deterministic.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpyro import handlers
from numpyro.infer.util import log_density
from scipy import special
from scipy import stats as sps

from bece._base.jaxcompat import enable_x64
from bece._smooth.basis import SmoothBasis
from bece._smooth.toplabel_fit import PointDesign, TopLabelSmoothPosterior
from bece.models import top_label_smooth_model
from bece.models._toplabel_smooth import top_label_curve_logit

L = 3


def _problem(seed=0, n=40):
    rng = np.random.default_rng(seed)
    x = np.sort(rng.normal(1.0, 1.5, size=n))
    label = rng.integers(0, L, size=n)
    bins = np.minimum((special.expit(x) * 4).astype(int), 3)
    basis = SmoothBasis.from_logits(x, np.ones_like(x), 6, 4)
    return rng, x, label, bins, basis


def _params(rng, basis):
    return {"a": 0.3, "b": -0.2, "lam": 0.8, "u": rng.normal(size=basis.n_spline), "tau": 0.5,
            "v": rng.normal(size=4), "kappa": 0.6, "omega": 0.35, "c": rng.normal(size=L),
            "e": rng.normal(size=L)}


def _naive_logit(x, label, bins, basis, prm, center, spread):
    """One observation at a time: x + a + b x + lam phi(x) u + tau v_m + kappa c_l + omega e_l z."""
    out = []
    for xi, li, bi in zip(x, label, bins, strict=True):
        phi = basis.design(np.array([xi]))[0, 2:]
        out.append(xi + prm["a"] + prm["b"] * xi + prm["lam"] * phi @ prm["u"]
                   + prm["tau"] * prm["v"][bi]
                   + prm["kappa"] * prm["c"][li]
                   + prm["omega"] * prm["e"][li] * (xi - center) / spread)
    return np.array(out)


@pytest.mark.parametrize("aggregated", [False, True])
def test_log_density_equals_a_direct_per_observation_computation(aggregated):
    rng, x, label, bins, basis = _problem()
    prm = _params(rng, basis)
    center, spread = 0.9, 1.4
    f = _naive_logit(x, label, bins, basis, prm, center, spread)
    if aggregated:
        trials = rng.integers(1, 6, size=x.size)
        z = rng.binomial(trials, 0.5)
        loglik = sum(sps.binom.logpmf(zi, ti, special.expit(fi)) for zi, ti, fi in zip(z, trials, f))
        data = {"trials": trials}
    else:
        z = rng.integers(0, 2, size=x.size)
        loglik = sum(sps.bernoulli.logpmf(zi, special.expit(fi)) for zi, fi in zip(z, f))
        data = {}
    prior = (sps.norm(0, 1.0).logpdf(0.3) + sps.norm(0, 0.5).logpdf(-0.2)
             + sps.expon(scale=0.5).logpdf(0.8) + sps.norm.logpdf(prm["u"]).sum()
             + sps.expon(scale=0.25).logpdf(0.5) + sps.norm.logpdf(prm["v"]).sum()
             + np.log(0.5 * sps.expon(scale=0.02 * 0.7).pdf(0.6) + 0.5 * sps.expon(scale=0.7).pdf(0.6))
             + np.log(0.5 * sps.expon(scale=0.02 * 0.3).pdf(0.35) + 0.5 * sps.expon(scale=0.3).pdf(0.35))
             + sps.norm.logpdf(prm["c"]).sum()
             + sps.norm.logpdf(prm["e"]).sum())
    with enable_x64():
        ld, _ = log_density(
            top_label_smooth_model, (basis.knots, basis.transform),
            {"x": x, "label": label, "n_labels": L, "z": z, "bins": bins, "n_bins": 4,
             "center": center, "spread": spread, "label_scale": 0.7, "tilt_scale": 0.3, **data},
            prm)
    assert float(ld) == pytest.approx(loglik + prior, rel=1e-10, abs=1e-9)


def test_jax_curve_equals_the_numpy_design_of_the_fast_path():
    rng, x, label, bins, basis = _problem(1)
    prm = _params(rng, basis)
    with enable_x64():
        f = np.asarray(top_label_curve_logit(
            x, label, basis.knots, basis.transform, prm["a"], prm["b"], prm["lam"], prm["u"],
            prm["kappa"], prm["c"], prm["e"], center=0.5, spread=2.0, bins=bins, tau=prm["tau"],
            v=prm["v"], omega=prm["omega"]))
    beta = np.concatenate([[prm["a"], prm["b"]], prm["lam"] * prm["u"], prm["tau"] * prm["v"]])
    label_beta = np.stack([prm["kappa"] * prm["c"], prm["omega"] * prm["e"]], axis=-1)
    post = TopLabelSmoothPosterior(
        basis=basis, center=0.5, spread=2.0, n_labels=L, lambdas=np.ones(1), taus=np.ones(1),
        kappas=np.ones(1), omegas=np.ones(1), prior_mass=np.ones(1), log_evidence=np.zeros(1),
        weights=np.ones(1),
        modes=np.zeros((1, 1)), label_modes=np.zeros((1, L, 2)), chol=np.zeros((1, 1, 1)),
        label_chol=np.zeros((1, L, 2, 2)), coupling=np.zeros((1, L, 2, 1)),
        prior_scales=np.ones(1), smoothness_scale=0.5, bin_scale=0.25, label_scale=0.5,
        tilt_scale=0.5, log_marginal=0.0, n_evaluated=1, grid=None, n_atoms=x.size)
    fast = PointDesign(post, x, label, bins).logits(beta[None], label_beta[None])[0]
    np.testing.assert_allclose(fast, f, rtol=1e-12, atol=1e-12)
    naive = _naive_logit(x, label, bins, basis, prm, 0.5, 2.0)
    np.testing.assert_allclose(fast, naive, rtol=1e-12, atol=1e-12)


def test_bins_need_n_bins():
    _, x, label, bins, basis = _problem()
    with pytest.raises(ValueError, match="n_bins"):
        handlers.seed(top_label_smooth_model, 0)(basis.knots, basis.transform, x=x, label=label,
                                                 n_labels=L, bins=bins)
