"""One-pass metrics (bece._metrics.streaming): sums added over chunks equal
the sums of all the data to the last bit (exact sums), the metrics equal the
in-memory functions, and ``bece report --metrics`` gives the same bits
streamed (CSV, Parquet) as in memory (NPZ)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bece._cli import main
from bece._metrics.streaming import BLOCK, MERGEABLE, metric_sums, streamed_metrics
from bece._stats.binning import make_binning
from bece.metrics import (
    brier_decomposition,
    brier_score,
    calibration_in_the_large,
    l2_calibration_error,
    l2_ece_interval,
    log_loss,
    spiegelhalter_z,
)


def _data(n, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.01, 0.99, size=n)
    z = (rng.uniform(size=n) < p**1.4).astype(np.float64)
    return z, p


@pytest.mark.parametrize("cuts", [[3000], [1, 4095, 4097, 9000], [2500, 5000, 7500]])
def test_chunked_sums_equal_whole(cuts):
    z, p = _data(10_000)
    bins = make_binning(None, 15)
    whole = metric_sums(z, p, bins, n_boot=20, seed=3)
    parts = np.split(np.arange(z.size), cuts)
    merged = None
    for part in parts:
        s = metric_sums(z[part], p[part], bins, start=int(part[0]), n_boot=20, seed=3)
        merged = s if merged is None else merged + s
    for a, b in ((whole.bins, merged.bins), (whole.scalars, merged.scalars),
                 (whole.boot_bins, merged.boot_bins), (whole.boot_scalars, merged.boot_scalars)):
        np.testing.assert_array_equal(b, a)  # exact sums: the same bits
    # the reports too, intervals included
    names = list(MERGEABLE)
    assert streamed_metrics(whole, names) == streamed_metrics(merged, names)
    # and against exact rational sums of the terms (math.fsum, correctly rounded)
    import math

    b = bins.index(p)
    for j in range(15):
        for col, terms in ((1, p[b == j]), (4, (z - p)[b == j] ** 2)):
            assert abs(whole.bins[j, col] - math.fsum(terms)) <= 2 * np.spacing(math.fsum(terms))


def test_values_equal_in_memory_functions():
    z, p = _data(3000, seed=1)
    edges = np.linspace(0, 1, 11)
    bins = make_binning(None, None, edges)
    s = metric_sums(z, p, bins, n_boot=0)
    out = streamed_metrics(s, list(MERGEABLE))
    assert out["l2"]["value"] == pytest.approx(l2_calibration_error(z, p, binning=edges),
                                               rel=1e-12)
    assert out["debiased_l2"]["value"] == pytest.approx(
        l2_calibration_error(z, p, binning=edges, debiased=True), rel=1e-12)
    sun = l2_ece_interval(z, p, binning=edges)
    assert out["l2_sun"]["value"] == pytest.approx(sun.estimate, rel=1e-12)
    assert out["l2_sun"]["interval"] == pytest.approx([sun.low, sun.high], rel=1e-12)
    assert out["brier"]["value"] == pytest.approx(brier_score(z, p), rel=1e-12)
    assert out["log_loss"]["value"] == pytest.approx(log_loss(z, p), rel=1e-12)
    assert out["citl"]["value"] == pytest.approx(calibration_in_the_large(z, p), rel=1e-12)
    t = spiegelhalter_z(z, p)
    assert out["spiegelhalter"]["statistic"] == pytest.approx(t.statistic, rel=1e-12)
    assert out["spiegelhalter"]["p_value"] == pytest.approx(t.p_value, rel=1e-10)
    d = brier_decomposition(z, p, binning=edges)
    dec = out["brier"]["decomposition"]
    for k in ("reliability", "resolution", "uncertainty", "within"):
        assert dec[k] == pytest.approx(getattr(d, k), rel=1e-10, abs=1e-15)
    assert "interval" not in out["brier"]  # no replicates, no interval


def test_log_loss_infinite_and_spiegelhalter_undefined():
    bins = make_binning(None, 5)
    s = metric_sums(np.array([1.0, 0.0]), np.array([0.0, 0.2]), bins, n_boot=10)
    assert streamed_metrics(s, ["log_loss"])["log_loss"]["value"] == np.inf
    s = metric_sums(np.array([1.0, 0.0]), np.array([0.5, 0.5]), bins, n_boot=0)
    assert "error" in streamed_metrics(s, ["spiegelhalter"])["spiegelhalter"]


def test_poisson_bootstrap_interval_is_sensible():
    # 200 replicates: every replicate total is a Poisson(n) count (mean n,
    # sd sqrt(n)); the Brier interval brackets the estimate and its width is
    # within 30% of 2 * 1.645 * the Brier's standard error (MC error of a
    # 90% percentile interval from 200 replicates: ~10%; 3 sd)
    z, p = _data(4000, seed=2)
    s = metric_sums(z, p, make_binning(None, 15), n_boot=200, seed=5)
    totals = s.boot_bins[:, :, 0].sum(axis=1)
    assert abs(totals.mean() - 4000) < 4 * np.sqrt(4000 / 200)
    b = streamed_metrics(s, ["brier"])["brier"]
    lo, hi = b["interval"]
    se = np.std((p - z) ** 2) / np.sqrt(4000)
    assert lo < b["value"] < hi
    assert (hi - lo) / (2 * 1.645 * se) == pytest.approx(1.0, abs=0.3)


def test_add_refuses_other_bins_and_block_is_row_based():
    z, p = _data(100)
    a = metric_sums(z, p, make_binning(None, 10), n_boot=2)
    with pytest.raises(ValueError, match="same bins"):
        a + metric_sums(z, p, make_binning(None, 12), n_boot=2)
    assert BLOCK > 1


def test_cli_streamed_equals_in_memory(tmp_path, capsys):
    z, p = _data(1500, seed=4)
    rows = "\n".join(f"{int(a)},{b:.17g}" for a, b in zip(z, p))
    (tmp_path / "f.csv").write_text("y_true,y_prob\n" + rows + "\n")
    np.savez(tmp_path / "f.npz", y_true=z.astype(np.int64), y_prob=p)
    out = []
    for name in ("f.csv", "f.npz"):
        code = main(["report", str(tmp_path / name), "--json", "--model", "binned",
                     "--samples", "500", "--no-verdict",
                     "--metrics", "l2,debiased_l2,l2_sun,brier,log_loss,spiegelhalter,ks"])
        assert code == 0
        out.append(json.loads(capsys.readouterr().out)["metrics"])
    csv, npz = out
    assert list(csv) == ["l2", "debiased_l2", "l2_sun", "brier", "log_loss", "spiegelhalter", "ks"]
    for k in csv:
        assert csv[k]["one_pass"] == (k != "ks")
    assert csv == npz  # the same bits, intervals included
    assert csv["brier"]["value"] == pytest.approx(brier_score(z, p), rel=1e-12)
    assert "Poisson bootstrap" in csv["brier"]["interval_method"]


def test_cli_text_says_which_need_all_pairs(capsys):
    assert main(["report", "--samples", "500", "--model", "binned", "--no-verdict",
                 "--metrics", "brier,ece_sweep"]) == 0
    text = capsys.readouterr().out
    assert "all pairs in memory: ECE_sweep" in text
