"""The bece command: output, JSON format and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import bece
from bece._cli import main
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
    code, out, _ = run(capsys, "report", "--json", "--n-bins", "10", "--samples", "2000", "--seed", "3",
                       "--model", "binned")
    assert code == 0
    d = json.loads(out)
    assert set(d) == {"model", "input_kind", "seed", "bece_version", "n", "n_bins", "plugin_ece",
                      "plugin_bias", "ece", "bins", "verdict", "calibration_test"}
    assert (d["model"], d["input_kind"], d["seed"]) == ("binned", "top-label", 3)
    assert d["bece_version"] == bece._cli.version()
    assert set(d["ece"]) == {"mean", "std", "prob", "interval", "upper_bound"}
    # neutral names, and the classifier's words for class probabilities
    assert set(d["bins"][0]) == {"lo", "hi", "count", "observed", "predicted", "accuracy",
                                 "confidence"}
    pred = read_predictions(example_path())
    r = bece.bayesian_ece(pred.y_true, pred.y_prob, n_bins=10, num_samples=2000, seed=3, model="binned")
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
    exe = [sys.executable, "-m", "bece"]
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


# ------------------------------------------------------------------ --plot, compare
def _two_models(tmp_path, rng, n=400):
    t = rng.uniform(size=n)
    y = (rng.uniform(size=n) < t).astype(int)
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    for path, p in ((a, t), (b, t**0.6)):
        path.write_text("y_true,y_prob\n" + "\n".join(f"{u},{float(v)!r}" for u, v in zip(y, p)))
    return y, t, t**0.6, a, b


def test_report_plot_writes_the_diagram(tmp_path, capsys):
    png = tmp_path / "diagram.png"
    code, out, err = run(capsys, "report", "--samples", "500", "--plot", str(png))
    assert code == 0 and err == ""
    assert png.stat().st_size > 10_000 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"figure written to {png}" in out
    svg = tmp_path / "diagram.svg"
    code, out, _ = run(capsys, "report", "--json", "--samples", "500", "--plot", str(svg))
    assert code == 0 and json.loads(out)["n"] == 899  # stdout stays one JSON object
    assert "<svg" in svg.read_text()


@pytest.mark.parametrize(
    "target,message",
    [("out.xyz", "unknown image type '.xyz'"), ("out", "unknown image type '(none)'"),
     ("missing/out.png", "does not exist")],
)
def test_plot_path_checked_before_any_work(tmp_path, capsys, target, message):
    for command in (["report"], ["compare", "a.csv", "b.csv"]):
        code, out, err = run(capsys, *command, "--plot", str(tmp_path / target))
        assert code == 2 and out == "" and message in err and err.count("\n") == 1


def test_compare_text_and_json_match_the_library(tmp_path, capsys, rng):
    y, pa, pb, a, b = _two_models(tmp_path, rng)
    from bece._binned.compare import binned_compare as compare

    lib = compare(y, pa, pb, n_bins=10, num_samples=2000, seed=4)
    code, out, err = run(capsys, "compare", str(a), str(b), "--n-bins", "10", "--samples", "2000",
                         "--seed", "4", "--json", "--model", "binned")
    assert code == 0 and err == ""
    d = json.loads(out)
    assert set(d) == {"model", "input_kind", "seed", "bece_version", "n", "n_bins", "a", "b",
                      "diff", "prob_a_better"}
    assert d["n"] == 400 and d["n_bins"] == 10
    assert d["a"]["source"] == str(a) and d["b"]["source"] == str(b)
    assert d["a"]["plugin_ece"] == pytest.approx(bece.expected_calibration_error(y, pa, n_bins=10), abs=1e-15)
    assert d["a"]["ece"]["mean"] == lib.a.mean and d["b"]["ece"]["interval"] == list(lib.b.interval(0.9))
    assert d["diff"]["mean"] == lib.mean and d["diff"]["interval"] == list(lib.interval(0.9))
    assert d["prob_a_better"] == lib.prob_a_better
    code, out, err = run(capsys, "compare", str(a), str(b), "--n-bins", "10", "--samples", "2000",
                         "--seed", "4", "--model", "binned")
    assert code == 0 and err == ""
    lo, hi = lib.interval(0.9)
    # beyond 0.999 the text says so (2,000 draws tell no finer than 1/2000)
    shown = "> 0.999" if lib.prob_a_better > 0.999 else f"= {lib.prob_a_better:.3f}"
    assert f"[{lo:+.4f}, {hi:+.4f}]" in out and f"P(ECE_A < ECE_B) {shown}" in out
    assert f"{lib.a.mean:.4f}" in out and f"{lib.b.plugin:.4f}" in out and str(a) in out


def test_compare_plot(tmp_path, capsys, rng):
    *_, a, b = _two_models(tmp_path, rng)
    png = tmp_path / "cmp.png"
    code, out, _ = run(capsys, "compare", str(a), str(b), "--samples", "500", "--plot", str(png))
    assert code == 0 and png.stat().st_size > 20_000 and "figure written" in out


def test_compare_progress_bar_only_on_a_terminal(tmp_path, capsys, rng, monkeypatch):
    import importlib

    module = importlib.import_module("bece._binned.compare")
    *_, a, b = _two_models(tmp_path, rng, n=50)
    seen = []
    real = module.binned_compare

    def spy(*args, **kwargs):
        seen.append(kwargs["progress"])
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "binned_compare", spy)
    binned = ["--model", "binned"]  # the binned model's draws show a progress bar
    run(capsys, "compare", str(a), str(b), "--samples", "100", *binned)  # stderr is not a tty under pytest
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    run(capsys, "compare", str(a), str(b), "--samples", "100", *binned)
    run(capsys, "compare", str(a), str(b), "--samples", "100", "--json", *binned)
    assert seen == [False, True, False]


def test_compare_top_label_files(tmp_path, capsys, rng):
    prob_a = rng.dirichlet(np.ones(3), size=200)
    prob_b = rng.dirichlet(np.ones(3), size=200)
    y = rng.integers(0, 3, 200)
    for name, prob in (("a.npz", prob_a), ("b.npz", prob_b)):
        np.savez(tmp_path / name, y_true=y, **{f"p_{k}": prob[:, k] for k in range(3)})
    code, out, _ = run(capsys, "compare", str(tmp_path / "a.npz"), str(tmp_path / "b.npz"), "--json")
    assert code == 0
    assert json.loads(out)["b"]["plugin_ece"] == pytest.approx(
        bece.expected_calibration_error(y, prob_b), abs=1e-15)


@pytest.mark.parametrize(
    "content_b,message",
    [
        ("y_true,y_prob\n1,0.5\n0,0.5\n1,0.5\n",
         "not the same test set: y_true differs in 2 of 3 rows (first at row 1)"),
        ("y_true,y_prob\n1,0.5\n", "has 3 rows but"),
        ("y_true,p_0,p_1\n1,0.5,0.5\n1,0.5,0.5\n0,0.5,0.5\n", "holds binary predictions but"),
        ("y_true,y_prob\n1,0.5\n1,nan\n0,0.5\n", "missing or NaN"),
    ],
)
def test_compare_bad_input_exits_2_with_one_line(tmp_path, capsys, content_b, message):
    (tmp_path / "a.csv").write_text("y_true,y_prob\n1,0.2\n1,0.7\n0,0.4\n")
    (tmp_path / "b.csv").write_text(content_b)
    code, out, err = run(capsys, "compare", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"))
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


# ------------------------------------------------------ streaming `bece report`
def test_report_streams_parquet_and_csv_like_the_library(tmp_path, capsys, rng):
    """`bece report` reads files in chunks; its statistics and posterior equal
    bayesian_ece on the whole arrays (same seed, same statistics)."""
    import pandas as pd

    import bece._io.stream

    n = 3000
    p = rng.beta(3, 1, size=n)
    y = (rng.uniform(size=n) < p).astype(int)
    frame = pd.DataFrame({"y_true": y, "y_prob": p})
    frame.to_parquet(tmp_path / "pred.parquet", row_group_size=700)
    frame.to_csv(tmp_path / "pred.csv", index=False, float_format="%.17g")
    ref = bece.bayesian_ece(y, p, n_bins=10, num_samples=2000, seed=3)
    for name in ("pred.parquet", "pred.csv"):
        code, out, _ = run(capsys, "report", str(tmp_path / name), "--n-bins", "10",
                           "--samples", "2000", "--seed", "3", "--json")
        d = json.loads(out)
        assert code == 0 and d["n"] == n
        assert [b["count"] for b in d["bins"]] == ref.stats.bin_counts.tolist()
        assert d["plugin_ece"] == pytest.approx(ref.plugin, rel=1e-12)
        assert d["ece"]["mean"] == pytest.approx(ref.mean, rel=1e-9)
    # and it went through the chunked reader
    calls = []
    real = bece._io.stream.file_statistics

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    import unittest.mock

    from bece.smooth import fine_binning

    with unittest.mock.patch.object(bece._io.stream, "file_statistics", spy):
        _, with_verdict, _ = run(capsys, "report", str(tmp_path / "pred.parquet"), "--samples",
                                 "100", "--json", "--model", "binned")
        _, alone, _ = run(capsys, "report", str(tmp_path / "pred.parquet"), "--samples", "100",
                          "--json", "--model", "binned", "--no-verdict")
    # once with the verdict: its fine grid (bece.smooth.fine_binning), added up
    # into the report's bins; once without: the report's bins
    assert len(calls) == 2 and all(c["progress"] is False for c in calls)
    assert calls[0]["binning"] == fine_binning(15) and calls[1]["n_bins"] == 15
    # the same bits either way
    with_verdict, alone = json.loads(with_verdict), json.loads(alone)
    assert "verdict" in with_verdict and "verdict" not in alone
    for key in ("bins", "plugin_ece", "ece"):
        assert with_verdict[key] == alone[key]
    # the default (smooth) model reads the fine grid once; the verdict reuses it
    calls.clear()
    with unittest.mock.patch.object(bece._io.stream, "file_statistics", spy):
        run(capsys, "report", str(tmp_path / "pred.parquet"), "--samples", "100", "--json")
    assert len(calls) == 1 and calls[0]["binning"] == fine_binning(15)


def test_report_progress_bar_only_on_a_terminal(tmp_path, capsys, rng, monkeypatch):
    import pandas as pd

    n = 500
    p = rng.uniform(size=n)
    pd.DataFrame({"y_true": (rng.uniform(size=n) < p).astype(int), "y_prob": p}).to_parquet(
        tmp_path / "p.parquet"
    )
    code, _, err = run(capsys, "report", str(tmp_path / "p.parquet"), "--samples", "100")
    assert code == 0 and "rows" not in err  # stderr is not a terminal under pytest
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    code, _, err = run(capsys, "report", str(tmp_path / "p.parquet"), "--samples", "100")
    assert code == 0 and "rows" in err  # the tqdm bar
    code, out, err = run(capsys, "report", str(tmp_path / "p.parquet"), "--samples", "100", "--json")
    assert code == 0 and err == "" and json.loads(out)["n"] == n


def test_report_bad_row_is_named(tmp_path, capsys):
    (tmp_path / "bad.csv").write_text("y_true,y_prob\n" + "1,0.5\n" * 10 + "1,1.5\n")
    code, out, err = run(capsys, "report", str(tmp_path / "bad.csv"))
    assert code == 2 and out == ""
    assert "row 10: 1.5" in err and err.count("\n") == 1


# ------------------------------------------------------------ --model smooth
def _smooth_file(tmp_path, rng, n, fmt="parquet"):
    import pandas as pd

    p = rng.beta(3, 1, size=n)
    y = (rng.uniform(size=n) < p**1.5).astype(int)
    path = tmp_path / f"pred.{fmt}"
    frame = pd.DataFrame({"y_true": y, "y_prob": p})
    frame.to_parquet(path, row_group_size=1500) if fmt == "parquet" else frame.to_csv(path, index=False)
    return y, p, path


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_report_model_smooth_is_the_library_on_fine_statistics(tmp_path, capsys, rng, fmt):
    """Above 2,000 rows `--model smooth` reads the file in chunks into fine
    statistics: its numbers are smooth_ece(..., grid=128) on the arrays."""
    from bece._smooth.posterior import smooth_ece

    y, p, path = _smooth_file(tmp_path, rng, 6000, fmt)
    ref = smooth_ece(y, p, n_bins=10, grid=128, num_samples=1000, seed=4)
    code, out, err = run(capsys, "report", str(path), "--model", "smooth", "--n-bins", "10",
                         "--samples", "1000", "--seed", "4", "--json")
    assert code == 0 and err == ""
    d = json.loads(out)
    assert d["model"] == "smooth" and d["grid"] == 128 and d["n"] == 6000 and d["n_bins"] == 10
    assert d["ece"]["mean"] == pytest.approx(ref.mean, rel=1e-9)
    assert d["ece"]["interval"] == pytest.approx(list(ref.interval(0.9)), rel=1e-9)
    assert d["plugin_ece"] == pytest.approx(ref.plugin, rel=1e-12)
    assert d["grid_error"] == pytest.approx(ref.params.grid_error, rel=1e-9)
    assert [b["count"] for b in d["bins"]] == ref.stats.bin_counts.tolist()
    np.testing.assert_allclose([b["model_observed"]["mean"] for b in d["bins"]],
                               ref.accuracy.mean(axis=0), rtol=1e-9)
    code, text, _ = run(capsys, "report", str(path), "--model", "smooth", "--n-bins", "10",
                        "--samples", "1000", "--seed", "4")
    assert code == 0
    assert "smooth calibration curve (Laplace), 128 sub-cells per bin, grid error <=" in text
    # binary input: the words of P(y = 1)
    assert f"Bayesian ECE  {ref.mean:.4f}" in text and "model freq y=1 [90%]" in text
    assert len([ln for ln in text.splitlines() if ln.startswith("   ") and "[0." in ln]) == 10


def test_report_default_is_the_smooth_model_exact_on_a_small_file_with_the_binned_reference(capsys):
    pred = read_predictions(example_path())
    ref = bece.bayesian_ece(pred.y_true, pred.y_prob, model="smooth", num_samples=800, seed=2)
    code, out, _ = run(capsys, "report", "--model", "smooth", "--samples", "800", "--seed", "2",
                       "--json")
    d = json.loads(out)
    assert code == 0 and d["grid"] is None and d["grid_error"] == 0.0
    assert d["ece"]["mean"] == ref.mean and d["ece"]["interval"] == list(ref.interval(0.9))
    # the default is the smooth model, averaged with exact calibration, with the
    # binned model beside it as the reference (the same closed form as posterior_ece)
    assert d["prob_calibrated"] == ref.prob_calibrated and d["prior_odds"] == ref.prior_odds
    _, default, _ = run(capsys, "report", "--samples", "800", "--seed", "2", "--json")
    assert default == out
    binned = bece.posterior_ece(ref.stats, num_samples=800, seed=2, model="binned")
    assert d["reference"] == {"model": "binned", "ece": {
        "mean": binned.mean, "std": binned.std, "prob": 0.9, "interval": list(binned.interval(0.9))}}
    # --model binned: the schema of DESIGN.md, no reference
    _, explicit, _ = run(capsys, "report", "--model", "binned", "--samples", "800", "--seed", "2",
                         "--json")
    assert set(json.loads(explicit)) == {
        "model", "input_kind", "seed", "bece_version", "n", "n_bins", "plugin_ece", "plugin_bias",
        "ece", "bins", "verdict", "calibration_test"}
    # the text says where the studies show the binned model under-covering
    _, text, _ = run(capsys, "report", "--samples", "800", "--seed", "2")
    line = text.splitlines().index(next(ln for ln in text.splitlines()
                                        if ln.startswith("  binned model")))
    assert "under-cover" in text.splitlines()[line + 1]


def test_report_model_smooth_quantile_bins_take_a_first_pass(tmp_path, capsys, rng):
    from bece._smooth.posterior import smooth_ece

    y, p, path = _smooth_file(tmp_path, rng, 5000)
    ref = smooth_ece(y, p, n_bins=8, binning="quantile", grid=128, num_samples=500, seed=1)
    code, out, _ = run(capsys, "report", str(path), "--model", "smooth", "--binning", "quantile",
                       "--n-bins", "8", "--samples", "500", "--seed", "1", "--json")
    d = json.loads(out)
    assert code == 0 and d["ece"]["mean"] == pytest.approx(ref.mean, rel=1e-9)
    np.testing.assert_array_equal([b["lo"] for b in d["bins"]], ref.stats.edges[:-1])


def test_report_model_smooth_plot(tmp_path, capsys, rng):
    _, _, path = _smooth_file(tmp_path, rng, 3000)
    png = tmp_path / "smooth.png"
    code, out, err = run(capsys, "report", str(path), "--model", "smooth", "--samples", "300",
                         "--plot", str(png))
    assert code == 0 and err == "" and f"figure written to {png}" in out
    assert png.stat().st_size > 10_000 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--model", "spline"], "invalid choice: 'spline'"),
        (["--model", "smooth", "--n-bins", "0"], "n_bins must be a positive integer"),
        (["--model", "smooth", "--samples", "0"], "num_samples must be a positive integer"),
        (["--model", "smooth", "--seed", "-1"], "seed must be a non-negative int"),
        (["--model", "smooth", "--plot", "out.xyz"], "unknown image type '.xyz'"),
    ],
)
def test_report_model_smooth_bad_options_exit_2(capsys, argv, message):
    code, out, err = run(capsys, "report", *argv)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1
    assert "Traceback" not in err


def test_closed_pipe_stops_quietly():
    """``bece report | head``: the reader has gone before bece prints; bece
    stops without a traceback or a 'Broken pipe' error line (exit 1)."""
    proc = subprocess.Popen([sys.executable, "-m", "bece", "report", "--samples", "500"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdout.close()  # before anything is written: every print meets a closed pipe
    err = proc.stderr.read()
    proc.wait(timeout=120)
    assert "Broken pipe" not in err and "Traceback" not in err, err
    assert proc.returncode == 1


# ------------------------------------------- robustness (issue 14, catalogue J, K)
def _strict_json(text):
    """json.loads that refuses NaN and Infinity (Python's accepts them)."""
    def refuse(token):
        raise ValueError(f"not JSON: {token}")
    return json.loads(text, parse_constant=refuse)


def test_json_is_strict_with_one_draw(tmp_path, capsys):
    """Catalogue #6: --samples 1 has no sd; --json says null, never NaN."""
    path = tmp_path / "p.csv"
    path.write_text("y_true,y_prob\n1,0.9\n0,0.2\n1,0.6\n")
    code, out, _ = run(capsys, "report", str(path), "--json", "--samples", "1")
    assert code == 0 and _strict_json(out)["ece"]["std"] is None
    code, out, _ = run(capsys, "compare", str(path), str(path), "--json", "--samples", "1")
    d = _strict_json(out)
    assert code == 0 and d["diff"]["std"] is None and d["a"]["ece"]["std"] is None


def test_to_json_maps_non_finite_numbers_to_null():
    from bece._cli import to_json

    obj = {"a": float("nan"), "b": [np.float64(np.inf), -np.inf, 1.5, np.float32(2)], "c": (np.nan,)}
    assert _strict_json(to_json(obj)) == {"a": None, "b": [None, None, 1.5, 2.0], "c": [None]}
    with pytest.raises(TypeError):
        to_json({"x": object()})


@pytest.mark.parametrize("command", [["report"], ["report", "--model", "smooth"], ["compare", "{f}"]])
def test_duplicated_columns_exit_2(tmp_path, capsys, command):
    """Catalogue #5: report, --model smooth and compare all name the column."""
    f = tmp_path / "dup.csv"
    f.write_text("y_true,y_prob,y_true\n1,0.5,0\n0,0.2,1\n")
    argv = [a.replace("{f}", str(f)) for a in command]
    code, out, err = run(capsys, *argv[:1], str(f), *argv[1:])
    assert code == 2 and out == ""
    assert f"{f}: column 'y_true' appears 2 times" in err and err.count("\n") == 1


def test_compare_names_the_file_and_shape(tmp_path, capsys):
    """Catalogue #31 (and #28): a (100, 1) y_true is refused naming the file
    and the shape, not as '100 rows but ... 100'."""
    rng = np.random.default_rng(0)
    p = rng.uniform(size=100)
    y = (rng.uniform(size=100) < p).astype(int)
    good = tmp_path / "good.csv"
    good.write_text("y_true,y_prob\n" + "\n".join(f"{a},{float(b)!r}" for a, b in zip(y, p)))
    np.savez(tmp_path / "col.npz", y_true=y[:, None], y_prob=p)
    for argv in (["compare", str(good), str(tmp_path / "col.npz")], ["report", str(tmp_path / "col.npz")]):
        code, out, err = run(capsys, *argv)
        assert code == 2 and out == "" and err.count("\n") == 1
        assert f"{tmp_path / 'col.npz'}: array 'y_true' has shape (100, 1)" in err


def test_compare_value_errors_name_the_file_and_row(tmp_path, capsys):
    (tmp_path / "a.csv").write_text("y_true,y_prob\n1,0.2\n1,0.7\n0,0.4\n")
    (tmp_path / "b.csv").write_text("y_true,y_prob\n1,0.2\n1,1.7\n0,0.4\n")
    code, out, err = run(capsys, "compare", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"))
    assert code == 2 and err == f"bece: error: {tmp_path / 'b.csv'}: y_prob must lie in [0, 1]; " \
        "1 value(s) (row 1: 1.7) are outside; if these are logits, pass --logits (softmax over " \
        "the columns, or sigmoid for shape (n,), applied in float64); if percentages, divide by " \
        "100\n"


def test_report_reads_a_parquet_dataset_directory(tmp_path, capsys):
    """Catalogue #29: Spark/Dask output (a directory) is read, a plain
    directory is a one-line error, not 'no such file'."""
    import pandas as pd

    root = tmp_path / "spark_output.parquet"
    root.mkdir()
    for i in range(3):
        pd.DataFrame({"y_true": [1, 0], "y_prob": [0.7, 0.4]}).to_parquet(root / f"part-0000{i}.parquet")
    (root / "_SUCCESS").write_text("")
    code, out, _ = run(capsys, "report", str(root), "--json", "--samples", "100")
    assert code == 0 and json.loads(out)["n"] == 6
    code, out, _ = run(capsys, "compare", str(root), str(root), "--json", "--samples", "100")
    assert code == 0 and json.loads(out)["n"] == 6
    (tmp_path / "adir.csv").mkdir()
    code, out, err = run(capsys, "report", str(tmp_path / "adir.csv"))
    assert code == 2 and "is a directory without Parquet files" in err and err.count("\n") == 1


def test_out_of_memory_is_one_line(capsys, monkeypatch):
    """Catalogue #12 (CLI): a MemoryError prints one line naming memory and
    the options that size the run, exit 1 (valid input, machine too small)."""
    import bece._api

    def exhausted(*args, **kwargs):
        raise MemoryError("Unable to allocate 224. GiB for an array with shape (1000000000, 2, 15) "
                          "and data type float64")

    monkeypatch.setattr(bece._api, "posterior_ece", exhausted)
    code, out, err = run(capsys, "report")
    assert code == 1 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("bece: error: out of memory (Unable to allocate 224. GiB")
    assert "--samples" in err
    # each command names its own options: bece test has resamples, not samples
    monkeypatch.setattr(bece._api, "calibration_test", exhausted)
    code, _, err = run(capsys, "test")
    assert code == 1 and "try fewer --resamples or --n-bins" in err


def test_huge_sizes_never_print_a_traceback():
    """--samples 10**9: an up-front size check (exit 2) or numpy's
    MemoryError (exit 1); either way one line."""
    r = subprocess.run([sys.executable, "-m", "bece", "report", "--samples", str(10**9)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode in (1, 2) and "Traceback" not in r.stderr and r.stderr.count("\n") == 1, r.stderr


def test_ctrl_c_is_one_line_and_exit_130():
    """Catalogue #32: SIGINT during a report: 'bece: interrupted', exit 130."""
    code = (
        "import os, signal, sys\n"
        # a parent that ignores SIGINT (a pytest-xdist worker, after some tests) passes that
        # on, and Python then installs no KeyboardInterrupt handler: restore a shell's default
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "import bece._io.files as files\n"
        "from bece import _cli as cli\n"
        "real = files.read_statistics\n"
        "def interrupted(*a, **k):\n"
        "    os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while the file is read\n"
        "    return real(*a, **k)\n"
        "files.read_statistics = interrupted\n"
        "sys.exit(cli.main(['report', '--samples', '200']))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 130 and r.stderr == "bece: interrupted\n" and r.stdout == ""


def test_ctrl_c_while_the_command_loads_is_one_line_and_exit_130():
    """Ctrl-C in the first half-second, while NumPy and the reports load: the
    console script's own import (``from bece._cli import main``) loads nothing
    heavy, and ``main`` loads the rest inside its handler. The interrupt is
    raised by the import of numpy itself (an import hook), as SIGINT would."""
    code = (
        "import sys\n"
        "from bece._cli import main\n"  # the console script's first line
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'bece'))\n"
        "assert loaded == ['bece', 'bece._base', 'bece._base.version', 'bece._cli'], loaded\n"
        "class Interrupt:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'numpy':\n"
        "            raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, Interrupt())\n"
        "sys.exit(main(['report', '--samples', '200']))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 130 and r.stderr == "bece: interrupted\n" and r.stdout == "", r.stderr


def test_version(capsys, monkeypatch):
    from importlib import metadata

    code, out, err = run(capsys, "--version")
    assert code == 0 and err == "" and out == f"bece {metadata.version('bece')}\n"

    def not_installed(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", not_installed)
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out == f"bece {bece.__version__}\n"
    r = subprocess.run([sys.executable, "-m", "bece", "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("bece ") and r.stderr == ""


def test_report_model_literal_names_the_form(capsys):
    """bece report --model literal: the literal form of the binned model, said so,
    with the numbers of bece.posterior_ece(stats, model="literal")."""
    import bece
    from bece.io import example_path, read_statistics

    assert main(["report", "--model", "literal", "--samples", "500", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["model"] == "binned-literal"
    stats = read_statistics(example_path()).stats
    ref = bece.posterior_ece(stats, model="literal", num_samples=500, seed=0)
    assert d["ece"]["mean"] == pytest.approx(ref.mean, rel=1e-12)
    assert main(["report", "--model", "literal", "--samples", "500"]) == 0
    assert "literal form" in capsys.readouterr().out


def test_report_top_label_and_classwise(capsys, tmp_path):
    """--top-label adds bayesian_top_label_ece's posterior (same bins, draws
    and seed) and --classwise the classwise ECE with its Poisson-bootstrap
    interval, in the text and the JSON; a file of P(y = 1) is refused with
    exit code 2, naming the option."""
    from bece.metrics import bootstrap_interval

    code, out, _ = run(capsys, "report", "--no-verdict", "--samples", "1000", "--seed", "2",
                       "--top-label", "--classwise", "--json")
    assert code == 0
    d = json.loads(out)
    data = bece.io.read_predictions(bece.io.example_path())
    ref = bece.bayesian_top_label_ece(data.y_true, data.y_prob, n_bins=15, num_samples=1000, seed=2)
    t = d["top_label"]
    assert t["ece"]["mean"] == pytest.approx(ref.mean, rel=1e-12)
    assert t["ece"]["interval"] == pytest.approx(list(ref.interval(0.9)), rel=1e-12)
    assert t["n_labels"] == ref.n_labels and t["plugin_ece"] == pytest.approx(ref.plugin, rel=1e-12)
    iv = bootstrap_interval(bece.classwise_ece, data.y_true, data.y_prob, n_boot=200, seed=2,
                            n_bins=15)
    c = d["classwise"]
    assert c["value"] == pytest.approx(bece.classwise_ece(data.y_true, data.y_prob), rel=1e-12)
    assert c["interval"] == pytest.approx([iv.low, iv.high], rel=1e-12)
    code, out, _ = run(capsys, "report", "--no-verdict", "--samples", "1000", "--top-label",
                       "--classwise")
    assert code == 0 and "  top-label ECE (unweighted mean over the 10 predicted labels" in out
    assert "  classwise ECE (mean over the 10 classes" in out
    path = tmp_path / "b.csv"
    path.write_text("y_true,y_prob\n0,0.2\n1,0.7\n1,0.9\n0,0.4\n")
    code, _, err = run(capsys, "report", str(path), "--no-verdict", "--classwise")
    assert code == 2 and "--classwise needs class probabilities" in err


def test_an_ordinary_npz_of_logits_reads_with_options(capsys, tmp_path, rng):
    """A classifier's ordinary NPZ, {'y': labels, 'logits': (n, K)}: its 2-D
    array reads as logits_0 ... and the classifier options decide the kind
    (a column 'y' would otherwise suggest regression forecasts): the report
    equals the library's on the same logits."""
    logits = rng.normal(scale=2.0, size=(400, 4))
    y = rng.integers(0, 4, size=400)
    path = tmp_path / "ordinary.npz"
    np.savez(path, y=y, logits=logits)
    code, out, err = run(capsys, "report", str(path), "--no-verdict", "--json", "--samples", "500",
                         "--logits", "--prob-prefix", "logits_", "--y-true-col", "y")
    assert code == 0, err
    ref = bece.bayesian_ece(y, logits, from_logits=True, num_samples=500)
    assert json.loads(out)["ece"]["mean"] == pytest.approx(ref.mean, rel=1e-12)
