"""bece.metrics.registry and ``bece report --metrics``: the chosen metrics with
their intervals, equal to the functions called directly."""

from __future__ import annotations

import json

import numpy as np
import pytest

import bece
from bece.cli import main
from bece.io import example_path, read_predictions
from bece.metrics import (
    METRIC_NAMES,
    bootstrap_interval,
    brier_score,
    check_metric_names,
    l2_calibration_error,
    l2_ece_draws,
    metric_report,
    spiegelhalter_z,
)

from ..conftest import simulate_binary


def test_report_equals_the_functions(rng):
    y, p = simulate_binary(500, rng, power=1.5)
    post = bece.bayesian_ece(y, p, num_samples=1000)
    d = metric_report(y, p, ["l2", "brier", "spiegelhalter"], posterior=post, n_boot=50, seed=4)
    assert d["l2"]["value"] == l2_calibration_error(y, p)
    assert d["l2"]["interval"] == pytest.approx(list(np.quantile(l2_ece_draws(post), [0.05, 0.95])))
    iv = bootstrap_interval(brier_score, y, p, n_boot=50, seed=4 + 1)  # seed + position
    assert d["brier"]["interval"] == [iv.low, iv.high] and d["brier"]["value"] == iv.estimate
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
