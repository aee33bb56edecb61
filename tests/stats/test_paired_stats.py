"""PairedStats: joint statistics of two models' predictions, additive across chunks."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from scipy import special

from bece import CalibrationStats, PairedStats
from bece._binned.compare import joint_counts
from bece._stats import make_binning


def _top_label(n, seed, k=4):
    """Top-label predictions of two models that sometimes predict different labels."""
    rng = np.random.default_rng(seed)
    lg = 2.0 * rng.standard_normal((n, k))
    y = np.array([rng.choice(k, p=row) for row in special.softmax(lg, axis=1)])
    qa = special.softmax(lg / 0.7, axis=1)
    qb = special.softmax(lg + rng.standard_normal((n, k)), axis=1)
    return y, qa, qb


def test_hand_computed_cells():
    # y = (0, 1, 1, 1); binary: z_a = z_b = y, same label always.
    # A's bins (2 uniform): 0.2 -> 0, 0.6, 0.9, 0.7 -> 1; B's: 0.4 -> 0, 0.8, 0.6, 0.9 -> 1.
    # Joint cells: (bin_a 0, z 0, bin_b 0, z 0, same) once; (1, 1, 1, 1, same) three times.
    # keys: (((c_a * 2 + z_a) * 2 + c_b) * 2 + z_b) * 2 + 1 = 1 and (((3) * 2 + 1) * 2 + 1) * 2 + 1 = 31.
    s = PairedStats.from_arrays([0, 1, 1, 1], [0.2, 0.6, 0.9, 0.7], [0.4, 0.8, 0.6, 0.9], n_bins=2)
    assert s.keys.tolist() == [1, 31] and s.counts.tolist() == [1, 3]
    assert s.keys.dtype == np.int64 and s.counts.dtype == np.int64
    np.testing.assert_allclose(s.sum_p_a, [0.2, 0.6 + 0.9 + 0.7], rtol=1e-15)
    np.testing.assert_allclose(s.sum_p_b, [0.4, 0.8 + 0.6 + 0.9], rtol=1e-15)
    np.testing.assert_allclose(s.sum_p2_b, [0.16, 0.64 + 0.36 + 0.81], rtol=1e-15)
    c = s.cells()
    assert c["bin_a"].tolist() == [0, 1] and c["z_b"].tolist() == [0, 1] and c["same"].all()
    table = s.joint_counts()
    assert table.shape == (2, 2, 2, 2) and table[0, 0, 0, 0] == 1 and table[1, 1, 1, 1] == 3
    assert table.sum() == 4


def test_top_label_cells_against_an_independent_count():
    """Every example counted by hand into (bin_a, z_a, bin_b, z_b, same), and each
    model's marginal statistics equal to its own CalibrationStats."""
    y, qa, qb = _top_label(500, 1)
    s = PairedStats.from_arrays(y, qa, qb, n_bins=7)
    assert s.kind == "top-label" and s.n == 500
    ba, bb = make_binning(None, 7).index(qa.max(1)), make_binning(None, 7).index(qb.max(1))
    za, zb = qa.argmax(1) == y, qb.argmax(1) == y
    same = qa.argmax(1) == qb.argmax(1)
    assert (~same).sum() > 50  # the two models do predict different labels
    count: dict[tuple[int, ...], int] = {}
    for t in zip(ba, za, bb, zb, same):
        key = tuple(int(v) for v in t)
        count[key] = count.get(key, 0) + 1
    c = s.cells()
    got = {(int(a), int(b), int(d), int(e), int(f)): int(n) for a, b, d, e, f, n in
           zip(c["bin_a"], c["z_a"], c["bin_b"], c["z_b"], c["same"], s.counts)}
    assert got == count
    assert not np.any(c["z_a"].astype(bool) & c["z_b"].astype(bool) & ~c["same"])  # one label is right
    np.testing.assert_array_equal(s.joint_counts(), joint_counts(ba, za, bb, zb, 7, 7))
    for mine, own in ((s.stats_a, CalibrationStats.from_arrays(y, qa, n_bins=7)),
                      (s.stats_b, CalibrationStats.from_arrays(y, qb, n_bins=7))):
        np.testing.assert_array_equal(mine.counts, own.counts)
        np.testing.assert_allclose(mine.sum_p, own.sum_p, rtol=1e-12)
        np.testing.assert_allclose(mine.sum_p2, own.sum_p2, rtol=1e-12)
        assert mine.kind == "top-label"


