"""Statistics of prediction files read in chunks, in bounded memory.

A CSV or Parquet file is read a batch of rows at a time (pyarrow's
``ParquetFile.iter_batches`` and ``pyarrow.csv.open_csv``); each batch is
checked and reduced to :class:`~bece._stats.CalibrationStats`, and the
statistics are added. Counts are exactly those of reading the whole file at
once (:func:`bece.io.read_predictions` then
:meth:`~bece._stats.CalibrationStats.from_arrays`), sums agree to float64
rounding (the same terms added in another order). Columns follow
:mod:`bece.io`.

Memory. For uniform or explicit bins only one batch is held at a time:
``batch_size`` rows (default 2^20) for Parquet, whose reader also holds the row
group being decoded (pyarrow writes row groups of at most 2^20 rows by default;
a file written as one huge row group needs that group in memory), and 8 MiB
blocks of text for CSV (larger only for a file with a longer line: the block
grows to hold it). Quantile bins need the global quantiles of the confidences,
so they take two passes: the first keeps one float64 confidence per row (8
bytes per row; 16 at the peak for CSV, whose row count is unknown in advance)
and places the edges with ``np.quantile`` exactly as
:func:`bece._stats.binning.make_binning` does on the whole column, the second
computes the statistics in those bins. NPZ files are read whole by
:func:`bece.io.read_predictions` (``np.load`` has no chunked reader).

Every check of :func:`bece._stats.inputs.as_outcomes` runs on every batch; an
error names the file and the row (counted from 0 over the whole file, header
excluded), e.g. ``pred.csv: y_prob contains NaN: 1 value(s) (row 1234567:
nan)``. CSV column types: probability columns are read as float64; label
columns are typed from the first 8 MiB block and, where a later block holds a
value that type cannot (``1.0`` after integers), read on as float64 from that
row: the types :func:`bece.io.read_predictions` gives by looking at the whole
file (integers stay int64; labels such as ``1.0`` are then checked to be whole
numbers, as in memory).

A directory is read as a Parquet dataset (the output of Spark, Dask or
pyarrow's ``write_dataset``): its ``*.parquet``/``*.pq`` files, in all its
sub-directories, one after another in natural order of their paths (``part.2``
before ``part.10``), skipping names that start with ``.`` or ``_``
(``_SUCCESS``, ``_metadata``, checksum files) as pyarrow does; the columns come
from the files, not from directory names such as ``key=value``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from .._base.typing import BinningSpec
from .._stats import fused as _fused
from .._stats.binning import Binning, make_binning
from .._stats.calibration_stats import CalibrationStats
from .._stats.columns import select_columns
from .._stats.inputs import DEFAULT_INPUTS, Inputs, as_outcomes, located
from .._stats.labels import fixed_labels

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "iter_outcomes",
    "file_statistics",
    "FileStatistics",
    "iter_chunks",
    "larger_block",
    "parquet_parts",
]

#: Rows per batch: 2^20 rows of one label and one float64 column is 16 MiB.
DEFAULT_BATCH_SIZE = 1 << 20

#: Bytes of CSV text parsed at a time (pyarrow's block size), and to find
#: the column names. A block must hold a whole line (the header too): pyarrow
#: refuses a longer one, and the reader then tries again with a larger block
#: (larger_block), up to pyarrow's limit (an int32).
_CSV_BLOCK = 8 << 20
_CSV_PROBE = 1 << 16
_CSV_MAX_BLOCK = (1 << 31) - 1

#: pyarrow's messages for a line longer than its block (the header, or a row)
_LONG_LINE = ("straddling object straddles two block boundaries",
              "Empty CSV file or block: cannot infer number of columns")

#: Above this many bytes of CSV the compiled loop is worth importing numba
#: for (about 0.4 s) in a fresh process (rows: bece._stats.fused.AUTO_ROWS).
_COMPILED_CSV_BYTES = 64 << 20


@dataclass(frozen=True)
class FileStatistics:
    """Statistics of a predictions file and what its columns meant.

    Attributes
    ----------
    stats : CalibrationStats
    kind : {"binary", "top-label", "triples"}
        As :attr:`bece.io.Predictions.kind`.
    source : str
        The path as given.
    n_classes : int or None
        K, the number of probability columns; None for one column.
    labels : ndarray or None
        The class of each probability column when the labels are not the
        column indices: given (``labels=``), or the text labels' sorted
        values (:func:`bece._stats.labels.fixed_labels`); else None.

    Examples
    --------
    >>> from bece.io import example_path, read_statistics
    >>> fs = read_statistics(example_path(), n_bins=10); fs.kind, fs.stats.n, fs.n_classes
    ('top-label', 899, 10)
    """

    stats: CalibrationStats
    kind: str
    source: str
    n_classes: int | None = None
    labels: Any = None


def _kind(probs: list[str], y_pred: str | None) -> str:
    if y_pred is not None:
        return "triples"
    return "binary" if len(probs) == 1 else "top-label"


def _natural_key(path: Path) -> list[Any]:
    """Sort key: runs of digits compared as numbers (part.2 before part.10)."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", path.as_posix())]


