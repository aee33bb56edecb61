"""The regression PIT models as objects: the smooth model (the default) and the Dirichlet one.

Each holds its options -- the levels at which the calibration curve and the
cal score are read, the prior -- its NumPyro model (:mod:`bece.models._regression`),
its statistics (a :class:`~bece.regression.PITHistogram`, mergeable with
``+``), its fast path and its cross-check (:mod:`bece._validation.regression`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from .._base.checks import check_scale
from .._base.typing import Seed
from .._regression.bayesian import BayesianCalibrationError, pit_posterior, smooth_prior
from .._regression.forecast import check_levels
from .._regression.histogram import DEFAULT_CELLS, PITHistogram, check_cells
from .._regression.metrics import DEFAULT_LEVELS
from .._regression.smooth import PRIOR_ODDS
from .._validation.agreement import CrossCheck
from .._validation.settings import MCMCSettings
from .base import Model, NumPyroModel

__all__ = ["DirichletPITModel", "SmoothPITModel"]


def _levels(levels: Any) -> tuple[float, ...] | None:
    return None if levels is None else tuple(check_levels(levels).tolist())


class _PITModel(Model):
    levels: tuple[float, ...] | None
    tasks: ClassVar[tuple[str, ...]] = ("regression",)

    @property
    def level_array(self) -> np.ndarray:
        """The levels as an array (default :data:`~bece._regression.metrics.DEFAULT_LEVELS`)."""
        return DEFAULT_LEVELS.copy() if self.levels is None else np.array(self.levels)

    def statistics(self, pit: ArrayLike) -> PITHistogram:
        """The PIT histogram on ``n_cells`` equal cells (default 1000; add chunks with ``+``)."""
        n_cells = getattr(self, "n_cells", None)
        return PITHistogram.from_pit(pit, n_cells=DEFAULT_CELLS if n_cells is None else n_cells)

    def _posterior_options(self) -> dict[str, Any]:
        raise NotImplementedError

    def posterior(self, pit: ArrayLike | PITHistogram, *, weights: str | ArrayLike | None = "mean",
                  num_samples: int | None = None, seed: Seed = 0) -> BayesianCalibrationError:
        """The fast path from PIT values or their histogram (chunks summed)."""
        return pit_posterior(pit, None if self.levels is None else self.level_array,
                             model=self.shorthand, weights=weights, seed=seed,
                             num_samples=10_000 if num_samples is None else num_samples,
                             **self._posterior_options())

    def _cross_check_predictions(self, y_true: Any, y_prob: Any, y_pred: Any, *, mcmc: Any,
                                 closed_form: Any, average: str, top_label: bool) -> Any:
        return self.cross_check(y_true, mcmc=mcmc, closed_form=closed_form)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class SmoothPITModel(_PITModel):
    """The smooth model of the PIT distribution, averaged with calibration (the default).

    The PIT's cell probabilities are a probit-normal family times a smooth
    tilt (:func:`bece.models.pit_model`); calibration, the uniform PIT, is
    the other model, and the posterior mixes the two by their posterior
    probabilities, so the interval of the cal score can reach 0
    (:mod:`bece._regression.bayesian`).

    Parameters
    ----------
    levels : array_like of shape (J,), optional
        Where the calibration curve and the cal score are read (default
        :data:`~bece._regression.metrics.DEFAULT_LEVELS`).
    prior_odds : float, default 0.1
        Prior odds of calibration.
    shift_scale, spread_scale, smoothness_scale : float, optional
        The prior (defaults 0.6, 0.67, 0.25; :mod:`bece._regression.smooth`).
    n_cells : int, optional
        Cells of the PIT histogram (default 1000).
    forecast_levels, forecast_draws : optional
        For the randomised PIT of a quantile forecast (its levels) or of a
        sample forecast (its number of draws):
        :func:`bece.regression.bayesian_calibration_error`.

    Examples
    --------
    >>> import numpy as np
    >>> from bece.regression import SmoothPITModel, pit
    >>> rng = np.random.default_rng(0)
    >>> u = pit(rng.normal(size=4000), mean=0.0, std=0.7)
    >>> model = SmoothPITModel(levels=[0.1, 0.5, 0.9])
    >>> hist = model.statistics(u[:2000]) + model.statistics(u[2000:])
    >>> r = model.posterior(hist, num_samples=2000, seed=1)
    >>> bool(r.prob_calibrated < 1e-6), r.curve.shape
    (True, (2000, 3))
    >>> model.numpyro(hist)
    NumPyroModel(fn=bece.models.pit_model, data=counts)
    """

    levels: tuple[float, ...] | None = None
    prior_odds: float = PRIOR_ODDS
    shift_scale: float | None = None
    spread_scale: float | None = None
    smoothness_scale: float | None = None
    n_cells: int | None = None
    forecast_levels: tuple[float, ...] | None = None
    forecast_draws: int | None = None

    shorthand: ClassVar[str] = "smooth"
    compares: ClassVar[str] = (
        "the shift, log spread, the curve at the levels and the cal score of the smooth "
        "alternative at their 5, 50 and 95% quantiles; P(exactly calibrated) by bridge sampling")
    name = "smooth"

    def __post_init__(self) -> None:
        object.__setattr__(self, "levels", _levels(self.levels))
        if self.forecast_levels is not None:
            object.__setattr__(self, "forecast_levels",
                               tuple(np.asarray(self.forecast_levels, dtype=np.float64).tolist()))
        check_scale(self.prior_odds, "prior_odds")
        smooth_prior(self.shift_scale, self.spread_scale, self.smoothness_scale)
        if self.n_cells is not None:
            check_cells(self.n_cells)
        if self.forecast_levels is not None and self.forecast_draws is not None:
            raise ValueError("pass forecast_draws or forecast_levels, not both "
                             "(forecast_draws=S implies the levels k/(S+1))")

    @property
    def _scales(self) -> dict[str, float | None]:
        return {"shift_scale": self.shift_scale, "spread_scale": self.spread_scale,
                "smoothness_scale": self.smoothness_scale}

    def _posterior_options(self) -> dict[str, Any]:
        return {"prior_odds": self.prior_odds, **self._scales, "n_cells": self.n_cells,
                "forecast_levels": self.forecast_levels, "forecast_draws": self.forecast_draws}

    def numpyro(self, pit: ArrayLike | PITHistogram) -> NumPyroModel:
        """:func:`bece.models.pit_model` with its arguments for the PIT values or histogram."""
        from .._validation.regression import smooth_pit_arguments
        from ..models import pit_model

        scales = smooth_prior(self.shift_scale, self.spread_scale, self.smoothness_scale)
        _, _, _, args, kwargs = smooth_pit_arguments(
            pit, self.level_array, scales, self.n_cells, (self.forecast_levels, self.forecast_draws))
        return NumPyroModel(pit_model, args, kwargs, ("counts",))

    def cross_check(self, pit: ArrayLike | PITHistogram, *, mcmc: MCMCSettings | None = None,
                    closed_form: BayesianCalibrationError | None = None) -> CrossCheck:
        """NUTS on :meth:`numpyro` against :meth:`posterior`'s smooth part, under the agreement rule."""
        from .._validation.regression import cross_check_smooth_pit

        if closed_form is not None:
            raise ValueError("closed_form does not apply to the smooth PIT model: its draws of the "
                             "smooth alternative are computed with the check")
        return cross_check_smooth_pit(pit, self.level_array, prior_odds=self.prior_odds,
                                      scales=self._scales, n_cells=self.n_cells,
                                      forecast=(self.forecast_levels, self.forecast_draws),
                                      mcmc=mcmc)


