"""Results read: str() is the text the command line prints (the ECE's mean
and 90% interval, plug-in, P(calibrated) where there is one, the input and
the per-bin table), and repr() is bounded."""

from __future__ import annotations

import numpy as np
import pytest

import bece
from bece._results.text import format_prob

from ..conftest import simulate_binary, simulate_multiclass


def test_str_of_a_binary_result(result):
    text = str(result)
    lo, hi = result.interval(0.9)
    assert text.splitlines()[0].startswith(f"  Bayesian ECE  {result.mean:.4f}   posterior mean")
    assert "binary: y_prob = P(y = 1) against y_true" in text
    assert f"  predictions   {result.stats.n:,} (" in text
    assert f"  bins          {result.stats.n_bins} uniform" in text
    assert f"[{lo:.4f}, {hi:.4f}]" in text and f"plug-in ECE   {result.plugin:.4f}" in text
    assert "freq y=1" in text and "over-predicts" in text      # the words of P(y = 1) input
    assert text == result.text(0.9) and result.text(0.5) != text
    assert str(result) != repr(result)


def test_a_class_probability_matrix_says_top_label_and_how_to_read_p_y1(rng):
    y, p = simulate_binary(300, rng)
    prob = np.column_stack([1 - p, p])
    r = bece.bayesian_ece(y, prob, num_samples=200)
    assert r.kind == "top-label"
    assert "top-label" in str(r) and "accuracy" in str(r) and "over-confident" in str(r)
    assert bece.bayesian_ece(y, prob[:, 1], num_samples=200).kind == "binary"


def test_str_and_repr_of_the_other_results(rng):
    y, prob = simulate_multiclass(500, 4, rng)
    tl = bece.bayesian_top_label_ece(y, prob, num_samples=300)
    assert "4 predicted labels" in str(tl) and "average='label'" in str(tl)
    assert repr(tl).startswith("BayesianTopLabelECE(") and "n_labels=" in repr(tl)
    sm = bece.bayesian_ece(y, prob, model="smooth", num_samples=300)
    assert "smooth calibration curve (Laplace)" in str(sm)
    assert "P(calibrated)" in str(sm) and "if not 0" in str(sm) and f"prior odds {sm.prior_odds:g}" in str(sm)
    # bounded: no arrays, whatever the draws and the fit hold
    assert repr(sm).startswith("SmoothBayesianECE(") and len(repr(sm)) < 400
    c = bece.compare(y, prob, prob ** 2 / (prob ** 2).sum(1, keepdims=True), num_samples=300)
    text = str(c)
    assert "A - B" in text and "P(ECE_A < ECE_B)" in text and "top-label" in text
    assert "by simulated coverage" in text   # no NUTS cross-check to point to
    lo, hi = c.interval(0.9)
    assert f"[{lo:+.4f}, {hi:+.4f}]" in text and len(repr(c)) < 400
    t = bece.calibration_test(y, prob, num_resamples=99, num_samples=300)
    assert "p-value" in str(t) and "P(calibrated)" in str(t) and "top-label" in str(t)
    assert str(t) != repr(t)


@pytest.mark.parametrize(
    "p,draws,text",
    [(0.5, None, "0.500"), (0.9996, None, "> 0.999"), (1.0, 10_000, "> 0.999"),
     (0.0, 200, "< 0.005"), (0.0004, None, "< 0.001"), (None, None, "-")],
)
def test_format_prob(p, draws, text):
    assert format_prob(p, draws) == text


def test_summary_of_a_comparison_is_its_headline(rng):
    y, p = simulate_binary(300, rng)
    c = bece.compare(y, p, p ** 1.5, num_samples=300)
    table = c.summary()
    assert list(table.index) == ["ece_a", "ece_b", "ece_diff"]
    assert table.loc["ece_diff", "mean"] == pytest.approx(c.mean, rel=1e-14)
    assert table.loc["ece_a", "ess"] == 300


