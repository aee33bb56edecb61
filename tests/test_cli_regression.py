"""`bece report FILE` on regression forecasts: detection, output, JSON, errors, plot.

Numbers are checked against an independent path: the Gaussian PIT from
scipy.stats.norm.cdf, observed frequencies by a naive loop, the quantile
forecast's observed frequency at its own levels as the fraction of targets
at or below each quantile column (exact whatever the randomisation), and
the sample forecast's frequencies bracketed by the ranks of y among the
draws.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bece._cli import main
from bece.regression import bayesian_calibration_error, calibration_error, pit, pit_calibration_test

LEVELS = np.arange(1, 100) / 100  # the report's default levels


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _write(frame: pd.DataFrame, path):
    if path.suffix == ".csv":
        frame.to_csv(path, index=False, float_format="%.17g")  # exact float64 round trip
    elif path.suffix == ".parquet":
        frame.to_parquet(path)
    else:
        np.savez(path, **{c: frame[c].to_numpy() for c in frame})
    return path


def _gaussian(rng, n=400, scale=1.0):
    """Targets y ~ N(mu, 1) and a forecast N(mu, scale^2)."""
    mu = rng.normal(size=n)
    y = mu + rng.normal(size=n)
    return y, mu, np.full(n, scale)


def _naive_observed(u, levels):
    return np.array([sum(1 for v in u if v <= p) / len(u) for p in levels])


# ------------------------------------------------------------------ Gaussian
@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".npz"])
def test_gaussian_forecast_matches_an_independent_pit(tmp_path, capsys, rng, suffix):
    y, mu, sd = _gaussian(rng)
    sd = sd * rng.uniform(0.8, 1.2, size=y.size)
    path = _write(pd.DataFrame({"y": y, "mean": mu, "std": sd}), tmp_path / f"f{suffix}")
    code, out, err = run(capsys, "report", path, "--json", "--samples", 1000, "--seed", 5)
    assert code == 0 and err == ""
    d = json.loads(out)
    u = stats.norm.cdf(y, loc=mu, scale=sd)  # independent of bece.regression.pit
    observed = _naive_observed(u, LEVELS)
    assert d["kind"] == "regression" and d["forecast"] == "gaussian" and d["n"] == 400
    assert d["columns"] == {"y": "y", "forecast": ["mean", "std"]}
    assert d["pit"] == {"randomized": False, "seed": None}
    np.testing.assert_array_equal([c["level"] for c in d["curve"]], LEVELS)
    np.testing.assert_array_equal([c["observed"] for c in d["curve"]], observed)
    e = d["calibration_error"]
    # by hand: the mean over the levels of (p_j - observed_j)^2
    assert e["plugin"] == pytest.approx(np.mean((LEVELS - observed) ** 2), rel=1e-12)
    assert e["weights"] == "mean"
    assert e["plugin"] == pytest.approx(calibration_error(u, LEVELS), rel=1e-12)
    ref = bayesian_calibration_error(u, LEVELS, num_samples=1000, seed=5)
    assert e["mean"] == pytest.approx(ref.mean, rel=1e-12)
    assert e["interval"] == pytest.approx(list(ref.interval(0.9)), rel=1e-12) and e["prob"] == 0.9
    lo, hi = ref.curve_interval(0.9)
    np.testing.assert_allclose([c["interval"] for c in d["curve"]], np.column_stack([lo, hi]),
                               rtol=1e-12)
    v = d["verdict"]
    test = pit_calibration_test(u, seed=5)
    assert v["test"] == "anderson-darling" and v["level"] == 0.05
    assert v["p_value"] == test.p_value and v["calibrated"] == test.verdict().calibrated
    assert v["verdict"] == test.verdict().label and v["log_bayes_factor"] == test.log_bayes_factor
    assert v["prob_calibrated"] == pytest.approx(test.prob_calibrated, rel=1e-9)
    assert v["bayes_factor"] == pytest.approx(test.bayes_factor, rel=1e-9)


def test_gaussian_text_report(tmp_path, capsys, rng):
    y, mu, sd = _gaussian(rng, n=300)
    path = _write(pd.DataFrame({"y": y, "mean": mu, "std": sd}), tmp_path / "f.csv")
    code, out, err = run(capsys, "report", path, "--samples", 800, "--seed", 2)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == (f"bece report: {path} (300 Gaussian regression forecasts of y by mean, std; "
                        "continuous PIT)")
    assert lines[1].startswith("  verdict            ")  # the first thing a user reads
    u = stats.norm.cdf(y, loc=mu, scale=sd)
    ref = bayesian_calibration_error(u, LEVELS, num_samples=800, seed=2)
    lo, hi = ref.interval(0.9)
    assert f"calibration error  {ref.mean:.3g}   posterior mean" in out
    assert f"[{lo:.3g}, {hi:.3g}]" in out and f"plug-in            {ref.plugin:.3g}" in out
    assert "99 levels 0.01 ... 0.99" in out
    # the table: the seven levels nearest to 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95
    observed = _naive_observed(u, [0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95])
    rows = [ln.split() for ln in lines if ln.startswith("     0.") or ln.startswith("      0.")]
    assert [float(r[0]) for r in rows] == [0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95]
    assert [float(r[1]) for r in rows] == [round(o, 4) for o in observed]
    assert "300 Gaussian regression forecasts of y by mean, std" in out and "continuous" in out


def test_overconfident_forecaster_is_miscalibrated(tmp_path, capsys, rng):
    """std half the truth, n = 400: the PIT puts about 32% of its mass
    below 0.1 or above 0.9 (20% under calibration), an Anderson-Darling
    statistic far beyond any of the 1000 resampled under calibration, so
    the p-value is its floor 1/1001 and a 'calibrated' verdict here would be
    a bug, not chance."""
    y, mu, sd = _gaussian(rng, scale=0.5)
    path = _write(pd.DataFrame({"y": y, "mean": mu, "std": sd}), tmp_path / "f.csv")
    code, out, _ = run(capsys, "report", path, "--json", "--samples", 500)
    v = json.loads(out)["verdict"]
    assert code == 0 and v["calibrated"] is False and v["p_value"] == 1 / 1001
    assert v["prob_calibrated"] < 1e-6
    assert v["text"].startswith("miscalibrated (Anderson-Darling p <= 0.001, B01 = ")
    code, out, _ = run(capsys, "report", path, "--samples", 500)
    assert out.splitlines()[1] == f"  verdict            {v['text']}"


# --------------------------------------------------------- quantile forecasts
def test_quantile_forecast_at_its_own_levels(tmp_path, capsys, rng):
    y, mu, _ = _gaussian(rng, n=500)
    levels = [0.05, 0.25, 0.5, 0.75, 0.95]
    q = np.column_stack([stats.norm.ppf(p, loc=mu, scale=1.3) for p in levels])  # too wide
    cols = {f"q_{p}": q[:, j] for j, p in enumerate(levels)}
    frame = pd.DataFrame({"y": y, **dict(reversed(list(cols.items())))})  # columns out of order
    path = _write(frame, tmp_path / "q.parquet")
    code, out, _ = run(capsys, "report", path, "--json", "--samples", 1000, "--seed", 7)
    assert code == 0
    d = json.loads(out)
    assert d["forecast"] == "quantiles" and d["pit"] == {"randomized": True, "seed": 7}
    assert d["columns"]["forecast"] == [f"q_{p}" for p in levels]
    # at its own levels the observed frequency is the fraction of y <= q_k, exactly
    observed = (y[:, None] <= q).mean(axis=0)
    np.testing.assert_array_equal([c["level"] for c in d["curve"]], levels)
    np.testing.assert_array_equal([c["observed"] for c in d["curve"]], observed)
    assert d["calibration_error"]["plugin"] == pytest.approx(np.mean((levels - observed) ** 2), rel=1e-12)
    # the library on the same arrays, same seed
    u = pit(y, quantiles=q, levels=levels, randomize=True, seed=7)
    # fitted to the counts between the forecast's levels, where the randomised PIT is uniform
    ref = bayesian_calibration_error(u, levels, num_samples=1000, seed=7, forecast_levels=levels)
    assert d["calibration_error"]["mean"] == pytest.approx(ref.mean, rel=1e-12)
    t = pit_calibration_test(u, seed=7, forecast_levels=levels)  # the verdict's Bayes factor: the same counts
    assert d["verdict"]["bayes_factor"] == pytest.approx(t.bayes_factor, rel=1e-12)
    code, text, _ = run(capsys, "report", path, "--samples", 1000, "--seed", 7)
    assert "5 level(s) 0.05, 0.25, 0.5, 0.75, 0.95" in text and "randomised" in text
    assert "500 quantile regression forecasts of y by q_0.05, q_0.25, q_0.5, q_0.75, ... (5 columns)" in text


# ----------------------------------------------------------- sample forecasts
def test_sample_forecast_randomised_pit(tmp_path, capsys, rng):
    n, s = 300, 50
    y, mu, _ = _gaussian(rng, n=n)
    draws = mu[:, None] + rng.normal(size=(n, s))
    path = _write(pd.DataFrame({"y": y, **{f"s_{i}": draws[:, i] for i in range(s)}}), tmp_path / "s.npz")
    code, out, _ = run(capsys, "report", path, "--json", "--samples", 500, "--seed", 3)
    assert code == 0
    d = json.loads(out)
    assert d["forecast"] == "samples" and d["pit"]["randomized"] and len(d["columns"]["forecast"]) == s
    # the randomised PIT lies between rank/(S+1) and (rank+1)/(S+1), rank = #{draws < y}
    rank = np.array([sum(1 for v in row if v < t) for row, t in zip(draws, y)])
    low = _naive_observed((rank + 1) / (s + 1), LEVELS)
    high = _naive_observed(rank / (s + 1), LEVELS)
    observed = np.array([c["observed"] for c in d["curve"]])
    assert np.all(low <= observed) and np.all(observed <= high)
    u = pit(y, samples=draws, randomize=True, seed=3)
    np.testing.assert_array_equal(observed, _naive_observed(u, LEVELS))
    # fitted with the model of the ranks among the S draws; the verdict's Bayes factor too
    ref = bayesian_calibration_error(u, num_samples=500, seed=3, forecast_draws=s)
    assert d["calibration_error"]["mean"] == pytest.approx(ref.mean, rel=1e-12)
    t = pit_calibration_test(u, seed=3, forecast_draws=s)
    assert d["verdict"]["bayes_factor"] == pytest.approx(t.bayes_factor, rel=1e-12)


def test_json_keys(tmp_path, capsys, rng):
    y, mu, sd = _gaussian(rng, n=50)
    path = _write(pd.DataFrame({"y": y, "mean": mu, "std": sd}), tmp_path / "f.csv")
    code, out, _ = run(capsys, "report", path, "--json", "--samples", 200)
    d = json.loads(out)
    assert code == 0 and set(d) == {"kind", "source", "forecast", "n", "columns", "pit", "verdict",
                                    "calibration_error", "curve"}
    assert set(d["verdict"]) == {"verdict", "calibrated", "test", "p_value", "level", "bayes_factor",
                                 "log_bayes_factor", "bayes_factor_threshold", "prob_calibrated",
                                 "prior_odds", "text"}
    assert set(d["calibration_error"]) == {"mean", "std", "prob", "interval", "plugin", "levels",
                                           "weights"}
    assert set(d["curve"][0]) == {"level", "observed", "interval"} and d["source"] == str(path)


def test_text_notes_a_band_on_the_diagonal():
    """The text says what a band of width 0 at the level means, only when there is one."""
    from bece._regression.report_text import report_lines

    class Result:  # the numbers a result's to_dict() gives, with that band
        num_samples = 100

        def __init__(self, band):
            self.band = band

        def to_dict(self, prob):
            return {"calibration_error": {"mean": 0.0, "std": 0.0, "prob": prob, "interval": [0.0, 0.0],
                                          "plugin": 0.01, "levels": [0.25, 0.5]},
                    "curve": [{"level": 0.25, "observed": 0.3, "interval": [0.2, 0.3]},
                              {"level": 0.5, "observed": 0.4, "interval": self.band}]}

    note = "  (a band [level, level]: at least 90% of the posterior is on the calibrated curve there)"
    assert note in report_lines(Result([0.5, 0.5]))
    assert note not in report_lines(Result([0.45, 0.55]))
    assert note not in report_lines(Result([0.4, 0.4]))  # width 0, but not at the level


def test_report_prints_the_results_own_text(tmp_path, capsys):
    """A header naming the file, its forecasts and the PIT, then the result's text."""
    from bece.regression import bayesian_calibration_error, pit, pit_calibration_test

    rng = np.random.default_rng(4)
    mu = rng.normal(size=300)
    y = mu + rng.normal(size=300)
    path = tmp_path / "f.csv"
    path.write_text("y,mean,std\n" + "\n".join(f"{a!r},{b!r},0.8" for a, b in zip(y.tolist(), mu.tolist())))
    assert main(["report", str(path), "--samples", "1000"]) == 0
    out = capsys.readouterr().out.rstrip("\n")
    u = pit(y, mean=mu, std=0.8)
    r = bayesian_calibration_error(u, num_samples=1000, seed=0)
    head = f"bece report: {path} (300 Gaussian regression forecasts of y by mean, std; continuous PIT)"
    assert out == f"{head}\n{r.text(test=pit_calibration_test(u, seed=0))}"


