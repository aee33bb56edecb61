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


@pytest.mark.parametrize("shared_prob", [0.0, 0.5])
def test_scale_quantile_inverts_the_prior_cdf(shared_prob):
    """scale_prior_quantile(xi) solves F(kappa) = Phi(xi) for the two-part
    prior: against scipy's root finder on log kappa (the CDF below the median,
    the survival function above, so both tails are checked to rounding), the
    exponential's closed form -s log Phi(-xi) at shared_prob 0, and its
    derivative against phi(xi) / f(kappa) and central differences."""
    import jax
    import jax.numpy as jnp
    from scipy import optimize

    from bece.models._toplabel_smooth import scale_prior_quantile

    s, r = 0.5, 0.02
    w = np.array([shared_prob, 1 - shared_prob])
    means = s * np.array([r, 1.0])
    xi = np.array([-30.0, -8.0, -3.0, -1.0, 0.0, 0.5, 1.0, 3.0, 8.0, 30.0])
    with enable_x64():
        kappa = np.asarray(scale_prior_quantile(jnp.asarray(xi), s, shared_prob, r))
        grad = np.asarray(jax.vmap(jax.grad(lambda t: scale_prior_quantile(t, s, shared_prob, r)))(
            jnp.asarray(xi)))
        step = 1e-6
        central = (np.asarray(scale_prior_quantile(jnp.asarray(xi + step), s, shared_prob, r))
                   - np.asarray(scale_prior_quantile(jnp.asarray(xi - step), s, shared_prob, r))) / (2 * step)
    for t, k in zip(xi, kappa, strict=True):
        if t < 0:
            def gap(v, t=t):
                return np.log(np.sum(-w * np.expm1(-np.exp(v) / means))) - sps.norm.logcdf(t)
        else:
            def gap(v, t=t):
                return sps.norm.logsf(t) - special.logsumexp(-np.exp(v) / means, b=w)
        assert k == pytest.approx(np.exp(optimize.brentq(gap, -700.0, 8.0, xtol=1e-14)), rel=1e-9)
    if shared_prob == 0:
        np.testing.assert_allclose(kappa, -s * sps.norm.logsf(xi), rtol=1e-9)
    density = np.sum(w / means * np.exp(-kappa[:, None] / means), axis=1)
    np.testing.assert_allclose(grad, sps.norm.pdf(xi) / density, rtol=1e-9)
    middle = np.abs(xi) <= 3  # where central differences have digits to compare
    np.testing.assert_allclose(grad[middle], central[middle], rtol=1e-6)
    with enable_x64():  # beyond float64's tail (Phi(-45) rounds to 0): kappa 0, no NaN
        far = jax.value_and_grad(lambda t: scale_prior_quantile(t, s, shared_prob, r))(-45.0)
    assert [float(v) for v in far] == [0.0, 0.0]


def test_reparameterised_model_has_the_same_law():
    """With the informations and probit_scales, the model's log density at
    (kappa_probit, omega_probit, u_scaled, v_scaled, c_scaled, e_scaled) is
    the model as written at the implied (kappa, omega, u, v, c, e) plus the
    log Jacobian: log(dkappa/dxi) + log(domega/dxi) - sum log g over the
    scaled coefficients, g = sqrt(1 + scale^2 I); the deterministic sites
    record the implied values."""
    from bece.models._toplabel_smooth import scale_prior_quantile

    rng, x, label, bins, basis = _problem(seed=2)
    prm = _params(rng, basis)
    z = rng.integers(0, 2, size=x.size)
    info = {"spline_information": rng.uniform(0, 50, basis.n_spline),
            "bin_information": rng.uniform(0, 50, 4),
            "shift_information": rng.uniform(0, 50, L), "tilt_information": rng.uniform(0, 50, L)}
    xi_k, xi_w = -0.7, 0.4
    kwargs = {"x": x, "label": label, "n_labels": L, "z": z, "bins": bins, "n_bins": 4,
              "label_scale": 0.7, "tilt_scale": 0.3}
    with enable_x64():
        kappa = float(scale_prior_quantile(xi_k, 0.7, 0.5, 0.02))
        omega = float(scale_prior_quantile(xi_w, 0.3, 0.5, 0.02))
        original = {**prm, "kappa": kappa, "omega": omega}
        g = {k: np.sqrt(1 + s**2 * info[f"{name}_information"])
             for k, s, name in (("u", prm["lam"], "spline"), ("v", prm["tau"], "bin"),
                                ("c", kappa, "shift"), ("e", omega, "tilt"))}
        scaled = {"a": prm["a"], "b": prm["b"], "lam": prm["lam"], "tau": prm["tau"],
                  "kappa_probit": xi_k, "omega_probit": xi_w,
                  **{f"{k}_scaled": original[k] * g[k] for k in g}}
        ld0, _ = log_density(top_label_smooth_model, (basis.knots, basis.transform), kwargs, original)
        ld1, trace = log_density(top_label_smooth_model, (basis.knots, basis.transform),
                                 {**kwargs, **info, "probit_scales": True}, scaled)

    def log_slope(xi, k, s):  # log dkappa/dxi = log phi(xi) - log f(kappa)
        return sps.norm.logpdf(xi) - np.log(0.5 * sps.expon(scale=0.02 * s).pdf(k)
                                             + 0.5 * sps.expon(scale=s).pdf(k))

    jacobian = (log_slope(xi_k, kappa, 0.7) + log_slope(xi_w, omega, 0.3)
                - sum(np.log(v).sum() for v in g.values()))
    assert float(ld1) == pytest.approx(float(ld0) + jacobian, rel=1e-10, abs=1e-9)
    for k in ("kappa", "omega", "u", "v", "c", "e"):
        np.testing.assert_allclose(np.asarray(trace[k]["value"]), original[k], rtol=1e-10)
