"""bece._plots.posterior: the ECE posteriors side by side (forest and density)
and the paired comparison figure, checked against the draws' quantiles;
every figure is also written as PNG."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.collections import PolyCollection

import bece
from bece._binned.compare import binned_compare as compare
from bece._plots.reliability import COUNTS_LABEL
from bece.plots import plot_comparison, plot_ece_posterior

from .conftest import _counts_axes, _line


# ---------------------------------------------------------- ECE posteriors
def test_forest_plot(tmp_path):
    rng = np.random.default_rng(6)
    p = rng.uniform(size=500)
    y = (rng.uniform(size=500) < p).astype(int)
    r1 = bece.bayesian_ece(y, p, num_samples=1000, seed=1)
    c = compare(y, p**0.7, p**1.5, num_samples=1000, seed=2)
    ax = plot_ece_posterior(r1, c, labels=["p", "p^0.7", "p^1.5"])
    ax.figure.savefig(tmp_path / "forest.png")
    ticks = {t.get_position()[1]: t.get_text() for t in ax.get_yticklabels()}
    assert ticks == {2: "p", 1: "p^0.7", 0: "p^1.5"}  # top to bottom in argument order
    for res, name in ((r1, "p"), (c.a, "p^0.7"), (c.b, "p^1.5")):
        (thin,) = [co for co in ax.collections if co.get_label() == f"{name}: 90% interval"]
        (seg,) = thin.get_segments()
        np.testing.assert_allclose(seg[:, 0], np.quantile(res.draws, [0.05, 0.95]))
        (thick,) = [co for co in ax.collections if co.get_label() == f"{name}: 50% interval"]
        np.testing.assert_allclose(thick.get_segments()[0][:, 0], np.quantile(res.draws, [0.25, 0.75]))
        assert _line(ax, f"{name}: median").get_xdata()[0] == pytest.approx(np.median(res.draws))
        assert _line(ax, f"{name}: plug-in ECE").get_xdata()[0] == res.plugin
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "90% interval", "50% interval", "median", "plug-in ECE"]


def test_density_plot(tmp_path):
    rng = np.random.default_rng(7)
    p = rng.uniform(size=500)
    y = (rng.uniform(size=500) < p).astype(int)
    rs = [bece.bayesian_ece(y, p**k, num_samples=2000, seed=k) for k in (1, 2)]
    ax = plot_ece_posterior(*rs, kind="density")
    ax.figure.savefig(tmp_path / "density.png")
    curves = [ln for ln in ax.get_lines() if "mean" in ln.get_label()]
    assert [ln.get_label().split(":")[0] for ln in curves] == ["model 1", "model 2"]
    for ln, r in zip(curves, rs):
        x, dens = ln.get_xdata(), ln.get_ydata()
        area = np.sum(np.diff(x) * (dens[1:] + dens[:-1]) / 2)  # trapezoids (np.trapezoid: NumPy >= 2)
        assert area == pytest.approx(1.0, abs=0.02)  # a density
        assert x[np.argmax(dens)] == pytest.approx(np.median(r.draws), abs=3 * r.std)
    vlines = [ln for ln in ax.get_lines() if "plug-in" in ln.get_label()]
    assert [ln.get_xdata()[0] for ln in vlines] == [r.plugin for r in rs]
    assert len([co for co in ax.collections if isinstance(co, PolyCollection)]) == 2


@pytest.mark.parametrize(
    "args,kwargs,message",
    [
        ((), {}, "at least one result"),
        (("x",), {}, "results must be BayesianECE or Comparison"),
        ((None,), {"kind": "violin"}, "kind must be 'forest' or 'density'"),
        ((None,), {"labels": ["a", "b"]}, "labels has 2 entries but there are 1"),
    ],
)
def test_plot_ece_posterior_bad_input(args, kwargs, message):
    r = bece.bayesian_ece([0, 1, 1], [0.2, 0.7, 0.9], n_bins=3, num_samples=50)
    args = tuple(r if a is None else a for a in args)
    with pytest.raises(ValueError, match=message):
        plot_ece_posterior(*args, **kwargs)


# ---------------------------------------------------------- comparison figure
def test_comparison_figure(tmp_path):
    from matplotlib.figure import Figure

    rng = np.random.default_rng(8)
    t = rng.uniform(size=800)
    y = (rng.uniform(size=800) < t).astype(int)
    c = compare(y, t, t**0.6, n_bins=10, num_samples=2000, seed=3)
    fig = plot_comparison(c, labels=("calibrated", "sqrt-ish"), fig=Figure(figsize=(15, 5.6)))
    fig.savefig(tmp_path / "compare.png")
    main = [a for a in fig.axes if a.get_label() != COUNTS_LABEL]
    assert len(main) == 3 and len(_counts_axes(fig)) == 2
    assert main[0].get_title().startswith("calibrated\n") and main[1].get_title().startswith("sqrt-ish\n")
    diff = main[2]
    shown = "> 0.999" if c.prob_a_better > 0.999 else f"= {c.prob_a_better:.3f}"
    assert f"< ECE(sqrt-ish)) {shown}" in diff.get_title()
    assert _line(diff, "no difference").get_xdata()[0] == 0.0
    lo, hi = c.interval(0.9)
    (band,) = [co for co in diff.collections if co.get_label().startswith("90% interval")]
    xs = band.get_paths()[0].vertices[:, 0]
    assert lo - 1e-9 <= xs.min() and xs.max() <= hi + 1e-9
    assert diff.get_xlabel() == "ECE(calibrated) - ECE(sqrt-ish)"
    with pytest.raises(ValueError, match="comparison must be a Comparison"):
        plot_comparison(c.a)
    with pytest.raises(ValueError, match="labels must name the two models"):
        plot_comparison(c, labels=("a",))


def test_comparison_figure_names_and_order():
    """The panels are titled with the comparison's names (Comparison.named)
    unless labels are given; b_first draws B's diagram on the left (before,
    then after, for a recalibration); a probability beyond the draws prints
    as '> 0.999'."""
    from matplotlib.figure import Figure

    rng = np.random.default_rng(0)
    t = rng.uniform(size=800)
    y = (rng.uniform(size=800) < t).astype(int)
    c = compare(y, t, t**0.5, n_bins=10, num_samples=1000, seed=1).named("calibrated", "sharp")
    fig = plot_comparison(c, fig=Figure())
    titles = [ax.get_title() for ax in fig.axes if ax.get_label() != COUNTS_LABEL]
    assert titles[0].startswith("calibrated\n") and titles[1].startswith("sharp\n")
    assert "P(ECE(calibrated) < ECE(sharp)) > 0.999" in titles[2]
    fig = plot_comparison(c, labels=("after", "before"), fig=Figure(), b_first=True)
    main = [ax for ax in fig.axes if ax.get_label() != COUNTS_LABEL]
    assert main[0].get_title().startswith("before\n") and main[1].get_title().startswith("after\n")
    assert main[2].get_xlabel() == "ECE(after) - ECE(before)"
