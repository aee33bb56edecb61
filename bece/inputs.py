"""Checking and reducing classifier outputs to (outcome, confidence) pairs.

Every public entry point goes through :func:`as_outcomes`, so the rules for
what counts as valid input live in one place. Nothing is dropped, clipped or
coerced: a value that is not what the argument allows raises ``ValueError``
naming the argument, the problem and what is allowed.

Three input forms are accepted (DESIGN.md §4):

* ``y_prob`` of shape ``(n,)`` is :math:`P(y=1)` of a binary classifier and
  the outcome is ``z = y_true`` (labels 0/1);
* ``y_prob`` of shape ``(n, K)`` holds class probabilities; the confidence is
  the row maximum and ``z = [argmax == y_true]`` (top-label);
* with ``y_pred``, the seed's triples ``(y_pred, y_true, p)``: a 1-D ``y_prob``
  is the confidence of ``y_pred`` and ``z = [y_pred == y_true]``; a 2-D
  ``y_prob`` gives the confidence ``y_prob[i, y_pred[i]]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["as_outcomes", "check_probabilities", "check_labels"]


def _as_array(x: Any, name: str) -> np.ndarray:
    if x is None:
        raise ValueError(f"{name} is required, got None")
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged lists and the like
        raise ValueError(f"{name} could not be read as an array: {exc}") from None
    return arr


def _describe_bad(values: np.ndarray, bad: np.ndarray, limit: int = 3) -> str:
    idx = np.flatnonzero(bad)
    shown = ", ".join(f"index {i}: {values.flat[i]!r}" for i in idx[:limit])
    more = f" and {idx.size - limit} more" if idx.size > limit else ""
    return f"{idx.size} value(s) ({shown}{more})"


def check_probabilities(y_prob: Any, name: str = "y_prob") -> np.ndarray:
    """Return ``y_prob`` as float64, checking shape, finiteness and range.

    Parameters
    ----------
    y_prob : array_like of shape (n,) or (n, K)
        Probabilities in [0, 1]. Rows of a 2-D array must sum to 1 within
        ``max(1e-6, 8 K eps)`` where ``eps`` is the machine epsilon of the
        input's float type (a float32 softmax over 1,000 classes passes,
        a row off by 1e-3 does not).

    Raises
    ------
    ValueError
        If the array is empty, not 1-D or 2-D, not numeric, contains NaN or
        infinity, has values outside [0, 1], has K < 2 columns, or has rows
        that do not sum to one.
    """
    arr = _as_array(y_prob, name)
    if arr.dtype.kind not in "fiu":
        raise ValueError(
            f"{name} must hold real numbers (probabilities), got dtype {arr.dtype}"
        )
    if arr.ndim not in (1, 2):
        raise ValueError(
            f"{name} must have shape (n,) or (n, K), got shape {arr.shape}"
        )
    if arr.shape[0] == 0:
        raise ValueError(f"{name} is empty: at least one prediction is needed")
    in_dtype = arr.dtype
    p = np.asarray(arr, dtype=np.float64)
    lo, hi = p.min(), p.max()  # NaN propagates through min/max
    if not (lo >= 0.0 and hi <= 1.0):
        nan = np.isnan(p)
        if nan.any():
            raise ValueError(f"{name} contains NaN: {_describe_bad(p, nan)}")
        inf = np.isinf(p)
        if inf.any():
            raise ValueError(f"{name} contains infinity: {_describe_bad(p, inf)}")
        out = (p < 0.0) | (p > 1.0)
        raise ValueError(
            f"{name} must lie in [0, 1]; {_describe_bad(p, out)} are outside"
        )
    if p.ndim == 2:
        k = p.shape[1]
        if k < 2:
            raise ValueError(
                f"{name} of shape (n, K) needs K >= 2 classes, got K = {k}; "
                "for a binary classifier pass P(y=1) as a 1-D array"
            )
        eps = np.finfo(in_dtype).eps if in_dtype.kind == "f" else 0.0
        tol = max(1e-6, 8.0 * k * eps)
        dev = np.abs(p.sum(axis=1) - 1.0)
        if not dev.max() <= tol:
            bad = dev > tol
            rows = np.flatnonzero(bad)
            raise ValueError(
                f"{name} rows must sum to 1 (tolerance {tol:.1e}); "
                f"{rows.size} row(s) do not, e.g. row {rows[0]} sums to "
                f"{p[rows[0]].sum():.10g}. Normalise the rows (e.g. softmax) "
                "before calling"
            )
    return p


def check_labels(y: Any, name: str, n: int, n_classes: int | None = None) -> np.ndarray:
    """Return integer labels as int64, checking length, type and range.

    Integer and boolean arrays are accepted, and float arrays whose values
    are all integers (as pandas gives for an integer column). Anything else
    raises ``ValueError``. With ``n_classes`` the labels must lie in
    ``0 .. n_classes - 1``.
    """
    arr = _as_array(y, name)
    if arr.ndim != 1:
        raise ValueError(f"{name} must have shape (n,), got shape {arr.shape}")
    if arr.shape[0] != n:
        raise ValueError(
            f"{name} has {arr.shape[0]} entries but y_prob has {n}; "
            "they must have the same length"
        )
    if arr.dtype.kind == "b":
        labels = arr.astype(np.int64)
    elif arr.dtype.kind in "iu":
        labels = arr.astype(np.int64, copy=False)
    elif arr.dtype.kind == "f":
        bad = ~np.isfinite(arr)
        if bad.any():
            raise ValueError(f"{name} contains NaN or infinity: {_describe_bad(arr, bad)}")
        frac = arr != np.floor(arr)
        if frac.any():
            raise ValueError(
                f"{name} must hold integer class labels; {_describe_bad(arr, frac)} are not integers"
            )
        labels = arr.astype(np.int64)
    else:
        raise ValueError(
            f"{name} must hold integer class labels, got dtype {arr.dtype}"
        )
    if n_classes is not None and labels.size:
        lo, hi = labels.min(), labels.max()
        if lo < 0 or hi >= n_classes:
            bad = (labels < 0) | (labels >= n_classes)
            raise ValueError(
                f"{name} must hold labels in 0..{n_classes - 1}; "
                f"{_describe_bad(labels, bad)} are outside"
            )
    return labels


def as_outcomes(
    y_true: Any, y_prob: Any, y_pred: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    """Reduce classifier outputs to outcomes ``z`` and confidences ``p``.

    Parameters
    ----------
    y_true : array_like of shape (n,)
        True labels: 0/1 for a 1-D ``y_prob`` without ``y_pred``, else
        integers (``0 .. K-1`` with a 2-D ``y_prob``).
    y_prob : array_like of shape (n,) or (n, K)
        See the module docstring.
    y_pred : array_like of shape (n,), optional
        Predicted labels; the seed's triples.

    Returns
    -------
    z : ndarray of shape (n,), bool or int64 in {0, 1}
        Whether the prediction was correct (binary: ``y_true`` itself, int64).
    p : ndarray of shape (n,), float64
        The confidence attached to that prediction.
    """
    p = check_probabilities(y_prob)
    n = p.shape[0]
    if p.ndim == 1:
        if y_pred is None:
            # labels checked to be 0/1 serve as the outcome as they are
            return check_labels(y_true, "y_true", n, n_classes=2), p
        y = check_labels(y_true, "y_true", n)
        yp = check_labels(y_pred, "y_pred", n)
        return y == yp, p
    k = p.shape[1]
    y = check_labels(y_true, "y_true", n, n_classes=k)
    if y_pred is None:
        yp = np.argmax(p, axis=1)
        conf = p[np.arange(n), yp]
    else:
        yp = check_labels(y_pred, "y_pred", n, n_classes=k)
        conf = p[np.arange(n), yp]
    return y == yp, conf
