"""bece.io.files: reading predictions from CSV, Parquet and NPZ."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

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
