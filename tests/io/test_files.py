"""bece._io.files: reading predictions from CSV, Parquet and NPZ."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from bece._io.files import column_names
from bece.io import example_path, read_predictions


def _frame(rng, k=3, n=50):
    prob = rng.dirichlet(np.ones(k), size=n)
    frame = pd.DataFrame(prob, columns=[f"p_{j}" for j in range(k)])
    frame.insert(0, "y_true", rng.integers(0, k, n))
    return frame


@pytest.mark.parametrize("fmt", ["csv", "parquet", "npz"])
def test_round_trip_top_label(tmp_path, rng, fmt):
    frame = _frame(rng)
    path = tmp_path / f"pred.{fmt}"
    if fmt == "csv":
        frame.to_csv(path, index=False, float_format="%.17g")
    elif fmt == "parquet":
        frame.to_parquet(path)
    else:
        np.savez(path, **{c: frame[c].to_numpy() for c in frame})
    pred = read_predictions(path)
    assert pred.kind == "top-label" and pred.y_pred is None
    np.testing.assert_array_equal(pred.y_true, frame["y_true"].to_numpy())
    np.testing.assert_array_equal(pred.y_prob, frame[["p_0", "p_1", "p_2"]].to_numpy())


def test_binary_and_triples(tmp_path):
    path = tmp_path / "b.csv"
    path.write_text("y_true,y_prob,extra\n0,0.2,x\n1,0.9,y\n")
    pred = read_predictions(path)
    assert pred.kind == "binary" and pred.y_prob.tolist() == [0.2, 0.9]
    path.write_text("y_true,y_pred,y_prob\n3,3,0.7\n1,2,0.6\n")
    pred = read_predictions(path)
    assert pred.kind == "triples" and pred.y_pred.tolist() == [3, 2]


@pytest.mark.parametrize(
    "text,message",
    [
        ("y_prob\n0.2\n", "no 'y_true' column"),
        ("y_true,score\n1,0.2\n", "no probability columns"),
        ("y_true,y_prob,p_0,p_1\n1,0.2,0.5,0.5\n", "both 'y_prob' and 'p_k'"),
        ("y_true,p_0,p_2\n1,0.5,0.5\n", "without gaps"),
        ("y_true,p_0\n1,1.0\n", "found only p_0"),
        ("y_true,y_prob\n1,\n0,0.3\n", "column 'y_prob' has 1 missing or NaN value"),
    ],
)
def test_bad_columns(tmp_path, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        read_predictions(path)


def test_missing_file_and_unknown_type(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        read_predictions(tmp_path / "nope.csv")
    other = tmp_path / "x.txt"
    other.write_text("y_true,y_prob\n1,0.5\n")
    with pytest.raises(ValueError, match="unknown file type '.txt'"):
        read_predictions(other)
    broken = tmp_path / "x.parquet"
    broken.write_bytes(b"not parquet")
    with pytest.raises(ValueError, match="cannot read"):
        read_predictions(broken)


def test_example_is_shipped_and_valid():
    pred = read_predictions(example_path())
    assert pred.y_prob.shape == (899, 10)
    np.testing.assert_allclose(pred.y_prob.sum(axis=1), 1.0, atol=1e-8)


# ------------------------------------------------ robustness (issue 14, catalogue J)
def test_a_field_longer_than_pyarrows_block_is_read(tmp_path):
    """Catalogue #27: a valid CSV with a field over 1 MiB (pyarrow's default
    block), here in an ignored column, is read; the block grows to hold it."""
    path = tmp_path / "long.csv"
    path.write_text("y_true,y_prob,note\n1,0.5," + "x" * (2 << 20) + "\n0,0.25,short\n")
    pred = read_predictions(path)
    assert pred.y_true.tolist() == [1, 0] and pred.y_prob.tolist() == [0.5, 0.25]


@pytest.mark.parametrize(
    "header,message",
    [
        ("y_true,y_prob,y_true", "column 'y_true' appears 2 times"),
        ("y_true,y_prob,y_prob", "column 'y_prob' appears 2 times"),
        ("y_true,y_pred,y_prob,y_pred", "column 'y_pred' appears 2 times"),
        ("y_true,p_0,p_1,p_1", "column 'p_1' appears twice"),
        ("y_true,p_0,p_1,p_01", "columns 'p_1' and 'p_01' both hold class 1"),
    ],
)
def test_duplicated_columns_are_an_error(tmp_path, header, message):
    """Catalogue #5: two columns of one name are not silently resolved."""
    path = tmp_path / "dup.csv"
    row = ",".join(["1", "1", "0.5", "0.5"][: header.count(",") + 1])
    path.write_text(f"{header}\n{row}\n")
    with pytest.raises(ValueError, match=message) as err:
        read_predictions(path)
    assert str(err.value).startswith(str(path))


