"""bece._regression.recalibration: isotonic recalibration (Recalibrator), its
recalibrated quantiles and central intervals.

Deterministic code is checked against hand-computed cases and independent
implementations (np.interp, brentq). Stochastic tests use fixed seeds:

* Coverage of recalibrated 90% intervals: within 4 sd of 0.9, with
  sd = sqrt(0.09/n_test + 0.09/n_cal) (test points plus the calibration set's
  own noise, which moves R^{-1}); 6.3e-5 per check, 5 checks.
* "Recalibration lowers the test cal several-fold": ratio > 5 with 2000/2000
  points; over 2000 seeds the ratio never fell below 5 (min 11.2, median 112);
  with 1000/1000 points it did in 0.05% of runs (median 56).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import optimize
from scipy import stats as sps
from scipy.special import ndtr, ndtri

from bece.regression import Recalibrator, calibration_error, forecast_quantiles, pit

from .conftest import hetero


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
    assert before > 0.005  # far from calibrated to begin with (a mean squared gap of 0.07^2)


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
