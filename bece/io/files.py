"""Reading predictions from CSV, Parquet and NPZ files.

Column conventions (DESIGN.md §4): ``y_true`` (integer labels) and either
``y_prob`` (binary, :math:`P(y=1)`) or ``p_0 ... p_{K-1}`` (class
probabilities, K >= 2, numbered from 0 without gaps), optionally ``y_pred``
(predicted labels: the seed's triples). Other columns are ignored. Values
are passed on unchanged; :mod:`bece.stats.inputs` checks them.

:func:`read_predictions` loads a whole file; :func:`read_statistics` reduces
it to :class:`~bece.stats.CalibrationStats`, reading CSV and Parquet in
chunks (:mod:`bece.io.stream`) so that memory does not grow with the file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ..base.typing import BinningSpec
from ..stats.binning import Binning
from ..stats.columns import select_columns
from .stream import FileStatistics

__all__ = [
    "example_path",
    "Predictions",
    "read_predictions",
    "read_statistics",
]


@dataclass(frozen=True)
class Predictions:
    """Arrays read from a file, ready for :func:`bece.bayesian_ece`."""

    y_true: np.ndarray
    y_prob: np.ndarray
    y_pred: np.ndarray | None
    source: str

    @property
    def kind(self) -> str:
        """``"binary"``, ``"top-label"`` or ``"triples"`` (with y_pred)."""
        if self.y_pred is not None:
            return "triples"
        return "binary" if self.y_prob.ndim == 1 else "top-label"


def example_path() -> Path:
    """Path of the example shipped with bece (digits, logistic regression)."""
    return Path(str(resources.files("bece") / "data" / "example.csv"))


def _assemble(get: Callable[[str], np.ndarray], names: list[str], source: str) -> Predictions:
    yt, probs, yp = select_columns(names, source)
    y_true = get(yt)
    if len(probs) == 1:
        y_prob = get(probs[0])
    else:
        y_prob = np.column_stack([get(c) for c in probs])
    y_pred = get(yp) if yp else None
    return Predictions(y_true, y_prob, y_pred, source)


def _arrow_column(table: Any, name: str) -> np.ndarray:
    col = table.column(name)
    if col.null_count:
        # pyarrow would turn the column into floats with NaN; say what it is
        raise ValueError(f"column '{name}' has {col.null_count} missing or NaN value(s)")
    return col.to_numpy()


def read_predictions(path: str | Path) -> Predictions:
    """Read predictions from a ``.csv``, ``.parquet``/``.pq`` or ``.npz`` file.

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        For an unknown extension, an unreadable file, missing columns or
        missing values.
    """
    path = Path(path)
    source = str(path)
    if not path.is_file():
        raise FileNotFoundError(f"{source}: no such file")
    suffix = path.suffix.lower()
    try:
        if suffix == ".npz":
            with np.load(path, allow_pickle=False) as data:
                names = list(data.files)
                arrays = {k: data[k] for k in names}
            return _assemble(arrays.__getitem__, names, source)
        if suffix in (".parquet", ".pq"):
            import pyarrow.parquet as pq

            table = pq.read_table(path)
        elif suffix == ".csv":
            import pyarrow.csv as pcsv

            table = pcsv.read_csv(path)
        else:
            raise ValueError(
                f"{source}: unknown file type '{suffix}'; use .csv, .parquet (.pq) or .npz"
            )
    except ValueError as exc:
        if str(exc).startswith(source):
            raise
        raise ValueError(f"{source}: cannot read: {exc}".splitlines()[0]) from None
    except Exception as exc:  # pyarrow's ArrowInvalid and friends, zip errors
        raise ValueError(f"{source}: cannot read: {exc}".splitlines()[0]) from None
    names = list(table.column_names)

    def get(name: str) -> np.ndarray:
        try:
            return _arrow_column(table, name)
        except ValueError as exc:
            raise ValueError(f"{source}: {exc}") from None

    return _assemble(get, names, source)


def read_statistics(
    path: str | Path,
    *,
    n_bins: int | None = None,
    binning: BinningSpec | Binning = "uniform",
    batch_size: int | None = None,
    progress: bool = False,
) -> FileStatistics:
    """Statistics of the predictions in a file, without loading it whole.

    CSV and Parquet are read in batches by
    :func:`bece.io.stream.file_statistics`; NPZ is read whole
    (:func:`read_predictions`; ``np.load`` has no chunked reader). The
    result is the same as :meth:`~bece.CalibrationStats.from_arrays` on the
    whole file: counts exactly, sums to float64 rounding.

    Parameters
    ----------
    path : str or Path
    n_bins : int, default 15
    binning : {"uniform", "quantile"} or array_like of edges, default "uniform"
    batch_size : int, optional
        Rows per batch (default :data:`bece.io.stream.DEFAULT_BATCH_SIZE`).
    progress : bool, default False
        A progress bar on stderr while reading CSV or Parquet.

    Returns
    -------
    bece.io.stream.FileStatistics
        ``.stats``, ``.kind`` (``"binary"``, ``"top-label"`` or
        ``"triples"``) and ``.source``.
    """
    from ..stats.calibration_stats import CalibrationStats
    from . import stream

    path = Path(path)
    if path.suffix.lower() == ".npz" or not path.is_file():
        pred = read_predictions(path)
        stats = CalibrationStats.from_arrays(
            pred.y_true, pred.y_prob, y_pred=pred.y_pred, n_bins=n_bins, binning=binning
        )
        return FileStatistics(stats, pred.kind, pred.source)
    if path.suffix.lower() not in (".csv", ".parquet", ".pq"):
        read_predictions(path)  # raises the unknown-type message
    size = stream.DEFAULT_BATCH_SIZE if batch_size is None else batch_size
    return stream.file_statistics(
        path, n_bins=n_bins, binning=binning, batch_size=size, progress=progress
    )
