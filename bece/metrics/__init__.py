"""Plug-in calibration metrics: binned ECE and MCE, top-label and classwise ECE,
each library's ECE ("Which ECE?"), l2/debiased/smooth/sweep ECE, proper scores
and their decompositions, calibration slope and tests of calibration."""

from .binned import (
    expected_calibration_error,
    maximum_calibration_error,
    plugin_ece,
    plugin_mce,
)
from .bootstrap import BootstrapInterval, bootstrap_interval
from .clinical import (
    CalibrationSlope,
    HosmerLemeshow,
    SpiegelhalterZ,
    calibration_in_the_large,
    calibration_slope,
    hosmer_lemeshow,
    ks_calibration_error,
    spiegelhalter_z,
)
from .conventions import CONVENTIONS, peer_bins, peer_ece
from .l2 import ece_sweep, l2_calibration_error
from .l2_interval import L2ECEInterval, l2_ece_interval, l2_interval_from_sums
from .multiclass import classwise_ece, per_label_ece, top_label_ece, top_label_inputs
from .posterior_l2 import l2_ece_draws
from .registry import METRIC_NAMES, check_metric_names, metric_report
from .scores import (
    BrierDecomposition,
    CORPDecomposition,
    brier_decomposition,
    brier_score,
    corp_decomposition,
    log_loss,
)
from .smooth_ece import smooth_calibration_error, smooth_calibration_error_at

__all__ = [
    "BootstrapInterval",
    "bootstrap_interval",
    "BrierDecomposition",
    "CONVENTIONS",
    "CORPDecomposition",
    "CalibrationSlope",
    "HosmerLemeshow",
    "L2ECEInterval",
    "METRIC_NAMES",
    "SpiegelhalterZ",
    "brier_decomposition",
    "brier_score",
    "calibration_in_the_large",
    "calibration_slope",
    "check_metric_names",
    "classwise_ece",
    "corp_decomposition",
    "ece_sweep",
    "expected_calibration_error",
    "hosmer_lemeshow",
    "ks_calibration_error",
    "l2_calibration_error",
    "l2_ece_draws",
    "l2_ece_interval",
    "l2_interval_from_sums",
    "log_loss",
    "maximum_calibration_error",
    "metric_report",
    "peer_bins",
    "peer_ece",
    "per_label_ece",
    "plugin_ece",
    "plugin_mce",
    "smooth_calibration_error",
    "smooth_calibration_error_at",
    "spiegelhalter_z",
    "top_label_ece",
    "top_label_inputs",
]
