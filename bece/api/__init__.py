"""Entry points that choose the model.

bayesian_ece and posterior_ece dispatch between the binned and the smooth
posterior; bayesian_top_label_ece and posterior_top_label_ece between the
binned top-label posterior and the hierarchical smooth one; compare between
the paired binned and paired smooth comparisons; recalibrate fits a
calibrator and compares the test set before and after.
"""

from __future__ import annotations

from .compare import COMPARE_MODELS, compare, posterior_compare
from .ece import bayesian_ece, bayesian_top_label_ece, posterior_ece, posterior_top_label_ece
from .options import MODELS
from .recalibrate import RECALIBRATION_METHODS, recalibrate

__all__ = [
    "COMPARE_MODELS",
    "MODELS",
    "RECALIBRATION_METHODS",
    "bayesian_ece",
    "bayesian_top_label_ece",
    "compare",
    "posterior_compare",
    "posterior_ece",
    "posterior_top_label_ece",
    "recalibrate",
]
