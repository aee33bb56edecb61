r"""Marginal likelihoods from NUTS draws by bridge sampling.

The smooth default averages the smooth model :math:`H_1` with exact
calibration :math:`H_0` by the Bayes factor :math:`B_{01} = p(y \mid H_0) /
p(y \mid H_1)`. The fast path gets :math:`p(y \mid H_1)` from its Laplace
mixture corrected by importance sampling; the cross-check gets it
independently from the NUTS draws of the same NumPyro model by bridge
sampling (Meng & Wong 1996, with the iterative optimal bridge function;
Gronau et al. 2017, *A tutorial on bridge sampling*), and
:math:`p(y \mid H_0)` from the model's own likelihood at the identity curve.

In NumPyro's unconstrained space (where NUTS moves; the log density
includes the Jacobian), with :math:`q(\theta)` the unnormalised posterior,
:math:`N_1` posterior draws :math:`\theta_i` (the second half of each
chain; the first half fits the proposal) and :math:`N_2` draws
:math:`\tilde\theta_j` of a Normal proposal :math:`g` with the posterior's
mean and covariance, the estimate :math:`\hat p` solves

.. math::

    \hat p = \frac{N_2^{-1} \sum_j \ell_{2j} / (s_1 \ell_{2j} + s_2 \hat p)}
                  {N_1^{-1} \sum_i 1 / (s_1 \ell_{1i} + s_2 \hat p)}, \qquad
    \ell = q / g, \quad s_k = N_k / (N_1 + N_2),

by fixed-point iteration. Its relative mean-squared error (Frühwirth-Schnatter
2004) is

.. math::

    \mathrm{RE}^2 = \frac{V_g(f_1)}{N_2 E_g(f_1)^2} + \frac{V_p(f_2)}{N_{1,\mathrm{eff}} E_p(f_2)^2},
    \qquad f_1 = \frac{\ell}{s_1 \ell + s_2 \hat p}, \quad f_2 = \frac{1}{s_1 \ell + s_2 \hat p},

with :math:`N_{1,\mathrm{eff}}` the ESS of :math:`f_2` over the chains; it
is the standard error of :math:`\log \hat p`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._base.jaxcompat import enable_x64

__all__ = [
    "bridge_log_marginal",
    "log_likelihood_at",
    "model_log_marginal",
]


def bridge_log_marginal(log_q_post: np.ndarray, log_g_post: np.ndarray, log_q_prop: np.ndarray,
                        log_g_prop: np.ndarray, ess_post: Callable[[np.ndarray], float],
                        tol: float = 1e-10, max_iter: int = 1000) -> tuple[float, float]:
    """The bridge estimate of :math:`\\log \\int q` and its standard error.

    ``log_q_post``, ``log_g_post``: the unnormalised posterior and the
    proposal at the posterior draws, shape (chain, draw); ``log_q_prop``,
    ``log_g_prop``: both at the proposal's independent draws, shape (N2,).
    ``ess_post`` maps a (chain, draw) array to its effective sample size.
    """
    from scipy import special

    l1 = np.asarray(log_q_post - log_g_post, dtype=np.float64)
    l2 = np.asarray(log_q_prop - log_g_prop, dtype=np.float64)
    n1, n2 = l1.size, l2.size
    log_s1, log_s2 = np.log(n1 / (n1 + n2)), np.log(n2 / (n1 + n2))
    shift = float(np.median(l1))
    l1, l2 = l1 - shift, l2 - shift
    log_r = 0.0
    for _ in range(max_iter):
        den2 = np.logaddexp(log_s1 + l2, log_s2 + log_r)
        den1 = np.logaddexp(log_s1 + l1, log_s2 + log_r)
        new = (special.logsumexp(l2 - den2) - np.log(n2)) - (special.logsumexp(-den1) - np.log(n1))
        done = abs(new - log_r) < tol
        log_r = float(new)
        if done:
            break
    f1 = np.exp(l2 - np.logaddexp(log_s1 + l2, log_s2 + log_r))
    f2 = np.exp(-np.logaddexp(log_s1 + l1, log_s2 + log_r))
    ess = ess_post(f2)
    if not np.isfinite(ess) or ess <= 0:
        ess = float(n1)
    re2 = np.var(f1) / (n2 * np.mean(f1) ** 2) + np.var(f2) / (ess * np.mean(f2) ** 2)
    return log_r + shift, float(np.sqrt(re2))


def _unconstrained(model: Callable[..., Any], args: tuple, kwargs: dict[str, Any]) -> tuple:
    """(potential_fn, names, {name: inverse transform}) of ``model``: NumPyro's
    potential energy (minus the log joint density, Jacobian included) in the
    unconstrained space, and the maps of each latent site into it."""
    import jax
    from numpyro.distributions.transforms import biject_to
    from numpyro.infer.util import initialize_model

    info = initialize_model(jax.random.PRNGKey(0), model, model_args=args, model_kwargs=kwargs)
    names = sorted(info.param_info.z)
    inverse = {k: biject_to(info.model_trace[k]["fn"].support).inv for k in names}
    return info.potential_fn, names, inverse


def model_log_marginal(model: Callable[..., Any], samples: dict[str, np.ndarray], *args: Any,
                       seed: int = 0, **kwargs: Any) -> tuple[float, float]:
    """:math:`\\log p(y)` of NumPyro ``model(*args, **kwargs)`` by bridge
    sampling on its posterior ``samples`` (constrained, (chain, draw, ...),
    as :meth:`~bece._validation.nuts.NutsRun.get_samples` with
    ``group_by_chain=True``); returns (estimate, standard error).

    Runs in float64 within the call (``jax.enable_x64``); the global
    configuration is untouched.
    """
    import jax
    import jax.numpy as jnp
    from scipy import stats as sps

    from .._base.arviz import ess

    with enable_x64():
        potential, names, inverse = _unconstrained(model, args, kwargs)
        first = samples[names[0]]
        chains, draws = first.shape[:2]
        parts = [np.asarray(inverse[k](jnp.asarray(samples[k], dtype=jnp.float64)), dtype=np.float64)
                 .reshape(chains, draws, -1) for k in names]
        theta = np.concatenate(parts, axis=-1)  # (chain, draw, D)
        sizes = [p.shape[-1] for p in parts]
        half = draws // 2
        dim = theta.shape[-1]
        if chains * half <= dim + 1:  # the proposal's covariance would be singular
            need = chains * 2 * -(-(dim + 2) // chains)
            raise ValueError(
                f"too few NUTS draws for bridge sampling of the evidence: half of them fit a "
                f"Normal proposal in {dim} dimensions, which needs at least {need} draws in all "
                f"(num_chains x num_samples), got {chains} x {draws}")
        fit, post = theta[:, :half].reshape(-1, dim), theta[:, half:]
        mean = fit.mean(axis=0)
        cov = np.atleast_2d(np.cov(fit, rowvar=False))
        proposal = sps.multivariate_normal(mean, cov, allow_singular=False)
        prop = proposal.rvs(size=post.shape[0] * post.shape[1],
                            random_state=np.random.default_rng([seed, 3]))
        prop = prop.reshape(-1, theta.shape[-1])
        shapes = {k: samples[k].shape[2:] for k in names}

        def log_q(flat):
            split = jnp.split(flat, np.cumsum(sizes)[:-1])
            params = {k: v.reshape(shapes[k]) for k, v in zip(names, split)}
            return -potential(params)

        log_q_all = jax.jit(jax.vmap(log_q))
        lq_post = np.asarray(log_q_all(jnp.asarray(post.reshape(-1, theta.shape[-1]))))
        lq_prop = np.asarray(log_q_all(jnp.asarray(prop)))
    lg_post = proposal.logpdf(post.reshape(-1, theta.shape[-1]))
    lg_prop = proposal.logpdf(prop)
    return bridge_log_marginal(lq_post.reshape(chains, -1), lg_post.reshape(chains, -1),
                               np.nan_to_num(lq_prop, nan=-np.inf), lg_prop,
                               lambda f: ess(f, method="mean"))


def log_likelihood_at(model: Callable[..., Any], params: dict[str, Any], *args: Any,
                      **kwargs: Any) -> float:
    """Sum of the log-likelihood of every observed site of ``model`` at ``params``
    (float64 within the call)."""
    from numpyro.infer.util import log_likelihood

    with enable_x64():
        ll = log_likelihood(model, params, *args, batch_ndims=0, **kwargs)
        return float(sum(float(np.sum(np.asarray(v, dtype=np.float64))) for v in ll.values()))
