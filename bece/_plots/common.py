"""Drawing helpers shared by the figures: matplotlib on demand, colours, titles."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._stats.calibration_stats import CalibrationStats

__all__ = [
    "ece_title",
    "format_interval",
    "label_plugin",
    "pyplot",
    "readable_ticks",
]

BAND_COLOR = "C0"




def pyplot() -> Any:  # the matplotlib.pyplot module
    import matplotlib.pyplot as plt

    return plt


def format_interval(draws: np.ndarray, prob: float) -> str:
    lo, hi = np.quantile(draws, [(1 - prob) / 2, (1 + prob) / 2])
    return f"{np.mean(draws):.3f} [{lo:.3f}, {hi:.3f}]"


def ece_title(prefix: str, draws: np.ndarray, plugin: float, prob: float) -> str:
    return f"{prefix}ECE {format_interval(draws, prob)} ({prob:.0%}), plug-in {plugin:.3f}"


def label_plugin(stats: CalibrationStats) -> float:
    from .._metrics.binned import plugin_ece

    return plugin_ece(stats) if stats.n > 0 else float("nan")


def _overlapping(labels: Any) -> bool:
    boxes = [t.get_window_extent() for t in labels if t.get_visible() and t.get_text()]
    return any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])


def readable_ticks(fig: Any) -> None:
    """Fewer x ticks wherever tick labels of ``fig`` overlap once drawn.

    matplotlib's default locator counts ticks by font height, so labels as
    wide as "-0.175" can run into each other ("-0.200-0.175-0.150"); each
    numeric x axis whose labels overlap after a draw gets a
    :class:`~matplotlib.ticker.MaxNLocator` with half as many bins, until
    none overlap (or two bins are left).
    """
    from matplotlib.ticker import MaxNLocator, ScalarFormatter

    for _ in range(3):
        fig.draw_without_rendering()
        crowded = [ax for ax in fig.axes if ax.get_visible()
                   and isinstance(ax.xaxis.get_major_formatter(), ScalarFormatter)
                   and _overlapping(ax.get_xticklabels())]
        if not crowded:
            return
        for ax in crowded:
            shown = sum(1 for t in ax.get_xticklabels() if t.get_text())
            ax.xaxis.set_major_locator(MaxNLocator(nbins=max(2, shown // 2)))
