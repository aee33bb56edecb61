"""bece recalibrate: fit on the validation file, the test file before and after."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import special

import bece
from bece._cli import main
from bece.io import read_predictions

S = "1000"  # joint draws: the checks compare with the library draw for draw


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _write(path, y, scores):
    cols = {"y_prob": scores} if scores.ndim == 1 else {f"p_{k}": scores[:, k]
                                                         for k in range(scores.shape[1])}
    np.savez(path, y_true=y, **cols)
    return str(path)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    rng = np.random.default_rng(7)
    z = rng.normal(scale=3.0, size=(800, 3))
    p = special.softmax(z / 2.0, axis=1)  # labels at T = 2: the logits are over-confident
    y = (rng.uniform(size=(800, 1)) > p.cumsum(axis=1)).sum(axis=1)
    d = tmp_path_factory.mktemp("recal")
    return {
        "z": z, "y": y,
        "val": _write(d / "val.npz", y[:400], z[:400]),
        "test": _write(d / "test.npz", y[400:], z[400:]),
        "val_p": _write(d / "val_p.npz", y[:400], special.softmax(z[:400], axis=1)),
        "test_p": _write(d / "test_p.npz", y[400:], special.softmax(z[400:], axis=1)),
    }


def test_text_and_json_match_the_library(files, capsys):
    z, y = files["z"], files["y"]
    args = ("recalibrate", files["val"], files["test"], "--logits", "--samples", S, "--seed", "2")
    code, out, err = run(capsys, *args)
    assert code == 0 and err == ""
    r = bece.recalibrate(y[:400], z[:400], y[400:], z[400:], input="logits", num_samples=1000,
                         seed=2)
    for word in ("temperature scaling", "before", "after", "after - before", "P(ECE_after < ",
                 "Verdict", f"T = {r.calibrator.temperature_:.4f}", "fitted on ",
                 "val.npz, scored on ", "validation    400 predictions"):
        assert word in out, word
    assert f"{r.before.mean:.4f}" in out and f"{r.after.mean:.4f}" in out
    assert r.after.model == "smooth" and "the smooth calibration-curve model (the default)" in out
    assert "binned" not in out
    assert out.rstrip("\n").split("\n", 1)[1] == str(r)     # a header, then the result's text
    lo, hi = r.interval(0.9)
    assert f"[{lo:+.4f}, {hi:+.4f}]" in out
    code, out, _ = run(capsys, *args, "--json")
    d = json.loads(out)
    assert code == 0 and d["method"] == "temperature" and d["seed"] == 2
    assert d["calibrator"] == {"name": "TemperatureScaling",
                               "params": d["calibrator"]["params"]}
    assert d["calibrator"]["params"]["temperature_"] == r.calibrator.temperature_
    assert d["before"]["ece"]["mean"] == r.before.mean and d["after"]["ece"]["mean"] == r.after.mean
    assert d["before"]["nll"] == r.nll_before and d["after"]["nll"] == r.nll_after
    assert d["diff"]["interval"] == [lo, hi] and d["prob_after_better"] == r.prob_better
    assert (d["val"]["n"], d["test"]["n"], d["test"]["n_bins"]) == (400, 400, 15)


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".npz"])
def test_out_file_reads_back_exactly(files, tmp_path, capsys, suffix):
    out_path = tmp_path / f"recal{suffix}"
    code, out, _ = run(capsys, "recalibrate", files["val_p"], files["test_p"], "--method", "vector",
                       "--samples", S, "--out", str(out_path))
    assert code == 0 and f"written to {out_path}" in out
    z, y = files["z"], files["y"]
    r = bece.recalibrate(y[:400], special.softmax(z[:400], axis=1), y[400:],
                         special.softmax(z[400:], axis=1), method="vector", num_samples=1000)
    back = read_predictions(out_path)
    np.testing.assert_array_equal(back.y_true, y[400:])
    np.testing.assert_array_equal(back.y_prob, r.y_prob)  # float64 in full, CSV included
    code, out, _ = run(capsys, "report", str(out_path), "--json", "--samples", S)
    assert code == 0 and json.loads(out)["plugin_ece"] == pytest.approx(r.after.plugin, abs=1e-15)


def test_binary_file_and_plot(tmp_path, capsys):
    rng = np.random.default_rng(3)
    s = rng.normal(scale=3.0, size=600)
    y = (rng.uniform(size=600) < special.expit(s / 2)).astype(int)
    p = special.expit(s)
    val, test = _write(tmp_path / "v.npz", y[:300], p[:300]), _write(tmp_path / "t.npz", y[300:], p[300:])
    png = tmp_path / "fig.png"
    code, out, err = run(capsys, "recalibrate", "--method", "beta", val, test, "--samples", S,
                         "--plot", str(png), "--out", str(tmp_path / "o.csv"))
    assert code == 0 and err == "", err
    assert "beta calibration" in out and "binary: y_prob = P(y = 1)" in out
    assert png.stat().st_size > 10_000
    back = read_predictions(tmp_path / "o.csv")
    assert back.y_prob.ndim == 1  # P(y = 1), as the input
    r = bece.recalibrate(y[:300], p[:300], y[300:], p[300:], method="beta", num_samples=1000)
    np.testing.assert_array_equal(back.y_prob, r.y_prob[:, 1])


def test_help_lists_the_methods(capsys):
    code, out, _ = run(capsys, "recalibrate", "--help")
    assert code == 0
    for m in ("temperature", "vector", "matrix", "dirichlet", "platt", "isotonic", "beta", "--out"):
        assert m in out


@pytest.mark.parametrize("extra, message", [
    (["--method", "temp"], "invalid choice: 'temp'"),
    (["--method", "platt"], "--method platt recalibrates a binary classifier"),
    (["--out", "x.txt"], "--out x.txt: unknown file type '.txt'"),
    (["--out", "/no/such/dir/x.csv"], "directory '/no/such/dir' does not exist"),
    (["--row-sum-tol", "1e-3"], "--row-sum-tol does not apply to recalibrate"),
])
def test_bad_usage_exits_2_with_one_line(files, capsys, extra, message):
    code, out, err = run(capsys, "recalibrate", files["val_p"], files["test_p"], *extra)
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err, err


def test_bad_files_name_the_file(files, tmp_path, capsys):
    # logits without --logits: the file, and the hint
    code, _, err = run(capsys, "recalibrate", files["val"], files["test"])
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"bece: error: {files['val']}: ") and "pass --logits" in err
    # different classes
    two = _write(tmp_path / "two.npz", np.array([0, 1]), np.array([[0.2, 0.8], [0.6, 0.4]]))
    code, _, err = run(capsys, "recalibrate", files["val_p"], two)
    assert code == 2 and "3 class columns" in err and "2 class columns" in err
    # a label outside the columns in the test file: that file and row
    y = files["y"][400:].copy()
    y[5] = 7
    bad = _write(tmp_path / "bad.npz", y, special.softmax(files["z"][400:], axis=1))
    code, _, err = run(capsys, "recalibrate", files["val_p"], bad)
    assert code == 2 and err.count("\n") == 1
    assert f"{bad}: y_true must hold labels in 0..2" in err and "row 5: 7" in err
    # a y_pred column (triples) is refused
    np.savez(tmp_path / "tri.npz", y_true=y, y_pred=y, y_prob=np.full(400, 0.5))
    code, _, err = run(capsys, "recalibrate", str(tmp_path / "tri.npz"), files["test_p"])
    assert code == 2 and "predicted-label column" in err


def test_a_calibrator_warning_is_one_line_in_the_commands_words(tmp_path):
    """Platt scaling on probabilities with exact 0s and 1s warns (it reads them
    inside [eps, 1 - eps]): the command prints it as one 'bece: warning:' line
    naming --logits, not Python's two-line form naming input='logits'."""
    import subprocess
    import sys

    import pandas as pd

    rng = np.random.default_rng(0)
    for name in ("val", "test"):
        p = np.round(rng.uniform(size=400), 1)  # a grid of 0.1: some exactly 0 and 1
        y = (rng.uniform(size=400) < p).astype(int)
        pd.DataFrame({"y_true": y, "y_prob": p}).to_csv(tmp_path / f"{name}.csv", index=False)
    r = subprocess.run([sys.executable, "-m", "bece", "recalibrate", "--method", "platt",
                        str(tmp_path / "val.csv"), str(tmp_path / "test.csv"), "--samples", "500"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("bece: warning: PlattScaling:"), r.stderr
    assert "--logits" in lines[0] and "input=" not in lines[0]


def test_fit_errors_speak_the_command_line(capsys, tmp_path, rng):
    """A calibrator's error is told in the command's words: a 3-row
    VAL_FILE is too small for vector scaling's 5-fold cross-validation (not
    'pass reg_lambda', an option the command does not have), and rounded
    probability rows are not told to use --row-sum-tol, which recalibrate
    refuses."""
    logits = rng.normal(size=(53, 3))
    y = rng.integers(0, 3, size=53)
    cols = "y_true,p_0,p_1,p_2\n"
    val, test = tmp_path / "val.csv", tmp_path / "test.csv"
    val.write_text(cols + "".join(f"{y[i]},{','.join(f'{v:.6f}' for v in logits[i])}\n"
                                  for i in range(3)))
    test.write_text(cols + "".join(f"{y[i]},{','.join(f'{v:.6f}' for v in logits[i])}\n"
                                   for i in range(3, 53)))
    code = main(["recalibrate", "--method", "vector", "--logits", str(val), str(test),
                 "--samples", "200"])
    err = capsys.readouterr().err
    assert code == 2 and f"{val}:" in err and "at least 5 rows" in err
    assert "--method temperature" in err and "pass reg_lambda" not in err
    prob = np.full((3, 3), 0.333334)  # rows summing to 1.000002
    val.write_text(cols + "".join(f"{y[i]},{','.join(f'{v:.6f}' for v in prob[i])}\n"
                                  for i in range(3)))
    code = main(["recalibrate", "--method", "vector", str(val), str(test), "--samples", "200"])
    err = capsys.readouterr().err
    assert code == 2 and "--row-sum-tol" not in err and "--logits" in err
