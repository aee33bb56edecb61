"""bece._io.stream: chunked reading gives the same statistics as the in-memory path."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bece import CalibrationStats
from bece._io.stream import file_statistics
from bece.io import example_path, iter_chunks, read_predictions, read_statistics


def _assert_same(got: CalibrationStats, ref: CalibrationStats) -> None:
    """The same statistics to the last bit: the sums are exact
    (bece._stats.exact), so no order or split of reading changes them."""
    assert got.binning == ref.binning
    assert np.array_equal(got.counts, ref.counts)
    assert np.array_equal(got.sum_p, ref.sum_p) and np.array_equal(got.sum_p2, ref.sum_p2)
    assert np.array_equal(got._exact, ref._exact)


def _write(frame: pd.DataFrame, path) -> None:
    if path.suffix == ".csv":
        frame.to_csv(path, index=False, float_format="%.17g")
    else:
        frame.to_parquet(path, row_group_size=97)  # row groups that batches straddle


def _in_memory(path, **kw) -> CalibrationStats:
    pred = read_predictions(path)
    return CalibrationStats.from_arrays(pred.y_true, pred.y_prob, y_pred=pred.y_pred, **kw)


@pytest.fixture
def frames(rng):
    n, k = 401, 4
    p = rng.beta(5, 1, size=n)
    p[:3] = [0.0, 1.0, 0.2]
    prob = rng.dirichlet(np.ones(k) * 0.3, size=n)
    return {
        "binary": pd.DataFrame({"y_true": (rng.uniform(size=n) < p).astype(int), "y_prob": p}),
        "top-label": pd.DataFrame(
            {"y_true": rng.integers(0, k, n), **{f"p_{j}": prob[:, j] for j in range(k)}}
        ),
        "triples": pd.DataFrame(
            {"y_true": rng.integers(0, 3, n), "y_pred": rng.integers(0, 3, n), "y_prob": p}
        ),
    }


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
@pytest.mark.parametrize("kind", ["binary", "top-label", "triples"])
@pytest.mark.parametrize("batch_size", [1, 2, 7, 96, 97, 98, 400, 401, 402, 10**6])
def test_chunked_equals_in_memory(tmp_path, frames, suffix, kind, batch_size):
    path = tmp_path / f"pred{suffix}"
    _write(frames[kind], path)
    fs = file_statistics(path, n_bins=10, batch_size=batch_size)
    assert fs.kind == kind == read_predictions(path).kind
    _assert_same(fs.stats, _in_memory(path, n_bins=10))


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
@pytest.mark.parametrize("batch_size", [1, 50, 10**6])
def test_quantile_bins_take_a_first_pass(tmp_path, frames, suffix, batch_size):
    """Quantile edges from the first pass equal make_binning's on the whole column."""
    path = tmp_path / f"pred{suffix}"
    _write(frames["top-label"], path)
    fs = file_statistics(path, n_bins=7, binning="quantile", batch_size=batch_size)
    ref = _in_memory(path, n_bins=7, binning="quantile")
    assert np.array_equal(fs.stats.edges, ref.edges)
    _assert_same(fs.stats, ref)


def test_explicit_edges_and_read_statistics_dispatch(tmp_path, frames):
    edges = [0.0, 0.5, 0.8, 0.9, 1.0]
    for suffix in (".csv", ".parquet"):
        path = tmp_path / f"pred{suffix}"
        _write(frames["binary"], path)
        _assert_same(read_statistics(path, binning=edges, batch_size=33).stats,
                     _in_memory(path, binning=edges))
    npz = tmp_path / "pred.npz"
    np.savez(npz, **{c: frames["binary"][c].to_numpy() for c in frames["binary"]})
    fs = read_statistics(npz, n_bins=10)  # NPZ: read whole
    assert fs.kind == "binary"
    _assert_same(fs.stats, _in_memory(npz, n_bins=10))


