"""bece._regression.forecast: the PIT of Gaussian, scipy, sample and quantile
forecasts, and forecast quantiles.

Deterministic code is checked against hand-computed cases and independent
implementations (scipy, numpy loops, np.interp).

KS tests of PIT uniformity use a p-value threshold of 1e-4 each (4 tests: 4e-4).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps
from scipy.special import ndtr, ndtri

from bece.regression import calibration_curve, forecast_quantiles, pit

from .conftest import hetero

KS_ALPHA = 1e-4


# =================================================================== PIT
def test_gaussian_pit_hand_and_scipy(rng):
    u = pit([0.0, 1.0, -2.0], mean=[0.0, 0.0, 0.0], std=[1.0, 1.0, 2.0])
    np.testing.assert_allclose(u, [0.5, 0.8413447460685429, 0.15865525393145707], rtol=1e-15)
    mu, sd, y = hetero(rng, 500)
    np.testing.assert_allclose(pit(y, mean=mu, std=sd), sps.norm.cdf(y, mu, sd), rtol=1e-14, atol=1e-300)
    # scalars broadcast
    np.testing.assert_array_equal(
        pit(y, mean=0.0, std=2.0), pit(y, mean=np.zeros(500), std=np.full(500, 2.0))
    )


def test_dist_pit_is_the_cdf(rng):
    loc = rng.normal(size=300)
    y = loc + rng.standard_t(4, size=300)
    d = sps.t(df=4, loc=loc, scale=1.5)
    np.testing.assert_array_equal(pit(y, dist=d), [sps.t.cdf(v, 4, m, 1.5) for v, m in zip(y, loc)])
    np.testing.assert_array_equal(pit(y, dist=sps.norm(0, 2)), sps.norm.cdf(y, 0, 2))


def test_sample_pit_hand_and_naive_loop(rng):
    s = np.array([[1.0, 2.0, 2.0, 3.0], [5.0, 6.0, 7.0, 8.0]])
    np.testing.assert_array_equal(pit([2.0, 4.0], samples=s), [0.75, 0.0])
    # randomised rank: (#{s < y} + V (#{s = y} + 1)) / (S + 1)
    v = np.random.default_rng(7).random(2)
    np.testing.assert_allclose(
        pit([2.0, 4.0], samples=s, randomize=True, seed=7), [(1 + 3 * v[0]) / 5, (0 + v[1]) / 5], rtol=1e-15
    )
    # integer data: many ties
    samples = rng.poisson(3.0, size=(200, 37)).astype(float)
    y = rng.poisson(3.0, size=200).astype(float)
    naive = [sum(si <= yi for si in row) / 37 for yi, row in zip(y, samples)]
    np.testing.assert_array_equal(pit(y, samples=samples), naive)
    v = np.random.default_rng(3).random(200)
    naive_r = [
        (sum(si < yi for si in row) + vi * (sum(si == yi for si in row) + 1)) / 38
        for yi, row, vi in zip(y, samples, v)
    ]
    np.testing.assert_allclose(pit(y, samples=samples, randomize=True, seed=3), naive_r, rtol=1e-15)


def test_sample_pit_chunking_does_not_change_the_result(rng, monkeypatch):
    import bece._regression.forecast as fc

    samples = rng.normal(size=(301, 50))
    y = rng.normal(size=301)
    whole = pit(y, samples=samples)
    monkeypatch.setattr(fc, "_CHUNK_ELEMENTS", 7 * 50)  # 7 rows per chunk
    np.testing.assert_array_equal(pit(y, samples=samples), whole)


def test_quantile_pit_hand():
    q = [[1.0, 2.0, 4.0]]
    lv = [0.1, 0.5, 0.9]
    got = [pit([y], quantiles=q, levels=lv)[0] for y in (0.5, 1.0, 1.5, 2.5, 4.0, 5.0)]
    np.testing.assert_allclose(got, [0.0, 0.1, 0.3, 0.6, 0.9, 1.0], rtol=1e-15)
    # coinciding quantiles are a jump of F: right-continuous value, randomised over the jump
    q2, lv2 = [[1.0, 2.0, 2.0, 4.0]], [0.1, 0.3, 0.6, 0.9]
    assert pit([2.0], quantiles=q2, levels=lv2)[0] == 0.6
    v = np.random.default_rng(5).random(1)[0]
    assert pit([2.0], quantiles=q2, levels=lv2, randomize=True, seed=5)[0] == pytest.approx(0.3 + 0.3 * v)
    # tails, randomised: U(0, tau_1) and U(tau_K, 1)
    v = np.random.default_rng(6).random(2)
    np.testing.assert_allclose(
        pit([0.0, 9.0], quantiles=q * 2, levels=lv, randomize=True, seed=6), [0.1 * v[0], 0.9 + 0.1 * v[1]]
    )


def test_quantile_pit_equals_np_interp_inside_and_curve_is_exact_at_levels(rng):
    n, lv = 400, np.array([0.05, 0.2, 0.5, 0.7, 0.95])
    q = np.sort(rng.normal(size=(n, lv.size)) * 2, axis=1)
    y = rng.normal(size=n) * 2
    u = pit(y, quantiles=q, levels=lv)
    inside = (y >= q[:, 0]) & (y <= q[:, -1])
    ref = np.array([np.interp(yi, qi, lv) for yi, qi in zip(y, q)])
    np.testing.assert_allclose(u[inside], ref[inside], rtol=1e-14)
    assert np.all(u[y < q[:, 0]] == 0) and np.all(u[y > q[:, -1]] == 1)
    # {u <= tau_k} == {y <= q_k} exactly at the forecast's levels
    np.testing.assert_array_equal(calibration_curve(u, lv)[1], np.mean(y[:, None] <= q, axis=0))


def test_inputs_from_jax_float32_give_the_float64_answer(rng):
    jnp = pytest.importorskip("jax.numpy")
    y = rng.normal(size=50).astype(np.float32)
    s = rng.normal(size=(50, 20)).astype(np.float32)
    np.testing.assert_array_equal(
        pit(jnp.asarray(y), samples=jnp.asarray(s)), pit(y.astype(float), samples=s.astype(float))
    )
    got = pit(jnp.asarray(y), mean=jnp.zeros(50), std=jnp.ones(50))
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, ndtr(y.astype(np.float64)))


def _ks(u):
    return sps.kstest(u, "uniform").pvalue


def test_pit_of_correct_forecasters_is_uniform(rng):
    """KS p-value > 1e-4 for four correct forecasters (false-alarm rate 4e-4),
    and the same test rejects an over-confident one (it can fail).

    The quantile forecast's PIT is exactly uniform only at its levels (linear
    interpolation in between); over 300 seeds at n = 5000 its KS p-values fell
    below 0.05 in 6.3% of runs (min 0.0018), the randomised sample PIT's in 4.3%."""
    n = 5000
    mu, sd, y = hetero(rng, n)
    assert _ks(pit(y, mean=mu, std=sd)) > KS_ALPHA
    # Student t forecaster
    yt = mu + sd * rng.standard_t(5, size=n)
    assert _ks(pit(yt, dist=sps.t(5, loc=mu, scale=sd))) > KS_ALPHA
    # integer targets and samples (ties): the randomised rank is exactly uniform
    lam = rng.uniform(1, 6, n)
    yc = rng.poisson(lam).astype(float)
    sc = rng.poisson(lam[:, None], size=(n, 100)).astype(float)
    assert _ks(pit(yc, samples=sc, randomize=True, seed=1)) > KS_ALPHA
    # quantile forecast of the correct Gaussian at 19 levels, randomised tails
    lv = np.arange(1, 20) / 20
    qf = mu[:, None] + sd[:, None] * ndtri(lv)[None, :]
    assert _ks(pit(y, quantiles=qf, levels=lv, randomize=True, seed=2)) > KS_ALPHA
    # power: std x 0.5
    assert _ks(pit(y, mean=mu, std=0.5 * sd)) < 1e-10
    # without the randomised rank the integer case is far from uniform
    assert _ks(pit(yc, samples=sc)) < 1e-10


