r"""The Laplace engine of every smooth posterior: grids, Newton steps, mixture draws, ratios.

The smooth models' posteriors (:mod:`bece._smooth.fit` for the calibration
curve, :mod:`bece._smooth.toplabel_fit` for the hierarchical top-label
model, :mod:`bece._regression.smooth` for the PIT distribution) are mixtures
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

__all__ = ["ARMIJO", "HYPER_RANGE", "MIN_STEP", "NEWTON_TOL", "NewtonWarning", "OBJECTIVE_ROUNDOFF",
           "backtrack", "climb_and_flood", "converged", "exponential_grid", "grid_fits",
           "laplace_mixture_draws", "mixture_draws", "mixture_information", "mixture_variances",
           "mixture_weights",
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
#: The rounding error of an objective, relative to its size. The objectives
#: are log posteriors dominated by log likelihoods, sums of terms of one
#: sign. Evaluated at points a tiny step apart, the smooth curve's scatters
#: by 3e-15 to 5e-15 of its size, from 180 to 1.8e9; summed in another order,
#: it moves by under a twentieth of this (tests/base/test_laplace.py). This
#: allows 20 times the scatter: a rise below it cannot be seen by comparing
#: two values.
OBJECTIVE_ROUNDOFF = 1e-13


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
    :data:`MIN_STEP`. Returns ``(t, objective, kept)`` at the step taken.

    Next to the mode the predicted rise can fall below the objective's own
    rounding error (:data:`OBJECTIVE_ROUNDOFF` times its size; large data
    sets, whose log likelihoods reach 10^5 and more): no comparison of two
    values can then confirm it, and the full step is taken unless it falls
    by more than that error. The quadratic model is exact to far better
    than this there, so the next decrement is that of a Newton step from
    next to the mode and meets :func:`converged`."""
    noise = OBJECTIVE_ROUNDOFF * abs(value)
    t = 1.0
    while True:
        new_value, kept = evaluate(t)
        if new_value >= value + ARMIJO * t * decrement or t < MIN_STEP:
            return t, new_value, kept
        if t == 1.0 and ARMIJO * decrement <= noise and new_value >= value - noise:
            return t, new_value, kept  # a rise too small to be seen: Newton's step
        t *= 0.5


def exponential_grid(scale: float, size: int,
                     low: float = HYPER_RANGE[0]) -> tuple[np.ndarray, np.ndarray]:
    """Log-spaced values over [``low``, HYPER_RANGE[1]] * scale and the
    Exponential(mean ``scale``) prior mass between geometric mid-points
    (tails included): the grid of a scale hyper-parameter of every smooth
    posterior."""
    values = scale * np.geomspace(low, HYPER_RANGE[1], size)
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


def mixture_variances(weights: np.ndarray, chol: np.ndarray) -> np.ndarray:
    r"""Each parameter's variance under a Laplace mixture, within components:
    :math:`\sum_k w_k [H_k^{-1}]_{pp}`, from the lower Cholesky factors
    :math:`L_k` of the negative Hessians (:func:`grid_fits`), as the column
    sums of :math:`(L_k^{-1})^2`. The spread of the modes between components
    is left out: it is the hyper-parameter's, not the conditional one a
    reparameterisation of the coefficients given it can use."""
    eye = np.eye(chol.shape[-1])
    var = np.zeros(chol.shape[-1])
    for weight, lower in zip(weights, chol):
        inv = np.linalg.solve(lower, eye)
        var += weight * np.sum(inv**2, axis=0)
    return var


def mixture_information(weights: np.ndarray, precision: np.ndarray, scales: np.ndarray,
                        prior_precision: float | np.ndarray = 1.0) -> np.ndarray:
    r"""The data's information :math:`I_p` about each effect :math:`s\,w_p` of a
    coefficient :math:`w_p` times a scale s, from a Laplace mixture over s.

    Component k, at scale :math:`s_k`, has the diagonal ``precision[k]`` of
    its negative Hessian (the row sums of squares of its Cholesky factor),
    :math:`[H_k]_{pp} = \pi_p + s_k^2 I_p` with :math:`\pi_p` the prior
    precision; the estimates :math:`([H_k]_{pp} - \pi_p)/s_k^2` are averaged
    with the components' ``weights`` and kept at 0 or above. ``precision``
    has shape (G, ...) and ``scales`` (G,).
    """
    excess = np.asarray(precision, dtype=np.float64) - prior_precision
    scales = np.asarray(scales, dtype=np.float64).reshape((-1,) + (1,) * (excess.ndim - 1))
    return np.maximum(np.tensordot(np.asarray(weights, dtype=np.float64), excess / scales**2, 1), 0.0)


