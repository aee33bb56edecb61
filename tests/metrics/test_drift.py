"""Calibration over time: windows, the drift rule, and --fail-on-drift."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import special, stats

import bece
from bece import CalibrationStats, GroupStats
from bece._metrics.drift import drift_statistic
from bece._stats.binning import make_binning
from bece.io import window_starts


# ------------------------------------------------------------------ windows
def test_datetime_windows_start_at_the_epoch_grid():
    t = np.array(["2026-11-27T09:30", "2026-11-27T23:59", "2026-11-28T00:00",
                  "2026-11-29T12:00"], dtype="datetime64[m]")
    assert window_starts(t, "1D").astype(str).tolist() == [
        "2026-11-27", "2026-11-27", "2026-11-28", "2026-11-29"]
    # 2-day windows count from 1970-01-01: 2026-11-27 is day 20,784 (even)
    assert (np.datetime64("2026-11-27") - np.datetime64("1970-01-01")).astype(int) % 2 == 0
    assert window_starts(t, "2D").astype(str).tolist() == [
        "2026-11-27", "2026-11-27", "2026-11-27", "2026-11-29"]
    assert window_starts(t, "6h").astype(str).tolist() == [
        "2026-11-27T06", "2026-11-27T18", "2026-11-28T00", "2026-11-29T12"]
    assert window_starts(t, "1M").astype(str).tolist() == ["2026-11"] * 4
    text = np.array(["2026-11-27T09:30:00", "2026-12-01T00:00:00"], dtype=object)
    assert window_starts(text, "1M").astype(str).tolist() == ["2026-11", "2026-12"]


def test_numeric_windows():
    assert window_starts(np.array([0, 99, 100, 250, -1]), 100).tolist() == [
        0.0, 0.0, 100.0, 200.0, -100.0]
    assert window_starts(np.array([0.5, 1.5]), 0.5).tolist() == [0.5, 1.5]


@pytest.mark.parametrize("time, window, match", [
    (np.array(["2026-11-27", "NaT"], dtype="datetime64[D]"), "1D", "1 missing value"),
    (np.array([1.0, np.nan]), 1, "missing value"),
    (np.array(["2026-11-27"], dtype="datetime64[D]"), "2X", "a count and a unit"),
    (np.array(["2026-11-27"], dtype="datetime64[D]"), "0D", "positive count"),
    (np.array([1, 2]), 0, "positive number"),
    (np.array([1, 2]), True, "positive number"),
    (np.array([1, 2]), "1D", "positive number"),
    (np.array(["monday", "tuesday"], dtype=object), "1D", "datetimes"),
])
def test_bad_windows_are_refused(time, window, match):
    with pytest.raises(ValueError, match=match):
        window_starts(time, window)


# ------------------------------------------------------------------ the statistic
def test_statistic_by_hand():
    bins = make_binning(None, 2)
    # reference: bin 0 holds 20 predictions of 0.25, 5 of them y = 1; bin 1 holds 30 of 0.75, 24 y = 1
    ref = CalibrationStats.from_arrays(np.r_[np.ones(5), np.zeros(15), np.ones(24), np.zeros(6)],
                                       np.r_[np.full(20, 0.25), np.full(30, 0.75)], binning=bins)
    # window: bin 0 has 10 of 0.2 with 5 y = 1; bin 1 has 40 of 0.8 with 28 y = 1
    win = CalibrationStats.from_arrays(np.r_[np.ones(5), np.zeros(5), np.ones(28), np.zeros(12)],
                                       np.r_[np.full(10, 0.2), np.full(40, 0.8)], binning=bins)
    t, k, p = drift_statistic(win, ref)
    gaps = [(5 / 10 - 0.2, 5 / 20 - 0.25, 10 / 30, 10, 20), (28 / 40 - 0.8, 24 / 30 - 0.75, 52 / 70, 40, 30)]
    want = sum((gw - gr) ** 2 / (c * (1 - c) * (1 / nw + 1 / nr)) for gw, gr, c, nw, nr in gaps)
    assert k == 2 and t == pytest.approx(want, rel=1e-12)
    assert p == pytest.approx(stats.chi2.sf(want, 2), rel=1e-12)
    # a bin with fewer than min_count predictions in either window does not count
    assert drift_statistic(win, ref, min_count=11)[1] == 1
    assert drift_statistic(win, ref, min_count=100) == (0.0, 0, 1.0)


def _windows(rng, n_windows, n, slope_after=1.0, change=None):
    w = np.repeat(np.arange(n_windows), n)
    p = rng.beta(2, 2, size=w.size)
    slope = np.where(change is not None and w >= (change or 0), slope_after, 1.0)
    y = (rng.uniform(size=p.size) < special.expit(slope * special.logit(p))).astype(np.int64)
    return y, p, w


def test_false_alarms_on_stationary_windows_stay_near_alpha():
    """401 calibrated windows of 2,000 against one reference. With a true rate of
    0.01 over 400 windows, more than 0.01 + 3 s.e. = 0.025 alarms has probability
    below 0.001 (binomial); the chi-squared approximation is conservative here."""
    rng = np.random.default_rng(5)
    y, p, w = _windows(rng, 401, 2000)
    d = bece.drift_test(GroupStats.from_arrays(make_binning(None, 15), w, y, p, "binary"))
    assert d.windows.size == 400 and d.alarm.mean() <= 0.025


def test_drift_test_finds_the_change_and_reads_references():
    rng = np.random.default_rng(3)
    y, p, w = _windows(rng, 12, 3000, slope_after=0.6, change=8)
    fine = bece.SmoothGroupModel().group_statistics(y, p, by=w)
    d = bece.drift_test(fine)
    assert d.first_alarm == 8 and d.drifted and d.alarm[7:].all() and not d.alarm[:6].any()
    # fine statistics are added up to the ECE bins: the same as statistics in them
    coarse = GroupStats.from_arrays(make_binning(None, 15), w, y, p, "binary")
    np.testing.assert_array_equal(bece.drift_test(coarse).statistic, d.statistic)
    pooled = bece.drift_test(fine, reference=[0, 1, 2])
    assert pooled.reference.tolist() == [0, 1, 2] and pooled.windows[0] == 3
    assert bece.drift_test(fine, reference=3).statistic.tolist() == pooled.statistic.tolist()
    d5 = json.loads(json.dumps(d.to_dict()))
    assert d5["drifted"] and d5["first_alarm"] == 8 and len(d5["windows"]) == 11
    assert "the last window (11) has drifted (first alarm: 8)" in str(d)
    for bad, match in [(dict(reference=12), "between 1 and 11"), (dict(reference=[99]), "no window"),
                       (dict(reference=list(range(12))), "every window"),
                       (dict(alpha=1.5), "prob")]:
        with pytest.raises(ValueError, match=match):
            bece.drift_test(fine, **bad)
    with pytest.raises(ValueError, match="GroupStats"):
        bece.drift_test(fine.stats[0])


def test_drift_test_takes_the_group_result(rng):
    y, p, w = _windows(rng, 4, 1000)
    r = bece.bayesian_ece(y, p, by=w, num_samples=200)
    assert bece.drift_test(r).windows.tolist() == [1, 2, 3]


# ------------------------------------------------------------------ command line
def _log(tmp_path, drift: bool):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    t = np.datetime64("2026-10-01T00:00") + np.sort(
        rng.integers(0, 12 * 24 * 60, size=36_000)).astype("timedelta64[m]")
    p = rng.beta(2, 2, size=t.size)
    late = t >= np.datetime64("2026-10-09")
    slope = np.where(late & drift, 0.5, 1.0)
    y = (rng.uniform(size=t.size) < special.expit(slope * special.logit(p))).astype(np.int64)
    path = tmp_path / f"{'drift' if drift else 'steady'}.parquet"
    pq.write_table(pa.table({"y_true": y, "y_prob": p, "ts": t.astype("datetime64[s]")}), path)
    return path


def test_fail_on_drift_exits_3_on_a_drifted_stream_and_0_on_a_stationary_one(tmp_path, capsys):
    from bece._cli import main

    # 3,000 predictions a day, the first three days the reference
    argv = ["--by", "ts", "--window", "1D", "--reference", "3", "--fail-on-drift", "--samples",
            "300"]
    assert main(["report", str(_log(tmp_path, True)), *argv]) == 3
    out = capsys.readouterr().out
    assert "by ts in windows of 1D" in out and "has drifted" in out
    assert main(["report", str(_log(tmp_path, False)), *argv]) == 0
    assert "has drifted" not in capsys.readouterr().out  # the last window did not alarm
    assert main(["report", str(_log(tmp_path, True)), "--by", "ts", "--window", "1D", "--json",
                 "--samples", "300", "--reference", "3"]) == 0  # no --fail-on-drift: 0
    d = json.loads(capsys.readouterr().out)
    assert d["window"] == "1D" and d["drift"]["drifted"] and d["drift"]["reference"] == [
        "2026-10-01", "2026-10-02", "2026-10-03"]
    assert d["groups"][0]["group"] == "2026-10-01"


def test_window_options_need_by(tmp_path, capsys):
    from bece._cli import main

    path = _log(tmp_path, False)
    for argv, words in [(["--window", "1D"], "--window applies only with --by"),
                        (["--fail-on-drift"], "--fail-on-drift applies only with --by"),
                        (["--by", "ts", "--window", "1Q"], "a count and a unit")]:
        assert main(["report", str(path), *argv]) == 2
        assert words in capsys.readouterr().err


def test_plot_over_time_needs_windows(rng):
    import matplotlib

    matplotlib.use("Agg")
    from bece.plots import plot_over_time

    p = rng.uniform(size=600)
    y = rng.uniform(size=600) < p
    r = bece.bayesian_ece(y, p, by=np.repeat(["a", "b"], 300), num_samples=100)
    with pytest.raises(ValueError, match="windows of time"):
        plot_over_time(r)
