"""bece.regression: PIT, calibration curve and scores, recalibration, Bayesian cal.

Deterministic code is checked against hand-computed cases and independent
implementations (scipy, numpy loops, np.interp, brentq, uncertainty-toolbox).

Stochastic tests use fixed seeds; their thresholds and false-alarm rates:

* KS tests of PIT uniformity: p-value threshold 1e-4 each (4 tests: 4e-4).
* Monte Carlo means: |mean - truth| <= 5 standard errors (5.7e-7 per comparison).
* Coverage of recalibrated 90% intervals: within 4 sd of 0.9, with
  sd = sqrt(0.09/n_test + 0.09/n_cal) (test points plus the calibration set's
  own noise, which moves R^{-1}); 6.3e-5 per check, 5 checks.
* "Recalibration lowers the test cal several-fold": ratio > 5 with 2000/2000
  points; over 2000 seeds the ratio never fell below 5 (min 11.2, median 112);
  with 1000/1000 points it did in 0.05% of runs (median 56).
* Coverage of the Bayesian credible intervals: 400 simulated data sets,
  within 4 binomial sd of 0.9 (plus the slow version with 4000).
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import tomllib
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import optimize
from scipy import stats as sps
from scipy.special import ndtr, ndtri

from bece.regression import DEFAULT_LEVELS, UCT_LEVELS, BayesianCalibrationError, Recalibrator, bayesian_calibration_error, calibration_curve, calibration_error, forecast_quantiles, mean_absolute_calibration_error, miscalibration_area, pit, root_mean_squared_calibration_error, sharpness
from bece.regression.metrics import observed_frequency

ROOT = Path(__file__).resolve().parents[2]
KS_ALPHA = 1e-4
Z = 5.0


def hetero(rng, n):
    """Heteroscedastic regression: x ~ U(-2, 2), y ~ N(2 sin x, (0.5 + 0.5|x|)^2)."""
    x = rng.uniform(-2, 2, n)
    mu = 2 * np.sin(x)
    sd = 0.5 + 0.5 * np.abs(x)
    return mu, sd, mu + sd * rng.normal(size=n)


def ut():
    pytest.importorskip("uncertainty_toolbox")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from uncertainty_toolbox import metrics_calibration

    return metrics_calibration


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
    import bece.regression.forecast as fc

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


BAD_PIT_VALUES = [[0.2, 1.2], [-0.1, 0.5], [0.2, np.nan], [], [[0.2, 0.3]]]
BAD_LEVELS = [[0.5, 0.2], [0.0, 0.5], [0.5, 1.0], [0.2, 0.2], [0.2, np.nan], [], [[0.1, 0.2]]]


@pytest.mark.parametrize(
    "fn", [calibration_curve, calibration_error, bayesian_calibration_error, mean_absolute_calibration_error]
)
@pytest.mark.parametrize("bad", BAD_PIT_VALUES)
def test_bad_pit_values_raise(fn, bad):
    with pytest.raises(ValueError, match="pit"):
        fn(bad)


@pytest.mark.parametrize("fn", [calibration_curve, calibration_error, bayesian_calibration_error])
@pytest.mark.parametrize("bad", BAD_LEVELS)
def test_bad_levels_raise(fn, bad):
    with pytest.raises(ValueError, match="levels"):
        fn([0.1, 0.6], bad)


def test_uct_style_metrics_accept_closed_grids_but_not_unsorted():
    assert mean_absolute_calibration_error([0.3], [0.0, 1.0]) == 0.0
    for fn in (mean_absolute_calibration_error, root_mean_squared_calibration_error, miscalibration_area):
        with pytest.raises(ValueError, match="levels"):
            fn([0.3], [0.5, 0.2])
        with pytest.raises(ValueError, match="levels"):
            fn([0.3], [-0.1, 0.2])
        with pytest.raises(ValueError, match="kind"):
            fn([0.3], kind="quantiles")
    with pytest.raises(ValueError, match="at least 2"):
        miscalibration_area([0.3], [0.5])


@pytest.mark.parametrize(
    "weights, match",
    [("counts", "weights"), ([1.0, -1.0], "weights"), ([1.0], "weights"), ([1.0, np.nan], "weights")],
)
def test_bad_weights(weights, match):
    with pytest.raises(ValueError, match=match):
        calibration_error([0.1, 0.6], [0.2, 0.5], weights=weights)
    with pytest.raises(ValueError, match=match):
        bayesian_calibration_error([0.1, 0.6], [0.2, 0.5], weights=weights)


def test_count_weights_need_a_pit_below_the_top_level():
    with pytest.raises(ValueError, match="count"):
        calibration_error([0.9, 0.95], [0.2, 0.5], weights="count")


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(alpha=0.0), "alpha"),
        (dict(alpha=[1.0, 1.0]), "alpha"),
        (dict(alpha=[1.0, -1.0, 1.0]), "alpha"),
        (dict(num_samples=0), "num_samples"),
        (dict(num_samples=2.5), "num_samples"),
        (dict(seed=-3), "seed"),
        (dict(seed="a"), "seed"),
    ],
)
def test_bayesian_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        bayesian_calibration_error([0.1, 0.6], [0.2, 0.5], **kwargs)


def test_sharpness_bad_inputs():
    with pytest.raises(ValueError, match="std"):
        sharpness(std=[1.0, 0.0])
    with pytest.raises(ValueError, match="samples"):
        sharpness(samples=[[1.0], [2.0]])
    with pytest.raises(ValueError, match="samples"):
        sharpness(samples=[[1.0, np.nan], [2.0, 3.0]])
    with pytest.raises(ValueError, match="exactly one"):
        sharpness(std=[1.0], samples=[[1.0, 2.0]])
    with pytest.raises(ValueError, match="exactly one"):
        sharpness()
    with pytest.raises(ValueError, match="root"):
        sharpness(std=[1.0], root="yes")


def test_recalibrator_bad_inputs():
    rec = Recalibrator()
    with pytest.raises(ValueError, match="not fitted"):
        rec.transform([0.5])
    with pytest.raises(ValueError, match="not fitted"):
        rec.quantile_level(0.5)
    with pytest.raises(ValueError, match="pit_cal"):
        rec.fit([0.2, 1.5])
    with pytest.raises(ValueError, match="pit_cal"):
        rec.fit([0.2, np.nan])
    rec.fit([0.2, 0.4, 0.7])
    with pytest.raises(ValueError, match="pit"):
        rec.transform([0.2, -0.5])
    with pytest.raises(ValueError, match="q"):
        rec.quantile_level(1.5)
    with pytest.raises(ValueError, match="q"):
        rec.gaussian_quantiles([0.0], [1.0], 1.0)
    with pytest.raises(ValueError, match="std"):
        rec.gaussian_quantiles([0.0], [0.0], 0.5)
    with pytest.raises(ValueError, match="prob"):
        rec.interval(1.0, mean=[0.0], std=[1.0])
    # a quantile forecast has no information outside its levels
    with pytest.raises(ValueError, match="level"):
        forecast_quantiles(0.01, quantiles=[[0.0, 1.0]], levels=[0.1, 0.9])
    with pytest.raises(ValueError, match="level"):
        forecast_quantiles(1.5, mean=[0.0], std=[1.0])


# ============================================================ curve, scores
def test_curve_and_cal_hand_computed():
    u = [0.1, 0.4, 0.4, 0.9]
    lv = [0.25, 0.5, 0.75]
    p, obs = calibration_curve(u, lv)
    np.testing.assert_array_equal(p, lv)
    np.testing.assert_array_equal(obs, [0.25, 0.75, 0.75])
    # gaps 0, -0.25, 0
    assert calibration_error(u, lv) == 0.0625
    # count weights (1, 3, 3)/7
    assert calibration_error(u, lv, weights="count") == pytest.approx(3 / 7 * 0.0625, rel=1e-15)
    assert calibration_error(u, lv, weights=[2.0, 1.0, 5.0]) == 0.0625
    # <= : a PIT equal to a level counts
    assert calibration_curve([0.5], [0.5])[1][0] == 1.0
    assert mean_absolute_calibration_error(u, lv) == pytest.approx(0.25 / 3, rel=1e-15)
    assert root_mean_squared_calibration_error(u, lv) == pytest.approx(np.sqrt(0.0625 / 3), rel=1e-15)
    # d = (0, 0.25, 0): two triangles of area 0.25 * 0.25 / 2
    assert miscalibration_area(u, lv) == pytest.approx(0.0625, rel=1e-15)
    # crossing: d = (0.1, -0.1) over width 1 -> two triangles, area 0.05
    p2 = np.array([0.0, 1.0])
    u2 = np.r_[np.zeros(1), np.full(9, 0.5)]  # obs(0) = 0.1, obs(1) = 1
    assert observed_frequency(u2, p2, "quantile")[0] == 0.1
    assert miscalibration_area(u2, p2) == pytest.approx(0.05 * 0 + (0.1**2) / (2 * 0.1), rel=1e-12)


def test_default_levels():
    np.testing.assert_allclose(DEFAULT_LEVELS, np.arange(1, 100) / 100)
    np.testing.assert_array_equal(UCT_LEVELS, np.linspace(0, 1, 100))
    p, _ = calibration_curve([0.3])
    np.testing.assert_array_equal(p, DEFAULT_LEVELS)


def test_curve_equals_naive_loop_with_ties(rng):
    samples = rng.normal(size=(300, 10))
    y = rng.normal(size=300) * 1.4
    u = pit(y, samples=samples)  # values k/10: many ties with the levels
    lv = np.array([0.1, 0.25, 0.3, 0.5, 0.9])
    naive = [sum(ui <= p for ui in u) / len(u) for p in lv]
    np.testing.assert_array_equal(calibration_curve(u, lv)[1], naive)
    naive_interval = [sum(abs(ui - 0.5) <= p / 2 for ui in u) / len(u) for p in lv]
    np.testing.assert_array_equal(observed_frequency(u, lv, "interval"), naive_interval)


def test_count_weights_and_rmsce_relations(rng):
    mu, sd, y = hetero(rng, 1000)
    u = pit(y, mean=mu + 0.3, std=sd * 1.5)
    p, obs = calibration_curve(u, DEFAULT_LEVELS)
    assert calibration_error(u, weights="count") == pytest.approx(
        calibration_error(u, weights=obs / obs.sum()), rel=1e-14
    )
    assert calibration_error(u) == pytest.approx(
        99 * root_mean_squared_calibration_error(u, DEFAULT_LEVELS) ** 2, rel=1e-12
    )
    assert calibration_error(u) == pytest.approx(np.sum((p - obs) ** 2), rel=1e-14)


def _uct_inputs(rng, n=3000):
    """Asymmetric miscalibration: forecast N(mu, sd^2), truth N(mu + 0.5 sd, (1.3 sd)^2)."""
    mu = rng.normal(size=n)
    sd = rng.uniform(0.5, 2.0, size=n)
    y = mu + 0.5 * sd + 1.3 * sd * rng.normal(size=n)
    return mu, sd, y


def test_interval_kind_equals_uncertainty_toolbox(rng):
    """uct's default prop_type="interval": equal to 1e-12 on its grid (any data)."""
    mc = ut()
    mu, sd, y = _uct_inputs(rng)
    u = pit(y, mean=mu, std=sd)
    for ours, theirs in [
        (mean_absolute_calibration_error, mc.mean_absolute_calibration_error),
        (root_mean_squared_calibration_error, mc.root_mean_squared_calibration_error),
        (miscalibration_area, mc.miscalibration_area),
    ]:
        a = ours(u, kind="interval")
        b = theirs(mu, sd, y, prop_type="interval")
        assert abs(a - b) <= 1e-12, (ours.__name__, a, b)
        assert a > 0.05  # a real miscalibration, not a trivial zero
    _, theirs = mc.get_proportion_lists_vectorized(mu, sd, y, prop_type="interval")
    np.testing.assert_allclose(observed_frequency(u, UCT_LEVELS, "interval"), theirs, atol=1e-12)


