"""The verdict first (bece report, bece compare, bece test) and the words of P(y = 1) input."""

from __future__ import annotations

import json

import numpy as np
import pytest

import bece
from bece._cli import main
from bece._results import comparison_verdict

from .conftest import simulate_multiclass


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _binary(tmp_path, rng, n=300):
    """P(y = 1) predictions with two hand-made bins: 10 at p = 0.1 that are
    all y = 0 (the bin over-predicts y = 1) and 10 at p = 0.9 all y = 1
    (under-predicts)."""
    p = rng.uniform(0.2, 0.8, size=n)
    y = (rng.uniform(size=n) < p).astype(int)
    p = np.r_[p, np.full(10, 0.1), np.full(10, 0.9)]
    y = np.r_[y, np.zeros(10, int), np.ones(10, int)]
    path = tmp_path / "binary.csv"
    path.write_text("y_true,y_prob\n" + "\n".join(f"{a},{float(b)!r}" for a, b in zip(y, p)))
    return path, y, p


def test_binary_report_uses_the_words_of_p_y1_and_opens_with_the_verdict(tmp_path, rng, capsys):
    path, y, p = _binary(tmp_path, rng)
    code, out, err = run(capsys, "report", path, "--n-bins", 10, "--samples", 300, "--seed", 2)
    assert code == 0 and err == ""
    lines = out.splitlines()
    t = bece.calibration_test(y, p, n_bins=10, seed=2)  # the library, same bins and seed
    assert lines[1] == f"  verdict       {t.verdict().headline}"
    assert lines[2].startswith("  Bayesian ECE") and lines[3].startswith("  90% interval")
    assert "freq y=1" in out and "mean P(y=1)" in out and "over-predicts y = 1" in out
    # never the words of (correct, confidence) input
    for word in ("over-confident", "under-confident", "accuracy", "confidence"):
        assert word not in out
    # the hand-made bins: [0.1, 0.2) observed 0 of mean 0.1, [0.9, 1] observed 1 of 0.9
    row = next(ln for ln in lines if ln.strip().startswith("2  [0.100, 0.200)"))
    # (bin, range, count, then observed, predicted, gap; the default model's column follows)
    assert row.split()[4:7] == ["0.0000", "0.1000", "-0.1000"]
    row = next(ln for ln in lines if ln.strip().startswith("10  [0.900, 1.000]"))
    assert row.split()[4:7] == ["1.0000", "0.9000", "+0.1000"]


def test_top_label_report_keeps_accuracy_and_confidence(capsys):
    code, out, _ = run(capsys, "report", "--samples", 300)
    assert code == 0
    assert "accuracy" in out and "confidence" in out and "(negative: over-confident" in out
    assert "freq y=1" not in out and "over-predicts" not in out
    lines = out.splitlines()
    assert lines[1].startswith("  verdict       ")
    assert "labels pooled; no per-label test" in lines[2]  # what the verdict covers


def test_json_has_neutral_names_and_the_verdict(tmp_path, rng, capsys):
    path, y, p = _binary(tmp_path, rng)
    code, out, _ = run(capsys, "report", path, "--n-bins", 10, "--samples", 300, "--seed", 2,
                       "--json")
    d = json.loads(out)
    assert code == 0 and d["input_kind"] == "binary"
    # per-bin frequency of y = 1 and mean P(y = 1) by a naive loop over the rows
    edges = np.linspace(0, 1, 11)
    for m, b in enumerate(d["bins"]):
        rows = [i for i in range(p.size) if edges[m] <= p[i] < edges[m + 1] or (m == 9 and p[i] == 1)]
        assert b["count"] == len(rows)
        if rows:
            assert b["observed"] == pytest.approx(sum(y[i] for i in rows) / len(rows), abs=1e-12)
            assert b["predicted"] == pytest.approx(sum(p[i] for i in rows) / len(rows), abs=1e-12)
        # P(y = 1) input has no accuracy or confidence: only the neutral names
        assert "accuracy" not in b and "confidence" not in b
    t = bece.calibration_test(y, p, n_bins=10, seed=2)
    v, c = d["verdict"], d["calibration_test"]
    assert (v["p_value"], v["log_bayes_factor"]) == (t.p_value, t.log_bayes_factor)
    assert c["prob_calibrated"] == t.prob_calibrated and c["prior_odds"] == 0.02
    assert v["verdict"] == t.verdict().label and v["text"] == t.verdict().text
    assert c["log_bayes_factor"] == t.log_bayes_factor and c["num_resamples"] == 1000
    assert c["statistic"] == pytest.approx(d["plugin_ece"], abs=1e-12)
    # the smooth model's per-bin curve: model_observed (no model_accuracy for P(y = 1))
    code, out, _ = run(capsys, "report", path, "--model", "smooth", "--samples", 300, "--json")
    b = json.loads(out)["bins"][0]
    assert code == 0 and "model_accuracy" not in b
    assert set(b["model_observed"]) == {"mean", "interval"}


