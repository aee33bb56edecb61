r"""Draws of a Laplace mixture and their importance ratios, for every smooth posterior.

The smooth models' posteriors (:mod:`bece._smooth.fit` for the calibration
curve, :mod:`bece._regression.smooth` for the PIT distribution) are mixtures
over a grid of scale hyper-parameters :math:`\eta_k` of Gaussians at the
modes, :math:`q(\theta) = \sum_k \pi_k \mathcal N(\theta; \hat\theta_k, H_k^{-1})`,
with :math:`H_k = L_k L_k^\top`. A draw picks a component with probability
:math:`\pi_k` and sets :math:`\theta = \hat\theta_k + L_k^{-\top}\epsilon`,
:math:`\epsilon \sim \mathcal N(0, I)`. Under an independent Normal prior
:math:`\theta_i \sim \mathcal N(0, s_i^2)` given :math:`\eta_k` (the
:math:`s_i` being the prior scales of the whitened parameters), with prior
mass :math:`m_k` of the grid point, its log importance ratio against the
posterior is, up to the log likelihood and a constant common to every draw,

.. math::

    \log\frac{p(\theta \mid \eta_k)\, m_k}{\pi_k\, \mathcal N(\theta;
    \hat\theta_k, H_k^{-1})} = \tfrac12 \sum_i \log s_i^{-2}
    - \tfrac12 \sum_i \theta_i^2 s_i^{-2} + \log m_k - \log \pi_k
    - \log|L_k| + \tfrac12 \|\epsilon\|^2 .
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

__all__ = ["ARMIJO", "HYPER_RANGE", "MIN_STEP", "NEWTON_TOL", "NewtonWarning", "backtrack",
           "converged", "exponential_grid", "grid_fits", "laplace_mixture_draws", "mixture_weights",
           "not_converged", "single_threaded_blas"]

#: The grid of each scale hyper-parameter spans this range times its prior mean.
HYPER_RANGE = (1e-2, 10.0)

#: A Newton fit has converged when its decrement g'H^{-1}g (twice the
#: predicted rise of the objective) is below this.
NEWTON_TOL = 1e-10
#: Armijo's constant: a step t is taken once the objective rises by at least
#: ARMIJO * t * decrement.
ARMIJO = 0.25
#: The line search stops halving below this step (and takes it).
MIN_STEP = 1e-8


class NewtonWarning(RuntimeWarning):
    """A Newton fit of a smooth posterior stopped before its stopping rule held."""


def not_converged(fit: str, decrement: float, max_iter: int) -> None:
    """The convergence diagnostic of every Newton fit of the smooth
    posteriors: a :class:`NewtonWarning` naming the fit, its last decrement
    and the iterations it ran, when they ran out before :func:`converged`."""
    import warnings

    warnings.warn(f"{fit}: Newton's method stopped after {max_iter} iterations with decrement "
                  f"{decrement:.3g} (converged below {NEWTON_TOL:g}); the Laplace approximation "
                  "there is at the last iterate, not the mode", NewtonWarning, stacklevel=3)


def converged(decrement: float) -> bool:
    """The stopping rule of every Newton fit of the smooth posteriors: the
    Newton decrement below :data:`NEWTON_TOL`."""
    return decrement < NEWTON_TOL


def backtrack(evaluate: Callable[[float], tuple[float, Any]], value: float,
              decrement: float) -> tuple[float, float, Any]:
    """The line search of every Newton fit of the smooth posteriors (concave
    objectives, maximised): from a full step, halve the step ``t`` until
    ``evaluate(t)`` -- the objective at the point ``t`` along the Newton
    step and whatever the fit keeps of it -- rises by at least
    ``ARMIJO * t * decrement`` over ``value``, or ``t`` falls below
    :data:`MIN_STEP`. Returns ``(t, objective, kept)`` at the step taken."""
    t = 1.0
    while True:
        new_value, kept = evaluate(t)
        if new_value >= value + ARMIJO * t * decrement or t < MIN_STEP:
            return t, new_value, kept
        t *= 0.5


def exponential_grid(scale: float, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Log-spaced values over HYPER_RANGE * scale and the Exponential(mean
    ``scale``) prior mass between geometric mid-points (tails included): the
    grid of a scale hyper-parameter of every smooth posterior."""
    values = scale * np.geomspace(*HYPER_RANGE, size)
    mids = np.sqrt(values[:-1] * values[1:])
    cdf = np.concatenate([[0.0], -np.expm1(-mids / scale), [1.0]])
    return values, np.diff(cdf)


