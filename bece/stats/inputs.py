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
* with ``y_pred``, prediction triples ``(y_pred, y_true, p)``: a 1-D ``y_prob``
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
    "row_sum_tolerance",
    "scan_rows",
]

#: The largest absolute row-sum tolerance, whatever the dtype and K
#: (:func:`row_sum_tolerance`).
ROW_SUM_CAP = 1e-3

_INT64_MIN = -(2.0**63)  # as floats: labels must satisfy MIN <= y < -MIN
_INT64_MAX = np.iinfo(np.int64).max


def _missing_mask(arr: np.ndarray) -> np.ndarray:
    """Entries of an object array that are None, NaN or a pandas NA/NaT."""
    def missing(v: Any) -> bool:
        return v is None or type(v).__name__ in ("NAType", "NaTType") or (
            isinstance(v, float) and v != v
        )

    return np.fromiter((missing(v) for v in arr.ravel()), dtype=bool, count=arr.size).reshape(
        arr.shape
    )


def as_array(x: Any, name: str) -> np.ndarray:
    """``x`` as a numpy array; ValueError for None, ragged input and masked
    arrays with masked entries (which ``np.asarray`` would silently unmask)."""
    if x is None:
        raise ValueError(f"{name} is required, got None")
    if np.ma.isMaskedArray(x):
        mask = np.ma.getmaskarray(x)
        if mask.any():
            idx = np.flatnonzero(mask)
            shown = ", ".join(f"index {i}" for i in idx[:3])
            more = f" and {idx.size - 3} more" if idx.size > 3 else ""
            raise ValueError(
                f"{name} is a masked array with {idx.size} masked value(s) ({shown}{more}); "
                "bece does not drop or fill values: remove those rows from every argument "
                "(or fill them) before calling"
            )
        x = np.ma.getdata(x)
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged lists and the like
        raise ValueError(f"{name} could not be read as an array: {exc}") from None
    return arr


def _object_error(arr: np.ndarray, name: str, what: str) -> ValueError:
    """The error for an object array: its missing values if it has any."""
    missing = _missing_mask(arr)
    if missing.any():
        return ValueError(
            f"{name} contains missing values (None, NaN or pandas.NA): "
            f"{describe_bad(arr, missing)}"
        )
    return ValueError(f"{name} must hold {what}, got dtype {arr.dtype}")


def describe_bad(values: np.ndarray, bad: np.ndarray, limit: int = 3) -> str:
    idx = np.flatnonzero(bad)

    def value(i: int) -> Any:
        v = values.flat[i]
        return v.item() if isinstance(v, np.generic) else v

    shown = ", ".join(f"index {i}: {value(i)!r}" for i in idx[:limit])
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
    if arr.dtype.kind == "O":
        raise _object_error(arr, name, "real numbers (probabilities)")
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


def row_sum_tolerance(dtype: Any, k: int) -> float:
    """How far from 1 the rows of a (n, K) probability matrix may sum.

    ``max(1e-6, min(1e-3, 4 sqrt(K) eps))`` with ``eps`` the machine epsilon
    of ``dtype`` (float64 for integer input): 1e-6 for float64 at any K;
    for float32 1e-6 up to K = 4, then ``4 sqrt(K) eps`` (4.8e-6 at
    K = 100, 1.5e-4 at K = 10^5); 1e-3 for float16 at every K.

    Why. A row produced in its dtype, e.g. a softmax ``e / e.sum()``, sums
    (exactly) to 1 up to two kinds of rounding: each entry rounded to the
    dtype, relative error at most ``eps/2`` each, so at most ``eps/2`` over a
    row whose entries sum to one; and the normaliser ``e.sum()``, whose
    relative error is that of a sum of K terms: at most ``log2(K) eps/2`` for
    pairwise summation (numpy), of order ``sqrt(K) eps/2`` for a sequential
    or blocked one (BLAS, GPU reductions) in practice. ``4 sqrt(K) eps``
    bounds both with room to spare (measured: float32 softmax rows deviate
    by at most 2 eps at K = 2, 100 and 10^5). The floor 1e-6 is the
    tolerance float64 input always had.

    The cap 1e-3 bounds the tolerance whatever K and the dtype: a row off
    by more than 0.1% of its mass is not a probability vector at the
    precision at which an ECE is read (its third decimal). It is reached
    only by float16 (``eps`` = 9.8e-4) and by float32 beyond 4 million
    classes. Float16 rows whose normaliser is accumulated in float32, as
    numpy, PyTorch and JAX do, deviate by at most ``2 (eps/2) = eps`` = 9.8e-4
    (plus at most 3e-8 per entry below float16's smallest normal number,
    6.1e-5, which cancel rather than add up), so they pass; float16 rows
    summing to 1.5, or float32 rows summing to 1.05, do not.

    The check computes each row sum with at most half this tolerance of
    its own error: in float64 for float16 input; for float32 and float64
    input by BLAS in the input's dtype, with every row that this puts more
    than half the tolerance from 1 summed again in float64, which decides.
    """
    dt = np.dtype(dtype)
    eps = float(np.finfo(dt).eps) if dt.kind == "f" else float(np.finfo(np.float64).eps)
    return max(1e-6, min(ROW_SUM_CAP, 4.0 * float(np.sqrt(k)) * eps))


