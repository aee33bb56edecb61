"""Results own their JSON: the command line prints what ``to_dict()`` says,
with only how it was run (seed, version, file names) added."""

from __future__ import annotations

import json

import numpy as np
import pytest

import bece
from bece._cli import main
from bece.io import example_path, read_predictions


def _cli_json(capsys, *args):
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_report_json_is_the_results_to_dict(capsys):
    pred = read_predictions(example_path())
    r = bece.bayesian_ece(pred.y_true, pred.y_prob, seed=0)
    test = bece.calibration_test(pred.y_true, pred.y_prob, seed=0)
    d = _cli_json(capsys, "report")
    own = r.to_dict()
    assert {k: d[k] for k in own} == own
    assert {k: d[k] for k in ("verdict", "calibration_test")} == test.to_dict()
    assert set(d) - set(own) - {"verdict", "calibration_test"} == {"seed", "bece_version",
                                                                     "reference"}


def test_to_dict_is_plain_json_and_follows_prob():
    rng = np.random.default_rng(0)
    p = rng.uniform(size=600)
    y = (rng.uniform(size=600) < p).astype(int)
    for r in (bece.bayesian_ece(y, p, num_samples=500), bece.bayesian_ece(y, p, model="binned",
                                                                            num_samples=500)):
        d = r.to_dict(prob=0.5)
        assert json.loads(json.dumps(d)) == d
        assert d["ece"]["interval"] == list(r.interval(0.5)) and d["ece"]["prob"] == 0.5
        assert [b["count"] for b in d["bins"]] == r.stats.bin_counts.tolist()
        assert ("prob_calibrated" in d) == (r.model == "smooth")
    c = bece.compare(y, p, p ** 0.7, num_samples=500)
    dc = c.to_dict()
    assert json.loads(json.dumps(dc)) == dc
    assert dc["diff"]["interval"] == list(c.interval(0.9)) and dc["prob_a_better"] == c.prob_a_better
    with pytest.raises(ValueError, match="prob must be"):
        r.to_dict(prob=1.5)


def test_compare_json_is_the_comparisons_to_dict(tmp_path, capsys):
    rng = np.random.default_rng(1)
    t = rng.uniform(size=400)
    y = (rng.uniform(size=400) < t).astype(int)
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    for path, p in ((a, t), (b, t ** 0.7)):
        path.write_text("y_true,y_prob\n" + "\n".join(f"{yi},{float(pi)!r}" for yi, pi in zip(y, p)))
    d = _cli_json(capsys, "compare", str(a), str(b))
    own = bece.compare(y, t, t ** 0.7, seed=0).to_dict()
    for side, src in (("a", a), ("b", b)):
        assert d[side] == {"source": str(src), **own[side]} or d[side]["source"].endswith(src.name)
        assert {k: v for k, v in d[side].items() if k != "source"} == own[side]
    assert d["diff"] == own["diff"] and d["prob_a_better"] == own["prob_a_better"]


def test_recalibration_regression_and_cross_check_to_dict():
    rng = np.random.default_rng(2)
    logits = rng.normal(scale=3.0, size=(800, 3))
    p = np.exp(logits / 2) / np.exp(logits / 2).sum(axis=1, keepdims=True)
    y = (rng.uniform(size=(800, 1)) > p.cumsum(axis=1)).sum(axis=1)
    r = bece.recalibrate(y[:400], logits[:400], y[400:], logits[400:], input="logits",
                         model="binned", n_bins=10, num_samples=500)
    d = r.to_dict()
    assert json.loads(json.dumps(d)) == d
    assert d["diff"]["interval"] == list(r.interval(0.9)) and d["method"] == "temperature"
    assert d["calibrator"]["name"] == "TemperatureScaling" and d["test"]["n"] == 400
    u = bece.regression.pit(rng.normal(size=500), mean=0.0, std=0.8)
    e = bece.regression.bayesian_calibration_error(u, [0.25, 0.5, 0.75], num_samples=500)
    de = e.to_dict()
    assert json.loads(json.dumps(de)) == de
    assert de["calibration_error"]["interval"] == list(e.interval(0.9))
    assert [c["level"] for c in de["curve"]] == [0.25, 0.5, 0.75]
    assert de["prob_calibrated"] == e.prob_calibrated
    z = (rng.uniform(size=300) < 0.7).astype(int)
    cc = bece.cross_check(z, rng.uniform(0.6, 0.8, size=300), model="binned", n_bins=3,
                          num_chains=2, num_warmup=200, num_samples=300, progress_bar=False)
    dc = cc.to_dict()
    assert json.loads(json.dumps(dc)) == dc
    assert dc["agree"] == cc.agree and len(dc["table"]) == len(cc.table)
    assert dc["rule"]["delta"] == 0.25 and dc["max_ratio"] == cc.max_ratio


