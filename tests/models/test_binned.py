"""The NumPyro models: prior predictive, log densities, truncated-Normal helpers.

Monte Carlo comparisons use Z = 5 standard errors (two-sided false-alarm
rate 5.7e-7 per comparison; the largest test makes 20, so < 1.2e-5).
"""

from __future__ import annotations

import jax
import numpy as np
import pytest
from numpyro.handlers import reparam
from numpyro.infer import Predictive
from numpyro.infer.util import log_density
from scipy import stats as sps

from bece.models import (
    DirichletGammaReparam,
    conjugate_collapsed,
    conjugate_model,
    literal_collapsed,
    literal_model,
)
from bece.models._binned import truncnorm_log_normalizer, truncnorm_mean

Z = 5.0
M = 4
EDGES = np.linspace(0, 1, M + 1)
W = np.diff(EDGES)
ALPHA = np.full((2, M), 0.7)
SIGMA = W / np.sqrt(12)
TAU = SIGMA * 1.5


def assert_mean_close(sample, expected):
    sample = np.asarray(sample, dtype=np.float64)
    se = sample.std(axis=0, ddof=1) / np.sqrt(sample.shape[0])
    assert np.all(np.abs(sample.mean(axis=0) - expected) <= Z * se)


@pytest.mark.parametrize("model", [literal_model, conjugate_model])
def test_prior_predictive_shapes_and_q_is_dirichlet(model):
    out = Predictive(model, num_samples=20_000)(jax.random.PRNGKey(0), EDGES, ALPHA, SIGMA, TAU, n=3)
    assert out["q"].shape == (20_000, 2 * M) and out["cell"].shape == (20_000, 3)
    assert out["ece"].shape == (20_000,) and out["confidence"].shape == (20_000, M)
    d = sps.dirichlet(ALPHA.ravel())
    assert_mean_close(out["q"], d.mean())
    mu = np.asarray(out["mu"])
    assert np.all((mu >= EDGES[:-1]) & (mu <= EDGES[1:]))
    ref = sps.truncnorm((EDGES[:-1] - (EDGES[:-1] + W / 2)) / TAU, W / 2 / TAU,
                        loc=EDGES[:-1] + W / 2, scale=TAU)
    assert_mean_close(mu, ref.mean())


def test_literal_confidences_stay_in_their_bins():
    out = Predictive(literal_model, num_samples=50)(jax.random.PRNGKey(1), EDGES, ALPHA, SIGMA, TAU, n=200)
    b = np.asarray(out["cell"]) % M
    p = np.asarray(out["p"])
    assert np.all((p >= EDGES[b] - 1e-6) & (p <= EDGES[b + 1] + 1e-6))


def test_ece_deterministic_is_the_formula():
    out = Predictive(conjugate_model, num_samples=5)(jax.random.PRNGKey(2), EDGES, ALPHA, SIGMA, TAU, n=1)
    q = np.asarray(out["q"], dtype=np.float64).reshape(5, 2, M)
    mu = np.asarray(out["mu"], dtype=np.float64)
    np.testing.assert_allclose(out["ece"], np.abs(q[:, 1] - q.sum(axis=1) * mu).sum(axis=1), rtol=1e-5)


def _datasets(n, literal, count, seed):
    out = Predictive(literal_model if literal else conjugate_model, num_samples=count)(
        jax.random.PRNGKey(seed), EDGES, ALPHA, SIGMA, TAU, n=n
    )
    for k in range(count):
        cell = np.asarray(out["cell"][k])
        p = np.asarray(out["p"][k], dtype=np.float64)
        z, b = cell // M, cell % M
        counts = np.zeros((2, M))
        np.add.at(counts, (z, b), 1)
        n_m = counts.sum(axis=0)
        mean = np.where(n_m > 0, np.bincount(b, weights=p, minlength=M) / np.maximum(n_m, 1), 0.5)
        ss = np.bincount(b, weights=(p - mean[b]) ** 2, minlength=M)
        yield dict(z=z, b=b, p=p), dict(counts=counts, mean_p=mean, ss_p=ss)


@pytest.mark.parametrize(
    "full,collapsed,literal",
    [(literal_model, literal_collapsed, True), (conjugate_model, conjugate_collapsed, False)],
)
def test_collapsed_log_density_equals_per_observation(full, collapsed, literal):
    """Equal up to a constant that depends on the data only.

    3 random data sets x 6 random parameter values from the prior; the
    difference must not vary with the parameters. float32 evaluation: the
    tolerance is 4e-5 of the magnitude of the per-observation log density.
    """
    args = (EDGES, ALPHA, SIGMA, TAU)
    full_lp = jax.jit(lambda data, params: log_density(full, args, data, params)[0])
    collapsed_lp = jax.jit(lambda data, params: log_density(collapsed, args, data, params)[0])
    prior = Predictive(full, num_samples=6)(jax.random.PRNGKey(11), *args, n=1)
    for obs, stats in _datasets(60, literal, 3, seed=12):
        diffs, scale = [], 1.0
        for k in range(6):
            params = {"q": prior["q"][k], "mu": prior["mu"][k]}
            a = float(full_lp(obs, params))
            c = float(collapsed_lp(stats, params))
            diffs.append(a - c)
            scale = max(scale, abs(a))
        assert np.ptp(diffs) <= 4e-5 * scale


@pytest.mark.parametrize(
    "mu,sigma,low,high",
    [(0.5, 0.1, 0.4, 0.6), (0.0, 0.01, 0.05, 0.06), (1.0, 0.01, 0.55, 0.6), (0.3, 0.5, 0.2, 0.25),
     (0.95, 0.02, 0.9, 1.0)],
)
def test_truncnorm_helpers_match_scipy(mu, sigma, low, high):
    ref = sps.truncnorm((low - mu) / sigma, (high - mu) / sigma, loc=mu, scale=sigma)
    # scipy's own tail-stable normaliser, read off its log density at the midpoint
    x = (low + high) / 2
    log_z = sps.norm.logpdf(x, mu, sigma) - ref.logpdf(x)
    assert float(truncnorm_log_normalizer(mu, sigma, low, high)) == pytest.approx(log_z, rel=1e-4)
    assert float(truncnorm_mean(mu, sigma, low, high)) == pytest.approx(
        ref.mean(), abs=2e-6 + 1e-5 * abs(ref.mean()))


def test_reparam_leaves_the_dirichlet_prior_unchanged():
    boost = np.array([True, False, True, False, False, True, False, False])
    alpha = np.full((2, M), 1 / 8)
    fn = reparam(conjugate_collapsed, config={"q": DirichletGammaReparam(boost=boost)})
    out = Predictive(fn, num_samples=40_000)(jax.random.PRNGKey(3), EDGES, alpha, SIGMA, TAU)
    q = np.asarray(out["q"], dtype=np.float64)
    d = sps.dirichlet(alpha.ravel())
    assert_mean_close(q, d.mean())
    assert_mean_close(q**2, d.var() + d.mean() ** 2)


def test_reparam_rejects_wrong_boost_length():
    fn = reparam(conjugate_collapsed, config={"q": DirichletGammaReparam(boost=[True, False])})
    with pytest.raises(ValueError, match="boost must have 8 entries"):
        Predictive(fn, num_samples=1)(jax.random.PRNGKey(0), EDGES, ALPHA, SIGMA, TAU)
