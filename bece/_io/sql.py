"""Statistics where the data are: one SQL aggregation per table.

Predictions logged in a database or a Spark table need not leave it: the
statistics every model reads are per-bin counts and sums, so one ``GROUP BY``
query computes them where the rows live and only a few rows per bin come
back. :func:`statistics_query` writes that query for a table and its columns
in one of three dialects (``"ansi"``: standard SQL, run on Python's
``sqlite3`` in the tests; ``"duckdb"``; ``"spark"``: Spark SQL), and
:meth:`StatisticsQuery.read` turns its result rows into
:class:`~bece.CalibrationStats` (one per class for the classwise form).

The sums are exact in every engine. The query splits each confidence
:math:`p` and its square into the same three 26-bit fractional limbs as
:mod:`bece._stats.exact` (``FLOOR`` of products by :math:`2^{26}`, exact in
IEEE double arithmetic, which these engines use) and sums them as 64-bit
integers, so the statistics equal those of
:meth:`~bece.CalibrationStats.from_arrays` on the same rows to the last bit,
whatever the engine's order of aggregation, partitioning or parallelism.

Each row is also checked, in the same pass: a confidence that is NULL, NaN or
outside [0, 1] (or outside explicit bin edges), a label that is NULL or (for
binary input) not 0 or 1, a probability row whose sum is more than the
float64 tolerance of :func:`bece._stats.inputs.row_sum_tolerance` from 1, or
a class label outside ``0 .. K-1``. Such rows are counted, not summed, and
:meth:`~StatisticsQuery.read` raises a ``ValueError`` naming the column and
the number of rows, as the array path does.

Forms (as :meth:`bece.CalibrationStats.from_dataframe` reads columns):

* ``y_prob`` one column, no ``y_pred``: binary, :math:`P(y = 1)` against
  ``y_true`` in {0, 1};
* ``y_prob`` one column and ``y_pred``: triples, the confidence of
  ``y_pred`` against ``y_pred = y_true`` (labels of any type the engine
  compares);
* ``y_prob`` a list of K columns: top-label, the largest probability (the
  first column among ties, as ``numpy.argmax``) against ``argmax = y_true``
  with ``y_true`` the class index ``0 .. K-1``;
* the same with ``classwise=True``: per class k, :math:`p_k` against
  :math:`[y = k]` (:func:`bece.classwise_ece`'s statistics).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .._base.typing import BinningSpec
from .._stats import exact
from .._stats.binning import Binning, make_binning
from .._stats.calibration_stats import CalibrationStats
from .._stats.groups import GroupStats, group_index
from .._stats.inputs import row_sum_tolerance

__all__ = [
    "DIALECTS",
    "StatisticsQuery",
    "spark_statistics",
    "sql_statistics",
    "statistics_query",
]

DIALECTS = ("ansi", "duckdb", "spark")

#: Row codes of the query: summed, or why a row was refused.
_OK, _BAD_PROB, _BAD_LABEL, _BAD_ROW, _BAD_GROUP = 0, 1, 2, 3, 4

#: Columns of each result row after the class (classwise only).
_FIELDS = ("code", "bin", "z", "n", "p1", "p2", "p3", "q1", "q2", "q3")


def _quote(name: str, dialect: str) -> str:
    if not isinstance(name, str) or not name:
        raise ValueError(f"column names must be non-empty strings, got {name!r}")
    if dialect == "spark":
        return "`" + name.replace("`", "``") + "`"
    return '"' + name.replace('"', '""') + '"'


def _num(x: float) -> str:
    """A float64 as a SQL literal that every dialect reads as that double
    (17 significant digits, exponent form: a DOUBLE, not a DECIMAL)."""
    return f"{float(x):.17e}"


@dataclass(frozen=True)
class StatisticsQuery:
    """An aggregation query and how to read its rows.

    Attributes
    ----------
    sql : str
        The query: run it on the engine (``connection.execute(sql)``,
        ``spark.sql(sql)``) and pass the rows to :meth:`read`.
    dialect : {"ansi", "duckdb", "spark"}
    binning : Binning
        The bins of the statistics.
    form : {"binary", "triples", "top-label", "classwise"}
    classes : int or None
        K, for probability columns.
    columns : dict
        The column names used (for messages).
    source : str
        How messages name the data (``"table logs"``).
    by : str or None
        The column of groups: :meth:`read` gives a :class:`~bece.GroupStats`.

    Examples
    --------
    >>> import sqlite3
    >>> from bece.io import statistics_query
    >>> db = sqlite3.connect(":memory:")
    >>> _ = db.execute("CREATE TABLE logs (label INTEGER, score REAL)")
    >>> _ = db.executemany("INSERT INTO logs VALUES (?, ?)", [(0, 0.2), (1, 0.62), (1, 0.67)])
    >>> query = statistics_query("logs", y_true="label", y_prob="score", n_bins=10)
    >>> query.form, query.binning.n_bins
    ('binary', 10)
    >>> rows = db.execute(query.sql).fetchall()   # per (check, bin, outcome): count, limb sums
    >>> sorted(r[:4] for r in rows)
    [(0, 2, 0, 1), (0, 6, 1, 2)]
    >>> round(float(query.read(rows).sum_p[6]), 12)
    1.29
    """

    sql: str
    dialect: str
    binning: Binning
    form: str
    classes: int | None
    columns: dict[str, Any]
    source: str
    by: str | None = None

    def read(self, rows: Any) -> CalibrationStats | tuple[CalibrationStats, ...] | GroupStats:
        """The statistics from the query's result rows (tuples or Spark
        ``Row`` objects, in any order): a :class:`~bece.CalibrationStats`,
        one per class for the classwise form, or a :class:`~bece.GroupStats`
        with ``by``.

        Raises ``ValueError`` naming the column and the number of rows when
        the query counted bad rows, and when there are no rows at all.
        """
        table = np.array([tuple(r) for r in rows], dtype=object)
        classwise = self.form == "classwise"
        lead = int(classwise or self.by is not None)  # the class or the group comes first
        width = len(_FIELDS) + lead
        if table.size == 0:
            raise ValueError(f"{self.source}: no predictions (0 rows)")
        if table.ndim != 2 or table.shape[1] != width:
            raise ValueError(f"the rows must have {width} fields, as the query returns them; got "
                             f"shape {table.shape}")
        values = table[:, lead:].astype(np.int64)
        code, b, z, n = (values[:, j] for j in range(4))
        self._check(code, n)
        ok = code == _OK
        names = None
        if classwise:
            key, k = table[ok, 0].astype(np.int64), self.classes
        elif self.by is not None:
            names, key = group_index(table[ok, 0], int(ok.sum()), f"column {self.by}")
            k = names.size
        else:
            key, k = np.zeros(int(ok.sum()), dtype=np.int64), 1
        assert k is not None
        m = self.binning.n_bins
        counts = np.zeros((k, 2, m), dtype=np.int64)
        np.add.at(counts, (key, z[ok], b[ok]), n[ok])
        # each row's fractional limbs of p and p**2, as (2, 4, rows) with no integer part
        limbs = values[ok, 4:].reshape(-1, 2, 3).transpose(1, 2, 0)
        limbs = np.concatenate([np.zeros((2, 1, limbs.shape[2]), dtype=np.int64), limbs], axis=1)
        sums = exact.regroup(limbs, key * m + b[ok], k * m).reshape(2, exact.N_LIMBS, k, m)
        kind = "binary" if classwise else self.form  # each class one-vs-rest
        stats = tuple(CalibrationStats._computed(self.binning, counts[c], sums[:, :, c], kind)
                      for c in range(k))
        if names is not None:
            return GroupStats(names, stats)
        return stats if classwise else stats[0]

    def _check(self, code: np.ndarray, n: np.ndarray) -> None:
        cols = self.columns
        bad = {c: int(n[code == c].sum()) for c in (_BAD_PROB, _BAD_LABEL, _BAD_ROW, _BAD_GROUP)}
        if bad[_BAD_GROUP]:
            raise ValueError(f"{self.source}: {bad[_BAD_GROUP]} row(s) have no group (column "
                             f"{self.by} is NULL); give every prediction a group")
        prob = cols["y_prob"] if isinstance(cols["y_prob"], str) else ", ".join(cols["y_prob"])
        lo, hi = self.binning.edges[0], self.binning.edges[-1]
        where = "[0, 1]" if (lo, hi) == (0.0, 1.0) else f"the bin edges [{lo:g}, {hi:g}]"
        if bad[_BAD_PROB]:
            raise ValueError(f"{self.source}: {bad[_BAD_PROB]} row(s) have a probability that "
                             f"is NULL, NaN or outside {where} (column(s) {prob})")
        if bad[_BAD_LABEL]:
            rule = {"binary": "is not 0 or 1", "triples": "is NULL"}.get(
                self.form, f"is not a class index in 0..{(self.classes or 0) - 1}")
            names = cols["y_true"] + (f" or {cols['y_pred']}" if cols.get("y_pred") else "")
            raise ValueError(f"{self.source}: {bad[_BAD_LABEL]} row(s) have a label that {rule} "
                             f"(column {names})")
        if bad[_BAD_ROW]:
            raise ValueError(f"{self.source}: {bad[_BAD_ROW]} row(s) of probabilities do not sum "
                             f"to 1 within {row_sum_tolerance(np.float64, self.classes or 2):g} "
                             f"(columns {prob})")
        if not n[code == _OK].sum():
            raise ValueError(f"{self.source}: no predictions (0 rows)")


def statistics_query(
    table: str,
    *,
    y_true: str = "y_true",
    y_prob: str | Sequence[str] = "y_prob",
    y_pred: str | None = None,
    classwise: bool = False,
    n_bins: int | None = None,
    binning: BinningSpec | Binning = "uniform",
    dialect: str = "ansi",
    by: str | None = None,
) -> StatisticsQuery:
    """The aggregation query of a table's predictions, and how to read it.

    Parameters
    ----------
    table : str
        A table name (``"logs"``, ``"db.schema.logs"``) or a parenthesised
        query with an alias (``"(SELECT ... ) AS t"``), inserted as given.
    y_true, y_prob, y_pred : str, list of str
        Column names (forms: module docstring).
    classwise : bool, default False
        With K probability columns: one statistics per class.
    n_bins : int, default 15
    binning : "uniform", array_like of edges, or Binning
        Fixed bins (quantile bins need the data first: compute edges and
        pass them).
    dialect : {"ansi", "duckdb", "spark"}, default "ansi"
    by : str, optional
        A column of groups (model version, region, day): the statistics of
        each group (a :class:`~bece.GroupStats`, for
        ``bece.posterior_ece(stats)``; collect them in
        ``bece.SmoothGroupModel().fine_binning()``). A NULL group is refused.

    Returns
    -------
    StatisticsQuery

    Examples
    --------
    >>> import sqlite3
    >>> from bece import CalibrationStats
    >>> from bece.io import statistics_query
    >>> db = sqlite3.connect(":memory:")
    >>> _ = db.execute("CREATE TABLE logs (y_true INTEGER, y_prob REAL)")
    >>> _ = db.executemany("INSERT INTO logs VALUES (?, ?)", [(0, 0.1), (1, 0.8), (1, 0.9)])
    >>> query = statistics_query("logs", n_bins=2)
    >>> stats = query.read(db.execute(query.sql).fetchall())
    >>> stats == CalibrationStats.from_arrays([0, 1, 1], [0.1, 0.8, 0.9], n_bins=2)
    True
    """
    if dialect not in DIALECTS:
        raise ValueError(f"dialect must be one of {DIALECTS}, got {dialect!r}")
    if not isinstance(table, str) or not table.strip():
        raise ValueError(f"table must be a table name or a parenthesised query, got {table!r}")
    if isinstance(binning, str) and binning in ("quantile", "equal-mass"):
        raise ValueError("binning='quantile' needs the confidences first: compute edges (e.g. "
                         "with a quantile query) and pass them as binning=edges")
    bins = make_binning(None, n_bins, binning)
    q = lambda name: _quote(name, dialect)  # noqa: E731
    probs = [y_prob] if isinstance(y_prob, str) else list(y_prob)
    if not probs:
        raise ValueError("y_prob must name at least one column")
    many = not isinstance(y_prob, str)
    if by is not None and classwise:
        raise ValueError("by= goes with one statistics per group: not with classwise=True")
    if classwise and not many:
        raise ValueError("classwise=True needs the K probability columns as a list in y_prob")
    if many and y_pred is not None:
        raise ValueError("y_pred goes with one y_prob column (the confidence of y_pred), not "
                         "with K probability columns")
    if many and len(probs) < 2:
        raise ValueError(f"y_prob lists {len(probs)} column; K probability columns need K >= 2")
    k = len(probs) if many else None
    form = "classwise" if classwise else ("top-label" if many else
                                          ("triples" if y_pred is not None else "binary"))
    yt = q(y_true)
    ps = [q(c) for c in probs]
    source, group = table, ""
    # per row: the confidence x, the outcome z and the row's validity code
    if form == "binary":
        conf, z = ps[0], f"CASE WHEN {yt} = 1 THEN 1 ELSE 0 END"
        checks = [(_BAD_PROB, _prob_bad(ps[0], bins)),
                  (_BAD_LABEL, f"{yt} IS NULL OR {yt} NOT IN (0, 1)")]
    elif form == "triples":
        assert y_pred is not None
        yp = q(y_pred)
        conf, z = ps[0], f"CASE WHEN {yt} = {yp} THEN 1 ELSE 0 END"
        checks = [(_BAD_PROB, _prob_bad(ps[0], bins)),
                  (_BAD_LABEL, f"{yt} IS NULL OR {yp} IS NULL")]
    else:
        assert k is not None
        unit = make_binning(None, 1)
        checks = [
            (_BAD_PROB, " OR ".join(f"({_prob_bad(p, unit)})" for p in ps)),
            (_BAD_LABEL, f"{yt} IS NULL OR {yt} < 0 OR {yt} > {k - 1} OR {yt} <> FLOOR({yt})"),
            (_BAD_ROW, f"ABS(({' + '.join(ps)}) - 1) > {_num(row_sum_tolerance(np.float64, k))}"),
        ]
        if classwise:
            which = "bece_class"
            classes = " UNION ALL ".join(f"SELECT {c} AS bece_class" for c in range(k))
            source = f"{table} CROSS JOIN ({classes}) AS bece_c"
            z = f"CASE WHEN {yt} = bece_class THEN 1 ELSE 0 END"
            group = "bece_class, "
        else:
            which = "bece_arg"
            source = f"(SELECT *, {_argmax(ps, dialect)} AS bece_arg FROM {table}) AS bece_rows"
            z = f"CASE WHEN bece_arg = {yt} THEN 1 ELSE 0 END"
        conf = f"CASE {which} " + " ".join(f"WHEN {i} THEN {p}" for i, p in enumerate(ps)) + " END"
        if not classwise and (bins.edges[0], bins.edges[-1]) != (0.0, 1.0):
            checks.append((_BAD_PROB, _prob_bad(conf, bins)))
    first = group
    if by is not None:
        checks.insert(0, (_BAD_GROUP, f"{q(by)} IS NULL"))
        first, group = f"{q(by)} AS bece_group, ", "bece_group, "
    code = "CASE " + " ".join(f"WHEN {cond} THEN {c}" for c, cond in checks) + f" ELSE {_OK} END"
    sql = _rows(group, code, conf, z, source, bins, first)
    columns = {"y_true": y_true, "y_prob": y_prob if isinstance(y_prob, str) else list(probs),
               "y_pred": y_pred}
    return StatisticsQuery(sql, dialect, bins, form, k, columns, f"table {table}", by)


def _argmax(ps: list[str], dialect: str) -> str:
    """The index of the largest of the columns ``ps``, the first among ties
    (``numpy.argmax``): with GREATEST (DuckDB, Spark) one comparison per
    column; in standard SQL, which has no GREATEST, the pairwise comparisons
    (K^2 terms: use the engine's own dialect for many classes)."""
    k = len(ps)
    if dialect == "ansi":
        whens = " ".join(f"WHEN {' AND '.join(f'{ps[i]} >= {ps[j]}' for j in range(k) if j != i)}"
                         f" THEN {i}" for i in range(k - 1))
    else:
        top = f"GREATEST({', '.join(ps)})"
        whens = " ".join(f"WHEN {ps[i]} = {top} THEN {i}" for i in range(k - 1))
    return f"CASE {whens} ELSE {k - 1} END"


def _prob_bad(x: str, bins: Binning) -> str:
    lo, hi = bins.edges[0], bins.edges[-1]
    return f"{x} IS NULL OR NOT ({x} >= {_num(lo)} AND {x} <= {_num(hi)})"


def _bin(x: str, bins: Binning) -> str:
    """The bin of x in 0 .. M-1, as bece._stats.binning indexes it: floor(x M)
    for uniform bins (M itself folded into M - 1), else the number of edges
    at or below x, minus one (the top edge folded too)."""
    m = bins.n_bins
    if bins.rule == "uniform":
        raw = f"FLOOR({x} * {m})"
        return f"CASE WHEN {raw} > {m - 1} THEN {m - 1} ELSE {raw} END"
    inner = " ".join(f"WHEN {x} < {_num(e)} THEN {j}" for j, e in enumerate(bins.edges[1:-1]))
    return f"CASE {inner} ELSE {m - 1} END" if inner else "0"


def _rows(group: str, code: str, conf: str, z: str, source: str, bins: Binning,
          first: str | None = None) -> str:
    """The query: per row its code, bin and outcome, and the limbs of the
    confidence and of its square (:func:`bece._stats.exact.limbs`: FLOOR of
    products by 2^26, each exact in IEEE double arithmetic), summed as
    64-bit integers per (code, bin, outcome)."""
    scale, big = _num(float(1 << exact.LIMB_BITS)), "BIGINT"
    g = group
    return "\n".join([
        f"WITH bece_r AS (SELECT {g if first is None else first}{code} AS code, {conf} AS x, "
        f"{z} AS z FROM {source}),",
        f"bece_s AS (SELECT {g}code, z, CASE WHEN code = 0 THEN {_bin('x', bins)} ELSE 0 END AS b,",
        "  CASE WHEN code = 0 THEN x ELSE 0 END AS x0 FROM bece_r),",
        f"bece_t AS (SELECT {g}code, z, b, x0 * {scale} AS p1, x0 * x0 * {scale} AS q1 FROM bece_s),",
        f"bece_u AS (SELECT {g}code, z, b, FLOOR(p1) AS lp1, (p1 - FLOOR(p1)) * {scale} AS p2,",
        f"  FLOOR(q1) AS lq1, (q1 - FLOOR(q1)) * {scale} AS q2 FROM bece_t),",
        f"bece_v AS (SELECT {g}code, z, b, lp1, FLOOR(p2) AS lp2, (p2 - FLOOR(p2)) * {scale} AS p3,",
        f"  lq1, FLOOR(q2) AS lq2, (q2 - FLOOR(q2)) * {scale} AS q3 FROM bece_u)",
        f"SELECT {g}code, CAST(b AS {big}), z, COUNT(*),",
        f"  SUM(CAST(lp1 AS {big})), SUM(CAST(lp2 AS {big})), SUM(CAST(FLOOR(p3) AS {big})),",
        f"  SUM(CAST(lq1 AS {big})), SUM(CAST(lq2 AS {big})), SUM(CAST(FLOOR(q3) AS {big}))",
        f"FROM bece_v GROUP BY {g}code, b, z",
    ])


def sql_statistics(connection: Any, table: str, **options: Any
                   ) -> CalibrationStats | tuple[CalibrationStats, ...] | GroupStats:
    """Statistics of a table in a database, by one aggregation query.

    ``connection`` is a DB-API connection (``sqlite3``, DuckDB's
    ``duckdb.connect()``, or any whose ``cursor().execute(sql)`` runs SQL;
    ``connection.execute`` is used where it exists);
    ``options`` are :func:`statistics_query`'s (``dialect`` "ansi" unless
    given; ``"duckdb"`` for a DuckDB connection). Only the per-bin sums come
    back. Equal, to the last bit, to
    :meth:`~bece.CalibrationStats.from_arrays` on the table's rows.

    Examples
    --------
    >>> import sqlite3
    >>> import bece
    >>> from bece.io import sql_statistics
    >>> db = sqlite3.connect(":memory:")
    >>> _ = db.execute("CREATE TABLE logs (label INTEGER, p_0 REAL, p_1 REAL, p_2 REAL)")
    >>> rows = [(0, 0.7, 0.2, 0.1), (2, 0.1, 0.3, 0.6), (1, 0.5, 0.4, 0.1)]
    >>> _ = db.executemany("INSERT INTO logs VALUES (?, ?, ?, ?)", rows)
    >>> stats = sql_statistics(db, "logs", y_true="label", y_prob=["p_0", "p_1", "p_2"], n_bins=5)
    >>> stats.counts.tolist()                        # top-label: correct, correct, wrong
    [[0, 0, 1, 0, 0], [0, 0, 0, 2, 0]]
    >>> _ = db.execute("UPDATE logs SET p_0 = 0.8 WHERE label = 0")
    >>> sql_statistics(db, "logs", y_true="label", y_prob=["p_0", "p_1", "p_2"])
    Traceback (most recent call last):
    ValueError: table logs: 1 row(s) of probabilities do not sum to 1 within 1e-06 (columns p_0, p_1, p_2)
    """
    if "dialect" not in options and type(connection).__module__.startswith("duckdb"):
        options["dialect"] = "duckdb"
    query = statistics_query(table, **options)
    if hasattr(connection, "execute"):  # sqlite3, DuckDB: on the connection itself, whose
        rows = connection.execute(query.sql).fetchall()  # registered views a cursor may not see
    else:
        cursor = connection.cursor()
        try:
            cursor.execute(query.sql)
            rows = cursor.fetchall()
        finally:
            cursor.close()
    return query.read(rows)


def spark_statistics(df: Any, **options: Any
                     ) -> CalibrationStats | tuple[CalibrationStats, ...] | GroupStats:
    """Statistics of a PySpark DataFrame, aggregated by Spark.

    The DataFrame is registered as a temporary view and reduced by the
    ``"spark"`` dialect of :func:`statistics_query` (``spark.sql``); only the
    per-bin sums reach the driver, never rows. ``options`` as
    :func:`statistics_query` (without ``table`` and ``dialect``). Equal, to
    the last bit, to :meth:`~bece.CalibrationStats.from_arrays` on the rows.

    With a Spark session (``pip install 'bece[spark]'``; Java 17 or newer),
    as CI's extras stage tests it (``tests/io/test_sql.py``):

    .. code-block:: python

        df = spark.read.parquet("s3://bucket/predictions/")
        stats = spark_statistics(df, y_true="label", y_prob="score")
        result = bece.posterior_ece(stats)

    Examples
    --------
    Anything but a PySpark DataFrame is refused:

    >>> from bece.io import spark_statistics
    >>> spark_statistics([0.2, 0.9])
    Traceback (most recent call last):
    ValueError: df must be a PySpark DataFrame, got list
    """
    import uuid

    if not (hasattr(df, "createOrReplaceTempView") and hasattr(df, "sparkSession")):
        raise ValueError(f"df must be a PySpark DataFrame, got {type(df).__name__}")
    if "dialect" in options or "table" in options:
        raise ValueError("spark_statistics sets table and dialect itself")
    view = f"bece_{uuid.uuid4().hex}"
    df.createOrReplaceTempView(view)
    try:
        query = statistics_query(view, dialect="spark", **options)
        rows = df.sparkSession.sql(query.sql).collect()
    finally:
        df.sparkSession.catalog.dropTempView(view)
    return replace(query, source="Spark DataFrame").read(rows)
