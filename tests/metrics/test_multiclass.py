"""bece._metrics.multiclass: top-label and classwise ECE against hand cases, naive
loops and MAPIE."""

from __future__ import annotations

import numpy as np
import pytest

from bece import classwise_ece, top_label_ece
from bece.metrics import per_label_ece

from ..conftest import simulate_multiclass

mapie_calibration = pytest.importorskip("mapie.metrics.calibration")


def test_hand_computed():
    prob = np.array([[0.9, 0.1], [0.8, 0.2], [0.3, 0.7]])
    y = [0, 1, 1]
    # label 0: z = (1, 0), conf (0.9, 0.8) in bin 1: |1 - 1.7| / 2 = 0.35
    # label 1: z = 1, conf 0.7: 0.3
    assert top_label_ece(y, prob, n_bins=2) == pytest.approx(0.325, abs=1e-15)
    assert top_label_ece(y, prob, n_bins=2, average="sample") == pytest.approx(
        (2 * 0.35 + 0.3) / 3, abs=1e-15)
    ece, count = per_label_ece(y, prob, n_bins=2)
    np.testing.assert_allclose(ece, [0.35, 0.3]) and count.tolist() == [2, 1]
    # class 0: |0 - 0.3| + |1 - 1.7| over 3 ; class 1: |1 - 0.3| + |1 - 0.7| over 3
    assert classwise_ece(y, prob, n_bins=2) == pytest.approx(1 / 3, abs=1e-15)


@pytest.mark.parametrize("n_bins", [5, 10, 15])
def test_top_label_equals_mapie(rng, n_bins):
    y, prob = simulate_multiclass(3000, 6, rng, temperature=2.0)
    # MAPIE's num_bins = M + 1 edges linspace(0, 1, M + 1), right-closed bins
    ref = mapie_calibration.top_label_ece(y, prob, num_bins=n_bins + 1, split_strategy="uniform")
    assert abs(top_label_ece(y, prob, n_bins=n_bins) - ref) <= 1e-12


def test_classwise_equals_mapie(rng):
    y, prob = simulate_multiclass(2000, 5, rng, temperature=0.6)
    z_dummy = np.zeros(len(y), dtype=int)  # unused by MAPIE in classwise mode
    ref = mapie_calibration.expected_calibration_error(
        z_dummy, prob, num_bins=16, split_strategy="uniform", classwise=True, class_labels=y)
    assert abs(classwise_ece(y, prob, n_bins=15) - ref) <= 1e-12


def test_labels_never_predicted_are_left_out_and_sample_average_is_naive_loop(rng):
    y, prob = simulate_multiclass(1500, 8, rng)
    prob[:, 7] = 0.0  # label 7 is never the argmax
    prob /= prob.sum(axis=1, keepdims=True)
    ece, count = per_label_ece(y, prob)
    assert count[7] == 0 and np.isnan(ece[7])
    pred, conf = prob.argmax(axis=1), prob.max(axis=1)
    total = 0.0
    for lab in np.unique(pred):
        sel = pred == lab
        for b in range(15):
            inb = sel & (np.minimum((conf * 15).astype(int), 14) == b)
            total += abs(np.sum(y[inb] == lab) - conf[inb].sum())
    assert top_label_ece(y, prob, average="sample") == pytest.approx(total / len(y), abs=1e-13)


def test_quantile_bins_per_label_equal_mapie(rng):
    y, prob = simulate_multiclass(2000, 4, rng)
    ref = mapie_calibration.top_label_ece(y, prob, num_bins=6, split_strategy="quantile")
    ours = top_label_ece(y, prob, n_bins=5, binning="quantile")
    # MAPIE's quantile edges start at the label's smallest confidence and close
    # bins on the right; ours start at 0 with ties going right: on continuous
    # data only the points sitting on an edge (one per edge) may move
    assert abs(ours - ref) <= 6 / 2000 * 2


def _classwise_naive(y, prob, edges):
    """Loop over classes and bins, searchsorted-right bins, last bin closed."""
    n, k = prob.shape
    m = len(edges) - 1
    total = 0.0
    for c in range(k):
        p = prob[:, c].astype(np.float64)
        b = np.minimum(np.searchsorted(edges, p, side="right") - 1, m - 1)
        for j in range(m):
            sel = b == j
            total += abs(np.sum(y[sel] == c) - p[sel].sum())
    return total / (n * k)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n_bins", [1, 2, 15])
