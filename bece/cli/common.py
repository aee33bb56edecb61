"""What the ``bece`` subcommands share: strict JSON, figures and their paths."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

__all__ = [
    "KINDS",
    "PROB",
    "check_plot_path",
    "figure",
    "num",
    "save",
    "to_json",
]

#: Mass of every credible interval the command prints.
PROB = 0.9

#: How each kind of classifier predictions is read (:attr:`bece.io.Predictions.kind`).
KINDS = {
    "binary": "binary: y_prob = P(y=1) against y_true",
    "top-label": "top-label: confidence = max p_k, correct = [argmax == y_true]",
    "triples": "triples: confidence of y_pred, correct = [y_pred == y_true]",
}


def num(x: float) -> float | None:
    """``x`` as a float, None for NaN."""
    return None if math.isnan(x) else float(x)


def _finite(obj: Any) -> Any:
    """``obj`` with every number that is not finite (NaN, +-inf) as None and
    NumPy scalars as Python numbers."""
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(obj) else None
    if isinstance(obj, np.integer):
        return int(obj)
    return obj


def to_json(obj: Any) -> str:
    """Strict JSON (RFC 8259): non-finite numbers as null, never NaN or
    Infinity; ``allow_nan=False`` makes any that slip through an error."""
    return json.dumps(_finite(obj), allow_nan=False)


# --------------------------------------------------------------- figures
def check_plot_path(path: str) -> None:
    """Fail before any work if --plot PATH cannot be written."""
    from pathlib import Path

    from matplotlib.figure import Figure

    target = Path(path)
    fmt = target.suffix.lower().lstrip(".")
    supported = Figure().canvas.get_supported_filetypes()
    if fmt not in supported:
        raise ValueError(
            f"--plot {path}: unknown image type '{target.suffix or '(none)'}'; use one of "
            + ", ".join(f".{k}" for k in sorted(supported))
        )
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise ValueError(f"--plot {path}: directory '{parent}' does not exist")


def figure(size: tuple[float, float]) -> Any:
    """A matplotlib Figure without pyplot: no GUI backend, nothing global touched."""
    from matplotlib.figure import Figure

    return Figure(figsize=size)


def save(fig: Any, path: str, quiet: bool) -> None:
    """Write ``fig`` to ``path``; say so unless ``quiet`` (``--json``)."""
    fig.savefig(path, dpi=150, bbox_inches="tight")
    if not quiet:
        print(f"\n  figure written to {path}")