@pytest.mark.parametrize("fine", [False, True])
def test_chunks_add_up_to_the_whole_and_pickle(fine):
    from bece.smooth import fine_binning

    y, qa, qb = _top_label(900, 2)
    kw = {"binning": fine_binning(10)} if fine else {"n_bins": 10}
    whole = PairedStats.from_arrays(y, qa, qb, **kw)
    parts = [PairedStats.from_arrays(y[i], qa[i], qb[i], **kw)
             for i in np.array_split(np.arange(900), [100, 101, 600])]
    merged = sum(parts)
    assert isinstance(merged, PairedStats)
    np.testing.assert_array_equal(merged.keys, whole.keys)
    np.testing.assert_array_equal(merged.counts, whole.counts)
    for f in ("sum_p_a", "sum_p_b", "sum_p2_a", "sum_p2_b"):
        np.testing.assert_allclose(getattr(merged, f), getattr(whole, f), rtol=1e-12)
    back = pickle.loads(pickle.dumps(merged))
    assert repr(back) == repr(merged) and back.binning_a == merged.binning_a
    np.testing.assert_array_equal(back.keys, merged.keys)
    np.testing.assert_array_equal(back.sum_p_b, merged.sum_p_b)
    # the constructor accepts (and checks) what it stores
    again = PairedStats(merged.binning_a, merged.binning_b, merged.keys, merged.counts,
                        merged.sum_p_a, merged.sum_p_b, merged.sum_p2_a, merged.sum_p2_b,
                        kind=merged.kind)
    np.testing.assert_array_equal(again.counts, merged.counts)


def test_triples_and_binary_same_label():
    y, qa, qb = _top_label(300, 3)
    t = PairedStats.from_arrays(y, qa.max(1), qb.max(1), y_pred_a=qa.argmax(1), y_pred_b=qb.argmax(1),
                                n_bins=5)
    s = PairedStats.from_arrays(y, qa, qb, n_bins=5)
    np.testing.assert_array_equal(t.keys, s.keys)
    assert t.kind == "triples"
    b = PairedStats.from_arrays((y == 0).astype(int), qa[:, 0], qb[:, 0], n_bins=5)
    assert b.kind == "binary" and b.cells()["same"].all()
    c = b.cells()
    np.testing.assert_array_equal(c["z_a"], c["z_b"])  # binary: the same outcome


def test_bad_input():
    y, qa, qb = _top_label(50, 4)
    with pytest.raises(ValueError, match="y_prob_a has 50 predictions but y_prob_b has 49"):
        PairedStats.from_arrays(y, qa, qb[:49])
    with pytest.raises(ValueError, match="give both y_pred_a and y_pred_b"):
        PairedStats.from_arrays(y, qa.max(1), qb.max(1), y_pred_a=y)
    with pytest.raises(ValueError, match="y_prob_b has shape"):
        PairedStats.from_arrays(y, qa, special.softmax(np.log(qb[:, :3]), axis=1))
    a = PairedStats.from_arrays(y, qa, qb, n_bins=5)
    with pytest.raises(ValueError, match="different bins for model A"):
        _ = a + PairedStats.from_arrays(y, qa, qb, n_bins=6)
    with pytest.raises(ValueError, match="top-label predictions to triples"):
        _ = a + PairedStats.from_arrays(y, qa.max(1), qb.max(1), y_pred_a=qa.argmax(1),
                                        y_pred_b=qb.argmax(1), n_bins=5)
    bins = a.binning_a
    with pytest.raises(ValueError, match="keys must be increasing"):
        PairedStats(bins, bins, [3, 1], [1, 1], [0.1, 0.1], [0.1, 0.1], [0.01, 0.01], [0.01, 0.01])
    with pytest.raises(ValueError, match="counts must be 1 positive"):
        PairedStats(bins, bins, [1], [0], [0.1], [0.1], [0.01], [0.01])
    with pytest.raises(ValueError, match="impossible statistics"):  # sum_p above the count
        PairedStats(bins, bins, [1], [1], [3.0], [0.1], [0.01], [0.01])