def test_classwise_sparse_pass_equals_naive_loop(rng, dtype, n_bins):
    """The fused pass bins only entries >= the first bin's upper edge; values
    sitting exactly on every edge and just below the first edge must land
    where the naive loop puts them."""
    y, prob = simulate_multiclass(700, 6, rng, temperature=0.7)
    edges = np.linspace(0, 1, n_bins + 1)
    if n_bins > 1:
        # rows with entries exactly on edges, and just below the first edge
        prob[:3] = 0.0
        prob[0, :2] = [edges[1], 1 - edges[1]]
        prob[1, :2] = [np.nextafter(edges[1], 0), 1 - np.nextafter(edges[1], 0)]
        prob[2, 0] = 1.0
    prob = prob.astype(dtype)
    if dtype == np.float32:
        prob /= prob.sum(axis=1, keepdims=True, dtype=np.float64).astype(np.float32)
    ref = _classwise_naive(y, prob, edges)
    assert classwise_ece(y, prob, n_bins=n_bins) == pytest.approx(ref, abs=1e-12)
    # explicit edges (searchsorted rule) with first edge 0: the same fused pass
    inner = np.array([0.0, 0.1, 0.35, 0.5, 1.0])
    assert classwise_ece(y, prob, binning=inner) == pytest.approx(_classwise_naive(y, prob, inner),
                                                                  abs=1e-12)


def test_classwise_blocks_give_the_same_answer(rng):
    """The per-class-block path (quantile bins) does not depend on the block size."""
    y, prob = simulate_multiclass(500, 9, rng)
    a = classwise_ece(y, prob, binning="quantile", block_size=500 * 2)
    assert a == pytest.approx(classwise_ece(y, prob, binning="quantile"), abs=1e-14)


def test_float32_top_label_is_not_copied_and_equals_float64(rng):
    y, prob = simulate_multiclass(2000, 12, rng)
    p32 = prob.astype(np.float32)
    p32 /= p32.sum(axis=1, keepdims=True)
    p64 = p32.astype(np.float64)
    for average in ("label", "sample"):
        assert top_label_ece(y, p32, average=average) == top_label_ece(y, p64, average=average)
    assert classwise_ece(y, p32) == pytest.approx(classwise_ece(y, p64), abs=1e-13)


@pytest.mark.parametrize(
    "y,prob,kwargs,message",
    [
        ([0, 1], [0.3, 0.8], {}, "must have shape \\(n, K\\)"),
        ([0, 2], [[0.5, 0.5], [0.4, 0.6]], {}, "y_true must hold labels in 0..1"),
        ([0, 1], [[0.5, 0.6], [0.4, 0.6]], {}, "rows must sum to 1"),
        ([0, 1], [[0.5, 0.5], [0.4, 0.6]], {"average": "macro"}, "average must be one of"),
    ],
)
def test_bad_input(y, prob, kwargs, message):
    with pytest.raises(ValueError, match=message):
        top_label_ece(y, prob, **kwargs)
    if "average" not in kwargs:
        with pytest.raises(ValueError, match=message):
            classwise_ece(y, prob)


# ------------------------------------------------------------ robustness #3, #15
def test_a_huge_predicted_label_allocates_nothing_by_the_label_range():
    """Robustness #3: K = max label + 1, so y_pred = [0, 1, 10**8] made a 3-row
    call allocate 11 GiB (MemoryError instead of a result or a label error)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    conf = [0.9, 0.8, 0.7]
    for big in (10**8, 10**12, 2**62):
        got = top_label_ece([0, 1, 2], conf, y_pred=[0, 1, big])
        assert got == top_label_ece([0, 1, 2], conf, y_pred=[0, 1, 5])
        got = top_label_ece([0, 1, 2], conf, y_pred=[0, 1, big], average="sample",
                            binning="quantile")
        assert got == top_label_ece([0, 1, 2], conf, y_pred=[0, 1, 5], average="sample",
                                    binning="quantile")
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000  # KiB


def test_per_label_arrays_beyond_the_memory_limit_are_refused(monkeypatch):
    """per_label_ece returns arrays of K = max label + 1 entries: those are checked."""
    monkeypatch.setenv("BECE_MEMORY_LIMIT", "100MiB")
    with pytest.raises(ValueError, match=r"^y_pred and y_true \(their largest label\): the per-label "
                                         r"arrays of K = max label \+ 1 = 100000001 entries"):
        per_label_ece([0, 1, 2], [0.9, 0.8, 0.7], y_pred=[0, 1, 10**8])
    ece, count = per_label_ece([0, 1, 2], [0.9, 0.8, 0.7], y_pred=[0, 1, 70_000])
    assert ece.shape == (70_001,) and count[[0, 1, 70_000]].tolist() == [1, 1, 1]
    assert np.isnan(ece[2])


@pytest.mark.parametrize("block_size", [0, -1, 1.5, True, "8"])
def test_classwise_block_size_is_checked(rng, block_size):
    """Robustness #15: block_size = 0, -1 or 1.5 was silently accepted."""
    y, prob = simulate_multiclass(50, 3, rng)
    for binning in ("quantile", "uniform"):
        with pytest.raises(ValueError, match="block_size must be a positive integer"):
            classwise_ece(y, prob, binning=binning, block_size=block_size)
