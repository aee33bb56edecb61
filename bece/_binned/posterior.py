"""The binned BECE model's posterior over the ECE, by its closed form."""

from __future__ import annotations

import numpy as np

from .._base.checks import positive_int
from .._base.memory import check_allocation
from .._base.random import as_generator, sample_dirichlet
from .._base.typing import PriorParam, Seed
from .._metrics.binned import plugin_ece
from .._results.ece import BayesianECE
from .._stats.calibration_stats import CalibrationStats
from .conjugate import ConjugatePosterior, conjugate_posterior, ece_of_draws
from .literal import binned_form, sample_bin_confidence

__all__ = ["binned_posterior_ece", "binned_result", "check_draws"]


def binned_posterior_ece(
    stats: CalibrationStats,
    *,
    alpha: PriorParam = None,
    sigma: PriorParam = None,
    tau: PriorParam = None,
    preset: str | None = None,
    num_samples: int = 10_000,
    seed: Seed = 0,
    model: str = "binned",
) -> BayesianECE:
    """Posterior over the ECE of the binned model, in the bins of ``stats``.

    ``bece.posterior_ece(stats, model="binned")`` is this function; the
    parameters are those of :func:`bece.posterior_ece`
    (prior: :func:`~bece._binned.conjugate.conjugate_posterior`).
    ``model``: ``"conjugate"`` (the closed form, exact for the conjugate
    model), ``"literal"`` (exact draws of the literal model,
    :mod:`bece._binned.literal`) or ``"binned"`` (the reference form,
    :data:`bece._binned.literal.REFERENCE_FORM`).

    Returns
    -------
    BayesianECE
        ``model="binned"``, ``method="conjugate"`` for the conjugate form;
        ``model="binned-literal"``, ``method="exact"`` for the literal one;
        ``accuracy``, ``confidence`` and ``weight`` hold the per-bin draws
        (S, M).
    """
    form = binned_form(model)
    if form == "literal" and preset is not None:
        raise ValueError(
            f"preset={preset!r} reproduces the reference implementation, which is the "
            "conjugate form: pass model='conjugate' (or 'binned') with it, not 'literal'"
        )
    num_samples = positive_int(num_samples, "num_samples")
    rng = as_generator(seed)
    if not isinstance(stats, CalibrationStats):
        raise ValueError(f"stats must be a CalibrationStats, got {type(stats).__name__}")
    if stats.n == 0:
        raise ValueError("stats holds no predictions (n = 0)")
    check_draws(num_samples, stats.n_bins)
    post = conjugate_posterior(stats, alpha=alpha, sigma=sigma, tau=tau, preset=preset)
    q = sample_dirichlet(post.concentration, num_samples, rng)
    conf = sample_bin_confidence(post, num_samples, rng, form)
    draws = ece_of_draws(q, conf, post.weighting)
    if form == "literal":
        return binned_result(q, conf, draws, stats, post, method="exact", model="binned-literal")
    return binned_result(q, conf, draws, stats, post, method="conjugate", preset=preset)


def check_draws(num_samples: int, n_bins: int, models: int = 1) -> None:
    """Refuse ``num_samples`` draws of ``n_bins`` bins that would not fit in
    memory (:func:`bece._base.memory.check_allocation`).

    Per model and draw the result keeps 5 float64 values per bin (the two
    cell probabilities, the bin mean, accuracy and weight) and sampling
    needs about 4 more at its peak (Gamma variates, uniforms and the
    truncated-Normal transform): 9 M float64.
    """
    check_allocation(
        8.0 * 9 * num_samples * n_bins * models,
        what=f"the posterior draws (num_samples x n_bins x {9 * models} float64)",
        argument=f"num_samples={num_samples} with n_bins={n_bins}",
        advice="pass fewer num_samples or n_bins",
    )


def binned_result(
    q: np.ndarray,
    mu: np.ndarray,
    draws: np.ndarray,
    stats: CalibrationStats,
    post: ConjugatePosterior,
    *,
    method: str,
    preset: str | None = None,
    model: str = "binned",
) -> BayesianECE:
    """The :class:`~bece.BayesianECE` of closed-form draws ``q`` (S, 2, M),
    ``mu`` (S, M) and their ECE ``draws`` (S,): per-bin accuracy
    :math:`q_{1,m}/\\pi_m` and weight :math:`\\pi_m` of each draw."""
    weight = q[:, 0, :] + q[:, 1, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = q[:, 1, :] / weight
    return BayesianECE(
        draws=draws,
        accuracy=accuracy,
        confidence=mu,
        weight=weight,
        plugin=plugin_ece(stats),
        stats=stats,
        model=model,
        method=method,
        preset=preset,
        params=post,
    )
