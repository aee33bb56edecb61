"""bece.io.statistics_query: the aggregation where the data are. On sqlite3
(the ANSI dialect, default suite), DuckDB and Spark (CI's extras stage), every
form gives the statistics of the array path to the last bit, and bad rows are
named."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

import bece
from bece import CalibrationStats
from bece.io import sql_statistics, statistics_query

K = 4
PROBS = [f"p_{j}" for j in range(K)]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(11)
    n = 3000
    p = rng.uniform(size=n)
    p[:4] = [0.0, 1.0, 0.5, 1 / 3]  # both ends and bin edges
    prob = rng.dirichlet(np.ones(K) * 0.7, size=n)
    prob[4] = 0.25  # a four-way tie: argmax takes the first
    prob[5] = [0.4, 0.4, 0.1, 0.1]
    return {
        "y": (rng.uniform(size=n) < p).astype(np.int64),
        "p": p,
        "yk": rng.integers(0, K, n),
        "pred": rng.integers(0, K, n),
        "prob": prob,
    }


def _rows(d):
    return [(int(a), float(b), int(c), int(e), *map(float, r))
            for a, b, c, e, r in zip(d["y"], d["p"], d["yk"], d["pred"], d["prob"])]


def _sqlite(d):
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE logs (y_true INTEGER, y_prob REAL, yk INTEGER, y_pred INTEGER, "
               + ", ".join(f"{c} REAL" for c in PROBS) + ")")
    db.executemany(f"INSERT INTO logs VALUES ({', '.join('?' * (4 + K))})", _rows(d))
    return db


def _expected(d):
    """Each form's statistics by the array path."""
    return {
        "binary": (dict(n_bins=10), CalibrationStats.from_arrays(d["y"], d["p"], n_bins=10)),
        "edges": (dict(binning=[0.0, 0.3, 1 / 3, 0.8, 1.0]),
                  CalibrationStats.from_arrays(d["y"], d["p"], binning=[0.0, 0.3, 1 / 3, 0.8, 1.0])),
        "triples": (dict(y_true="yk", y_pred="y_pred"),
                    CalibrationStats.from_arrays(d["yk"], d["p"], y_pred=d["pred"])),
        "top-label": (dict(y_true="yk", y_prob=PROBS),
                      CalibrationStats.from_arrays(d["yk"], d["prob"])),
        "classwise": (dict(y_true="yk", y_prob=PROBS, classwise=True, n_bins=8),
                      tuple(CalibrationStats.from_arrays((d["yk"] == j).astype(int), d["prob"][:, j],
                                                         n_bins=8) for j in range(K))),
    }


def _check_forms(run, d):
    for name, (options, expected) in _expected(d).items():
        got = run(options)
        assert got == expected, name  # counts and exact sums: the same bits


def test_every_form_equals_the_array_path_on_sqlite(data):
    db = _sqlite(data)
    _check_forms(lambda o: sql_statistics(db, "logs", **o), data)
    # the classwise statistics give bece.classwise_ece (to its own summation)
    cw = sql_statistics(db, "logs", y_true="yk", y_prob=PROBS, classwise=True)
    from bece._metrics.binned import plugin_ece

    ece = np.mean([plugin_ece(s) for s in cw])
    assert ece == pytest.approx(bece.classwise_ece(data["yk"], data["prob"]), rel=1e-12)


def test_a_query_can_be_run_by_hand_and_names_a_subquery(data):
    db = _sqlite(data)
    query = statistics_query("(SELECT * FROM logs WHERE yk < 2) AS recent", n_bins=5)
    stats = query.read(db.execute(query.sql).fetchall())
    keep = data["yk"] < 2
    assert stats == CalibrationStats.from_arrays(data["y"][keep], data["p"][keep], n_bins=5)
    assert query.form == "binary" and query.binning.n_bins == 5 and "GROUP BY" in query.sql
    # rows come back in any order
    assert query.read(db.execute(query.sql).fetchall()[::-1]) == stats


@pytest.mark.parametrize("update,options,message", [
    ("y_prob = 1.5 WHERE rowid <= 3", {}, r"3 row\(s\) have a probability that is NULL, NaN or "
                                          r"outside \[0, 1\] \(column\(s\) y_prob\)"),
    ("y_prob = NULL WHERE rowid = 7", {}, r"1 row\(s\) have a probability"),
    ("y_true = 2 WHERE rowid <= 2", {}, r"2 row\(s\) have a label that is not 0 or 1 \(column y_true\)"),
    ("yk = 4 WHERE rowid = 1", {"y_true": "yk", "y_prob": PROBS},
     r"1 row\(s\) have a label that is not a class index in 0..3 \(column yk\)"),
    ("p_0 = p_0 + 0.01 WHERE rowid <= 5", {"y_true": "yk", "y_prob": PROBS},
     r"5 row\(s\) of probabilities do not sum to 1 within 1e-06 \(columns p_0, p_1, p_2, p_3\)"),
    ("y_pred = NULL WHERE rowid = 9", {"y_true": "yk", "y_pred": "y_pred"},
     r"1 row\(s\) have a label that is NULL \(column yk or y_pred\)"),
    ("y_prob = 0.95 WHERE rowid = 2", {"binning": [0.1, 0.5, 0.9]},
     r"outside the bin edges \[0.1, 0.9\]"),
])
def test_bad_rows_are_counted_and_named(data, update, options, message):
    db = _sqlite(data)
    if "binning" in options:
        db.execute("UPDATE logs SET y_prob = 0.3")
    db.execute(f"UPDATE logs SET {update}")
    with pytest.raises(ValueError, match=message):
        sql_statistics(db, "logs", **options)