def test_uncertainty_toolbox_quantile_proportions_are_reflected(rng):
    """uct's prop_type="quantile" counts P(u >= 1 - p): on a shift (asymmetric
    miscalibration) our curve matches the truth and uct's the reflection.

    Truth: y - mu ~ N(0.5 sd, (1.3 sd)^2) under a forecast N(mu, sd^2), so
    P(u <= p) = Phi((Phi^{-1}(p) - 0.5) / 1.3). Our curve is within 5 binomial
    sd of it at every level (false alarm < 1e-4 over the 98 levels); uct's is
    0.28 off at p = 1/2 (|sd| < 0.01 there).
    """
    mc = ut()
    n = 20000
    mu, sd, y = _uct_inputs(rng, n)
    u = pit(y, mean=mu, std=sd)
    lv = UCT_LEVELS[1:-1]
    truth = ndtr((ndtri(lv) - 0.5) / 1.3)
    _, ours = calibration_curve(u, lv)
    se = np.sqrt(truth * (1 - truth) / n)
    assert np.all(np.abs(ours - truth) <= Z * se)
    _, theirs = mc.get_proportion_lists_vectorized(mu, sd, y, prop_type="quantile")
    theirs = np.asarray(theirs)[1:-1]
    reflected = 1 - ndtr((ndtri(1 - lv) - 0.5) / 1.3)
    assert np.all(np.abs(theirs - reflected) <= Z * se)
    mid = np.argmin(np.abs(lv - 0.5))
    assert abs(theirs[mid] - truth[mid]) > 0.25 and abs(ours[mid] - truth[mid]) < 0.02
    # exactly: uct(p) = 1 - #{u < 1 - p}/T, i.e. 1 - our curve at 1 - p (no u on a level)
    np.testing.assert_allclose(theirs, 1 - observed_frequency(u, 1 - lv, "quantile"), atol=1e-12)


