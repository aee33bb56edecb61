"""Figures that read at a glance (issue 17, item 4): the smooth model's
curve with its band, band and dots from one posterior, per-label figures of
a bounded size at K = 1,000, tick labels that never overlap, and a top-label
diagram not filled by the region below 1/K where no confidence can lie."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure

import bece
from bece._binned.compare import binned_compare as compare
from bece._plots.reliability import COUNTS_LABEL, CURVE_LABEL
from bece.plots import plot_comparison, reliability_diagram

from ..conftest import simulate_multiclass
from .conftest import _counts_axes, _dots, _line


def _overlapping_ticks(fig):
    """Pairs of visible tick labels, on one axis of one Axes, whose drawn
    bounding boxes overlap."""
    fig.canvas.draw()
    out = []
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        for labels in (ax.get_xticklabels(), ax.get_yticklabels()):
            shown = [t for t in labels if t.get_visible() and t.get_text()]
            boxes = [t.get_window_extent() for t in shown]
            out += [(shown[i].get_text(), shown[j].get_text())
                    for i in range(len(boxes)) for j in range(i + 1, len(boxes))
                    if boxes[i].overlaps(boxes[j])]
    return out


@pytest.fixture(scope="module")
def smooth_result():
    rng = np.random.default_rng(11)
    p = rng.uniform(size=400)
    y = (rng.uniform(size=400) < p**1.4).astype(int)
    return bece.bayesian_ece(y, p, n_bins=10, num_samples=1000, seed=3)


# ---------------------------------------------------------- the posterior curve
def test_smooth_result_draws_its_median_curve_and_band(smooth_result):
    r = smooth_result
    assert hasattr(r, "curve")  # the default model is the smooth one
    ax = reliability_diagram(r)
    line = _line(ax, CURVE_LABEL)
    np.testing.assert_array_equal(line.get_xdata(), r.curve_grid)
    np.testing.assert_allclose(line.get_ydata(), np.median(r.curve, axis=0), rtol=0, atol=1e-12)
    (band,) = [co for co in ax.collections if isinstance(co, PolyCollection)]
    assert band.get_label() == "90% band (model posterior)"
    v = band.get_paths()[0].vertices
    lo, hi = np.quantile(r.curve, [0.05, 0.95], axis=0)
    for j in (0, 17, 50, r.curve_grid.size - 1):
        ys = v[v[:, 0] == r.curve_grid[j], 1]
        assert ys.min() == pytest.approx(lo[j], abs=1e-12) and ys.max() == pytest.approx(hi[j], abs=1e-12)
    # no per-bin rectangles beside the curve's band; curve=False brings them back
    assert len([co for co in reliability_diagram(r, curve=False).collections
                if isinstance(co, PolyCollection)]) == 10


def test_band_and_dots_come_from_the_same_draws(smooth_result):
    r = smooth_result
    full = r.stats.bin_counts > 0
    # with the curve: the dots are the medians of the same S draws
    dots = _dots(reliability_diagram(r))
    np.testing.assert_allclose(dots.get_offsets()[:, 0], np.median(r.confidence, axis=0)[full], atol=1e-12)
    np.testing.assert_allclose(dots.get_offsets()[:, 1], np.median(r.accuracy, axis=0)[full], atol=1e-12)
    # ... and each lies inside the curve's 90% band at its confidence (a bin's
    # accuracy is the curve averaged over the bin, draw by draw)
    lo, hi = (np.interp(dots.get_offsets()[:, 0], r.curve_grid, q)
              for q in np.quantile(r.curve, [0.05, 0.95], axis=0))
    assert np.all((lo - 0.01 <= dots.get_offsets()[:, 1]) & (dots.get_offsets()[:, 1] <= hi + 0.01))
    # the model's per-bin band (band_prior=None): band and dots from result.accuracy
    ax = reliability_diagram(r, curve=False, band_prior=None, prob=0.8)
    bands = sorted(co.get_paths()[0].vertices[:, 1].min() for co in ax.collections
                   if isinstance(co, PolyCollection))
    np.testing.assert_allclose(sorted(np.quantile(r.accuracy, 0.1, axis=0)[full]), bands, atol=1e-12)
    np.testing.assert_allclose(_dots(ax).get_offsets()[:, 1], np.median(r.accuracy, axis=0)[full],
                               atol=1e-12)
    # the Jeffreys band: dots at the Beta medians (scipy), at the observed confidence
    from scipy import stats

    c0, c1 = r.stats.counts
    dots = _dots(reliability_diagram(r, curve=False))
    np.testing.assert_allclose(dots.get_offsets()[:, 1], stats.beta.median(c1 + 0.5, c0 + 0.5)[full])
    np.testing.assert_allclose(dots.get_offsets()[:, 0], (r.stats.sum_p / r.stats.bin_counts)[full])


def test_curve_option_is_checked():
    r = bece.bayesian_ece([0, 1, 1], [0.2, 0.7, 0.9], n_bins=3, num_samples=50, model="binned")
    with pytest.raises(ValueError, match="curve=True needs a result with a calibration curve"):
        reliability_diagram(r, curve=True)
    with pytest.raises(ValueError, match="curve must be True, False or None"):
        reliability_diagram(r, curve="yes")
    with pytest.raises(ValueError, match="max_labels must be a positive integer or None"):
        reliability_diagram(r, max_labels=0)


# ---------------------------------------------------------- the region below 1/K
def test_region_below_one_over_k_takes_little_room():
    """K = 2 top-label: no confidence lies below 1/2. Before, half of the
    panel showed it as hatched blocks; now at most a tenth of the width."""
    rng = np.random.default_rng(12)
    y, prob = simulate_multiclass(600, 2, rng)
    r = bece.bayesian_ece(y, prob, n_bins=15, num_samples=500, model="binned")
    ax = reliability_diagram(r)
    fig = ax.figure
    fig.canvas.draw()
    x0, x1 = ax.get_xlim()
    assert (0.5 - x0) / (x1 - x0) < 0.1
    for artist in [*ax.collections, *ax.patches]:
        assert not artist.get_hatch()
    # the area of every band or patch left of 1/K, as a fraction of the panel
    panel = ax.get_window_extent()
    cut = ax.transData.transform((0.5, 0))[0]
    left = 0.0
    for artist in [*ax.collections, *ax.patches]:
        box = artist.get_window_extent()
        left += max(0.0, min(box.x1, cut) - max(box.x0, panel.x0)) * max(0.0, box.height)
    assert left / (panel.width * panel.height) < 0.05
    # P(y = 1) input keeps [0, 1]
    binary = bece.bayesian_ece(y, prob[:, 1], n_bins=15, num_samples=500, model="binned")
    assert reliability_diagram(binary).get_xlim() == (0.0, 1.0)


# ---------------------------------------------------------- per-label size
def test_per_label_at_k_1000_keeps_a_readable_size():
    rng = np.random.default_rng(13)
    y, prob = simulate_multiclass(3000, 1000, rng)
    r = bece.bayesian_top_label_ece(y, prob, n_bins=10, num_samples=200, model="binned")
    fig = reliability_diagram(r, per_label=True)
    width, height = fig.get_size_inches()
    assert width <= 15 and height <= 13
    panels = [a for a in fig.axes if a.get_visible() and a.get_label() != COUNTS_LABEL]
    assert len(panels) == 12 and len(_counts_axes(fig)) == 12
    # the 12 most-predicted labels, most first
    n_pred = np.bincount(prob.argmax(1), minlength=1000)
    shown = [int(a.get_title().split(" (")[0].removeprefix("label ")) for a in panels]
    assert sorted(n_pred[shown], reverse=True) == list(n_pred[shown])
    assert min(n_pred[shown]) >= np.sort(n_pred)[-12]
    note = fig._suptitle.get_text()
    assert f"the 12 most-predicted of {r.n_labels:,} labels" in note
    assert f"{n_pred[shown].sum():,} of 3,000 predictions" in note
    assert not _overlapping_ticks(fig)


# ---------------------------------------------------------- tick labels
@pytest.mark.parametrize("size,loc,sd", [((15, 5.6), -0.15, 0.015), ((12, 4.5), -0.1, 0.012),
                                         ((12, 4.5), 0.1, 0.015), ((9, 3.5), -0.15, 0.01)])
def test_no_overlapping_tick_labels_in_the_comparison(size, loc, sd):
    """The difference panel: the first three cases gave labels running into
    each other ("-0.200-0.175-0.150...") before the ticks were thinned."""
    rng = np.random.default_rng(14)
    p = rng.uniform(size=300)
    y = (rng.uniform(size=300) < p).astype(int)
    c = compare(y, p, p**2, num_samples=500)
    c = dataclasses.replace(c, diff_draws=loc + sd * np.random.default_rng(1).normal(size=500))
    fig = plot_comparison(c, labels=["A (multi_lr)", "B (multi_gnb)"], fig=Figure(figsize=size))
    assert not _overlapping_ticks(fig)
    assert len([t for t in fig.axes[2].get_xticklabels() if t.get_text()]) >= 3


@pytest.mark.parametrize("k", [2, 10])
def test_no_overlapping_tick_labels_in_reliability_diagrams(k, smooth_result):
    rng = np.random.default_rng(15)
    y, prob = simulate_multiclass(500, k, rng)
    r = bece.bayesian_ece(y, prob, n_bins=15, num_samples=300, model="binned")
    assert not _overlapping_ticks(reliability_diagram(r).figure)
    assert not _overlapping_ticks(reliability_diagram(smooth_result).figure)