def test_options_are_checked():
    with pytest.raises(ValueError, match="dialect must be one of"):
        statistics_query("t", dialect="oracle")
    with pytest.raises(ValueError, match="binning='quantile' needs the confidences first"):
        statistics_query("t", binning="quantile")
    with pytest.raises(ValueError, match="classwise=True needs the K probability columns"):
        statistics_query("t", classwise=True)
    with pytest.raises(ValueError, match="y_pred goes with one y_prob column"):
        statistics_query("t", y_prob=PROBS, y_pred="y_pred")
    with pytest.raises(ValueError, match="K probability columns need K >= 2"):
        statistics_query("t", y_prob=["p_0"])
    with pytest.raises(ValueError, match="table must be a table name"):
        statistics_query("  ")
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE empty (y_true INTEGER, y_prob REAL)")
    with pytest.raises(ValueError, match=r"table empty: no predictions \(0 rows\)"):
        sql_statistics(db, "empty")


def test_quoting_keeps_odd_column_names():
    db = sqlite3.connect(":memory:")
    db.execute('CREATE TABLE t ("true label" INTEGER, "p ""1""" REAL)')
    db.executemany("INSERT INTO t VALUES (?, ?)", [(0, 0.2), (1, 0.7), (1, 0.9)])
    got = sql_statistics(db, "t", y_true="true label", y_prob='p "1"', n_bins=2)
    assert got == CalibrationStats.from_arrays([0, 1, 1], [0.2, 0.7, 0.9], n_bins=2)
    assert "`p \"1\"`" in statistics_query("t", y_prob='p "1"', dialect="spark").sql


@pytest.mark.extras
def test_duckdb_gives_the_same_bits(data):
    duckdb = pytest.importorskip("duckdb")
    import pandas as pd

    frame = pd.DataFrame({"y_true": data["y"], "y_prob": data["p"], "yk": data["yk"],
                          "y_pred": data["pred"], **{c: data["prob"][:, j]
                                                     for j, c in enumerate(PROBS)}})
    db = duckdb.connect()
    db.register("logs", frame)
    _check_forms(lambda o: sql_statistics(db, "logs", **o), data)
    nan = frame.assign(y_prob=np.where(np.arange(len(frame)) < 2, np.nan, frame.y_prob))
    db.register("with_nan", nan)
    with pytest.raises(ValueError, match=r"2 row\(s\) have a probability that is NULL, NaN"):
        sql_statistics(db, "with_nan")


@pytest.fixture(scope="module")
def spark():
    pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("bece-tests")
               .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "3")
               .getOrCreate())
    yield session
    session.stop()


@pytest.mark.extras
def test_spark_sql_and_dataframe_give_the_same_bits(data, spark):
    from bece.io import spark_statistics

    rows = _rows(data)
    names = ["y_true", "y_prob", "yk", "y_pred", *PROBS]
    df = spark.createDataFrame(rows, names).repartition(5)  # partitions: any order of sums
    _check_forms(lambda o: spark_statistics(df, **o), data)
    df.createOrReplaceTempView("logs")
    query = statistics_query("logs", dialect="spark", n_bins=10)
    assert query.read(spark.sql(query.sql).collect()) == _expected(data)["binary"][1]
    bad = spark.createDataFrame([(0, float("nan")), (1, 0.5)], ["y_true", "y_prob"])
    with pytest.raises(ValueError, match=r"Spark DataFrame: 1 row\(s\) have a probability"):
        spark_statistics(bad)


def test_days_add_up_to_the_month_and_its_posterior(data):
    """A day's statistics merged into the month's give the month's
    statistics, to the last bit, and so the same posterior."""
    db = _sqlite(data)
    db.execute("ALTER TABLE logs ADD COLUMN day INTEGER")
    db.execute("UPDATE logs SET day = rowid % 30")
    fine = bece.SmoothModel(n_bins=15).fine_binning()
    month = sql_statistics(db, "logs", binning=fine)
    days = [sql_statistics(db, f"(SELECT * FROM logs WHERE day = {d}) AS d", binning=fine)
            for d in range(30)]
    assert sum(days[1:], days[0]) == month
    model = bece.SmoothModel(n_bins=15)
    a = model.posterior(sum(days[::-1]), num_samples=2000, seed=1)
    b = model.posterior(month, num_samples=2000, seed=1)
    np.testing.assert_array_equal(a.draws, b.draws)


