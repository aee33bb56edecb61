"""The bece command: output, JSON format and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import bece
from bece.cli import main
from bece.io import example_path, read_predictions


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_report_on_shipped_example(capsys):
    code, out, err = run(capsys, "report")
    assert code == 0 and err == ""
    assert "Bayesian ECE" in out and "90% interval" in out and "plug-in ECE" in out
    assert "899" in out and out.count("\n") > 15


def test_json_matches_library(capsys):
    code, out, _ = run(capsys, "report", "--json", "--n-bins", "10", "--samples", "2000", "--seed", "3")
    assert code == 0
    d = json.loads(out)
    assert set(d) == {"n", "n_bins", "plugin_ece", "ece", "bins"}
    assert set(d["ece"]) == {"mean", "std", "prob", "interval"}
    assert set(d["bins"][0]) == {"lo", "hi", "count", "accuracy", "confidence"}
    pred = read_predictions(example_path())
    r = bece.bayesian_ece(pred.y_true, pred.y_prob, n_bins=10, num_samples=2000, seed=3)
    assert d["n"] == 899 and d["n_bins"] == 10 and len(d["bins"]) == 10
    assert d["ece"]["mean"] == r.mean and d["ece"]["interval"] == list(r.interval(0.9))
    assert d["plugin_ece"] == r.plugin and d["ece"]["prob"] == 0.9
    assert sum(b["count"] for b in d["bins"]) == 899
    empty = [b for b in d["bins"] if b["count"] == 0]
    assert empty and all(b["accuracy"] is None for b in empty)


def test_binary_csv_file(tmp_path, capsys, rng):
    p = rng.uniform(size=300)
    y = (rng.uniform(size=300) < p).astype(int)
    path = tmp_path / "binary.csv"
    path.write_text("y_true,y_prob\n" + "\n".join(f"{a},{float(b)!r}" for a, b in zip(y, p)))
    code, out, _ = run(capsys, "report", str(path), "--json")
    assert code == 0
    assert json.loads(out)["plugin_ece"] == pytest.approx(bece.expected_calibration_error(y, p), abs=1e-15)


@pytest.mark.parametrize(
    "content,argv,message",
    [
        (None, ["report", "missing.csv"], "no such file"),
        ("y_true,score\n1,0.5\n", ["report", "{f}"], "no probability columns"),
        ("y_true,y_prob\n1,1.5\n", ["report", "{f}"], "y_prob must lie in [0, 1]"),
        ("y_true,y_prob\n1,nan\n", ["report", "{f}"], "1 missing or NaN value"),
        ("y_true,y_prob\n2,0.5\n", ["report", "{f}"], "y_true must hold labels in 0..1"),
        ("y_true,y_prob\n1,0.5\n", ["report", "{f}", "--n-bins", "0"], "n_bins must be a positive"),
        ("y_true,y_prob\n1,0.5\n", ["report", "{f}", "--samples", "-3"], "num_samples must be"),
        ("y_true,y_prob\n1,0.5\n", ["report", "{f}", "--n-bins", "ten"], "invalid int value"),
        ("y_true,y_prob\n1,0.5\n", ["report", "{f}", "--bogus"], "unrecognized arguments"),
        ("y_true,y_prob\n1,0.5\n", ["explain"], "invalid choice"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, content, argv, message):
    f = tmp_path / "in.csv"
    if content is not None:
        f.write_text(content)
    argv = [a.replace("{f}", str(f)) for a in argv]
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_installed_command_runs_as_a_process(tmp_path):
    # the console script a user types; also checks there is no traceback on error
    exe = [sys.executable, "-m", "bece.cli"]
    ok = subprocess.run(exe + ["report", "--json", "--samples", "500"], capture_output=True, text=True)
    assert ok.returncode == 0 and json.loads(ok.stdout)["n"] == 899
    bad = subprocess.run(exe + ["report", str(tmp_path / "none.parquet")], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.startswith("bece: error:") and "Traceback" not in bad.stderr


def test_npz_with_numpy_arrays(tmp_path, capsys, rng):
    prob = rng.dirichlet(np.ones(4), size=100)
    y = rng.integers(0, 4, 100)
    np.savez(tmp_path / "p.npz", y_true=y, **{f"p_{k}": prob[:, k] for k in range(4)})
    code, out, _ = run(capsys, "report", str(tmp_path / "p.npz"), "--json")
    assert code == 0 and json.loads(out)["plugin_ece"] == pytest.approx(
        bece.expected_calibration_error(y, prob), abs=1e-15
    )
