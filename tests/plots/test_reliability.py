"""bece._plots.reliability: the reliability diagram's artists (bands, lines,
counts, labels) checked against independent computations (scipy's Beta
quantiles, scikit-learn's calibration_curve, numpy's histogram); every figure
is also written as PNG."""

from __future__ import annotations

from types import SimpleNamespace

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.collections import PolyCollection
from scipy import stats

import bece
from bece._plots.reliability import COUNTS_LABEL
from bece.plots import reliability_diagram

from ..conftest import simulate_multiclass
from .conftest import _counts_axes, _dots, _line


def _bands(ax):
    """The fill_between bands of a reliability diagram, in bin order:
    (x_lo, x_hi, y_lo, y_hi, hatched)."""
    out = []
    for coll in ax.collections:
        if isinstance(coll, PolyCollection) and coll.get_paths():
            v = coll.get_paths()[0].vertices
            out.append((v[:, 0].min(), v[:, 0].max(), v[:, 1].min(), v[:, 1].max(), bool(coll.get_hatch())))
    return sorted(out)


def _jeffreys(c1, c0, prob=0.9):
    """Brown, Cai & DasGupta's modified Jeffreys interval, from scipy."""
    lo = stats.beta.ppf((1 - prob) / 2, c1 + 0.5, c0 + 0.5)
    hi = stats.beta.ppf((1 + prob) / 2, c1 + 0.5, c0 + 0.5)
    if c1 + c0 > 0 and c1 == 0:
        lo = 0.0
    if c1 + c0 > 0 and c0 == 0:
        hi = 1.0
    return lo, hi


# ---------------------------------------------------------- reliability diagram
def test_reliability_diagram_artists(tmp_path):
    from sklearn.calibration import calibration_curve

    rng = np.random.default_rng(0)
    p = rng.uniform(0.05, 0.95, size=400) ** 1.5
    y = (rng.uniform(size=400) < p**0.8).astype(int)
    r = bece.bayesian_ece(y, p, n_bins=10, num_samples=2000, seed=1)
    ax = reliability_diagram(r, curve=False)  # per-bin bands (the curve: test_figures_readable)
    fig = ax.figure
    fig.savefig(tmp_path / "reliability.png")
    assert (tmp_path / "reliability.png").stat().st_size > 10_000

    diag = _line(ax, "perfect calibration")
    np.testing.assert_array_equal(diag.get_xdata(), [0, 1])
    np.testing.assert_array_equal(diag.get_ydata(), [0, 1])

    # bands: one per non-empty bin, spanning the bin, Jeffreys intervals from scipy
    counts = r.stats.counts
    assert (counts.sum(0) > 0).all()
    bands = _bands(ax)
    assert len(bands) == 10
    edges = np.linspace(0, 1, 11)
    for m, (x0, x1, y0, y1, hatched) in enumerate(bands):
        assert x0 == pytest.approx(edges[m]) and x1 == pytest.approx(edges[m + 1])
        lo, hi = _jeffreys(counts[1, m], counts[0, m])
        assert (y0, y1) == (pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12))
        assert not hatched
        assert y1 - y0 > 0.01  # never a zero-width band

    # plug-in points equal scikit-learn's calibration_curve (continuous data:
    # no confidence on an edge, where sklearn closes bins on the other side)
    prob_true, prob_pred = calibration_curve(y, p, n_bins=10)
    plug = _line(ax, "observed (plug-in)")
    np.testing.assert_allclose(plug.get_xdata(), prob_pred, atol=1e-12)
    np.testing.assert_allclose(plug.get_ydata(), prob_true, atol=1e-12)

    # dots: medians of the band's own posterior (Jeffreys) at the observed
    # mean confidence, area proportional to the count
    dots = _dots(ax)
    np.testing.assert_allclose(dots.get_offsets()[:, 1], stats.beta.median(counts[1] + 0.5, counts[0] + 0.5))
    np.testing.assert_allclose(dots.get_offsets()[:, 0], prob_pred, atol=1e-12)
    n_m = counts.sum(0)
    sizes = dots.get_sizes()  # an increasing affine function of the count
    assert sizes.max() > 2 * sizes.min()
    np.testing.assert_allclose(sizes, sizes.min() + np.ptp(sizes) * (n_m - n_m.min()) / np.ptp(n_m))

    # the count strip: bars equal numpy's histogram, with the numbers written on
    (cax,) = _counts_axes(fig)
    heights = [patch.get_height() for patch in cax.patches]
    np.testing.assert_array_equal(heights, np.histogram(p, bins=edges)[0])
    assert [t.get_text() for t in cax.texts] == [f"{c:,}" for c in np.histogram(p, bins=edges)[0]]
    # binary input: the words of P(y = 1), not accuracy and confidence
    assert cax.get_xlabel() == "predicted P(y = 1)" and ax.get_ylabel() == "observed frequency of y = 1"

    # legend and title
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert texts[:1] == ["perfect calibration"] and "90% band (Jeffreys)" in texts
    assert f"{r.mean:.3f}" in ax.get_title() and f"plug-in {r.plugin:.3f}" in ax.get_title()