def test_bece_test_text_json_and_the_chunked_path(tmp_path, rng, capsys):
    n = 2500  # above 2,000: tested from fine statistics read in chunks
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p).astype(int)
    path = tmp_path / "big.csv"
    path.write_text("y_true,y_prob\n" + "\n".join(f"{a},{float(b)!r}" for a, b in zip(y, p)))
    code, out, err = run(capsys, "test", path, "--resamples", 300, "--seed", 1, "--json")
    d = json.loads(out)
    ref = bece.calibration_test(y, p, grid=128, num_resamples=300, seed=1)
    assert code == 0 and err == ""
    assert d["n"] == n and d["input_kind"] == "binary" and d["model"] == "calibration-test"
    assert d["calibration_test"]["p_value"] == ref.p_value
    assert d["calibration_test"]["log_bayes_factor"] == pytest.approx(ref.log_bayes_factor, abs=1e-9)
    assert d["verdict"]["verdict"] == ref.verdict().label
    code, text, _ = run(capsys, "test", path, "--resamples", 300, "--seed", 1, "--level", 0.01)
    lines = text.splitlines()
    assert code == 0 and lines[0] == f"bece test: {path}"
    assert lines[1] == f"  verdict       {ref.verdict(0.01).headline}"
    assert "Bayes factor" in text and "P(calibrated)" in text and "can disagree" in text


@pytest.mark.parametrize(
    "content,argv,message",
    [
        (None, ["test", "missing.csv"], "no such file"),
        ("y_true,y_prob\n1,1.5\n", ["test", "{f}"], "y_prob must lie in [0, 1]"),
        ("y_true,y_prob\n1,nan\n", ["test", "{f}"], "missing or NaN"),
        ("y_true,y_prob\n1,0.5\n", ["test", "{f}", "--level", "1.5"], "invalid level"),
        ("y_true,y_prob\n1,0.5\n", ["test", "{f}", "--resamples", "0"], "num_resamples"),
        ("y_true,y_prob\n1,0.5\n", ["test", "{f}", "--prior-odds", "-1"], "prior_odds"),
        ("y_true,y_prob\n1,0.5\n", ["test", "{f}", "--samples", "10"], "unrecognized arguments"),
        ("y,mean,std\n1,0.5,1\n", ["test", "{f}"], "holds regression forecasts; 'bece test' is for"),
    ],
)
def test_bece_test_bad_input_exits_2_with_one_line(tmp_path, capsys, content, argv, message):
    f = tmp_path / "in.csv"
    if content is not None:
        f.write_text(content)
    code, out, err = run(capsys, *[a.replace("{f}", str(f)) for a in argv])
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err


def test_compare_opens_with_which_model_is_better_calibrated(tmp_path, rng, capsys):
    y, prob = simulate_multiclass(400, 3, rng)
    sharp = prob**4 / (prob**4).sum(axis=1, keepdims=True)  # over-confident
    for name, P in (("good", prob), ("bad", sharp)):
        cols = {"y_true": y, **{f"p_{k}": P[:, k] for k in range(3)}}
        (tmp_path / f"{name}.csv").write_text(",".join(cols) + "\n" + "\n".join(
            ",".join(str(cols[c][i]) if c == "y_true" else repr(float(cols[c][i])) for c in cols)
            for i in range(y.size)))
    argv = ["compare", tmp_path / "good.csv", tmp_path / "bad.csv", "--samples", 2000]
    code, out, _ = run(capsys, *argv)
    _, js, _ = run(capsys, *argv, "--json")
    d = json.loads(js)
    assert code == 0 and d["prob_a_better"] > 0.95
    assert out.splitlines()[1] == ("  verdict       "
                                   + comparison_verdict(d["prob_a_better"], d["diff"]["interval"]))
    assert out.splitlines()[1].startswith("  verdict       A is better calibrated: P(ECE_A < ECE_B)")


def test_no_verdict_skips_the_test(capsys, tmp_path):
    code, out, _ = run(capsys, "report", "--samples", 200, "--no-verdict")
    assert code == 0 and out.splitlines()[1].startswith("  Bayesian ECE") and "verdict" not in out
    code, out, _ = run(capsys, "report", "--samples", 200, "--no-verdict", "--json")
    assert code == 0 and not {"verdict", "calibration_test"} & set(json.loads(out))
    (tmp_path / "reg.csv").write_text("y,mean,std\n" + "\n".join(f"{i % 3},1.0,1.0" for i in range(20)))
    code, out, err = run(capsys, "report", tmp_path / "reg.csv", "--no-verdict")
    assert code == 2 and out == "" and "--no-verdict applies only to a classifier's predictions" in err
