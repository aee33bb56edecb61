"""bece._regression.metrics: the calibration curve, the cal score,
uncertainty-toolbox's summaries (MACE, RMSCE, miscalibration area) and sharpness.

Deterministic code is checked against hand-computed cases and independent
implementations (numpy loops, uncertainty-toolbox). Monte Carlo comparisons
allow Z = 5 binomial standard errors (5.7e-7 per comparison).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats as sps
from scipy.special import ndtr, ndtri

from bece._regression.metrics import DEFAULT_LEVELS, UCT_LEVELS, observed_frequency
from bece.regression import (
    bayesian_calibration_error,
    calibration_curve,
    calibration_error,
    mean_absolute_calibration_error,
    miscalibration_area,
    pit,
    root_mean_squared_calibration_error,
    sharpness,
)

from .conftest import hetero

Z = 5.0


def ut():
    pytest.importorskip("uncertainty_toolbox")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from uncertainty_toolbox import metrics_calibration

    return metrics_calibration


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


# ============================================================ curve, scores
def test_curve_and_cal_hand_computed():
    u = [0.1, 0.4, 0.4, 0.9]
    lv = [0.25, 0.5, 0.75]
    p, obs = calibration_curve(u, lv)
    np.testing.assert_array_equal(p, lv)
    np.testing.assert_array_equal(obs, [0.25, 0.75, 0.75])
    # gaps 0, -0.25, 0: the mean over the 3 levels; Kuleshov et al.'s sum
    assert calibration_error(u, lv) == pytest.approx(0.0625 / 3, rel=1e-15)
    assert calibration_error(u, lv, weights="mean") == calibration_error(u, lv)
    assert calibration_error(u, lv, weights="sum") == 0.0625
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
        root_mean_squared_calibration_error(u, DEFAULT_LEVELS) ** 2, rel=1e-12
    )
    assert calibration_error(u, weights="sum") == pytest.approx(
        99 * root_mean_squared_calibration_error(u, DEFAULT_LEVELS) ** 2, rel=1e-12
    )
    assert calibration_error(u) == pytest.approx(np.mean((p - obs) ** 2), rel=1e-14)
    assert calibration_error(u, weights="sum") == pytest.approx(np.sum((p - obs) ** 2), rel=1e-14)


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


def test_the_mean_is_comparable_across_level_grids():
    """The default calibration error is the mean squared gap over the levels:
    for a forecaster with half the truth's sd (C(p) = Phi(Phi^-1(p) / 2)),
    the population values on 99, 19 and 5 levels agree within 0.003 (the
    integral of (p - C(p))^2 over [0, 1] is 0.0130 by quadrature), while
    Kuleshov et al.'s sum differs 17-fold. On PIT values of 10^5 targets
    the plug-in lies within 0.001 of the population value on each grid."""
    from scipy import integrate, special

    def gap2(p):
        return (p - special.ndtr(0.5 * special.ndtri(p))) ** 2

    integral = integrate.quad(gap2, 0, 1)[0]
    grids = [np.arange(1, 100) / 100, np.arange(1, 20) / 20, np.array([0.05, 0.25, 0.5, 0.75, 0.95])]
    means = [float(np.mean(gap2(g))) for g in grids]
    sums = [float(np.sum(gap2(g))) for g in grids]
    assert max(abs(m - integral) for m in means) < 0.003 and abs(integral - 0.0130) < 5e-4
    assert max(sums) / min(sums) > 15
    u = special.ndtr(np.random.default_rng(4).normal(size=100_000) / 0.5)  # forecast sd 0.5, truth 1
    for g, m in zip(grids, means):
        assert abs(calibration_error(u, g) - m) < 1e-3
        assert calibration_error(u, g, weights="sum") == pytest.approx(g.size * calibration_error(u, g),
                                                                      rel=1e-12)
