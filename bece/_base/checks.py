"""Argument checks shared by every stage: positive integers and arrays, probabilities."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "check_prob",
    "check_scale",
    "positive_array",
    "positive_int",
]


def positive_array(value: ArrayLike, name: str, shape: tuple[int, ...]) -> np.ndarray:
    """``value`` as float64 broadcast to ``shape``; ValueError naming ``name``
    unless it is a real number or array (not bool, not strings) that is finite
    and > 0."""
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive number or array, got {value!r}") from None
    if raw.dtype.kind not in "fiu":  # bool, strings, objects: never converted silently
        raise ValueError(
            f"{name} must be a positive number or array of numbers, got {value!r} "
            f"(dtype {raw.dtype})"
        )
    arr = raw.astype(np.float64)
    if arr.ndim and arr.shape != shape and arr.shape != shape[-1:]:
        raise ValueError(f"{name} must be a scalar or have shape {shape}, got {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return np.broadcast_to(arr, shape).copy()


def positive_int(value: Any, name: str) -> int:
    """``value`` as an int, or ValueError naming ``name`` unless it is an integer >= 1."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def check_prob(prob: Any) -> float:
    if not isinstance(prob, (int, float, np.floating)) or not 0.0 < float(prob) < 1.0:
        raise ValueError(f"prob must be a number in (0, 1), got {prob!r}")
    return float(prob)


def check_scale(value: Any, name: str) -> float:
    """A prior scale (or prior odds): a finite number > 0, or ``ValueError`` naming it."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)
