"""``bece compare --model smooth``."""

from __future__ import annotations

import json

import numpy as np
import pytest

import bece
from bece._cli import main


def _files(tmp_path, n=300):
    rng = np.random.default_rng(0)
    t = rng.uniform(0.05, 0.95, size=n)
    y = (rng.uniform(size=n) < t).astype(int)
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    for path, p in ((a, t), (b, t**0.6)):
        path.write_text("y_true,y_prob\n" + "\n".join(f"{u},{float(v)!r}" for u, v in zip(y, p)))
    return y, t, t**0.6, a, b


def test_compare_smooth_json_and_text_match_the_library(tmp_path, capsys):
    y, pa, pb, a, b = _files(tmp_path)
    lib = bece.compare(y, pa, pb, n_bins=10, num_samples=300, seed=4, model="smooth")
    code = main(["compare", str(a), str(b), "--model", "smooth", "--n-bins", "10", "--samples",
                 "300", "--seed", "4", "--json"])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    d = json.loads(out)
    assert d["model"] == "smooth" and d["n"] == 300 and d["n_bins"] == 10
    assert d["diff"]["mean"] == lib.mean and d["prob_a_better"] == lib.prob_a_better
    assert d["a"]["ece"]["mean"] == lib.a.mean
    # each model averaged with exact calibration, as bece.compare's default
    assert d["a"]["prob_calibrated"] == lib.a.prob_calibrated and d["b"]["prior_odds"] == 0.02
    code = main(["compare", str(a), str(b), "--model", "smooth", "--n-bins", "10", "--samples",
                 "300", "--seed", "4"])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    assert "smooth calibration curves (Laplace), paired" in out
    assert f"each averaged with ECE 0 by P(calibrated): A {lib.a.prob_calibrated:.3f}" in out
    assert f"{lib.mean:+.4f}" in out


def test_compare_default_model_is_smooth(tmp_path, capsys):
    *_, a, b = _files(tmp_path, n=100)
    assert main(["compare", str(a), str(b), "--samples", "200", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["model"] == "smooth"


def test_compare_unknown_model_exits_2(tmp_path, capsys):
    *_, a, b = _files(tmp_path, n=50)
    try:
        code = main(["compare", str(a), str(b), "--model", "literal"])
    except SystemExit as exc:  # argparse's own exit
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and "invalid choice: 'literal'" in err


# ------------------------------------------------ large files: joint statistics in chunks
def _large(tmp_path, n=2600):
    import pandas as pd

    rng = np.random.default_rng(1)
    t = rng.beta(2, 2, size=n)
    y = (rng.uniform(size=n) < t).astype(int)
    pa, pb = t, t**0.7
    a, b = tmp_path / "a.csv", tmp_path / "b.parquet"
    pd.DataFrame({"y_true": y, "y_prob": pa}).to_csv(a, index=False, float_format="%.17g")
    pd.DataFrame({"y_true": y, "y_prob": pb}).to_parquet(b, row_group_size=700)
    return y, pa, pb, a, b


def test_compare_streams_large_files_into_joint_statistics(tmp_path, capsys):
    """Above 2,000 rows `bece compare` reads both files in chunks into
    PairedStats; its numbers equal the library's on the whole arrays (the
    smooth model's fine grid; the binned model's joint table) to float64
    rounding of the sums."""
    y, pa, pb, a, b = _large(tmp_path)
    for model in ("smooth", "binned"):
        code = main(["compare", str(a), str(b), "--model", model, "--n-bins", "10", "--samples",
                     "300", "--seed", "4", "--json"])
        out, err = capsys.readouterr()
        assert code == 0 and err == ""
        d = json.loads(out)
        lib = bece.compare(y, pa, pb, n_bins=10, num_samples=300, seed=4, model=model)
        assert d["model"] == model and d["n"] == y.size and d["n_bins"] == 10
        assert d["diff"]["mean"] == pytest.approx(lib.mean, rel=1e-8, abs=1e-12)
        assert d["diff"]["interval"] == pytest.approx(list(lib.interval(0.9)), rel=1e-8, abs=1e-12)
        assert d["a"]["plugin_ece"] == pytest.approx(lib.a.plugin, rel=1e-12)


def test_compare_large_files_that_differ_exit_2(tmp_path, capsys):
    import pandas as pd

    y, pa, pb, a, b = _large(tmp_path)
    y2 = y.copy()
    y2[[2100, 2500]] = 1 - y2[[2100, 2500]]
    c = tmp_path / "c.parquet"
    pd.DataFrame({"y_true": y2, "y_prob": pb}).to_parquet(c, row_group_size=700)
    code = main(["compare", str(a), str(c)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert f"{a} and {c} are not the same test set: y_true differs in 2 of 2600 rows " \
           "(first at row 2100)" in err
    pd.DataFrame({"y_true": y[:2400], "y_prob": pb[:2400]}).to_parquet(c, row_group_size=700)
    code = main(["compare", str(a), str(c), "--model", "binned"])
    err = capsys.readouterr().err
    assert code == 2 and f"{a} has 2600 rows but {c} has 2400" in err


def test_compare_streams_large_files_with_quantile_bins(tmp_path, capsys):
    """--binning quantile: each file's edges from a first pass, as the library
    places them on the whole column; then the joint statistics."""
    y, pa, pb, a, b = _large(tmp_path)
    for model in ("binned", "smooth"):
        code = main(["compare", str(a), str(b), "--model", model, "--binning", "quantile",
                     "--n-bins", "8", "--samples", "200", "--seed", "2", "--json"])
        out, err = capsys.readouterr()
        assert code == 0 and err == ""
        d = json.loads(out)
        lib = bece.compare(y, pa, pb, n_bins=8, binning="quantile", num_samples=200, seed=2,
                           model=model)
        assert d["diff"]["interval"] == pytest.approx(list(lib.interval(0.9)), rel=1e-8, abs=1e-12)
        assert d["b"]["plugin_ece"] == pytest.approx(lib.b.plugin, rel=1e-12)