def test_example_file(tmp_path):
    fs = file_statistics(example_path(), batch_size=64)
    assert fs.kind == "top-label" and fs.stats.n == 899
    _assert_same(fs.stats, _in_memory(example_path()))


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
@pytest.mark.parametrize(
    "column,row,value,message",
    [
        ("y_prob", 250, 1.5, r"y_prob must lie in \[0, 1\]; 1 value\(s\) \(row 250: 1.5\)"),
        ("y_prob", 399, -0.25, r"\(row 399: -0.25\) are outside"),
        ("y_true", 123, 2, r"y_true must hold labels in 0\.\.1; 1 value\(s\) \(row 123: 2\)"),
        ("y_prob", 77, np.nan,
         r"column 'y_prob' has 1 missing or NaN value\(s\) in rows 64\.\.95, the first at row 77"),
    ],
)
def test_errors_name_the_file_and_row(tmp_path, frames, suffix, column, row, value, message):
    frame = frames["binary"].copy()
    frame[column] = frame[column].astype(float)
    frame.loc[row, column] = value
    path = tmp_path / f"bad{suffix}"
    _write(frame, path)
    with pytest.raises(ValueError, match=message) as err:
        file_statistics(path, batch_size=32)
    assert str(err.value).startswith(str(path))


def test_top_label_errors_give_row_and_column(tmp_path, frames):
    frame = frames["top-label"].copy()
    frame.loc[300, "p_2"] = 1.25
    path = tmp_path / "bad.parquet"
    _write(frame, path)
    with pytest.raises(ValueError, match=r"row 300, column 2: 1.25"):
        file_statistics(path, batch_size=64)
    frame = frames["top-label"].copy()
    frame.loc[130, "p_0"] += 0.01
    _write(frame, path)
    with pytest.raises(ValueError, match=r"e.g. row 130 sums to"):
        file_statistics(path, batch_size=64)


def test_bad_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        file_statistics(tmp_path / "none.csv")
    other = tmp_path / "x.txt"
    other.write_text("y_true,y_prob\n1,0.5\n")
    with pytest.raises(ValueError, match="not '.txt'"):
        file_statistics(other)
    with pytest.raises(ValueError, match="unknown file type"):
        read_statistics(other)
    empty = tmp_path / "empty.csv"
    empty.write_text("y_true,y_prob\n")
    with pytest.raises(ValueError, match=r"no predictions \(0 rows\)"):
        file_statistics(empty)
    cols = tmp_path / "cols.csv"
    cols.write_text("y_true,score\n1,0.5\n")
    with pytest.raises(ValueError, match="no probability columns"):
        file_statistics(cols)
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 not really")
    with pytest.raises(ValueError, match="cannot read"):
        file_statistics(broken)
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        list(iter_chunks(example_path(), batch_size=0))


def test_iter_chunks_covers_every_row_once(tmp_path, frames):
    path = tmp_path / "pred.parquet"
    _write(frames["triples"], path)
    starts, rows = [], []
    for start, cols in iter_chunks(path, batch_size=40):
        assert set(cols) == {"y_true", "y_pred", "y_prob"}
        starts.append(start)
        rows.append(cols["y_true"].size)
    assert starts == list(np.cumsum([0] + rows[:-1]))
    assert sum(rows) == 401 and max(rows) <= 40


def test_progress_bar_goes_to_stderr(tmp_path, frames, capsys):
    path = tmp_path / "pred.parquet"
    _write(frames["binary"], path)
    fs = file_statistics(path, batch_size=100, progress=True)
    out, err = capsys.readouterr()
    assert out == "" and "rows" in err
    assert fs.stats.n == 401


def test_arrow_columns_to_numpy_without_pandas(rng):
    """Column conversion by buffer views equals pyarrow's own, sliced or not."""
    import pyarrow as pa

    from bece._io.stream import _numpy

    cols = [
        pa.array(rng.uniform(size=101)),
        pa.array(rng.uniform(size=101).astype(np.float32)),
        pa.array(rng.integers(-5, 5, 101)),
        pa.array(rng.integers(0, 5, 101).astype(np.uint8)),
        pa.array(rng.integers(0, 2, 101).astype(bool)),
    ]
    for col in cols:
        for part in (col, col.slice(3, 50), col.slice(9), col.slice(100, 1)):
            got = _numpy(part)
            ref = part.to_numpy(zero_copy_only=False)
            assert got.dtype == ref.dtype and np.array_equal(got, ref)


# ------------------------------------------------ robustness (issue 14, catalogue J)
def test_header_longer_than_64_kib(tmp_path):
    """Catalogue #4: a header over 64 KiB (10,000 class columns) is streamed."""
    k = 10_000
    path = tmp_path / "wide.csv"
    header = "y_true," + ",".join(f"p_{j}" for j in range(k))
    assert len(header) > 1 << 16
    rows = [f"{i}," + ",".join(["0.0001"] * k) for i in (3, 9999)]
    path.write_text(header + "\n" + "\n".join(rows) + "\n")
    fs = file_statistics(path)
    assert fs.kind == "top-label" and fs.stats.n == 2
    _assert_same(fs.stats, _in_memory(path))


