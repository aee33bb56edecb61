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

from .arrays import as_array, check_labels, describe_bad, object_error
from .reading import DEFAULT_INPUTS, Inputs

__all__ = [
    "DEFAULT_INPUTS",
    "Inputs",
    "as_array",
    "as_outcomes",
    "check_labels",
    "check_pair",
    "check_probabilities",
    "check_top_label",
    "checked_array",
    "describe_bad",
    "input_kind",
    "located",
    "range_hint",
    "row_sum_message",
    "row_sum_tolerance",
    "scan_rows",
    "sigmoid",
    "softmax_rows",
]

#: The largest absolute row-sum tolerance, whatever the dtype and K
#: (:func:`row_sum_tolerance`).
ROW_SUM_CAP = 1e-3

_BLOCK = 1 << 18  # elements per row block of a 2-D scan (1 MiB of float32)


#: What the range error adds for arrays that look like logits or scores.
LOGITS_HINT = ("pass from_logits=True (softmax over the columns, or sigmoid for shape (n,), "
               "applied in float64)")


def range_hint(name: str, negative: bool) -> str:
    """What the error for ``y_prob`` values outside [0, 1] adds: they look like
    logits when some are negative; above 1 only, logits or percentages."""
    if not name.startswith("y_prob"):
        return ""
    if negative:
        return f"; it looks like logits (scores of any sign): {LOGITS_HINT}"
    return f"; if these are logits, {LOGITS_HINT}; if percentages, divide by 100"


def _range_error(p: np.ndarray, name: str, negative: bool | None = None) -> ValueError:
    """The ValueError for a block with NaN, infinity or values outside [0, 1]
    (with :func:`range_hint`; ``negative``: whether the whole array has a
    negative value, default: whether ``p`` has)."""
    nan = np.isnan(p)
    if nan.any():
        return ValueError(f"{name} contains NaN: {describe_bad(p, nan)}")
    inf = np.isinf(p)
    if inf.any():
        return ValueError(f"{name} contains infinity: {describe_bad(p, inf)}")
    out = (p < 0.0) | (p > 1.0)
    hint = range_hint(name, bool((p < 0.0).any()) if negative is None else negative)
    return ValueError(f"{name} must lie in [0, 1]; {describe_bad(p, out)} are outside{hint}")


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
        raise object_error(arr, name, "real numbers (probabilities)")
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


