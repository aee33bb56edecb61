"""bece._stats.binning: the uniform convention, equal-mass edges, explicit edges."""

from __future__ import annotations

import numpy as np
import pytest

from bece._stats import Binning, make_binning


def test_uniform_index_is_floor_pM_with_one_in_last_bin():
    b = make_binning(None, 5, "uniform")
    p = np.array([0.0, 0.1999, 0.2, 0.5, 0.99, 1.0])
    assert b.index(p).tolist() == [0, 0, 1, 2, 4, 4]
    assert b.n_bins == 5 and np.allclose(b.edges, np.linspace(0, 1, 6))


def test_uniform_matches_a_naive_loop(rng):
    p = np.concatenate([rng.uniform(size=1000), [0.0, 1.0, 0.5]])
    m = 15
    naive = [min(int(np.floor(x * m)), m - 1) for x in p]
    assert make_binning(p, m, "uniform").index(p).tolist() == naive


def test_default_is_15_bins():
    assert make_binning(None, None, "uniform").n_bins == 15


def test_quantile_edges_split_mass_equally(rng):
    p = rng.uniform(size=1000)
    b = make_binning(p, 4, "quantile")
    assert b.edges[0] == 0.0 and b.edges[-1] == 1.0
    counts = np.bincount(b.index(p), minlength=4)
    assert counts.tolist() == [250, 250, 250, 250]
    assert make_binning(p, 4, "equal-mass") == b


def test_quantile_ties_are_deterministic_and_arrays_keep_length_M():
    # 60% of the mass on one value: several quantile edges coincide
    p = np.array([0.1, 0.2, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.9, 0.95])
    b = make_binning(p, 5, "quantile")
    assert b.n_bins == 5
    idx = b.index(p)
    # values equal to an edge go right; zero-width bins stay empty
    width = np.diff(b.edges)
    counts = np.bincount(idx, minlength=5)
    assert counts.sum() == p.size
    assert np.all(counts[width == 0] == 0)
    assert np.array_equal(idx, make_binning(p, 5, "quantile").index(p))


def test_explicit_edges_searchsorted_right_with_last_closed():
    b = make_binning(None, None, [0.5, 0.6, 0.8, 1.0])
    p = np.array([0.5, 0.55, 0.6, 0.79, 0.8, 1.0])
    assert b.index(p).tolist() == [0, 0, 1, 1, 2, 2]
    assert b.rule == "edges"


def test_binning_object_passes_through_and_compares_by_edges_and_rule():
    u = make_binning(None, 4, "uniform")
    assert make_binning(None, None, u) is u
    e = make_binning(None, None, np.linspace(0, 1, 5))
    assert u != e  # same edges, different index rule on edge values
    assert u == Binning(np.linspace(0, 1, 5), "uniform")
    with pytest.raises(ValueError, match="does not match"):
        make_binning(None, 3, u)


def _ties_at_one(rng, n=3000):
    p = rng.uniform(size=n)
    p[rng.uniform(size=n) < 0.2] = 1.0  # saturated confidences
    y = (rng.uniform(size=n) < p).astype(np.int64)
    return y, p


def test_own_quantile_edges_are_accepted_as_explicit_edges(rng):
    """Robustness #2: tied confidences made quantile edges coincide, and bece
    then refused its own edges ('binning edges must be strictly increasing')."""
    from bece import CalibrationStats

    y, p = _ties_at_one(rng)
    q = CalibrationStats.from_arrays(y, p, binning="quantile")
    assert (np.diff(q.edges) == 0).sum() >= 2
    again = CalibrationStats.from_arrays(y, p, binning=q.edges)
    assert again.binning == q.binning  # so their chunks add
    assert np.array_equal(again.counts, q.counts)
    assert np.array_equal(again.sum_p, q.sum_p)
    spec = make_binning(None, None, q.edges)
    assert np.array_equal(spec.index(p), make_binning(p, 15, "quantile").index(p))
    # chunks of new data in the same bins add up to the whole
    y2, p2 = _ties_at_one(rng)
    parts = sum(CalibrationStats.from_arrays(y2[i:i + 700], p2[i:i + 700], binning=q.edges)
                for i in range(0, p2.size, 700))
    whole = CalibrationStats.from_arrays(y2, p2, binning=q.edges)
    assert np.array_equal(parts.counts, whole.counts)


def test_equal_explicit_edges_index_as_quantile_edges_do():
    spec = make_binning(None, None, [0.0, 0.5, 0.5, 0.5, 1.0])
    p = np.array([0.2, 0.5, 0.7, 1.0])
    assert spec.index(p).tolist() == [0, 3, 3, 3]  # 0.5 goes to the last bin starting at 0.5
    top = make_binning(None, None, [0.0, 0.5, 1.0, 1.0])
    assert top.index(np.array([0.9, 1.0])).tolist() == [1, 2]  # a zero-width last bin [1, 1]


