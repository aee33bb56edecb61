"""Plug-in multiclass calibration errors: top-label and classwise ECE.

Top-label ECE (Gupta & Ramdas 2021; MAPIE's ``top_label_ece``): for each
predicted label :math:`l`, the binned ECE of the outcome :math:`[y = l]`
against the top confidence over the points predicted :math:`l`,

.. math::

    \\mathrm{ECE}_l = \\frac{1}{n_l} \\sum_m |c_{1,l,m} - S_{l,m}|,
    \\qquad
    \\mathrm{TL\\text{-}ECE} =
    \\begin{cases}
      \\frac{1}{|L|}\\sum_{l \\in L} \\mathrm{ECE}_l & \\texttt{average="label"} \\\\
      \\sum_{l \\in L} \\frac{n_l}{n}\\,\\mathrm{ECE}_l & \\texttt{average="sample"}
    \\end{cases}

over the set :math:`L` of labels that are predicted at least once.
``"label"`` is Gupta & Ramdas' definition and MAPIE's; ``"sample"`` weights each
label by how often it is predicted (Gupta & Ramdas' assessment code).

Classwise ECE (Kull et al. 2019; MAPIE's ``expected_calibration_error(...,
classwise=True)``): the mean over classes :math:`k` of the binned ECE of
:math:`p_k` against :math:`[y = k]` over all points.

Bins are those of :mod:`bece._stats.binning`; with ``"quantile"`` the edges are
computed per label (top-label) or per class (classwise), as MAPIE does.

Scale (K up to thousands, n up to millions): nothing loops over samples in
Python and the (n, K) matrix is read in row blocks that stay in cache,
without a float64 copy (:func:`bece._stats.inputs.check_top_label`). Top-label
validates and takes the argmax in that one pass. Classwise with bins whose
first edge is 0 uses that rows sum to one: at most ``1/u_0`` entries of a
row reach the first bin's upper edge :math:`u_0`, so only those are binned
individually; each class's first-bin count and sum are its column totals
less the other bins'. Quantile bins fall back to binning every entry, class
block by class block.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from .._base.checks import positive_int
from .._base.memory import check_allocation
from .._base.typing import BinningSpec
from .._stats.binning import Binning, make_binning
from .._stats.inputs import (
    DEFAULT_INPUTS,
    Inputs,
    check_probabilities,
    check_top_label,
    scan_rows,
    softmax_rows,
)
from .._stats.labels import class_indices

__all__ = [
    "classwise_ece",
    "per_label_ece",
    "top_label_ece",
    "top_label_inputs",
    "top_label_data",
    "TopLabelData",
]

_AVERAGES = ("label", "sample")


def _matrix(y_prob: ArrayLike) -> np.ndarray:
    p = check_probabilities(y_prob)
    if p.ndim != 2:
        raise ValueError(
            f"y_prob must have shape (n, K) with class probabilities, got shape {p.shape}; "
            "for a binary classifier's P(y=1) use expected_calibration_error"
        )
    return p


def _grouped_gaps(group: np.ndarray, z: np.ndarray, p: np.ndarray, n_groups: int,
                  n_bins: int | None, binning: BinningSpec | Binning) -> tuple[np.ndarray, np.ndarray]:
    """Per group g: sum_m |c1_gm - S_gm| and n_g, for bins shared or per group."""
    if isinstance(binning, str) and binning in ("quantile", "equal-mass"):
        gaps = np.zeros(n_groups)
        order = np.argsort(group, kind="stable")
        counts = np.bincount(group, minlength=n_groups)
        starts = np.concatenate([[0], np.cumsum(counts)])
        for g in np.flatnonzero(counts):
            idx = order[starts[g]:starts[g + 1]]
            pg, zg = p[idx], z[idx]
            b = make_binning(pg, n_bins, binning).index(pg)
            m = int(b.max()) + 1
            c1 = np.bincount(b, weights=zg, minlength=m)
            s = np.bincount(b, weights=pg, minlength=m)
            gaps[g] = np.abs(c1 - s).sum()
        return gaps, counts
    spec = make_binning(p, n_bins, binning)
    m = spec.n_bins
    cell = group * m + spec.index(p)
    c1 = np.bincount(cell, weights=z, minlength=n_groups * m).reshape(n_groups, m)
    s = np.bincount(cell, weights=p, minlength=n_groups * m).reshape(n_groups, m)
    return np.abs(c1 - s).sum(axis=1), np.bincount(group, minlength=n_groups)


class TopLabelData(NamedTuple):
    """Checked top-label data (:func:`top_label_data`)."""

    pred: np.ndarray  # (n,) int64: predicted class index
    conf: np.ndarray  # (n,) float64: its confidence
    y: np.ndarray  # (n,) int64: true class index
    k: int  # number of classes
    classes: np.ndarray | None  # the label of each index; None: the indices themselves


def top_label_data(
    y_true: ArrayLike, y_prob: ArrayLike, y_pred: ArrayLike | None = None,
    inputs: Inputs = DEFAULT_INPUTS,
) -> TopLabelData:
    """Checked top-label data: predicted class, its confidence, true class, K
    and the class labels.

    ``y_prob`` of shape (n, K) gives the argmax and the row maximum (one
    fused pass, :func:`bece._stats.inputs.check_top_label`; the softmax's
    with ``inputs.from_logits``). With ``y_pred``, ``y_prob`` of shape (n,) is the
    confidence of ``y_pred`` (e.g. the output of
    :class:`bece.calibrate.TopLabelCalibrator`); integer labels are then
    any non-negative integers and K is one more than the largest. Labels
    that are not integers ``0 .. K-1`` are mapped to class indices by
    ``inputs.labels`` (or, for text, their sorted values;
    :mod:`bece._stats.labels`), and ``classes`` gives them back.
    """
    labels = inputs.labels
    if inputs.pos_label is not None:
        raise ValueError("pos_label applies to P(y = 1) of shape (n,); a top-label ECE reads "
                         "class labels")
    if y_pred is None:
        pred, conf, k = check_top_label(y_prob, inputs)
        y, _, classes = class_indices(y_true, None, conf.shape[0], k, labels=labels)
        return TopLabelData(pred, conf, y, k, classes)
    conf = _sigmoid(y_prob) if inputs.from_logits else check_probabilities(y_prob)
    if conf.ndim != 1:
        raise ValueError(
            f"with y_pred, y_prob must be the (n,) confidences of y_pred, got shape {conf.shape}"
        )
    n = conf.shape[0]
    y, pred_or_none, classes = class_indices(y_true, y_pred, n, None, labels=labels)
    assert pred_or_none is not None
    pred = pred_or_none
    if classes is not None:
        return TopLabelData(pred, conf, y, int(classes.size), classes)
    for name, lab in (("y_pred", pred), ("y_true", y)):
        if lab.min() < 0:
            raise ValueError(f"{name} must hold non-negative class labels, got {lab.min()}")
    return TopLabelData(pred, conf, y, int(max(pred.max(), y.max())) + 1, None)


def _sigmoid(y_prob: ArrayLike) -> np.ndarray:
    from .._stats.inputs import sigmoid

    return sigmoid(y_prob)


def top_label_inputs(
    y_true: ArrayLike, y_prob: ArrayLike, y_pred: ArrayLike | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Checked top-label data: predicted label, its confidence, true label and K
    (:func:`top_label_data` without its options and ``classes``)."""
    d = top_label_data(y_true, y_prob, y_pred)
    return d.pred, d.conf, d.y, d.k


