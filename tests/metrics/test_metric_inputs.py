"""Every new plug-in metric reads (n, K) input top-label and triples with
y_pred as the (correct, confidence) pairs, and refuses bad input by name."""

from __future__ import annotations

import numpy as np
import pytest

from bece import metrics as bm

from ..conftest import simulate_multiclass

FLOATS = [
    bm.brier_score, bm.log_loss, bm.l2_calibration_error, bm.ece_sweep,
    bm.smooth_calibration_error, bm.ks_calibration_error, bm.calibration_in_the_large,
    lambda *a, **k: bm.calibration_slope(*a, **k).slope,
    lambda *a, **k: bm.spiegelhalter_z(*a, **k).statistic,
    lambda *a, **k: bm.hosmer_lemeshow(*a, **k).statistic,
    lambda *a, **k: bm.brier_decomposition(*a, **k).reliability,
    lambda *a, **k: bm.corp_decomposition(*a, **k).miscalibration,
]


@pytest.mark.parametrize("metric", FLOATS)
def test_top_label_and_triples_are_the_pairs(rng, metric):
    y, prob = simulate_multiclass(600, 4, rng, temperature=1.4)
    pred = prob.argmax(axis=1)
    conf = prob.max(axis=1)
    correct = (pred == y).astype(int)
    want = metric(correct, conf)
    assert metric(y, prob) == pytest.approx(want, abs=1e-12)
    assert metric(y, conf, y_pred=pred) == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("metric", FLOATS)
def test_bad_input_names_the_argument(metric):
    with pytest.raises(ValueError, match="y_prob"):
        metric([0, 1, 1], [0.2, np.nan, 0.7])
    with pytest.raises(ValueError, match="y_true"):
        metric([0, 1, 2], [0.2, 0.5, 0.7])
    with pytest.raises(ValueError, match="sample_weight"):
        metric([0, 1, 1], [0.2, 0.5, 0.7], sample_weight=[1.0, 2.0])


def test_posteriors_refuse_weights_the_plug_ins_take_them():
    import bece

    y, p, w = [0, 1, 1, 0], [0.2, 0.6, 0.9, 0.4], [1.0, 2.0, 1.0, 0.5]
    for fn in (bece.bayesian_ece, bece.bayesian_top_label_ece):
        with pytest.raises(ValueError, match="sample_weight is not supported by the posterior"):
            fn(y, p, sample_weight=w)
    # the plug-in with whole-number weights equals the repeated rows
    rep = np.repeat(np.arange(4), [1, 2, 1, 0])
    assert bm.brier_score(y, p, sample_weight=[1, 2, 1, 0]) == pytest.approx(
        bm.brier_score(np.array(y)[rep], np.array(p)[rep]), rel=1e-12)


@pytest.mark.parametrize("weight", [1e308, 1e160])
def test_weights_whose_sums_overflow_are_refused(weight):
    """Finite weights whose sum or sum of squares overflows float64 gave
    NaN, inf or a wrong 0.0 (smooth ECE; Spiegelhalter's Z = -0.0, p = 1):
    refused by name, with the remedy; 1e150 (sums finite) is accepted and,
    all equal, gives the unweighted value."""
    from bece import metrics

    y = np.r_[np.zeros(150), np.ones(150)]
    p = np.linspace(0.01, 0.99, 300)
    for fn in (metrics.smooth_calibration_error, metrics.spiegelhalter_z, metrics.brier_score):
        with pytest.raises(ValueError, match="sample_weight is too large for float64.*rescale"):
            fn(y, p, sample_weight=np.full(300, weight))
    same = metrics.smooth_calibration_error(y, p, sample_weight=np.full(300, 1e150))
    assert same == pytest.approx(metrics.smooth_calibration_error(y, p), rel=1e-12)