_GLOB = re.compile(r"[*?\[]")


def glob_parts(path: str | Path) -> list[Path] | None:
    """The files a glob pattern (``logs/*.parquet``, ``logs/**/day=*/*.csv``)
    matches, in natural order; None when ``path`` is not a pattern or names
    an existing file or folder. Names starting with ``.`` are not matched
    (:mod:`glob`'s rule). ``FileNotFoundError`` when nothing matches."""
    import glob

    text = str(path)
    if not _GLOB.search(text) or Path(text).exists():
        return None
    files = [Path(f) for f in glob.glob(text, recursive=True) if Path(f).is_file()]
    if not files:
        raise FileNotFoundError(f"{text}: no file matches this pattern")
    return sorted(files, key=_natural_key)


def pattern_format(parts: list[Path], source: str) -> str:
    """``"dataset"`` when every file of a pattern is Parquet, ``"csvs"`` when
    every one is CSV; a ``ValueError`` naming the others otherwise."""
    kinds = {".parquet": "dataset", ".pq": "dataset", ".csv": "csvs"}
    found = {kinds.get(p.suffix.lower(), p.suffix.lower() or "(none)") for p in parts}
    if len(found) == 1 and found <= {"dataset", "csvs"}:
        return found.pop()
    other = sorted(f for f in found if f not in ("dataset", "csvs"))
    raise ValueError(f"{source}: a pattern reads CSV files or Parquet files, all of one type; "
                     f"it matches {', '.join(other) or 'both CSV and Parquet'} files")


def parquet_parts(path: str | Path) -> list[Path]:
    """The Parquet files of a dataset directory, in the order they are read.

    Every ``*.parquet`` or ``*.pq`` file under ``path`` (sub-directories
    included, e.g. Hive-style ``key=value`` folders), in natural order of
    their paths relative to ``path`` (``part.2`` before ``part.10``; Spark's
    zero-padded ``part-00002`` sort the same either way). Files and folders
    whose names start with ``.`` or ``_`` are skipped, as pyarrow does
    (``_SUCCESS``, ``_metadata``, ``.crc`` checksums, ``_temporary``).

    Raises
    ------
    ValueError
        If ``path`` is not a directory or holds no such file.
    """
    matched = glob_parts(path)
    if matched is not None:
        if pattern_format(matched, str(path)) != "dataset":
            raise ValueError(f"{path}: the pattern matches CSV files, not Parquet files")
        return matched
    path = Path(path)
    if not path.is_dir():
        raise ValueError(f"{path}: not a directory")
    parts = []
    for f in path.rglob("*"):
        rel = f.relative_to(path)
        if any(n.startswith((".", "_")) for n in rel.parts):
            continue
        if f.suffix.lower() in (".parquet", ".pq") and f.is_file():
            parts.append(rel)
    if not parts:
        raise ValueError(
            f"{path}: is a directory without Parquet files (*.parquet, *.pq); a directory "
            "is read only as a Parquet dataset (e.g. the output of Spark or Dask)"
        )
    return [path / rel for rel in sorted(parts, key=_natural_key)]


def open_part(root: Path, part: Path, cols: list[str], **options: Any) -> Any:
    """``pyarrow.parquet.ParquetFile`` of one file of a dataset (or of the
    file ``root`` itself), checked to hold the columns ``cols``."""
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(part, **options)
    missing = [c for c in cols if c not in pf.schema_arrow.names]
    if missing:
        name = part.relative_to(root) if root in part.parents else part
        raise ValueError(f"{root}: part {name} has no column(s) "
                         f"{', '.join(missing)} (found: {', '.join(pf.schema_arrow.names)})")
    return pf