def scan_rows(arr: np.ndarray, name: str, top: bool, visit: Any = None,
              tol: float | None = None):
    """Check a 2-D array block by block; optionally reduce it to the top label.

    Each block of rows is read once while it is in cache: min and max (exact
    in the input's dtype), row sums (within ``row_sum_tol``, default
    :func:`row_sum_tolerance`), with ``top`` the argmax and its value, and
    ``visit(start, block)`` for any further reduction a caller wants fused
    into the same pass. The matrix is never converted as a whole, and rows
    are used as given (never renormalised). ``tol``: the user's
    ``row_sum_tol`` (None: :func:`row_sum_tolerance`).
    """
    n, k = arr.shape
    given, tol = tol, row_sum_tolerance(arr.dtype, k) if tol is None else tol
    rows = max(1, _BLOCK // k)
    ones = np.ones(k, dtype=arr.dtype)
    pred = np.empty(n, dtype=np.int64) if top else None
    conf = np.empty(n, dtype=np.float64) if top else None
    for start in range(0, n, rows):
        block = arr[start:start + rows]
        if not (block.min() >= 0 and block.max() <= 1):  # NaN fails both
            negative = bool(np.nanmin(arr) < 0) if not np.isnan(block).any() else None
            raise _shift(_range_error(np.asarray(block, dtype=np.float64), name, negative),
                         start, k)
        dev = _row_deviation(block, ones, tol)
        if not dev.max() <= tol:
            raise _row_sum_error(arr, name, tol, start + int(np.argmax(dev > tol)), given)
        if pred is not None and conf is not None:  # top
            j = block.argmax(axis=1)
            pred[start:start + rows] = j
            conf[start:start + rows] = np.take_along_axis(block, j[:, None], axis=1)[:, 0]
        if visit is not None:
            visit(start, block)
    return pred, conf


def _row_sum_error(arr: np.ndarray, name: str, tol: float, bad: int,
                   given: float | None) -> ValueError:
    dev = np.abs(np.sum(arr, axis=1, dtype=np.float64) - 1.0)
    return ValueError(row_sum_message(name, tol, int((dev > tol).sum()), bad,
                                      float(np.sum(arr[bad], dtype=np.float64)),
                                      float(dev.max()), given))


def row_sum_message(name: str, tol: float, total: int, bad: int, bad_sum: float, worst: float,
                    given: float | None) -> str:
    """The error for ``total`` rows that do not sum to 1 (row ``bad`` sums to
    ``bad_sum``; the largest deviation is ``worst``); with the default
    tolerance (``given`` None) and rows off by less than 0.1, the option
    that accepts rounded rows."""
    text = (f"{name} rows must sum to 1 (tolerance {tol:.1e}); {total} row(s) do not, e.g. row "
            f"{bad} sums to {bad_sum:.10g} (largest deviation {worst:.2g}). Normalise the rows "
            "(e.g. softmax) before calling")
    if given is None and worst < 0.1:
        text += (f", or, if they were rounded (e.g. written with a few decimals), accept them as "
                 f"they are with row_sum_tol={float(f'{worst:.1g}') * 2:g}")
    return text


def check_probabilities(y_prob: Any, name: str = "y_prob", tol: float | None = None) -> np.ndarray:
    """Check ``y_prob``'s shape, finiteness and range; return it as an array.

    Parameters
    ----------
    y_prob : array_like of shape (n,) or (n, K)
        Probabilities in [0, 1]. Rows of a 2-D array must sum to 1 within
        :func:`row_sum_tolerance`: ``max(1e-6, min(1e-3, 4 sqrt(K) eps))``
        where ``eps`` is the machine epsilon of the input's float type (a
        float32 softmax over 100,000 classes passes, a row off by 1e-3
        does not).
    name : str, default "y_prob"
        The argument's name in error messages.
    tol : float, optional
        The user's ``row_sum_tol`` (:class:`Inputs`) instead, e.g. 1e-3 for
        rows written with four decimals; accepted rows are used as given,
        never renormalised.

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
        infinity, has values outside [0, 1] (with a hint when they look like
        logits), has K < 2 columns, or has rows that do not sum to one.
    """
    arr = checked_array(y_prob, name)
    if arr.ndim == 2:
        if arr.dtype.kind != "f":
            arr = arr.astype(np.float64)
        scan_rows(arr, name, top=False, tol=tol)
        return arr
    p = np.asarray(arr, dtype=np.float64)
    if not (p.min() >= 0.0 and p.max() <= 1.0):  # NaN propagates through min/max
        raise _range_error(p, name)
    return p


def check_top_label(
    y_prob: Any, inputs: Inputs = DEFAULT_INPUTS, name: str = "y_prob",
) -> tuple[np.ndarray, np.ndarray, int]:
    """Check a (n, K) probability matrix and reduce it to its top label in one pass.

    With ``inputs.from_logits`` the rows are logits: the confidence is the
    largest softmax probability, computed block by block in float64
    (:func:`softmax_rows`).

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
    if inputs.from_logits:
        pred, conf, _ = softmax_rows(arr, name)
        return pred, conf, arr.shape[1]
    if arr.dtype.kind != "f":
        arr = arr.astype(np.float64)
    pred, conf = scan_rows(arr, name, top=True, tol=inputs.row_sum_tol)
    assert pred is not None and conf is not None
    return pred, conf, arr.shape[1]


# ------------------------------------------------------------------ logits
def _check_finite(x: np.ndarray, name: str, start: int = 0, k: int = 1) -> None:
    if not np.isfinite(x).all():
        err = _range_error(np.asarray(x, dtype=np.float64), name)
        raise _shift(err, start, k) if x.ndim == 2 else err


def sigmoid(y_prob: Any, name: str = "y_prob") -> np.ndarray:
    """Logits of shape (n,) as probabilities, :math:`1/(1 + e^{-x})` in float64
    (``scipy.special.expit``: no overflow for any finite logit)."""
    from scipy.special import expit

    arr = checked_array(y_prob, name)
    if arr.ndim != 1:
        raise ValueError(f"{name} of logits must have shape (n,) here, got shape {arr.shape}")
    x = np.asarray(arr, dtype=np.float64)
    _check_finite(x, f"{name} (logits)")
    return expit(x)


def softmax_rows(
    logits: np.ndarray, name: str = "y_prob", y_pred: np.ndarray | None = None,
    visit: Any = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Top label of the softmax of (n, K) logits, block by block in float64.

    For each block of rows (about 2**18 entries) the row maximum m and
    argmax are taken in the input's dtype, and
    :math:`s = \\sum_k e^{x_k - m}` in float64; the top probability is
    :math:`1/s`, the probability of column ``y_pred[i]`` is
    :math:`e^{x_{i,y} - m}/s`. Only a block is ever converted to float64
    (10^6 x 1,000 float32 logits need 4 GB as given and 2 MiB more).
    ``visit(start, probs)``, if given, sees each block's float64
    probabilities.

    Returns
    -------
    pred : ndarray of shape (n,), int64
    conf : ndarray of shape (n,), float64
    own : ndarray of shape (n,), float64, or None
        The probability of ``y_pred`` (None without it).
    """
    n, k = logits.shape
    rows = max(1, _BLOCK // k)
    pred = np.empty(n, dtype=np.int64)
    conf = np.empty(n, dtype=np.float64)
    own = None if y_pred is None else np.empty(n, dtype=np.float64)
    for start in range(0, n, rows):
        block = logits[start:start + rows]
        _check_finite(block, f"{name} (logits)", start, k)
        j = block.argmax(axis=1)
        e = block.astype(np.float64)  # this block only
        e -= np.take_along_axis(e, j[:, None], axis=1)
        np.exp(e, out=e)
        s = e.sum(axis=1)
        pred[start:start + rows] = j
        conf[start:start + rows] = 1.0 / s
        if own is not None and y_pred is not None:
            yp = y_pred[start:start + rows]
            own[start:start + rows] = np.take_along_axis(e, yp[:, None], axis=1)[:, 0] / s
        if visit is not None:
            visit(start, e / s[:, None])
    return pred, conf, own


# ------------------------------------------------------------------ outcomes
#: The input forms, as :func:`input_kind` names them.
KINDS = ("binary", "top-label", "triples")


def input_kind(y_prob: Any, y_pred: Any = None) -> str:
    """``"triples"`` with ``y_pred``, else ``"top-label"`` for a 2-D ``y_prob``
    and ``"binary"`` (:math:`P(y=1)`) for a 1-D one (from the shape alone:
    NumPy, JAX and Dask arrays are not read)."""
    if y_pred is not None:
        return "triples"
    ndim = getattr(y_prob, "ndim", None)
    if ndim is None:
        ndim = np.ndim(y_prob)
    return "top-label" if ndim == 2 else "binary"


def as_outcomes(
    y_true: Any,
    y_prob: Any,
    y_pred: Any = None,
    inputs: Inputs = DEFAULT_INPUTS,
    *,
    infer_labels: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Reduce classifier outputs to outcomes ``z`` and confidences ``p``.

    Parameters
    ----------
    y_true : array_like of shape (n,)
        True labels: for a 1-D ``y_prob`` without ``y_pred`` 0/1 or -1/1,
        or any two values with ``pos_label``; else class labels: integers
        ``0 .. K-1`` (the columns of a 2-D ``y_prob``), text, or any values
        named by ``labels`` (:mod:`bece._stats.labels`).
    y_prob : array_like of shape (n,) or (n, K)
        See the module docstring; an (n, K) matrix is read top-label for
        every K, K = 2 included (pass ``y_prob[:, 1]`` for the
        :math:`P(y = 1)` reading of scikit-learn's ``calibration_curve``).
    y_pred : array_like of shape (n,), optional
        Predicted labels: triples (y_pred, y_true, confidence of y_pred).
    inputs : Inputs, optional
        How to read them: ``labels``, ``pos_label`` (default 1 for labels
        0/1 and -1/1), ``from_logits`` (sigmoid or softmax in float64, block
        by block) and ``row_sum_tol`` (default :func:`row_sum_tolerance`,
        strict; rows are used as given).
    infer_labels : bool, default True
        Whether text labels may be mapped to columns by their sorted values
        without ``labels`` (False for blocks reduced separately).

    Returns
    -------
    z : ndarray of shape (n,), bool or int64 in {0, 1}
        Whether the prediction was correct (binary: ``y = 1``, int64).
    p : ndarray of shape (n,), float64
        The confidence attached to that prediction.
    """
    from .labels import binary_outcome, class_indices

    labels, from_logits = inputs.labels, inputs.from_logits
    y_prob = as_array(y_prob, "y_prob")
    if inputs.pos_label is not None and (y_pred is not None or y_prob.ndim != 1):
        raise ValueError(
            "pos_label applies to P(y = 1) of shape (n,) without y_pred; "
            + ("with y_pred, y_true and y_pred are compared" if y_pred is not None else
               f"y_prob of shape {y_prob.shape} is read top-label (confidence = row maximum): "
               "for scikit-learn's P(y = 1) reading pass y_prob[:, 1] with pos_label=")
        )
    if y_pred is None and y_prob.ndim == 2:
        yp, conf, k = check_top_label(y_prob, inputs)
        yt, _, _ = class_indices(y_true, None, conf.shape[0], k, labels=labels, infer=infer_labels)
        return yt == yp, conf
    if from_logits and y_prob.ndim == 2:  # triples: the softmax probability of y_pred
        arr = checked_array(y_prob, "y_prob")
        yt, ypi, _ = class_indices(y_true, y_pred, arr.shape[0], arr.shape[1], labels=labels,
                                   infer=infer_labels)
        assert ypi is not None
        _, _, own = softmax_rows(arr, "y_prob", ypi)
        assert own is not None
        return yt == ypi, own
    p = sigmoid(y_prob) if from_logits else check_probabilities(y_prob, tol=inputs.row_sum_tol)
    n = p.shape[0]
    if p.ndim == 1 and y_pred is None:
        return binary_outcome(y_true, n, inputs), p
    columns: int | None = None if p.ndim == 1 else p.shape[1]
    yt, ypi, _ = class_indices(y_true, y_pred, n, columns, labels=labels, infer=infer_labels)
    assert ypi is not None
    if p.ndim == 1:
        return yt == ypi, p
    return yt == ypi, p[np.arange(n), ypi].astype(np.float64)


_INDEX = re.compile(r"\b(?:index|row) (\d+)")


def located(exc: ValueError, source: str, start: int) -> ValueError:
    """The error of a batch starting at ``start``, with rows of the whole file."""
    text = _INDEX.sub(lambda m: f"row {start + int(m.group(1))}", str(exc))
    return ValueError(f"{source}: {text}")


def check_pair(y_prob_a: Any, y_prob_b: Any,
               inputs: Inputs = DEFAULT_INPUTS) -> tuple[np.ndarray, np.ndarray]:
    """Two models' predictions on the same test examples, checked for a paired
    comparison: each as :func:`check_probabilities` (only the shape with
    ``from_logits``: the values are checked where the softmax is taken), the
    same number of rows and the same shape."""
    if inputs.from_logits:
        pa, pb = checked_array(y_prob_a, "y_prob_a"), checked_array(y_prob_b, "y_prob_b")
    else:
        pa = check_probabilities(y_prob_a, "y_prob_a", inputs.row_sum_tol)
        pb = check_probabilities(y_prob_b, "y_prob_b", inputs.row_sum_tol)
    if pa.shape[0] != pb.shape[0]:
        raise ValueError(
            f"y_prob_a has {pa.shape[0]} predictions but y_prob_b has {pb.shape[0]}; a paired "
            "comparison needs both models' predictions on the same test examples, in the same order"
        )
    if pa.shape[1:] != pb.shape[1:]:
        raise ValueError(
            f"y_prob_a has shape {pa.shape} but y_prob_b has shape {pb.shape}; both must be P(y=1) "
            "of shape (n,) or class probabilities of shape (n, K) with the same K, or the (n,) "
            "confidences of y_pred_a and y_pred_b (for class probabilities against calibrated "
            "top-label confidences: y_prob_a.max(axis=1) with y_pred_a=y_prob_a.argmax(axis=1))"
        )
    return pa, pb
