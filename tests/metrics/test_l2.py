"""bece._metrics.l2: binned l2 error, Kumar's debiased estimator and ECE_sweep,
against hand cases and naive loops (Kumar's uncertainty-calibration itself is
compared in benchmarks/peer_ece.py)."""

from __future__ import annotations

import numpy as np
import pytest

from bece.metrics import ece_sweep, l2_calibration_error

from ..conftest import simulate_binary, simulate_multiclass


def test_hand_case():
    # M=2: bin 0 {0.2, z=0}: gap^2 0.04, share 1/4; bin 1 {0.6, 0.7, 0.9, all z=1}:
    # (1 - 2.2/3)^2 = (0.8/3)^2, share 3/4
    y, p = [0, 1, 1, 1], [0.2, 0.6, 0.7, 0.9]
    want = np.sqrt(0.04 / 4 + 0.75 * (0.8 / 3) ** 2)
    assert l2_calibration_error(y, p, n_bins=2) == pytest.approx(want, abs=1e-15)
    # debiased: bin 0 has one point (contributes 0); bin 1: zbar = 1 so no correction
    assert l2_calibration_error(y, p, n_bins=2, debiased=True) == pytest.approx(
        np.sqrt(0.75 * (0.8 / 3) ** 2), abs=1e-15)


def _kumar_loop(y, p, edges):
    """Kumar et al.'s unbiased_square_ce, written as a loop over bins [e_m, e_m+1)."""
    total, n = 0.0, len(p)
    for m in range(len(edges) - 1):
        last = m == len(edges) - 2
        sel = [(e >= edges[m]) and (e < edges[m + 1] or (last and e <= edges[m + 1])) for e in p]
        yy = [v for v, s in zip(y, sel) if s]
        pp = [v for v, s in zip(p, sel) if s]
        if len(yy) < 2:
            continue
        mean_y = sum(yy) / len(yy)
        est = (sum(pp) / len(pp) - mean_y) ** 2 - mean_y * (1 - mean_y) / (len(yy) - 1)
        total += len(yy) / n * est
    return np.sqrt(max(total, 0.0))


@pytest.mark.parametrize("binning", ["uniform", "quantile"])
def test_debiased_equals_kumar_loop(rng, binning):
    y, p = simulate_binary(600, rng, power=1.3)
    from bece._stats.binning import make_binning

    edges = make_binning(p, 10, binning).edges
    got = l2_calibration_error(y, p, n_bins=10, binning=binning, debiased=True)
    assert got == pytest.approx(_kumar_loop(list(y), list(p), list(edges)), abs=1e-12)


def test_plugin_equals_loop_and_weights_are_repeats(rng):
    y, prob = simulate_multiclass(1500, 4, rng, temperature=1.5)
    z = (prob.argmax(axis=1) == y).astype(float)
    c = prob.max(axis=1)
    b = np.minimum((c * 15).astype(int), 14)
    sq = sum((b == m).mean() * (c[b == m].mean() - z[b == m].mean()) ** 2
             for m in range(15) if (b == m).any())
    assert l2_calibration_error(y, prob) == pytest.approx(np.sqrt(sq), abs=1e-13)
    w = rng.integers(1, 4, size=c.size)
    rep = l2_calibration_error(np.repeat(z, w).astype(int), np.repeat(c, w))
    assert l2_calibration_error(z.astype(int), c, sample_weight=w) == pytest.approx(rep, abs=1e-13)


def test_debiased_removes_the_noise_bias(rng):
    """Calibrated data in 5 bins: the true binned l2 error is the within-bin
    spread only (p uniform, P(z|p) = p: bin means agree, error 0). The plug-in
    square is biased by sum_b pi_b zbar(1-zbar)/n_b ~ 0.2/200 per bin; the
    debiased square is unbiased. Mean of R = 200 replications of the debiased
    square (before the root) vs 0, with the replications' own sd: |mean| <
    4 sd/sqrt(R) fails with probability about 6e-5 (Normal mean)."""
    sq_deb, sq_plug = [], []
    for _ in range(200):
        y, p = simulate_binary(1000, rng, power=1.0)
        edges = np.linspace(0, 1, 6)
        b = np.minimum((p * 5).astype(int), 4)
        raw = 0.0
        for m in range(5):
            s = b == m
            zb = y[s].mean()
            raw += s.mean() * ((p[s].mean() - zb) ** 2 - zb * (1 - zb) / (s.sum() - 1))
        sq_deb.append(raw)
        sq_plug.append(l2_calibration_error(y, p, n_bins=5, binning=edges) ** 2)
        assert l2_calibration_error(y, p, n_bins=5, debiased=True) == pytest.approx(
            np.sqrt(max(raw, 0.0)), abs=1e-12)
    sd = np.std(sq_deb)
    assert abs(np.mean(sq_deb)) < 4 * sd / np.sqrt(200)
    assert np.mean(sq_plug) > 4 * np.std(sq_plug) / np.sqrt(200)  # the plug-in is biased up


def _sweep_loop(z, p):
    order = np.argsort(p, kind="stable")
    zs, ps = z[order], p[order]
    best = None
    for b in range(1, len(p) + 1):
        zg = [g.mean() for g in np.array_split(zs, b)]
        pg = [g.mean() for g in np.array_split(ps, b)]
        if b > 1 and np.any(np.diff(zg) < 0):
            break
        sizes = [len(g) for g in np.array_split(zs, b)]
        best = (sum(s / len(p) * abs(a - c) for s, a, c in zip(sizes, pg, zg)), b)
    return best


def test_sweep_hand_case_and_loop(rng):
    # 4 points, each its own bin with means 0, 0, 1, 1 (monotone): gaps .1 .3 .4 .2
    assert ece_sweep([0, 0, 1, 1], [0.1, 0.3, 0.6, 0.8], return_n_bins=True) == \
        pytest.approx((0.25, 4))
    y, p = simulate_binary(400, rng, power=1.5)
    got = ece_sweep(y, p, return_n_bins=True)
    want = _sweep_loop(y.astype(float), p)
    assert got[1] == want[1]
    assert got[0] == pytest.approx(want[0], abs=1e-13)


def test_bad_input():
    with pytest.raises(ValueError, match="sample_weight is not supported with debiased"):
        l2_calibration_error([0, 1], [0.2, 0.7], debiased=True, sample_weight=[1, 2])
    with pytest.raises(ValueError, match="debiased must be True or False"):
        l2_calibration_error([0, 1], [0.2, 0.7], debiased="yes")
    with pytest.raises(ValueError, match="p must be 1 or 2"):
        ece_sweep([0, 1], [0.2, 0.7], p=3)
    with pytest.raises(ValueError, match="n_bins must be a positive integer"):
        l2_calibration_error([0, 1], [0.2, 0.7], n_bins=0)