# ------------------------------------------------------------------ groups (by=)
def _group_frame(d):
    return np.array(["north", "south", "west"])[np.arange(d["y"].size) % 3]


def _group_expectations(d):
    """Per-group statistics by the array path, for the binary and top-label forms."""
    from bece._stats.binning import make_binning

    g = _group_frame(d)
    bins = make_binning(None, 10)
    top = CalibrationStats.from_arrays(d["yk"], d["prob"])  # its kind and bins
    conf = d["prob"].max(axis=1)
    correct = (d["prob"].argmax(axis=1) == d["yk"]).astype(np.int64)
    return {
        "binary": (dict(n_bins=10, by="grp"),
                   bece.GroupStats.from_arrays(bins, g, d["y"], d["p"], "binary")),
        "top-label": (dict(y_true="yk", y_prob=PROBS, by="grp"),
                      bece.GroupStats.from_arrays(top.binning, g, correct, conf, "top-label")),
    }


def test_groups_equal_the_array_path_on_sqlite(data):
    db = _sqlite(data)
    db.execute("ALTER TABLE logs ADD COLUMN grp TEXT")
    db.execute("UPDATE logs SET grp = CASE (rowid - 1) % 3 WHEN 0 THEN 'north' WHEN 1 THEN "
               "'south' ELSE 'west' END")
    for name, (options, expected) in _group_expectations(data).items():
        got = sql_statistics(db, "logs", **options)
        assert isinstance(got, bece.GroupStats) and got == expected, name
    db.execute("UPDATE logs SET grp = NULL WHERE rowid <= 2")
    with pytest.raises(ValueError, match=r"2 row\(s\) have no group \(column grp is NULL\)"):
        sql_statistics(db, "logs", by="grp")
    with pytest.raises(ValueError, match="not with classwise"):
        statistics_query("logs", y_prob=PROBS, classwise=True, by="grp")


def test_groups_days_add_up_to_the_month_and_its_posterior(data):
    db = _sqlite(data)
    db.execute("ALTER TABLE logs ADD COLUMN grp INTEGER")
    db.execute("ALTER TABLE logs ADD COLUMN day INTEGER")
    db.execute("UPDATE logs SET grp = rowid % 4, day = rowid % 7")
    model = bece.SmoothGroupModel(n_bins=15)
    fine = model.fine_binning()
    month = sql_statistics(db, "logs", binning=fine, by="grp")
    days = [sql_statistics(db, f"(SELECT * FROM logs WHERE day = {d}) AS d", binning=fine,
                           by="grp") for d in range(7)]
    assert sum(days) == month and month.groups.tolist() == [0, 1, 2, 3]
    a = model.posterior(sum(days[::-1]), num_samples=500, seed=2)
    b = model.posterior(month, num_samples=500, seed=2)
    np.testing.assert_array_equal(a.draws, b.draws)


@pytest.mark.extras
def test_groups_on_duckdb_and_spark(data, spark):
    duckdb = pytest.importorskip("duckdb")
    import pandas as pd

    from bece.io import spark_statistics

    g = _group_frame(data)
    frame = pd.DataFrame({"y_true": data["y"], "y_prob": data["p"], "yk": data["yk"],
                          "grp": g, **{c: data["prob"][:, j] for j, c in enumerate(PROBS)}})
    db = duckdb.connect()
    db.register("logs", frame)
    df = spark.createDataFrame(frame).repartition(4)
    for name, (options, expected) in _group_expectations(data).items():
        assert sql_statistics(db, "logs", **options) == expected, name
        assert spark_statistics(df, **options) == expected, name


def test_windows_of_time_in_sql_and_the_drift_rule():
    """Windows are a column the query groups by (here sqlite's date(ts) in a
    subquery); the drift rule reads the per-window statistics."""
    from scipy import special

    rng = np.random.default_rng(4)
    n = 14 * 1500
    ts = np.datetime64("2026-11-01T00:00") + np.sort(rng.integers(0, 14 * 1440, n)).astype(
        "timedelta64[m]")
    p = rng.beta(2, 2, size=n)
    slope = np.where(ts >= np.datetime64("2026-11-11"), 0.5, 1.0)
    y = (rng.uniform(size=n) < special.expit(slope * special.logit(p))).astype(int)
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE logs (ts TEXT, y_true INTEGER, y_prob REAL)")
    db.executemany("INSERT INTO logs VALUES (?, ?, ?)",
                   [(str(t), int(a), float(b)) for t, a, b in zip(ts, y, p)])
    model = bece.SmoothGroupModel()
    stats = sql_statistics(db, "(SELECT *, date(ts) AS day FROM logs) AS t", by="day",
                           binning=model.fine_binning())
    day = ts.astype("datetime64[D]").astype(str)
    assert stats == model.group_statistics(y, p, by=day)
    drift = bece.drift_test(stats, reference=5)
    assert drift.first_alarm == "2026-11-11" and drift.drifted