def test_warnings_are_one_line_each(tmp_path, capsys, rng, monkeypatch):
    """A warning of the computation (e.g. autocorrelated draws) is one line
    on stderr, repeated ones once; the report still runs (exit 0)."""
    import warnings

    import bece._regression.forecast as forecast

    real = forecast.pit

    def warning_pit(*args, **kwargs):
        for _ in range(2):
            warnings.warn("the draws look\n  autocorrelated", UserWarning, stacklevel=2)
        return real(*args, **kwargs)

    monkeypatch.setattr(forecast, "pit", warning_pit)
    y, mu, sd = _gaussian(rng, n=50)
    path = _write(pd.DataFrame({"y": y, "mean": mu, "std": sd}), tmp_path / "f.csv")
    code, out, err = run(capsys, "report", path, "--json", "--samples", 100)
    assert code == 0 and json.loads(out)["n"] == 50
    assert err == "bece: warning: the draws look autocorrelated\n"


# --------------------------------------------------------------- options
def test_column_options_and_levels(tmp_path, capsys, rng):
    y, mu, sd = _gaussian(rng, n=200)
    path = _write(pd.DataFrame({"target": y, "mu": mu, "sigma": sd, "y_true": 1}), tmp_path / "f.csv")
    code, out, err = run(capsys, "report", path, "--y-col", "target", "--mean-col", "mu",
                         "--std-col", "sigma", "--levels", "0.1,0.5,0.9", "--samples", 300)
    assert code == 0 and err == ""
    u = stats.norm.cdf(y, loc=mu, scale=sd)
    observed = _naive_observed(u, [0.1, 0.5, 0.9])
    rows = [ln.split() for ln in out.splitlines() if ln.startswith("      0.")]
    assert [float(r[0]) for r in rows] == [0.1, 0.5, 0.9]  # every level asked for
    assert [float(r[1]) for r in rows] == [round(o, 4) for o in observed]
    assert "forecasts of target by mu, sigma" in out
    draws = mu[:, None] + rng.normal(size=(200, 3))
    frame = pd.DataFrame({"y": y, **{f"draw{i}": draws[:, i] for i in range(3)}})
    code, out, _ = run(capsys, "report", _write(frame, tmp_path / "d.csv"), "--sample-prefix", "draw",
                       "--json", "--samples", 100)
    assert code == 0 and json.loads(out)["columns"]["forecast"] == ["draw0", "draw1", "draw2"]
    frame = pd.DataFrame({"y": y, "Q0.2": mu - 1, "Q0.8": mu + 1})
    code, out, _ = run(capsys, "report", _write(frame, tmp_path / "q.csv"), "--quantile-prefix", "Q",
                       "--json", "--samples", 100)
    assert code == 0 and json.loads(out)["calibration_error"]["levels"] == [0.2, 0.8]


