"""bece._regression.histogram: the PIT histogram on a fine grid (PITHistogram).

Deterministic: hand-computed cells, a naive loop, equality with the
calibration curve of the values and between chunked and one-pass counts.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from bece._regression.histogram import cell_index, check_continuous, on_grid
from bece.regression import DiscretePITWarning, PITHistogram, calibration_curve, pit


def test_cells_hand_computed():
    # cell k is (k/G, (k+1)/G], cell 0 also holds 0
    u = np.array([0.0, 0.001, 0.0015, 0.07, 0.0700001, 0.5, 1.0])
    np.testing.assert_array_equal(cell_index(u, 1000), [0, 0, 1, 69, 70, 499, 999])
    h = PITHistogram.from_pit([0.05, 0.1, 0.1, 0.95], n_cells=10)
    np.testing.assert_array_equal(h.counts, [3, 0, 0, 0, 0, 0, 0, 0, 0, 1])
    h = PITHistogram.from_pit([0.05, 0.1, 0.11, 0.95], n_cells=10)
    np.testing.assert_array_equal(h.counts, [2, 1, 0, 0, 0, 0, 0, 0, 0, 1])
    assert h.counts.dtype == np.int64 and h.n == 4 and h.n_cells == 10
    np.testing.assert_array_equal(h.cumulative([0.1, 0.2, 0.9]), [2, 3, 3])
    np.testing.assert_array_equal(h.edges, np.arange(11) / 10)


def test_cells_match_a_naive_loop(rng):
    g = 37
    u = np.concatenate([rng.uniform(size=500), np.arange(g + 1) / g])  # values on the edges too
    naive = np.zeros(g, dtype=np.int64)
    for v in u:
        k = 0
        while not (v <= (k + 1) / g):
            k += 1
        naive[k] += 1
    np.testing.assert_array_equal(PITHistogram.from_pit(u, n_cells=g).counts, naive)


def test_levels_with_three_decimals_are_on_the_default_grid():
    lv = np.arange(1, 1000) / 1000
    np.testing.assert_array_equal(on_grid(lv, 1000), np.arange(1, 1000))
    np.testing.assert_array_equal(on_grid(np.arange(1, 100) / 100, 1000), np.arange(10, 1000, 10))
    assert on_grid(np.array([1 / 3, 0.0005]), 1000).tolist() == [-1, -1]


def test_observed_equals_the_calibration_curve_of_the_values(rng):
    u = rng.beta(0.7, 1.3, size=5000)
    u[:40] = np.round(u[:40], 2)  # some values exactly on levels
    lv = np.arange(1, 100) / 100
    h = PITHistogram.from_pit(u)
    np.testing.assert_array_equal(h.observed(lv), calibration_curve(u, lv)[1])


def test_chunks_add_up_to_the_whole(rng):
    u = rng.uniform(size=10_001)
    whole = PITHistogram.from_pit(u, n_cells=500)
    parts = [PITHistogram.from_pit(u[a:a + 1234], n_cells=500) for a in range(0, u.size, 1234)]
    np.testing.assert_array_equal(sum(parts).counts, whole.counts)
    np.testing.assert_array_equal((parts[0] + parts[1]).counts, parts[0].counts + parts[1].counts)
    empty = PITHistogram.from_pit(np.array([]), n_cells=500)
    assert empty.n == 0 and (empty + whole).n == whole.n
    with pytest.raises(ValueError, match="different grids"):
        whole + PITHistogram.from_pit(u)
    with pytest.raises(TypeError):
        whole + 1
    with pytest.raises(TypeError):
        whole + u


def test_from_forecast_is_from_pit_of_pit(rng):
    mu, sd = rng.normal(size=300), rng.uniform(0.5, 2, size=300)
    y = mu + sd * rng.normal(size=300)
    np.testing.assert_array_equal(PITHistogram.from_forecast(y, mean=mu, std=sd).counts,
                                  PITHistogram.from_pit(pit(y, mean=mu, std=sd)).counts)
    s = mu[:, None] + sd[:, None] * rng.normal(size=(300, 50))
    a = PITHistogram.from_forecast(y, samples=s, randomize=True, seed=3, n_cells=100)
    b = PITHistogram.from_pit(pit(y, samples=s, randomize=True, seed=3), n_cells=100)
    np.testing.assert_array_equal(a.counts, b.counts)


@pytest.mark.parametrize(
    "counts, match",
    [
        (np.ones(10, dtype=float), "integers"),
        (np.ones(10, dtype=bool), "integers"),
        (np.ones((2, 10), dtype=np.int64), "shape"),
        (np.ones(5, dtype=np.int64), "n_cells"),
        (np.r_[np.ones(9, dtype=np.int64), -1], "negative"),
        (np.full(10, 2**62, dtype=np.int64), "int64"),
    ],
)
def test_bad_counts_are_refused(counts, match):
    with pytest.raises(ValueError, match=match):
        PITHistogram(counts)


def test_counts_are_read_only_and_bad_options_refused():
    h = PITHistogram.from_pit([0.2, 0.4], n_cells=10)
    with pytest.raises(ValueError):
        h.counts[0] = 3
    for bad in (9, 2.5, True, 10**7):
        with pytest.raises(ValueError, match="n_cells"):
            PITHistogram.from_pit([0.2], n_cells=bad)
    with pytest.raises(ValueError, match="grid"):
        h.cumulative([0.25])
    with pytest.raises(ValueError, match="pit"):
        PITHistogram.from_pit([0.2, 1.5])
    with pytest.raises(ValueError, match="empty"):
        PITHistogram.from_pit(np.array([]), n_cells=10).observed([0.5])
    assert repr(h) == "PITHistogram(n=2, n_cells=10)"
    big = PITHistogram(np.full(10, 2**59, dtype=np.int64))
    with pytest.raises(ValueError, match="int64"):
        big + big


def test_discrete_pit_warns_and_continuous_does_not(rng):
    y = rng.normal(size=2000)
    s = rng.normal(size=(2000, 30))
    with pytest.warns(DiscretePITWarning, match="randomize=True"):
        PITHistogram.from_pit(pit(y, samples=s))
    q = np.tile([-1.0, 0.0, 1.0], (2000, 1))
    with pytest.warns(DiscretePITWarning, match="exactly 0 or 1"):
        check_continuous(pit(y, quantiles=q, levels=[0.2, 0.5, 0.8]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        PITHistogram.from_pit(pit(y, samples=s, randomize=True, seed=0))
        PITHistogram.from_pit(pit(y, mean=0.0, std=1.0))
        check_continuous(np.array([0.1, 0.4, 0.4, 0.9]))  # a few ties in a small sample