def test_uct_summaries_equal_ours_on_its_symmetric_grid(rng):
    """Because uct's curve is our curve reflected through (1/2, 1/2) and its grid
    is symmetric, its MACE / RMSCE / area equal ours to 1e-12 even under the
    asymmetric miscalibration where the curves differ."""
    mc = ut()
    mu, sd, y = _uct_inputs(rng)
    u = pit(y, mean=mu, std=sd)
    for ours, theirs in [
        (mean_absolute_calibration_error, mc.mean_absolute_calibration_error),
        (root_mean_squared_calibration_error, mc.root_mean_squared_calibration_error),
        (miscalibration_area, mc.miscalibration_area),
    ]:
        assert abs(ours(u) - theirs(mu, sd, y, prop_type="quantile")) <= 1e-12


def test_on_a_symmetric_case_uct_quantile_curve_equals_ours(rng):
    """Residuals in +-pairs make the PIT set symmetric under u -> 1 - u; there the
    two definitions coincide and the curves agree to 1e-12."""
    mc = ut()
    r = rng.normal(size=1500) * 1.7
    mu = np.r_[np.zeros(1500), np.zeros(1500)]
    y = np.r_[r, -r]
    sd = np.ones(3000)
    _, theirs = mc.get_proportion_lists_vectorized(mu, sd, y, prop_type="quantile")
    _, ours = calibration_curve(pit(y, mean=mu, std=sd), UCT_LEVELS[1:-1])
    np.testing.assert_allclose(ours, np.asarray(theirs)[1:-1], atol=1e-12)
    assert np.max(np.abs(ours - UCT_LEVELS[1:-1])) > 0.1  # and it is miscalibrated