def test_a_comparison_speaks_of_its_models_by_name(rng):
    """Comparison.named names the models in every line of the text and in
    the JSON; A and B by default; bad names are refused. A probability
    beyond what the draws can tell prints as '> 0.999', never '= 1.000'."""
    y, p = simulate_binary(800, rng)
    c = bece.compare(y, p, p**0.5, num_samples=2000, seed=1).named("calibrated", "sharpened")
    text = c.text()
    assert "A " not in text and "ECE_A" not in text
    assert "calibrated - sharpened" in text and "P(ECE_calibrated < ECE_sharpened)" in text
    assert c.to_dict()["names"] == ["calibrated", "sharpened"]
    assert "= 1.000" not in text and "P(ECE_calibrated < ECE_sharpened) > 0.999" in text
    d = bece.compare(y, p, p**0.5, num_samples=500, seed=1)
    assert d.names == ("A", "B") and "P(ECE_A < ECE_B)" in d.text()
    for bad in (("x", "x"), ("", "y"), (1, 2)):
        with pytest.raises(ValueError, match="names must be two distinct non-empty strings"):
            d.named(*bad)


def test_recalibration_text_says_its_before_is_paired(rng):
    """The recalibration table's probability never prints as '= > 0.999', and
    the text says why 'before' can differ from the ECE of the same
    predictions alone (the paired posterior)."""
    y, p = simulate_binary(1200, rng, power=2.0)
    r = bece.recalibrate(y[:600], p[:600], y[600:], p[600:], method="platt", num_samples=2000)
    text = r.text()
    assert "= >" not in text and "= <" not in text
    assert "P(ECE_after < ECE_before) > 0.999" in text
    assert "'before' can differ a little from bece.bayesian_ece" in text.replace("\n  ", " ")


def test_unreliable_importance_weights_are_said(rng):
    """Pareto k >= 0.7: the text says the draws are uncorrected (top-label
    keeps the Laplace mixture) or resampled with untrustworthy weights."""
    import copy
    from dataclasses import replace

    y, p = simulate_binary(400, rng)
    r = bece.bayesian_ece(y, p, num_samples=500, seed=1)
    assert r.params.pareto_k < 0.7 and "importance weights" not in str(r)

    def with_k(k, **more):
        params = copy.copy(r.params)
        for name, value in {"pareto_k": k, **more}.items():
            object.__setattr__(params, name, value)
        return replace(r, params=params)

    lines = str(with_k(1.46, resampled=False)).splitlines()
    i = next(j for j, s in enumerate(lines) if s.startswith("  model         smooth"))
    assert lines[i + 1] == ("  importance    weights unreliable (Pareto k 1.46 >= 0.7): "
                            "the draws are the Laplace mixture, uncorrected;")
    assert "bece.cross_check" in lines[i + 2]
    # the binary posterior resamples whatever k is
    assert "weights that cannot be trusted" in str(with_k(0.9))
    assert "weights unreliable" not in str(with_k(0.69))


def test_unreliable_importance_weights_are_said_for_top_label(rng):
    """The top-label default (model 'smooth-top-label', where the Laplace
    mixture is kept when k >= 0.7) says it too; a binned result never does."""
    import copy
    from dataclasses import replace

    y, p = simulate_multiclass(600, 4, rng)
    r = bece.bayesian_top_label_ece(y, p, num_samples=300, seed=1)
    assert r.model == "smooth-top-label"
    assert ("weights unreliable" in str(r)) == (r.params.pareto_k >= 0.7)
    params = copy.copy(r.params)
    object.__setattr__(params, "pareto_k", 1.2)
    object.__setattr__(params, "resampled", False)
    text = str(replace(r, params=params))
    assert ("  importance    weights unreliable (Pareto k 1.20 >= 0.7): the draws are the Laplace "
            "mixture, uncorrected;") in text.splitlines()
    assert "weights unreliable" not in str(bece.bayesian_ece(y == p.argmax(axis=1), p.max(axis=1),
                                                             model="binned", num_samples=100))
