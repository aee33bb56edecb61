"""bece._smooth.atoms: the atoms of the smooth model, from arrays (one per
prediction, or fine-grid cells that keep the bin statistics) and from
CalibrationStats in fine bins (fine_binning, atoms_from_stats).

Deterministic: checked against numpy sums, CalibrationStats and hand cases.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

import bece
from bece._smooth.atoms import atoms_from_stats, ece_statistics, make_atoms
from bece._stats import CalibrationStats, make_binning
from bece.smooth import fine_binning

from ..conftest import _data
from .conftest import N


# ------------------------------------------------------------------ atoms
def test_exact_atoms_keep_every_prediction_sorted_by_bin(rng):
    z, p = _data(500, rng)
    bins = make_binning(p, 15)
    at = make_atoms(z, p, bins, None)
    assert at.exact and at.n == 500 and np.all(np.diff(at.bin) >= 0)
    np.testing.assert_array_equal(np.sort(at.p), np.sort(p))
    assert at.successes.sum() == z.sum()
    np.testing.assert_array_equal(at.bin, bins.index(at.p))
    np.testing.assert_allclose(at.x, special.logit(at.p))


@pytest.mark.parametrize("binning", ["uniform", "quantile"])
def test_grid_atoms_preserve_bin_statistics(rng, binning):
    z, p = _data(20_000, rng)
    p[:7] = 1.0  # the top edge
    bins = make_binning(p, 15, binning)
    at = make_atoms(z, p, bins, 16)
    stats = bece.CalibrationStats.from_arrays(z, p, n_bins=15, binning=bins)
    assert at.trials.sum() == 20_000 and at.grid == 16
    np.testing.assert_array_equal(np.bincount(at.bin, weights=at.trials, minlength=15),
                                  stats.bin_counts)
    np.testing.assert_array_equal(np.bincount(at.bin, weights=at.successes, minlength=15),
                                  stats.counts[1])
    np.testing.assert_allclose(np.bincount(at.bin, weights=at.trials * at.p, minlength=15),
                               stats.sum_p, rtol=1e-12)
    assert np.all((at.lower <= at.p) & (at.p <= at.upper))
    edges = bins.edges
    assert np.all(at.lower >= edges[at.bin] - 1e-15) and np.all(at.upper <= edges[at.bin + 1] + 1e-15)


# ------------------------------------------------------------- fine bins
def test_fine_binning_by_hand():
    """15 x 128 sub-cells, those next to 0 and 1 cut further in logit
    (tests/smooth/test_grid_error.py checks the widths)."""
    fine = fine_binning(15)
    assert fine.rule == "edges" and fine.n_bins > 15 * 128
    # away from the ends the edges are those of 1920 uniform bins (each the
    # smallest float that bece's uniform rule puts in the bin: j / 1920 or an ulp below)
    e = fine.edges
    j = np.arange(1, 1920)
    middle = e[(e > 0.02) & (e < 0.98)]
    uniform = j[(j / 1920 > 0.02) & (j / 1920 < 0.98)] / 1920
    assert middle.size == uniform.size
    np.testing.assert_allclose(middle, uniform, rtol=2.3e-16, atol=0)
    assert np.all((middle * 1920).astype(np.int64) == np.round(uniform * 1920))
    assert np.all((np.nextafter(middle, 0) * 1920).astype(np.int64) == np.round(uniform * 1920) - 1)
    edges = fine_binning(binning=[0.0, 0.5, 0.9, 1.0], grid=2).edges
    assert np.isin([0.0, 0.25, 0.5, 0.7, 0.9, 0.95, 1.0, 1e-6, 1 - 1e-6], edges).all()
    # the ECE edges are among the fine edges as the same floats
    q = make_binning(np.random.default_rng(0).uniform(size=999), 10, "quantile").edges
    fe = fine_binning(binning=q, grid=128).edges
    assert np.isin(q, fe).all()
    assert np.all(np.diff(fe) >= 0)


@pytest.mark.parametrize("n_bins, binning", [(15, "uniform"), (7, "uniform"),
                                             (None, [0.0, 0.05, 0.5, 0.9, 1.0])])
def test_ece_statistics_equal_a_pass_in_the_ece_bins(n_bins, binning):
    """Fine statistics added up into the ECE bins are, bit for bit, those read
    in the ECE bins: confidences on and beside every edge, at 0 and 1."""
    rng = np.random.default_rng(5)
    ece = make_binning(None, n_bins, binning)
    on = np.concatenate([ece.edges, np.nextafter(ece.edges, 0), np.nextafter(ece.edges, 1)])
    p = np.clip(np.concatenate([rng.uniform(size=3000), rng.beta(0.1, 0.1, 500), on]), 0, 1)
    y = (rng.uniform(size=p.size) < p).astype(int)
    fine = CalibrationStats.from_arrays(y, p, binning=fine_binning(n_bins, binning))
    direct = CalibrationStats.from_arrays(y, p, binning=ece)
    fine, direct = fine.with_kind("binary"), direct.with_kind("binary")
    got = ece_statistics(fine, n_bins, binning)
    assert got == direct and got.kind == "binary"
    np.testing.assert_array_equal(got.sum_p, direct.sum_p)
    np.testing.assert_array_equal(got.sum_p2, direct.sum_p2)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"binning": "quantile"}, "quantile.*edges"),
        ({"grid": 0}, "grid"),
        ({"grid": 2.5}, "grid"),
        ({"n_bins": 0}, "n_bins"),
        ({"binning": [0.0, 0.5, 0.4, 1.0]}, "binning edges"),
    ],
)
def test_fine_binning_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        fine_binning(**kwargs)


def test_atoms_from_stats_are_the_fine_cells():
    """Hand case: 2 ECE bins x 2 sub-cells, five predictions."""
    p = np.array([0.1, 0.2, 0.3, 0.6, 1.0])
    y = np.array([0, 1, 1, 0, 1])
    # 4 uniform bins refine 2 ECE bins (fine_binning(2, grid=2) would also cut
    # these wide cells in logit)
    stats = CalibrationStats.from_arrays(y, p, binning=make_binning(None, 4))
    at = atoms_from_stats(stats, n_bins=2)
    np.testing.assert_array_equal(at.trials, [2, 1, 1, 1])
    np.testing.assert_array_equal(at.successes, [1, 1, 0, 1])
    np.testing.assert_allclose(at.p, [0.15, 0.3, 0.6, 1.0])
    np.testing.assert_array_equal(at.bin, [0, 0, 1, 1])
    np.testing.assert_array_equal(at.lower, [0.0, 0.25, 0.5, 0.75])
    np.testing.assert_array_equal(at.upper, [0.25, 0.5, 0.75, 1.0])
    np.testing.assert_allclose(at.x, special.logit([0.15, 0.3, 0.6, 1 - 1e-6]))
    assert at.grid == 2 and not at.exact and at.binning == make_binning(None, 2)


def test_atoms_from_stats_equal_make_atoms(binary):
    y, p, _ = binary
    bins = make_binning(None, 15)
    a = make_atoms(y, p, bins, 128)
    b = atoms_from_stats(CalibrationStats.from_arrays(y, p, binning=fine_binning(15)), n_bins=15)
    for name in ("p", "x", "trials", "successes", "bin", "lower", "upper"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    # each atom sits in its ECE bin (the same bin the binned model uses)
    np.testing.assert_array_equal(b.bin, bins.index(b.lower))
    assert b.n == N
