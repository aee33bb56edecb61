"""Is the classifier calibrated? The test of exact calibration, against the
alternative that ``model=`` names (:mod:`bece._smooth.bayes_factor`)."""

from __future__ import annotations

from typing import Any

from numpy.typing import ArrayLike

from .._base.typing import Seed
from .._posteriors import Model, resolve_model
from .._smooth.average import DEFAULT_PRIOR_ODDS
from .._smooth.bayes_factor import CalibrationTest
from .._stats.inputs import Inputs

__all__ = ["calibration_test"]


def calibration_test(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    y_pred: ArrayLike | None = None,
    model: str | Model = "smooth",
    num_resamples: int = 1000,
    prior_odds: float = DEFAULT_PRIOR_ODDS,
    num_samples: int = 2000,
    seed: Seed = 0,
    labels: ArrayLike | None = None,
    pos_label: Any = None,
    from_logits: bool = False,
    row_sum_tol: float | None = None,
    **options: Any,
) -> CalibrationTest:
    """Test whether a classifier is perfectly calibrated.

    Two answers from one call: a consistency-resampling p-value of the
    plug-in ECE, and the Bayes factor of the identity curve against the
    smooth calibration-curve model (:mod:`bece._smooth.bayes_factor`).

    Parameters
    ----------
    y_true, y_prob, y_pred
        As :func:`bece.bayesian_ece` (binary, top-label or (y_pred, y_true,
        confidence) triples).
    model : "smooth" or SmoothModel, default "smooth"
        The alternative: :class:`bece.SmoothModel`, whose ``n_bins`` and
        ``binning`` are the bins of the statistic, ``grid`` its atoms (exact
        up to 2,000 predictions) and ``n_knots`` and the ``*_scale`` options
        its spline and prior (:func:`bece._smooth.fit.fit_smooth`).
    num_resamples : int, default 1000
        Consistency resamples B; the smallest attainable p-value is 1/(B+1).
    prior_odds : float, default 0.02
        :math:`P(\\text{calibrated})/P(\\text{not})` before seeing the data,
        for ``prob_calibrated``: the same default as the averaging of
        :func:`bece.bayesian_ece`, so that both report one posterior
        probability of exact calibration. The verdict reads the Bayes factor,
        which needs no prior odds.
    num_samples : int, default 2000
        Importance samples for the smooth model's marginal likelihood
        (:func:`bece._smooth.draws.importance_draws`; the Laplace value is used if
        their Pareto :math:`\\hat k` is 0.7 or more).
    seed : int or numpy.random.Generator, default 0
    labels, pos_label, from_logits, row_sum_tol
        How ``y_true`` and ``y_prob`` are read, as in :func:`bece.bayesian_ece`
        (:mod:`bece._stats.labels`).
    **options
        Options of the model, set on its object: ``n_bins``, ``binning``,
        ``grid``, ``n_knots``, ``intercept_scale``, ``slope_scale``,
        ``smoothness_scale``, ``bin_scale``.

    Returns
    -------
    CalibrationTest
        ``.p_value``, ``.bayes_factor``, ``.prob_calibrated`` (at
        ``prior_odds``), ``.statistic``, ``.verdict()``.

    See Also
    --------
    bece.SmoothModel.calibration_test : the same test from statistics summed over chunks.

    Examples
    --------
    >>> import numpy as np
    >>> from bece import calibration_test
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> t = calibration_test(rng.uniform(size=2000) < p, p, seed=1)   # calibrated
    >>> bool(t.p_value > 0.05), bool(t.prob_calibrated > 0.5)
    (True, True)
    >>> t = calibration_test(rng.uniform(size=2000) < p**1.5, p, seed=1)
    >>> bool(t.p_value < 0.01), bool(t.prob_calibrated < 0.01)
    (True, True)
    """
    obj = resolve_model(model, "test", **options)
    return obj._test_predictions(  # type: ignore[attr-defined]
        y_true, y_prob, y_pred, Inputs(labels, pos_label, from_logits, row_sum_tol),
        num_resamples=num_resamples, prior_odds=prior_odds, num_samples=num_samples, seed=seed)