def test_area_formula_equals_uct_on_an_uneven_grid(rng):
    mc = ut()
    lv = np.sort(rng.uniform(size=30))
    u = rng.beta(2.0, 0.7, size=500)
    _, obs = _ut_curve_obs(u, lv)
    assert abs(miscalibration_area(u, lv) - mc.miscalibration_area_from_proportions(lv, obs)) <= 1e-12


def _ut_curve_obs(u, lv):
    return lv, observed_frequency(np.asarray(u), lv, "quantile")


def test_sharpness(rng):
    assert sharpness(std=[1.0, 3.0]) == 5.0
    assert sharpness(std=[1.0, 3.0], root=True) == np.sqrt(5.0)
    sd = rng.uniform(0.5, 2, 100)
    mc = ut()
    assert abs(sharpness(std=sd, root=True) - mc.sharpness(sd)) <= 1e-12
    s = rng.normal(size=(40, 7))
    naive = np.mean([sum((v - row.mean()) ** 2 for v in row) / 6 for row in s])
    assert sharpness(samples=s) == pytest.approx(naive, rel=1e-13)
    assert sharpness(dist=sps.norm(0, sd)) == pytest.approx(np.mean(sd**2), rel=1e-14)


# ============================================================ recalibration
def test_recalibrator_hand_computed():
    rec = Recalibrator().fit([0.2, 0.4, 0.4, 0.8])
    # points (0, 0), (0.2, 1/4), (0.4, 3/4), (0.8, 1), clipped at the ends
    np.testing.assert_allclose(
        rec.transform([0.0, 0.1, 0.3, 0.6, 0.9, 1.0]), [0, 0.125, 0.5, 0.875, 1, 1], rtol=1e-15
    )
    np.testing.assert_allclose(rec.quantile_level([0.125, 0.5, 0.9, 1.0]), [0.1, 0.3, 0.64, 0.8], rtol=1e-14)
    assert rec.quantile_level(0.0) == 0.0
    assert rec.n_ == 4 and "n_=4" in repr(rec)
    # PITs at exactly 0 keep their mass: R(0) = P_hat(0)
    rec0 = Recalibrator().fit([0.0, 0.0, 0.5, 0.9])
    assert rec0.transform([0.0])[0] == 0.5
    assert rec0.quantile_level(0.3) == 0.0


