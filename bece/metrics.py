"""Plug-in calibration metrics: binned ECE and MCE, top-label and classwise ECE,
each library's ECE ("Which ECE?"), l2/debiased/smooth/sweep ECE, proper scores
and their decompositions, calibration slope and tests of calibration."""

from ._metrics.bootstrap import BootstrapInterval, bootstrap_interval
from ._metrics.clinical import (
    CalibrationSlope,
    HosmerLemeshow,
    SpiegelhalterZ,
    calibration_in_the_large,
    calibration_slope,
    hosmer_lemeshow,
    ks_calibration_error,
    spiegelhalter_z,
)
from ._metrics.conventions import peer_ece
from ._metrics.l2 import ece_sweep, l2_calibration_error
from ._metrics.l2_interval import L2ECEInterval, l2_ece_interval
from ._metrics.multiclass import per_label_ece
from ._metrics.posterior_l2 import l2_ece_draws
from ._metrics.registry import metric_report
from ._metrics.scores import (
    BrierDecomposition,
    CORPDecomposition,
    brier_decomposition,
    brier_score,
    corp_decomposition,
    log_loss,
)
from ._metrics.smooth_ece import smooth_calibration_error, smooth_calibration_error_at

__all__ = [
    "BootstrapInterval",
    "BrierDecomposition",
    "CORPDecomposition",
    "CalibrationSlope",
    "HosmerLemeshow",
    "L2ECEInterval",
    "SpiegelhalterZ",
    "bootstrap_interval",
    "brier_decomposition",
    "brier_score",
    "calibration_in_the_large",
    "calibration_slope",
    "corp_decomposition",
    "ece_sweep",
    "hosmer_lemeshow",
    "ks_calibration_error",
    "l2_calibration_error",
    "l2_ece_draws",
    "l2_ece_interval",
    "log_loss",
    "metric_report",
    "peer_ece",
    "per_label_ece",
    "smooth_calibration_error",
    "smooth_calibration_error_at",
    "spiegelhalter_z",
]
