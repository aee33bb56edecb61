"""bece._calibrate.bayes_temperature: the temperature's posterior by
quadrature against brute-force numerical integration (scipy's quad) of the
same density written out here; the mode and Laplace scale; the propagation
of T's posterior into the test-set ECE (its bookkeeping, and that it
reduces to the deployed calibrator's ECE when T is known).

Deterministic (fixed data and seeds); the only randomness is that of
bece.bayesian_ece's draws with a fixed seed, compared within Monte Carlo
error (z = 5: false alarm 6e-7 per comparison).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from scipy import integrate, optimize, special, stats

import bece
from bece.calibrate import TemperatureScaling, temperature_posterior, temperature_scaled_ece

from .helpers import logits_with_temperature


@pytest.fixture
def small():
    return logits_with_temperature(300, 4, np.random.default_rng(11), temperature=1.8)


def log_density(z, y, loc=0.0, scale=1.0):
    """Unnormalised log posterior of u = log T, written out with scipy."""
    def f(u):
        lp = special.log_softmax(z / np.exp(u), axis=1)[np.arange(y.size), y].sum()
        return lp + stats.norm.logpdf(u, loc, scale)
    return f


def test_quadrature_against_brute_force_integration(small):
    z, y = small
    post = temperature_posterior(z, y, input="logits")
    f = log_density(z, y)
    mode = np.log(post.mode)
    top = f(mode)

    def dens(u):
        return np.exp(f(u) - top)

    lo, hi = mode - 3, mode + 3  # the posterior sd of log T is ~0.06 here
    total = integrate.quad(dens, lo, hi, points=[mode], epsabs=1e-13, epsrel=1e-12, limit=200)[0]
    mean_t = integrate.quad(lambda u: np.exp(u) * dens(u), lo, hi, points=[mode], epsabs=1e-13,
                            epsrel=1e-12, limit=200)[0] / total
    assert post.mean == pytest.approx(mean_t, rel=1e-6)
    for q in (0.05, 0.5, 0.95):
        x = post.quantile(q)
        cdf = integrate.quad(dens, lo, np.log(x), epsabs=1e-13, epsrel=1e-12, limit=200)[0] / total
        assert cdf == pytest.approx(q, abs=2e-6)  # tol 1e-6 + grid error < 2e-7
    # the mode is the maximiser of the density, the Laplace sd its curvature
    ref = optimize.minimize_scalar(lambda u: -f(u), bracket=(mode - 0.1, mode + 0.1),
                                   options={"xtol": 1e-12})
    assert np.log(post.mode) == pytest.approx(ref.x, abs=1e-7)
    h = 1e-4
    curv = -(f(mode + h) - 2 * f(mode) + f(mode - h)) / h**2
    assert post.laplace_sd == pytest.approx(1 / np.sqrt(curv), rel=1e-5)
    assert post.n_passes < 80


def test_prior_dominates_without_data():
    """Logits that say nothing (two rows, opposite labels at T -> inf...):
    with a strong prior the posterior is the prior."""
    z = np.array([[0.0, 1e-3], [1e-3, 0.0]])
    post = temperature_posterior(z, [0, 0], input="logits", prior_loc=0.5, prior_scale=0.2)
    assert post.log_mean == pytest.approx(0.5, abs=1e-3)
    assert post.log_sd == pytest.approx(0.2, rel=1e-3)
    assert post.median == pytest.approx(np.exp(0.5), rel=1e-3)


def test_sample_and_interval(small):
    z, y = small
    post = temperature_posterior(z, y, input="logits")
    draws = post.sample(20_000, seed=3)
    lo, hi = post.interval(0.9)
    inside = np.mean((draws > lo) & (draws < hi))
    assert abs(inside - 0.9) < 5 * np.sqrt(0.09 / 20_000)


def fake_ece(y_true, y_prob, *, num_samples, seed):
    """An 'ECE posterior' whose draws are the mean top confidence: lets the
    bookkeeping be checked exactly."""
    class R:
        draws = np.full(num_samples, y_prob.max(axis=1).mean())
    return R()


def test_propagation_bookkeeping(small):
    z, y = small
    z_val, y_val, z_te, y_te = z[:200], y[:200], z[200:], y[200:]
    r = temperature_scaled_ece(z_val, y_val, z_te, y_te, ece=fake_ece, input="logits",
                               num_temperatures=7, num_samples=100)
    post = temperature_posterior(z_val, y_val, input="logits", bounds=(1e-2, 1e2))
    temps = post.quantile((np.arange(7) + 0.5) / 7)
    assert r.draws.shape == r.temperatures.shape == (100,)
    np.testing.assert_allclose(np.unique(r.temperatures), np.sort(temps), rtol=1e-12)
    counts = [int(np.sum(np.isclose(r.temperatures, t, rtol=1e-12))) for t in temps]
    assert counts == [15, 15, 14, 14, 14, 14, 14]
    conf = [special.softmax(z_te / t, axis=1).max(axis=1).mean() for t in temps]
    np.testing.assert_allclose(np.unique(r.draws), np.sort(conf), rtol=1e-12)
    t_hat = TemperatureScaling(input="logits").fit(z_val, y_val).temperature_
    assert r.temperature == t_hat
    assert r.deployed.draws[0] == pytest.approx(special.softmax(z_te / t_hat, axis=1).max(axis=1).mean())


def test_known_temperature_gives_the_deployed_ece(rng):
    """With a validation set so large that T is known to 1%, question (b)
    reduces to (a): the pooled draws' mean is the deployed posterior's mean
    within Monte Carlo error."""
    z, y = logits_with_temperature(60_000, 3, rng, temperature=1.5)
    ece = functools.partial(bece.bayesian_ece, n_bins=10)
    r = temperature_scaled_ece(z[:55_000], y[:55_000], z[55_000:], y[55_000:], ece=ece,
                               input="logits", num_temperatures=20, num_samples=4000, seed=1)
    assert r.posterior.log_sd < 0.01
    se = np.hypot(r.std, r.deployed.std) / np.sqrt(4000)
    assert abs(r.mean - r.deployed.mean) < 5 * se + 5e-4  # + the ECE's change over T's spread


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"ece": None}, "ece must be a callable"),
        ({"num_temperatures": 0}, "num_temperatures must be a positive integer"),
        ({"num_temperatures": 50, "num_samples": 10}, "exceeds num_samples"),
    ],
)
def test_bad_arguments(small, kwargs, message):
    z, y = small
    kwargs = {"ece": fake_ece, **kwargs}
    with pytest.raises(ValueError, match=message):
        temperature_scaled_ece(z[:200], y[:200], z[200:], y[200:], input="logits", **kwargs)
    with pytest.raises(ValueError, match="prior_scale must be finite and > 0"):
        temperature_posterior(z, y, prior_scale=0.0)
