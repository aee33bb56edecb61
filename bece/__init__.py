"""bece: Bayesian assessment of calibration.

A posterior over a classifier's expected calibration error (ECE) from a
finite test set, with the plug-in metrics beside it. ``import bece`` loads
numpy and scipy only: ArviZ, matplotlib and the NumPyro models
(:mod:`bece.models`) are imported when first used.
"""

from . import regression
from .api import (
                  bayesian_ece,
                  bayesian_top_label_ece,
                  calibration_test,
                  compare,
                  posterior_compare,
                  posterior_ece,
                  posterior_top_label_ece,
                  recalibrate,
)
from .base.version import VERSION
from .metrics.binned import expected_calibration_error, maximum_calibration_error
from .metrics.multiclass import classwise_ece, top_label_ece
from .posteriors import (
                  BinnedModel,
                  MCMCSettings,
                  SmoothModel,
                  SmoothTopLabelModel,
                  cross_check,
)
from .results.comparison import Comparison
from .results.ece import BayesianECE, BayesianTopLabelECE, SmoothBayesianECE
from .results.recalibration import Recalibration
from .smooth.calibration_test import CalibrationTest
from .stats.binning import Binning
from .stats.calibration_stats import CalibrationStats
from .stats.label_stats import LabelStats
from .stats.paired_stats import PairedStats
from .validation.agreement import CrossCheck

__version__ = VERSION

__all__ = [
    "BayesianECE",
    "BayesianTopLabelECE",
    "BinnedModel",
    "Binning",
    "CalibrationStats",
    "CalibrationTest",
    "Comparison",
    "CrossCheck",
    "LabelStats",
    "MCMCSettings",
    "PairedStats",
    "Recalibration",
    "SmoothBayesianECE",
    "SmoothModel",
    "SmoothTopLabelModel",
    "bayesian_ece",
    "bayesian_top_label_ece",
    "calibration_test",
    "classwise_ece",
    "compare",
    "cross_check",
    "expected_calibration_error",
    "maximum_calibration_error",
    "posterior_compare",
    "posterior_ece",
    "posterior_top_label_ece",
    "recalibrate",
    "regression",
    "top_label_ece",
]
