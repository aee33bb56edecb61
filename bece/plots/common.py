"""Drawing helpers shared by the figures: matplotlib on demand, colours, titles."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..stats.calibration_stats import CalibrationStats

__all__ = [
    "ece_title",
    "format_interval",
    "label_plugin",
    "pyplot",
]

BAND_COLOR = "C0"


EMPTY_COLOR = "0.55"


def pyplot() -> Any:  # the matplotlib.pyplot module
    import matplotlib.pyplot as plt

    return plt


def format_interval(draws: np.ndarray, prob: float) -> str:
    lo, hi = np.quantile(draws, [(1 - prob) / 2, (1 + prob) / 2])
    return f"{np.mean(draws):.3f} [{lo:.3f}, {hi:.3f}]"


def ece_title(prefix: str, draws: np.ndarray, plugin: float, prob: float) -> str:
    return f"{prefix}ECE {format_interval(draws, prob)} ({prob:.0%}), plug-in {plugin:.3f}"


def label_plugin(stats: CalibrationStats) -> float:
    from ..metrics.binned import plugin_ece

    return plugin_ece(stats) if stats.n > 0 else float("nan")