def test_samples_in_numpyro_orientation_get_a_hint(rng):
    with pytest.raises(ValueError, match=r"samples.*transpose"):
        pit(rng.normal(size=5), samples=rng.normal(size=(100, 5)))


# ================================================================ bad inputs
BAD_PIT_CALLS = [
    (dict(mean=[0.0, 0.0], std=[1.0, 0.0]), "std"),
    (dict(mean=[0.0, 0.0], std=[1.0, -1.0]), "std"),
    (dict(mean=[0.0, np.nan], std=[1.0, 1.0]), "mean"),
    (dict(mean=[0.0, 0.0, 0.0], std=[1.0, 1.0]), "mean"),
    (dict(mean=[0.0, 0.0], std=[1.0, 1.0, 1.0]), "std"),
    (dict(mean=[0.0, 0.0]), "std"),
    (dict(samples=[[0.0, np.nan], [1.0, 2.0]]), "samples"),
    (dict(samples=[[0.0, 1.0]]), "samples"),
    (dict(samples=[0.0, 1.0]), "samples"),
    (dict(quantiles=[[0.0, 1.0], [0.0, 1.0]], levels=[0.5, 0.2]), "levels"),
    (dict(quantiles=[[0.0, 1.0], [0.0, 1.0]], levels=[0.0, 0.5]), "levels"),
    (dict(quantiles=[[0.0, 1.0], [0.0, 1.0]], levels=[0.5, 1.0]), "levels"),
    (dict(quantiles=[[0.0, 1.0], [0.0, 1.0]], levels=[0.2, 0.2]), "levels"),
    (dict(quantiles=[[0.0, 1.0], [2.0, 1.0]], levels=[0.2, 0.8]), "quantiles"),
    (dict(quantiles=[[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]], levels=[0.2, 0.8]), "quantiles"),
    (dict(quantiles=[[0.0, 1.0]], levels=[0.2, 0.8]), "quantiles"),
    (dict(quantiles=[[0.0, 1.0], [0.0, 1.0]]), "levels"),
    (dict(dist=sps.poisson(3.0)), "dist"),
    (dict(dist="norm"), "dist"),
    (dict(dist=sps.norm(0.0, -1.0)), "dist"),
    (dict(dist=sps.norm([0.0, 0.0, 0.0], 1.0)), "dist"),
    (dict(), "exactly one forecast"),
    (dict(mean=[0.0, 0.0], std=[1.0, 1.0], samples=[[0.0], [1.0]]), "exactly one forecast"),
    (dict(samples=[[0.0], [1.0]], randomize=True), "seed"),
    (dict(samples=[[0.0], [1.0]], randomize=1, seed=0), "randomize"),
    (dict(samples=[[0.0], [1.0]], randomize=True, seed=-1), "seed"),
]


