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

import re
from typing import Any

import numpy as np

__all__ = [
    "as_array",
    "as_outcomes",
    "check_labels",
    "check_probabilities",
    "check_top_label",
    "checked_array",
    "describe_bad",
    "located",
    "scan_rows",
]


def as_array(x: Any, name: str) -> np.ndarray:
    if x is None:
        raise ValueError(f"{name} is required, got None")
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged lists and the like
        raise ValueError(f"{name} could not be read as an array: {exc}") from None
    return arr


def describe_bad(values: np.ndarray, bad: np.ndarray, limit: int = 3) -> str:
    idx = np.flatnonzero(bad)
    shown = ", ".join(f"index {i}: {values.flat[i].item()!r}" for i in idx[:limit])
    more = f" and {idx.size - limit} more" if idx.size > limit else ""
    return f"{idx.size} value(s) ({shown}{more})"


_BLOCK = 1 << 18  # elements per row block of a 2-D scan (1 MiB of float32)


def _range_error(p: np.ndarray, name: str) -> ValueError:
    """The ValueError for a block with NaN, infinity or values outside [0, 1]."""
    nan = np.isnan(p)
    if nan.any():
        return ValueError(f"{name} contains NaN: {describe_bad(p, nan)}")
    inf = np.isinf(p)
    if inf.any():
        return ValueError(f"{name} contains infinity: {describe_bad(p, inf)}")
    out = (p < 0.0) | (p > 1.0)
    return ValueError(f"{name} must lie in [0, 1]; {describe_bad(p, out)} are outside")


def _shift(err: ValueError, offset: int, k: int) -> ValueError:
    """Re-express 'index i' of a block as the (row, column) of the whole array."""
    import re

    def sub(m: re.Match[str]) -> str:
        i = int(m.group(1))
        return f"row {offset + i // k}, column {i % k}"

    return ValueError(re.sub(r"index (\d+)", sub, str(err)))


def checked_array(y_prob: Any, name: str) -> np.ndarray:
    arr = as_array(y_prob, name)
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
    if arr.ndim == 2 and arr.shape[1] < 2:
        raise ValueError(
            f"{name} of shape (n, K) needs K >= 2 classes, got K = {arr.shape[1]}; "
            "for a binary classifier pass P(y=1) as a 1-D array"
        )
    return arr