def _format(path: Path) -> str:
    """``"csv"``, ``"parquet"``, ``"dataset"`` (a directory of Parquet files,
    or a pattern matching Parquet files) or ``"csvs"`` (a pattern matching
    CSV files)."""
    matched = glob_parts(path)
    if matched is not None:
        return pattern_format(matched, str(path))
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    if path.is_dir():
        parquet_parts(path)  # a clear error for a directory that is not a dataset
        return "dataset"
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".pq"):
        return "parquet"
    if suffix == ".csv":
        return "csv"
    raise ValueError(f"{path}: streaming reads .csv and .parquet (.pq) files, not '{suffix}'")


def _rows_hint(path: Path, fmt: str) -> tuple[int | None, bool]:
    """(number of rows if known, whether the compiled loop pays off)."""
    if fmt in ("parquet", "dataset"):
        import pyarrow.parquet as pq

        files = parquet_parts(path) if fmt == "dataset" else [path]
        rows = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
        return rows, rows >= _fused.AUTO_ROWS
    csv_files = glob_parts(path) if fmt == "csvs" else [path]
    assert csv_files is not None
    return None, sum(f.stat().st_size for f in csv_files) >= _COMPILED_CSV_BYTES


def larger_block(exc: Exception, block: int, size: int) -> int | None:
    """A larger CSV block after pyarrow refused a line longer than ``block``,
    or None (another error, or the block already holds the whole file)."""
    if not any(m in str(exc) for m in _LONG_LINE) or block >= min(size, _CSV_MAX_BLOCK):
        return None
    return min(block * 8, _CSV_MAX_BLOCK)


def _csv_names(path: Path) -> list[str]:
    """The column names of a CSV file (its header line, however long)."""
    import pyarrow.csv as pcsv

    size, block = path.stat().st_size, _CSV_PROBE
    while True:
        try:
            with pcsv.open_csv(path, read_options=pcsv.ReadOptions(block_size=block)) as head:
                return list(head.schema.names)
        except Exception as exc:
            larger = larger_block(exc, block, size)
            if larger is None:
                raise
            block = larger


def _csv_batches(path: Path, cols: list[str], probs: list[str]) -> Iterator[Any]:
    """Record batches of the columns ``cols`` of a CSV file, read block by block.

    pyarrow types each label column from the first block. Two refusals of a
    valid file are recovered from by opening it again after the rows already
    yielded (``skip_rows_after_names``): a line longer than the block (a
    larger block), and a label column typed int64 that meets a value such as
    ``1.0`` (that column as float64 from then on: pyarrow's own rule when it
    reads the whole file, int64 widened to double).
    """
    import pyarrow as pa
    import pyarrow.csv as pcsv

    size, block = path.stat().st_size, _CSV_BLOCK
    types: dict[str, Any] = {c: pa.float64() for c in probs}
    done = 0
    inferred: dict[str, Any] = {}
    while True:
        read = pcsv.ReadOptions(block_size=block, skip_rows_after_names=done)
        convert = pcsv.ConvertOptions(include_columns=cols, column_types=types)
        try:
            with pcsv.open_csv(path, read_options=read, convert_options=convert) as reader:
                inferred = {f.name: f.type for f in reader.schema}
                for batch in reader:
                    yield batch
                    done += batch.num_rows
            return
        except pa.ArrowInvalid as exc:
            larger = larger_block(exc, block, size)
            if larger is not None:
                block = larger
                continue
            widen = [c for c in cols if c not in types and pa.types.is_integer(inferred.get(c, pa.null()))]
            if "conversion error to int" in str(exc) and widen:
                types.update({c: pa.float64() for c in widen})
                continue
            raise


