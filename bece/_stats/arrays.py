"""Arrays of predictions and labels as NumPy: reading, describing bad values, integer labels.

The primitives :mod:`bece._stats.inputs` and :mod:`bece._stats.labels` share:
nothing is dropped, clipped or coerced; a value an argument does not allow
raises ``ValueError`` naming the argument, the values and their indices.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "as_array",
    "check_labels",
    "describe_bad",
    "missing_mask",
    "object_error",
]

_INT64_MIN = -(2.0**63)  # as floats: labels must satisfy MIN <= y < -MIN
_INT64_MAX = np.iinfo(np.int64).max




def missing_mask(arr: np.ndarray) -> np.ndarray:
    """Entries that are None, NaN or a pandas NA/NaT (any dtype; NaT of datetimes too)."""
    if arr.dtype.kind == "f":
        return np.isnan(arr)
    if arr.dtype.kind in "mM":
        return np.isnat(arr)
    if arr.dtype.kind != "O":
        return np.zeros(arr.shape, dtype=bool)
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


def object_error(arr: np.ndarray, name: str, what: str) -> ValueError:
    """The error for an object array: its missing values if it has any."""
    missing = missing_mask(arr)
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
        raise object_error(arr, name, "integer class labels")
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
