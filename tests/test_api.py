"""bece._api: bayesian_ece and posterior_ece dispatch between the binned and the
smooth posterior (``model=``), and refuse options of the other model."""

from __future__ import annotations

import numpy as np
import pytest

import bece
from bece import CalibrationStats, posterior_ece
from bece._results import SmoothBayesianECE
from bece._smooth.posterior import smooth_ece
from bece.smooth import fine_binning

from .conftest import _data, simulate_binary


def test_posterior_ece_equals_bayesian_ece(rng):
    y, p = simulate_binary(500, rng)
    a = bece.bayesian_ece(y, p, n_bins=8, seed=4, num_samples=500, model="binned")
    b = posterior_ece(CalibrationStats.from_arrays(y, p, n_bins=8), seed=4, num_samples=500)
    assert np.array_equal(a.draws, b.draws)


def test_bayesian_ece_model_smooth_is_smooth_ece(rng):
    z, p = _data(400, rng)
    r = bece.bayesian_ece(z, p, model="smooth", num_samples=800, seed=3)
    s = smooth_ece(z, p, num_samples=800, seed=3)
    assert isinstance(r, SmoothBayesianECE) and isinstance(r, bece.BayesianECE)
    assert r.model == "smooth" and r.method == "laplace"
    np.testing.assert_array_equal(r.draws, s.draws)
    assert r.accuracy.shape == r.confidence.shape == r.weight.shape == (800, 15)
    assert r.plugin == pytest.approx(bece.expected_calibration_error(z, p))
    binned = bece.bayesian_ece(z, p, num_samples=800, model="binned")
    np.testing.assert_array_equal(r.stats.counts, binned.stats.counts)


def test_posterior_ece_dispatch_refuses_mixed_options():
    y, p = simulate_binary(500, np.random.default_rng(3))
    fine = CalibrationStats.from_arrays(y, p, binning=fine_binning(15))
    with pytest.raises(ValueError, match="alpha: not an option of SmoothModel"):
        bece.posterior_ece(fine, model="smooth", alpha=1.0)
    with pytest.raises(ValueError, match="the statistics have 2520 bins and the model n_bins=15"):
        bece.posterior_ece(fine, n_bins=15)
    with pytest.raises(ValueError, match=r"model must be one of \('smooth', 'binned', 'conjugate', "
                                         r"'literal'\) or a model object, got 'spline'"):
        bece.posterior_ece(fine, model="spline")
    with pytest.raises(ValueError, match="stats must be a CalibrationStats"):
        bece.posterior_ece([0.1, 0.2], model="smooth")
    # the binned model on fine statistics is the binned model in the fine bins
    assert bece.posterior_ece(fine, num_samples=10).stats.n_bins == fine_binning(15).n_bins
