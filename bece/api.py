"""Entry points that choose the model.

bayesian_ece and posterior_ece dispatch between the binned and the smooth posterior.
"""

from __future__ import annotations

from typing import Any

from numpy.typing import ArrayLike

from .base.typing import BinningSpec, PriorParam, Seed
from .binned.literal import FORMS
from .binned.posterior import binned_posterior_ece
from .results.ece import BayesianECE
from .stats.binning import Binning
from .stats.calibration_stats import CalibrationStats

__all__ = [
    "bayesian_ece",
    "posterior_ece",
]


MODELS = ("binned", *FORMS, "smooth")


def _check_model(model: str) -> None:
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}, got {model!r}")


def _binned_options_unused(**options: Any) -> None:
    given = [k for k, v in options.items() if v is not None]
    if given:
        raise ValueError(
            f"{', '.join(given)} belong(s) to the binned model; model='smooth' takes its "
            "options through bece.smooth.smooth_ece and bece.smooth.smooth_posterior_ece"
        )


def posterior_ece(
    stats: CalibrationStats,
    *,
    alpha: PriorParam = None,
    sigma: PriorParam = None,
    tau: PriorParam = None,
    preset: str | None = None,
    num_samples: int = 10_000,
    seed: Seed = 0,
    model: str = "binned",
    n_bins: int | None = None,
    binning: BinningSpec | Binning | None = None,
) -> BayesianECE:
    """Posterior over the ECE from statistics, by the closed form.

    Parameters
    ----------
    stats : CalibrationStats
        Statistics of the test set (possibly summed over chunks).
    alpha, sigma, tau, preset
        Prior; see :func:`conjugate_posterior`.
    num_samples : int, default 10_000
        Number of independent posterior draws S.
    seed : int or numpy.random.Generator, default 0
        Randomness; the same int gives identical draws.
    model : {"binned", "conjugate", "literal", "smooth"}, default "binned"
        ``"conjugate"``: the closed form in the bins of ``stats``, exact for
        the conjugate model. ``"literal"``: the literal BECE model (each
        confidence a truncated Normal in its bin), by exact one-dimensional
        sampling (:mod:`bece.binned.literal`). ``"binned"``: the reference
        binned model, the conjugate form (README, "Which binned model").
        ``"smooth"``: the smooth calibration-curve model by Laplace
        (:func:`bece.smooth.smooth_posterior_ece`), from statistics in fine
        bins that refine the ECE bins (``binning=bece.smooth.fine_binning(
        n_bins)``); ``alpha``, ``sigma``, ``tau`` and ``preset`` do not
        apply to it.
    n_bins, binning : optional
        ``model="smooth"`` only: the ECE bins (default 15 uniform) that the
        bins of ``stats`` refine. The binned model uses the bins of
        ``stats`` and refuses them.

    Returns
    -------
    BayesianECE
        (:class:`bece.smooth.SmoothBayesianECE` for ``model="smooth"``.)
    """
    if not isinstance(stats, CalibrationStats):
        raise ValueError(f"stats must be a CalibrationStats, got {type(stats).__name__}")
    if model == "smooth":
        _binned_options_unused(alpha=alpha, sigma=sigma, tau=tau, preset=preset)
        from .smooth.posterior import smooth_posterior_ece

        return smooth_posterior_ece(stats, n_bins=n_bins,
                                    binning="uniform" if binning is None else binning,
                                    num_samples=num_samples, seed=seed)
    _check_model(model)
    given = [k for k, v in (("n_bins", n_bins), ("binning", binning)) if v is not None]
    if given:
        raise ValueError(
            f"{' and '.join(given)} belong(s) to model='smooth' (the ECE bins that its fine "
            f"statistics refine); model={model!r} uses the bins of stats"
        )
    return binned_posterior_ece(
        stats, alpha=alpha, sigma=sigma, tau=tau, preset=preset, num_samples=num_samples, seed=seed,
        model=model,
    )


