"""bece.recalibrate: fit on validation, the test set before and after through bece.compare."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special
from sklearn.metrics import log_loss

import bece
from bece.calibrate import BetaCalibration, MatrixScaling, TemperatureScaling

from .helpers import logits_with_temperature

S = 2000  # joint draws: enough for the checks below, which compare draws exactly


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(11)
    z, y = logits_with_temperature(1200, 4, rng, temperature=2.0)
    return z[:600], y[:600], z[600:], y[600:]


def test_equals_fitting_and_comparing_by_hand(data):
    zv, yv, zt, yt = data
    r = bece.recalibrate(yv, zv, yt, zt, input="logits", num_samples=S, seed=3)
    ts = TemperatureScaling(input="logits").fit(zv, yv)
    after = ts.predict_proba(zt)
    before = special.softmax(zt, axis=1)
    c = bece.compare(yt, after, before, num_samples=S, seed=3)
    assert r.calibrator.temperature_ == ts.temperature_
    np.testing.assert_array_equal(r.y_prob, after)
    np.testing.assert_array_equal(r.diff_draws, c.diff_draws)
    np.testing.assert_array_equal(r.after.draws, c.a.draws)
    np.testing.assert_array_equal(r.before.draws, c.b.draws)
    assert r.prob_better == c.prob_a_better and r.interval(0.8) == c.interval(0.8)
    assert r.before.plugin == pytest.approx(bece.expected_calibration_error(yt, before), abs=1e-15)
    # independent NLL: scikit-learn's log_loss
    assert r.nll_before == pytest.approx(log_loss(yt, before, labels=range(4)), rel=1e-12)
    assert r.nll_after == pytest.approx(log_loss(yt, after, labels=range(4)), rel=1e-12)
    assert (r.method, r.input, r.n_val, r.classes) == ("temperature", "logits", 600, None)


def test_recovers_an_over_confident_model(data):
    """Labels drawn with T = 2, so logits at T = 1 are over-confident; with
    600 test rows the improvement is far beyond the posterior's spread
    (fixed seeds: deterministic)."""
    zv, yv, zt, yt = data
    r = bece.recalibrate(yv, zv, yt, zt, num_samples=S, seed=0)  # input="auto": logits
    assert r.input == "logits"
    assert 1.7 < r.calibrator.temperature_ < 2.3
    assert r.interval(0.9)[1] < 0 and r.prob_better > 0.99
    assert r.nll_after < r.nll_before
    text = str(r)
    assert "method        temperature scaling" in text and "validation    600 predictions" in text
    assert "after - before" in text and "Verdict: recalibration lowered" in text
    assert "T = " in text and repr(r).startswith("Recalibration(method='temperature'")


def test_hand_computed_nll():
    # one test row, logits (0, ln 3): p = (1/4, 3/4); label 1: NLL = -ln(3/4)
    zv = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 2.0], [2.0, 0.5]])
    yv = np.array([1, 0, 1, 1])  # three of four right: a finite T
    zt = np.array([[0.0, np.log(3.0)], [0.0, np.log(3.0)]])
    r = bece.recalibrate(yv, zv, np.array([1, 0]), zt, input="logits", num_samples=200)
    assert r.nll_before == pytest.approx(-(np.log(0.75) + np.log(0.25)) / 2, rel=1e-14)


def test_probabilities_are_scored_as_given(data):
    zv, yv, zt, yt = data
    pv, pt = special.softmax(zv, axis=1), special.softmax(zt, axis=1)
    r = bece.recalibrate(yv, pv, yt, pt, method="vector", num_samples=S, seed=1)
    assert r.input == "probabilities"
    c = bece.compare(yt, r.y_prob, pt, num_samples=S, seed=1)
    np.testing.assert_array_equal(r.diff_draws, c.diff_draws)


def test_text_labels_give_the_same_result(data):
    zv, yv, zt, yt = data
    names = np.array(["ant", "bee", "cat", "dog"])
    a = bece.recalibrate(yv, zv, yt, zt, num_samples=S)
    b = bece.recalibrate(names[yv], zv, names[yt], zt, num_samples=S)
    np.testing.assert_array_equal(a.diff_draws, b.diff_draws)
    np.testing.assert_array_equal(b.classes, names)
    # labels= in another order than sorted: columns are those classes
    order = np.array(["dog", "cat", "bee", "ant"])
    c = bece.recalibrate(order[3 - yv], zv[:, ::-1], order[3 - yt], zt[:, ::-1], labels=order,
                         num_samples=S)
    assert c.calibrator.temperature_ == pytest.approx(a.calibrator.temperature_, rel=1e-9)
    np.testing.assert_array_equal(c.classes, order)


@pytest.mark.parametrize("method", ["platt", "isotonic", "beta", "temperature"])
def test_binary_scores_read_as_p_of_y_equals_1(method):
    rng = np.random.default_rng(5)
    s = rng.normal(scale=3.0, size=1000)
    y = (rng.uniform(size=1000) < special.expit(s / 2)).astype(int)
    r = bece.recalibrate(y[:500], s[:500], y[500:], s[500:], method=method, input="logits",
                         num_samples=S)
    assert r.before.kind == "binary" and r.y_prob.shape == (500, 2)
    assert r.before.plugin == pytest.approx(
        bece.expected_calibration_error(y[500:], special.expit(s[500:])), abs=1e-15)
    assert r.after.plugin == pytest.approx(
        bece.expected_calibration_error(y[500:], r.y_prob[:, 1]), abs=1e-15)
    # text labels with pos_label: the same numbers
    lab = np.array(["neg", "pos"])
    t = bece.recalibrate(lab[y[:500]], s[:500], lab[y[500:]], s[500:], method=method,
                         input="logits", pos_label="pos", num_samples=S)
    np.testing.assert_array_equal(r.diff_draws, t.diff_draws)


def test_calibrator_object_is_cloned_not_fitted(data):
    zv, yv, zt, yt = data
    ms = MatrixScaling(reg_lambda=0.01, reg_mu=0.01)
    r = bece.recalibrate(yv, zv, yt, zt, method=ms, num_samples=S)
    assert not hasattr(ms, "coef_") and r.calibrator is not ms
    assert r.method == "MatrixScaling" and r.calibrator.reg_lambda_ == 0.01


@pytest.mark.parametrize("kwargs, message", [
    ({"method": "temp"}, "method must be one of"),
    ({"method": 3}, "method must be one of"),
    ({"input": "logit"}, "input must be one of"),
])
def test_bad_options(data, kwargs, message):
    zv, yv, zt, yt = data
    with pytest.raises(ValueError, match=message):
        bece.recalibrate(yv, zv, yt, zt, **kwargs)


def test_bad_data(data):
    zv, yv, zt, yt = data
    with pytest.raises(ValueError, match="scores_test has shape .* scores_val has shape"):
        bece.recalibrate(yv, zv, yt, zt[:, :3])
    with pytest.raises(ValueError, match="y_test"):
        bece.recalibrate(yv, zv, yt[:-1], zt)
    with pytest.raises(ValueError, match="y_val must hold labels in 0..3"):
        bece.recalibrate(yv + 1, zv, yt, zt)
    names = np.array(["ant", "bee", "cat", "dog", "eel"])
    with pytest.raises(ValueError, match="y_test"):
        bece.recalibrate(names[yv], zv, names[yt + (yt == 3)], zt)
    with pytest.raises(ValueError, match="binary"):
        bece.recalibrate(yv, zv, yt, zt, method=BetaCalibration())
    with pytest.raises(ValueError, match="scores_val .*finite"):
        bece.recalibrate(yv, np.where(zv > 5, np.nan, zv), yt, zt, input="logits")


def test_scaling_calibrators_are_described_by_their_own_parameters(data):
    """The report's calibrator line: vector scaling by its weights (it has no W), matrix
    scaling by lambda, mu, nu, its features and its diagonal of W."""
    from bece._results.recalibration import describe_calibrator
    from bece.calibrate import VectorScaling

    zv, yv, _, _ = data
    vs = VectorScaling(reg_lambda=0.5).fit(zv, yv)
    text = describe_calibrator(vs)
    assert text == (f"VectorScaling: lambda = 0.5, mu = 0.5 (as given; tempered features); "
                    f"w in [{vs.coef_.min():.3f}, {vs.coef_.max():.3f}], "
                    f"b in [{vs.intercept_.min():.3f}, {vs.intercept_.max():.3f}]")
    ms = MatrixScaling(features="scores", reg_lambda=0.01, reg_mu=0.02, reg_diagonal=0.03).fit(zv, yv)
    d = np.diag(ms.coef_)
    assert describe_calibrator(ms) == (
        "MatrixScaling: lambda = 0.01, mu = 0.02, nu = 0.03 (as given; scores features); "
        f"diagonal of W in [{d.min():.3f}, {d.max():.3f}]")
