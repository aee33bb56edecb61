"""bece.io: regression forecast files (column conventions, detection, reading)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bece._io.files import column_names, read_forecasts, read_predictions
from bece._io.forecast_columns import detect_kind, select_forecast_columns


def _write(frame: pd.DataFrame, path):
    suffix = path.suffix
    if suffix == ".csv":
        frame.to_csv(path, index=False, float_format="%.17g")
    elif suffix == ".parquet":
        frame.to_parquet(path)
    else:
        np.savez(path, **{c: frame[c].to_numpy() for c in frame})
    return path


# ------------------------------------------------------------ column conventions
def test_quantile_columns_sorted_by_level_whatever_their_order():
    cols = select_forecast_columns(["y", "q_0.9", "id", "q_.1", "q_5e-1", "q_low"], "f")
    assert cols.form == "quantiles" and cols.y == "y"
    assert cols.quantiles == ("q_.1", "q_5e-1", "q_0.9")  # q_low and id are other columns
    np.testing.assert_array_equal(cols.levels, [0.1, 0.5, 0.9])
    assert cols.forecast == ["q_.1", "q_5e-1", "q_0.9"]


def test_sample_and_gaussian_columns():
    cols = select_forecast_columns(["s_1", "y", "s_id", "s_0", "s_2"], "f")
    assert cols.form == "samples" and cols.samples == ("s_0", "s_1", "s_2")
    cols = select_forecast_columns(["target", "mu", "sigma"], "f", y_col="target", mean_col="mu",
                                   std_col="sigma")
    assert (cols.form, cols.y, cols.mean, cols.std) == ("gaussian", "target", "mu", "sigma")
    cols = select_forecast_columns(["y", "Q0.5", "Q0.1", "q_0.3"], "f", quantile_prefix="Q")
    assert cols.quantiles == ("Q0.1", "Q0.5")  # q_0.3 is another column under this prefix


@pytest.mark.parametrize(
    "names, message",
    [
        (["mean", "std"], "f: no target column 'y' (found: mean, std)"),
        (["y", "z"], "f: no forecast columns (found: y, z)"),
        (["y", "y", "mean", "std"], "column 'y' appears 2 times"),
        (["y", "mean"], "has 'mean' but no 'std' column"),
        (["y", "std"], "has 'std' but no 'mean' column"),
        (["y", "q_0.5", "q_0.50"], "columns 'q_0.5' and 'q_0.50' both hold level 0.5"),
        (["y", "q_0.5", "q_0.5"], "column 'q_0.5' appears twice"),
        (["y", "q_50"], "names level 50.0; quantile levels must lie in (0, 1) (levels are fractions"),
        (["y", "q_0"], "names level 0.0; quantile levels must lie in (0, 1)"),
        (["y", "q_1"], "names level 1.0"),
        (["y", "q_-0.5"], "column 'q_-0.5' is not a quantile column name"),
        (["y", "q_0.5x"], "'0.5x' after the prefix 'q_' is not a level"),
        (["y", "s_0", "s_2"], "sample columns must be s_0 ... s_{S-1} without gaps, found s_0, s_2"),
        (["y", "s_1"], "without gaps, found s_1"),
        (["y", "s_1", "s_01"], "columns 's_1' and 's_01' both hold sample 1"),
        (["y", "s_1.5"], "'1.5' after the prefix 's_' is not an index"),
        (["y", "mean", "std", "s_0"], "several forecast forms (gaussian: mean, std; samples: s_0)"),
    ],
)
def test_bad_columns_are_named(names, message):
    with pytest.raises(ValueError) as info:
        select_forecast_columns(names, "f")
    assert message in str(info.value) and str(info.value).startswith("f: ")


@pytest.mark.parametrize(
    "names, kind",
    [
        (["y_true", "y_prob"], "classifier"),
        (["y_true", "p_0", "p_1", "mean"], "classifier"),  # other columns are ignored
        (["y", "mean", "std"], "regression"),
        (["y", "q_0.1"], "regression"),
        (["y", "s_0"], "regression"),
        (["y_prob"], "classifier"),  # the classifier reader names the missing y_true
        (["y", "mean"], "regression"),  # the forecast reader names the missing std
        (["mean", "std"], "regression"),
    ],
)
def test_detect_kind(names, kind):
    assert detect_kind(names, "f") == kind


@pytest.mark.parametrize(
    "names, message",
    [
        (["a", "b"], "no probability columns of a classifier and no regression forecast columns "
                     "(found: a, b); expected 'y_true' with 'y_prob'"),
        (["y_true", "score"], "(found: y_true, score)"),
        (["y_true", "y_prob", "y", "mean", "std"], "holds both a classifier's columns"),
        (["y_prob", "y"], "no probability columns of a classifier"),  # hints of both kinds
    ],
)
def test_detect_kind_refuses_neither_and_both(names, message):
    with pytest.raises(ValueError) as info:
        detect_kind(names, "f")
    assert message in str(info.value)


def test_detect_kind_follows_the_column_options():
    assert detect_kind(["target", "mu", "sigma"], "f", y_col="target", mean_col="mu",
                       std_col="sigma") == "regression"
    assert detect_kind(["y", "draw0"], "f", sample_prefix="draw") == "regression"
    with pytest.raises(ValueError, match="sample_prefix must be a non-empty string"):
        detect_kind(["y"], "f", sample_prefix="")


# ------------------------------------------------------------------- reading
@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".npz"])
def test_read_forecasts_round_trip(tmp_path, rng, suffix):
    n = 40
    y, mean, std = rng.normal(size=n), rng.normal(size=n), rng.uniform(0.5, 2, size=n)
    q = np.sort(rng.normal(size=(n, 3)), axis=1)
    s = rng.normal(size=(n, 4))
    g = read_forecasts(_write(pd.DataFrame({"y": y, "mean": mean, "std": std}), tmp_path / f"g{suffix}"))
    assert g.form == "gaussian" and g.source == str(tmp_path / f"g{suffix}")
    for got, want in ((g.y, y), (g.mean, mean), (g.std, std)):
        assert got.dtype == np.float64
        np.testing.assert_array_equal(got, want)
    # columns in the file out of level order: read sorted by level
    frame = pd.DataFrame({"q_0.9": q[:, 2], "y": y, "q_0.1": q[:, 0], "q_0.5": q[:, 1]})
    r = read_forecasts(_write(frame, tmp_path / f"q{suffix}"))
    np.testing.assert_array_equal(r.quantiles, q)
    np.testing.assert_array_equal(r.columns.levels, [0.1, 0.5, 0.9])
    frame = pd.DataFrame({"y": y, **{f"s_{i}": s[:, i] for i in range(4)}})
    r = read_forecasts(_write(frame, tmp_path / f"s{suffix}"))
    np.testing.assert_array_equal(r.samples, s)
    assert r.mean is None and r.quantiles is None
    assert column_names(tmp_path / f"s{suffix}") == ["y", "s_0", "s_1", "s_2", "s_3"]


def test_integer_targets_are_read_as_float64(tmp_path):
    path = tmp_path / "f.csv"
    path.write_text("y,mean,std\n1,0.5,1\n2,1.5,2\n")
    f = read_forecasts(path)
    assert f.y.dtype == np.float64 and f.std.dtype == np.float64
    np.testing.assert_array_equal(f.y, [1.0, 2.0])


def test_read_forecasts_from_a_parquet_dataset(tmp_path, rng):
    root = tmp_path / "out.parquet"
    root.mkdir()
    parts = [pd.DataFrame({"y": rng.normal(size=5), "mean": 0.0, "std": 1.0, "extra": "x"})
             for _ in range(2)]
    for i, part in enumerate(parts):
        part.to_parquet(root / f"part-{i}.parquet")
    f = read_forecasts(root)
    np.testing.assert_array_equal(f.y, np.concatenate([p["y"] for p in parts]))
    assert column_names(root) == ["y", "mean", "std", "extra"]


@pytest.mark.parametrize(
    "content, message",
    [
        ("y,mean,std\n1,0,1\n2,0,-1\n", "f.csv: column 'std' must be > 0; 1 value(s) (row 1: -1.0)"),
        ("y,mean,std\n1,0,1\n2,0,0\n", "column 'std' must be > 0"),
        ("y,mean,std\n1,0,1\n2,,1\n", "f.csv: column 'mean' has 1 missing or NaN value(s)"),
        ("y,mean,std\n1,0,1\n2,inf,1\n", "f.csv: column 'mean' contains infinity: 1 value(s) (row 1: inf)"),
        ("y,mean,std\na,0,1\n", "f.csv: column 'y' must hold numbers, got text"),
        ("y,mean,std\ntrue,0,1\n", "column 'y' must hold numbers, got dtype bool"),
        ("y,q_0.1,q_0.9\n1,0,1\n2,3,2\n",
         "f.csv: quantiles must not decrease with the level; row 1 has q_0.1 = 3.0 above q_0.9 = 2.0"),
    ],
)
def test_bad_values_name_the_column(tmp_path, content, message):
    path = tmp_path / "f.csv"
    path.write_text(content)
    with pytest.raises(ValueError) as info:
        read_forecasts(path)
    assert message in str(info.value)


def test_nan_in_npz_names_column_and_row(tmp_path):
    np.savez(tmp_path / "f.npz", y=np.array([1.0, 2.0, 3.0]), s_0=np.array([0.0, np.nan, 1.0]))
    with pytest.raises(ValueError, match=r"f\.npz: column 's_0' contains NaN: 1 value\(s\) \(row 1: nan\)"):
        read_forecasts(tmp_path / "f.npz")


def test_column_names_errors_match_read_predictions(tmp_path):
    for name in ("missing.csv", "f.txt"):
        if name == "f.txt":
            (tmp_path / name).write_text("y\n1\n")
        with pytest.raises((ValueError, FileNotFoundError)) as a:
            column_names(tmp_path / name)
        with pytest.raises((ValueError, FileNotFoundError)) as b:
            read_predictions(tmp_path / name)
        assert str(a.value) == str(b.value)
    (tmp_path / "plain").mkdir()
    with pytest.raises(ValueError, match="is a directory without Parquet files"):
        column_names(tmp_path / "plain")
