"""bece._metrics.scores: Brier score, log loss, Murphy and CORP decompositions,
against hand cases, scikit-learn and naive loops."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import brier_score_loss
from sklearn.metrics import log_loss as sk_log_loss

from bece.metrics import brier_decomposition, brier_score, corp_decomposition, log_loss

from ..conftest import simulate_binary, simulate_multiclass


def test_brier_and_log_loss_equal_sklearn(rng):
    y, p = simulate_binary(3000, rng, power=1.4)
    p = 0.01 + 0.98 * p
    w = rng.uniform(0.0, 3.0, size=p.size)
    assert abs(brier_score(y, p) - brier_score_loss(y, p)) <= 1e-10
    assert abs(brier_score(y, p, sample_weight=w) - brier_score_loss(y, p, sample_weight=w)) <= 1e-10
    assert abs(log_loss(y, p) - sk_log_loss(y, p)) <= 1e-10
    assert abs(log_loss(y, p, sample_weight=w) - sk_log_loss(y, p, sample_weight=w)) <= 1e-10


def test_top_label_reading(rng):
    y, prob = simulate_multiclass(2000, 5, rng, temperature=1.3)
    correct = (prob.argmax(axis=1) == y).astype(int)
    conf = prob.max(axis=1)
    assert abs(brier_score(y, prob) - brier_score_loss(correct, conf)) <= 1e-10
    assert abs(log_loss(y, prob) - sk_log_loss(correct, conf, labels=[0, 1])) <= 1e-10


def test_hand_cases():
    # (0.2-0)^2 + (0.6-1)^2 + (0.9-1)^2 = 0.04 + 0.16 + 0.01 = 0.21, / 3
    assert brier_score([0, 1, 1], [0.2, 0.6, 0.9]) == pytest.approx(0.07, abs=1e-15)
    assert log_loss([0, 1], [0.5, 0.5]) == pytest.approx(np.log(2), abs=1e-15)
    assert log_loss([1, 0], [0.0, 0.0]) == np.inf  # no clipping
    assert log_loss([1, 0], [0.0, 0.0], sample_weight=[0, 1]) == 0.0


def test_murphy_hand_case_and_identity(rng):
    # groups 0.5: z = 0, 1 (mean 0.5, REL 0); 0.9: z = 1, 1 (REL (0.1)^2 / 2 = 0.005)
    # RES: zbar = 0.75: ((0.5-0.75)^2 + (1-0.75)^2)/2 = 0.0625; UNC 0.75*0.25
    d = brier_decomposition([0, 1, 1, 1], [0.5, 0.5, 0.9, 0.9])
    assert (d.reliability, d.resolution, d.uncertainty, d.within) == pytest.approx(
        (0.005, 0.0625, 0.1875, 0.0), abs=1e-15)
    y, p = simulate_binary(2000, rng, power=1.5)
    w = rng.uniform(0.5, 2.0, size=p.size)
    for kw in ({}, {"binning": "uniform", "n_bins": 10}, {"binning": "quantile", "n_bins": 7}):
        d = brier_decomposition(y, p, sample_weight=w, **kw)
        total = d.reliability - d.resolution + d.uncertainty + d.within
        assert abs(total - d.brier) <= 1e-12
        assert abs(d.brier - brier_score_loss(y, p, sample_weight=w)) <= 1e-10
    assert brier_decomposition(y, p).within == pytest.approx(0.0, abs=1e-15)


def test_murphy_binned_equals_naive_loop(rng):
    y, p = simulate_binary(500, rng, power=2.0)
    d = brier_decomposition(y, p, binning="uniform", n_bins=5)
    rel = res = 0.0
    zbar = y.mean()
    for m in range(5):
        sel = np.minimum((p * 5).astype(int), 4) == m
        if sel.any():
            rel += sel.mean() * (p[sel].mean() - y[sel].mean()) ** 2
            res += sel.mean() * (y[sel].mean() - zbar) ** 2
    assert d.reliability == pytest.approx(rel, abs=1e-13)
    assert d.resolution == pytest.approx(res, abs=1e-13)


def _pav(x, z, w):
    """Pool-adjacent-violators on x-sorted data with ties pooled first (naive)."""
    order = np.argsort(x, kind="stable")
    xs, zs, ws = x[order], z[order], w[order]
    blocks = []  # [sum w z, sum w, count]
    i = 0
    while i < xs.size:
        j = i
        while j + 1 < xs.size and xs[j + 1] == xs[i]:
            j += 1
        blocks.append([float(np.dot(ws[i:j + 1], zs[i:j + 1])), float(ws[i:j + 1].sum()), j - i + 1])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            b = blocks.pop()
            blocks[-1] = [blocks[-1][0] + b[0], blocks[-1][1] + b[1], blocks[-1][2] + b[2]]
        i = j + 1
    fitted = np.concatenate([np.full(c, s / t) for s, t, c in blocks])
    out = np.empty_like(fitted)
    out[order] = fitted
    return out


def test_corp_hand_case():
    # PAV of z = 0, 1, 0, 1 at 0.1 < 0.4 < 0.6 < 0.9: 0, 0.5, 0.5, 1
    d = corp_decomposition([0, 1, 0, 1], [0.1, 0.4, 0.6, 0.9])
    assert d.recalibrated.tolist() == [0.0, 0.5, 0.5, 1.0]
    # S(p) = (0.01 + 0.36 + 0.36 + 0.01)/4 = 0.185; S(hat) = 0.125; S(zbar) = 0.25
    assert (d.score, d.miscalibration, d.discrimination, d.uncertainty) == pytest.approx(
        (0.185, 0.06, 0.125, 0.25), abs=1e-15)


@pytest.mark.parametrize("score", ["brier", "log"])
def test_corp_equals_naive_pav_and_adds_up(rng, score):
    y, p = simulate_binary(800, rng, power=1.6)
    p = np.round(p, 2) * 0.98 + 0.01  # ties, and away from 0 and 1 for the log score
    w = rng.integers(1, 4, size=p.size).astype(float)
    d = corp_decomposition(y, p, sample_weight=w, score=score)
    assert np.allclose(d.recalibrated, _pav(p, y.astype(float), w), atol=1e-12, rtol=0)
    assert abs(d.miscalibration - d.discrimination + d.uncertainty - d.score) <= 1e-12
    assert d.miscalibration >= 0 and d.discrimination >= 0
    # integer weights are repeated rows
    rep = corp_decomposition(np.repeat(y, w.astype(int)), np.repeat(p, w.astype(int)), score=score)
    assert rep.miscalibration == pytest.approx(d.miscalibration, abs=1e-12)


def test_bad_input():
    with pytest.raises(ValueError, match="sample_weight must have shape"):
        brier_score([0, 1], [0.2, 0.7], sample_weight=[1.0])
    with pytest.raises(ValueError, match="sample_weight must be >= 0"):
        log_loss([0, 1], [0.2, 0.7], sample_weight=[1.0, -1.0])
    with pytest.raises(ValueError, match="sample_weight contains NaN"):
        brier_score([0, 1], [0.2, 0.7], sample_weight=[1.0, np.nan])
    with pytest.raises(ValueError, match="sample_weight sums to 0"):
        brier_score([0, 1], [0.2, 0.7], sample_weight=[0.0, 0.0])
    with pytest.raises(ValueError, match="score must be one of"):
        corp_decomposition([0, 1], [0.2, 0.7], score="crps")
    with pytest.raises(ValueError, match="n_bins applies with binning"):
        brier_decomposition([0, 1], [0.2, 0.7], n_bins=3)
    with pytest.raises(ValueError, match="y_prob"):
        brier_score([0, 1], [0.2, 1.5])