def test_recalibrator_is_the_interpolated_ecdf_and_its_inverse(rng):
    u = rng.beta(0.6, 0.6, size=500)
    rec = Recalibrator().fit(u)
    xs = np.r_[0.0, np.sort(u)]
    ys = np.r_[0.0, np.arange(1, 501) / 500]
    grid = np.linspace(0, 1, 1001)
    np.testing.assert_allclose(rec.transform(grid), np.interp(grid, xs, ys), atol=1e-14)
    q = np.linspace(0.001, 1, 999)
    np.testing.assert_allclose(rec.transform(rec.quantile_level(q)), q, atol=1e-12)
    assert np.all(rec.quantile_level(rec.transform(u)) <= u + 1e-12)


def test_gaussian_recalibrated_quantiles_solve_R_of_F_equals_q(rng):
    """Independent check: brentq on R(Phi((y - mu)/sd)) = q."""
    mu, sd, y = hetero(rng, 300)
    rec = Recalibrator().fit(pit(y, mean=mu, std=0.6 * sd))
    qs = np.array([0.05, 0.3, 0.5, 0.95])
    got = rec.gaussian_quantiles(mu[:5], 0.6 * sd[:5], qs)
    assert got.shape == (5, 4)
    for t in range(5):
        for k, q in enumerate(qs):

            def f(v, t=t, q=q):
                return rec.transform([ndtr((v - mu[t]) / (0.6 * sd[t]))])[0] - q

            root = optimize.brentq(f, mu[t] - 20 * sd[t], mu[t] + 20 * sd[t], xtol=1e-13)
            assert got[t, k] == pytest.approx(root, abs=1e-9)
    assert rec.gaussian_quantiles(mu[:5], 0.6 * sd[:5], 0.5).shape == (5,)


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


def test_recalibrating_an_over_confident_forecaster_lowers_test_cal(rng):
    """std x 0.5 on heteroscedastic data, 2000 calibration / 2000 test points:
    the test cal drops more than 5-fold (over 2000 seeds: median ratio 112,
    min 11.2, never below 5)."""
    mu, sd, y = hetero(rng, 4000)
    cal, test = slice(0, 2000), slice(2000, 4000)
    u = pit(y, mean=mu, std=0.5 * sd)
    rec = Recalibrator().fit(u[cal])
    before = calibration_error(u[test])
    after = calibration_error(rec.transform(u[test]))
    assert before > 5 * after
    assert before > 0.5  # far from calibrated to begin with


FORMS = ["gaussian", "dist", "samples", "samples_randomized", "quantiles"]


