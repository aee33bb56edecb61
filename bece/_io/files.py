"""Reading predictions from CSV, Parquet and NPZ files.

Column conventions (DESIGN.md §4): ``y_true`` (labels) and either
``y_prob`` (binary, :math:`P(y=1)`) or ``p_0 ... p_{K-1}`` (class
probabilities, K >= 2, numbered from 0 without gaps), optionally ``y_pred``
(predicted labels: triples (y_pred, y_true, confidence)); each name is an
option (``y_true_col``, ``y_prob_col``, ``prob_prefix``, ``y_pred_col``;
:mod:`bece._stats.columns`). Other columns are ignored; a column
that bece uses must appear once (two ``y_true`` columns are an error, not a
choice). Values are passed on unchanged; :mod:`bece._stats.inputs` checks
them. Each array of an NPZ file is one column, shape ``(n,)``, or, of shape
``(n, K)``, the K columns ``NAME_0 ... NAME_{K-1}`` (so an array ``p`` of
class probabilities reads as ``p_0 ... p_{K-1}``, and ``logits`` as
``logits_0 ...``: ``--prob-prefix logits_ --logits``); all of the same
length. A directory is read as a Parquet dataset (Spark or Dask output;
:func:`bece._io.stream.parquet_parts`).

:func:`read_predictions` loads a whole file; :func:`read_statistics` reduces
it to :class:`~bece._stats.CalibrationStats`, reading CSV and Parquet in
chunks (:mod:`bece._io.stream`) so that memory does not grow with the file.

Regression forecasts (a target ``y`` with ``mean``/``std``, quantile
columns ``q_<level>`` or sample columns ``s_0 ... s_{S-1}``;
:mod:`bece._io.forecast_columns`) are read whole by :func:`read_forecasts`,
which checks their values and names the column of a bad one;
:func:`column_names` gives a file's columns without reading its rows, so a
caller can tell the two kinds apart
(:func:`~bece._io.forecast_columns.detect_kind`) before reading.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from .._base.typing import BinningSpec
from .._stats.binning import Binning
from .._stats.columns import check_column_options, select_columns
from .._stats.inputs import describe_bad, located
from .forecast_columns import ForecastColumns, select_forecast_columns
from .stream import FileStatistics

__all__ = [
    "column_names",
    "example_path",
    "Forecasts",
    "Predictions",
    "read_forecasts",
    "read_predictions",
    "read_statistics",
]


@dataclass(frozen=True)
class Predictions:
    """Arrays read from a file, ready for :func:`bece.bayesian_ece`.

    Examples
    --------
    >>> from bece.io import example_path, read_predictions
    >>> pred = read_predictions(example_path())
    >>> type(pred).__name__, pred.kind, pred.y_prob.shape, pred.n_classes
    ('Predictions', 'top-label', (899, 10), 10)
    """

    y_true: np.ndarray
    y_prob: np.ndarray
    y_pred: np.ndarray | None
    source: str
    by: np.ndarray | None = None
    """Each row's group (``by_col``), or None."""

    @property
    def kind(self) -> str:
        """``"binary"``, ``"top-label"`` or ``"triples"`` (with y_pred)."""
        if self.y_pred is not None:
            return "triples"
        return "binary" if self.y_prob.ndim == 1 else "top-label"

    @property
    def n_classes(self) -> int | None:
        """K, the number of probability columns; None for one column."""
        return int(self.y_prob.shape[1]) if self.y_prob.ndim == 2 else None


#: What the example is, in the words of the command's header.
EXAMPLE_WORDS = ("example shipped with bece: a logistic regression's class probabilities on "
                 "the 899 held-out images of scikit-learn's digits, 10 classes")


def example_path() -> Path:
    """Path of the example shipped with bece (digits, logistic regression).

    Examples
    --------
    >>> from bece.io import example_path
    >>> path = example_path()
    >>> path.name, path.exists()
    ('example.csv', True)
    >>> path.read_text().splitlines()[0]             # y_true, then one column per class
    'y_true,p_0,p_1,p_2,p_3,p_4,p_5,p_6,p_7,p_8,p_9'
    """
    return Path(str(resources.files("bece") / "data" / "example.csv"))


def _assemble(get: Callable[[str], np.ndarray], names: list[str], source: str,
              columns: dict[str, Any]) -> Predictions:
    yt, probs, yp = select_columns(names, source, **columns)
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


