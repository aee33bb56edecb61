"""The HTML report in a real browser (CI's extras stage: Debian's chromium, driven by
playwright): it loads with no console error and no network request, and its
images and diagrams render. Skipped where either is missing; the structural checks
of the same pages run in the default suite (tests/test_cli_html.py)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

sync_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:  # pragma: no cover - the extras stage installs it
    pytest.skip("no chromium on PATH", allow_module_level=True)

import bece  # noqa: E402
from bece._cli import main  # noqa: E402
from bece.plots import html_report  # noqa: E402

pytestmark = pytest.mark.extras


def _pages(tmp_path):
    rng = np.random.default_rng(0)
    p = rng.uniform(size=400)
    y = (rng.uniform(size=400) < p**1.2).astype(int)
    data = tmp_path / "preds.csv"
    data.write_text("y_true,y_prob\n" + "\n".join(f"{a},{float(b)!r}" for a, b in zip(y, p)))
    cli = tmp_path / "report.html"
    assert main(["report", str(data), "--samples", "500", "--html", str(cli)]) == 0
    py = tmp_path / "python.html"
    html_report(bece.compare(y, p, p**1.3, model="binned", num_samples=500), py)
    return [cli, py]


def test_pages_load_offline_with_no_error_and_render(tmp_path, capsys):
    pages = _pages(tmp_path)
    capsys.readouterr()
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            for path in pages:
                page = browser.new_page()
                errors, requests = [], []
                page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.on("request", lambda r: requests.append(r.url))
                url = path.resolve().as_uri()
                page.goto(url, wait_until="load")
                assert errors == [], errors
                outside = [u for u in requests if u != url and not u.startswith("data:")]
                assert outside == [], outside
                rendered = page.evaluate(
                    "() => Array.from(document.images).map(i => i.complete && i.naturalWidth > 0)")
                assert rendered and all(rendered), rendered
                boxes = page.evaluate(
                    "() => Array.from(document.querySelectorAll('svg')).map(s => "
                    "s.getBoundingClientRect().width * s.getBoundingClientRect().height)")
                assert boxes and min(boxes) > 0, boxes
                # the numbers open on a click
                page.click("summary")
                assert page.is_visible("details table")
                page.close()
        finally:
            browser.close()
