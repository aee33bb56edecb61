"""The regression calibration posterior: ``model=`` resolved, then the model object called."""

from __future__ import annotations

from typing import Any

from numpy.typing import ArrayLike

from .._base.typing import Seed
from .._posteriors import Model, resolve_model
from .._regression.bayesian import BayesianCalibrationError
from .._regression.histogram import PITHistogram

__all__ = ["bayesian_calibration_error"]


def bayesian_calibration_error(
    pit: ArrayLike | PITHistogram,
    levels: ArrayLike | None = None,
    *,
    model: str | Model = "smooth",
    weights: str | ArrayLike | None = "mean",
    num_samples: int = 10_000,
    seed: Seed = 0,
    **options: Any,
) -> BayesianCalibrationError:
    """Posterior over the calibration curve and the cal score of a regression forecaster.

    The draws estimate the *population* score
    :math:`\\sum_j w_j (p_j - P(u \\le p_j))^2` at the given levels, where
    :math:`P` is the distribution of the forecaster's PIT on the population
    the test set was drawn from (:mod:`bece._regression.bayesian` for the models). Use PIT
    values of held-out data: on the data a model was fitted to, the PIT of
    even a correct model is not uniform.

    Parameters
    ----------
    pit : array_like of shape (T,) or PITHistogram
        PIT values of the test set (:func:`~bece.regression.pit`; the
        randomised PIT for sample and quantile forecasts), or their
        histogram (:class:`~bece.regression.PITHistogram`, e.g. summed over
        chunks; then the levels must lie on its grid).
    levels : array_like of shape (J,), optional
        Strictly increasing in (0, 1); default
        :data:`~bece._regression.metrics.DEFAULT_LEVELS` (0.01, ..., 0.99).
    model : {"smooth", "dirichlet"} or model object, default "smooth"
        :class:`~bece.regression.SmoothPITModel`, the smooth model with a
        posterior probability of calibration, whose intervals the
        validation study shows honest (:mod:`bece._regression.bayesian`), or
        :class:`~bece.regression.DirichletPITModel`, the Dirichlet over the
        PIT histogram at the levels; or their shorthand. The keywords below
        that configure a model (``prior_odds`` to ``alpha``) are set on it;
        one the model does not have raises ``ValueError``.
    weights : "mean", "sum", "count" or array_like of shape (J,), default "mean"
        As :func:`~bece.regression.calibration_error`: the mean squared gap
        over the levels by default, comparable across level grids
        (``"sum"``: Kuleshov et al.'s cal, J times it); with ``"count"`` each
        draw uses :math:`w_j = C_j / \\sum_i C_i`, the population analogue.
    prior_odds : float, default 0.1
        ``model="smooth"``: :math:`P(\\text{calibrated}) / P(\\text{not})`
        before the data: 1/11 of the prior mass on exact calibration, the
        value the validation study supports
        (:mod:`bece._regression.smooth`; ``prior_odds=1`` for even odds).
    shift_scale, spread_scale, smoothness_scale : float, optional
        ``model="smooth"``: prior sd of the PIT's probit shift (default
        0.6), of its log spread (default 0.67) and prior mean of the
        smooth tilt's scale (default 0.25); see
        :mod:`bece._regression.smooth` for what they mean and why.
    n_cells : int, optional
        ``model="smooth"`` from PIT values: cells G of the grid they are
        counted on (default 1000). A histogram uses its own.
    forecast_levels : array_like of shape (K,), optional
        ``model="smooth"``, for a quantile forecast's randomised PIT
        (``pit(..., quantiles=..., levels=..., randomize=True)``): its
        levels, between which the PIT is uniform whatever the forecaster, so
        that only the counts between them carry information
        (:mod:`bece._regression.cells`). The smooth model is then fitted to
        those counts and the curve is linear between the levels, as the
        randomised PIT's is. Without it, the model follows where the values
        fall between the levels (the randomisation's noise and the steps of
        the density): measured for quantile forecasts with sd x 0.5 at n =
        10^5, intervals covered 0.765 instead of 0.9 (0.955 with it). With a
        histogram the levels must lie on its grid.
    forecast_draws : int, optional
        ``model="smooth"``, for the randomised PIT of sample forecasts of S
        draws each (``pit(..., samples=..., randomize=True)``): S. The model
        then describes the continuous PIT u of the distribution the draws
        come from, and the rank of y among the draws as Binomial(S, u)
        (exact for independent draws), fitted to the counts of each rank,
        on a fine grid with probit-spaced cells near 0 and 1 where an
        over-confident forecaster's u piles up; the curve is the randomised
        PIT's. Measured (``benchmarks/regression_study.py``, predictive sd x
        0.5, S = 100, 200 replications): intervals covered 0.915 at n = 10^4
        and 0.885 at 10^5; fitted instead to the counts between the ranks'
        levels k/(S+1) as if the PIT were uniform there
        (``forecast_levels=``), 0.790 at 10^4, because the ranks spread the
        mass piled near 0 and 1 in a shape the smooth model does not follow.
        Implies the levels k/(S+1) (pass one of the two keywords).
    alpha : float or array_like of shape (J + 1,), optional
        ``model="dirichlet"``: a number a gives :math:`\\alpha_k = a
        (p_{k+1} - p_k)`; an array gives each cell's concentration.
        Default a = 1.
    num_samples : int, default 10_000
        Number of posterior draws S.
    seed : int or numpy.random.Generator, default 0

    Returns
    -------
    BayesianCalibrationError
        ``.draws``, ``.interval(0.9)``, ``.curve``, ``.curve_interval(0.9)``,
        ``.plugin``, ``.prob_calibrated``, ``.bayes_factor``.

    Warns
    -----
    DiscretePITWarning
        When PIT values look discrete (many ties): compute them with
        ``pit(..., randomize=True, seed=...)``.

    Notes
    -----
    With the smooth model a share ``prob_calibrated`` of the draws is
    exactly 0. When it is above 0.95 the 90% interval is [0, 0], and the
    posterior mean -- pulled up by the few draws of the smooth model -- can
    lie above the interval's upper end; report the interval and
    ``prob_calibrated`` rather than the mean alone.

    Examples
    --------
    >>> import numpy as np
    >>> from bece.regression import bayesian_calibration_error, pit
    >>> rng = np.random.default_rng(0)
    >>> y = rng.normal(size=2000)
    >>> r = bayesian_calibration_error(pit(y, mean=0.0, std=1.0), num_samples=2000)
    >>> r.interval(0.9)[0], bool(r.prob_calibrated > 0.9)      # calibrated: 0 is in the interval
    (0.0, True)
    >>> r = bayesian_calibration_error(pit(y, mean=0.0, std=0.7), num_samples=2000)
    >>> lo, hi = r.interval(0.9)                               # std x 0.7: cal is about 0.0038
    >>> bool(lo < 0.0038 < hi), r.prob_calibrated < 1e-6
    (True, True)
    """
    obj = resolve_model(model, "regression", levels=levels, **options)
    return obj.posterior(pit, weights=weights, num_samples=num_samples,  # type: ignore[attr-defined]
                         seed=seed)
