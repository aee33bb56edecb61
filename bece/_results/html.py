"""Rich display in Jupyter: every result as one self-contained block of HTML.

A result's ``_repr_html_`` (IPython's rich-display hook) shows, in order:

1. its own text (:meth:`text`, the words ``print(result)`` gives: the
   verdict or the estimate, the interval, the table), as preformatted
   text;
2. a small diagram where the result has draws or resamples: a histogram
   of the posterior draws (the ECE, the difference of two ECEs, the
   regression calibration error) with the credible interval shaded and the
   plug-in value marked, of the resampled test statistic under
   calibration with the observed value marked, or of the agreement rule's
   ratios (a cross-check), as inline SVG;
3. every number of :meth:`to_dict`, at full precision, in a table that
   opens on a click (``<details>``).

The block references nothing outside itself: no script, no style sheet,
no image file, no link (styles are inline), so a notebook renders it
offline and a saved notebook keeps it. It is well-formed XML, so any HTML
or XML parser reads it.

A whole page (:func:`html_page`: ``--html`` of the commands and
:func:`bece.plots.html_report`) is such a block under a title, a figure as
a PNG inside the page (:func:`figure_html`, a data URI) and the versions
that made it (:func:`software_versions`).
"""

from __future__ import annotations

import math
from html import escape
from typing import Any

import numpy as np

__all__ = ["HTMLDisplay", "figure_html", "histogram_svg", "html_page", "numbers_rows", "result_html",
           "software_versions"]

#: Bars of the diagram's histogram.
HIST_BINS = 40

_WIDTH, _HEIGHT, _PAD = 360, 110, 14
_BAR = "#4c72b0"
_MARK = "#c44e52"
_STYLE = ("font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; "
          "font-size: 12px; line-height: 1.35")


class HTMLDisplay:
    """Mixin: ``_repr_html_`` from the result's ``text()``, ``to_dict()`` and
    ``_html_diagram()`` (None: no diagram)."""

    def _html_diagram(self) -> str | None:
        return None

    def _repr_html_(self) -> str:
        text = self.text  # type: ignore[attr-defined]
        return result_html(f"bece.{type(self).__name__}", text() if callable(text) else text,
                           self.to_dict(), self._html_diagram())  # type: ignore[attr-defined]


def result_html(title: str, text: str, numbers: dict[str, Any], diagram: str | None) -> str:
    """The block: ``title``, the ``text``, the ``diagram`` (SVG) and the numbers."""
    rows = "".join(f"<tr><td style=\"padding: 0 1em 0 0\">{escape(k)}</td>"
                   f"<td style=\"text-align: right\">{escape(v)}</td></tr>"
                   for k, v in numbers_rows(numbers))
    parts = [
        f"<div class=\"bece-result\" style=\"{_STYLE}\">",
        f"<div style=\"font-weight: bold; margin-bottom: 0.3em\">{escape(title)}</div>",
        f"<pre style=\"margin: 0; white-space: pre-wrap\">{escape(text)}</pre>",
    ]
    if diagram is not None:
        parts.append(f"<div style=\"margin: 0.5em 0\">{diagram}</div>")
    parts += [
        "<details><summary style=\"cursor: pointer\">every number (to_dict)</summary>",
        f"<table style=\"border-collapse: collapse; margin-top: 0.3em\">{rows}</table>",
        "</details>",
        "</div>",
    ]
    return "".join(parts)


def numbers_rows(numbers: Any, prefix: str = "") -> list[tuple[str, str]]:
    """(path, value) for every leaf of a ``to_dict()`` object: ``ece.interval[0]``,
    numbers as ``repr`` of the Python number (every digit), text as is."""
    if isinstance(numbers, dict):
        out = []
        for key, value in numbers.items():
            out += numbers_rows(value, f"{prefix}.{key}" if prefix else str(key))
        return out
    if isinstance(numbers, (list, tuple)):
        out = []
        for i, value in enumerate(numbers):
            out += numbers_rows(value, f"{prefix}[{i}]")
        return out
    if isinstance(numbers, np.generic):
        numbers = numbers.item()
    return [(prefix, repr(numbers) if isinstance(numbers, (int, float)) else str(numbers))]


def _number(x: float) -> str:
    return f"{x:.3g}" if x != 0 else "0"