@pytest.mark.parametrize("form", FORMS)
def test_recalibrated_central_90_intervals_cover_90_percent(rng, form):
    """Coverage within 4 sd of 0.9, sd = sqrt(0.09/2000 + 0.09/2000) = 0.0095
    (false alarm 6.3e-5 per form)."""
    n = 4000
    mu, sd, y = hetero(rng, n)
    cal, test = slice(0, 2000), slice(2000, n)
    if form == "gaussian":
        fc = dict(mean=mu, std=0.5 * sd)
    elif form == "dist":
        fc = dict(dist=sps.laplace(loc=mu, scale=0.4 * sd))
    elif form.startswith("samples"):  # std x 0.7: R^{-1}(0.05) ~ 0.01 stays above 1/S
        fc = dict(samples=mu[:, None] + 0.7 * sd[:, None] * rng.normal(size=(n, 400)))
    else:  # quantiles of a milder over-confident Gaussian, fine grid
        lv = np.r_[0.002, np.arange(1, 100) / 100, 0.998]
        fc = dict(quantiles=mu[:, None] + 0.8 * sd[:, None] * ndtri(lv)[None, :], levels=lv)

    def part(sl):
        return {k: (v if k == "levels" or k == "dist" else v[sl]) for k, v in fc.items()}

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no resolution warning in these cases
        if form == "dist":
            u = pit(y, **fc)
            rec = Recalibrator().fit(u[cal])
            lo, hi = rec.interval(0.9, dist=sps.laplace(loc=mu[test], scale=0.4 * sd[test]))
        else:
            u = pit(y, randomize=form == "samples_randomized", seed=0, **fc)
            rec = Recalibrator().fit(u[cal])
            lo, hi = rec.interval(0.9, **part(test))
    base_lo, base_hi = (
        forecast_quantiles([0.05, 0.95], **part(test)).T
        if form != "dist"
        else forecast_quantiles([0.05, 0.95], dist=sps.laplace(loc=mu[test], scale=0.4 * sd[test])).T
    )
    yt = y[test]
    cover = np.mean((lo < yt) & (yt <= hi))
    base = np.mean((base_lo < yt) & (yt <= base_hi))
    sd_cover = np.sqrt(0.09 / 2000 + 0.09 / 2000)
    assert abs(cover - 0.9) <= 4 * sd_cover, (cover, base)
    assert base < 0.86  # the base forecaster under-covers clearly (0.59 to 0.81)


def test_sample_forecasts_too_narrow_for_their_samples_warn(rng):
    """std x 0.5 with S = 400: R^{-1}(0.05) ~ Phi(-3.3) ~ 5e-4 < 1/S; the quantile
    is the smallest sample, the interval under-covers, and a warning says so."""
    n = 4000
    mu, sd, y = hetero(rng, n)
    s = mu[:, None] + 0.5 * sd[:, None] * rng.normal(size=(n, 400))
    rec = Recalibrator().fit(pit(y[:2000], samples=s[:2000], randomize=True, seed=1))
    with pytest.warns(RuntimeWarning, match="draw more than"):
        lo, hi = rec.interval(0.9, samples=s[2000:])
    np.testing.assert_array_equal(lo, s[2000:].min(axis=1))
    assert np.mean((lo < y[2000:]) & (y[2000:] <= hi)) < 0.9 - 4 * np.sqrt(0.09 / 1000)
    rec0 = Recalibrator().fit(pit(y[:2000], samples=s[:2000]))  # PITs of exactly 0 and 1
    with pytest.warns(RuntimeWarning, match="exactly 0 or 1"):
        rec0.interval(0.9, samples=s[2000:])


# ===================================================== Bayesian cal score
def test_bayesian_counts_prior_and_plugin_hand_computed():
    u = [0.05, 0.1, 0.3, 0.95]
    r = bayesian_calibration_error(u, [0.1, 0.5], num_samples=100, seed=0)
    np.testing.assert_array_equal(r.counts, [2, 1, 1])
    assert r.counts.dtype == np.int64
    np.testing.assert_allclose(r.alpha, [0.1, 0.4, 0.5], rtol=1e-15)
    np.testing.assert_array_equal(r.observed, [0.5, 0.75])
    assert r.plugin == pytest.approx(0.16 + 0.0625, rel=1e-15)
    assert r.plugin == calibration_error(u, [0.1, 0.5])
    assert r.n == 4 and r.curve.shape == (100, 2) and r.draws.shape == (100,)
    # cal of each draw from its own curve
    np.testing.assert_allclose(r.draws, ((np.array([0.1, 0.5]) - r.curve) ** 2).sum(axis=1), rtol=1e-14)
    r2 = bayesian_calibration_error(u, [0.1, 0.5], alpha=[1.0, 2.0, 3.0], num_samples=10, seed=0)
    np.testing.assert_array_equal(r2.alpha, [1.0, 2.0, 3.0])
    r3 = bayesian_calibration_error(u, [0.1, 0.5], alpha=4.0, num_samples=10, seed=0)
    np.testing.assert_allclose(r3.alpha, [0.4, 1.6, 2.0], rtol=1e-15)


