"""bece._stats.calibration_stats: CalibrationStats by hand, against a naive loop,
and exact merging of chunks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from bece import CalibrationStats


def test_hand_computed_case():
    s = CalibrationStats.from_arrays([0, 1, 1, 1], [0.2, 0.6, 0.7, 0.9], n_bins=2)
    assert s.counts.dtype == np.int64 and s.sum_p.dtype == np.float64
    assert s.counts.tolist() == [[1, 0], [0, 3]]
    assert np.allclose(s.sum_p, [0.2, 2.2])
    assert np.allclose(s.sum_p2, [0.04, 0.36 + 0.49 + 0.81])
    assert s.n == 4 and s.bin_counts.tolist() == [1, 3]
    assert np.allclose(s.accuracy, [0.0, 1.0]) and np.allclose(s.confidence, [0.2, 2.2 / 3])


def test_empty_bins_are_kept_with_nan_accuracy():
    s = CalibrationStats.from_arrays([1, 1], [0.95, 0.97], n_bins=10)
    assert s.counts.shape == (2, 10) and s.sum_p.shape == (10,)
    assert np.isnan(s.accuracy[:9]).all() and s.accuracy[9] == 1.0


def test_matches_naive_loop_top_label(rng):
    n, k, m = 500, 4, 7
    prob = rng.dirichlet(np.ones(k), size=n)
    y = rng.integers(0, k, size=n)
    s = CalibrationStats.from_arrays(y, prob, n_bins=m)
    counts = np.zeros((2, m), dtype=np.int64)
    sp = np.zeros(m)
    sp2 = np.zeros(m)
    for i in range(n):
        conf = max(prob[i])
        pred = list(prob[i]).index(conf)
        b = min(int(conf * m), m - 1)
        counts[int(pred == y[i]), b] += 1
        sp[b] += conf
        sp2[b] += conf * conf
    assert np.array_equal(s.counts, counts)
    np.testing.assert_allclose(s.sum_p, sp, rtol=1e-12)
    np.testing.assert_allclose(s.sum_p2, sp2, rtol=1e-12)


probs = arrays(np.float64, st.integers(1, 300), elements=st.floats(0.0, 1.0))


@settings(max_examples=60, deadline=None)
@given(p=probs, data=st.data(), n_bins=st.integers(1, 20))
def test_chunked_statistics_equal_one_pass(p, data, n_bins):
    y = data.draw(arrays(np.int64, p.size, elements=st.integers(0, 1)))
    cuts = sorted(data.draw(st.lists(st.integers(0, p.size), max_size=5)))
    bounds = [0, *cuts, p.size]
    chunks = [
        CalibrationStats.from_arrays(y[a:b], p[a:b], n_bins=n_bins)
        for a, b in zip(bounds[:-1], bounds[1:])
        if b > a
    ]
    whole = CalibrationStats.from_arrays(y, p, n_bins=n_bins)
    merged = sum(chunks)
    assert np.array_equal(merged.counts, whole.counts)
    # Two float64 sums of the same n terms in another order: each is within
    # (n - 1) eps sum|x| of the exact sum (Higham, Accuracy and Stability, 4.3)
    eps = np.finfo(np.float64).eps
    tol = 2 * p.size * eps * float(np.sum(p)) + 1e-300
    np.testing.assert_allclose(merged.sum_p, whole.sum_p, rtol=0, atol=tol)
    tol2 = 2 * p.size * eps * float(np.sum(p * p)) + 1e-300
    np.testing.assert_allclose(merged.sum_p2, whole.sum_p2, rtol=0, atol=tol2)


def test_refuses_to_merge_different_edges(rng):
    y, p = rng.integers(0, 2, 100), rng.uniform(size=100)
    a = CalibrationStats.from_arrays(y, p, n_bins=10)
    with pytest.raises(ValueError, match="different bins"):
        a + CalibrationStats.from_arrays(y, p, n_bins=11)
    with pytest.raises(ValueError, match="different bins"):
        CalibrationStats.from_arrays(y, p, n_bins=10, binning="quantile") + CalibrationStats.from_arrays(
            y[:50], p[:50], n_bins=10, binning="quantile"
        )
    assert (a + a).n == 200


def test_arrays_are_read_only(rng):
    s = CalibrationStats.from_arrays([0, 1], [0.3, 0.8])
    with pytest.raises(ValueError):
        s.counts[0, 0] = 5


def test_constructor_checks_shapes():
    from bece._stats import make_binning

    b = make_binning(None, 3, "uniform")
    with pytest.raises(ValueError, match="need counts of shape"):
        CalibrationStats(b, np.zeros((2, 4)), np.zeros(3), np.zeros(3))
    with pytest.raises(ValueError, match="non-negative"):
        CalibrationStats(b, -np.ones((2, 3)), np.zeros(3), np.zeros(3))


# ------------------------------------------------------- robustness #19, #21
def _stats(rng):
    p = rng.uniform(size=200)
    y = (rng.uniform(size=200) < p).astype(int)
    return CalibrationStats.from_arrays(y, p)


@pytest.mark.parametrize(
    "change,message",
    [(lambda s: (s.counts + 0.7, s.sum_p, s.sum_p2), r"counts must be non-negative integers; 30 "
                                                     r"value\(s\) \(index 0: \d+\.7"),
     (lambda s: (np.where(s.counts == 0, np.nan, s.counts), s.sum_p, s.sum_p2), "non-negative integers"),
     (lambda s: (s.counts.astype(str), s.sum_p, s.sum_p2), "got dtype <U"),
     (lambda s: (s.counts, s.sum_p * np.nan, s.sum_p2), "sum_p contains NaN or infinity"),
     (lambda s: (s.counts, s.sum_p, s.sum_p2 + np.inf), "sum_p2 contains NaN or infinity"),
     (lambda s: (s.counts, s.sum_p * 100, s.sum_p2), "sum_p must be <= the bin's count"),
     (lambda s: (s.counts, -s.sum_p, s.sum_p2), "sum_p must be >= 0"),
     (lambda s: (s.counts, s.sum_p, s.sum_p * 1.01), r"sum_p2 must be <= sum_p"),
     (lambda s: (s.counts, s.sum_p, -s.sum_p2), "sum_p2 must be >= 0"),
     (lambda s: (s.counts, s.sum_p, s.sum_p2 * 0.5), r"sum_p\*\*2 must be <= count \* sum_p2"),
     (lambda s: (np.zeros_like(s.counts), s.sum_p, s.sum_p2), "sum_p must be <= the bin's count")],
)
def test_constructor_refuses_impossible_statistics(rng, change, message):
    """Robustness #19: non-integer counts were truncated, NaN and impossible
    sums accepted (sum_p > count gave a plug-in ECE of 53.5)."""
    s = _stats(rng)
    with pytest.raises(ValueError, match=message):
        CalibrationStats(s.binning, *change(s))


def test_constructor_accepts_what_bece_computes(rng):
    s = _stats(rng)
    same = CalibrationStats(s.binning, s.counts.astype(float), s.sum_p, s.sum_p2)
    assert same.counts.dtype == np.int64 and np.array_equal(same.counts, s.counts)
    # all confidences equal: sum_p**2 == n sum_p2 up to rounding (10**6 terms)
    n = 10**6
    t = CalibrationStats.from_arrays(np.ones(n, int), np.full(n, 0.95))
    assert t.n == n
    assert np.array_equal((t + t).counts, 2 * t.counts)


def test_counts_whose_total_overflows_int64_are_refused(rng):
    """Robustness #21: a total above 2**63 showed as a negative n, and adding
    such statistics failed with 'counts must be non-negative'."""
    from bece._stats import make_binning

    b = make_binning(None, 15)
    with pytest.raises(ValueError, match=r"counts total 138350580552821637120 predictions, more than "
                                         r"2\*\*63 - 1"):
        CalibrationStats(b, np.full((2, 15), 2**62), np.zeros(15), np.zeros(15))
    half = CalibrationStats(b, np.r_[[[2**62] + [0] * 14], [[0] * 15]], np.zeros(15), np.zeros(15))
    assert half.n == 2**62
    with pytest.raises(ValueError, match=r"cannot add CalibrationStats of 4611686018427387904 and "
                                         r"4611686018427387904 predictions: the total exceeds"):
        half + half


def test_simulated_statistics_skip_only_the_range_checks():
    """SBC simulates confidences outside [0, 1]; its statistics keep the
    count and finiteness checks."""
    from bece._stats import make_binning

    b = make_binning(None, 2)
    s = CalibrationStats.from_simulation(b, [[1, 0], [0, 1]], [1.3, -0.2], [1.69, 0.04])
    assert s.n == 2
    with pytest.raises(ValueError, match="impossible statistics: sum_p must be >= 0"):
        CalibrationStats(b, [[1, 0], [0, 1]], [1.3, -0.2], [1.69, 0.04])
    with pytest.raises(ValueError, match="sum_p contains NaN"):
        CalibrationStats.from_simulation(b, [[1, 0], [0, 1]], [np.nan, 0.5], [0.1, 0.25])
