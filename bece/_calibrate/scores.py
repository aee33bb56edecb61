r"""What the recalibrators take: logits or probabilities, checked, as float64 blocks.

A calibrator's input ``X`` is a classifier's scores, of shape (n, K) (one
column per class) or (n,) for a binary classifier, and the constructor option
``input`` says which scores they are:

* ``"logits"``: real numbers, finite (any per-row shift); a 1-D array is the
  log-odds :math:`s = \log P(y=1) - \log P(y=0)`, read as the two-class
  logits :math:`(0, s)`;
* ``"probabilities"``: values in [0, 1] whose rows sum to one (within
  :func:`bece._stats.inputs.row_sum_tolerance`); a 1-D array is
  :math:`P(y=1)`, read as the two columns :math:`(1 - p, p)`. Their
  logarithm serves as logits. **Zeros**: a probability of exactly 0 (a
  softmax that underflowed; ``1 - p`` of a 1-D ``p`` equal to 1) is read as
  the smallest positive normal number of the input's float type,
  ``numpy.finfo(dtype).tiny`` (1.2e-38 for float32, 2.2e-308 for float64;
  float64 for integer input), whose logarithm is -87.3 (float32) or -708.4
  (float64): the largest value that a probability which underflowed could
  have had, and the rule of ``dirichletcal`` (Kull et al. 2019). Nothing
  else is changed;
* ``"auto"``: probabilities if every value lies in [0, 1] and (for 2-D
  input) every row sums to one; logits if some value lies outside [0, 1];
  refused (``ValueError``) when every value lies in [0, 1] but the rows do
  not sum to one, which fits neither reading with certainty. Logits that
  happen to look like probabilities (every value in [0, 1], rows summing
  to one; for 1-D input, every log-odds in [0, 1]) are read as
  probabilities: pass ``input="logits"`` for them. A fitted calibrator
  keeps the kind it decided (``input_``) and reads new input the same way.

Large matrices are never converted as a whole: :meth:`Scores.blocks` yields
row blocks of float64 logits (about 8 MiB each), and each calibrator's
arithmetic runs block by block in float64.

Labels ``y`` (:func:`encode_labels`): integers ``0 .. K-1`` are the columns
themselves (``classes_ = arange(K)``, whether or not each occurs); any other
labels (strings, ``{1, 2}``, ...) must take exactly K distinct values,
matched to the columns in sorted order (scikit-learn's ``classes_``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.sparse import issparse

from .._stats.inputs import as_array, check_labels, check_probabilities, checked_array, describe_bad

__all__ = [
    "BLOCK",
    "INPUTS",
    "Scores",
    "as_scores",
    "encode_labels",
    "log_softmax",
    "softmax",
]

INPUTS = ("auto", "logits", "probabilities")

#: float64 elements per row block (8 MiB)
BLOCK = 1 << 20


def softmax(z: np.ndarray) -> np.ndarray:
    """Row-wise softmax of a float64 block (max subtracted first)."""
    e = np.exp(z - z.max(axis=1, keepdims=True))
    e /= e.sum(axis=1, keepdims=True)
    return e


def log_softmax(z: np.ndarray) -> np.ndarray:
    """Row-wise log-softmax of a float64 block."""
    m = z.max(axis=1, keepdims=True)
    s = z - m
    return s - np.log(np.exp(s).sum(axis=1, keepdims=True))


@dataclass(frozen=True)
class Scores:
    """Checked scores: ``data`` as given (not copied), and how to read it.

    Attributes
    ----------
    data : ndarray of shape (n, K) or (n,)
        The input, float (integer input converted to float64).
    kind : {"logits", "probabilities"}
    binary : bool
        1-D input (two classes).
    """

    data: np.ndarray
    kind: str
    binary: bool

    @property
    def n_features(self) -> int:
        """Columns of the input (1 for 1-D input), scikit-learn's ``n_features_in_``."""
        return 1 if self.binary else int(self.data.shape[1])

    @property
    def n(self) -> int:
        return int(self.data.shape[0])

    @property
    def k(self) -> int:
        return 2 if self.binary else int(self.data.shape[1])

    def rows_per_block(self) -> int:
        return max(1, BLOCK // self.k)

    def block(self, start: int, stop: int) -> np.ndarray:
        """float64 logits of rows ``start:stop``, shape (rows, K)."""
        x = self.data[start:stop]
        if self.kind == "logits":
            x = np.asarray(x, dtype=np.float64)
            if self.binary:
                return np.column_stack([np.zeros_like(x), x])
            return x
        tiny = np.finfo(self.data.dtype).tiny
        x = np.asarray(x, dtype=np.float64)
        if self.binary:
            x = np.column_stack([1.0 - x, x])
        return np.log(np.maximum(x, tiny))

    def blocks(self) -> Iterator[tuple[int, int, np.ndarray]]:
        """``(start, stop, block)`` over the rows, ``block`` from :meth:`block`."""
        rows = self.rows_per_block()
        for start in range(0, self.n, rows):
            stop = min(self.n, start + rows)
            yield start, stop, self.block(start, stop)

    def binary_score(self) -> np.ndarray:
        """The score of class 1 of two-class input, float64 (n,): the
        log-odds for logits (``z_1 - z_0`` of two columns), :math:`P(y=1)`
        for probabilities (the second column of two)."""
        if self.k != 2:
            raise ValueError(f"X must hold two classes for this binary calibrator, got K = {self.k}")
        d = self.data
        if self.binary:
            return np.asarray(d, dtype=np.float64)
        if self.kind == "logits":
            return np.asarray(d[:, 1], dtype=np.float64) - np.asarray(d[:, 0], dtype=np.float64)
        return np.asarray(d[:, 1], dtype=np.float64)


def _check_finite(arr: np.ndarray, name: str) -> None:
    flat = arr.reshape(arr.shape[0], -1)
    rows = max(1, BLOCK // flat.shape[1])
    for start in range(0, flat.shape[0], rows):
        block = flat[start:start + rows]
        if not (np.isfinite(block.min()) and np.isfinite(block.max())):
            bad = ~np.isfinite(block)
            where = describe_bad(block, bad)
            if arr.ndim == 2:
                k = arr.shape[1]
                import re

                where = re.sub(r"index (\d+)",
                               lambda m: f"row {start + int(m.group(1)) // k}, column "
                                         f"{int(m.group(1)) % k}", where)
            else:
                where = where.replace("index ", "row ")
            raise ValueError(f"{name} (logits) must be finite; {where} are NaN or infinite")


def _in_unit_interval(arr: np.ndarray) -> bool:
    flat = arr.reshape(arr.shape[0], -1)
    rows = max(1, BLOCK // flat.shape[1])
    for start in range(0, flat.shape[0], rows):
        block = flat[start:start + rows]
        if not (block.min() >= 0 and block.max() <= 1):
            return False
    return True


def as_scores(X: Any, input: str, name: str = "X") -> Scores:
    """Check ``X`` as the scores ``input`` says (module docstring) and wrap it.

    Raises
    ------
    ValueError
        Naming ``name`` (or ``input``): unknown ``input``; not numeric; not
        1-D or 2-D; empty; K < 2 columns; NaN or infinite logits;
        probabilities outside [0, 1] or rows not summing to one; ``"auto"``
        input that is neither clearly probabilities nor clearly logits.
    """
    if not isinstance(input, str) or input not in INPUTS:
        raise ValueError(f"input must be one of {INPUTS}, got {input!r}")
    if issparse(X):
        raise ValueError(f"{name} is a sparse matrix: sparse input is not supported (scores are "
                         "dense); pass X.toarray()")
    arr = as_array(X, name)
    if arr.dtype.kind == "c":
        raise ValueError(f"{name} holds complex numbers: Complex data not supported")
    arr = checked_array(arr, name)
    if arr.dtype.kind != "f":
        arr = arr.astype(np.float64)
    kind = input
    if input == "auto":
        _check_finite(arr, name)
        if not _in_unit_interval(arr):
            kind = "logits"
        else:
            try:
                check_probabilities(arr, name)
            except ValueError as exc:
                raise ValueError(
                    f"input='auto' cannot tell what {name} holds: every value lies in [0, 1] "
                    f"but {exc}. Pass input='probabilities' (after normalising the rows) or "
                    "input='logits'"
                ) from None
            return Scores(arr, "probabilities", arr.ndim == 1)
    if kind == "logits":
        _check_finite(arr, name)
    else:
        arr = check_probabilities(arr, name)
        if arr.ndim == 2 and arr.dtype.kind != "f":
            arr = arr.astype(np.float64)
    return Scores(arr, kind, arr.ndim == 1)


def encode_labels(y: Any, n: int, k: int, name: str = "y") -> tuple[np.ndarray, np.ndarray]:
    """``(classes_, index)``: the class of each column and each label's column.

    Integer labels in ``0 .. K-1`` (also booleans and integral floats) are
    the columns (``classes_ = arange(K)``). Other labels must take exactly K
    distinct values, matched to the columns in sorted order. ``index`` is
    int64 of shape (n,).
    """
    if y is None:
        raise ValueError(f"fit requires {name} to be passed, but the target {name} is None")
    arr = as_array(y, name)
    if arr.ndim != 1:
        raise ValueError(f"{name} must have shape (n,), got shape {arr.shape}")
    if arr.shape[0] != n:
        raise ValueError(
            f"{name} has {arr.shape[0]} entries but X has {n} rows; they must have the same length"
        )
    if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.any(arr != np.floor(arr)):
        frac = arr != np.floor(arr)
        raise ValueError(f"{name} must hold class labels, not continuous values; "
                         f"{describe_bad(arr, frac)} are not integers")
    if arr.dtype.kind in "biuf":
        labels = check_labels(arr, name, n)
        if labels.size and labels.min() >= 0 and labels.max() < k:
            return np.arange(k, dtype=np.int64), labels
        arr = labels
    elif arr.dtype.kind not in "US":
        raise ValueError(f"{name} must hold class labels (integers or strings), got dtype {arr.dtype}")
    classes, index = np.unique(arr, return_inverse=True)
    if classes.size != k:
        shown = ", ".join(repr(c.item() if isinstance(c, np.generic) else c) for c in classes[:5])
        more = " ..." if classes.size > 5 else ""
        raise ValueError(
            f"{name} holds {classes.size} distinct label(s) ({shown}{more}) for the K = {k} "
            f"classes of X: give labels 0..{k - 1} (the columns of X), or exactly K distinct "
            "labels, matched to the columns in sorted order"
        )
    return classes, index.astype(np.int64).reshape(-1)