def test_duplicated_parquet_columns_are_named(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_arrays([pa.array([1, 0]), pa.array([0.5, 0.2]), pa.array([0.1, 0.3])],
                                 names=["y_true", "y_prob", "y_prob"])
    pq.write_table(table, tmp_path / "dup.parquet")
    with pytest.raises(ValueError, match="column 'y_prob' appears 2 times"):
        read_predictions(tmp_path / "dup.parquet")
    # an ignored column may repeat
    table = table.rename_columns(["y_true", "y_prob", "y_true_"]).append_column("y_true_", pa.array([2, 3]))
    pq.write_table(table, tmp_path / "ok.parquet")
    assert read_predictions(tmp_path / "ok.parquet").y_true.tolist() == [1, 0]


@pytest.mark.parametrize(
    "arrays,message",
    [
        ({"y_true": np.ones((4, 1), int), "y_prob": np.full(4, 0.5)},
         r"array 'y_true' has shape \(4, 1\); an array of an NPZ file is one column"),
        ({"y_true": np.ones(4, int), "y_prob": np.full((4, 2), 0.5)},  # read as y_prob_0, y_prob_1
         r"no probability columns: need 'y_prob' .*found: y_true, y_prob_0, y_prob_1"),
        ({"y_true": np.ones(3, int), "y_prob": np.full(4, 0.5)},
         r"arrays of different lengths \('y_true' 3, 'y_prob' 4\)"),
        ({"y_true": np.ones(4, int), "p_0": np.full(4, 0.5), "p_1": np.full(5, 0.5)},
         r"'p_1' 5"),
    ],
)
def test_npz_array_errors_name_the_file(tmp_path, arrays, message):
    """Catalogue #28: errors about an NPZ file's arrays name the file."""
    path = tmp_path / "bad.npz"
    np.savez(path, **arrays)
    with pytest.raises(ValueError, match=message) as err:
        read_predictions(path)
    assert str(err.value).startswith(f"{path}: ")


def test_npz_value_errors_name_the_file_and_row(tmp_path):
    from bece.io import read_statistics

    path = tmp_path / "bad.npz"
    np.savez(path, y_true=np.array(["a", "b"]), y_prob=np.array([0.1, 0.2]))
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}: y_true holds the values "
                       r"\['a', 'b'\]; pass pos_label="):
        read_statistics(path)
    np.savez(path, y_true=np.array([0, 1, 1]), y_prob=np.array([0.1, 0.2, 1.5]))
    message = f"{path}: y_prob must lie in [0, 1]; 1 value(s) (row 2: 1.5)"
    with pytest.raises(ValueError, match=re.escape(message)):
        read_statistics(path)


def _dataset(tmp_path, name="out.parquet", parts=12):
    """A Dask-style dataset: part.0 ... part.11 (part.10 sorts before part.2 as
    text), Spark's marker and checksum files, a partition sub-folder."""
    frame = pd.DataFrame({"y_true": np.arange(3 * parts) % 2,
                          "y_prob": np.repeat(np.arange(parts) / parts, 3)})
    root = tmp_path / name
    (root / "x=1").mkdir(parents=True)
    for i in range(parts - 1):
        frame.iloc[3 * i:3 * i + 3].to_parquet(root / f"part.{i}.parquet")
    frame.iloc[-3:].to_parquet(root / "x=1" / "part.0.parquet")  # the last in natural order
    (root / "_SUCCESS").write_text("")
    (root / ".part.0.parquet.crc").write_text("not parquet")
    (root / "_metadata").write_text("not parquet either")
    return root, frame


def test_parquet_dataset_directory_is_read_in_natural_order(tmp_path):
    """Catalogue #29: a directory of Parquet files (Spark/Dask output) is read,
    part.2 before part.10, bookkeeping files skipped."""
    from bece._io.stream import parquet_parts

    root, frame = _dataset(tmp_path)
    names = [p.relative_to(root).as_posix() for p in parquet_parts(root)]
    assert names == [f"part.{i}.parquet" for i in range(11)] + ["x=1/part.0.parquet"]
    pred = read_predictions(root)
    assert pred.kind == "binary" and pred.source == str(root)
    np.testing.assert_array_equal(pred.y_true, frame["y_true"])
    np.testing.assert_array_equal(pred.y_prob, frame["y_prob"])


def test_a_directory_that_is_not_a_dataset(tmp_path):
    plain = tmp_path / "adir.csv"
    plain.mkdir()
    (plain / "notes.csv").write_text("y_true,y_prob\n1,0.5\n")
    with pytest.raises(ValueError, match=r"adir.csv: is a directory without Parquet files"):
        read_predictions(plain)
    root, _ = _dataset(tmp_path)
    pd.DataFrame({"y_true": [1], "score": [0.5]}).to_parquet(root / "part.99.parquet")
    with pytest.raises(ValueError, match=r"part part.99.parquet has no column\(s\) y_prob"):
        read_predictions(root)


def test_a_2d_npz_array_reads_as_k_columns(tmp_path, rng):
    """An NPZ array of shape (n, K) is the columns NAME_0 ... NAME_(K-1): an
    array 'p' of class probabilities is read as p_0 ... p_(K-1), the same
    predictions as one 1-D array per column; 3-D arrays are refused by name."""
    prob = rng.dirichlet(np.ones(4), size=50)
    y = rng.integers(0, 4, size=50)
    np.savez(tmp_path / "whole.npz", y_true=y, p=prob)
    np.savez(tmp_path / "split.npz", y_true=y, **{f"p_{k}": prob[:, k] for k in range(4)})
    assert column_names(tmp_path / "whole.npz") == ["y_true", "p_0", "p_1", "p_2", "p_3"]
    a, b = read_predictions(tmp_path / "whole.npz"), read_predictions(tmp_path / "split.npz")
    np.testing.assert_array_equal(a.y_prob, b.y_prob)
    np.testing.assert_array_equal(a.y_true, b.y_true)
    np.savez(tmp_path / "cube.npz", y_true=y, p=prob[:, :, None])
    with pytest.raises(ValueError, match=r"array 'p' has shape \(50, 4, 1\)"):
        read_predictions(tmp_path / "cube.npz", y_prob_col="p")