def _row_deviation(block: np.ndarray, ones: np.ndarray, tol: float) -> np.ndarray:
    """``|row sum - 1|`` of each row of ``block``, exact to well within ``tol / 2``
    (see :func:`row_sum_tolerance`)."""
    if block.dtype.itemsize < 4:  # float16: no BLAS, and its own sums round coarsely
        return np.abs(block.sum(axis=1, dtype=np.float64) - 1.0)
    dev = np.abs(block @ ones - 1.0)
    near = dev > 0.5 * tol
    if near.any():  # decide these rows by a float64 sum
        dev = dev.astype(np.float64)
        dev[near] = np.abs(block[near].sum(axis=1, dtype=np.float64) - 1.0)
    return dev


def scan_rows(arr: np.ndarray, name: str, top: bool, visit: Any = None):
    """Check a 2-D array block by block; optionally reduce it to the top label.

    Each block of rows is read once while it is in cache: min and max (exact
    in the input's dtype), row sums (within :func:`row_sum_tolerance`), with
    ``top`` the argmax and its value, and ``visit(start, block)`` for any
    further reduction a caller wants fused into the same pass. The matrix is
    never converted as a whole.
    """
    n, k = arr.shape
    tol = row_sum_tolerance(arr.dtype, k)
    rows = max(1, _BLOCK // k)
    ones = np.ones(k, dtype=arr.dtype)
    pred = np.empty(n, dtype=np.int64) if top else None
    conf = np.empty(n, dtype=np.float64) if top else None
    for start in range(0, n, rows):
        block = arr[start:start + rows]
        if not (block.min() >= 0 and block.max() <= 1):  # NaN fails both
            raise _shift(_range_error(np.asarray(block, dtype=np.float64), name), start, k)
        dev = _row_deviation(block, ones, tol)
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
        :func:`row_sum_tolerance`: ``max(1e-6, min(1e-3, 4 sqrt(K) eps))``
        where ``eps`` is the machine epsilon of the input's float type (a
        float32 softmax over 100,000 classes passes, a row off by 1e-3
        does not).

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
    raises ``ValueError``, as do labels outside the int64 range (uint64 from
    2**63, floats from 2**63 or below -2**63), which an int64 cast would
    wrap; errors show the values as given. With ``n_classes`` the labels
    must lie in ``0 .. n_classes - 1``.
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
        if arr.dtype.kind == "u" and arr.dtype.itemsize == 8 and arr.size:
            _check_int64_range(arr, arr > _INT64_MAX, name, n_classes)
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
        if arr.size:
            _check_int64_range(arr, (arr < _INT64_MIN) | (arr >= -_INT64_MIN), name, n_classes)
        labels = arr.astype(np.int64)
    elif arr.dtype.kind == "O":
        raise _object_error(arr, name, "integer class labels")
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


def _check_int64_range(arr: np.ndarray, big: np.ndarray, name: str, n_classes: int | None) -> None:
    """Refuse labels beyond int64 (``big``), showing them as given."""
    if not big.any():
        return
    if n_classes is not None:
        bad = (arr < 0) | (arr >= n_classes)
        raise ValueError(
            f"{name} must hold labels in 0..{n_classes - 1}; {describe_bad(arr, bad)} are outside"
        )
    raise ValueError(
        f"{name} must hold class labels in the int64 range (-2**63 .. 2**63 - 1); "
        f"{describe_bad(arr, big)} are beyond it"
    )


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
        Predicted labels: triples (y_pred, y_true, confidence of y_pred).

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
