"""The top-label NumPyro model: prior predictive, deterministic sites, log densities.

Monte Carlo comparisons use Z = 5 standard errors (two-sided false-alarm
rate 5.7e-7 per comparison; at most 24 per test, so < 1.4e-5).
"""

from __future__ import annotations

import functools

import jax
import numpy as np
import pytest
from numpyro.infer import Predictive
from numpyro.infer.util import log_density
from scipy import stats as sps

from bece.models import conjugate_collapsed, top_label_collapsed, top_label_model

Z = 5.0
L, M = 3, 4
EDGES = np.linspace(0, 1, M + 1)
W = np.diff(EDGES)
ALPHA = np.full((L, 2, M), 0.6)
SIGMA = np.broadcast_to(W / np.sqrt(12), (L, M))
TAU = SIGMA * 1.5


def _model(fn, **kw):
    return functools.partial(fn, n_labels=L, **kw)


def test_prior_predictive_shapes_and_q_is_dirichlet():
    out = Predictive(_model(top_label_model), num_samples=20_000)(
        jax.random.PRNGKey(0), EDGES, ALPHA, SIGMA, TAU, n=5)
    assert out["q"].shape == (20_000, L * 2 * M) and out["cell"].shape == (20_000, 5)
    assert out["mu"].shape == (20_000, L, M) and out["label_ece"].shape == (20_000, L)
    q = np.asarray(out["q"], dtype=np.float64)
    mean = sps.dirichlet(ALPHA.ravel()).mean()
    se = q.std(axis=0) / np.sqrt(q.shape[0])
    assert np.all(np.abs(q.mean(axis=0) - mean) <= Z * se)
    mu = np.asarray(out["mu"])
    assert np.all((mu >= EDGES[:-1]) & (mu <= EDGES[1:]))


def test_literal_confidences_stay_in_their_bins():
    out = Predictive(_model(top_label_model, literal=True), num_samples=30)(
        jax.random.PRNGKey(1), EDGES, ALPHA, SIGMA, TAU, n=100)
    b = np.asarray(out["cell"]) % M
    p = np.asarray(out["p"])
    assert np.all((p >= EDGES[b] - 1e-6) & (p <= EDGES[b + 1] + 1e-6))


@pytest.mark.parametrize("average", ["label", "sample"])
def test_ece_deterministics_are_the_formulas(average):
    out = Predictive(_model(top_label_model, average=average), num_samples=7)(
        jax.random.PRNGKey(2), EDGES, ALPHA, SIGMA, TAU, n=1)
    q = np.asarray(out["q"], dtype=np.float64).reshape(7, L, 2, M)
    mu = np.asarray(out["mu"], dtype=np.float64)
    pi = q.sum(axis=2)
    gaps = np.abs(q[:, :, 1] - pi * mu).sum(axis=2)
    label = gaps / pi.sum(axis=2)
    np.testing.assert_allclose(out["label_ece"], label, rtol=2e-5)
    expected = label.mean(axis=1) if average == "label" else gaps.sum(axis=1)
    np.testing.assert_allclose(out["ece"], expected, rtol=2e-5)


def _datasets(n, count, seed):
    out = Predictive(_model(top_label_model), num_samples=count)(
        jax.random.PRNGKey(seed), EDGES, ALPHA, SIGMA, TAU, n=n)
    for k in range(count):
        cell = np.asarray(out["cell"][k])
        p = np.asarray(out["p"][k], dtype=np.float64)
        lab, z, b = cell // (2 * M), (cell // M) % 2, cell % M
        counts = np.zeros((L, 2, M))
        np.add.at(counts, (lab, z, b), 1)
        n_lm = counts.sum(axis=1)
        s = np.zeros((L, M))
        np.add.at(s, (lab, b), p)
        mean = np.where(n_lm > 0, s / np.maximum(n_lm, 1), 0.5)
        ss = np.zeros((L, M))
        np.add.at(ss, (lab, b), (p - mean[lab, b]) ** 2)
        yield dict(label=lab, z=z, b=b, p=p), dict(counts=counts, mean_p=mean, ss_p=ss)


def test_collapsed_log_density_equals_per_observation():
    """Equal up to a constant that depends on the data only (3 data sets x 6
    parameter values from the prior; float32: tolerance 4e-5 of the scale)."""
    args = (EDGES, ALPHA, SIGMA, TAU)
    full = jax.jit(lambda d, x: log_density(_model(top_label_model), args, d, x)[0])
    coll = jax.jit(lambda d, x: log_density(_model(top_label_collapsed), args, d, x)[0])
    prior = Predictive(_model(top_label_model), num_samples=6)(jax.random.PRNGKey(11), *args, n=1)
    for obs, stats in _datasets(80, 3, seed=12):
        diffs, scale = [], 1.0
        for k in range(6):
            params = {"q": prior["q"][k], "mu": prior["mu"][k]}
            a, c = float(full(obs, params)), float(coll(stats, params))
            diffs.append(a - c)
            scale = max(scale, abs(a))
        assert np.ptp(diffs) <= 4e-5 * scale


def test_one_label_is_the_binned_collapsed_model():
    """L = 1: the top-label collapsed density is the binned one, term for term."""
    rng = np.random.default_rng(0)
    alpha = np.full((2, M), 0.3)
    sigma, tau = W / np.sqrt(12), W / np.sqrt(12) * 2
    counts = rng.integers(0, 20, size=(2, M)).astype(float)
    mean = EDGES[:-1] + rng.uniform(size=M) * W
    data = dict(counts=counts, mean_p=mean, ss_p=np.zeros(M))
    for k in range(4):
        q = rng.dirichlet(np.ones(2 * M)).astype(np.float32)
        mu = (EDGES[:-1] + rng.uniform(size=M) * W).astype(np.float32)
        top = log_density(functools.partial(top_label_collapsed, n_labels=1), (
            EDGES, alpha[None], sigma[None], tau[None]),
            dict(counts=counts[None], mean_p=mean[None], ss_p=np.zeros((1, M))),
            {"q": q, "mu": mu[None]})[0]
        binned = log_density(conjugate_collapsed, (EDGES, alpha, sigma, tau), data,
                             {"q": q, "mu": mu})[0]
        assert float(top) == pytest.approx(float(binned), rel=1e-5, abs=1e-3)


def test_bad_average():
    with pytest.raises(ValueError, match="average must be one of"):
        Predictive(_model(top_label_model, average="macro"), num_samples=1)(
            jax.random.PRNGKey(0), EDGES, ALPHA, SIGMA, TAU, n=1)
