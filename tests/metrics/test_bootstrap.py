"""bece._metrics.bootstrap: percentile-bootstrap intervals of plug-in metrics."""

from __future__ import annotations

import numpy as np
import pytest

from bece._metrics.bootstrap import BLOCK, poisson_weights
from bece.metrics import bootstrap_interval, brier_score, l2_calibration_error

from ..conftest import simulate_binary


def test_equals_naive_loop_with_weights(rng):
    y, p = simulate_binary(300, rng, power=1.5)
    w = rng.uniform(0.5, 2.0, size=p.size)
    iv = bootstrap_interval(l2_calibration_error, y, p, sample_weight=w, n_boot=50, seed=7,
                            n_bins=5, prob=0.8, method="multinomial")
    g = np.random.default_rng(7)
    vals = []
    for _ in range(50):
        i = g.integers(0, 300, size=300)
        vals.append(l2_calibration_error(y[i], p[i], sample_weight=w[i], n_bins=5))
    assert np.array_equal(iv.draws, np.array(vals))
    assert (iv.low, iv.high) == pytest.approx(tuple(np.quantile(vals, [0.1, 0.9])), abs=0)
    assert iv.estimate == l2_calibration_error(y, p, sample_weight=w, n_bins=5)


def test_poisson_equals_naive_loop(rng):
    """Replicate r repeats row i Poisson(1) times, the counts drawn per block
    of BLOCK rows from default_rng([seed, block]) by inverse CDF, written
    here again without the library's code; sample weights travel with rows."""
    from scipy.stats import poisson

    n = 5000  # two blocks
    y, p = simulate_binary(n, rng, power=1.5)
    w = rng.uniform(0.5, 2.0, size=n)
    iv = bootstrap_interval(l2_calibration_error, y, p, sample_weight=w, n_boot=20, seed=3,
                            n_bins=5, prob=0.8)
    u = np.concatenate([np.random.default_rng([3, b]).random((BLOCK, 20)) for b in (0, 1)])[:n]
    counts = poisson.ppf(u, 1.0).astype(int)  # smallest k with CDF(k) >= u
    vals = []
    for r in range(20):
        i = np.repeat(np.arange(n), counts[:, r])
        vals.append(l2_calibration_error(y[i], p[i], sample_weight=w[i], n_bins=5))
    assert iv.draws == pytest.approx(vals, rel=1e-12)
    assert (iv.low, iv.high) == pytest.approx(tuple(np.quantile(vals, [0.1, 0.9])), rel=1e-12)


def test_poisson_weights_do_not_depend_on_the_cut():
    w = poisson_weights(0, 10_000, 7, seed=1)
    parts = [poisson_weights(a, b - a, 7, seed=1) for a, b in ((0, 1), (1, 4100), (4100, 10_000))]
    assert np.array_equal(np.concatenate(parts), w)
    assert np.array_equal(poisson_weights(10, 90, 7, seed=1, replicates=slice(2, 5)),
                          w[10:100, 2:5])
    assert not np.array_equal(poisson_weights(0, 100, 7, seed=2), w[:100])


def test_poisson_counts_are_the_inverse_cdf():
    """2 million counts against the number of scipy's Poisson(1) CDF values
    at or below the same uniforms (about 250 of them fall in the few grid
    cells where the table look-up defers to a search)."""
    from scipy.stats import poisson

    n, b = 50_000, 40
    w = poisson_weights(0, n, b, seed=9)
    u = np.concatenate([np.random.default_rng([9, k]).random((BLOCK, b))
                        for k in range(n // BLOCK + 1)])[:n]
    cdf = poisson.cdf(np.arange(20), 1.0)
    assert np.array_equal(w, (u[:, :, None] >= cdf).sum(axis=2))


def test_a_replicate_without_rows_is_left_out():
    # n = 1: each replicate is empty with probability e^-1 (about 74 of 200)
    iv = bootstrap_interval(brier_score, [1], [0.7], n_boot=200, seed=0)
    empty = (poisson_weights(0, 1, 200, 0) == 0).sum()
    assert 0 < empty < 200 and iv.draws.size == 200 - empty
    assert np.allclose(iv.draws, 0.09)


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
    with pytest.raises(ValueError, match="method must be 'poisson' or 'multinomial'"):
        bootstrap_interval(brier_score, y, p, method="bayes")
    with pytest.raises(ValueError, match="seed must be a non-negative int"):
        bootstrap_interval(brier_score, y, p, seed=np.random.default_rng(0))
    with pytest.raises(ValueError, match="metric must return a number"):
        bootstrap_interval(lambda a, b: (1, 2), y, p, n_boot=2)
