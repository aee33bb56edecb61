"""Shared by the tests of bece.plots: the Agg backend, figures closed after
each test, and finders for labelled artists."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from bece._plots.reliability import COUNTS_LABEL, DOTS_LABEL  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _line(ax, label):
    (line,) = [ln for ln in ax.get_lines() if ln.get_label() == label]
    return line


def _counts_axes(fig):
    return [a for a in fig.axes if a.get_label() == COUNTS_LABEL]


def _dots(ax):
    """The per-bin dots (a scatter whose marker areas follow the counts)."""
    (dots,) = [co for co in ax.collections if co.get_label() == DOTS_LABEL]
    return dots
