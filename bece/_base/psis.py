r"""Pareto-smoothed importance sampling (PSIS) of log weights, in numpy.

The smooth models' importance step (:mod:`bece._smooth.draws`,
:mod:`bece._smooth.toplabel_fit`, :mod:`bece._regression.smooth`) smooths
their log importance weights by PSIS (Vehtari, Simpson, Gelman, Yao and
Gabry 2024). ArviZ has it (``arviz.psislw`` on 0.2x,
``arviz_stats.base.array_stats.psislw`` on 1.x), but importing either costs
more than the whole rest of a cold ``bece report`` (2 to 7 s of CPU time
against about 1 s), and the two ArviZ lines fit the tail slightly
differently, so seeded draws differed between them. This module is the
algorithm of the paper and of ArviZ 0.2x, one draw set at a time:

1. Sort the S log weights (shifted so that the largest is 0); the tail is
   the :math:`M = \lceil \min(0.2 S, 3\sqrt{S}) \rceil` largest (above the
   (M+1)-th largest, and above the log of the smallest positive float).
2. Fit a generalized Pareto distribution to the tail's weights minus the
   cutoff's, :math:`w - w_c`, by the empirical-Bayes estimate of Zhang and
   Stephens (2009): a posterior mean of :math:`\theta = -k/\sigma` over
   :math:`m = 30 + \lfloor\sqrt M\rfloor` grid points, then
   :math:`\hat k = \overline{\log(1 - \hat\theta (w - w_c))}` shrunk towards
   0.5 with the weight of 10 observations (Vehtari et al., appendix C).
3. Replace the tail by the fitted distribution's quantiles at
   :math:`(i - 1/2)/M`, :math:`i = 1..M`, in the tail's order, cap them at
   the largest raw weight, and normalise.

With 4 or fewer tail draws there is nothing to fit: the weights come back
unsmoothed and :math:`\hat k = \infty`. :math:`\hat k < 0.7` means the
smoothed estimate is reliable. The test compares with ArviZ 0.2x's
``psislw`` to float64 rounding and with ArviZ 1.x's within its own tail fit.

References
----------
Vehtari, Simpson, Gelman, Yao and Gabry (2024), "Pareto smoothed importance
sampling", JMLR 25(72).
Zhang and Stephens (2009), "A new and efficient estimation method for the
generalized Pareto distribution", Technometrics 51(3).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import logsumexp

__all__ = ["PARETO_K_MAX", "gpd_fit", "psis_resample", "psislw", "smoothed_weights"]

#: Above this Pareto k-hat the smoothed importance weights are not reliable
#: (Vehtari et al. 2024): the posteriors then report the Laplace evidence
PARETO_K_MAX = 0.7

#: Prior of the shape: k shrunk towards 0.5 with the weight of this many draws
PRIOR_K_WEIGHT = 10
#: The Zhang-Stephens grid's scale: theta's prior quantile (Zhang & Stephens, section 2)
PRIOR_BS = 3


def gpd_fit(x: np.ndarray) -> tuple[float, float]:
    """Shape ``k`` and scale ``sigma`` of a generalized Pareto distribution
    fitted to the sorted positive values ``x`` (Zhang & Stephens 2009, with
    the weakly informative prior on ``k`` of Vehtari et al. 2024)."""
    n = x.size
    m = 30 + int(np.sqrt(n))
    theta = 1.0 - np.sqrt(m / (np.arange(1, m + 1, dtype=np.float64) - 0.5))
    theta /= PRIOR_BS * x[int(n / 4 + 0.5) - 1]
    theta += 1.0 / x[-1]
    k = np.log1p(-theta[:, None] * x).mean(axis=1)
    log_lik = n * (np.log(-theta / k) - k - 1.0)
    with np.errstate(over="ignore"):  # a far-off grid point: exp -> inf, its weight -> 0
        weights = 1.0 / np.exp(log_lik - log_lik[:, None]).sum(axis=1)
    keep = weights >= 10 * np.finfo(np.float64).eps
    theta, weights = theta[keep], weights[keep] / weights[keep].sum()
    theta_hat = float(np.sum(theta * weights))
    k_hat = float(np.log1p(-theta_hat * x).mean())
    sigma = -k_hat / theta_hat
    k_hat = (n * k_hat + PRIOR_K_WEIGHT * 0.5) / (n + PRIOR_K_WEIGHT)
    return k_hat, sigma


def _gpd_quantiles(probs: np.ndarray, k: float, sigma: float) -> np.ndarray:
    if sigma <= 0:
        return np.full_like(probs, np.nan)
    if abs(k) < np.finfo(np.float64).eps:
        return -sigma * np.log1p(-probs)
    return sigma * np.expm1(-k * np.log1p(-probs)) / k


def psislw(log_weights: Any) -> tuple[np.ndarray, float]:
    """Pareto-smoothed log importance weights of 1-D ``log_weights`` and the
    Pareto shape :math:`\\hat k` (below 0.7: reliable).

    The smoothed weights are normalised (``logsumexp`` 0). Fewer than 5 tail
    draws (S up to 20) come back unsmoothed with :math:`\\hat k = \\infty`.
    ``-inf`` is a zero weight; NaN and ``+inf`` are refused.
    """
    lw = np.array(log_weights, dtype=np.float64)  # a copy: written below
    if lw.ndim != 1 or lw.size == 0:
        raise ValueError(f"log_weights must be a non-empty 1-D array, got shape {lw.shape}")
    if np.any(np.isnan(lw)) or np.any(lw == np.inf):
        raise ValueError("log_weights must not hold NaN or +inf (-inf is a zero weight)")
    if np.all(lw == -np.inf):
        raise ValueError("log_weights must hold at least one finite value (all weights are 0)")
    s = lw.size
    lw -= lw.max()
    order = np.argsort(lw, kind="stable")
    tail_size = int(np.ceil(min(0.2 * s, 3.0 * np.sqrt(s))))
    cutoff = max(lw[order[-tail_size - 1]] if tail_size < s else -np.inf,
                 np.log(np.finfo(np.float64).tiny))
    tail = np.flatnonzero(lw > cutoff)
    k = np.inf
    if tail.size > 4:
        tail = tail[np.argsort(lw[tail], kind="stable")]
        excess = np.exp(lw[tail]) - np.exp(cutoff)
        k, sigma = gpd_fit(excess)
        if np.isfinite(k):
            probs = np.arange(0.5, tail.size) / tail.size
            lw[tail] = np.log(_gpd_quantiles(probs, k, sigma) + np.exp(cutoff))
            lw[lw > 0] = 0.0
    lw -= logsumexp(lw)
    return lw, float(k)


def smoothed_weights(logw: np.ndarray) -> tuple[float, np.ndarray, float, float]:
    """PSIS of log importance weights, as every smooth posterior uses it:
    ``(log marginal estimate, normalised smoothed weights, Pareto k-hat,
    effective sample size)``. The log marginal is the log mean of the raw
    weights; degenerate tails raise no warning (k-hat reports them)."""
    import warnings

    log_marg = float(logsumexp(logw) - np.log(logw.size))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        smoothed, k_hat = psislw(logw - logw.max())
    w = np.exp(smoothed - logsumexp(smoothed))
    return log_marg, w, float(k_hat), float(1.0 / np.sum(w**2))


def psis_resample(logw: np.ndarray, rng: np.random.Generator, *,
                  keep_if_unreliable: bool = False) -> tuple[np.ndarray | None, dict[str, Any]]:
    r"""The importance step of every smooth posterior: draws resampled with
    their Pareto-smoothed weights.

    ``logw`` are the proposals' log importance weights (log likelihood plus
    the mixture's log ratio, :func:`bece._base.laplace.mixture_draws`); as
    many draws as proposals are resampled with the smoothed weights. With
    ``keep_if_unreliable`` the proposals are kept as they are when the
    Pareto :math:`\hat k` is at least :data:`PARETO_K_MAX` (the top-label
    posterior: with hundreds of labels the small skewness of each label's
    conditional posterior adds up over 2L dimensions, and weights that
    cannot be trusted would resample a few draws many times).

    Returns
    -------
    idx : ndarray of shape (S,) or None
        Resampled indices (None: keep the proposals).
    info : dict
        ``log_marginal_is`` (the log mean of the raw weights), ``pareto_k``,
        ``is_ess`` and ``resampled``.
    """
    s = logw.size
    log_marg, w, k_hat, ess = smoothed_weights(logw)
    resample = not keep_if_unreliable or bool(k_hat < PARETO_K_MAX)
    idx = rng.choice(s, size=s, p=w / w.sum()) if resample else None
    return idx, {"log_marginal_is": log_marg, "pareto_k": float(k_hat), "is_ess": ess,
                 "resampled": resample}