@dataclass(frozen=True)
class DirichletPITModel(_PITModel):
    """A Dirichlet over the PIT histogram's cells at the levels (no mass on calibration).

    Parameters
    ----------
    levels : array_like of shape (J,), optional
        The levels, whose J + 1 cells the Dirichlet is over.
    alpha : float or array_like of shape (J + 1,), optional
        A number a gives :math:`\\alpha_k = a (p_{k+1} - p_k)`; an array each
        cell's concentration (default a = 1).

    Its statistics are the PIT histogram on 1,000 cells (the levels must
    lie on the grid of a histogram); from PIT values the counts at the
    levels are exact.

    Examples
    --------
    >>> import numpy as np
    >>> from bece.regression import DirichletPITModel, pit
    >>> u = pit(np.random.default_rng(0).normal(size=1000), mean=0.0, std=1.0)
    >>> r = DirichletPITModel(levels=[0.25, 0.5, 0.75]).posterior(u, num_samples=1000)
    >>> r.model, bool(r.interval(0.9)[0] > 0)              # no mass at calibration
    ('dirichlet', True)
    """

    levels: tuple[float, ...] | None = None
    alpha: float | tuple[float, ...] | None = None

    shorthand: ClassVar[str] = "dirichlet"
    compares: ClassVar[str] = "the curve at the levels and the cal score at their 5, 50 and 95% quantiles"
    name = "dirichlet"

    def __post_init__(self) -> None:
        from .._regression.bayesian import dirichlet_prior

        object.__setattr__(self, "levels", _levels(self.levels))
        if self.alpha is not None and np.ndim(self.alpha):
            object.__setattr__(self, "alpha", tuple(np.asarray(self.alpha, dtype=np.float64).tolist()))
        dirichlet_prior(self.alpha, self.level_array)  # checks alpha against the levels

    def _posterior_options(self) -> dict[str, Any]:
        return {"alpha": self.alpha}  # n_cells: its statistics' grid only

    def numpyro(self, pit: ArrayLike | PITHistogram) -> NumPyroModel:
        """:func:`bece.models.pit_dirichlet_model` with its arguments."""
        from .._regression.bayesian import dirichlet_prior, pit_data
        from ..models import pit_dirichlet_model

        data = pit_data(pit, self.level_array, None)
        return NumPyroModel(pit_dirichlet_model, (dirichlet_prior(self.alpha, self.level_array),),
                            {"n": data.histogram.n, "counts": data.counts}, ("counts",))

    def cross_check(self, pit: ArrayLike | PITHistogram, *, mcmc: MCMCSettings | None = None,
                    closed_form: BayesianCalibrationError | None = None) -> CrossCheck:
        """NUTS on :meth:`numpyro` against the closed-form Dirichlet, under the agreement rule."""
        from .._validation.regression import cross_check_dirichlet_pit

        if closed_form is not None:
            raise ValueError("closed_form does not apply to the Dirichlet PIT model")
        return cross_check_dirichlet_pit(pit, self.level_array, alpha=self.alpha, mcmc=mcmc)
