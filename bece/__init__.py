"""bece: Bayesian assessment of calibration.

A posterior over a classifier's expected calibration error (ECE) from a
finite test set, with the plug-in metrics beside it. ``import bece`` loads
nothing but this table of names: each public name, and the subpackage
:mod:`bece.regression`, is imported on first use (numpy and scipy's special
functions with the first; ArviZ, matplotlib and the NumPyro models of
:mod:`bece.models` only where a result needs them).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .base.version import VERSION

if TYPE_CHECKING:  # what the names below are, for type checkers and readers
    from . import regression
    from .api.compare import compare, posterior_compare
    from .api.ece import bayesian_ece, bayesian_top_label_ece, posterior_ece, posterior_top_label_ece
    from .api.recalibrate import recalibrate
    from .api.test import calibration_test
    from .metrics.binned import expected_calibration_error, maximum_calibration_error
    from .metrics.multiclass import classwise_ece, top_label_ece
    from .posteriors import BinnedModel, MCMCSettings, SmoothModel, SmoothTopLabelModel, cross_check
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

#: Where each public name is defined: imported on first use (PEP 562).
_WHERE = {
    "bayesian_ece": "bece.api", "bayesian_top_label_ece": "bece.api",
    "calibration_test": "bece.api", "compare": "bece.api", "posterior_compare": "bece.api",
    "posterior_ece": "bece.api", "posterior_top_label_ece": "bece.api",
    "recalibrate": "bece.api",
    "expected_calibration_error": "bece.metrics.binned",
    "maximum_calibration_error": "bece.metrics.binned",
    "classwise_ece": "bece.metrics.multiclass", "top_label_ece": "bece.metrics.multiclass",
    "BinnedModel": "bece.posteriors", "MCMCSettings": "bece.posteriors",
    "SmoothModel": "bece.posteriors", "SmoothTopLabelModel": "bece.posteriors",
    "cross_check": "bece.posteriors",
    "Comparison": "bece.results.comparison",
    "BayesianECE": "bece.results.ece", "BayesianTopLabelECE": "bece.results.ece",
    "SmoothBayesianECE": "bece.results.ece",
    "Recalibration": "bece.results.recalibration",
    "CalibrationTest": "bece.smooth.calibration_test",
    "Binning": "bece.stats.binning",
    "CalibrationStats": "bece.stats.calibration_stats",
    "LabelStats": "bece.stats.label_stats",
    "PairedStats": "bece.stats.paired_stats",
    "CrossCheck": "bece.validation.agreement",
}

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


def __getattr__(name: str) -> Any:
    """A public name, imported where it is defined the first time it is used."""
    if name == "regression":
        value: Any = importlib.import_module("bece.regression")
    elif name in _WHERE:
        value = getattr(importlib.import_module(_WHERE[name]), name)
    else:
        raise AttributeError(f"module 'bece' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
