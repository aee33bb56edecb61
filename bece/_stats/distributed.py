"""Statistics of Dask arrays and DataFrames by a tree reduction.

Each block (a chunk of rows of a Dask array, a partition of a Dask
DataFrame) is reduced where it lives to its per-bin sums (the fields of
:class:`~bece._stats.CalibrationStats`: 2M int64 counts and the exact sums
as 8M int64 limbs, a few hundred bytes) by :func:`bece._stats.fused.binned_sums`, and the
blocks' statistics are added pairwise up a tree of fan-in
:data:`SPLIT_EVERY` (the same tree ``dask.array.reduction`` builds), so only
the small statistics travel between workers and to the client. Counts and
sums are exactly those of one pass over the concatenated data
(:mod:`bece._stats.exact`), whatever the partitions and the tree.

The computation runs on Dask's current scheduler: with a
``dask.distributed.Client`` open (``Client("tcp://scheduler:8786")`` for an
existing cluster) it runs on that cluster.

Quantile bins need the global quantiles of all confidences, which a
reduction of per-block summaries cannot give exactly (``dask.array.percentile``
is approximate); they are refused with a ``ValueError`` -- compute edges
first (e.g. ``numpy.quantile`` of a sample, or of a previous run's
confidences) and pass them as ``binning=edges``.

Dask is imported only by these functions (install ``bece[dask]``). They
return the sums as a tuple ``(binning, counts, sums)``;
:class:`~bece._stats.CalibrationStats` dispatches here and wraps them.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np

from . import exact
from .binning import Binning, make_binning
from .fused import Sums, binned_sums
from .inputs import DEFAULT_INPUTS, Inputs, as_array, input_kind, located

__all__ = [
    "array_sums",
    "dataframe_sums",
    "is_dask",
    "SPLIT_EVERY",
]

#: Fan-in of the reduction tree (dask.array's default for sums).
SPLIT_EVERY = 8


def is_dask(x: Any) -> bool:
    """Whether ``x`` is a Dask collection (checked without importing Dask)."""
    return type(x).__module__.split(".", 1)[0] == "dask" and hasattr(x, "__dask_graph__")


def _fixed_binning(n_bins: Any, binning: Any) -> Binning:
    if isinstance(binning, str) and binning in ("quantile", "equal-mass"):
        raise ValueError(
            "binning='quantile' needs the global quantiles of all confidences, which a "
            "distributed reduction cannot give exactly; pass explicit edges instead, "
            "e.g. binning=numpy.quantile(sample, numpy.linspace(0, 1, n_bins + 1)) "
            "with the ends set to 0 and 1"
        )
    return make_binning(None, n_bins, binning)


def _add(*xs: Sums | None) -> Sums | None:
    """Sum of per-bin sums (same bins), left to right, skipping the None of
    empty partitions."""
    present = [x for x in xs if x is not None]
    if not present:
        return None
    binning, counts, sums = present[0]
    for _, c, s in present[1:]:
        counts, sums = counts + c, exact.add(sums, s)
    return binning, counts, sums


def _tree_sum(parts: list[Any]) -> Any:
    """Add delayed statistics in a tree of fan-in SPLIT_EVERY; computes it."""
    from dask import delayed

    add = delayed(_add, pure=True)
    while len(parts) > 1:
        parts = [add(*parts[i:i + SPLIT_EVERY]) for i in range(0, len(parts), SPLIT_EVERY)]
    return parts[0].compute()


def _known_chunks(a: Any, name: str) -> None:
    """Refuse a Dask array whose chunk sizes are unknown (NaN), as after
    boolean indexing: rows cannot be matched or located without them."""
    if any(np.isnan(c) for c in a.chunks[0]):
        raise ValueError(
            f"{name} is a Dask array with unknown chunk sizes (e.g. after boolean indexing "
            "such as y[y >= 0]); its rows cannot be matched with the other arguments' rows. "
            f"Call {name}.compute_chunk_sizes() first (one pass over the data), or select "
            "the rows in a Dask DataFrame and use CalibrationStats.from_dataframe"
        )


def _block(y_true: Any, y_prob: Any, y_pred: Any, binning: Binning, where: str,
           inputs: Inputs) -> Sums:
    try:
        return binned_sums(y_true, y_prob, y_pred, None, binning, inputs, infer_labels=False)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


def _rows_block(y_true: Any, y_prob: Any, y_pred: Any, binning: Binning, start: int,
                inputs: Inputs) -> Sums:
    try:
        return binned_sums(y_true, y_prob, y_pred, None, binning, inputs, infer_labels=False)
    except ValueError as exc:
        raise located(exc, "dask array", start) from None


def array_sums(
    y_true: Any,
    y_prob: Any,
    *,
    y_pred: Any = None,
    n_bins: int | None = None,
    binning: Any = "uniform",
    inputs: Inputs = DEFAULT_INPUTS,
) -> Sums:
    """Per-bin sums of Dask (or NumPy) arrays, one block of rows at a time.

    ``y_prob`` of shape (n,) or (n, K) is chunked along rows only (its
    columns are merged into one chunk if needed); ``y_true`` and ``y_pred``
    are rechunked to the same rows (NumPy arrays are wrapped). Errors name the
    offending row of the whole array. ``inputs`` (the input keywords of
    :meth:`bece.CalibrationStats.from_arrays`) apply to every block (text
    labels need ``labels``: a block cannot see the others' values).
    """
    import dask.array as da

    bins = _fixed_binning(n_bins, binning)
    p = y_prob if is_dask(y_prob) else da.from_array(as_array(y_prob, "y_prob"))
    _known_chunks(p, "y_prob")
    if p.ndim not in (1, 2):
        raise ValueError(f"y_prob must have shape (n,) or (n, K), got shape {p.shape}")
    if p.ndim == 2 and p.numblocks[1] > 1:
        p = p.rechunk({1: -1})
    rows = p.chunks[0]

    def aligned(x: Any, name: str) -> Any:
        if x is None:
            return None
        a = x if is_dask(x) else da.from_array(as_array(x, name), chunks=(rows,))
        _known_chunks(a, name)
        if a.ndim != 1:
            raise ValueError(f"{name} must have shape (n,), got shape {a.shape}")
        if a.shape[0] != p.shape[0]:
            raise ValueError(
                f"{name} has {a.shape[0]} entries but y_prob has {p.shape[0]}; "
                "they must have the same length"
            )
        return a.rechunk((rows,)) if a.chunks[0] != rows else a

    if y_true is None:
        raise ValueError("y_true is required, got None")
    yt = aligned(y_true, "y_true")
    yp = aligned(y_pred, "y_pred")
    if p.shape[0] == 0:
        raise ValueError("y_prob is empty: at least one prediction is needed")
    from dask import delayed

    blocks_p = p.to_delayed().ravel()
    blocks_t = yt.to_delayed().ravel()
    blocks_y = yp.to_delayed().ravel() if yp is not None else [None] * len(blocks_p)
    starts = np.concatenate([[0], np.cumsum(rows)[:-1]]).tolist()
    one = delayed(_rows_block, pure=True)
    parts = [
        one(t, q, y, bins, int(s), inputs)
        for t, q, y, s, size in zip(blocks_t, blocks_p, blocks_y, starts, rows)
        if size > 0
    ]
    return _tree_sum(parts)


def dataframe_sums(
    df: Any,
    *,
    y_true: Hashable = "y_true",
    y_prob: Hashable | list[Hashable] | None = None,
    y_pred: Hashable | None = None,
    n_bins: int | None = None,
    binning: Any = "uniform",
    inputs: Inputs = DEFAULT_INPUTS,
) -> tuple[Binning, np.ndarray, np.ndarray, str]:
    """Per-bin sums of a pandas or Dask DataFrame and the input kind (see
    :meth:`bece.CalibrationStats.from_dataframe`; ``inputs`` as
    :func:`array_sums`)."""
    from .columns import select_columns

    if not (hasattr(df, "columns") and hasattr(df, "__getitem__")) or isinstance(df, dict):
        hint = (" (a dict of columns: pass pandas.DataFrame(df), or its arrays to "
                "CalibrationStats.from_arrays)" if isinstance(df, dict) else "")
        raise ValueError(
            f"df must be a pandas or Dask DataFrame, got {type(df).__name__}{hint}"
        )
    labels = list(df.columns)  # as they are: integer column names stay integers
    names = [str(c) for c in labels]
    yt: Hashable
    yp: Hashable | None
    probs: list[Hashable]
    if y_prob is None:
        yt, found, yp = select_columns(names, "dataframe")
        probs = list(found)
        if y_true != "y_true":
            yt = y_true
        if y_pred is not None:
            yp = y_pred
    else:
        yt, yp = y_true, y_pred
        probs = list(y_prob) if isinstance(y_prob, (list, tuple, np.ndarray)) else [y_prob]
        if not probs:
            raise ValueError("y_prob must name at least one column")
    cols = [yt, *probs] + ([yp] if yp is not None else [])
    missing = [c for c in cols if c not in labels]
    if missing:
        raise ValueError(
            f"dataframe has no column(s) {', '.join(repr(c) for c in missing)} "
            f"(found: {', '.join(repr(c) for c in labels)})"
        )

    def arrays(frame: Any) -> tuple[Any, Any, Any]:
        prob = frame[probs[0]].to_numpy() if len(probs) == 1 else frame[probs].to_numpy()
        pred = frame[yp].to_numpy() if yp is not None else None
        return frame[yt].to_numpy(), prob, pred

    kind = input_kind([0.0] if len(probs) == 1 else [[0.0, 1.0]], yp)
    if not is_dask(df):
        a, b, c = arrays(df)
        return (*binned_sums(a, b, c, n_bins, binning, inputs), kind)

    from dask import delayed

    bins = _fixed_binning(n_bins, binning)

    def part(frame: Any, i: int) -> Sums | None:
        if len(frame) == 0:
            return None
        a, b, c = arrays(frame)
        return _block(a, b, c, bins, f"dask dataframe partition {i}", inputs)

    one = delayed(part, pure=True)
    stats = _tree_sum([one(frame, i) for i, frame in enumerate(df[cols].to_delayed())])
    if stats is None:
        raise ValueError("dataframe is empty: at least one prediction is needed")
    return (*stats, kind)