def test_posterior_at_a_level_is_beta_whatever_the_grid(rng):
    """C_j ~ Beta(a p_j + N_j, a (1 - p_j) + T - N_j): KS p > 1e-4 at each of
    3 levels (false alarm 3e-4), means within 5 se; the Beta parameters at
    p = 0.5 are identical on two different grids."""
    u = rng.beta(2.0, 1.5, size=200)
    lv = np.array([0.1, 0.5, 0.8])
    r = bayesian_calibration_error(u, lv, num_samples=20_000, seed=4)
    n_le = np.array([np.sum(u <= p) for p in lv])
    for j, p in enumerate(lv):
        a, b = p + n_le[j], (1 - p) + 200 - n_le[j]
        assert sps.kstest(r.curve[:, j], sps.beta(a, b).cdf).pvalue > KS_ALPHA
        se = r.curve[:, j].std() / np.sqrt(r.num_samples)
        assert abs(r.curve[:, j].mean() - a / (a + b)) <= Z * se
    fine = bayesian_calibration_error(u, np.linspace(0.05, 0.95, 19), num_samples=10, seed=0)
    for res in (r, fine):
        j = int(np.argmin(np.abs(res.levels - 0.5)))
        conc = res.alpha + res.counts
        assert conc[: j + 1].sum() == pytest.approx(0.5 + np.sum(u <= 0.5), rel=1e-14)
        assert conc.sum() == pytest.approx(201.0, rel=1e-14)


@pytest.mark.parametrize("weights", [None, "count", np.array([0.5, 2.0, 1.0, 0.1])])
def test_cal_draws_match_an_independent_dirichlet_sampler(rng, weights):
    """scipy.stats.dirichlet draws of the same posterior: two-sample KS p > 1e-4
    and means within 5 se of each other (false alarm ~1e-4 per case)."""
    u = ndtr(rng.normal(size=150) * 1.5 + 0.3)
    lv = np.array([0.1, 0.3, 0.6, 0.9])
    r = bayesian_calibration_error(u, lv, weights=weights, num_samples=20_000, seed=9)
    cells = np.searchsorted(lv, u, side="left")
    counts = np.bincount(cells, minlength=5)
    conc = np.diff(np.r_[0.0, lv, 1.0]) + counts
    pi = sps.dirichlet(conc).rvs(size=20_000, random_state=np.random.default_rng(10))
    c = np.cumsum(pi, axis=1)[:, :4]
    if weights is None:
        w = np.ones(4)
    elif isinstance(weights, str):
        w = c / c.sum(axis=1, keepdims=True)
    else:
        w = weights
    ref = np.sum(w * (lv - c) ** 2, axis=1)
    assert sps.ks_2samp(r.draws, ref).pvalue > KS_ALPHA
    se = np.sqrt(r.draws.var() / r.draws.size + ref.var() / ref.size)
    assert abs(r.draws.mean() - ref.mean()) <= Z * se


def _coverage(num_sets, seed0):
    lv = np.arange(1, 20) / 20
    truth_c = ndtr(ndtri(lv) - 0.3)
    pop = np.sum((lv - truth_c) ** 2)
    hit, band = [], []
    for r in range(num_sets):
        g = np.random.default_rng(seed0 + r)
        u = ndtr(g.normal(size=500) + 0.3)  # forecast N(0,1), truth N(0.3, 1)
        b = bayesian_calibration_error(u, lv, num_samples=2000, seed=g)
        lo, hi = b.interval(0.9)
        hit.append(lo <= pop <= hi)
        band_lo, band_hi = b.curve_interval(0.9)
        band.append(np.mean((band_lo <= truth_c) & (truth_c <= band_hi)))
    return np.mean(hit), np.mean(band)


def test_credible_intervals_cover_the_population_values():
    """400 data sets (T = 500, shift 0.3): the 90% interval of cal covers the
    population cal, and the pointwise band the true curve, 90% +- 4 binomial sd
    (sd 0.015; false alarm 6e-5 each). Measured: 0.915 / 0.904."""
    hit, band = _coverage(400, 0)
    assert abs(hit - 0.9) <= 4 * np.sqrt(0.09 / 400)
    assert abs(band - 0.9) <= 4 * np.sqrt(0.09 / 400)


