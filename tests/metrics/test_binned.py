"""bece._metrics.binned: the plug-in ECE and MCE against hand cases, a naive loop
and scikit-learn's calibration_curve."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.calibration import calibration_curve

from bece import CalibrationStats, expected_calibration_error, maximum_calibration_error
from bece._metrics.binned import plugin_ece

from ..conftest import simulate_binary, simulate_multiclass


def test_hand_computed():
    y, p = [0, 1, 1, 1], [0.2, 0.6, 0.7, 0.9]
    # bin 0: acc 0, conf 0.2 ; bin 1: acc 1, conf 2.2/3
    assert expected_calibration_error(y, p, n_bins=2) == pytest.approx(0.25, abs=1e-15)
    assert maximum_calibration_error(y, p, n_bins=2) == pytest.approx(1 - 2.2 / 3, abs=1e-15)


def test_perfectly_calibrated_bins_give_zero():
    y = [0, 1, 0, 1]
    p = [0.5, 0.5, 0.5, 0.5]
    assert expected_calibration_error(y, p, n_bins=10) == 0.0


def _sklearn_ece(z, conf, m):
    prob_true, prob_pred = calibration_curve(z, conf, n_bins=m, strategy="uniform")
    counts = np.histogram(conf, bins=np.linspace(0, 1, m + 1))[0]
    counts = counts[counts > 0]
    return float(np.sum(counts / counts.sum() * np.abs(prob_true - prob_pred)))


@pytest.mark.parametrize("n_bins", [1, 5, 10, 15, 30])
def test_binary_equals_sklearn_calibration_curve(rng, n_bins):
    y, p = simulate_binary(5000, rng, power=1.4)
    ours = expected_calibration_error(y, p, n_bins=n_bins)
    assert abs(ours - _sklearn_ece(y, p, n_bins)) <= 1e-12


def test_top_label_equals_sklearn_on_argmax_confidence(rng):
    y, prob = simulate_multiclass(4000, 5, rng, temperature=1.5)
    conf = prob.max(axis=1)
    z = (prob.argmax(axis=1) == y).astype(int)
    assert abs(expected_calibration_error(y, prob) - _sklearn_ece(z, conf, 15)) <= 1e-12


def test_quantile_bins_equal_sklearn_quantile_strategy(rng):
    y, p = simulate_binary(3000, rng, power=0.7)
    ours = expected_calibration_error(y, p, n_bins=10, binning="quantile")
    prob_true, prob_pred = calibration_curve(y, p, n_bins=10, strategy="quantile")
    # equal-mass bins hold n/M points each on continuous data
    ref = float(np.mean(np.abs(prob_true - prob_pred)))
    assert abs(ours - ref) <= 1e-12


def test_equals_naive_loop_and_mce(rng):
    y, p = simulate_binary(700, rng, power=2.0)
    m = 12
    acc = [[] for _ in range(m)]
    conf = [[] for _ in range(m)]
    for yi, pi in zip(y, p):
        b = min(int(pi * m), m - 1)
        acc[b].append(yi)
        conf[b].append(pi)
    gaps = [abs(np.mean(a) - np.mean(c)) for a, c in zip(acc, conf) if a]
    weights = [len(a) / len(y) for a in acc if a]
    assert expected_calibration_error(y, p, n_bins=m) == pytest.approx(np.dot(weights, gaps), abs=1e-13)
    assert maximum_calibration_error(y, p, n_bins=m) == pytest.approx(max(gaps), abs=1e-13)


def test_plugin_from_merged_stats_equals_one_pass(rng):
    y, p = simulate_binary(2000, rng)
    whole = CalibrationStats.from_arrays(y, p)
    parts = CalibrationStats.from_arrays(y[:700], p[:700]) + CalibrationStats.from_arrays(y[700:], p[700:])
    assert plugin_ece(parts) == pytest.approx(plugin_ece(whole), abs=1e-14)