def _columns(shape: tuple[int, ...]) -> bool:
    """Whether an NPZ array of this shape is K >= 2 columns (an (n, 1) array
    is refused as a column of the wrong shape, not read as NAME_0)."""
    return len(shape) == 2 and shape[1] >= 2


def _npz_names(arrays: dict[str, Any]) -> list[str]:
    """The columns of an NPZ file's arrays (or their shapes): a 1-D array is
    one column of its name, a 2-D array ``A`` (n, K), K >= 2, the columns
    ``A_0 ... A_{K-1}``; another keeps its name (and is refused when used)."""
    names = []
    for name, arr in arrays.items():
        shape = getattr(arr, "shape", arr)
        names += [f"{name}_{k}" for k in range(shape[1])] if _columns(shape) else [name]
    return names


def _npz_column(arrays: dict[str, np.ndarray], source: str) -> Callable[[str], np.ndarray]:
    """Arrays of an NPZ file as columns (:func:`_npz_names`), all of one length."""
    lengths: dict[str, int] = {}
    split = {f"{name}_{k}": (name, k) for name, arr in arrays.items() if _columns(arr.shape)
             for k in range(arr.shape[1])}

    def get(name: str) -> np.ndarray:
        if name in split:
            whole, k = split[name]
            arr = arrays[whole][:, k]
        else:
            arr = arrays[name]
        if arr.ndim != 1:
            raise ValueError(
                f"{source}: array '{name}' has shape {arr.shape}; an array of an NPZ file "
                "is one column, of shape (n,), or K columns NAME_0 ... NAME_(K-1), of shape (n, K)"
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


def _classifier_columns(columns: dict[str, Any],
                        by_col: str | None = None) -> Callable[[list[str], str], list[str]]:
    def choose(names: list[str], source: str) -> list[str]:
        yt, probs, yp = select_columns(names, source, **columns)
        if by_col is not None:
            _check_by(names, source, by_col)
        return [yt, *probs] + ([yp] if yp else []) + ([by_col] if by_col is not None else [])

    return choose


def _check_by(names: list[str], source: str, by_col: str) -> None:
    if by_col not in names:
        shown = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
        raise ValueError(f"{source}: no column '{by_col}' to group by; its columns are {shown}")


def _read_dataset(path: Path, choose: Callable[[list[str], str], list[str]]) -> Any:
    """The columns ``choose(names, source)`` of a directory of Parquet files, one table."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .stream import open_part, parquet_parts

    parts = parquet_parts(path)
    cols = choose(list(pq.ParquetFile(parts[0]).schema_arrow.names), str(path))
    tables = [open_part(path, f, cols).read(columns=cols) for f in parts]
    return pa.concat_tables(tables, promote_options="permissive")


def _open_table(
    path: Path, choose: Callable[[list[str], str], list[str]]
) -> tuple[list[str], Callable[[str], np.ndarray]]:
    """Column names of a file and a function reading one column as an array.

    ``choose(names, source)`` picks the columns a directory (Parquet
    dataset) is read for; files are read whole.
    """
    from .stream import glob_parts, pattern_format

    source = str(path)
    parts = glob_parts(path)
    if parts is None and not path.exists():
        raise FileNotFoundError(f"{source}: no such file")
    suffix = path.suffix.lower()
    try:
        if parts is not None and pattern_format(parts, source) == "csvs":
            import pyarrow as pa

            table = pa.concat_tables([_read_csv(f) for f in parts], promote_options="permissive")
        elif path.is_dir() or parts is not None:
            table = _read_dataset(path, choose)
        elif suffix == ".npz":
            with np.load(path, allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
            return _npz_names(arrays), _npz_column(arrays, source)
        elif suffix in (".parquet", ".pq"):
            import pyarrow.parquet as pq

            # not pq.read_table: its dataset reader refuses duplicated column
            # names before select_columns can name the one that matters
            table = pq.ParquetFile(path).read()
        elif suffix == ".csv":
            table = _read_csv(path)
        elif suffix == ".jsonl":
            from .jsonl import jsonl_table

            return jsonl_table(path)
        else:
            raise ValueError(
                f"{source}: unknown file type '{suffix}'; use .csv, .parquet (.pq), .npz or .jsonl"
            )
    except ValueError as exc:
        if str(exc).startswith(source):
            raise
        raise ValueError(f"{source}: cannot read: {exc}".splitlines()[0]) from None
    except Exception as exc:  # pyarrow's ArrowInvalid and friends, zip errors
        raise ValueError(f"{source}: cannot read: {exc}".splitlines()[0]) from None

    def get(name: str) -> np.ndarray:
        try:
            return _arrow_column(table, name)
        except ValueError as exc:
            raise ValueError(f"{source}: {exc}") from None

    return list(table.column_names), get


def read_predictions(
    path: str | Path,
    *,
    y_true_col: str = "y_true",
    y_prob_col: str | None = None,
    prob_prefix: str = "p_",
    y_pred_col: str | None = None,
    by_col: str | None = None,
) -> Predictions:
    """Read predictions from a ``.csv``, ``.parquet``/``.pq``, ``.npz`` or ``.jsonl``
    file, or from a directory of Parquet files (a dataset written by Spark or Dask).
    A ``.jsonl`` file is a table of flat records or lm-evaluation-harness's
    logged samples (:mod:`bece._io.jsonl`).

    The column options name the columns (:mod:`bece._stats.columns`; e.g.
    ``y_prob_col="p_1"`` reads a binary classifier's ``p_0, p_1`` file as
    :math:`P(y = 1)`). ``by_col`` also reads a column of groups (model
    version, region, ...) into :attr:`Predictions.by`, for
    ``bece.bayesian_ece(..., by=pred.by)``.

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        For an unknown extension, a directory without Parquet files, an
        unreadable file, missing or duplicated columns, NPZ arrays that are
        not columns of one length, or missing values.

    Examples
    --------
    >>> from bece import bayesian_ece
    >>> from bece.io import example_path, read_predictions
    >>> data = read_predictions(example_path())
    >>> data.kind, data.n_classes, data.y_true.shape, data.y_prob.shape
    ('top-label', 10, (899,), (899, 10))
    >>> r = bayesian_ece(data.y_true, data.y_prob, num_samples=1000)
    >>> r.stats.n, r.kind
    (899, 'top-label')
    """
    path = Path(path)
    columns: dict[str, Any] = {"y_true_col": y_true_col, "y_prob_col": y_prob_col, "prob_prefix": prob_prefix,
               "y_pred_col": y_pred_col}
    check_column_options(**columns)
    names, get = _open_table(path, _classifier_columns(columns, by_col))
    pred = _assemble(get, names, str(path), columns)
    if by_col is None:
        return pred
    _check_by(names, str(path), by_col)
    return replace(pred, by=get(by_col))


def column_names(path: str | Path) -> list[str]:
    """The column names of a file, without reading its rows.

    The CSV header, the Parquet schema (of the first file of a directory),
    the array names of an NPZ file, the columns of a JSON Lines file (read
    whole: :mod:`bece._io.jsonl`). Errors as :func:`read_predictions`.
    """
    from .stream import glob_parts, pattern_format

    path = Path(path)
    source = str(path)
    parts = glob_parts(path)
    if parts is not None:
        pattern_format(parts, source)  # one type of file
        return column_names(parts[0])
    if not path.exists():
        raise FileNotFoundError(f"{source}: no such file")
    suffix = path.suffix.lower()
    try:
        if path.is_dir() or suffix in (".parquet", ".pq"):
            import pyarrow.parquet as pq

            from .stream import parquet_parts

            first = parquet_parts(path)[0] if path.is_dir() else path
            return list(pq.ParquetFile(first).schema_arrow.names)
        if suffix == ".npz":
            with np.load(path, allow_pickle=False) as data:
                return _npz_names({k: data[k].shape for k in data.files})
        if suffix == ".csv":
            import pyarrow.csv as pcsv

            from .stream import larger_block

            size, block = path.stat().st_size, 1 << 16
            while True:  # the block grows to hold a header line longer than it
                try:
                    opts = pcsv.ReadOptions(block_size=block)
                    with pcsv.open_csv(path, read_options=opts) as head:
                        return list(head.schema.names)
                except Exception as exc:
                    larger = larger_block(exc, block, size)
                    if larger is None:
                        raise
                    block = larger
        if suffix == ".jsonl":
            from .jsonl import jsonl_table

            return jsonl_table(path)[0]
        raise ValueError(f"{source}: unknown file type '{suffix}'; use .csv, .parquet (.pq), .npz "
                         "or .jsonl")
    except ValueError as exc:
        if str(exc).startswith(source):
            raise
        raise ValueError(f"{source}: cannot read: {exc}".splitlines()[0]) from None
    except Exception as exc:  # pyarrow's ArrowInvalid and friends, zip errors
        raise ValueError(f"{source}: cannot read: {exc}".splitlines()[0]) from None


@dataclass(frozen=True)
class Forecasts:
    """Regression forecasts read from a file (:func:`read_forecasts`).

    Attributes
    ----------
    y : ndarray of shape (n,), float64
        Targets.
    columns : bece._io.forecast_columns.ForecastColumns
        The columns used and the form: ``columns.form`` is ``"gaussian"``,
        ``"quantiles"`` or ``"samples"``.
    mean, std : ndarray of shape (n,) or None
        The Gaussian forecast.
    quantiles : ndarray of shape (n, K) or None
        Quantile forecast, columns in order of ``columns.levels``.
    samples : ndarray of shape (n, S) or None
        Predictive draws.
    source : str
    """

    y: np.ndarray
    columns: ForecastColumns
    mean: np.ndarray | None
    std: np.ndarray | None
    quantiles: np.ndarray | None
    samples: np.ndarray | None
    source: str

    @property
    def form(self) -> str:
        """``"gaussian"``, ``"quantiles"`` or ``"samples"``."""
        return self.columns.form


def _finite_column(arr: np.ndarray, name: str, source: str) -> np.ndarray:
    """A column as finite float64; ValueError naming the file, column and rows."""
    if arr.dtype.kind not in "iuf":
        got = "text" if arr.dtype.kind in "OSU" else f"dtype {arr.dtype}"
        raise ValueError(f"{source}: column '{name}' must hold numbers, got {got}")
    x = arr.astype(np.float64)
    bad = ~np.isfinite(x)
    if bad.any():
        kind = "NaN" if np.isnan(x).any() else "infinity"
        raise located(ValueError(f"column '{name}' contains {kind}: {describe_bad(x, bad)}"), source, 0)
    return x


def read_forecasts(
    path: str | Path,
    *,
    y_col: str = "y",
    mean_col: str = "mean",
    std_col: str = "std",
    quantile_prefix: str = "q_",
    sample_prefix: str = "s_",
) -> Forecasts:
    """Read regression forecasts from a ``.csv``, ``.parquet``/``.pq`` or
    ``.npz`` file, or a directory of Parquet files.

    Columns (:mod:`bece._io.forecast_columns`): the target ``y_col`` and one
    forecast form: ``mean_col`` and ``std_col`` (Gaussian), quantile columns
    ``<quantile_prefix><level>`` (e.g. ``q_0.05``) or sample columns
    ``<sample_prefix>0 ... <sample_prefix>{S-1}``. The whole file is read.

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        Naming the file and the column: the errors of
        :func:`read_predictions` and
        :func:`~bece._io.forecast_columns.select_forecast_columns`; a column
        that does not hold numbers, or holds NaN or infinity; a std <= 0;
        quantiles that decrease along a row.
    """
    path = Path(path)
    source = str(path)
    conventions = {"y_col": y_col, "mean_col": mean_col, "std_col": std_col,
                   "quantile_prefix": quantile_prefix, "sample_prefix": sample_prefix}

    def choose(names: list[str], where: str) -> list[str]:
        cols = select_forecast_columns(names, where, **conventions)
        return [cols.y, *cols.forecast]

    names, get = _open_table(path, choose)
    cols = select_forecast_columns(names, source, **conventions)
    y = _finite_column(get(cols.y), cols.y, source)
    values = [_finite_column(get(c), c, source) for c in cols.forecast]
    mean = std = quantiles = samples = None
    if cols.form == "gaussian":
        mean, std = values
        bad = std <= 0
        if bad.any():
            raise located(ValueError(f"column '{cols.std}' must be > 0; {describe_bad(std, bad)} "
                                     "are not"), source, 0)
    elif cols.form == "quantiles":
        quantiles = np.column_stack(values)
        dec = np.diff(quantiles, axis=1) < 0
        if dec.any():
            t, k = np.argwhere(dec)[0]
            a, b = cols.quantiles[k], cols.quantiles[k + 1]
            raise ValueError(
                f"{source}: quantiles must not decrease with the level; row {t} has "
                f"{a} = {float(quantiles[t, k])!r} above {b} = {float(quantiles[t, k + 1])!r} "
                f"({int(dec.any(axis=1).sum())} row(s) with crossing quantiles)"
            )
    else:
        samples = np.column_stack(values)
    return Forecasts(y, cols, mean, std, quantiles, samples, source)


def read_statistics(
    path: str | Path,
    *,
    n_bins: int | None = None,
    binning: BinningSpec | Binning = "uniform",
    batch_size: int | None = None,
    progress: bool = False,
    labels: Any = None,
    pos_label: Any = None,
    from_logits: bool = False,
    row_sum_tol: float | None = None,
    y_true_col: str = "y_true",
    y_prob_col: str | None = None,
    prob_prefix: str = "p_",
    y_pred_col: str | None = None,
) -> FileStatistics:
    """Statistics of the predictions in a file, without loading it whole.

    CSV, Parquet and Parquet datasets (directories) are read in batches by
    :func:`bece._io.stream.file_statistics`; NPZ and JSON Lines are read whole
    (:func:`read_predictions`; ``np.load`` has no chunked reader). The
    result is the same as :meth:`~bece.CalibrationStats.from_arrays` on the
    whole file, to the last bit: counts and sums are exact
    (:mod:`bece._stats.exact`), so chunks, CSV and Parquet give the same bits.

    Parameters
    ----------
    path : str or Path
    n_bins : int, default 15
    binning : {"uniform", "quantile"} or array_like of edges, default "uniform"
    batch_size : int, optional
        Rows per batch (default :data:`bece._io.stream.DEFAULT_BATCH_SIZE`).
    progress : bool, default False
        A progress bar on stderr while reading CSV or Parquet.
    labels, pos_label, from_logits, row_sum_tol
        How the labels and probabilities are read, as in
        :meth:`bece.CalibrationStats.from_arrays` (text labels without
        ``labels``: the classes of the first chunk, which every later chunk
        must use).
    y_true_col, y_prob_col, prob_prefix, y_pred_col
        The column names (:func:`read_predictions`).

    Returns
    -------
    bece._io.stream.FileStatistics
        ``.stats``, ``.kind`` (``"binary"``, ``"top-label"`` or
        ``"triples"``), ``.source`` and ``.n_classes``.

    Examples
    --------
    >>> from bece import posterior_ece
    >>> from bece.io import example_path, read_statistics
    >>> fs = read_statistics(example_path(), n_bins=10, batch_size=300)   # three batches
    >>> fs.stats, fs.kind, fs.n_classes
    (CalibrationStats(n=899, n_bins=10, rule='uniform', empty_bins=3, kind='top-label'), 'top-label', 10)
    >>> posterior_ece(fs.stats, num_samples=1000).num_samples
    1000
    """
    from .._stats.calibration_stats import statistics_of
    from .._stats.inputs import Inputs, as_outcomes, located
    from .._stats.labels import fixed_labels
    from . import stream

    path = Path(path)
    columns: dict[str, Any] = {"y_true_col": y_true_col, "y_prob_col": y_prob_col, "prob_prefix": prob_prefix,
               "y_pred_col": y_pred_col}
    inputs = Inputs(labels, pos_label, from_logits, row_sum_tol)
    pattern = stream.glob_parts(path) is not None
    if path.suffix.lower() in (".npz", ".jsonl") or not (path.exists() or pattern):
        pred = read_predictions(path, **columns)
        try:  # the file's own errors, named as in the chunked reader
            as_outcomes(pred.y_true, pred.y_prob, pred.y_pred, inputs)
        except ValueError as exc:
            raise located(exc, pred.source, 0) from None
        stats = statistics_of(pred.y_true, pred.y_prob, pred.y_pred, n_bins, binning, inputs)
        classes = fixed_labels(pred.y_true, pred.y_prob, pred.y_pred, labels)
        return FileStatistics(stats, pred.kind, pred.source, pred.n_classes, classes)
    if not (path.is_dir() or pattern) and path.suffix.lower() not in (".csv", ".parquet", ".pq"):
        read_predictions(path)  # raises the unknown-type message
    size = stream.DEFAULT_BATCH_SIZE if batch_size is None else batch_size
    return stream.file_statistics(
        path, n_bins=n_bins, binning=binning, batch_size=size, progress=progress, inputs=inputs,
        **columns,
    )
