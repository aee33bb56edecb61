"""bece: Bayesian assessment of calibration.

A posterior over a classifier's expected calibration error (ECE) from a
finite test set, with the plug-in metrics beside it. ``import bece`` loads
numpy and scipy only: ArviZ, matplotlib and the NumPyro models
(:mod:`bece.models`) are imported when first used.
"""

from . import regression
from .binning import Binning
from .calibtest import CalibrationTest, calibration_test
from .compare import Comparison, compare
from .crosscheck import CrossCheck, cross_check
from .metrics import expected_calibration_error, maximum_calibration_error
from .multiclass import classwise_ece, top_label_ece
from .posterior import bayesian_ece, posterior_ece
from .result import BayesianECE, BayesianTopLabelECE
from .smooth import SmoothBayesianECE
from .stats import CalibrationStats
from .toplabel import bayesian_top_label_ece, posterior_top_label_ece

__version__ = "0.1.0"

__all__ = [
    "BayesianECE",
    "BayesianTopLabelECE",
    "Binning",
    "CalibrationStats",
    "CalibrationTest",
    "Comparison",
    "CrossCheck",
    "SmoothBayesianECE",
    "bayesian_ece",
    "bayesian_top_label_ece",
    "calibration_test",
    "classwise_ece",
    "compare",
    "cross_check",
    "expected_calibration_error",
    "maximum_calibration_error",
    "posterior_ece",
    "posterior_top_label_ece",
    "regression",
    "top_label_ece",
]