def test_zero_width_bins_work_downstream(rng):
    import bece

    y, p = _ties_at_one(rng)
    edges = make_binning(p, 15, "quantile").edges
    r = bece.bayesian_ece(y, p, binning=edges, num_samples=500)
    assert np.isfinite(r.draws).all()
    assert np.array_equal(r.draws, bece.bayesian_ece(y, p, binning="quantile", num_samples=500).draws)
    last = r.stats.n_bins - 1
    assert np.all(r.confidence[:, last] == 1.0)  # the point bin [1, 1]
    assert np.isfinite(bece.bayesian_top_label_ece(y, p, y_pred=np.ones_like(y), binning=edges,
                                                   num_samples=200).draws).all()


@pytest.mark.parametrize(
    "edges,message",
    [([0.0, 0.5, 0.3, 1.0], r"non-decreasing; edges\[1\] = 0.5 is followed by 0.3"),
     ([0.5, 0.5], "positive width"),
     (["0", "0.5", "1"], "dtype <U3"),
     ([False, True], "dtype bool"),
     (np.array([0.0, 0.5, 1.0], dtype=object), "dtype object")],
)
def test_bad_explicit_edges_are_refused(edges, message):
    """Robustness #8: edges given as strings were silently converted to floats."""
    with pytest.raises(ValueError, match=message):
        make_binning(None, None, edges)


@pytest.mark.parametrize("case", ["fine", "quantile-ties", "sub-range", "two-edges", "clustered"])
def test_edge_lookup_table_gives_searchsorted_exactly(rng, case):
    """From _LOOKUP_MIN_SIZE confidences, explicit edges are looked up in a
    table of buckets; the indices must be searchsorted's, integer for integer,
    on the edges themselves, their float neighbours and random confidences,
    in float64 and float32."""
    from bece._smooth.atoms import DEFAULT_SUBCELLS, _subdivide
    from bece._stats.binning import _LOOKUP_MIN_SIZE

    if case == "fine":  # the smooth model's cells: uniform, logit-refined ends
        edges = _subdivide(make_binning(None, 15, "uniform"), DEFAULT_SUBCELLS).edges
    elif case == "quantile-ties":
        edges = make_binning(np.round(rng.beta(5, 1, size=5000), 2), 40, "quantile").edges
    elif case == "sub-range":
        edges = np.sort(np.concatenate([[0.3, 0.7], rng.uniform(0.3, 0.7, size=50)]))
    elif case == "two-edges":
        edges = np.array([0.25, 0.75])
    else:  # most edges in one bucket
        edges = np.concatenate([[0.0], 1e-7 * np.arange(1, 200), [0.5, 1.0]])
    lo, hi = edges[0], edges[-1]
    inner = edges[(edges > lo) & (edges < hi)]
    p = np.concatenate([
        edges, np.nextafter(inner, -np.inf), np.nextafter(inner, np.inf),
        rng.uniform(lo, hi, size=_LOOKUP_MIN_SIZE),
        lo + (hi - lo) * rng.beta(0.2, 0.2, size=_LOOKUP_MIN_SIZE),
    ])
    b = Binning(edges, "edges")
    expected = np.searchsorted(edges, p, side="right") - 1
    got = b.raw_index(p)
    assert got.dtype == np.int64 and np.array_equal(got, expected)
    assert np.array_equal(b.raw_index(p), expected)  # the cached table again
    p32 = p.astype(np.float32)
    p32 = p32[(p32 >= lo) & (p32 <= hi)]
    assert p32.size >= _LOOKUP_MIN_SIZE
    assert np.array_equal(b.raw_index(p32), np.searchsorted(edges, p32, side="right") - 1)


def test_edge_lookup_survives_pickling_and_objects_without_the_table(rng):
    import pickle

    from bece._stats.binning import _LOOKUP_MIN_SIZE

    edges = np.sort(np.concatenate([[0.0, 1.0], rng.uniform(size=30)]))
    p = rng.uniform(size=_LOOKUP_MIN_SIZE)
    expected = np.searchsorted(edges, p, side="right") - 1
    b = Binning(edges, "edges")
    b.raw_index(p)  # builds the table
    assert np.array_equal(pickle.loads(pickle.dumps(b)).raw_index(p), expected)
    bare = Binning.__new__(Binning)  # as unpickled from a Binning that had no table slot
    bare.edges, bare.rule = edges, "edges"
    assert np.array_equal(bare.raw_index(p), expected)