def per_label_ece(
    y_true: ArrayLike, y_prob: ArrayLike, *, y_pred: ArrayLike | None = None, n_bins: int | None = None,
    binning: BinningSpec | Binning = "uniform", labels: ArrayLike | None = None,
    from_logits: bool = False, row_sum_tol: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Top-label ECE of each label and how often it is predicted.

    Parameters are those of :func:`top_label_ece`; entry ``l`` of the
    results is class ``l`` (``labels[l]`` when given).

    Returns
    -------
    ece : ndarray of shape (K,)
        :math:`\\mathrm{ECE}_l`; NaN for labels never predicted.
    count : ndarray of shape (K,), int64
        :math:`n_l`, the number of points predicted :math:`l`.

    Examples
    --------
    >>> import numpy as np
    >>> from bece.metrics import per_label_ece
    >>> prob = np.array([[0.9, 0.1], [0.8, 0.2], [0.3, 0.7]])
    >>> ece, count = per_label_ece([0, 1, 1], prob, n_bins=2)   # label 0 predicted twice
    >>> ece.round(3).tolist(), count.tolist()
    ([0.35, 0.3], [2, 1])
    """
    pred, conf, y, k, _ = top_label_data(y_true, y_prob, y_pred,
                                         Inputs(labels, None, from_logits, row_sum_tol))
    group, n_groups, ranked = _label_groups(pred, k)
    if ranked is not None:  # the (K,) results themselves are what is large
        check_allocation(
            16.0 * k, what=f"the per-label arrays of K = max label + 1 = {k} entries",
            argument="y_pred and y_true (their largest label)",
            advice="use top_label_ece, which needs only the predicted labels, or relabel the "
                   "classes 0 .. K-1",
        )
    gaps, counts = _grouped_gaps(group, (y == pred).astype(np.float64), conf, n_groups, n_bins,
                                 binning)
    if ranked is not None:
        full_gaps, full_counts = np.zeros(k), np.zeros(k, dtype=np.int64)
        full_gaps[ranked], full_counts[ranked] = gaps, counts
        gaps, counts = full_gaps, full_counts
    with np.errstate(invalid="ignore", divide="ignore"):
        ece = np.where(counts > 0, gaps / counts, np.nan)
    return ece, counts


def _label_groups(pred: np.ndarray, k: int) -> tuple[np.ndarray, int, np.ndarray | None]:
    """Group of each prediction, number of groups and the labels they stand for.

    The label itself (K groups, labels None) while K is at most
    ``max(2**16, n)``; beyond, its rank among the predicted labels
    (``np.unique``), so that nothing of size max label + 1 is allocated
    (a label of 10**8 among three predictions). Either gives the same
    per-label values in the same (increasing label) order.
    """
    if k <= max(1 << 16, pred.size):
        return pred, k, None
    labels, inverse = np.unique(pred, return_inverse=True)
    return inverse.reshape(-1), int(labels.size), labels


def top_label_ece(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    y_pred: ArrayLike | None = None,
    n_bins: int | None = None,
    binning: BinningSpec | Binning = "uniform",
    average: str = "label",
    labels: ArrayLike | None = None,
    from_logits: bool = False,
    row_sum_tol: float | None = None,
) -> float:
    """Top-label expected calibration error (plug-in).

    Parameters
    ----------
    y_true : array_like of shape (n,)
        Labels in ``0 .. K-1``, or any labels with ``labels`` (text labels
        without it: their sorted values are the columns, as scikit-learn's
        ``classes_``).
    y_prob : array_like of shape (n, K) or (n,)
        Class probabilities (rows sum to 1); or, with ``y_pred``, the
        confidence of each prediction.
    y_pred : array_like of shape (n,), optional
        Predicted labels, e.g. ``TopLabelCalibrator.predict`` with
        ``predict_confidence`` as ``y_prob``.
    n_bins : int, default 15
    binning : {"uniform", "quantile"} or array_like, default "uniform"
        Quantile edges are computed per predicted label.
    average : {"label", "sample"}, default "label"
        Unweighted mean over predicted labels (Gupta & Ramdas' and MAPIE's
        definition) or weighted by how often each label is predicted.
    labels : array_like, optional
        The class of each column of ``y_prob`` in order (``clf.classes_``).
    from_logits : bool, default False
        ``y_prob`` holds logits: softmax (sigmoid for (n,)) in float64,
        block by block.
    row_sum_tol : float, optional
        Row-sum tolerance instead of the strict default; rows used as given.

    Examples
    --------
    >>> import numpy as np
    >>> from bece import top_label_ece
    >>> prob = np.array([[0.9, 0.1], [0.8, 0.2], [0.3, 0.7]])
    >>> round(top_label_ece([0, 1, 1], prob, n_bins=2), 12)
    0.325
    """
    if average not in _AVERAGES:
        raise ValueError(f"average must be one of {_AVERAGES}, got {average!r}")
    pred, conf, y, k, _ = top_label_data(y_true, y_prob, y_pred,
                                         Inputs(labels, None, from_logits, row_sum_tol))
    group, n_groups, _ = _label_groups(pred, k)
    gaps, counts = _grouped_gaps(group, (y == pred).astype(np.float64), conf, n_groups, n_bins,
                                 binning)
    with np.errstate(invalid="ignore", divide="ignore"):
        ece = np.where(counts > 0, gaps / counts, np.nan)
    seen = counts > 0
    if average == "label":
        return float(ece[seen].mean())
    return float(np.sum(ece[seen] * counts[seen]) / counts.sum())


def classwise_ece(
    y_true: ArrayLike, y_prob: ArrayLike, *, n_bins: int | None = None,
    binning: BinningSpec | Binning = "uniform", block_size: int = 1 << 24,
    labels: ArrayLike | None = None, from_logits: bool = False,
    row_sum_tol: float | None = None,
) -> float:
    """Classwise expected calibration error (plug-in).

    The mean over the K classes of the binned ECE of ``y_prob[:, k]``
    against ``y_true == k``, each over all n points.

    Parameters
    ----------
    y_true : array_like of shape (n,)
    y_prob : array_like of shape (n, K)
    n_bins : int, default 15
    binning : {"uniform", "quantile"} or array_like, default "uniform"
        Quantile edges are computed per class.
    block_size : int, default 2**24
        Classes are processed in blocks of about this many (point, class)
        pairs, to bound memory at large n x K.
    labels, from_logits, row_sum_tol
        As :func:`top_label_ece` (logits with quantile bins are refused:
        pass the softmax).

    Examples
    --------
    >>> import numpy as np
    >>> from bece import classwise_ece
    >>> prob = np.array([[0.9, 0.1], [0.8, 0.2], [0.3, 0.7]])
    >>> round(classwise_ece([0, 1, 1], prob, n_bins=2), 12)
    0.333333333333
    """
    block_size = positive_int(block_size, "block_size")
    inputs = Inputs(labels, None, from_logits, row_sum_tol)
    arr = _matrix_unchecked(y_prob)
    n, k = arr.shape
    quantile = isinstance(binning, str) and binning in ("quantile", "equal-mass")
    spec = None if quantile else make_binning(None, n_bins, binning)
    if spec is not None and spec.edges[0] == 0.0:
        y, _, _ = class_indices(y_true, None, n, k, labels=labels)
        return float(_classwise_sparse(arr, y, spec, inputs) / (n * k))
    if from_logits:
        raise ValueError(
            "from_logits=True is supported by classwise_ece for bins whose first edge is 0 "
            "(e.g. uniform); for these bins pass the probabilities (scipy.special.softmax(logits, "
            "axis=1))"
        )
    p = check_probabilities(arr, tol=row_sum_tol)
    y, _, _ = class_indices(y_true, None, n, k, labels=labels)
    per_block = max(1, block_size // n)
    total = 0.0
    for start in range(0, k, per_block):
        cols = np.arange(start, min(k, start + per_block))
        block = p[:, cols]
        group = np.broadcast_to(np.arange(cols.size), block.shape).ravel()
        z = (y[:, None] == cols[None, :]).astype(np.float64).ravel()
        gaps, _ = _grouped_gaps(group, z, block.ravel().astype(np.float64), cols.size, n_bins,
                                binning)
        total += gaps.sum() / n
    return float(total / k)


def _matrix_unchecked(y_prob: ArrayLike) -> np.ndarray:
    """Shape checks only; values are checked in the fused pass."""
    from .._stats.inputs import checked_array

    arr = checked_array(y_prob, "y_prob")
    if arr.ndim != 2:
        raise ValueError(
            f"y_prob must have shape (n, K) with class probabilities, got shape {arr.shape}; "
            "for a binary classifier's P(y=1) use expected_calibration_error"
        )
    return arr if arr.dtype.kind == "f" else arr.astype(np.float64)


def _classwise_sparse(p: np.ndarray, y: np.ndarray, spec: Binning,
                      inputs: Inputs = DEFAULT_INPUTS) -> float:
    """sum_k sum_m |c1_km - S_km| for bins with first edge 0, in one fused pass.

    Entries below ``thresh`` (just under the first bin's upper edge) are in
    bin 0 for sure; a row summing to 1 has at most ``1/thresh`` entries at or
    above it, which are binned exactly with ``spec.index``. Per class, bin 0
    gets the column count and sum less those of the other bins.
    """
    n, k = p.shape
    m = spec.n_bins
    from_logits = inputs.from_logits
    thresh = spec.edges[1] * (1 - 1e-6)  # margin for rounding of p*M and of float32
    colsum = np.zeros(k, dtype=np.float64)
    parts_cls: list[np.ndarray] = []
    parts_val: list[np.ndarray] = []

    def visit(start: int, block: np.ndarray) -> None:
        colsum[:] += block.astype(np.float64).sum(axis=0)
        flat = np.flatnonzero(block >= thresh)  # 2-D nonzero is ~15x slower
        parts_cls.append(flat % k)
        parts_val.append(block.ravel()[flat].astype(np.float64))

    own_prob = None
    if from_logits:  # float64 softmax blocks; the true class's probability on the way
        _, _, own_prob = softmax_rows(p, "y_prob", y, visit=visit)
    else:
        scan_rows(p, "y_prob", top=False, visit=visit, tol=inputs.row_sum_tol)
    cls = np.concatenate(parts_cls).astype(np.int64)
    val = np.concatenate(parts_val)
    cell = cls * m + spec.index(val)
    count = np.bincount(cell, minlength=k * m).reshape(k, m)
    # astype: bincount of an empty index returns int64 even with weights
    total = np.bincount(cell, weights=val, minlength=k * m).astype(np.float64).reshape(k, m)
    count[:, 0] = n - count[:, 1:].sum(axis=1)
    total[:, 0] = colsum - total[:, 1:].sum(axis=1)
    # correct predictions: the entry p[i, y_i] of each row, binned exactly
    own = (own_prob if from_logits else
           np.take_along_axis(p, y[:, None], axis=1)[:, 0].astype(np.float64))
    assert own is not None
    c1 = np.bincount(y * m + spec.index(own), minlength=k * m).reshape(k, m)
    return float(np.abs(c1 - total).sum())
