"""Fitted recalibrators: JSON round trip (identical predictions), pickle and
joblib, scikit-learn's clone and get_params/set_params.

Deterministic; no false-alarm rate.
"""

from __future__ import annotations

import io
import json
import pickle

import joblib
import numpy as np
import pytest
from scipy import special
from sklearn.base import clone

from bece.calibrate import (
    BetaCalibration,
    DirichletCalibration,
    IsotonicCalibration,
    MatrixScaling,
    PlattScaling,
    ScoreCalibrator,
    TemperatureScaling,
    TopLabelCalibrator,
    VectorScaling,
    from_json,
)

from .helpers import logits_with_temperature

MULTI = [TemperatureScaling(), VectorScaling(), MatrixScaling(reg_lambda=0.1, reg_mu=0.1),
         MatrixScaling(reg_grid=(0.1, 1.0), cv=2), DirichletCalibration(reg_lambda=0.1, reg_mu=0.1)]
BINARY = [PlattScaling(), IsotonicCalibration(), BetaCalibration(), TemperatureScaling()]


@pytest.fixture(scope="module")
def multi():
    z, y = logits_with_temperature(800, 3, np.random.default_rng(2), temperature=1.5)
    return z, y


@pytest.fixture(scope="module")
def binary():
    rng = np.random.default_rng(4)
    s = rng.normal(scale=2.0, size=600)
    y = np.where(rng.uniform(size=600) < special.expit(s / 1.4), "pos", "neg")
    return s, y


def _fitted(est, data):
    x, y = data
    return clone(est).fit(x, y), x


@pytest.mark.filterwarnings("ignore:the ODIR strength chosen:UserWarning")  # a two-value grid on small data
@pytest.mark.parametrize("est", MULTI + BINARY, ids=lambda e: type(e).__name__)
def test_json_round_trip(est, multi, binary):
    fit, x = _fitted(est, binary if est in BINARY else multi)
    text = fit.to_json()
    spec = json.loads(text)
    assert spec["estimator"] == type(est).__name__ and spec["format"] == 1
    back = from_json(text)
    assert type(back) is type(fit) and back.get_params() == fit.get_params()
    np.testing.assert_array_equal(back.predict_proba(x), fit.predict_proba(x))
    np.testing.assert_array_equal(back.predict(x), fit.predict(x))
    assert type(fit).from_json(text).classes_.tolist() == fit.classes_.tolist()


def test_json_refusals(multi):
    fit, _ = _fitted(TemperatureScaling(), multi)
    with pytest.raises(ValueError, match="holds a 'TemperatureScaling', not a PlattScaling"):
        PlattScaling.from_json(fit.to_json())
    with pytest.raises(ValueError, match="not a bece calibrator's JSON"):
        ScoreCalibrator.from_json("{}")
    with pytest.raises(ValueError, match="not fitted"):
        TemperatureScaling().to_json()


@pytest.mark.filterwarnings("ignore:the ODIR strength chosen:UserWarning")  # a two-value grid on small data
@pytest.mark.parametrize("est", MULTI + [TopLabelCalibrator()], ids=lambda e: type(e).__name__)
def test_pickle_joblib_clone(est, multi):
    z, y = multi
    x = special.softmax(z, axis=1) if isinstance(est, TopLabelCalibrator) else z
    fit = clone(est).fit(x, y)
    for back in (pickle.loads(pickle.dumps(fit)), _joblib(fit)):
        np.testing.assert_array_equal(back.predict_proba(x), fit.predict_proba(x))
    fresh = clone(fit)
    assert fresh.get_params() == fit.get_params() and not hasattr(fresh, "classes_")
    name, value = ("min_samples", 5) if isinstance(est, TopLabelCalibrator) else ("input", "logits")
    assert fit.set_params(**{name: value}) is fit and getattr(fit, name) == value


def _joblib(obj):
    buf = io.BytesIO()
    joblib.dump(obj, buf)
    buf.seek(0)
    return joblib.load(buf)
