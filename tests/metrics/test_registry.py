"""bece._metrics.registry and ``bece report --metrics``: the chosen metrics with
their intervals, equal to the functions called directly."""

from __future__ import annotations

import json

import numpy as np
import pytest

import bece
from bece._cli import main
from bece._metrics.registry import METRIC_NAMES, check_metric_names
from bece._metrics.streaming import MERGEABLE, WHOLE_DATA
from bece.io import example_path, read_predictions
from bece.metrics import (
    bootstrap_interval,
    brier_score,
    calibration_in_the_large,
    calibration_slope,
    ece_sweep,
    ks_calibration_error,
    l2_calibration_error,
    l2_ece_draws,
    log_loss,
    metric_report,
    spiegelhalter_z,
)

from ..conftest import simulate_binary


def test_report_equals_the_functions(rng):
    y, p = simulate_binary(500, rng, power=1.5)
    post = bece.bayesian_ece(y, p, num_samples=1000)
    d = metric_report(y, p, ["l2", "brier", "spiegelhalter"], posterior=post, n_boot=50, seed=4)
    assert d["l2"]["value"] == pytest.approx(l2_calibration_error(y, p), rel=1e-12)
    assert d["l2"]["interval"] == pytest.approx(list(np.quantile(l2_ece_draws(post), [0.05, 0.95])))
    iv = bootstrap_interval(brier_score, y, p, n_boot=50, seed=4)
    assert d["brier"]["interval"] == pytest.approx([iv.low, iv.high], rel=1e-12)
    assert d["brier"]["value"] == pytest.approx(iv.estimate, rel=1e-12)
    dec = d["brier"]["decomposition"]  # reliability = l2^2, its posterior the squared draws
    assert dec["reliability"] == pytest.approx(d["l2"]["value"] ** 2, rel=1e-10)
    assert dec["reliability_interval"] == pytest.approx(
        list(np.quantile(l2_ece_draws(post) ** 2, [0.05, 0.95])), rel=1e-12)
    t = spiegelhalter_z(y, p)
    assert (d["spiegelhalter"]["statistic"], d["spiegelhalter"]["p_value"]) == (t.statistic,
                                                                              t.p_value)


def test_unknown_names_and_errors_reported():
    with pytest.raises(ValueError, match="metrics must be names among"):
        check_metric_names("l2,ece3")
    d = metric_report(np.array([0.0, 1.0, 1.0]), np.array([0.2, 1.0, 0.7]), ["slope"], n_boot=5)
    assert "exactly 0 or 1" in d["slope"]["error"]
    assert set(check_metric_names(",".join(METRIC_NAMES))) == set(METRIC_NAMES)


def test_cli_json_carries_the_metrics(capsys):
    code = main(["report", "--json", "--samples", "1000", "--metrics", "l2,ks,hosmer_lemeshow"])
    out, err = capsys.readouterr()
    assert code == 0
    d = json.loads(out)
    assert set(d["metrics"]) == {"l2", "ks", "hosmer_lemeshow"}
    pred = read_predictions(example_path())
    post = bece.bayesian_ece(pred.y_true, pred.y_prob, num_samples=1000)
    want = np.quantile(l2_ece_draws(post), [0.05, 0.95])
    assert d["metrics"]["l2"]["interval"] == pytest.approx(list(want), abs=1e-15)
    assert d["metrics"]["hosmer_lemeshow"]["df"] == 10


def test_cli_text_and_bad_name(capsys):
    assert main(["report", "--samples", "500", "--metrics", "slope,brier"]) == 0
    out, _ = capsys.readouterr()
    assert "metrics (90% intervals" in out and "Brier score" in out and "not computed" in out
    assert main(["report", "--metrics", "l3"]) == 2
    _, err = capsys.readouterr()
    assert err.count("\n") <= 1 and "metrics must be names among" in err


ESTIMATES = ["l2", "debiased_l2", "brier", "log_loss", "citl", "ece_sweep", "ks", "intercept"]


def test_one_bootstrap_for_every_metric(rng):
    """metric_report's intervals, whether from the one-pass sums (l2, debiased
    l2, Brier, log loss, citl) or from the whole data (the others), are
    bootstrap_interval's Poisson bootstrap with the same seed: the same
    replicates (rows repeated by their counts) for every metric."""
    y, p = simulate_binary(3000, rng, power=1.5)
    fns = {"l2": l2_calibration_error,
           "debiased_l2": lambda *a, **k: l2_calibration_error(*a, debiased=True, **k),
           "brier": brier_score, "log_loss": log_loss, "citl": calibration_in_the_large,
           "ece_sweep": ece_sweep, "ks": ks_calibration_error,
           "intercept": lambda *a, **k: calibration_slope(*a, **k).intercept_in_the_large}
    d = metric_report(y, p, ESTIMATES, n_boot=40, seed=11, prob=0.8)
    assert list(d) == ESTIMATES
    for name in ESTIMATES:
        iv = bootstrap_interval(fns[name], y, p, n_boot=40, seed=11, prob=0.8)
        assert d[name]["value"] == pytest.approx(iv.estimate, rel=1e-12), name
        assert d[name]["interval"] == pytest.approx([iv.low, iv.high], rel=1e-10), name
        assert "Poisson bootstrap (40 replicates" in d[name]["interval_method"]