def _open_batches(path: Path, fmt: str, batch_size: int,
                  columns: dict[str, Any]) -> tuple[list[str], Any]:
    """Column names and a function giving an iterator of record batches."""
    source = str(path)
    if fmt in ("parquet", "dataset"):
        import pyarrow.parquet as pq

        files = parquet_parts(path) if fmt == "dataset" else [path]
        names = list(pq.ParquetFile(files[0]).schema_arrow.names)
        yt, probs, yp = select_columns(names, source, **columns)
        cols = [yt, *probs] + ([yp] if yp else [])

        def parquet_batches() -> Iterator[Any]:
            for f in files:
                # pre_buffer=False: pyarrow's read-ahead cache otherwise grows with
                # the file (415 MiB peak at 3e7 rows, 213 MiB without)
                pf = open_part(path, f, cols, pre_buffer=False)
                yield from pf.iter_batches(batch_size=batch_size, columns=cols)

        return names, parquet_batches
    # the names from the first 64 KiB (more for a longer header); the types
    # come with the real read
    csv_files = glob_parts(path) if fmt == "csvs" else [path]
    assert csv_files is not None
    names = _csv_names(csv_files[0])
    yt, probs, yp = select_columns(names, source, **columns)
    cols = [yt, *probs] + ([yp] if yp else [])

    def csv_batches() -> Iterator[Any]:
        for i, f in enumerate(csv_files):
            if i:  # the first file's names are those above
                here = set(_csv_names(f))
                missing = [c for c in cols if c not in here]
                if missing:
                    raise ValueError(f"{source}: file {f} has no column(s) {', '.join(missing)}")
            yield from _csv_batches(f, cols, probs)

    return names, csv_batches


def iter_chunks(
    path: str | Path, *, batch_size: int = DEFAULT_BATCH_SIZE, y_true_col: str = "y_true",
    y_prob_col: str | None = None, prob_prefix: str = "p_", y_pred_col: str | None = None,
) -> Iterator[tuple[int, dict[str, np.ndarray]]]:
    """Yield ``(first_row, columns)`` for consecutive batches of a file.

    ``columns`` maps each column that :mod:`bece.io` uses (``y_true``, the
    probability columns, ``y_pred``; named by the column options of
    :func:`bece.io.read_predictions`) to a NumPy array of at most
    ``batch_size`` rows. Missing values raise ``ValueError`` naming the
    column and the row.

    Examples
    --------
    >>> import numpy as np
    >>> from bece import CalibrationStats
    >>> from bece.io import example_path, iter_chunks
    >>> stats = []
    >>> for first, columns in iter_chunks(example_path(), batch_size=400):
    ...     prob = np.column_stack([columns[f"p_{k}"] for k in range(10)])
    ...     stats.append(CalibrationStats.from_arrays(columns["y_true"], prob, n_bins=10))
    ...     print(first, prob.shape)
    0 (400, 10)
    400 (400, 10)
    800 (99, 10)
    >>> sum(stats).n
    899
    """
    names_of = {"y_true_col": y_true_col, "y_prob_col": y_prob_col, "prob_prefix": prob_prefix,
                "y_pred_col": y_pred_col}
    path = Path(path)
    source = str(path)
    if not isinstance(batch_size, (int, np.integer)) or isinstance(batch_size, bool) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    fmt = _format(path)
    try:
        names, batches = _open_batches(path, fmt, int(batch_size), names_of)
        start = 0
        for batch in batches():
            for lo in range(0, batch.num_rows, batch_size):
                part = batch.slice(lo, batch_size)
                cols = {}
                for name in part.schema.names:
                    col = part.column(name)
                    if col.null_count:
                        row = start + int(np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False))[0])
                        raise ValueError(
                            f"{source}: column '{name}' has {col.null_count} missing or NaN "
                            f"value(s) in rows {start}..{start + part.num_rows - 1}, "
                            f"the first at row {row}"
                        )
                    cols[name] = _numpy(col)
                yield start, cols
                start += part.num_rows
    except Exception as exc:
        raise _reading_error(exc, source) from None


def _reading_error(exc: Exception, source: str) -> Exception:
    """Our own errors as they are; pyarrow's (ArrowInvalid is a ValueError) named."""
    if isinstance(exc, FileNotFoundError) or (
        type(exc) is ValueError and str(exc).startswith(source)
    ):
        return exc
    return ValueError(f"{source}: cannot read: {exc}".splitlines()[0])


_ARROW_NUMPY = {"double": "f8", "float": "f4", "int8": "i1", "int16": "i2", "int32": "i4",
                "int64": "i8", "uint8": "u1", "uint16": "u2", "uint32": "u4", "uint64": "u8"}


def _numpy(col: Any) -> np.ndarray:
    """A pyarrow array without nulls as NumPy.

    Numeric columns are viewed in place from their data buffer (pyarrow's own
    ``to_numpy`` imports pandas, about 1 s in a fresh process); booleans are
    unpacked from bits; anything else goes through ``to_numpy``.
    """
    code = _ARROW_NUMPY.get(str(col.type))
    if code is not None:
        dtype = np.dtype(code)
        return np.frombuffer(col.buffers()[1], dtype=dtype, count=len(col),
                             offset=col.offset * dtype.itemsize)
    if str(col.type) == "bool":
        bits = np.frombuffer(col.buffers()[1], dtype=np.uint8)
        return np.unpackbits(bits, bitorder="little", count=col.offset + len(col))[col.offset:].view(np.bool_)
    return col.to_numpy(zero_copy_only=False)