def test_sparse_and_empty_bins_keep_honest_bands(tmp_path):
    # bins (M = 15): one correct label in bin 14, one wrong in bin 0, bins 1-13 empty
    y = np.array([1, 0])
    p = np.array([0.97, 0.03])
    s = 4000
    r = bece.bayesian_ece(y, p, n_bins=15, num_samples=s, seed=0, model="binned")
    ax = reliability_diagram(r)
    ax.figure.savefig(tmp_path / "sparse.png")
    bands = _bands(ax)
    # empty bins 1-13 get no band (their 0 is in the count strip), nothing hatched
    assert len(bands) == 2 and not any(b[4] for b in bands)
    # one correct label: [F^-1(0.05; 1.5, 0.5), 1] = [0.229..., 1]
    assert bands[1][2:4] == (pytest.approx(stats.beta.ppf(0.05, 1.5, 0.5)), 1.0)
    assert bands[1][2] == pytest.approx(0.2285, abs=1e-4)
    assert bands[0][2:4] == (0.0, pytest.approx(stats.beta.ppf(0.95, 0.5, 1.5)))
    (cax,) = _counts_axes(ax.figure)
    assert [t.get_text() for t in cax.texts] == ["1"] + ["0"] * 13 + ["1"]
    # the model's own band (band_prior=None) on the one-label bin: the
    # posterior of the accuracy there is Beta(1 + a, a) with a = 1/(2M) = 1/30;
    # its 5% quantile (0.795) is estimated from the draws with standard error
    # sqrt(q (1 - q) / S) / pdf(quantile); checked within 3.29 of them
    # (false-alarm rate 0.1%)
    ax2 = reliability_diagram(r, band_prior=None)
    model = _bands(ax2)[1]
    exact = stats.beta(1 + 1 / 30, 1 / 30)
    se = np.sqrt(0.05 * 0.95 / s) / exact.pdf(exact.ppf(0.05))
    assert model[2] == pytest.approx(exact.ppf(0.05), abs=3.29 * se)
    assert model[2] > bands[1][2] + 0.5  # the weak Dirichlet prior's band is far narrower
    texts = [t.get_text() for t in ax2.get_legend().get_texts()]
    assert "90% band (model posterior)" in texts


def test_model_band_is_the_quantiles_of_the_accuracy_draws():
    rng = np.random.default_rng(3)
    p = rng.uniform(size=300)
    y = (rng.uniform(size=300) < p).astype(int)
    r = bece.bayesian_ece(y, p, n_bins=6, num_samples=1000, seed=2, model="binned")
    bands = _bands(reliability_diagram(r, band_prior=None, prob=0.8))
    lo, hi = np.quantile(r.accuracy, [0.1, 0.9], axis=0)
    np.testing.assert_allclose([b[2] for b in bands], lo, atol=1e-12)
    np.testing.assert_allclose([b[3] for b in bands], hi, atol=1e-12)


def test_options_and_own_axes():
    rng = np.random.default_rng(4)
    p = rng.uniform(size=200)
    y = (rng.uniform(size=200) < p).astype(int)
    r = bece.bayesian_ece(y, p, n_bins=5, num_samples=500)
    fig, (a1, a2) = plt.subplots(1, 2)
    out = reliability_diagram(r, ax=a1, show_plugin=False, show_counts=False)
    assert out is a1 and not _counts_axes(fig)
    assert "observed (plug-in)" not in [ln.get_label() for ln in a1.get_lines()]
    assert a1.get_xlabel() == "predicted P(y = 1)"
    reliability_diagram(r, ax=a2, band_prior=1.0, curve=False)
    assert len(_counts_axes(fig)) == 1
    assert "Beta(1, 1) prior" in " ".join(t.get_text() for t in a2.get_legend().get_texts())


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(prob=1.2), "prob must be a number in"),
        (dict(band_prior=0), "band_prior must be a positive number"),
        (dict(band_prior="jeffreys"), "band_prior must be a positive number"),
        (dict(show_counts="yes"), "show_counts must be True or False"),
        (dict(per_label=True), "per_label=True needs a top-label result"),
    ],
)
def test_reliability_diagram_bad_options(kwargs, message):
    r = bece.bayesian_ece([0, 1, 1], [0.2, 0.7, 0.9], n_bins=3, num_samples=50)
    with pytest.raises(ValueError, match=message):
        reliability_diagram(r, **kwargs)


