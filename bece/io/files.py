"""Reading predictions from CSV, Parquet and NPZ files.

Column conventions (DESIGN.md §4): ``y_true`` (integer labels) and either
``y_prob`` (binary, :math:`P(y=1)`) or ``p_0 ... p_{K-1}`` (class
probabilities, K >= 2, numbered from 0 without gaps), optionally ``y_pred``
(predicted labels: the seed's triples). Other columns are ignored; a column
that bece uses must appear once (two ``y_true`` columns are an error, not a
choice). Values are passed on unchanged; :mod:`bece.stats.inputs` checks
them. Each array of an NPZ file is one column: shape ``(n,)``, all of the
same length. A directory is read as a Parquet dataset (Spark or Dask output;
:func:`bece.io.stream.parquet_parts`).

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


def _npz_column(arrays: dict[str, np.ndarray], source: str) -> Callable[[str], np.ndarray]:
    """Arrays of an NPZ file as columns: each of shape (n,), all of one length."""
    lengths: dict[str, int] = {}

    def get(name: str) -> np.ndarray:
        arr = arrays[name]
        if arr.ndim != 1:
            raise ValueError(
                f"{source}: array '{name}' has shape {arr.shape}; each array of an NPZ file "
                "is one column, of shape (n,)"
            )
        lengths[name] = arr.shape[0]
        if len(set(lengths.values())) > 1:
            shown = ", ".join(f"'{k}' {v}" for k, v in lengths.items())
            raise ValueError(f"{source}: arrays of different lengths ({shown}); each is one "
                             "column of the same rows")
        return arr

    return get


def _read_csv(path: Path) -> Any:
    """The whole CSV file as a table; pyarrow's block grows to hold its
    longest line (the default 1 MiB refuses a longer field)."""
    import pyarrow.csv as pcsv

    from .stream import larger_block

    size, block = path.stat().st_size, 1 << 20
    while True:
        try:
            return pcsv.read_csv(path, read_options=pcsv.ReadOptions(block_size=block))
        except Exception as exc:
            larger = larger_block(exc, block, size)
            if larger is None:
                raise
            block = larger


def _read_dataset(path: Path) -> Any:
    """The columns bece uses of a directory of Parquet files, one table."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .stream import open_part, parquet_parts

    parts = parquet_parts(path)
    yt, probs, yp = select_columns(list(pq.ParquetFile(parts[0]).schema_arrow.names), str(path))
    cols = [yt, *probs] + ([yp] if yp else [])
    tables = [open_part(path, f, cols).read(columns=cols) for f in parts]
    return pa.concat_tables(tables, promote_options="permissive")


def read_predictions(path: str | Path) -> Predictions:
    """Read predictions from a ``.csv``, ``.parquet``/``.pq`` or ``.npz`` file,
    or from a directory of Parquet files (a dataset written by Spark or Dask).

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        For an unknown extension, a directory without Parquet files, an
        unreadable file, missing or duplicated columns, NPZ arrays that are
        not columns of one length, or missing values.
    """
    path = Path(path)
    source = str(path)
    if not path.exists():
        raise FileNotFoundError(f"{source}: no such file")
    suffix = path.suffix.lower()
    try:
        if path.is_dir():
            table = _read_dataset(path)
        elif suffix == ".npz":
            with np.load(path, allow_pickle=False) as data:
                names = list(data.files)
                arrays = {k: data[k] for k in names}
            return _assemble(_npz_column(arrays, source), names, source)
        elif suffix in (".parquet", ".pq"):
            import pyarrow.parquet as pq

            # not pq.read_table: its dataset reader refuses duplicated column
            # names before select_columns can name the one that matters
            table = pq.ParquetFile(path).read()
        elif suffix == ".csv":
            table = _read_csv(path)
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

    CSV, Parquet and Parquet datasets (directories) are read in batches by
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
    from ..stats.inputs import as_outcomes, located
    from . import stream

    path = Path(path)
    if path.suffix.lower() == ".npz" or not path.exists():
        pred = read_predictions(path)
        try:  # the file's own errors, named as in the chunked reader
            as_outcomes(pred.y_true, pred.y_prob, pred.y_pred)
        except ValueError as exc:
            raise located(exc, pred.source, 0) from None
        stats = CalibrationStats.from_arrays(
            pred.y_true, pred.y_prob, y_pred=pred.y_pred, n_bins=n_bins, binning=binning
        )
        return FileStatistics(stats, pred.kind, pred.source)
    if not path.is_dir() and path.suffix.lower() not in (".csv", ".parquet", ".pq"):
        read_predictions(path)  # raises the unknown-type message
    size = stream.DEFAULT_BATCH_SIZE if batch_size is None else batch_size
    return stream.file_statistics(
        path, n_bins=n_bins, binning=binning, batch_size=size, progress=progress
    )
