"""bece._calibrate.temperature: the maximum-likelihood temperature against a
closed form, scipy's minimiser of the NLL written out here, scikit-learn's
temperature scaling, finite differences; inputs, blocks and bound errors.

Deterministic (fixed data); no false-alarm rate.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, special

import bece._calibrate.scores as scores_module
from bece._calibrate.scores import as_scores
from bece._calibrate.temperature import temperature_terms
from bece.calibrate import TemperatureScaling

from .helpers import PassThrough, logits_with_temperature, mean_nll


@pytest.fixture
def data(rng):
    return logits_with_temperature(3000, 5, rng, temperature=1.7)


def test_two_point_closed_form():
    """Every row has logits (0, 2); three of four labels are 1. The MLE sets
    sigma(2 / T) = 3/4, so T = 2 / log 3."""
    z = np.tile([0.0, 2.0], (4, 1))
    y = np.array([1, 1, 1, 0])
    ts = TemperatureScaling(input="logits").fit(z, y)
    assert ts.temperature_ == pytest.approx(2 / np.log(3), rel=1e-9)
    np.testing.assert_allclose(ts.predict_proba(z)[:, 1], 0.75, rtol=1e-9)
    assert ts.nll_ == pytest.approx(-(0.75 * np.log(0.75) + 0.25 * np.log(0.25)), rel=1e-12)


def test_equals_scipys_minimiser_of_the_nll(data):
    z, y = data

    def nll(log_t):
        return mean_nll(z / np.exp(log_t), y)

    ref = optimize.minimize_scalar(nll, bounds=(-3, 3), method="bounded",
                                   options={"xatol": 1e-12, "maxiter": 500})
    ts = TemperatureScaling(input="logits").fit(z, y)
    assert ts.temperature_ == pytest.approx(np.exp(ref.x), rel=1e-6)
    assert ts.nll_ == pytest.approx(ref.fun, rel=1e-12)
    assert ts.n_passes_ <= 30  # 2 bracket + Brent + 1 final (measured: 13 - 17)


def test_agrees_with_scikit_learn(data):
    from sklearn.calibration import CalibratedClassifierCV

    if "temperature" not in CalibratedClassifierCV._parameter_constraints["method"][0].options:
        pytest.skip("the installed scikit-learn has no method='temperature' (added in 1.8)")
    from sklearn.frozen import FrozenEstimator

    z, y = data
    sk = CalibratedClassifierCV(FrozenEstimator(PassThrough().fit(z, y)), method="temperature")
    sk.fit(z, y)
    beta = sk.calibrated_classifiers_[0].calibrators[0].beta_
    ts = TemperatureScaling(input="logits").fit(z, y)
    # scikit-learn's Brent stops at |d log beta| <= 64 eps: both within 1e-6
    assert ts.temperature_ == pytest.approx(1 / beta, rel=1e-6)
    np.testing.assert_allclose(ts.predict_proba(z), sk.predict_proba(z), rtol=1e-5, atol=1e-9)


def test_derivatives_against_finite_differences(data):
    z, y = data
    s = as_scores(z, "logits")
    beta, h = 0.6, 1e-5
    nll, g, hess = temperature_terms(s, y, beta, second=True)
    up, down = temperature_terms(s, y, beta + h)[0], temperature_terms(s, y, beta - h)[0]
    assert nll == pytest.approx(mean_nll(beta * z, y) * y.size, rel=1e-12)
    assert g == pytest.approx((up - down) / (2 * h), rel=1e-6)
    g_up, g_down = temperature_terms(s, y, beta + h)[1], temperature_terms(s, y, beta - h)[1]
    assert hess == pytest.approx((g_up - g_down) / (2 * h), rel=1e-6)


def test_inputs_agree(data):
    """Probabilities (log taken) and logits give the same T; float32 is read
    exactly; 1-D log-odds are the logits (0, s); row blocks change nothing."""
    z, y = data
    t = TemperatureScaling(input="logits").fit(z, y).temperature_
    p = special.softmax(z, axis=1)
    assert TemperatureScaling().fit(p, y).temperature_ == pytest.approx(t, rel=1e-9)
    z32 = z.astype(np.float32)
    assert (TemperatureScaling().fit(z32, y).temperature_
            == TemperatureScaling().fit(z32.astype(np.float64), y).temperature_)
    s = z[:, 1] - z[:, 0]
    yb = (np.random.default_rng(1).uniform(size=s.size) < special.expit(s / 1.7)).astype(int)
    t1 = TemperatureScaling().fit(s, yb).temperature_
    t2 = TemperatureScaling().fit(np.c_[np.zeros_like(s), s], yb).temperature_
    assert t1 == t2


def test_blocks_change_nothing(data, monkeypatch):
    z, y = data
    whole = TemperatureScaling().fit(z, y)
    monkeypatch.setattr(scores_module, "BLOCK", 64)  # 12 rows per block
    blocked = TemperatureScaling().fit(z, y)
    assert blocked.temperature_ == pytest.approx(whole.temperature_, rel=1e-12)
    np.testing.assert_allclose(blocked.predict_proba(z), whole.predict_proba(z), rtol=1e-12)


def test_errors_at_the_bounds():
    z = np.array([[3.0, 0.0], [0.0, 3.0], [2.0, 1.0]])
    with pytest.raises(ValueError, match=r"lower bound of the search \(T = 0.01"):
        TemperatureScaling().fit(z, [0, 1, 0])  # every label is the argmax: T -> 0
    with pytest.raises(ValueError, match=r"upper bound of the search \(T = 100"):
        TemperatureScaling().fit(z, [1, 0, 1])  # every label is the other class: T -> inf
    with pytest.raises(ValueError, match="no information on the temperature"):
        TemperatureScaling(input="logits").fit(np.zeros((3, 2)), [0, 1, 0])
    with pytest.raises(ValueError, match="bounds must satisfy 0 < lo < hi"):
        TemperatureScaling(bounds=(2, 1)).fit(z, [0, 1, 0])
