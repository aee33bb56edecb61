"""Joint statistics of two prediction files of the same test set, read in chunks.

``bece compare`` on large files: both files (CSV, Parquet or Parquet
datasets, as :mod:`bece._io.stream` reads them) are read side by side a batch
of rows at a time; the batches of the two files are cut to the same rows
(CSV batches are blocks of text, so the two files' batches hold different
numbers of rows), each piece is checked (each file's values, named with
the file and row as :func:`bece._io.stream.file_statistics` names them; the
same ``y_true`` in both files, row for row) and reduced to
:class:`~bece.PairedStats`, and the pieces' statistics are added. Memory:
one batch of each file.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from .._stats.binning import Binning
from .._stats.columns import select_columns
from .._stats.inputs import DEFAULT_INPUTS, Inputs, as_outcomes, located
from .._stats.labels import fixed_labels
from .._stats.paired_stats import PairedStats
from .files import column_names
from .stream import DEFAULT_BATCH_SIZE, iter_chunks

__all__ = [
    "PairedFileStatistics",
    "file_kind",
    "paired_file_statistics",
]


@dataclass(frozen=True)
class PairedFileStatistics:
    """Joint statistics of two files and what their columns meant.

    Attributes
    ----------
    stats : PairedStats
    kind : {"binary", "top-label", "triples"}
    sources : tuple of two str
    n_classes : int or None
        Number of probability columns (None for one column).
    """

    stats: PairedStats
    kind: str
    sources: tuple[str, str]
    n_classes: int | None


def file_kind(path: str | Path, **columns: Any) -> tuple[str, list[str], str, str | None]:
    """``(kind, probability columns, y_true column, y_pred column)`` of a
    file, from its column names (:func:`bece.io.column_names`)."""
    yt, probs, yp = select_columns(column_names(path), str(path), **columns)
    kind = "triples" if yp else ("top-label" if len(probs) > 1 else "binary")
    return kind, probs, yt, yp


class _Reader:
    """One file's batches, handed out a given number of rows at a time."""

    def __init__(self, path: Path, batch_size: int, columns: dict[str, Any]) -> None:
        self.source = str(path)
        self.kind, self.probs, self.yt, self.yp = file_kind(path, **columns)
        self.chunks = iter_chunks(path, batch_size=batch_size, **columns)
        self.cols: dict[str, np.ndarray] | None = None
        self.offset = 0  # rows of self.cols already handed out
        self.rows = 0  # rows handed out in all

    def available(self) -> int:
        """Rows in the current batch (reads the next one when it is used up; 0 at the end)."""
        while self.cols is None or self.offset >= len(self.cols[self.yt]):
            nxt = next(self.chunks, None)
            if nxt is None:
                return 0
            self.cols, self.offset = nxt[1], 0
        return len(self.cols[self.yt]) - self.offset

    def take(self, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        assert self.cols is not None
        s = slice(self.offset, self.offset + k)
        cols = {name: col[s] for name, col in self.cols.items()}
        self.offset += k
        self.rows += k
        prob = cols[self.probs[0]] if len(self.probs) == 1 else np.column_stack(
            [cols[c] for c in self.probs])
        return cols[self.yt], prob, (cols[self.yp] if self.yp else None)

    def count_rest(self) -> int:
        """Rows not handed out yet (reads the rest of the file)."""
        rest = self.available()
        self.cols = None
        return rest + sum(len(c[self.yt]) for _, c in self.chunks)


def _pieces(a: _Reader, b: _Reader) -> Iterator[tuple[int, tuple[Any, ...], tuple[Any, ...]]]:
    """``(first_row, batch of A, batch of B)`` over the same rows of both files."""
    while True:
        ka, kb = a.available(), b.available()
        if ka == 0 or kb == 0:
            if ka or kb:
                longer = a if ka else b
                na = a.rows + (a.count_rest() if longer is a else 0)
                nb = b.rows + (b.count_rest() if longer is b else 0)
                raise ValueError(
                    f"{a.source} has {na} rows but {b.source} has {nb}; compare needs both "
                    "models' predictions on the same test set, row for row"
                )
            return
        k = min(ka, kb)
        start = a.rows
        yield start, a.take(k), b.take(k)


def paired_file_statistics(
    path_a: str | Path,
    path_b: str | Path,
    *,
    binning_a: Binning,
    binning_b: Binning,
    batch_size: int = DEFAULT_BATCH_SIZE,
    inputs: Inputs = DEFAULT_INPUTS,
    y_true_col: str = "y_true",
    y_prob_col: str | None = None,
    prob_prefix: str = "p_",
    y_pred_col: str | None = None,
) -> PairedFileStatistics:
    """Joint statistics of two CSV or Parquet files of the same test set, read in chunks.

    Parameters
    ----------
    path_a, path_b : str or Path
        Each model's predictions (columns of :mod:`bece.io`), the same
        examples in the same order.
    binning_a, binning_b : Binning
        Each model's bins (for the smooth model fine bins,
        :func:`bece.smooth.fine_binning`).
    batch_size : int, default 2**20
        Rows per batch of each file: bounds the memory, not the result.
    inputs : Inputs, optional
        How both files are read: the input keywords of
        :func:`bece.io.read_statistics` as one :class:`bece._stats.inputs.Inputs`
        (text labels without ``labels``: each file's classes from its first chunk).
    y_true_col, y_prob_col, prob_prefix, y_pred_col
        The column names (:func:`bece.io.read_predictions`), the same in
        both files.

    Returns
    -------
    PairedFileStatistics
        ``.stats`` equals :meth:`bece.PairedStats.from_arrays` on the whole
        files, to the last bit (exact sums, :mod:`bece._stats.exact`).

    Raises
    ------
    ValueError
        Files of different kinds (binary, top-label, triples), different
        numbers of rows, ``y_true`` that differs between them (the number of
        rows and the first), or any value :func:`bece.io.read_statistics`
        refuses (named with its file and row).

    Examples
    --------
    >>> import numpy as np
    >>> from bece import PairedStats
    >>> from bece.io import example_path
    >>> from bece._io.paired import paired_file_statistics
    >>> from bece._stats import make_binning
    >>> bins = make_binning(None, 10)
    >>> fs = paired_file_statistics(example_path(), example_path(), binning_a=bins,
    ...                             binning_b=bins, batch_size=300)
    >>> fs.stats, fs.kind
    (PairedStats(n=899, n_bins=(10, 10), joint_cells=13, kind='top-label'), 'top-label')
    """
    columns: dict[str, Any] = {"y_true_col": y_true_col, "y_prob_col": y_prob_col,
                               "prob_prefix": prob_prefix, "y_pred_col": y_pred_col}
    if not isinstance(batch_size, (int, np.integer)) or isinstance(batch_size, bool) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    a = _Reader(Path(path_a), int(batch_size), columns)
    b = _Reader(Path(path_b), int(batch_size), columns)
    if a.kind != b.kind:
        raise ValueError(
            f"{a.source} holds {a.kind} predictions but {b.source} holds {b.kind}; "
            "compare needs both of the same kind"
        )
    fixed: dict[str, Inputs] = {}
    total: PairedStats | None = None
    differ, first_differ = 0, -1
    for start, batch_a, batch_b in _pieces(a, b):
        outcomes = []
        for reader, (y_true, y_prob, y_pred) in ((a, batch_a), (b, batch_b)):
            try:
                if reader.source not in fixed:  # text classes fixed by the first chunk
                    fixed[reader.source] = replace(
                        inputs, labels=fixed_labels(y_true, y_prob, y_pred, inputs.labels))
                outcomes.append(as_outcomes(y_true, y_prob, y_pred, fixed[reader.source]))
            except ValueError as exc:
                raise located(exc, reader.source, start) from None
        bad = np.flatnonzero(np.asarray(batch_a[0]) != np.asarray(batch_b[0]))
        if bad.size:
            first_differ = start + int(bad[0]) if differ == 0 else first_differ
            differ += bad.size
        if differ:
            continue  # refused at the end, with the count
        if a.kind == "binary":
            same = np.ones(len(batch_a[0]), dtype=bool)
        elif a.kind == "top-label":
            same = np.argmax(batch_a[1], axis=1) == np.argmax(batch_b[1], axis=1)
        else:
            same = np.asarray(batch_a[2] == batch_b[2], dtype=bool)
        (z_a, p_a), (z_b, p_b) = outcomes
        part = PairedStats.from_outcomes(z_a, p_a, z_b, p_b, same, binning_a, binning_b,
                                         kind=a.kind)
        total = part if total is None else total + part
    if differ:
        raise ValueError(
            f"{a.source} and {b.source} are not the same test set: y_true differs in "
            f"{differ} of {a.rows} rows (first at row {first_differ})"
        )
    if total is None:
        raise ValueError(f"{a.source}: no predictions (0 rows)")
    return PairedFileStatistics(total, a.kind, (a.source, b.source),
                                len(a.probs) if len(a.probs) > 1 else None)