def bayesian_ece(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    y_pred: ArrayLike | None = None,
    n_bins: int | None = None,
    binning: BinningSpec | Binning = "uniform",
    alpha: PriorParam = None,
    sigma: PriorParam = None,
    tau: PriorParam = None,
    preset: str | None = None,
    num_samples: int = 10_000,
    seed: Seed = 0,
    model: str = "binned",
) -> BayesianECE:
    """Posterior over a classifier's expected calibration error (BECE).

    Parameters
    ----------
    y_true : array_like of shape (n,)
        True labels (0/1 for a 1-D ``y_prob`` without ``y_pred``).
    y_prob : array_like of shape (n,) or (n, K)
        ``P(y=1)`` of a binary classifier; or class probabilities, whose row
        maximum is the confidence and ``z = [argmax == y_true]``; or with
        ``y_pred`` the confidence of ``y_pred``.
    y_pred : array_like of shape (n,), optional
        Predicted labels: triples (y_pred, y_true, confidence of y_pred).
    n_bins : int, default 15
        Number of bins M.
    binning : {"uniform", "quantile"} or array_like, default "uniform"
        See :mod:`bece.stats.binning`.
    alpha : float or array, default 1/(2M)
        Dirichlet concentration per (outcome, bin) cell.
    sigma, tau : float or array of shape (M,), default w_m / sqrt(12)
        Spread of confidences within a bin, and prior spread of the bin's
        mean confidence around its centre.
    preset : {"uncertainty-metrics"}, optional
        Reproduce google/uncertainty-metrics (see :mod:`bece.binned.conjugate` for
        what it changes and why it is not the default).
    num_samples : int, default 10_000
        Posterior draws.
    seed : int or numpy.random.Generator, default 0
    model : {"binned", "conjugate", "literal", "smooth"}, default "binned"
        ``"binned"``: the reference binned BECE model, its conjugate form
        (closed form above). ``"conjugate"``: the same, by name.
        ``"literal"``: the literal BECE model (each confidence a truncated
        Normal within its bin), by exact one-dimensional sampling of each
        bin's mean (:mod:`bece.binned.literal`); ``preset`` does not apply.
        ``"smooth"``: a smooth calibration curve (natural cubic spline in
        logit(p) with a learned smoothness scale) and a Bayesian bootstrap
        over the confidences, by Laplace (:func:`bece.smooth.smooth_ece`,
        which takes its options). It pools information across bins, so its
        intervals stay honest at small n where the binned posterior's do
        not; ``alpha``, ``sigma``, ``tau`` and ``preset`` do not apply to it.
        Same result type, with ``method="laplace"`` and the posterior curve
        (``.curve`` on ``.curve_grid``; in ``to_inference_data()``).

    Returns
    -------
    BayesianECE
        ``.draws``, ``.mean``, ``.interval(0.9)``, ``.hdi(0.9)``,
        ``.plugin``, ``.to_inference_data()``, ``.summary()``.

    Notes
    -----
    The posterior is the closed form of :func:`conjugate_posterior`; each
    draw's ECE is :math:`\\sum_m |q_{1,m} - (q_{0,m}+q_{1,m})\\mu_m|`.

    Examples
    --------
    >>> import numpy as np
    >>> from bece import bayesian_ece
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = rng.uniform(size=2000) < p          # calibrated by construction
    >>> r = bayesian_ece(y, p, n_bins=10, seed=1)
    >>> bool(r.interval(0.9)[0] < r.plugin < r.interval(0.9)[1])
    True
    """
    if model == "smooth":
        _binned_options_unused(alpha=alpha, sigma=sigma, tau=tau, preset=preset)
        from .smooth.posterior import smooth_ece

        return smooth_ece(y_true, y_prob, y_pred=y_pred, n_bins=n_bins, binning=binning,
                          num_samples=num_samples, seed=seed)
    _check_model(model)
    stats = CalibrationStats.from_arrays(y_true, y_prob, y_pred=y_pred, n_bins=n_bins, binning=binning)
    return posterior_ece(
        stats, alpha=alpha, sigma=sigma, tau=tau, preset=preset, num_samples=num_samples, seed=seed,
        model=model,
    )