def scan_rows(arr: np.ndarray, name: str, top: bool, visit: Any = None):
    """Check a 2-D array block by block; optionally reduce it to the top label.

    Each block of rows is read once while it is in cache: min and max (exact
    in the input's dtype), row sums, with ``top`` the
    argmax and its value, and ``visit(start, block)`` for any further
    reduction a caller wants fused into the same pass. The matrix is never
    converted as a whole.
    """
    n, k = arr.shape
    eps = np.finfo(arr.dtype).eps if arr.dtype.kind == "f" else 0.0
    tol = max(1e-6, 8.0 * k * eps)
    rows = max(1, _BLOCK // k)
    ones = np.ones(k, dtype=arr.dtype)
    pred = np.empty(n, dtype=np.int64) if top else None
    conf = np.empty(n, dtype=np.float64) if top else None
    for start in range(0, n, rows):
        block = arr[start:start + rows]
        if not (block.min() >= 0 and block.max() <= 1):  # NaN fails both
            raise _shift(_range_error(np.asarray(block, dtype=np.float64), name), start, k)
        # row sums by BLAS in the input's dtype: the rounding error of a sum
        # of K terms in [0, 1] is below (K - 1) eps, inside the tolerance
        dev = np.abs(block @ ones - 1.0)
        if not dev.max() <= tol:
            bad = start + int(np.argmax(dev > tol))
            total = int((np.abs(np.sum(arr, axis=1, dtype=np.float64) - 1.0) > tol).sum())
            raise ValueError(
                f"{name} rows must sum to 1 (tolerance {tol:.1e}); "
                f"{total} row(s) do not, e.g. row {bad} sums to "
                f"{np.sum(arr[bad], dtype=np.float64):.10g}. Normalise the rows "
                "(e.g. softmax) before calling"
            )
        if pred is not None and conf is not None:  # top
            j = block.argmax(axis=1)
            pred[start:start + rows] = j
            conf[start:start + rows] = np.take_along_axis(block, j[:, None], axis=1)[:, 0]
        if visit is not None:
            visit(start, block)
    return pred, conf


def check_probabilities(y_prob: Any, name: str = "y_prob") -> np.ndarray:
    """Check ``y_prob``'s shape, finiteness and range; return it as an array.

    Parameters
    ----------
    y_prob : array_like of shape (n,) or (n, K)
        Probabilities in [0, 1]. Rows of a 2-D array must sum to 1 within
        ``max(1e-6, 8 K eps)`` where ``eps`` is the machine epsilon of the
        input's float type (a float32 softmax over 1,000 classes passes,
        a row off by 1e-3 does not).

    Returns
    -------
    ndarray
        1-D: float64. 2-D: the input's own float dtype (a float32 matrix is
        checked block by block and not copied; integer input becomes
        float64), so that n x K matrices are never converted as a whole.

    Raises
    ------
    ValueError
        If the array is empty, not 1-D or 2-D, not numeric, contains NaN or
        infinity, has values outside [0, 1], has K < 2 columns, or has rows
        that do not sum to one.
    """
    arr = checked_array(y_prob, name)
    if arr.ndim == 2:
        if arr.dtype.kind != "f":
            arr = arr.astype(np.float64)
        scan_rows(arr, name, top=False)
        return arr
    p = np.asarray(arr, dtype=np.float64)
    if not (p.min() >= 0.0 and p.max() <= 1.0):  # NaN propagates through min/max
        raise _range_error(p, name)
    return p


def check_top_label(y_prob: Any, name: str = "y_prob") -> tuple[np.ndarray, np.ndarray, int]:
    """Check a (n, K) probability matrix and reduce it to its top label in one pass.

    Returns
    -------
    pred : ndarray of shape (n,), int64
        ``argmax`` of each row (the first maximum on ties, as numpy).
    conf : ndarray of shape (n,), float64
        The row maximum.
    k : int
        The number of classes K.
    """
    arr = checked_array(y_prob, name)
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must have shape (n, K) with class probabilities, got shape {arr.shape}"
        )
    if arr.dtype.kind != "f":
        arr = arr.astype(np.float64)
    pred, conf = scan_rows(arr, name, top=True)
    return pred, conf, arr.shape[1]


def check_labels(y: Any, name: str, n: int, n_classes: int | None = None) -> np.ndarray:
    """Return integer labels as int64, checking length, type and range.

    Integer and boolean arrays are accepted, and float arrays whose values
    are all integers (as pandas gives for an integer column). Anything else
    raises ``ValueError``. With ``n_classes`` the labels must lie in
    ``0 .. n_classes - 1``.
    """
    arr = as_array(y, name)
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
            raise ValueError(f"{name} contains NaN or infinity: {describe_bad(arr, bad)}")
        frac = arr != np.floor(arr)
        if frac.any():
            raise ValueError(
                f"{name} must hold integer class labels; {describe_bad(arr, frac)} are not integers"
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
                f"{describe_bad(labels, bad)} are outside"
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
    y_prob = as_array(y_prob, "y_prob")
    if y_pred is None and y_prob.ndim == 2:
        yp, conf, k = check_top_label(y_prob)
        return check_labels(y_true, "y_true", conf.shape[0], n_classes=k) == yp, conf
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
    yp = check_labels(y_pred, "y_pred", n, n_classes=k)
    return y == yp, p[np.arange(n), yp].astype(np.float64)


_INDEX = re.compile(r"\b(?:index|row) (\d+)")


def located(exc: ValueError, source: str, start: int) -> ValueError:
    """The error of a batch starting at ``start``, with rows of the whole file."""
    text = _INDEX.sub(lambda m: f"row {start + int(m.group(1))}", str(exc))
    return ValueError(f"{source}: {text}")
