"""Entry points that choose the model.

bayesian_ece, posterior_ece, bayesian_top_label_ece and
posterior_top_label_ece turn ``model=`` into a model object
(:mod:`bece.posteriors`) and call it; compare dispatches between
the paired binned and paired smooth comparisons; recalibrate fits a
calibrator and compares the test set before and after.
"""

from __future__ import annotations

from .compare import compare, posterior_compare
from .ece import bayesian_ece, bayesian_top_label_ece, posterior_ece, posterior_top_label_ece
from .recalibrate import RECALIBRATION_METHODS, recalibrate

__all__ = [
    "RECALIBRATION_METHODS",
    "bayesian_ece",
    "bayesian_top_label_ece",
    "compare",
    "posterior_compare",
    "posterior_ece",
    "posterior_top_label_ece",
    "recalibrate",
]
