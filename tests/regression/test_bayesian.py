"""bece._regression.bayesian: the Dirichlet posterior over the calibration
curve and the cal score (BayesianCalibrationError).

Stochastic tests use fixed seeds; their thresholds and false-alarm rates:

* KS tests against Beta marginals and an independent Dirichlet sampler:
  p-value threshold 1e-4 each.
* Monte Carlo means: |mean - truth| <= 5 standard errors (5.7e-7 per comparison).
* Coverage of the Bayesian credible intervals: 400 simulated data sets,
  within 4 binomial sd of 0.9 (plus the slow version with 4000).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy import stats as sps
from scipy.special import ndtr, ndtri

from bece.regression import BayesianCalibrationError, bayesian_calibration_error, calibration_error

KS_ALPHA = 1e-4
Z = 5.0


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
        bayesian_calibration_error([0.1, 0.6], [0.2, 0.5], **kwargs, model="dirichlet")


# ===================================================== Bayesian cal score
def test_bayesian_counts_prior_and_plugin_hand_computed():
    u = [0.05, 0.1, 0.3, 0.95]
    r = bayesian_calibration_error(u, [0.1, 0.5], num_samples=100, seed=0, model="dirichlet")
    np.testing.assert_array_equal(r.counts, [2, 1, 1])
    assert r.counts.dtype == np.int64
    np.testing.assert_allclose(r.alpha, [0.1, 0.4, 0.5], rtol=1e-15)
    np.testing.assert_array_equal(r.observed, [0.5, 0.75])
    assert r.plugin == pytest.approx((0.16 + 0.0625) / 2, rel=1e-15)  # the mean over 2 levels
    assert r.plugin == calibration_error(u, [0.1, 0.5])
    assert calibration_error(u, [0.1, 0.5], weights="sum") == pytest.approx(0.16 + 0.0625, rel=1e-15)
    assert r.n == 4 and r.curve.shape == (100, 2) and r.draws.shape == (100,)
    # cal of each draw from its own curve
    np.testing.assert_allclose(r.draws, ((np.array([0.1, 0.5]) - r.curve) ** 2).mean(axis=1), rtol=1e-14)
    r2 = bayesian_calibration_error(u, [0.1, 0.5], alpha=[1.0, 2.0, 3.0], num_samples=10, seed=0,
                                    model="dirichlet")
    np.testing.assert_array_equal(r2.alpha, [1.0, 2.0, 3.0])
    r3 = bayesian_calibration_error(u, [0.1, 0.5], alpha=4.0, num_samples=10, seed=0, model="dirichlet")
    np.testing.assert_allclose(r3.alpha, [0.4, 1.6, 2.0], rtol=1e-15)


def test_posterior_at_a_level_is_beta_whatever_the_grid(rng):
    """C_j ~ Beta(a p_j + N_j, a (1 - p_j) + T - N_j): KS p > 1e-4 at each of
    3 levels (false alarm 3e-4), means within 5 se; the Beta parameters at
    p = 0.5 are identical on two different grids."""
    u = rng.beta(2.0, 1.5, size=200)
    lv = np.array([0.1, 0.5, 0.8])
    r = bayesian_calibration_error(u, lv, num_samples=20_000, seed=4, model="dirichlet")
    n_le = np.array([np.sum(u <= p) for p in lv])
    for j, p in enumerate(lv):
        a, b = p + n_le[j], (1 - p) + 200 - n_le[j]
        assert sps.kstest(r.curve[:, j], sps.beta(a, b).cdf).pvalue > KS_ALPHA
        se = r.curve[:, j].std() / np.sqrt(r.num_samples)
        assert abs(r.curve[:, j].mean() - a / (a + b)) <= Z * se
    fine = bayesian_calibration_error(u, np.linspace(0.05, 0.95, 19), num_samples=10, seed=0,
                                      model="dirichlet")
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
    r = bayesian_calibration_error(u, lv, weights=weights, num_samples=20_000, seed=9, model="dirichlet")
    cells = np.searchsorted(lv, u, side="left")
    counts = np.bincount(cells, minlength=5)
    conc = np.diff(np.r_[0.0, lv, 1.0]) + counts
    pi = sps.dirichlet(conc).rvs(size=20_000, random_state=np.random.default_rng(10))
    c = np.cumsum(pi, axis=1)[:, :4]
    if weights is None:  # the mean over the levels
        w = np.full(4, 0.25)
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
    pop = np.mean((lv - truth_c) ** 2)
    hit, band = [], []
    for r in range(num_sets):
        g = np.random.default_rng(seed0 + r)
        u = ndtr(g.normal(size=500) + 0.3)  # forecast N(0,1), truth N(0.3, 1)
        b = bayesian_calibration_error(u, lv, num_samples=2000, seed=g, model="dirichlet")
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
    r = bayesian_calibration_error(u, lv, num_samples=4000, seed=1, model="dirichlet")
    assert isinstance(r, BayesianCalibrationError)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.plugin = 0.0
    assert r.num_samples == 4000
    assert r.mean == pytest.approx(np.mean(r.draws)) and r.std == pytest.approx(np.std(r.draws, ddof=1))
    np.testing.assert_allclose(r.interval(0.8), np.quantile(r.draws, [0.1, 0.9]))
    lo, hi = r.curve_interval(0.9)
    np.testing.assert_allclose(lo, np.quantile(r.curve, 0.05, axis=0))
    np.testing.assert_allclose(hi, np.quantile(r.curve, 0.95, axis=0))
    # the HDI: the shortest interval between sorted draws i and i + floor(0.9 S)
    x = np.sort(r.draws)
    k = int(np.floor(0.9 * x.size))
    i = int(np.argmin(x[k:] - x[: x.size - k]))
    assert r.hdi(0.9) == (x[i], x[i + k])
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
    assert "BayesianCalibrationError(model='dirichlet', mean=" in repr(r)
    # same seed, same draws; a Generator is accepted
    np.testing.assert_array_equal(
        bayesian_calibration_error(u, lv, num_samples=50, seed=3, model="dirichlet").draws,
        bayesian_calibration_error(u, lv, num_samples=50, seed=3, model="dirichlet").draws,
    )
    g = np.random.default_rng(3)
    np.testing.assert_array_equal(
        bayesian_calibration_error(u, lv, num_samples=50, seed=g, model="dirichlet").draws,
        bayesian_calibration_error(u, lv, num_samples=50, seed=3, model="dirichlet").draws,
    )


def test_posterior_concentrates_on_the_plugin_for_large_t(rng):
    """T = 2e5: the posterior sd of cal equals the delta-method sd
    sqrt(g' V g / T), g_j = 2 (p_j - p_hat_j) / J (cal the mean over J levels),
    V_jk = min(p_hat_j, p_hat_k) - p_hat_j p_hat_k,
    within 10% (the sd estimate from 4000 draws has relative se 1.1%), and the
    mean is within 5 posterior sd of the plug-in."""
    t = 200_000
    u = ndtr(rng.normal(size=t) * 1.2)
    r = bayesian_calibration_error(u, num_samples=4000, seed=0, model="dirichlet")
    ph, p = r.observed, r.levels
    g = 2 * (p - ph) / p.size
    v = np.minimum.outer(ph, ph) - np.outer(ph, ph)
    delta_sd = np.sqrt(g @ v @ g / t)
    assert r.std == pytest.approx(delta_sd, rel=0.1)
    assert abs(r.mean - r.plugin) <= 5 * r.std
