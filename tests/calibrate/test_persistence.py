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


# --------------------------------------------------------- tampered files
def _tampered(text, part, name, value):
    spec = json.loads(text)
    if value is _DROP:
        del spec[part][name]
    else:
        spec[part][name] = value
    return json.dumps(spec)


_DROP = object()


def _array(values, dtype="<f8"):
    values = np.asarray(values)
    return {"array": values.tolist(), "dtype": dtype, "shape": list(values.shape)}


#: Per calibrator: (fitted attribute, tampered value, message naming it). Robustness-2 #4:
#: each of these loaded and then gave NaN, out-of-range or silently reversed probabilities.
TAMPERED = {
    "TemperatureScaling": [("temperature_", float("nan"), "temperature_ must be finite"),
                           ("temperature_", 0.0, "temperature_ must be > 0"),
                           ("temperature_", -1.0, "temperature_ must be > 0"),
                           ("n_passes_", 1.5, "n_passes_ must be an integer")],
    "PlattScaling": [("coef_", float("inf"), "coef_ must be finite"),
                     ("intercept_", "x", "intercept_ must be a number"),
                     ("clip_", -0.1, "clip_ must be >= 0"),
                     ("clip_", 0.6, "clip_ must be <= 0.25"),
                     ("clip_", float("nan"), "clip_ must be finite")],
    "IsotonicCalibration": [("y_thresholds_", "FIVES", "y_thresholds_ must be <= 1"),
                            ("X_thresholds_", "REVERSED", "X_thresholds_ must be non-decreasing"),
                            ("y_thresholds_", _array([0.5]), "y_thresholds_ must have shape")],
    "BetaCalibration": [("a_", float("nan"), "a_ must be finite"),
                        ("clip_", 0.3, "clip_ must be <= 0.25")],
    "VectorScaling": [("coef_", _array([1.0, 1.0, 1.0, 1.0]), r"coef_ must have shape \(3,\)"),
                      ("feature_temperature_", 0.0, "feature_temperature_ must be > 0"),
                      ("intercept_", _array([0.0, float("nan"), 0.0]),
                       "intercept_ holds values that are not")],
    "MatrixScaling": [("coef_", _array([1.0, 1.0, 1.0]), r"coef_ must have shape \(3, 3\)"),
                      ("reg_lambda_", -1.0, "reg_lambda_ must be >= 0")],
    "DirichletCalibration": [("coef_", _array(np.full((3, 3), np.inf)), "coef_ holds values that are not")],
}


@pytest.mark.filterwarnings("ignore:the ODIR strength chosen:UserWarning")
@pytest.mark.parametrize("est", MULTI + BINARY, ids=lambda e: type(e).__name__)
def test_a_tampered_file_is_refused_naming_the_field(est, multi, binary):
    """A stored calibrator loads only if every field meets the fitted
    estimator's contract; otherwise a ValueError names the field."""
    fit, _ = _fitted(est, binary if est in BINARY else multi)
    text = fit.to_json()
    k = fit.n_classes_
    cases = [
        ("fitted", "n_classes_", k + 2, f"n_classes_ is {k + 2} but classes_ holds {k} labels"),
        ("fitted", "predict_proba", "x", "fitted holds 'predict_proba', which a"),
        ("fitted", "input_", "odds", "input_ must be one of"),
        ("fitted", "binary_input_", 1, "binary_input_ must be true or false"),
        ("fitted", "n_features_in_", 7, "n_features_in_ must be"),
        ("fitted", "classes_", _array([0, 0] + list(range(1, k - 1)), "<i8"), "classes_ must hold distinct"),
        ("fitted", "classes_", {"array": [0, 1], "dtype": "foo", "shape": [2]}, "classes_: unknown dtype"),
        ("fitted", "classes_", {"array": [0, 1], "dtype": "|O", "shape": [2]}, "is not allowed"),
        ("fitted", "classes_", {"array": [0, 1], "dtype": "<i8", "shape": [3]}, "the file says"),
        ("params", "evil", 1, "params holds 'evil', which a"),
        ("params", "input", "odds", "input must be"),
    ]
    name = type(fit).__name__
    for field, value, message in TAMPERED[name]:
        current = json.loads(text)["fitted"][field]
        if value == "FIVES":
            value = _array(np.full(len(current["array"]), 5.0))
        elif value == "REVERSED":
            value = _array(current["array"][::-1] if len(current["array"]) > 1 else [1.0, 0.0])
        cases.append(("fitted", field, value, message))
    first = next(iter(type(fit)._contract))
    cases.append(("fitted", first, _DROP, f"fitted lacks {first}"))
    for part, field, value, message in cases:
        with pytest.raises(ValueError, match=message):
            from_json(_tampered(text, part, field, value))


def test_malformed_text_is_refused_by_value_error(multi, monkeypatch):
    """Robustness-2 #4: nesting 100,000 deep raised RecursionError, a JSON
    array or pickle bytes other errors; nothing is ever unpickled."""
    from bece._calibrate import stored

    fit, _ = _fitted(TemperatureScaling(), multi)
    text = fit.to_json()
    deep = text[:-1] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    for bad, message in [(deep, "nests arrays or objects more than 16 deep"),
                         ("[1, 2]", "a JSON list, not an object"),
                         (pickle.dumps(fit), "not UTF-8 text|not a bece calibrator's JSON"),
                         (b"\x80\x04", "not UTF-8 text"),
                         (42, "text must be a JSON string"),
                         ('{"estimator": "BinaryCalibrator", "format": 1, "params": {}, "fitted": {}}',
                          "holds a 'BinaryCalibrator'"),
                         ('{"estimator": "TemperatureScaling", "format": 1, "params": [], "fitted": {}}',
                          "params must be a JSON object")]:
        with pytest.raises(ValueError, match=message):
            from_json(bad)
    monkeypatch.setattr(stored, "MAX_CHARS", len(text) - 1)
    with pytest.raises(ValueError, match="more than a calibrator's JSON may have"):
        from_json(text)
