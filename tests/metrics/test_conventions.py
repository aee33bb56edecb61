"""bece._metrics.conventions: each library's binned ECE ("Which ECE?").

scikit-learn and MAPIE are in the test extra and are called here; so are
Kumar's uncertainty-calibration (his ECE, HELM's ``ece_10_bin``) and relplot,
in test_light_peers.py. torchmetrics and netcal need torch (the ``peers``
extra): their conventions are checked on hand-computed three-point cases
here, and against the libraries themselves by ``benchmarks/peer_ece.py``
(the table on the documentation's validation page, "Which ECE?").
"""

from __future__ import annotations

import numpy as np
import pytest
from mapie.metrics.calibration import expected_calibration_error as mapie_ece
from sklearn.calibration import calibration_curve

from bece import expected_calibration_error
from bece._metrics.conventions import CONVENTIONS, peer_bins
from bece.metrics import peer_ece

from ..conftest import simulate_binary, simulate_multiclass

ALL = list(CONVENTIONS)

# Three-point cases (y, p, M) and the value under each convention, by hand.
# A: 0.2 on an inner edge (M=5). Left-closed bins put 0.2, 0.2, 0.3 together:
#    |1 - 0.7| / 3 = 0.1. Right-closed (sklearn, kumar; MAPIE's edges are 0, 0.25, ...)
#    split {0.2, 0.2} | {0.3}: (|1 - 0.4| + 0.3) / 3 = 0.3. helm: 3 groups, edges
#    {0.2, 0.25, 1}, right-closed: the same split, 0.3.
# B: p = 1.0 (M=5), y = 1, 1, 0 at 0.9, 0.9, 1.0. Together: |2 - 2.8| / 3 = 0.8/3.
#    A bin of its own for 1.0 (torchmetrics, relplot; helm's equal-mass edges
#    {0.9, 0.95, 1}): (|2 - 1.8| + |0 - 1|) / 3 = 0.4.
# C: p = 0.0 (M=5), y = 1, 0, 0 at 0, 0.1, 0.1. Together: |1 - 0.2| / 3 = 0.8/3.
#    MAPIE's bin {0} and helm's edges {0.05, 0.1, 1}: (1 + 0.2) / 3 = 0.4.
# D: p = 0.3 (M=10), y = 1, 0, 0 at 0.3, 0.35, 0.25. bece: floor(0.3 * 10) =
#    floor(3.0000000000000004) = 3, with 0.35: (|1 - 0.65| + 0.25) / 3 = 0.2. Every
#    peer puts 0.3 in bin 2 with 0.25 (linspace's edge is 0.30000000000000004;
#    0.3 / 0.1 = 2.9999999999999996; right-closed (0.2, 0.3]): (0.45 + 0.35) / 3.
#    helm: each point alone: (0.7 + 0.35 + 0.25) / 3.
# E: y = 1, 0, 0 at 0.12, 0.18, 0.3, each library's default M. M = 5 and 10 put
#    0.12 and 0.18 together: (0.7 + 0.3) / 3; M = 15, MAPIE's 49 intervals and
#    helm's equal mass keep all apart: (0.88 + 0.18 + 0.3) / 3.
# sklearn-quantile: np.percentile edges of the three points at m/M, searchsorted
#    left on the inner ones. A: inner edges 0.2, 0.2, 0.22, 0.26: {0.2, 0.2} | {0.3},
#    0.3. B: 0.9, 0.9, 0.92, 0.96: 1.0 alone, 0.4. C: 0.04, 0.08, 0.1, 0.1: 0.0
#    alone, 0.4. D (M=10): 0.26, ..., 0.34 by 0.01: each alone, 1.3/3. E: 0.144,
#    0.168, 0.204, 0.252: each alone, 1.36/3.
_T, _S = 0.8 / 3, 0.4
CASES = {
    "A": (([1, 0, 0], [0.2, 0.2, 0.3], 5), {
        "bece": 0.1, "torchmetrics": 0.1, "netcal": 0.1, "relplot": 0.1,
        "sklearn": 0.3, "mapie": 0.3, "kumar": 0.3, "helm": 0.3, "sklearn-quantile": 0.3}),
    "B": (([1, 1, 0], [0.9, 0.9, 1.0], 5), {
        "bece": _T, "netcal": _T, "sklearn": _T, "mapie": _T, "kumar": _T,
        "torchmetrics": _S, "relplot": _S, "helm": _S, "sklearn-quantile": _S}),
    "C": (([1, 0, 0], [0.0, 0.1, 0.1], 5), {
        "bece": _T, "torchmetrics": _T, "netcal": _T, "sklearn": _T, "kumar": _T,
        "relplot": _T, "mapie": _S, "helm": _S, "sklearn-quantile": _S}),
    "D": (([1, 0, 0], [0.3, 0.35, 0.25], 10), {
        "bece": 0.2, "torchmetrics": 0.8 / 3, "netcal": 0.8 / 3, "sklearn": 0.8 / 3,
        "mapie": 0.8 / 3, "kumar": 0.8 / 3, "relplot": 0.8 / 3, "helm": 1.3 / 3,
        "sklearn-quantile": 1.3 / 3}),
    "E": (([1, 0, 0], [0.12, 0.18, 0.3], None), {
        "netcal": 1 / 3, "sklearn": 1 / 3, "relplot": 1 / 3, "bece": 1.36 / 3,
        "torchmetrics": 1.36 / 3, "mapie": 1.36 / 3, "kumar": 1.36 / 3, "helm": 1.36 / 3,
        "sklearn-quantile": 1.36 / 3}),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("convention", ALL)
def test_three_point_cases_by_hand(case, convention):
    (y, p, m), expected = CASES[case]
    got = peer_ece(y, p, convention=convention, n_bins=m)
    # torchmetrics' (n,) float64 input stays float64; 1e-12 covers float64 sums
    assert got == pytest.approx(expected[convention], abs=1e-12)


def _sklearn_ece(y, p, m):
    prob_true, prob_pred = calibration_curve(y, p, n_bins=m, strategy="uniform")
    ids = np.searchsorted(np.linspace(0, 1, m + 1)[1:-1], p)
    counts = np.bincount(ids, minlength=m)
    counts = counts[counts > 0]
    return float(np.sum(counts / counts.sum() * np.abs(prob_true - prob_pred)))


def _edge_heavy(rng, n):
    """Binary data with a third of the confidences on multiples of 0.05 (inner
    edges of 5, 10 and 20 bins), some at exactly 0 and 1."""
    y, p = simulate_binary(n, rng, power=1.3)
    k = n // 3
    p[:k] = rng.integers(0, 21, size=k) / 20
    y[:k] = (rng.uniform(size=k) < p[:k]).astype(np.int64)
    return y, p


@pytest.mark.parametrize("m", [1, 5, 10, 15, 20])
def test_sklearn_convention_equals_calibration_curve(rng, m):
    y, p = _edge_heavy(rng, 3000)
    assert abs(peer_ece(y, p, convention="sklearn", n_bins=m) - _sklearn_ece(y, p, m)) <= 1e-12


@pytest.mark.parametrize("m", [2, 5, 15, 50])
def test_mapie_convention_equals_mapie(rng, m):
    y, p = _edge_heavy(rng, 3000)
    ref = mapie_ece(y, p, num_bins=m)
    assert abs(peer_ece(y, p, convention="mapie", n_bins=m) - ref) <= 1e-12


def test_mapie_top_label_reading(rng):
    # MAPIE compares the row maximum with y_true as given: pass the correctness
    y, prob = simulate_multiclass(2000, 4, rng, temperature=1.4)
    correct = (prob.argmax(axis=1) == y).astype(int)
    ref = mapie_ece(correct, prob, num_bins=15)
    assert abs(peer_ece(y, prob, convention="mapie", n_bins=15) - ref) <= 1e-12


def test_defaults_are_the_libraries_defaults(rng):
    y, p = _edge_heavy(rng, 1000)
    assert peer_ece(y, p, convention="sklearn") == peer_ece(y, p, convention="sklearn", n_bins=5)
    assert abs(peer_ece(y, p, convention="mapie") - mapie_ece(y, p)) <= 1e-12
    assert peer_ece(y, p) == expected_calibration_error(y, p)


def test_bece_convention_is_expected_calibration_error(rng):
    y, prob = simulate_multiclass(3000, 6, rng)
    for m in (1, 7, 15):
        assert abs(peer_ece(y, prob, n_bins=m) - expected_calibration_error(y, prob, n_bins=m)) \
            <= 1e-13


def _naive_bins(p, convention, m):
    """Bin of each confidence by a loop over explicit intervals (closedness written out)."""
    out = []
    for v in p:
        if convention in ("sklearn", "kumar"):  # [0, 1/M], (1/M, 2/M], ...
            b = next(j for j in range(m) if v <= (j + 1) / m or j == m - 1)
        elif convention == "mapie":  # {0}, (0, 1/(M-1)], ...
            b = 0 if v <= 0 else next(j for j in range(1, m) if v <= j / (m - 1))
        else:  # relplot: int(p / (1/M)), 1.0 alone in bin M
            b = int(v / (1.0 / m))
        out.append(b)
    return np.array(out)


@pytest.mark.parametrize("convention", ["sklearn", "kumar", "mapie", "relplot"])
def test_bins_equal_naive_loop_off_edges(rng, convention):
    # off the edges (continuous confidences) the interval description is exact
    p = rng.uniform(size=500)
    p[:3] = [0.0, 1.0, 0.5 + 1e-9]
    idx, _ = peer_bins(p, convention, 7)
    assert np.array_equal(idx, _naive_bins(p, convention, 7))


def test_extra_bin_sizes():
    p = np.array([0.0, 0.5, 1.0])
    assert peer_bins(p, "torchmetrics", 15) == (pytest.approx([0, 7, 15]), 16)
    assert peer_bins(p, "relplot", 10)[1] == 11
    assert peer_bins(p, "mapie", 15)[1] == 15
    assert peer_bins(p, "bece", 15)[0].tolist() == [0, 7, 14]


def _torchmetrics_loop(z, p, m):
    """torchmetrics' float32 arithmetic by a plain loop (sequential float32 sums)."""
    f = np.float32
    step = f(1.0) / f(m)
    edges = [f(i) * step if i < (m + 1) // 2 else f(1.0) - f(m - i) * step for i in range(m + 1)]
    count, s, a = [f(0)] * (m + 1), [f(0)] * (m + 1), [f(0)] * (m + 1)
    for zi, pi in zip(z, p):
        c = f(pi)
        b = sum(1 for e in edges if e <= c) - 1
        count[b] = f(count[b] + f(1))
        s[b] = f(s[b] + c)
        a[b] = f(a[b] + f(zi))
    total = f(sum(count))
    terms = [abs(f(a[b] / count[b]) - f(s[b] / count[b])) * f(count[b] / total)
             for b in range(m + 1) if count[b] > 0]
    return terms


def test_torchmetrics_float32_equals_loop(rng):
    y, prob = simulate_multiclass(400, 5, rng, temperature=1.5)
    z = (prob.argmax(axis=1) == y).astype(np.float64)
    conf = prob.max(axis=1)
    terms = _torchmetrics_loop(z, conf, 15)
    got = peer_ece(y, prob, convention="torchmetrics")
    # the final sum of at most 16 float32 terms: order-dependent to 16 ulp of the result
    assert abs(got - float(np.sum(np.array(terms, np.float32), dtype=np.float32))) <= \
        16 * np.finfo(np.float32).eps * got
    # and it is float32 arithmetic: within float32 rounding of the float64 number
    exact = peer_ece(y, prob.max(axis=1), convention="torchmetrics", y_pred=prob.argmax(axis=1))
    assert abs(got - exact) <= 1e-5


def test_torchmetrics_binary_keeps_float64(rng):
    y, p = simulate_binary(2000, rng)
    # float64 P(y=1) stays float64 in torchmetrics: equal to the plain edges' number
    idx, size = peer_bins(p, "torchmetrics", 15)
    ref = np.abs(np.bincount(idx, weights=y - p, minlength=size)).sum() / p.size
    assert abs(peer_ece(y, p, convention="torchmetrics") - ref) <= 1e-15
    got32 = peer_ece(y, p.astype(np.float32), convention="torchmetrics")
    assert got32 == float(np.float32(got32))


def test_bad_input():
    with pytest.raises(ValueError, match="convention must be one of"):
        peer_ece([0, 1], [0.2, 0.7], convention="pytorch")
    with pytest.raises(ValueError, match="n_bins must be a positive integer"):
        peer_ece([0, 1], [0.2, 0.7], convention="netcal", n_bins=0)
    with pytest.raises(ValueError, match="n_bins must be at least 2 for convention='mapie'"):
        peer_ece([0, 1], [0.2, 0.7], convention="mapie", n_bins=1)
    with pytest.raises(ValueError, match="y_prob"):
        peer_ece([0, 1], [0.2, 1.7], convention="sklearn")
    with pytest.raises(ValueError, match="y_prob contains NaN"):
        peer_ece([0, 1], [0.2, np.nan], convention="helm")


def test_netcal_clips_to_the_input_dtype_eps():
    # netcal clips to [eps, 1 - eps] with eps of the input's dtype, and the clipped values
    # enter the bin means: 1.0 -> 1 - eps in bin 9, 0.5 in bin 5 (M = 10)
    eps32 = float(np.finfo(np.float32).eps)
    got = peer_ece([1, 0], np.array([1.0, 0.5], np.float32), convention="netcal")
    assert got == pytest.approx(0.25 + eps32 / 2, abs=1e-15)
    assert peer_ece([1, 0], [1.0, 0.5], convention="netcal") == pytest.approx(0.25, abs=1e-15)


@pytest.mark.parametrize("m", [3, 5, 10])
def test_sklearn_quantile_convention_equals_calibration_curve_with_ties(rng, m):
    """calibration_curve(strategy="quantile") with tied confidences (two
    decimals, a third of them on a few values): the bins' mean outcome and
    confidence equal scikit-learn's, bin by bin; the external-validity
    report measured 0.2570 (bece's quantile bins) against 0.2604 here."""
    y, p = _edge_heavy(rng, 3000)
    p = np.round(p, 2)
    prob_true, prob_pred = calibration_curve(y, p, n_bins=m, strategy="quantile")
    index, size = peer_bins(p, "sklearn-quantile", m)
    counts = np.bincount(index, minlength=size)
    used = counts > 0
    mean_z = np.bincount(index, weights=y, minlength=size)[used] / counts[used]
    mean_p = np.bincount(index, weights=p, minlength=size)[used] / counts[used]
    np.testing.assert_allclose(mean_z, prob_true, rtol=0, atol=1e-15)
    np.testing.assert_allclose(mean_p, prob_pred, rtol=0, atol=1e-15)
    want = float(np.sum(counts[used] / p.size * np.abs(prob_true - prob_pred)))
    assert peer_ece(y, p, convention="sklearn-quantile", n_bins=m) == pytest.approx(want, abs=1e-12)


def test_netcal_averages_and_counts_in_two_binnings():
    """netcal takes each bin's means from scipy's binned_statistic_dd and its
    count from np.histogramdd. They agree on float64 confidences (0.7 with
    y = 1: 0.3 at M = 10, by hand) but can disagree on a float32 confidence
    at an edge, where netcal 1.4.0 gives 0.0 for ECE(10).measure(float32
    [0.7], [1]) (robustness report): the mean lands in the bin [0.7, 0.8),
    the count in [0.6, 0.7). peer_ece follows whichever way the installed
    scipy bins it."""
    from scipy.stats import binned_statistic_dd

    assert peer_ece([1], np.float64([0.7]), convention="netcal") == pytest.approx(0.3, abs=1e-15)
    x = np.float32([0.7])[:, None]
    edges = [np.linspace(0.0, 1.0, 11)]
    mean_bin = int(np.flatnonzero(~np.isnan(binned_statistic_dd(x, [1.0], "mean", bins=edges)[0]))[0])
    count_bin = int(np.flatnonzero(np.histogramdd(x, bins=edges)[0])[0])
    expected = 0.3 if mean_bin == count_bin else 0.0
    assert peer_ece([1], np.float32([0.7]), convention="netcal") == pytest.approx(expected, abs=1e-6)
    # away from the edges the two binnings agree: the ECE of one binning, by hand
    y, p = [1, 0, 1, 0], np.float32([0.15, 0.15, 0.55, 0.95])
    a, b, c = (float(np.float32(v)) for v in (0.15, 0.55, 0.95))  # in float64
    by_hand = (abs(0.5 - a) * 2 + abs(1 - b) + abs(0 - c)) / 4
    assert peer_ece(y, p, convention="netcal") == pytest.approx(by_hand, rel=1e-12)