def _arrays(
    cols: dict[str, np.ndarray], yt: str, probs: list[str], yp: str | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    y_prob = cols[probs[0]] if len(probs) == 1 else np.column_stack([cols[c] for c in probs])
    return cols[yt], y_prob, (cols[yp] if yp else None)


class _Progress:
    """A tqdm bar on stderr, or nothing."""

    def __init__(self, enabled: bool, total: int | None, desc: str):
        self.bar = None
        if enabled:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, desc=desc, unit="rows", unit_scale=True, leave=False)

    def update(self, rows: int) -> None:
        if self.bar is not None:
            self.bar.update(rows)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def file_statistics(
    path: str | Path,
    *,
    n_bins: int | None = None,
    binning: BinningSpec | Binning = "uniform",
    batch_size: int = DEFAULT_BATCH_SIZE,
    progress: bool = False,
    inputs: Inputs = DEFAULT_INPUTS,
    y_true_col: str = "y_true",
    y_prob_col: str | None = None,
    prob_prefix: str = "p_",
    y_pred_col: str | None = None,
) -> FileStatistics:
    """Statistics of the predictions in a CSV or Parquet file, read in chunks.

    Parameters
    ----------
    path : str or Path
        A ``.csv`` or ``.parquet``/``.pq`` file with the columns of
        :mod:`bece.io`, or a directory of Parquet files (a dataset written
        by Spark, Dask or pyarrow; module docstring).
    n_bins : int, default 15
        Number of bins M.
    binning : {"uniform", "quantile"} or array_like of edges or Binning, default "uniform"
        As :meth:`bece.CalibrationStats.from_arrays`; ``"quantile"`` reads
        the file twice (module docstring).
    batch_size : int, default 2**20
        Rows per batch: bounds the memory, not the result.
    progress : bool, default False
        Show a tqdm progress bar on stderr (the ``bece`` command turns it on
        when stderr is a terminal).
    inputs : Inputs, optional
        How every chunk is read: the input keywords of
        :func:`bece.io.read_statistics` as one :class:`bece._stats.inputs.Inputs`.
        Text labels of class probabilities without ``labels`` are mapped to
        the columns by the first chunk's values
        (:func:`bece._stats.labels.fixed_labels`), which every later chunk
        must then use.
    y_true_col, y_prob_col, prob_prefix, y_pred_col
        The column names (:func:`bece.io.read_predictions`).

    Returns
    -------
    FileStatistics

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        For another file type, a directory without Parquet files, an
        unreadable file, missing or duplicated columns or
        values, or any value :func:`bece._stats.inputs.as_outcomes` refuses (with
        its row in the file).

    Examples
    --------
    >>> from bece.io import example_path
    >>> from bece._io.stream import file_statistics
    >>> fs = file_statistics(example_path(), batch_size=100)
    >>> fs.kind, fs.stats.n
    ('top-label', 899)
    """
    path = Path(path)
    source = str(path)
    fmt = _format(path)
    columns: dict[str, Any] = {"y_true_col": y_true_col, "y_prob_col": y_prob_col, "prob_prefix": prob_prefix,
               "y_pred_col": y_pred_col}
    given = inputs.labels
    try:
        total, compiled = _rows_hint(path, fmt)
        names, _ = _open_batches(path, fmt, 1, columns)
    except Exception as exc:
        raise _reading_error(exc, source) from None
    yt, probs, yp = select_columns(names, source, **columns)
    engine = "auto"
    if compiled and _fused.available_engine() == "numba":
        engine = "numba"

    quantile = isinstance(binning, str) and binning in ("quantile", "equal-mass")
    if quantile:
        bins = _quantile_binning(path, n_bins, batch_size, (yt, probs, yp), total, progress,
                                 columns, inputs)
    else:
        bins = make_binning(None, n_bins, binning)

    kind = _kind(probs, yp)
    stats = CalibrationStats(
        bins, np.zeros((2, bins.n_bins), np.int64), np.zeros(bins.n_bins), np.zeros(bins.n_bins),
        kind=kind,
    )
    bar = _Progress(progress, total, Path(source).name)
    seen = 0
    try:
        for start, cols in iter_chunks(path, batch_size=batch_size, **columns):
            y_true, y_prob, y_pred = _arrays(cols, yt, probs, yp)
            try:
                if start == 0:  # text classes fixed by the first chunk
                    inputs = replace(inputs, labels=fixed_labels(y_true, y_prob, y_pred, given))
                part = CalibrationStats._computed(*_fused.binned_sums(
                    y_true, y_prob, y_pred, None, bins, inputs, engine=engine), kind=kind)
            except ValueError as exc:
                raise located(exc, source, start) from None
            stats = stats + part
            seen += y_true.shape[0]
            bar.update(y_true.shape[0])
    finally:
        bar.close()
    if seen == 0:
        raise ValueError(f"{source}: no predictions (0 rows)")
    return FileStatistics(stats, kind, source, len(probs) if len(probs) > 1 else None,
                          inputs.labels if len(probs) > 1 else None)