# ------------------------------------------------------------------ errors
@pytest.mark.parametrize(
    "content, argv, message",
    [
        ("a,b\n1,2\n", [], "no probability columns of a classifier and no regression forecast "
         "columns (found: a, b); expected 'y_true' with 'y_prob' or 'p_0' ... 'p_{K-1}' (classifier), "
         "or 'y' with 'mean' and 'std'"),
        ("y_true,y_prob,y,mean,std\n1,0.5,1,0,1\n", [], "holds both a classifier's columns"),
        ("y,mean\n1,0\n", [], "has 'mean' but no 'std' column"),
        ("y,mean,std\n1,0,1\n2,0,0\n", [], "column 'std' must be > 0; 1 value(s) (row 1: 0.0)"),
        ("y,mean,std\n1,0,1\n2,nan,1\n", [], "column 'mean' has 1 missing or NaN value(s)"),
        ("y,q_0.1,q_0.9\n1,0,1\n2,3,2\n", [], "row 1 has q_0.1 = 3.0 above q_0.9 = 2.0"),
        ("y,q_10,q_90\n1,0,1\n", [], "column 'q_10' names level 10.0"),
        ("y,q_0.5,q_.5\n1,0,1\n", [], "columns 'q_0.5' and 'q_.5' both hold level 0.5"),
        ("y,s_0,s_2\n1,0,1\n", [], "without gaps, found s_0, s_2"),
        ("y,mean,std\n1,0,1\n", ["--y-col", "target"], "no target column 'target' (found: y, mean, std)"),
        ("y,mean,std\n1,0,1\n", ["--n-bins", "10"], "--n-bins applies only to a classifier's predictions"),
        ("y,mean,std\n1,0,1\n", ["--model", "smooth", "--binning", "quantile"],
         "--model, --binning apply only to a classifier's predictions"),
        ("y_true,y_prob\n1,0.5\n", ["--levels", "0.5"], "--levels applies only to regression forecasts"),
        ("y,mean,std\n1,0,1\n", ["--levels", "0.5,0.1"],
         "must be strictly increasing (0.5 is followed by 0.1)"),
        ("y,mean,std\n1,0,1\n", ["--levels", "0,0.5"], "invalid levels '0,0.5': give numbers in (0, 1)"),
        ("y,mean,std\n1,0,1\n", ["--plot", "out.xyz"], "unknown image type '.xyz'"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, content, argv, message):
    path = tmp_path / "f.csv"
    path.write_text(content)
    code, out, err = run(capsys, "report", path, *argv)
    assert code == 2 and out == "" and "Traceback" not in err
    assert message in err and err.count("\n") == 1


def test_regression_options_without_a_file(capsys):
    code, out, err = run(capsys, "report", "--y-col", "y")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "--y-col applies only to regression forecasts in a FILE" in err


# ------------------------------------------------------------------- plot
def test_plot_writes_the_calibration_curve(tmp_path, capsys, rng):
    y, mu, sd = _gaussian(rng, n=200)
    path = _write(pd.DataFrame({"y": y, "mean": mu, "std": sd}), tmp_path / "f.csv")
    png = tmp_path / "curve.png"
    code, out, err = run(capsys, "report", path, "--samples", 300, "--plot", png)
    assert code == 0 and err == "" and f"figure written to {png}" in out
    assert png.stat().st_size > 10_000 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = tmp_path / "curve.svg"
    code, out, _ = run(capsys, "report", path, "--json", "--samples", 300, "--plot", svg)
    assert code == 0 and json.loads(out)["n"] == 200  # stdout stays one JSON object
    text = svg.read_text()
    assert "<svg" in text and "expected level" in text and "f.csv (Gaussian forecasts, n = 200)" in text


def test_as_a_process(tmp_path):
    """The command a user types: a bad forecast file is one line on stderr and
    exit code 2 (the successful runs are checked in-process above)."""
    path = tmp_path / "f.csv"
    path.write_text("y,mean,std\n1,0,1\n2,0,-1\n")
    r = subprocess.run([sys.executable, "-m", "bece", "report", str(path)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and r.stdout == "" and "Traceback" not in r.stderr
    assert r.stderr == f"bece: error: {path}: column 'std' must be > 0; 1 value(s) (row 1: -1.0) are not\n"
