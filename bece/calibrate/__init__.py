"""Recalibration: maps from a model's scores to calibrated probabilities."""

from .toplabel import METHODS, CalibrationWarning, TopLabelCalibrator

__all__ = [
    "CalibrationWarning",
    "METHODS",
    "TopLabelCalibrator",
]
