"""Rich display in Jupyter (bece._results.html): every result type's ``_repr_html_``
parses, shows its text and every number of its to_dict(), and references nothing
outside itself."""

from __future__ import annotations

import ast
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import bece
import bece.regression as reg
from bece._results.html import HTMLDisplay, histogram_svg, numbers_rows
from bece._results.verdict import verdict
from bece.validation import sbc

ROOT = Path(__file__).resolve().parents[2]


def _binary(n=400, power=1.3, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n)
    return (rng.uniform(size=n) < p**power).astype(int), p


def _multiclass(n=400, k=3, seed=1):
    rng = np.random.default_rng(seed)
    prob = rng.dirichlet(np.ones(k), size=n)
    return np.array([rng.choice(k, p=r) for r in prob]), prob


def _results():
    y, p = _binary()
    y2, p2 = _binary(seed=2)
    k, prob = _multiclass()
    rng = np.random.default_rng(3)
    u = reg.pit(rng.normal(size=300), mean=0.0, std=0.8)
    return {
        "binned": lambda: bece.bayesian_ece(y, p, model="binned", num_samples=500),
        "smooth": lambda: bece.bayesian_ece(y, p, num_samples=500),
        "top-label": lambda: bece.bayesian_top_label_ece(k, prob, num_samples=500),
        "comparison": lambda: bece.compare(y, p, p**1.2, model="binned", num_samples=500),
        "recalibration": lambda: bece.recalibrate(y[:200], p[:200], y2[:200], p2[:200],
                                                  method="platt", num_samples=500),
        "calibration test": lambda: bece.calibration_test(y, p, num_resamples=100,
                                                          num_samples=300),
        "regression test": lambda: reg.pit_calibration_test(u, num_resamples=100),
        "regression error": lambda: reg.bayesian_calibration_error(u, num_samples=500),
        "cross-check": lambda: bece.cross_check(y, p, model="binned", n_bins=5, num_chains=1,
                                                num_warmup=100, num_samples=100,
                                                progress_bar=False),
        "sbc": lambda: sbc(n=30, num_simulations=20, num_draws=19, num_hist_bins=4),
        "verdict": lambda: verdict(0.03, -2.0, num_resamples=100),
    }


RESULTS = _results()


def _external(html: str) -> list[str]:
    """Anything that would load from outside the block."""
    patterns = (r"\bsrc\s*=", r"\bhref\s*=", r"<script", r"<link", r"@import", r"url\(",
                r"https?:", r"<iframe", r"<object", r"<embed", r"<img")
    return [p for p in patterns if re.search(p, html, flags=re.I)]


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_every_result_shows_its_text_and_every_number_and_nothing_external(name):
    result = RESULTS[name]()
    html = result._repr_html_()
    root = ET.fromstring(html)  # well-formed: any HTML or XML parser reads it
    assert root.tag == "div" and root.get("class") == "bece-result"
    assert not _external(html), _external(html)
    # the result's own words, as print() gives them
    pre = root.find("pre")
    text = result.text() if callable(result.text) else result.text  # Verdict: a property
    assert pre is not None and pre.text == text
    # every number of to_dict(), at full precision, in the table
    cells = {(tr[0].text, tr[1].text) for tr in root.iter("tr")}
    leaves = numbers_rows(result.to_dict())
    assert leaves and set(leaves) <= cells
    for path, value in leaves:
        assert path and value is not None
    numbers = [v for _, v in leaves if re.fullmatch(r"-?[0-9.e+-]+|nan|inf|-inf", v)]
    assert numbers, "to_dict() holds numbers"


@pytest.mark.parametrize("name", ["binned", "smooth", "comparison", "calibration test",
                                  "regression error", "cross-check"])
def test_results_with_draws_or_resamples_draw_a_histogram(name):
    result = RESULTS[name]()
    svg = ET.fromstring(result._repr_html_()).find(".//svg")
    assert svg is not None and svg.find("title") is not None
    bars = [r for r in svg.iter("rect") if r.get("fill-opacity") is None]
    assert len(bars) >= 3


def test_numbers_rows_hand_made_case():
    d = {"a": 1, "b": {"c": [0.1, 2.5e-17], "d": None}, "e": "text", "f": True,
         "g": np.float64(1 / 3), "h": float("nan")}
    assert numbers_rows(d) == [("a", "1"), ("b.c[0]", "0.1"), ("b.c[1]", "2.5e-17"),
                               ("b.d", "None"), ("e", "text"), ("f", "True"),
                               ("g", repr(1 / 3)), ("h", "nan")]


def test_histogram_heights_follow_numpys_histogram_and_marks_are_placed():
    """The bars are numpy's histogram of the finite values over the range of the values
    and marks, scaled to the tallest; a mark sits at its value's position."""
    x = np.array([0.0, 0.1, 0.1, 0.2, 0.4, np.nan, np.inf])
    svg = ET.fromstring(histogram_svg(x, label="x", marks={"m": 0.5}))
    bars = [r for r in svg.iter("rect")]
    counts, edges = np.histogram(x[np.isfinite(x)], bins=40, range=(0.0, 0.5))
    assert len(bars) == np.count_nonzero(counts)
    heights = sorted(float(r.get("height")) for r in bars)
    np.testing.assert_allclose(np.array(heights) / max(heights),
                               np.sort(counts[counts > 0]) / counts.max(), atol=0.02)
    line = [ln for ln in svg.iter("line") if ln.find("title") is not None][0]
    axis = [ln for ln in svg.iter("line") if ln.find("title") is None][0]
    x0, x1 = float(axis.get("x1")), float(axis.get("x2"))
    assert float(line.get("x1")) == pytest.approx(x1, abs=0.1)  # 0.5 is the range's end
    assert histogram_svg(np.array([np.nan]), label="x") is None
    one = ET.fromstring(histogram_svg(np.zeros(10), label="x"))  # a single value: a range around it
    assert len([r for r in one.iter("rect")]) == 1 and x0 < x1


def test_every_class_with_text_and_to_dict_has_the_rich_display():
    """A result type is a class of bece with both text() and to_dict(): each one
    must display in a notebook (found in the source, so a new type cannot be missed)."""
    missing = []
    for path in sorted((ROOT / "bece").rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                methods = {f.name for f in node.body if isinstance(f, ast.FunctionDef)}
                if {"text", "to_dict"} <= methods:
                    bases = {getattr(b, "id", getattr(b, "attr", "")) for b in node.bases}
                    if not bases & {"HTMLDisplay", "BayesianECE"}:  # directly, or its base's
                        missing.append(f"{path.relative_to(ROOT)}:{node.name}")
    assert not missing, missing
    for cls in (bece.BayesianECE, bece.SmoothBayesianECE, bece.BayesianTopLabelECE,
                bece.Comparison, bece.Recalibration, bece.CalibrationTest, bece.CrossCheck,
                reg.BayesianCalibrationError):
        assert issubclass(cls, HTMLDisplay), cls
