"""Recalibration: maps from a classifier's scores to calibrated probabilities.

Every recalibrator is a scikit-learn classifier (``fit(X, y)``,
``predict_proba``, ``predict``, ``get_params``/``set_params``, ``clone``;
pickles as scikit-learn estimators do) whose ``X`` is the scores of the
classifier being recalibrated, not its features:

* scaling of logits (or log-probabilities), fitted by (penalised) maximum
  likelihood: :class:`TemperatureScaling` (one T; Guo et al. 2017),
  :class:`VectorScaling` (penalised towards temperature scaling),
  :class:`MatrixScaling` (with Kull et al.'s ODIR regularisation) and
  :class:`DirichletCalibration` (Kull et al. 2019);
* binary: :class:`PlattScaling`, :class:`IsotonicCalibration`,
  :class:`BetaCalibration` (Kull et al. 2017);
* top-label: :class:`TopLabelCalibrator` (one binary calibrator per
  predicted label; Gupta & Ramdas 2021);
* the temperature's posterior (:func:`temperature_posterior`) and the
  test-set ECE to expect from temperature scaling fitted on a validation
  split of a given size (:func:`temperature_scaled_ece`).

The whole workflow (fit on a validation set, the test set's ECE before and
after as a paired posterior, the held-out NLL) is :func:`bece.recalibrate`
and, on the command line, ``bece recalibrate``.

``X`` is logits or probabilities as the ``input`` option says
(:mod:`bece._calibrate.scores`: ``"auto"`` decides and refuses ambiguous
input); fitted scaling and binary calibrators write and read a small JSON
(``to_json()``, :func:`from_json`).
"""

from ._calibrate.base import CalibrationWarning, ScoreCalibrator, from_json
from ._calibrate.bayes_temperature import (
    TemperaturePosterior,
    TemperatureScaledECE,
    temperature_posterior,
    temperature_scaled_ece,
)
from ._calibrate.binary import BetaCalibration, IsotonicCalibration, PlattScaling
from ._calibrate.linear import DirichletCalibration, MatrixScaling
from ._calibrate.temperature import TemperatureScaling
from ._calibrate.toplabel import TopLabelCalibrator
from ._calibrate.vector import VectorScaling

__all__ = [
    "BetaCalibration",
    "CalibrationWarning",
    "DirichletCalibration",
    "IsotonicCalibration",
    "MatrixScaling",
    "PlattScaling",
    "ScoreCalibrator",
    "TemperaturePosterior",
    "TemperatureScaledECE",
    "TemperatureScaling",
    "TopLabelCalibrator",
    "VectorScaling",
    "from_json",
    "temperature_posterior",
    "temperature_scaled_ece",
]
