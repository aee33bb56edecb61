"""One HTML file to send: a result with its words, numbers, figure and provenance.

:func:`html_report` writes what ``bece report --html`` writes, from Python:
the result's block (:mod:`bece._results.html`: its text, a histogram of its
draws, every number of ``to_dict()``), its figure as a PNG inside the page
(a data URI), and the versions that made it. The file references nothing
outside itself, so it opens offline and survives being mailed or attached.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .._base.files import atomic_output
from .._regression.bayesian import BayesianCalibrationError
from .._results.comparison import Comparison
from .._results.ece import BayesianECE
from .._results.html import HTMLDisplay, html_page
from .._results.recalibration import Recalibration

__all__ = ["default_figure", "html_report"]


def default_figure(result: Any) -> Any:  # a matplotlib Figure, or None
    """The figure ``bece report --plot`` (or compare, recalibrate) draws for
    ``result``; None for a result without one (a test, a cross-check)."""
    from matplotlib.figure import Figure

    from .posterior import plot_comparison
    from .regression import plot_calibration_curve
    from .reliability import reliability_diagram

    if isinstance(result, BayesianECE):
        fig = Figure(figsize=(5.5, 6.2))
        reliability_diagram(result, ax=fig.add_subplot())
        return fig
    if isinstance(result, Comparison):
        fig = Figure(figsize=(15, 5.6))
        plot_comparison(result, fig=fig)
        return fig
    if isinstance(result, Recalibration):
        fig = Figure(figsize=(15, 5.6))
        plot_comparison(result.comparison, labels=[f"after ({result.method})", "before"], fig=fig,
                        b_first=True)
        return fig
    if isinstance(result, BayesianCalibrationError):
        fig = Figure(figsize=(5.5, 5.5))
        plot_calibration_curve(result, ax=fig.add_subplot())
        return fig
    return None


def html_report(result: HTMLDisplay, path: str | Path | None = None, *, title: str | None = None,
                figure: Any = True, about: dict[str, str] | None = None) -> str:
    """A self-contained HTML page of ``result``, written to ``path`` if given.

    Parameters
    ----------
    result : HTMLDisplay
        Any result of bece (an ECE posterior, a comparison, a recalibration,
        a calibration test, a cross-check, the regression posterior).
    path : str or Path, optional
        Where to write the page (whole or not at all: a temporary file
        renamed over it).
    title : str, optional
        The page's heading (default: the result's type).
    figure : bool or matplotlib Figure, default True
        True: the result's usual figure (:func:`default_figure`); a Figure:
        that one; False: none.
    about : dict, optional
        More lines for the provenance table (e.g. ``{"seed": "0"}``), after
        the versions.

    Returns
    -------
    str
        The page.

    Examples
    --------
    >>> import numpy as np, bece
    >>> from bece.plots import html_report
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> r = bece.bayesian_ece((rng.uniform(size=500) < p).astype(int), p, num_samples=1000)
    >>> page = html_report(r, about={"seed": "0"})
    >>> page.startswith("<!DOCTYPE html>"), "data:image/png;base64," in page
    (True, True)
    """
    if not isinstance(result, HTMLDisplay):
        raise ValueError(f"result must be a result of bece, got {type(result).__name__}")
    fig = default_figure(result) if figure is True else (figure or None)
    page = html_page(title or f"bece: {type(result).__name__}", result._repr_html_(), fig=fig,
                     about=about)
    if path is not None:
        with atomic_output(path) as tmp:
            tmp.write_text(page, encoding="utf-8")
    return page
