"""bece.stats.binning: the uniform convention, equal-mass edges, explicit edges."""

from __future__ import annotations

import numpy as np
import pytest

from bece.stats import Binning, make_binning


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
