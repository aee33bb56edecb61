"""The smooth calibration-curve model: spline basis, penalty, prior predictive, log density.

Deterministic checks compare with scipy (natural cubic splines from
``scipy.interpolate.CubicSpline``, integrals by ``scipy.integrate.quad``,
log densities by ``scipy.stats``). Monte Carlo comparisons use Z = 5
standard errors (two-sided false-alarm rate 5.7e-7 per comparison; the
prior-predictive test makes 4, so < 2.3e-6).
"""

from __future__ import annotations

import jax
import numpy as np
import pytest
from numpyro.infer import Predictive
from numpyro.infer.util import log_density
from scipy import integrate, interpolate, special
from scipy import stats as sps

from bece._smooth.basis import SmoothBasis, roughness_penalty
from bece._smooth.basis import natural_cubic_basis as np_basis
from bece.models._smooth import curve_logit, natural_cubic_basis, smooth_model

Z = 5.0
KNOTS = np.array([-2.0, -0.7, 0.1, 0.9, 2.5])


def test_basis_spans_scipy_natural_cubic_splines():
    rng = np.random.default_rng(0)
    values = rng.normal(size=KNOTS.size)
    cs = interpolate.CubicSpline(KNOTS, values, bc_type="natural")
    x = np.linspace(KNOTS[0], KNOTS[-1], 400)
    design = np.column_stack([np.ones_like(x), x, np_basis(x, KNOTS)])
    coef, *_ = np.linalg.lstsq(design, cs(x), rcond=None)
    np.testing.assert_allclose(design @ coef, cs(x), atol=1e-10)