@pytest.mark.parametrize("kwargs, name", BAD_PIT_CALLS)
def test_pit_bad_inputs_raise_naming_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=name):
        pit([0.5, 1.5], **kwargs)


@pytest.mark.parametrize("y", [[0.0, np.nan], [0.0, np.inf], [], [[0.0, 1.0]], ["a", "b"]])
def test_pit_bad_y(y):
    with pytest.raises(ValueError, match="y"):
        pit(y, mean=0.0, std=1.0)


# ======================================================= forecast quantiles
def test_forecast_quantiles_hand_and_against_numpy(rng):
    np.testing.assert_allclose(
        forecast_quantiles([0.1, 0.3, 0.7], quantiles=[[1.0, 2.0, 4.0]], levels=[0.1, 0.5, 0.9]),
        [[1.0, 1.5, 3.0]],
    )
    s = rng.normal(size=(20, 33))
    lv = np.array([0.0, 0.02, 0.5, 0.97, 1.0])
    naive = [[min(v for v in row if np.mean(row <= v) >= t) if t > 0 else row.min() for t in lv] for row in s]
    np.testing.assert_array_equal(forecast_quantiles(lv, samples=s), naive)
    np.testing.assert_allclose(forecast_quantiles(lv[1:-1], mean=[1.0], std=[2.0]), [1 + 2 * ndtri(lv[1:-1])])
    assert np.all(np.isinf(forecast_quantiles([0.0, 1.0], mean=[0.0], std=[1.0])))
    np.testing.assert_allclose(
        forecast_quantiles([0.1, 0.9], dist=sps.gamma(2.0, scale=[1.0, 3.0])),
        [sps.gamma.ppf([0.1, 0.9], 2.0, scale=1.0), sps.gamma.ppf([0.1, 0.9], 2.0, scale=3.0)],
    )


@pytest.mark.parametrize("seed", [-5, "x", True, 1.5])
def test_an_invalid_seed_is_refused_even_when_unused(seed):
    """Robustness #26: pit ignored seed=-5 or seed='x' when it was not needed."""
    y = np.array([0.1, -0.3, 1.2])
    with pytest.raises(ValueError, match="seed must be a non-negative int or a numpy Generator"):
        pit(y, mean=0.0, std=1.0, seed=seed)
    with pytest.raises(ValueError, match="seed must be a non-negative int or a numpy Generator"):
        pit(y, samples=np.zeros((3, 4)), seed=seed)
    assert np.array_equal(pit(y, mean=0.0, std=1.0, seed=3), pit(y, mean=0.0, std=1.0))


# ============================================ autocorrelated sample forecasts
def _ar1(rng, n, size, rho):
    e = rng.normal(size=(n, size))
    x = np.empty((n, size))
    x[:, 0] = e[:, 0]
    for t in range(1, size):
        x[:, t] = rho * x[:, t - 1] + np.sqrt(1 - rho**2) * e[:, t]
    return x


def test_autocorrelated_draws_warn_with_their_effective_sample_size(rng):
    """AR(1) draws with rho = 0.8: ESS = S (1 - rho) / (1 + rho) = 44 of S = 400;
    the warning's estimate is within 30% (ArviZ's bulk ESS over 256 rows has a
    relative sd of a few per cent) and names the thinning."""
    import re

    from bece.regression import CorrelatedSamplesWarning

    y = rng.normal(size=300)
    with pytest.warns(CorrelatedSamplesWarning, match=r"samples\[:, ::\d+\]") as rec:
        pit(y, samples=_ar1(rng, 300, 400, 0.8), randomize=True, seed=0)
    ess = float(re.search(r"effective sample size about (\d+)", str(rec[0].message)).group(1))
    assert abs(ess - 400 * 0.2 / 1.8) <= 0.3 * 400 * 0.2 / 1.8


def test_independent_or_sorted_draws_do_not_warn(rng):
    import warnings

    y = rng.normal(size=300)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pit(y, samples=rng.normal(size=(300, 400)))
        pit(y, samples=np.sort(_ar1(rng, 300, 400, 0.95), axis=1))  # sorted: order is not the sampler's
        pit(y, samples=_ar1(rng, 300, 400, 0.2))  # ESS 0.67 S: above the warning's S / 2
        pit(y, samples=rng.normal(size=(300, 10)))  # too few draws to judge
