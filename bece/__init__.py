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

from ._base.version import VERSION

if TYPE_CHECKING:  # what the names below are, for type checkers and readers
    from . import regression
    from ._api.compare import compare, posterior_compare
    from ._api.ece import bayesian_ece, bayesian_top_label_ece, posterior_ece, posterior_top_label_ece
    from ._api.recalibrate import recalibrate
    from ._api.test import calibration_test, drift_test
    from ._metrics.binned import expected_calibration_error, maximum_calibration_error
    from ._metrics.multiclass import classwise_ece, top_label_ece
    from ._posteriors import (
        BinnedModel,
        MCMCSettings,
        SmoothGroupModel,
        SmoothModel,
        SmoothTopLabelModel,
        cross_check,
    )
    from ._results.comparison import Comparison
    from ._results.drift import Drift
    from ._results.ece import BayesianECE, BayesianTopLabelECE, SmoothBayesianECE
    from ._results.groups import GroupECE
    from ._results.recalibration import Recalibration
    from ._smooth.bayes_factor import CalibrationTest
    from ._stats.binning import Binning
    from ._stats.calibration_stats import CalibrationStats
    from ._stats.groups import GroupStats
    from ._stats.label_stats import LabelStats
    from ._stats.paired_stats import PairedStats
    from ._validation.agreement import CrossCheck

__version__ = VERSION

#: Where each public name is defined: imported on first use (PEP 562).
_WHERE = {
    "bayesian_ece": "bece._api", "bayesian_top_label_ece": "bece._api",
    "calibration_test": "bece._api", "compare": "bece._api", "drift_test": "bece._api",
    "posterior_compare": "bece._api",
    "posterior_ece": "bece._api", "posterior_top_label_ece": "bece._api",
    "recalibrate": "bece._api",
    "expected_calibration_error": "bece._metrics.binned",
    "maximum_calibration_error": "bece._metrics.binned",
    "classwise_ece": "bece._metrics.multiclass", "top_label_ece": "bece._metrics.multiclass",
    "BinnedModel": "bece._posteriors", "MCMCSettings": "bece._posteriors",
    "SmoothModel": "bece._posteriors", "SmoothTopLabelModel": "bece._posteriors",
    "SmoothGroupModel": "bece._posteriors", "GroupECE": "bece._results.groups",
    "GroupStats": "bece._stats.groups",
    "cross_check": "bece._posteriors",
    "Comparison": "bece._results.comparison", "Drift": "bece._results.drift",
    "BayesianECE": "bece._results.ece", "BayesianTopLabelECE": "bece._results.ece",
    "SmoothBayesianECE": "bece._results.ece",
    "Recalibration": "bece._results.recalibration",
    "CalibrationTest": "bece._smooth.bayes_factor",
    "Binning": "bece._stats.binning",
    "CalibrationStats": "bece._stats.calibration_stats",
    "LabelStats": "bece._stats.label_stats",
    "PairedStats": "bece._stats.paired_stats",
    "CrossCheck": "bece._validation.agreement",
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
    "Drift",
    "GroupECE",
    "GroupStats",
    "LabelStats",
    "MCMCSettings",
    "PairedStats",
    "Recalibration",
    "SmoothBayesianECE",
    "SmoothGroupModel",
    "SmoothModel",
    "SmoothTopLabelModel",
    "bayesian_ece",
    "bayesian_top_label_ece",
    "calibration_test",
    "classwise_ece",
    "compare",
    "cross_check",
    "drift_test",
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