@pytest.mark.slow
def test_credible_intervals_cover_the_population_values_long():
    """As above with 4000 data sets (sd 0.0047, tolerance 4 sd). Measured: 0.903 / 0.903."""
    hit, band = _coverage(4000, 10_000)
    assert abs(hit - 0.9) <= 4 * np.sqrt(0.09 / 4000)
    assert abs(band - 0.9) <= 4 * np.sqrt(0.09 / 4000)


def test_bayesian_result_api(rng):
    u = ndtr(rng.normal(size=300) * 1.3)
    lv = np.array([0.1, 0.5, 0.9])
    r = bayesian_calibration_error(u, lv, num_samples=4000, seed=1)
    assert isinstance(r, BayesianCalibrationError)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.plugin = 0.0
    assert r.num_samples == 4000
    assert r.mean == pytest.approx(np.mean(r.draws)) and r.std == pytest.approx(np.std(r.draws, ddof=1))
    np.testing.assert_allclose(r.interval(0.8), np.quantile(r.draws, [0.1, 0.9]))
    lo, hi = r.curve_interval(0.9)
    np.testing.assert_allclose(lo, np.quantile(r.curve, 0.05, axis=0))
    np.testing.assert_allclose(hi, np.quantile(r.curve, 0.95, axis=0))
    import arviz as az

    np.testing.assert_allclose(r.hdi(0.9), az.hdi(r.draws, hdi_prob=0.9))
    with pytest.raises(ValueError, match="prob"):
        r.interval(1.5)
    idata = r.to_inference_data()
    assert idata.posterior["cal"].dims == ("chain", "draw")
    assert idata.posterior["curve"].dims == ("chain", "draw", "level")
    np.testing.assert_array_equal(idata.posterior["level"].values, lv)
    np.testing.assert_array_equal(idata.posterior["curve"].values[0], r.curve)
    np.testing.assert_array_equal(idata.constant_data["counts"].values, r.counts)
    np.testing.assert_array_equal(idata.constant_data["edges"].values, [0, 0.1, 0.5, 0.9, 1])
    table = r.summary(kind="stats")
    assert list(table.index[:2]) == ["cal", "curve[0.1]"]
    assert "BayesianCalibrationError(mean=" in repr(r)
    # same seed, same draws; a Generator is accepted
    np.testing.assert_array_equal(
        bayesian_calibration_error(u, lv, num_samples=50, seed=3).draws,
        bayesian_calibration_error(u, lv, num_samples=50, seed=3).draws,
    )
    g = np.random.default_rng(3)
    np.testing.assert_array_equal(
        bayesian_calibration_error(u, lv, num_samples=50, seed=g).draws,
        bayesian_calibration_error(u, lv, num_samples=50, seed=3).draws,
    )


def test_posterior_concentrates_on_the_plugin_for_large_t(rng):
    """T = 2e5: the posterior sd of cal equals the delta-method sd
    sqrt(g' V g / T), g_j = 2 (p_j - p_hat_j), V_jk = min(p_hat_j, p_hat_k) - p_hat_j p_hat_k,
    within 10% (the sd estimate from 4000 draws has relative se 1.1%), and the
    mean is within 5 posterior sd of the plug-in."""
    t = 200_000
    u = ndtr(rng.normal(size=t) * 1.2)
    r = bayesian_calibration_error(u, num_samples=4000, seed=0)
    ph, p = r.observed, r.levels
    g = 2 * (p - ph)
    v = np.minimum.outer(ph, ph) - np.outer(ph, ph)
    delta_sd = np.sqrt(g @ v @ g / t)
    assert r.std == pytest.approx(delta_sd, rel=0.1)
    assert abs(r.mean - r.plugin) <= 5 * r.std


# ================================================================ package
def test_import_is_light():
    code = (
        "import sys, bece.regression; print(','.join(m for m in "
        "('sklearn', 'arviz', 'matplotlib', 'jax', 'numpyro', 'pandas') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_pyproject_ships_the_regression_package():
    """bece.regression is a subpackage; setuptools' explicit package list must name it."""
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "bece.regression" in cfg["tool"]["setuptools"]["packages"]
