"""--html PATH of bece report, compare, recalibrate and test, and bece.plots.html_report:
one self-contained file whose numbers are the --json values."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import bece
from bece._cli import main
from bece._results.html import numbers_rows
from bece.plots import html_report


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _write(path, y, p):
    path.write_text("y_true,y_prob\n" + "\n".join(f"{a},{float(b)!r}" for a, b in zip(y, p)))
    return path


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    p = rng.uniform(size=300)
    y = (rng.uniform(size=300) < p**1.2).astype(int)
    a = _write(tmp_path / "a.csv", y, p)
    b = _write(tmp_path / "b.csv", y, p**1.3)
    val = _write(tmp_path / "val.csv", y[:150], p[:150] ** 1.3)
    test = _write(tmp_path / "test.csv", y[150:], p[150:] ** 1.3)
    mean = rng.normal(size=300)
    forecasts = tmp_path / "forecasts.csv"
    forecasts.write_text("y,mean,std\n" + "\n".join(
        f"{float(m + 1.2 * e)!r},{float(m)!r},1.0" for m, e in zip(mean, rng.normal(size=300))))
    return {"report": [a], "compare": [a, b], "recalibrate": ["--method", "platt", val, test],
            "test": [a], "regression": [forecasts]}


def _structure(page: str) -> ET.Element:
    """The structural checks of a page that must open offline: it parses; every
    src/href is a data URI or an in-page anchor; no script, link, import or URL;
    every figure an inline SVG or a data-URI PNG."""
    root = ET.fromstring(page)
    assert root.tag == "html"
    for el in root.iter():
        for attr in ("src", "href", "{http://www.w3.org/1999/xlink}href"):
            value = el.get(attr)
            assert value is None or value.startswith(("data:", "#")), (el.tag, attr, value[:40])
        assert el.tag not in ("script", "link", "iframe", "object", "embed"), el.tag
    lowered = re.sub(r"data:[^\"]*", "", page).lower()  # base64 can spell anything
    assert "@import" not in lowered and "url(" not in lowered and "http" not in lowered
    for img in root.iter("img"):
        assert img.get("src").startswith("data:image/png;base64,")
    return root


@pytest.mark.parametrize("command", ["report", "compare", "recalibrate", "test", "regression"])
def test_html_holds_the_text_every_json_number_and_the_figure(files, tmp_path, capsys, command):
    name = "report" if command == "regression" else command
    page_path = tmp_path / f"{command}.html"
    opts = ["--seed", 3] + (["--resamples", 100] if name == "test" else ["--samples", 500])
    code, out, err = run(capsys, name, *files[command], *opts, "--json", "--html", page_path)
    assert code == 0, err
    data = json.loads(out)  # the same run's --json
    root = _structure(page_path.read_text(encoding="utf-8"))
    cells = [(tr[0].text, tr[1].text) for tr in root.iter("tr") if len(tr) == 2]
    numbers = numbers_rows(data)
    assert numbers and all(row in cells for row in numbers)  # every --json number, exactly
    # the text is what the command prints without --json
    code, text, _ = run(capsys, name, *files[command], *opts)
    pre = root.find(".//pre")
    assert pre is not None and text.startswith(pre.text)
    footer = {tr[0].text: tr[1].text for tr in root.find(".//footer").iter("tr")}
    assert footer["bece"] == bece.__version__ and footer["seed"] == "3"
    assert {"Python", "numpy", "jax", "numpyro", "arviz"} <= set(footer)
    figures = list(root.iter("img"))
    assert len(figures) == (0 if name == "test" else 1)
    # a person's run says where it went
    code, out, _ = run(capsys, name, *files[command], *opts, "--html", page_path)
    assert out.rstrip().endswith(f"HTML report written to {page_path}")


def test_html_path_is_checked_before_any_work(files, tmp_path, capsys):
    code, out, err = run(capsys, "report", files["report"][0], "--html", tmp_path / "r.pdf")
    assert code == 2 and "--html" in err and "name it .html" in err and out == ""
    code, out, err = run(capsys, "report", files["report"][0], "--html", files["report"][0])
    assert code == 2 and out == ""
    code, out, err = run(capsys, "report", files["report"][0], "--html",
                         tmp_path / "missing" / "r.html")
    assert code == 2 and "does not exist" in err


def test_html_report_from_python_for_each_result(tmp_path):
    rng = np.random.default_rng(1)
    p = rng.uniform(size=300)
    y = (rng.uniform(size=300) < p).astype(int)
    results = {
        "ece": bece.bayesian_ece(y, p, num_samples=500),
        "comparison": bece.compare(y, p, p**1.2, model="binned", num_samples=500),
        "test": bece.calibration_test(y, p, num_resamples=100, num_samples=300),
    }
    for name, result in results.items():
        path = tmp_path / f"{name}.html"
        page = html_report(result, path, about={"seed": "0"})
        assert path.read_text(encoding="utf-8") == page
        root = _structure(page)
        assert len(list(root.iter("img"))) == (0 if name == "test" else 1)
        cells = [(tr[0].text, tr[1].text) for tr in root.iter("tr") if len(tr) == 2]
        assert all(row in cells for row in numbers_rows(result.to_dict()))
    assert not list(_structure(html_report(results["ece"], figure=False)).iter("img"))
    with pytest.raises(ValueError, match="result must be a result of bece"):
        html_report({"ece": 0.1})