def test_cli_chunks_and_arrays_give_the_same_intervals(tmp_path, capsys):
    """bece report --metrics on a CSV (read in chunks) equals metric_report on
    the arrays, with the same seed, for one-pass and whole-data metrics."""
    rng = np.random.default_rng(8)
    p = rng.uniform(0.02, 0.98, size=2500)
    y = (rng.uniform(size=2500) < p**1.3).astype(np.int64)
    rows = "\n".join(f"{a},{b:.17g}" for a, b in zip(y, p))
    (tmp_path / "f.csv").write_text("y_true,y_prob\n" + rows + "\n")
    names = ["debiased_l2", "brier", "citl", "log_loss", "ks", "hosmer_lemeshow"]
    assert main(["report", str(tmp_path / "f.csv"), "--json", "--model", "binned", "--samples",
                 "300", "--no-verdict", "--seed", "5", "--metrics", ",".join(names)]) == 0
    cli = json.loads(capsys.readouterr().out)["metrics"]
    mem = metric_report(y, p, names, seed=5)
    for name in names:
        assert cli[name]["one_pass"] == (name not in ("ks", "hosmer_lemeshow"))
        for key, v in mem[name].items():
            if isinstance(v, (float, list)):
                assert cli[name][key] == pytest.approx(v, rel=1e-10), (name, key)
    assert "deciles" in cli["hosmer_lemeshow"]["needs_all_pairs"]


def test_every_name_is_one_pass_or_says_why_not():
    assert set(MERGEABLE) | set(WHOLE_DATA) == set(METRIC_NAMES)
    assert not set(MERGEABLE) & set(WHOLE_DATA)


def test_scores_of_class_probabilities_are_named_for_what_they_are(capsys, tmp_path):
    """On (n, K) input the log loss and Brier score are of the top-label
    (correct, confidence) pairs, and say so: not the network's multiclass
    NLL, which differs (here computed by hand from the rows)."""
    assert main(["report", "--no-verdict", "--json", "--samples", "300",
                 "--metrics", "log_loss,brier"]) == 0
    m = json.loads(capsys.readouterr().out)["metrics"]
    assert m["log_loss"]["label"] == "log loss of correct vs confidence (not the multiclass NLL)"
    assert m["brier"]["label"].startswith("Brier score of correct vs confidence")
    data = read_predictions(example_path())
    prob = np.asarray(data.y_prob)
    correct = (prob.argmax(axis=1) == data.y_true).astype(float)
    conf = prob.max(axis=1)
    wrong_conf = np.where(correct == 1, 0.0, conf)  # the log of the observed outcome's probability
    pairs = -np.mean(np.where(correct == 1, np.log(conf), np.log1p(-wrong_conf)))
    assert m["log_loss"]["value"] == pytest.approx(pairs, rel=1e-12)
    nll = -np.mean(np.log(prob[np.arange(len(prob)), data.y_true]))
    assert abs(nll - pairs) > 1e-3  # the two are different numbers
    assert main(["report", "--no-verdict", "--samples", "300", "--metrics", "log_loss"]) == 0
    assert "of the (correct, confidence) pairs" in capsys.readouterr().out
    # binary input: the log loss is the log loss, of the (y, P(y = 1)) pairs
    path = tmp_path / "b.csv"
    path.write_text("y_true,y_prob\n0,0.2\n1,0.7\n1,0.9\n0,0.4\n")
    assert main(["report", str(path), "--no-verdict", "--samples", "300", "--metrics", "log_loss"]) == 0
    out = capsys.readouterr().out
    assert "of the (y, P(y = 1)) pairs" in out and "    log loss  " in out


def test_an_infinite_log_loss_says_why(capsys, tmp_path):
    """p = 1 for an outcome 0 gives an infinite log loss: the text says why
    and the JSON gives the reason beside its null value."""
    path = tmp_path / "inf.csv"
    path.write_text("y_true,y_prob\n0,0\n1,1\n1,1\n1,0\n")
    assert log_loss([0, 1, 1, 1], [0, 1, 1, 0]) == np.inf
    assert main(["report", str(path), "--no-verdict", "--samples", "300", "--json",
                 "--metrics", "log_loss"]) == 0
    m = json.loads(capsys.readouterr().out)["metrics"]["log_loss"]
    assert m["value"] is None
    assert m["reason"] == "infinite: 1 prediction(s) gave the observed outcome probability 0"
    assert main(["report", str(path), "--no-verdict", "--samples", "300", "--metrics", "log_loss"]) == 0
    assert "inf   (infinite: 1 prediction(s) gave the observed outcome probability 0)" in (
        capsys.readouterr().out)


def test_a_metric_that_needs_more_rows_fails_alone(capsys, tmp_path):
    """--metrics all on one row: Sun et al.'s interval needs two pairs, so
    l2_sun says 'not computed' with the reason and the report goes on."""
    path = tmp_path / "one.csv"
    path.write_text("y_true,y_prob\n1,0.7\n")
    assert main(["report", str(path), "--no-verdict", "--samples", "200", "--json",
                 "--metrics", "all"]) == 0
    m = json.loads(capsys.readouterr().out)["metrics"]
    assert m["l2_sun"]["error"] == "the interval needs at least 2 pairs, got 1"
    assert m["brier"]["value"] == pytest.approx(0.09, rel=1e-12)