def test_basis_is_zero_below_and_linear_beyond_the_boundary_knots():
    below = np_basis(np.array([-5.0, -3.0, KNOTS[0]]), KNOTS)
    np.testing.assert_allclose(below, 0.0, atol=1e-12)
    x = np.array([3.0, 4.0, 5.0, 9.0])
    n = np_basis(x, KNOTS)
    slope = (n[1] - n[0]) / 1.0
    np.testing.assert_allclose(n[2], n[0] + 2 * slope, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(n[3], n[0] + 6 * slope, rtol=1e-12, atol=1e-10)
    # continuous with the cubic pieces at the last knot
    eps = 1e-7
    inside = np_basis(np.array([KNOTS[-1] - eps]), KNOTS)
    np.testing.assert_allclose(inside, np_basis(np.array([KNOTS[-1]]), KNOTS), atol=1e-5)


def test_basis_matches_the_definition_by_a_naive_loop():
    x = np.array([-3.0, -1.0, 0.0, 0.5, 2.0, 2.5, 4.0])
    K = KNOTS.size

    def d(k, t):
        cube = lambda u: max(u, 0.0) ** 3  # noqa: E731
        return (cube(t - KNOTS[k]) - cube(t - KNOTS[-1])) / (KNOTS[-1] - KNOTS[k])

    expected = np.array([[d(k, t) - d(K - 2, t) for k in range(K - 2)] for t in x])
    np.testing.assert_allclose(np_basis(x, KNOTS), expected, rtol=1e-12, atol=1e-12)


def test_jax_basis_equals_numpy_basis():
    x = np.linspace(-6, 8, 101)
    np.testing.assert_allclose(np.asarray(natural_cubic_basis(x, KNOTS)), np_basis(x, KNOTS),
                               rtol=2e-5, atol=2e-5)  # float32


def test_roughness_penalty_is_the_integral_of_squared_second_derivatives():
    rng = np.random.default_rng(1)
    omega = roughness_penalty(KNOTS)
    for _ in range(3):
        gamma = rng.normal(size=KNOTS.size - 2)
        g = lambda t: np_basis(np.atleast_1d(t), KNOTS) @ gamma  # noqa: E731
        # g is a natural cubic spline with these knots: scipy's natural
        # interpolant through its knot values is g itself
        cs = interpolate.CubicSpline(KNOTS, g(KNOTS), bc_type="natural")
        val, _ = integrate.quad(lambda t: cs(t, 2) ** 2, KNOTS[0], KNOTS[-1],
                                points=KNOTS[1:-1], epsabs=1e-12)
        assert gamma @ omega @ gamma == pytest.approx(val, rel=1e-9)


def _basis():
    x = np.linspace(-3, 3, 50)
    return SmoothBasis.from_logits(x, np.ones_like(x), 6, 0), x


def test_prior_predictive_draws_the_prior():
    basis, x = _basis()
    out = Predictive(smooth_model, num_samples=4000)(
        jax.random.PRNGKey(0), basis.knots, basis.transform, x=x,
        intercept_scale=0.7, slope_scale=0.3, smoothness_scale=0.4)
    assert out["z"].shape == (4000, x.size) and out["u"].shape == (4000, 4)
    for name, dist in (("a", sps.norm(0, 0.7)), ("b", sps.norm(0, 0.3)), ("lam", sps.expon(scale=0.4))):
        s = np.asarray(out[name], dtype=np.float64)
        assert abs(s.mean() - dist.mean()) <= Z * s.std() / np.sqrt(s.size)
    # z ~ Bernoulli(sigmoid(f)) given the parameters: compare the mean outcome
    # at each x with the mean of sigmoid(f) over the same parameter draws
    f = jax.vmap(lambda a, b, lam, u: curve_logit(x, basis.knots, basis.transform, a, b, lam, u))(
        out["a"], out["b"], out["lam"], out["u"])
    p = special.expit(np.asarray(f, dtype=np.float64))
    z = np.asarray(out["z"], dtype=np.float64)
    se = np.sqrt(np.mean(p * (1 - p), axis=0) / z.shape[0])
    assert np.max(np.abs(z.mean(axis=0) - p.mean(axis=0)) / se) <= Z + 1.0  # 50 columns: Z+1


@pytest.mark.parametrize("aggregated", [False, True])
def test_log_density_equals_scipy(aggregated):
    basis, x = _basis()
    rng = np.random.default_rng(2)
    bins = np.minimum((special.expit(x) * 4).astype(int), 3)
    params = {"a": 0.3, "b": -0.2, "lam": 0.8, "u": rng.normal(size=4), "tau": 0.5,
              "v": rng.normal(size=4)}
    f = (x + 0.3 - 0.2 * x + 0.8 * basis.design(x)[:, 2:] @ params["u"]
         + 0.5 * params["v"][bins])
    if aggregated:
        trials = rng.integers(1, 6, size=x.size)
        z = rng.binomial(trials, 0.5)
        loglik = sps.binom.logpmf(z, trials, special.expit(f)).sum()
        data = {"trials": trials}
    else:
        z = rng.integers(0, 2, size=x.size)
        loglik = sps.bernoulli.logpmf(z, special.expit(f)).sum()
        data = {}
    expected = (loglik + sps.norm(0, 1).logpdf(0.3) + sps.norm(0, 0.5).logpdf(-0.2)
                + sps.expon(scale=0.5).logpdf(0.8) + sps.norm.logpdf(params["u"]).sum()
                + sps.expon(scale=0.25).logpdf(0.5) + sps.norm.logpdf(params["v"]).sum())
    ld, _ = log_density(smooth_model, (basis.knots, basis.transform),
                        {"x": x, "z": z, "bins": bins, "n_bins": 4, **data}, params)
    assert float(ld) == pytest.approx(expected, rel=1e-5)  # float32


def test_curve_logit_matches_the_numpy_design():
    x = np.linspace(-3, 3, 50)
    bins = np.minimum((special.expit(x) * 5).astype(int), 4)
    basis = SmoothBasis.from_logits(x, np.ones_like(x), 6, 5)
    rng = np.random.default_rng(3)
    u, v = rng.normal(size=4), rng.normal(size=5)
    f = curve_logit(x, basis.knots, basis.transform, 0.2, 0.1, 0.7, u, bins, 0.3, v)
    beta = np.concatenate([[0.2, 0.1], 0.7 * u, 0.3 * v])[None]
    np.testing.assert_allclose(np.asarray(f), basis.logits(x, bins, beta)[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(basis.logits(x, bins, beta)[0], x + basis.design(x, bins) @ beta[0],
                               rtol=1e-12)


def test_bins_need_n_bins():
    basis, x = _basis()
    with pytest.raises(ValueError, match="n_bins"):
        Predictive(smooth_model, num_samples=1)(jax.random.PRNGKey(0), basis.knots,
                                                 basis.transform, x=x, bins=np.zeros(x.size, int))


def test_centred_coefficients_have_the_same_law():
    """Partial centering (spline_centering, bin_centering) changes the sampled
    sites, not the model: at u_c = lam^c u, v_c = tau^c v the log density is
    scipy's of the non-centred model plus the Jacobian -sum(c) log(scale),
    the recorded u and v are the non-centred ones, and prior draws of u are
    N(0, 1) (Z = 5 standard errors of the mean and of the variance)."""
    basis, x = _basis()
    rng = np.random.default_rng(3)
    bins = np.minimum((special.expit(x) * 4).astype(int), 3)
    u, v = rng.normal(size=4), rng.normal(size=4)
    cu, cv = np.array([0.0, 0.3, 0.7, 1.0]), np.array([0.5, 0.5, 0.1, 0.9])
    lam, tau = 0.8, 0.5
    f = x + 0.3 - 0.2 * x + lam * basis.design(x)[:, 2:] @ u + tau * v[bins]
    z = rng.integers(0, 2, size=x.size)
    expected = (sps.bernoulli.logpmf(z, special.expit(f)).sum() + sps.norm(0, 1).logpdf(0.3)
                + sps.norm(0, 0.5).logpdf(-0.2) + sps.expon(scale=0.5).logpdf(lam)
                + sps.norm.logpdf(u).sum() + sps.expon(scale=0.25).logpdf(tau)
                + sps.norm.logpdf(v).sum() - np.sum(cu) * np.log(lam) - np.sum(cv) * np.log(tau))
    params = {"a": 0.3, "b": -0.2, "lam": lam, "u_centered": lam**cu * u, "tau": tau,
              "v_centered": tau**cv * v}
    kwargs = {"x": x, "z": z, "bins": bins, "n_bins": 4, "spline_centering": cu, "bin_centering": cv}
    ld, trace = log_density(smooth_model, (basis.knots, basis.transform), kwargs, params)
    assert float(ld) == pytest.approx(expected, rel=1e-5)  # float32
    np.testing.assert_allclose(np.asarray(trace["u"]["value"]), u, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(trace["v"]["value"]), v, rtol=1e-5)
    out = Predictive(smooth_model, num_samples=4000)(
        jax.random.PRNGKey(1), basis.knots, basis.transform, x=x, spline_centering=0.8)
    s = np.asarray(out["u"], dtype=np.float64)
    assert np.all(np.abs(s.mean(axis=0)) <= Z / np.sqrt(s.shape[0]))
    assert np.all(np.abs(s.var(axis=0) - 1.0) <= Z * np.sqrt(2.0 / s.shape[0]))
