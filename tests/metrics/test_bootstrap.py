"""bece.metrics.bootstrap: percentile-bootstrap intervals of plug-in metrics."""

from __future__ import annotations

import numpy as np
import pytest

from bece.metrics import bootstrap_interval, brier_score, l2_calibration_error

from ..conftest import simulate_binary


def test_equals_naive_loop_with_weights(rng):
    y, p = simulate_binary(300, rng, power=1.5)
    w = rng.uniform(0.5, 2.0, size=p.size)
    iv = bootstrap_interval(l2_calibration_error, y, p, sample_weight=w, n_boot=50, seed=7,
                            n_bins=5, prob=0.8)
    g = np.random.default_rng(7)
    vals = []
    for _ in range(50):
        i = g.integers(0, 300, size=300)
        vals.append(l2_calibration_error(y[i], p[i], sample_weight=w[i], n_bins=5))
    assert np.array_equal(iv.draws, np.array(vals))
    assert (iv.low, iv.high) == pytest.approx(tuple(np.quantile(vals, [0.1, 0.9])), abs=0)
    assert iv.estimate == l2_calibration_error(y, p, sample_weight=w, n_bins=5)


def test_coverage_of_the_brier_score(rng):
    """The Brier score is a mean of iid terms, where the percentile bootstrap is
    accurate: 90% intervals over R = 50 data sets (n = 400) cover the true
    Brier score (p ~ U(0,1), P(y=1|p) = p: E (p - y)^2 = E p(1-p) = 1/6) at a
    rate within 4 sd = 4 sqrt(0.09/50) = 0.17 of 0.9 (false alarm ~ 6e-5)."""
    hits = 0
    for r in range(50):
        y, p = simulate_binary(400, rng, power=1.0)
        iv = bootstrap_interval(brier_score, y, p, n_boot=100, seed=r)
        hits += iv.low <= 1 / 6 <= iv.high
    assert abs(hits / 50 - 0.9) < 0.17


def test_bad_input():
    y, p = [0, 1, 1], [0.2, 0.6, 0.9]
    with pytest.raises(ValueError, match="metric must be a callable"):
        bootstrap_interval("brier", y, p)
    with pytest.raises(ValueError, match="prob must be a number in"):
        bootstrap_interval(brier_score, y, p, prob=1.5)
    with pytest.raises(ValueError, match="n_boot must be a positive integer"):
        bootstrap_interval(brier_score, y, p, n_boot=0)
    with pytest.raises(ValueError, match=r"sample_weight must have shape \(3,\)"):
        bootstrap_interval(brier_score, y, p, sample_weight=[1, 2])
    with pytest.raises(ValueError, match="metric must return a number"):
        bootstrap_interval(lambda a, b: (1, 2), y, p, n_boot=2)
