"""Calibration of regression forecasts (Kuleshov, Fenner & Ermon 2018).

A forecaster is calibrated when, for every level p, a fraction p of the
targets lies at or below the forecast p-quantile. Everything here works from
the probability integral transform :math:`u_t = F_t(y_t)`:

* :func:`pit` for Gaussian, scipy, sample (e.g. NumPyro posterior predictive)
  and quantile forecasts; :func:`forecast_quantiles` for their quantiles;
* diagnostics: :func:`calibration_curve`, :func:`calibration_error` (the
  paper's cal score), :func:`mean_absolute_calibration_error`,
  :func:`root_mean_squared_calibration_error`, :func:`miscalibration_area`
  (uncertainty-toolbox's summaries, in the correct direction) and
  :func:`sharpness`;
* :class:`Recalibrator`: the paper's isotonic recalibration, with
  recalibrated quantiles and central intervals;
* :func:`bayesian_calibration_error`: a posterior over the calibration curve
  and the cal score, by default from a smooth model of the PIT distribution
  with a posterior probability of exact calibration (its draws are 0 with
  that probability), ``model="dirichlet"`` for a Dirichlet over the PIT
  histogram;
* :func:`pit_calibration_test`: is the PIT uniform? An Anderson--Darling p-value
  and the smooth model's Bayes factor;
* :class:`PITHistogram`: the PIT counted on a grid of 1000 cells, int64
  counts that add across chunks; both functions above take it in place of
  PIT values;
* warnings when the PIT looks discrete (:class:`DiscretePITWarning`) or the
  draws of a sample forecast autocorrelated (:class:`CorrelatedSamplesWarning`).

The smooth model is written out in NumPyro in :mod:`bece.models._regression`.
Only numpy and scipy are imported here; scikit-learn (for
:class:`Recalibrator`) and ArviZ load when used.

Examples
--------
A Gaussian forecaster whose predictive sd is 0.7 times too small:

>>> import numpy as np
>>> from bece import regression
>>> rng = np.random.default_rng(0)
>>> y = rng.normal(size=2000)
>>> u = regression.pit(y, mean=0.0, std=0.7)               # u_t = F_t(y_t)
>>> levels, observed = regression.calibration_curve(u, levels=[0.1, 0.5, 0.9])
>>> bool(observed[0] > 0.15), bool(observed[2] < 0.85)      # too many targets in the tails
(True, True)
>>> t = regression.pit_calibration_test(u)
>>> t.reject(0.05), bool(t.prob_calibrated < 1e-6)
(True, True)
>>> good = regression.pit(y, mean=0.0, std=1.0)
>>> regression.calibration_error(good) < regression.calibration_error(u)
True
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._api.regression import bayesian_calibration_error
    from ._posteriors.regression import DirichletPITModel, SmoothPITModel
    from ._regression.bayesian import BayesianCalibrationError
    from ._regression.forecast import CorrelatedSamplesWarning, forecast_quantiles, pit
    from ._regression.histogram import DiscretePITWarning, PITHistogram
    from ._regression.metrics import (
        calibration_curve,
        calibration_error,
        mean_absolute_calibration_error,
        miscalibration_area,
        root_mean_squared_calibration_error,
        sharpness,
    )
    from ._regression.pit_bayes_factor import RegressionCalibrationTest, pit_calibration_test
    from ._regression.recalibration import Recalibrator

#: Where each name is defined: imported on first use (PEP 562), so that
#: importing one module of this package (``bece._regression.histogram``) does
#: not import them all.
_WHERE = {
    "bayesian_calibration_error": "bece._api.regression",
    "DirichletPITModel": "bece._posteriors.regression",
    "SmoothPITModel": "bece._posteriors.regression",
    "BayesianCalibrationError": "bece._regression.bayesian",
    "RegressionCalibrationTest": "bece._regression.pit_bayes_factor",
    "pit_calibration_test": "bece._regression.pit_bayes_factor",
    "CorrelatedSamplesWarning": "bece._regression.forecast",
    "forecast_quantiles": "bece._regression.forecast",
    "pit": "bece._regression.forecast",
    "DiscretePITWarning": "bece._regression.histogram",
    "PITHistogram": "bece._regression.histogram",
    "calibration_curve": "bece._regression.metrics",
    "calibration_error": "bece._regression.metrics",
    "mean_absolute_calibration_error": "bece._regression.metrics",
    "miscalibration_area": "bece._regression.metrics",
    "root_mean_squared_calibration_error": "bece._regression.metrics",
    "sharpness": "bece._regression.metrics",
    "Recalibrator": "bece._regression.recalibration",
}

__all__ = [
    "BayesianCalibrationError",
    "CorrelatedSamplesWarning",
    "DirichletPITModel",
    "DiscretePITWarning",
    "PITHistogram",
    "RegressionCalibrationTest",
    "Recalibrator",
    "SmoothPITModel",
    "bayesian_calibration_error",
    "calibration_curve",
    "pit_calibration_test",
    "calibration_error",
    "forecast_quantiles",
    "mean_absolute_calibration_error",
    "miscalibration_area",
    "pit",
    "root_mean_squared_calibration_error",
    "sharpness",
]


def __getattr__(name: str) -> Any:
    """A public name, imported where it is defined the first time it is used."""
    if name not in _WHERE:
        raise AttributeError(f"module 'bece.regression' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
