"""SmoothModel.calibration_test: the calibration test from fine statistics added over chunks."""

from __future__ import annotations

import numpy as np
import pytest

import bece
from bece import CalibrationStats
from bece.smooth import fine_binning

from ..conftest import simulate_multiclass


def test_chunks_give_the_test_of_the_arrays_on_the_fine_grid(rng):
    n = 5000
    y, prob = simulate_multiclass(n, 4, rng, temperature=1.3)
    edges = [0.0, 0.4, 0.55, 0.7, 0.85, 0.95, 1.0]  # explicit edges, as quantile bins pass them
    fine = fine_binning(binning=edges)
    parts = [CalibrationStats.from_arrays(y[i:i + 1200], prob[i:i + 1200], binning=fine)
             for i in range(0, n, 1200)]
    t = bece.SmoothModel(binning=edges).calibration_test(sum(parts), num_resamples=200,
                                                         num_samples=500, seed=3)
    ref = bece.calibration_test(y, prob, binning=edges, grid=128, num_resamples=200,
                                num_samples=500, seed=3)
    # same atoms (sums to float64 rounding), same random numbers: the same answers
    assert t.p_value == ref.p_value and t.n == n and t.n_bins == 6 and t.kind == "top-label"
    assert t.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert t.log_bayes_factor == pytest.approx(ref.log_bayes_factor, abs=1e-9)
    np.testing.assert_allclose(t.resampled, ref.resampled, rtol=1e-12)
    assert t.verdict().label == ref.verdict().label


def test_statistics_that_do_not_refine_the_bins_are_refused(rng):
    p = rng.uniform(size=100)
    coarse = CalibrationStats.from_arrays(rng.uniform(size=100) < p, p, n_bins=10)
    with pytest.raises(ValueError, match="refine"):
        bece.SmoothModel(n_bins=15).calibration_test(coarse)
    with pytest.raises(ValueError, match="num_resamples"):
        bece.SmoothModel(n_bins=10).calibration_test(coarse, num_resamples=0)


def test_options_the_test_does_not_use_are_refused(rng):
    p = rng.uniform(size=100)
    y = rng.uniform(size=100) < p
    with pytest.raises(ValueError, match="zero_gap_prior=0.2 is not used there"):
        bece.calibration_test(y, p, model=bece.SmoothModel(zero_gap_prior=0.2))
    with pytest.raises(ValueError, match="alpha: not an option of SmoothModel"):
        bece.calibration_test(y, p, alpha=1.0)
    with pytest.raises(ValueError, match="model must be one of"):
        bece.calibration_test(y, p, model="binned")
