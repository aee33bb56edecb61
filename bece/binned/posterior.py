"""The binned BECE model's posterior over the ECE, by its closed form."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..base.checks import positive_int
from ..base.random import as_generator
from ..metrics.binned import plugin_ece
from ..results.ece import BayesianECE
from ..stats.calibration_stats import CalibrationStats
from .conjugate import conjugate_posterior, sample_posterior

__all__ = ["binned_posterior_ece"]


def binned_posterior_ece(
    stats: CalibrationStats,
    *,
    alpha: Any = None,
    sigma: Any = None,
    tau: Any = None,
    preset: str | None = None,
    num_samples: int = 10_000,
    seed: Any = 0,
) -> BayesianECE:
    """Posterior over the ECE of the binned model, in the bins of ``stats``.

    ``bece.posterior_ece(stats, model="binned")`` is this function; the
    parameters are those of :func:`bece.posterior_ece`
    (prior: :func:`~bece.binned.conjugate.conjugate_posterior`).

    Returns
    -------
    BayesianECE
        ``model="binned"``, ``method="conjugate"``; ``accuracy``,
        ``confidence`` and ``weight`` hold the per-bin draws (S, M).
    """
    num_samples = positive_int(num_samples, "num_samples")
    rng = as_generator(seed)
    post = conjugate_posterior(stats, alpha=alpha, sigma=sigma, tau=tau, preset=preset)
    q, mu, draws = sample_posterior(post, num_samples, rng)
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
        model="binned",
        method="conjugate",
        preset=preset,
        params=post,
    )
