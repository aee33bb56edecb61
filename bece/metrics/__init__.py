"""Plug-in calibration metrics: binned ECE and MCE, top-label and classwise ECE."""

from .binned import (
    expected_calibration_error,
    maximum_calibration_error,
    plugin_ece,
    plugin_mce,
)
from .conventions import CONVENTIONS, peer_bins, peer_ece
from .multiclass import classwise_ece, per_label_ece, top_label_ece, top_label_inputs

__all__ = [
    "CONVENTIONS",
    "classwise_ece",
    "expected_calibration_error",
    "maximum_calibration_error",
    "peer_bins",
    "peer_ece",
    "per_label_ece",
    "plugin_ece",
    "plugin_mce",
    "top_label_ece",
    "top_label_inputs",
]