def histogram_svg(x: np.ndarray, *, label: str, interval: tuple[float, float] | None = None,
                  marks: dict[str, float] | None = None) -> str | None:
    """A small histogram of ``x`` as inline SVG, the ``interval`` shaded and each
    of ``marks`` (name: value) a vertical line; None when ``x`` has no finite value."""
    x = np.asarray(x, dtype=np.float64).ravel()
    x = x[np.isfinite(x)]
    if x.size == 0:
        return None
    marks = {k: float(v) for k, v in (marks or {}).items() if v is not None and math.isfinite(v)}
    lo = min(float(x.min()), *marks.values()) if marks else float(x.min())
    hi = max(float(x.max()), *marks.values()) if marks else float(x.max())
    if hi - lo <= 1e-12 * max(abs(lo), abs(hi), 1e-300):
        half = max(abs(lo) * 0.05, 1e-3)
        lo, hi = lo - half, hi + half
    counts, edges = np.histogram(x, bins=HIST_BINS, range=(lo, hi))
    peak = max(int(counts.max()), 1)
    top = 4 + 12 * len(marks)  # a row above the bars for each mark's name
    inner_w, inner_h = _WIDTH - 2 * _PAD, _HEIGHT - top - 18

    def sx(v: float) -> float:
        return _PAD + (v - lo) / (hi - lo) * inner_w

    base = top + inner_h
    out = [f"<svg width=\"{_WIDTH}\" height=\"{_HEIGHT}\" viewBox=\"0 0 {_WIDTH} {_HEIGHT}\" "
           f"role=\"img\" aria-label=\"{escape(label)}\"><title>{escape(label)}</title>"]
    if interval is not None:
        a, b = sx(float(interval[0])), sx(float(interval[1]))
        out.append(f"<rect x=\"{a:.1f}\" y=\"{top}\" width=\"{max(b - a, 1.0):.1f}\" "
                   f"height=\"{inner_h}\" fill=\"{_BAR}\" fill-opacity=\"0.15\"/>")
    for c, e0, e1 in zip(counts, edges[:-1], edges[1:]):
        if c:
            h = c / peak * inner_h
            out.append(f"<rect x=\"{sx(e0):.1f}\" y=\"{base - h:.1f}\" "
                       f"width=\"{max(sx(e1) - sx(e0) - 0.5, 0.5):.1f}\" height=\"{h:.1f}\" "
                       f"fill=\"{_BAR}\"/>")
    out.append(f"<line x1=\"{_PAD}\" y1=\"{base}\" x2=\"{_PAD + inner_w}\" y2=\"{base}\" "
               "stroke=\"#555\" stroke-width=\"1\"/>")
    for i, (name, v) in enumerate(marks.items()):
        x0 = sx(v)
        y_name = 12 + 12 * i
        out.append(f"<line x1=\"{x0:.1f}\" y1=\"{y_name - 8}\" x2=\"{x0:.1f}\" y2=\"{base}\" "
                   f"stroke=\"{_MARK}\" stroke-width=\"1.5\"><title>{escape(name)} "
                   f"{_number(v)}</title></line>")
        anchor = "end" if x0 > _WIDTH / 2 else "start"
        dx = -4 if anchor == "end" else 4
        out.append(f"<text x=\"{x0 + dx:.1f}\" y=\"{y_name}\" font-size=\"10\" "
                   f"fill=\"{_MARK}\" text-anchor=\"{anchor}\">{escape(name)} {_number(v)}</text>")
    y_text = base + 12
    out.append(f"<text x=\"{_PAD}\" y=\"{y_text}\" font-size=\"10\" fill=\"#333\">"
               f"{escape(_number(lo))}</text>")
    out.append(f"<text x=\"{_PAD + inner_w}\" y=\"{y_text}\" font-size=\"10\" fill=\"#333\" "
               f"text-anchor=\"end\">{escape(_number(hi))}</text>")
    out.append(f"<text x=\"{_WIDTH / 2:.0f}\" y=\"{y_text}\" font-size=\"10\" fill=\"#333\" "
               f"text-anchor=\"middle\">{escape(label)}</text>")
    out.append("</svg>")
    return "".join(out)


# ------------------------------------------------------------------ pages
_PAGE_STYLE = ("body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; "
               "margin: 2em auto; max-width: 60em; padding: 0 1em; color: #222 } "
               "h1 { font-size: 1.3em } "
               "table.about td { padding: 0 1em 0 0; font-size: 0.9em; color: #555 }")


def figure_html(fig: Any, alt: str) -> str:
    """A matplotlib figure as an ``<img>`` whose source is a data URI of its PNG:
    the figure travels inside the page."""
    import base64
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return (f"<img src=\"data:image/png;base64,{data}\" alt=\"{escape(alt)}\" "
            "style=\"max-width: 100%; height: auto\"/>")


def software_versions() -> dict[str, str]:
    """The versions a result depends on: bece, Python and the numerical libraries."""
    import platform
    from importlib import metadata

    from .._base.version import VERSION

    out = {"bece": VERSION, "Python": platform.python_version()}
    for name in ("numpy", "scipy", "jax", "numpyro", "arviz", "matplotlib"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:  # pragma: no cover - a dependency
            out[name] = "not installed"
    return out


def html_page(title: str, block: str, *, fig: Any = None,
              about: dict[str, str] | None = None) -> str:
    """A whole HTML page: ``title``, the result's ``block`` (:func:`result_html`),
    ``fig`` (a matplotlib figure, as :func:`figure_html`) if given, then what
    made it (:func:`software_versions` and ``about``: seed, ...) as a small
    table. Styles are inline; nothing is loaded from anywhere else."""
    blocks = [block] if fig is None else [block, figure_html(fig, alt=f"figure of {title}")]
    made = {**software_versions(), **(about or {})}
    rows = "".join(f"<tr><td>{escape(k)}</td><td>{escape(v)}</td></tr>" for k, v in made.items())
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/>"
            f"<title>{escape(title)}</title><style>{_PAGE_STYLE}</style></head><body>"
            f"<h1>{escape(title)}</h1>" + "".join(f"<section>{b}</section>" for b in blocks)
            + f"<footer><table class=\"about\">{rows}</table></footer></body></html>\n")