def iter_outcomes(
    path: str | Path, *, batch_size: int = DEFAULT_BATCH_SIZE, inputs: Inputs = DEFAULT_INPUTS,
    y_true_col: str = "y_true", y_prob_col: str | None = None, prob_prefix: str = "p_",
    y_pred_col: str | None = None,
) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """Yield ``(first_row, z, p)``: the (outcome, confidence) pairs
    (:func:`bece._stats.inputs.as_outcomes`) of consecutive chunks of a CSV or
    Parquet file, read with ``inputs`` as :func:`file_statistics` reads it
    (text classes fixed by the first chunk; errors name the row)."""
    path, source = Path(path), str(path)
    columns: dict[str, Any] = dict(y_true_col=y_true_col, y_prob_col=y_prob_col,
                                   prob_prefix=prob_prefix, y_pred_col=y_pred_col)
    try:
        names, _ = _open_batches(path, _format(path), 1, columns)
    except Exception as exc:
        raise _reading_error(exc, source) from None
    yt, probs, yp = select_columns(names, source, **columns)
    for start, cols in iter_chunks(path, batch_size=batch_size, **columns):
        y_true, y_prob, y_pred = _arrays(cols, yt, probs, yp)
        try:
            if start == 0:
                inputs = replace(inputs, labels=fixed_labels(y_true, y_prob, y_pred, inputs.labels))
            z, p = as_outcomes(y_true, y_prob, y_pred, inputs)
        except ValueError as exc:
            raise located(exc, source, start) from None
        yield start, np.asarray(z, dtype=np.float64), np.asarray(p, dtype=np.float64)


def _quantile_binning(
    path: Path,
    n_bins: int | None,
    batch_size: int,
    chosen: tuple[str, list[str], str | None],
    total: int | None,
    progress: bool,
    columns: dict[str, Any],
    inputs: Inputs,
) -> Binning:
    """First pass for quantile bins: all confidences, then make_binning's edges."""
    from .._stats.binning import check_n_bins
    from .._stats.inputs import as_outcomes

    yt, probs, yp = chosen

    source = str(path)
    m = 15 if n_bins is None else check_n_bins(n_bins)
    parts: list[np.ndarray] = []
    conf = np.empty(total, dtype=np.float64) if total is not None else None
    seen = 0
    bar = _Progress(progress, total, f"{path.name} (quantiles)")
    try:
        for start, cols in iter_chunks(path, batch_size=batch_size, **columns):
            y_true, y_prob, y_pred = _arrays(cols, yt, probs, yp)
            try:
                if start == 0:
                    inputs = replace(inputs, labels=fixed_labels(y_true, y_prob, y_pred, inputs.labels))
                _, c = as_outcomes(y_true, y_prob, y_pred, inputs)
            except ValueError as exc:
                raise located(exc, source, start) from None
            if conf is not None:
                conf[start:start + c.size] = c
            else:
                parts.append(c)
            seen += c.size
            bar.update(c.size)
    finally:
        bar.close()
    if seen == 0:
        raise ValueError(f"{source}: no predictions (0 rows)")
    if conf is None:
        conf = np.concatenate(parts)
        del parts
    # the same quantiles as make_binning(conf, m, "quantile"), partitioned in place
    inner = np.quantile(conf, np.arange(1, m) / m, overwrite_input=True) if m > 1 else np.empty(0)
    return Binning(np.concatenate([[0.0], inner, [1.0]]), "edges")