def test_field_longer_than_the_block(tmp_path, monkeypatch):
    """Catalogue #27: a line longer than the CSV block, first or later in the
    file, is read (the block grows); 8 MiB blocks shrunk to 1 KiB here."""
    import bece._io.stream as stream

    path = tmp_path / "long.csv"
    lines = [f"{i % 2},0.{i % 10}5,note" for i in range(200)]
    lines[0] = lines[0].replace("note", "x" * 300_000)  # longer than the 64 KiB name probe
    lines[150] = lines[150].replace("note", "y" * 5000)
    path.write_text("y_true,y_prob,note\n" + "\n".join(lines) + "\n")
    monkeypatch.setattr(stream, "_CSV_BLOCK", 1024)
    for batch_size in (7, 10**6):
        fs = file_statistics(path, batch_size=batch_size)
        assert fs.stats.n == 200
        _assert_same(fs.stats, _in_memory(path))
    rows = [cols["y_true"].size for _, cols in iter_chunks(path, batch_size=64)]
    assert sum(rows) == 200


@pytest.mark.parametrize("column", ["y_true", "y_pred"])
def test_late_float_labels(tmp_path, monkeypatch, column):
    """Catalogue #30: a label '1.0' after blocks of integers is read as in
    memory (pyarrow widens int64 to double); '1.5' is refused with its row."""
    import bece._io.stream as stream

    n = 2000
    y = np.arange(n) % 2
    text = ["y_true,y_pred,y_prob"] + [f"{a},{a},0.{a}5" for a in y]
    at = 1 + 1901  # row 1901 (header first)
    text[at] = {"y_true": "1.0,1,0.15", "y_pred": "1,1.0,0.15"}[column]
    path = tmp_path / "late.csv"
    path.write_text("\n".join(text) + "\n")
    monkeypatch.setattr(stream, "_CSV_BLOCK", 4096)  # the '1.0' blocks after the first
    fs = file_statistics(path, batch_size=300)
    _assert_same(fs.stats, _in_memory(path))
    assert fs.stats.n == n and fs.kind == "triples"
    path.write_text("\n".join(text).replace("1.0,", "1.5,") + "\n")
    message = rf"{column} must hold integer class labels; 1 value\(s\) \(row 1901: 1.5\)"
    with pytest.raises(ValueError, match=message):
        file_statistics(path, batch_size=300)
    pred = read_predictions(path)  # in memory: the same error
    with pytest.raises(ValueError, match=r"index 1901: 1.5"):
        CalibrationStats.from_arrays(pred.y_true, pred.y_prob, y_pred=pred.y_pred)


def test_late_text_label_is_still_an_error(tmp_path, monkeypatch):
    import bece._io.stream as stream

    text = "y_true,y_prob\n" + "1,0.5\n" * 1000 + "abc,0.5\n"
    (tmp_path / "t.csv").write_text(text)
    monkeypatch.setattr(stream, "_CSV_BLOCK", 1024)
    with pytest.raises(ValueError, match=r"t.csv: cannot read: .*invalid value 'abc'"):
        file_statistics(tmp_path / "t.csv")


def test_duplicated_columns_stream(tmp_path):
    """Catalogue #5, chunked reader."""
    path = tmp_path / "dup.csv"
    path.write_text("y_true,y_prob,y_true\n1,0.5,0\n0,0.2,1\n")
    with pytest.raises(ValueError, match=r"dup.csv: column 'y_true' appears 2 times"):
        file_statistics(path)


def test_parquet_dataset_directory_streams(tmp_path, frames):
    """Catalogue #29: a dataset directory, read part by part in natural order."""
    root = tmp_path / "spark_output.parquet"
    root.mkdir()
    frame = frames["top-label"]
    bounds = [0, 50, 51, 200, 333, 401]
    for i, (lo, hi) in enumerate(zip(bounds, bounds[1:])):
        frame.iloc[lo:hi].to_parquet(root / f"part-{i:05d}-c000.snappy.parquet", row_group_size=40)
    (root / "_SUCCESS").write_text("")
    fs = file_statistics(root, n_bins=10, batch_size=64)
    assert fs.kind == "top-label" and fs.stats.n == 401
    ref = CalibrationStats.from_arrays(frame["y_true"].to_numpy(),
                                       frame[[f"p_{j}" for j in range(4)]].to_numpy(), n_bins=10)
    _assert_same(fs.stats, ref)
    _assert_same(read_statistics(root, n_bins=10).stats, ref)
    q = file_statistics(root, n_bins=7, binning="quantile", batch_size=100)
    assert np.array_equal(q.stats.edges, _in_memory(root, n_bins=7, binning="quantile").edges)
    starts = [start for start, _ in iter_chunks(root, batch_size=64)]
    assert starts[:3] == [0, 50, 51]
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(ValueError, match="is a directory without Parquet files"):
        file_statistics(plain)


