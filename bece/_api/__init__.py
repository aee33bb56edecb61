"""Entry points that choose the model.

bayesian_ece, posterior_ece, bayesian_top_label_ece and
posterior_top_label_ece turn ``model=`` into a model object
(:mod:`bece._posteriors`) and call it; so do compare and posterior_compare
(the paired comparison) and calibration_test (the test of exact
calibration); recalibrate fits a calibrator and compares the test set
before and after.
"""

from __future__ import annotations

from .compare import compare, posterior_compare
from .ece import bayesian_ece, bayesian_top_label_ece, posterior_ece, posterior_top_label_ece
from .recalibrate import RECALIBRATION_METHODS, recalibrate
from .test import calibration_test, drift_test

__all__ = [
    "RECALIBRATION_METHODS",
    "bayesian_ece",
    "bayesian_top_label_ece",
    "calibration_test",
    "compare",
    "drift_test",
    "posterior_compare",
    "posterior_ece",
    "posterior_top_label_ece",
    "recalibrate",
]
