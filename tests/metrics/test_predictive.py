"""bece._metrics.predictive: E|C - S| for C ~ Binomial(n, a), and the plug-in
ECE's expectation under the posterior predictive.

The closed form is checked by hand and against scipy.stats.binom's pmf summed
over every count (an independent implementation); the results' expected
plug-in against a naive simulation of redrawn outcomes (Monte Carlo, with its
tolerance and false-alarm rate stated at each test).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import bece
from bece._metrics.predictive import (
    PREDICTIVE_DRAWS,
    expected_absolute_gap,
    label_expected_plugin,
    predictive_draws,
)

from ..conftest import simulate_binary


def _brute(n: int, s: float, a: float) -> float:
    c = np.arange(n + 1)
    return float((np.abs(c - s) * stats.binom.pmf(c, n, a)).sum()) if n else 0.0


def test_by_hand():
    # one prediction, S = 0.3, a = 0.5: |0 - 0.3| / 2 + |1 - 0.3| / 2 = 0.5
    # two, S = 1, a = 0.5: C = 0, 1, 2 with 1/4, 1/2, 1/4: 1/4 + 0 + 1/4 = 0.5
    # an empty cell counts 0 whatever its accuracy (NaN in a draw)
    got = expected_absolute_gap(np.array([1, 2, 0, 3, 3]), np.array([0.3, 1.0, 0.0, 0.0, 3.0]),
                                np.array([0.5, 0.5, np.nan, 0.2, 1.0]))
    # S = 0: E C = 0.6; S = n with a = 1: C = 3 always, 0
    np.testing.assert_allclose(got, [0.5, 0.5, 0.0, 0.6, 0.0], rtol=0, atol=1e-15)


def test_against_the_binomial_pmf():
    rng = np.random.default_rng(3)
    n = rng.integers(1, 60, size=2000)
    s = rng.uniform(size=n.size) * n
    s[::7] = np.floor(s[::7])  # S on an integer: k = S - 1
    a = rng.uniform(size=n.size)
    a[::11], a[5::11] = 0.0, 1.0
    got = expected_absolute_gap(n, s, a)
    want = np.array([_brute(int(ni), si, ai) for ni, si, ai in zip(n, s, a)])
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-12)
    # large n: the normal limit sqrt(2 n a (1 - a) / pi) at S = n a
    big = expected_absolute_gap(10**6, 0.3 * 10**6, 0.3)
    assert big == pytest.approx(np.sqrt(2 * 10**6 * 0.21 / np.pi), rel=1e-3)


def test_label_sums_and_draw_budget():
    acc = np.array([[0.5, 0.5, 0.2]])
    got = label_expected_plugin(acc, np.array([1, 2, 3]), np.array([0.3, 1.0, 0.0]),
                                np.array([0, 0, 1]), 3)
    # label 0: (0.5 + 0.5) / 3 predictions; label 1: 0.6 / 3; label 2: none
    np.testing.assert_allclose(got[0, :2], [1.0 / 3.0, 0.2])
    assert np.isnan(got[0, 2])
    assert predictive_draws(10_000, 15) == PREDICTIVE_DRAWS
    assert predictive_draws(500, 15) == 500
    assert predictive_draws(10_000, 10**7) == 100


def _simulated_plugin(stats_list, accuracy, rng, reps, weights=None):
    """Naive: redraw each cell's count from each draw's accuracy (S, L, M),
    ``reps`` times, and compute the plug-in, labels averaged with
    ``weights`` (default: equal). Returns the mean over redraws and draws,
    and its Monte Carlo standard error."""
    counts = np.stack([s.bin_counts for s in stats_list])  # (L, M)
    sums = np.stack([s.sum_p for s in stats_list])
    n_l = counts.sum(axis=1)
    w = np.full(len(stats_list), 1 / len(stats_list)) if weights is None else weights
    means, variances = [], []
    for a in accuracy:
        c = rng.binomial(counts, np.nan_to_num(np.clip(a, 0, 1)), size=(reps,) + counts.shape)
        plugin = (np.abs(c - sums).sum(axis=2) / n_l) @ w  # (reps,)
        means.append(plugin.mean())
        variances.append(plugin.var(ddof=1))
    return float(np.mean(means)), float(np.sqrt(np.mean(variances) / (reps * len(means))))


def test_binned_expected_plugin_matches_a_simulation(rng):
    """400 redraws for each of 1,000 draws; within 5 Monte Carlo standard
    errors of the simulation (false alarm below 1e-6)."""
    y, p = simulate_binary(300, rng, power=1.5)
    r = bece.bayesian_ece(y, p, n_bins=10, num_samples=1000, seed=2, model="binned")
    mean, se = _simulated_plugin([r.stats], r.accuracy[:, None, :], np.random.default_rng(0), 400)
    assert r.expected_plugin() == pytest.approx(mean, abs=5 * se)
    # the plug-in is biased up for 300 predictions in 10 bins
    assert r.plugin_bias() == pytest.approx(r.expected_plugin() - r.mean)
    assert r.plugin_bias() > 5 * se


@pytest.mark.parametrize("average", ["label", "sample"])
def test_top_label_expected_plugin_matches_a_simulation(average):
    """The binned top-label posterior (K = 4, per-cell draws kept): the value
    computed while drawing equals the one from the kept per-cell accuracies,
    and a naive simulation under the chosen average (5 sd, as above)."""
    rng = np.random.default_rng(4)
    prob = rng.dirichlet(np.ones(4), size=600)
    y = (rng.uniform(size=(600, 1)) > prob.cumsum(axis=1)).sum(axis=1)
    r = bece.bayesian_top_label_ece(y, prob, n_bins=6, num_samples=400, seed=1, model="binned",
                                    average=average, keep_bins=True)
    stored = r.label_expected_plugin
    assert stored.shape == (400, 4)
    lazy = bece._results.ece.expected_label_plugin(r.label_accuracy, r.label_stats)
    np.testing.assert_allclose(stored, lazy, rtol=1e-12)
    n_l = np.array([s.n for s in r.label_stats], dtype=np.float64)
    weights = None if average == "label" else n_l / n_l.sum()
    mean, se = _simulated_plugin(r.label_stats, r.label_accuracy, np.random.default_rng(1), 400,
                                 weights)
    assert r.expected_plugin() == pytest.approx(mean, abs=5 * se)


def test_calibrated_default_explains_the_plugin():
    """Calibrated outcomes, K = 30 labels, 3,000 predictions: the default's
    interval is [0, 0] (P(calibrated) near 1), so its expected plug-in is
    that of calibration, each cell's accuracy its mean confidence; and the
    data's own plug-in is one draw of it (within 4 of its sds, a false
    alarm below 1e-4)."""
    rng = np.random.default_rng(11)
    logits = rng.normal(scale=3.0, size=(3000, 30))
    prob = np.exp(logits - logits.max(axis=1, keepdims=True))
    prob /= prob.sum(axis=1, keepdims=True)
    y = np.minimum((rng.uniform(size=(3000, 1)) > prob.cumsum(axis=1)).sum(axis=1), 29)
    r = bece.bayesian_top_label_ece(y, prob, seed=0)
    assert r.prob_calibrated > 0.9 and r.interval(0.9) == (0.0, 0.0)
    counts = np.stack([s.bin_counts for s in r.label_stats])
    sums = np.stack([s.sum_p for s in r.label_stats])
    lab, bins = np.nonzero(counts)
    calibrated = label_expected_plugin((sums[lab, bins] / counts[lab, bins])[None],
                                       counts[lab, bins], sums[lab, bins], lab, r.n_labels)
    assert r.expected_plugin() == pytest.approx(calibrated.mean(), rel=0.05)
    # the data's plug-in is one redraw under calibration: within 4 of the
    # redraws' sds of their mean (the sd from 400 redraws)
    cal = (sums / np.maximum(counts, 1))[None]
    mean, se = _simulated_plugin(r.label_stats, cal, rng, 400)
    assert mean == pytest.approx(calibrated.mean(), abs=5 * se)
    assert abs(r.plugin - r.expected_plugin()) < 4 * se * np.sqrt(400)
    text = str(r)
    assert "above the 90% interval: the plug-in's expected bias on these predictions is " \
        f"{r.plugin_bias():+.4f}" in text
    assert "unweighted mean over the 30 predicted labels (average='label')" in text


def test_no_bias_line_when_the_plugin_is_inside(rng):
    y, p = simulate_binary(2000, rng, power=1.3)
    r = bece.bayesian_ece(y, p, seed=3, model="binned")
    lo, hi = r.interval(0.9)
    assert lo <= r.plugin <= hi  # a binned interval at n = 2,000 holds its plug-in
    assert "expected bias" not in str(r)
    assert r.to_dict()["plugin_bias"] == pytest.approx(r.plugin_bias())
