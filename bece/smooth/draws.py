"""Posterior draws of the smooth model: importance weights (PSIS) and ECE draws."""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
from scipy import special

from ..base.psis import psislw
from ..stats.binning import Binning
from .atoms import Atoms
from .basis import SmoothBasis, logit_confidence
from .fit import SmoothPosterior
from .grid_error import CellCurve, draw_bounds

__all__ = [
    "curve_grid",
    "curve_values",
    "draw_loglik",
    "ece_draws",
    "importance_draws",
]

CURVE_POINTS = 101


BOUND_DRAWS = 200


def draw_loglik(atoms: Atoms, basis: SmoothBasis, beta: np.ndarray,
                *, chunk_elems: int = 4_000_000) -> np.ndarray:
    """:math:`\\sum_j c_j f(x_j) - t_j \\log(1 + e^{f(x_j)})` for each draw, shape (S,)."""
    c = atoms.successes.astype(np.float64)
    t = atoms.trials.astype(np.float64)
    out = np.empty(beta.shape[0])
    step = max(1, chunk_elems // max(atoms.p.size, 1))
    for a in range(0, beta.shape[0], step):
        f = basis.logits(atoms.x, atoms.bin, beta[a:a + step])
        out[a:a + step] = f @ c - np.logaddexp(0.0, f) @ t
    return out


def importance_draws(
    atoms: Atoms, post: SmoothPosterior, num_samples: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray, SmoothPosterior]:
    """Laplace-mixture draws corrected by Pareto-smoothed importance resampling.

    ``num_samples`` proposals :math:`(k, \\theta)` from the mixture get log
    weights :math:`\\ell(\\theta, \\eta_k) + \\log[p(\\theta\\mid\\eta_k)\\,
    \\text{mass}_k] - \\log[\\pi_k \\mathcal N(\\theta; \\hat\\theta_k, H_k^{-1})]`,
    smoothed by PSIS (:func:`bece.base.psis.psislw`, ArviZ 0.2x's algorithm),
    and ``num_samples`` draws are resampled with those weights. The target is the exact posterior on the
    hyper-parameter grid, so what remains of the Laplace approximation's
    error (skewness of the conditional posteriors, which NUTS shows at the
    ends of the curve at n = 2000) is removed as far as the weights allow:
    the Pareto :math:`\\hat k` says how far (below 0.7: reliable). The mean of
    the raw weights estimates the marginal likelihood.

    Returns
    -------
    beta, lam, tau : the resampled draws (as :meth:`SmoothPosterior.sample`)
    post : SmoothPosterior
        With ``log_marginal_is``, ``pareto_k`` and ``is_ess`` filled in.
    """

    beta, lam, tau, log_ratio = post.sample(num_samples, rng)
    logw = draw_loglik(atoms, post.basis, beta) + log_ratio
    log_marg = float(special.logsumexp(logw) - np.log(num_samples))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # degenerate tails: k-hat reports them
        smoothed, k_hat = psislw(logw - logw.max())
    w = np.exp(smoothed - special.logsumexp(smoothed))
    ess = float(1.0 / np.sum(w**2))
    idx = rng.choice(num_samples, size=num_samples, p=w / w.sum())
    post = replace(post, log_marginal_is=log_marg, pareto_k=float(k_hat), is_ess=ess)
    return beta[idx], lam[idx], tau[idx], post


def ece_draws(
    atoms: Atoms, basis: SmoothBasis, beta: np.ndarray, rng: np.random.Generator,
    *, chunk_elems: int = 4_000_000,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """ECE and per-bin summaries for curve draws ``beta`` under Bayesian-bootstrap weights.

    Parameters
    ----------
    atoms : Atoms
    basis : SmoothBasis
    beta : ndarray of shape (S, P)
        Curve coefficients (:meth:`SmoothPosterior.sample`).
    rng : numpy.random.Generator
        Draws the bootstrap weights, one Dirichlet(trials) vector per draw.

    Returns
    -------
    ece : ndarray of shape (S,)
    accuracy, confidence, weight : ndarrays of shape (S, M)
    bound : ndarray of shape (min(S, 200),)
        The grid error bound (:mod:`bece.smooth.grid_error`) of each of the
        first 200 draws (zeros when the atoms are exact); it hardly varies
        between draws, and computing it for all would double the cost.
    """
    m = atoms.binning.n_bins
    s_total = beta.shape[0]
    J = atoms.p.size
    nonempty, starts = np.unique(atoms.bin, return_index=True)
    cells = None if atoms.exact else CellCurve(atoms, basis)
    acc = np.empty((s_total, m))
    conf = np.empty((s_total, m))
    wt = np.zeros((s_total, m))
    ece = np.empty(s_total)
    bound = np.zeros(s_total)
    step = max(1, chunk_elems // max(J, 1))
    edges = atoms.binning.edges
    center = 0.5 * (edges[:-1] + edges[1:])
    empty = np.setdiff1d(np.arange(m), nonempty)
    if empty.size:
        xc = logit_confidence(center[empty])
    for a in range(0, s_total, step):
        b = min(s_total, a + step)
        B = beta[a:b]
        f = basis.logits(atoms.x, atoms.bin, B)  # (s, J)
        s = special.expit(f)
        if atoms.exact:
            g = rng.standard_exponential((b - a, J))
        else:
            g = rng.standard_gamma(atoms.trials.astype(np.float64), size=(b - a, J))
        g /= g.sum(axis=1, keepdims=True)
        wsum = np.add.reduceat(g, starts, axis=1)
        acc_num = np.add.reduceat(g * s, starts, axis=1)
        conf_num = np.add.reduceat(g * atoms.p, starts, axis=1)
        ece[a:b] = np.abs(acc_num - conf_num).sum(axis=1)
        wt[a:b, nonempty] = wsum
        acc[a:b, nonempty] = acc_num / wsum
        conf[a:b, nonempty] = conf_num / wsum
        if empty.size:
            acc[a:b, empty] = special.expit(basis.logits(xc, empty, B))
            conf[a:b, empty] = center[empty]
        if cells is not None and a < BOUND_DRAWS:
            e = min(b, BOUND_DRAWS) - a
            bound[a:a + e] = draw_bounds(cells, basis, B[:e], f[:e], g[:e])
    return ece, acc, conf, wt, bound[:BOUND_DRAWS] if not atoms.exact else bound


def curve_grid(p: np.ndarray) -> np.ndarray:
    return np.linspace(float(p.min()), float(p.max()), CURVE_POINTS)


def curve_values(basis: SmoothBasis, binning: Binning, grid: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """:math:`P(z=1 \\mid p)` at confidences ``grid`` for each draw, shape (S, G)."""
    xg = logit_confidence(grid)
    return special.expit(basis.logits(xg, binning.index(grid), beta))