def test_reliability_diagram_rejects_other_objects():
    with pytest.raises(ValueError, match="result must be a BayesianECE"):
        reliability_diagram(np.zeros(3))


# ---------------------------------------------------------- per-label panels
def test_per_label_panels_of_a_top_label_result(tmp_path):
    rng = np.random.default_rng(5)
    y, prob = simulate_multiclass(600, 3, rng, temperature=1.5)
    r = bece.bayesian_top_label_ece(y, prob, n_bins=8, num_samples=1000, seed=0)
    fig = reliability_diagram(r, per_label=True)
    fig.savefig(tmp_path / "per_label.png")
    panels = [a for a in fig.axes if a.get_visible() and a.get_label() != COUNTS_LABEL]
    strips = _counts_axes(fig)
    assert len(panels) == len(r.labels) == 3 and len(strips) == 3
    pred = prob.argmax(1)
    edges = np.linspace(0, 1, 9)
    # panels in order of how often each label is predicted (most first)
    n_pred = np.array([(pred == label).sum() for label in r.labels])
    assert len(set(n_pred)) == 3
    order = np.argsort(-n_pred)
    for ax, cax, i in zip(panels, strips, order):
        assert ax.get_title().startswith(f"label {r.labels[i]} (n = {n_pred[i]:,})\nECE")
        sel = pred == r.labels[i]
        hist = np.histogram(prob[sel].max(1), bins=edges)[0]
        np.testing.assert_array_equal([pt.get_height() for pt in cax.patches], hist)
        correct = np.histogram(prob[sel].max(1)[y[sel] == r.labels[i]], bins=edges)[0]
        full = np.flatnonzero(hist > 0)  # empty bins get no band
        assert len(_bands(ax)) == full.size
        for m, band in zip(full, _bands(ax)):
            lo, hi = _jeffreys(correct[m], hist[m] - correct[m])
            assert band[2:4] == (pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12))
    assert fig.legends and "top-label ECE" in fig._suptitle.get_text()
    with pytest.raises(ValueError, match="ax cannot be given with per_label=True"):
        reliability_diagram(r, per_label=True, ax=panels[0])


def test_per_label_with_a_hand_built_result_without_kept_bins():
    # the interface of issue 4 as documented: label_accuracy None when the
    # per-(label, bin) draws were not kept
    s1 = bece.CalibrationStats.from_arrays([1, 1, 0], [0.9, 0.8, 0.6], n_bins=4)
    s2 = bece.CalibrationStats.from_arrays([1, 0], [0.55, 0.7], n_bins=4)
    base = bece.bayesian_ece([1, 1, 0, 1, 0], [0.9, 0.8, 0.6, 0.55, 0.7], n_bins=4, num_samples=100)
    fake = SimpleNamespace(
        draws=base.draws, accuracy=base.accuracy, confidence=base.confidence, stats=base.stats,
        plugin=base.plugin, labels=np.array([3, 7]), label_draws=np.column_stack([base.draws] * 2),
        label_stats=(s1, s2), label_accuracy=None, label_confidence=None, label_weight=None,
    )
    fig = reliability_diagram(fake, per_label=True)
    panels = [a for a in fig.axes if a.get_visible() and a.get_label() != COUNTS_LABEL]
    assert [a.get_title().split(" (")[0] for a in panels] == ["label 3", "label 7"]
    # Jeffreys dots at the observed mean confidence
    np.testing.assert_allclose(_dots(panels[0]).get_offsets()[:, 0], s1.confidence[s1.bin_counts > 0])
    with pytest.raises(ValueError, match="keep_bins=True"):
        reliability_diagram(fake, per_label=True, band_prior=None)


def test_axis_words_follow_the_input_kind(rng):
    """P(y = 1) input: observed frequency of y = 1 against predicted P(y = 1);
    class probabilities (top-label) and triples: accuracy against confidence."""
    y, prob = simulate_multiclass(300, 3, rng)
    top = bece.bayesian_ece(y, prob, n_bins=5, num_samples=200)
    triples = bece.bayesian_ece(y, prob.max(axis=1), y_pred=prob.argmax(axis=1), n_bins=5,
                                num_samples=200)
    binary = bece.bayesian_ece(y == 0, prob[:, 0], n_bins=5, num_samples=200)
    for r, words in ((top, ("confidence", "accuracy")), (triples, ("confidence", "accuracy")),
                     (binary, ("predicted P(y = 1)", "observed frequency of y = 1"))):
        fig = plt.figure()
        ax = reliability_diagram(r, ax=fig.add_subplot())
        (cax,) = _counts_axes(fig)
        assert (cax.get_xlabel(), ax.get_ylabel()) == words
        ax = reliability_diagram(r, ax=fig.add_subplot(2, 1, 2), show_counts=False)
        assert (ax.get_xlabel(), ax.get_ylabel()) == words
        plt.close(fig)
