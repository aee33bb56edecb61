"""Outcome-confidence pairs with sample weights, for the plug-in metrics.

Every metric of this package that is defined for binary probabilities reads
its input through :func:`weighted_pairs`: ``y_prob`` of shape (n,) is
:math:`P(y = 1)` against ``y = 1``; (n, K) class probabilities are read
top-label (the metric is then that of the pairs (confidence = row maximum,
correct = ``argmax == y_true``)); with ``y_pred``, ``y_prob`` is the
confidence of ``y_pred`` against ``y_pred == y_true``
(:func:`bece._stats.inputs.as_outcomes`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from .._stats.inputs import DEFAULT_INPUTS, Inputs, as_array, as_outcomes, describe_bad

__all__ = [
    "Pairs",
    "check_sample_weight",
    "weighted_pairs",
]


class Pairs(NamedTuple):
    """Checked pairs: outcome, confidence and weight, each (n,) float64."""

    z: np.ndarray
    p: np.ndarray
    w: np.ndarray


def check_sample_weight(sample_weight: ArrayLike | None, n: int) -> np.ndarray:
    """Weights as float64 of shape (n,) (ones for None).

    ValueError unless they are real, finite, non-negative numbers, one per
    prediction, with a positive sum, and their sum and sum of squares do not
    overflow float64.
    """
    if sample_weight is None:
        return np.ones(n)
    raw = as_array(sample_weight, "sample_weight")
    if raw.dtype.kind not in "fiu":
        raise ValueError(f"sample_weight must hold real numbers, got dtype {raw.dtype}")
    w = raw.astype(np.float64)
    if w.ndim != 1 or w.shape[0] != n:
        raise ValueError(f"sample_weight must have shape ({n},), one weight per prediction, "
                         f"got shape {w.shape}")
    if not np.isfinite(w).all():
        raise ValueError(f"sample_weight contains NaN or infinity: {describe_bad(w, ~np.isfinite(w))}")
    if (w < 0).any():
        raise ValueError(f"sample_weight must be >= 0; {describe_bad(w, w < 0)} are negative")
    with np.errstate(over="ignore"):
        total, squares = w.sum(), np.square(w).sum()
    if not (np.isfinite(total) and np.isfinite(squares)):
        raise ValueError(f"sample_weight is too large for float64: its sum ({total:.3g}) or sum of "
                         f"squares ({squares:.3g}) overflows (largest weight {w.max():.3g}); "
                         "rescale the weights, e.g. divide them by their mean")
    if not total > 0:
        raise ValueError("sample_weight sums to 0: at least one prediction needs a positive weight")
    return w


def weighted_pairs(
    y_true: ArrayLike, y_prob: ArrayLike, *, y_pred: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None, inputs: Inputs = DEFAULT_INPUTS,
) -> Pairs:
    """Checked (outcome, confidence, weight) of the three input forms, read
    with ``inputs``."""
    z, p = as_outcomes(y_true, y_prob, y_pred, inputs)
    z = np.asarray(z, dtype=np.float64)
    return Pairs(z, np.asarray(p, dtype=np.float64), check_sample_weight(sample_weight, p.shape[0]))