def single_threaded_blas() -> AbstractContextManager[Any]:
    """Context that limits BLAS to one thread while it is active (threadpoolctl,
    if installed; else nothing). The smooth posteriors' products are small
    (tens of columns); on a loaded machine a multi-threaded BLAS spends ten
    to a hundred times longer synchronising than computing them (measured:
    37 ms against 0.4 ms for a (26, 1000) by (1000, 26) product on 2 busy
    cores). The previous limits are restored on exit; nothing global changes."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - optional
        from contextlib import nullcontext

        return nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def mixture_weights(log_evidence: np.ndarray, prior_mass: np.ndarray) -> tuple[np.ndarray, float]:
    """The posterior weight of each grid point, :math:`\\pi_k \\propto
    p(\\text{data} \\mid \\eta_k)\\, m_k` (summing to 1), and the log marginal
    likelihood :math:`\\log \\sum_k p(\\text{data} \\mid \\eta_k)\\, m_k`."""
    from scipy import special

    log_joint = log_evidence + np.log(prior_mass)
    log_marg = float(special.logsumexp(log_joint))
    weights = np.exp(log_joint - log_marg)
    weights /= weights.sum()
    return weights, log_marg


def grid_fits(
    fit_at: Callable[[int, np.ndarray], tuple[np.ndarray, np.ndarray, float]],
    prior_mass: np.ndarray, prior_scales: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """The Laplace approximation at every point of a hyper-parameter grid.

    ``fit_at(k, start)`` maximises the log joint density at grid point
    ``k`` from ``start`` (the previous point's mode: the grid is walked so
    that neighbours follow each other) and returns the mode, the lower
    Cholesky factor :math:`L_k` of the negative Hessian there and the
    maximum. The Laplace evidence is
    :math:`\\log p(\\text{data} \\mid \\eta_k) \\approx \\text{max}_k +
    \\tfrac12 \\log|P| - \\log|L_k|` with the prior precision
    :math:`P = \\mathrm{diag}(s^{-2})` of ``prior_scales`` (the Gaussian
    integral's :math:`(2\\pi)^{P/2}` cancels the prior's).

    Returns
    -------
    modes : ndarray of shape (K, P)
    chol : ndarray of shape (K, P, P)
    log_evidence, weights : ndarray of shape (K,)
        See :func:`mixture_weights`.
    log_marginal : float
    """
    size, p_dim = prior_mass.size, prior_scales.size
    half_logdet_prior = 0.5 * float(np.sum(np.log(1.0 / prior_scales**2)))
    modes = np.empty((size, p_dim))
    chol = np.empty((size, p_dim, p_dim))
    log_ev = np.empty(size)
    theta = np.zeros(p_dim)
    for k in range(size):
        theta, lower, obj = fit_at(k, theta)
        modes[k], chol[k] = theta, lower
        log_ev[k] = obj + half_logdet_prior - float(np.sum(np.log(np.diag(lower))))
    weights, log_marg = mixture_weights(log_ev, prior_mass)
    return modes, chol, log_ev, weights, log_marg


def laplace_mixture_draws(
    modes: np.ndarray, chol: np.ndarray, weights: np.ndarray, prior_mass: np.ndarray,
    prior_scales: np.ndarray, num_samples: int, rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Draws of the mixture and their log importance ratios (module docstring).

    Parameters
    ----------
    modes : ndarray of shape (K, P)
    chol : ndarray of shape (K, P, P)
        Lower Cholesky factors :math:`L_k` of the negative Hessians.
    weights, prior_mass : ndarray of shape (K,)
        :math:`\\pi_k` (sums to 1) and :math:`m_k`.
    prior_scales : ndarray of shape (P,)
    num_samples : int
    rng : numpy.random.Generator
        Consumed in this order: the components, then the (S, P) normals.

    Returns
    -------
    k : ndarray of shape (S,), int
        The component of each draw.
    theta : ndarray of shape (S, P)
    log_ratio : ndarray of shape (S,)
    """
    from scipy import linalg  # here: import bece loads scipy.special only

    k = rng.choice(weights.size, size=num_samples, p=weights)
    eps = rng.standard_normal((num_samples, modes.shape[1]))
    theta = np.empty_like(eps)
    logdet = np.empty(num_samples)
    for j in np.unique(k):
        sel = k == j
        # theta = mode + L^{-T} eps has covariance (L L^T)^{-1} = H^{-1}
        theta[sel] = modes[j] + linalg.solve_triangular(chol[j], eps[sel].T, lower=True, trans="T").T
        logdet[sel] = np.sum(np.log(np.diag(chol[j])))
    prec = 1.0 / prior_scales**2
    with np.errstate(divide="ignore"):
        log_ratio = (0.5 * np.sum(np.log(prec)) - 0.5 * (theta**2 @ prec)
                     + np.log(prior_mass[k]) - np.log(weights[k])
                     - logdet + 0.5 * np.sum(eps**2, axis=1))
    return k, theta, log_ratio