def test_a_bad_value_in_the_first_block_is_named(tmp_path):
    """pyarrow refuses the first block before any schema is known: its own
    message reaches the user (it once read "'NoneType' object has no
    attribute 'id'")."""
    path = tmp_path / "bad.csv"
    path.write_text("y_true,y_prob\n1,np.float64(0.5)\n0,0.25\n")
    with pytest.raises(ValueError, match=r"bad.csv: cannot read: .*invalid value 'np.float64\(0.5\)'"):
        list(iter_chunks(path))


def test_csv_parquet_and_memory_give_the_same_bits(tmp_path, rng, monkeypatch, capsys):
    """Trust issue: the plug-in ECE of the same numbers read 0.04567012711739676
    from CSV, ...673 from Parquet and ...662 in memory. Read in chunks of 7
    rows or whole, the command's JSON is the same for both files, and its
    plug-in and posterior mean are those of the arrays in memory."""
    import json

    import bece
    from bece._cli import main
    from bece._io import stream

    n = 5000
    p = rng.beta(5, 1, size=n)
    y = (rng.uniform(size=n) < p ** 1.2).astype(int)
    frame = pd.DataFrame({"y_true": y, "y_prob": p})
    outputs = []
    for suffix in (".csv", ".parquet"):
        path = tmp_path / f"pred{suffix}"
        _write(frame, path)
        for batch in (7, stream.DEFAULT_BATCH_SIZE):
            monkeypatch.setattr(stream, "DEFAULT_BATCH_SIZE", batch)
            assert main(["report", str(path), "--json", "--no-verdict"]) == 0
            outputs.append(capsys.readouterr().out)
    assert all(out == outputs[0] for out in outputs[1:])
    report = json.loads(outputs[0])
    assert report["plugin_ece"] == bece.expected_calibration_error(y, p)
    assert report["ece"]["mean"] == bece.bayesian_ece(y, p).mean


def test_a_pattern_reads_many_files_as_one(tmp_path, frames, capsys):
    """Prediction logs: 'logs/*.parquet' (or *.csv) is read file by file, in
    natural order, and gives the statistics and the report of the
    concatenated rows, to the last bit."""
    from bece._cli import main

    frame = frames["top-label"]
    logs = tmp_path / "logs"
    logs.mkdir()
    for i, part in enumerate(np.array_split(np.arange(len(frame)), 11)):
        _write(frame.iloc[part], logs / f"day-{i + 1}.parquet")
        _write(frame.iloc[part], logs / f"day-{i + 1}.csv")
    whole = tmp_path / "all.parquet"
    _write(frame, whole)
    ref = _in_memory(whole, n_bins=10)
    for pattern in ("day-*.parquet", "day-*.csv", "**/day-*.csv"):
        got = read_statistics(str(logs / pattern), n_bins=10, batch_size=50)
        _assert_same(got.stats, ref)
        assert got.kind == "top-label" and got.source == str(logs / pattern)
        pred = read_predictions(str(logs / pattern))
        np.testing.assert_array_equal(pred.y_prob, read_predictions(whole).y_prob)  # day-2 < day-10
    outputs = []
    for path in (logs / "day-*.parquet", logs / "day-*.csv", whole):
        assert main(["report", str(path), "--json", "--no-verdict"]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1] == outputs[2]
    with pytest.raises(FileNotFoundError, match=r"nothing-\*\.csv: no file matches this pattern"):
        read_statistics(str(logs / "nothing-*.csv"))
    with pytest.raises(ValueError, match="all of one type; it matches both CSV and Parquet"):
        read_statistics(str(logs / "day-*"))
    frame.drop(columns=["p_3"]).to_csv(logs / "day-99.csv", index=False)
    with pytest.raises(ValueError, match=r"day-99.csv has no column\(s\) p_3"):
        read_statistics(str(logs / "day-*.csv"))
    assert main(["report", str(logs / "none-*.parquet")]) == 2
    assert "no file matches this pattern" in capsys.readouterr().err