def climb_and_flood(
    evaluate: Callable[[tuple[int, ...], Any], tuple[Any, float]], sizes: tuple[int, ...],
    starts: list[tuple[int, ...]], drop: float,
) -> dict[tuple[int, ...], tuple[Any, float]]:
    """The points of a product grid of hyper-parameters worth a Laplace fit,
    for posteriors with more scales than a full grid affords.

    From each of ``starts``, climb to a local maximum of the log joint
    density (moving to any neighbour, one step along one axis, that is
    higher); then flood: evaluate every neighbour of each point within
    ``drop`` of the best found. ``evaluate(index, start)`` fits the mode at
    ``index`` from the fit of a neighbour (``start``; None at a start) and
    returns the fit and its log joint density (Laplace evidence plus log
    prior mass). Points outside the flood carry less than
    :math:`e^{-\\text{drop}}` of the best point's weight each.

    Returns
    -------
    dict
        index -> (fit, log joint), for every point evaluated.
    """
    done: dict[tuple[int, ...], tuple[Any, float]] = {}

    def value(idx: tuple[int, ...], start: Any) -> float:
        if idx not in done:
            done[idx] = evaluate(idx, start)
        return done[idx][1]

    def neighbours(idx: tuple[int, ...]) -> list[tuple[int, ...]]:
        out = []
        for d in range(len(sizes)):
            for step in (-1, 1):
                if 0 <= idx[d] + step < sizes[d]:
                    out.append(tuple(i + step * (e == d) for e, i in enumerate(idx)))
        return out

    best = -np.inf
    for current in dict.fromkeys(starts):
        if current in done:
            continue
        value(current, None)
        while True:
            moved = False
            for nb in neighbours(current):
                if value(nb, done[current][0]) > done[current][1]:
                    current, moved = nb, True
            if not moved:
                break
        best = max(best, done[current][1])
    frontier = [i for i, (_, lj) in done.items() if lj >= best - drop]
    expanded: set[tuple[int, ...]] = set()
    while frontier:
        idx = frontier.pop()
        if idx in expanded:
            continue
        expanded.add(idx)
        for nb in neighbours(idx):
            if nb not in done:
                lj = value(nb, done[idx][0])
                best = max(best, lj)
                if lj >= best - drop:
                    frontier.append(nb)
    return done


def mixture_draws(
    weights: np.ndarray, prior_mass: np.ndarray, parts: list[tuple[tuple[int, ...], np.ndarray | None]],
    draw: Callable[[int, list[np.ndarray]], tuple[list[np.ndarray], float]],
    num_samples: int, rng: np.random.Generator,
) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
    """Draws of a Laplace mixture whose Gaussians a posterior supplies, and
    their log importance ratios (module docstring).

    The parameters come in ``parts`` (the top-label posterior's shared
    coefficients and its per-label ones; one part for a dense Gaussian),
    each with its shape per draw and the prior precisions :math:`s_i^{-2}`
    of its coordinates (None: standard normal). ``draw(k, eps)`` maps the
    standard normals of each part, for draws of component ``k``, to the
    parameters :math:`\\hat\\theta_k + L_k^{-\\top}\\epsilon` and returns
    them with :math:`\\log|L_k|`.

    Parameters
    ----------
    weights, prior_mass : ndarray of shape (K,)
        :math:`\\pi_k` (sums to 1) and :math:`m_k`.
    parts : list of (shape, precision or None)
    draw : callable
    num_samples : int
    rng : numpy.random.Generator
        Consumed in this order: the components, then each part's normals.

    Returns
    -------
    k : ndarray of shape (S,), int
        The component of each draw.
    theta : list of ndarray of shape (S,) + shape, one per part
    log_ratio : ndarray of shape (S,)
    """
    k = rng.choice(weights.size, size=num_samples, p=weights)
    eps = [rng.standard_normal((num_samples,) + tuple(shape)) for shape, _ in parts]
    theta = [np.empty_like(e) for e in eps]
    half_logdet = np.empty(num_samples)
    for j in np.unique(k):
        sel = np.flatnonzero(k == j)
        values, half_logdet[sel] = draw(int(j), [e[sel] for e in eps])
        for out, value in zip(theta, values):
            out[sel] = value
    log_ratio: Any = 0.0
    with np.errstate(divide="ignore"):
        for (_, prec), th in zip(parts, theta):
            axes = tuple(range(1, th.ndim))
            if prec is None:  # standard normal prior
                log_ratio = log_ratio - 0.5 * np.sum(th**2, axis=axes)
            else:
                log_ratio = log_ratio + (0.5 * np.sum(np.log(prec)) - 0.5 * (th**2 @ prec))
        log_ratio = log_ratio + np.log(prior_mass[k]) - np.log(weights[k]) - half_logdet
        for e in eps:
            log_ratio = log_ratio + 0.5 * np.sum(e**2, axis=tuple(range(1, e.ndim)))
    return k, theta, log_ratio


def laplace_mixture_draws(
    modes: np.ndarray, chol: np.ndarray, weights: np.ndarray, prior_mass: np.ndarray,
    prior_scales: np.ndarray, num_samples: int, rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`mixture_draws` of dense Gaussians: :math:`\\theta = \\hat\\theta_k +
    L_k^{-\\top}\\epsilon` (module docstring).

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
    def draw(j: int, eps: list[np.ndarray]) -> tuple[list[np.ndarray], float]:
        # theta = mode + L^{-T} eps has covariance (L L^T)^{-1} = H^{-1}.  LU with
        # partial pivoting of the triangular L^T does not pivot, so numpy's solve
        # is the back substitution (and spares the report importing scipy.linalg).
        dev = np.linalg.solve(chol[j].T, eps[0].T).T
        return [modes[j] + dev], float(np.sum(np.log(np.diag(chol[j]))))

    k, (theta,), log_ratio = mixture_draws(weights, prior_mass, [((modes.shape[1],), 1.0 / prior_scales**2)],
                                           draw, num_samples, rng)
    return k, theta, log_ratio