def test_recalibrate_json_is_the_results_to_dict(tmp_path, capsys):
    rng = np.random.default_rng(3)
    t = rng.uniform(0.05, 0.95, size=600)
    y = (rng.uniform(size=600) < t ** 1.5).astype(int)
    val, test = tmp_path / "val.csv", tmp_path / "test.csv"
    for path, sl in ((val, slice(0, 300)), (test, slice(300, 600))):
        path.write_text("y_true,y_prob\n" + "\n".join(
            f"{a},{float(b)!r}" for a, b in zip(y[sl], t[sl])))
    d = _cli_json(capsys, "recalibrate", str(val), str(test), "--method", "platt")
    own = bece.recalibrate(y[:300], t[:300], y[300:], t[300:], method="platt", seed=0).to_dict()
    for key in ("method", "calibrator", "before", "after", "diff", "prob_after_better"):
        assert d[key] == own[key], key


def _every_result():
    """One of each result type, small."""
    from bece.regression import bayesian_calibration_error, pit, pit_calibration_test
    from bece.validation import sbc

    rng = np.random.default_rng(2)
    p = rng.uniform(size=400)
    y = (rng.uniform(size=400) < p ** 1.2).astype(int)
    logits = rng.normal(scale=2.0, size=(600, 3))
    labels = (rng.uniform(size=(600, 1)) > np.cumsum(
        np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True), axis=1)).sum(axis=1)
    u = pit(rng.normal(size=300), mean=0.0, std=0.8)
    tiny = bece.MCMCSettings(num_chains=1, num_warmup=100, num_samples=100, progress_bar=False)
    return {
        "BayesianECE": bece.bayesian_ece(y, p, model="binned", num_samples=300),
        "SmoothBayesianECE": bece.bayesian_ece(y, p, num_samples=300),
        "BayesianTopLabelECE": bece.bayesian_top_label_ece(labels, logits, from_logits=True,
                                                           model="binned", num_samples=300),
        "Comparison": bece.compare(y, p, p ** 0.8, num_samples=300),
        "CalibrationTest": bece.calibration_test(y, p, num_resamples=99, num_samples=200),
        "Recalibration": bece.recalibrate(labels[:300], logits[:300], labels[300:], logits[300:],
                                          input="logits", num_samples=300),
        "CrossCheck": bece.cross_check(y, p, model=bece.BinnedModel(n_bins=4), mcmc=tiny),
        "BayesianCalibrationError": bayesian_calibration_error(u, num_samples=300),
        "RegressionCalibrationTest": pit_calibration_test(u, num_resamples=99, num_samples=200),
        "SBCResult": sbc(n=20, num_simulations=20, num_draws=9, num_hist_bins=5),
    }


def test_every_result_has_its_text_summary_and_json():
    """str() is the text a person reads; summary() a pandas table of the
    numbers; to_dict() plain JSON."""
    import pandas as pd

    for name, r in _every_result().items():
        assert type(r).__name__ == name
        text = str(r)
        assert text.strip() and "object at 0x" not in text, name
        table = r.summary()
        assert isinstance(table, pd.DataFrame) and len(table) >= 1, name
        d = r.to_dict()
        assert json.loads(json.dumps(d)) == d, name


def test_the_summaries_of_results_without_draws_hold_their_numbers():
    rs = _every_result()
    t = rs["CalibrationTest"]
    row = t.summary().loc["calibration_test"]
    assert row["p_value"] == t.p_value and row["prob_calibrated"] == t.prob_calibrated
    assert row["verdict"] == t.verdict().label
    rt = rs["RegressionCalibrationTest"]
    assert rt.summary().loc["pit_calibration_test", "p_value"] == rt.p_value
    assert rt.to_dict(0.5)["reject"] == rt.reject(0.5)
    cc = rs["CrossCheck"]
    assert cc.summary().equals(cc.table) and str(cc) == cc.text()
    rc = rs["Recalibration"]
    s = rc.summary()
    assert list(s.index) == ["ece_after", "ece_before", "ece_after - ece_before"]
    assert s.loc["ece_after", "mean"] == pytest.approx(rc.after.mean)
    sb = rs["SBCResult"]
    assert set(sb.summary().index) == set(sb.pvalues)
    assert sb.to_dict()["uniform"] == sb.uniform
