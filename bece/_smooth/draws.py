"""Posterior draws of the smooth model: importance weights (PSIS) and ECE draws.

One pass over the Laplace proposals computes, block by block (small enough
to stay in cache), the curve's logits at the atoms, the log likelihood of
each proposal and, for the ECE bins crowded enough for
:mod:`bece._smooth.bootstrap`, the weighted sums of the curve that their
bootstrap draws need, so that the resampled draws reuse them instead of
evaluating the curve again.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from scipy import special

from .._base.psis import psis_resample
from .._stats.binning import Binning
from .atoms import Atoms
from .basis import SmoothBasis, logit_confidence
from .bootstrap import NORMAL_BIN_MIN, BinMoments, normal_bin_draws
from .fit import SmoothPosterior
from .grid_error import CellCurve, draw_bounds

__all__ = [
    "curve_grid",
    "curve_values",
    "draw_loglik",
    "ece_draws",
    "importance_draws",
    "importance_draws_with_sums",
    "loglik_and_sums",
]

CURVE_POINTS = 101


BOUND_DRAWS = 200


#: Draws x atoms per block of the passes over the draws: a block's few
#: temporaries (2 MB each) stay in cache.
BLOCK_ELEMS = 262_144


def _rows(n_atoms: int, chunk_elems: int) -> int:
    return max(1, chunk_elems // max(n_atoms, 1))


class _Logits:
    """:meth:`SmoothBasis.logits` at fixed atoms, with the design computed once
    (same floating-point operations, so the same values)."""

    def __init__(self, x: np.ndarray, bins: np.ndarray, basis: SmoothBasis) -> None:
        self.x = x
        self.k = basis.n_smooth
        self.design_t = np.ascontiguousarray(basis.design(x).T)
        self.n_bins = basis.n_bins
        self.bins, self.starts = np.unique(bins, return_index=True)
        self.ends = np.append(self.starts[1:], x.size)

    def __call__(self, beta: np.ndarray) -> np.ndarray:
        f = beta[:, :self.k] @ self.design_t
        f += self.x
        if self.n_bins:
            for m, a, b in zip(self.bins, self.starts, self.ends):
                f[:, a:b] += beta[:, self.k + m, None]
        return f


def loglik_and_sums(
    atoms: Atoms, basis: SmoothBasis, beta: np.ndarray, *, sums: bool = True,
    chunk_elems: int = BLOCK_ELEMS,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Log likelihood of each draw and the per-bin sums of its curve.

    Parameters
    ----------
    atoms : Atoms
    basis : SmoothBasis
    beta : ndarray of shape (S, P)
    sums : bool, default True
        Also return the sums (else None).

    Returns
    -------
    loglik : ndarray of shape (S,)
        :math:`\\sum_j c_j f(x_j) - t_j \\log(1 + e^{f(x_j)})`.
    sums : ndarray of shape (S, 3, M) or None
        Per ECE bin :math:`\\sum t_j s_j`, :math:`\\sum t_j s_j p_j` and
        :math:`\\sum t_j s_j^2` with :math:`s_j = \\sigma(f(x_j))` (0 in empty
        bins): what :func:`bece._smooth.bootstrap.normal_bin_draws` needs.

    Notes
    -----
    :math:`\\log(1 + e^f) = \\max(f, 0) + \\log(1 + e^{-|f|})` and
    :math:`\\sigma(f) = (1 \\text{ or } e^{-|f|}) / (1 + e^{-|f|})` share one
    exponential. The logits, :math:`\\sum c f`, :math:`\\sum t \\max(f, 0)` and
    every sum are float64; :math:`e^{-|f|}` and :math:`\\log(1 + e^{-|f|}) \\in
    (0, \\log 2]` are float32 (NumPy's vectorised float32 ``exp`` and ``log``
    are about 4x faster than float64 here, and were most of the time of the
    smooth posterior at n = 10^6). Each atom's term then errs by at most
    about :math:`t_j 2^{-24}(|f_j|/2 + 1)` (rounding :math:`|f|` to float32,
    and of exp and log), and these errors are independent in sign: against
    float64, the log likelihoods of 10^4 proposals at n = 10^6 (2,338 atoms)
    differed by a constant 5e-4 plus at most 3.2e-3 (sd 7.8e-4) -- a
    constant cancels in the importance weights, the rest changes them by a
    factor within :math:`e^{\\pm 0.0032}`, against a spread of the log weights
    of 0.035 there and a Monte Carlo error of about 1% -- and by 3e-5 at
    n = 10^4. The curve :math:`s` enters the sums with float32's relative
    error 6e-8.
    """
    c = atoms.successes.astype(np.float64)
    t = atoms.trials.astype(np.float64)
    logits = _Logits(atoms.x, atoms.bin, basis)
    s_total = beta.shape[0]
    out = np.empty(s_total)
    m = atoms.binning.n_bins
    moments = np.zeros((s_total, 3, m)) if sums else None
    tp = t * atoms.p
    step = _rows(atoms.p.size, chunk_elems)
    for a in range(0, s_total, step):
        b = min(s_total, a + step)
        f = logits(beta[a:b])
        e = np.abs(f, dtype=np.float32)
        np.negative(e, out=e)
        np.exp(e, out=e)  # exp(-|f|), in (0, 1], float32
        one_e = e + np.float32(1.0)
        out[a:b] = f @ c - np.maximum(f, 0.0) @ t - np.log(one_e).astype(np.float64) @ t
        if moments is not None:
            s = np.reciprocal(one_e, out=one_e)
            np.multiply(s, e, out=s, where=f < 0)  # sigma(f), float32
            ts = s * t  # float64 from here on
            moments[a:b, 0, logits.bins] = np.add.reduceat(ts, logits.starts, axis=1)
            ts *= s
            moments[a:b, 2, logits.bins] = np.add.reduceat(ts, logits.starts, axis=1)
            np.multiply(s, tp, out=ts)
            moments[a:b, 1, logits.bins] = np.add.reduceat(ts, logits.starts, axis=1)
    return out, moments


def draw_loglik(atoms: Atoms, basis: SmoothBasis, beta: np.ndarray,
                *, chunk_elems: int = BLOCK_ELEMS) -> np.ndarray:
    """:math:`\\sum_j c_j f(x_j) - t_j \\log(1 + e^{f(x_j)})` for each draw, shape (S,)."""
    return loglik_and_sums(atoms, basis, beta, sums=False, chunk_elems=chunk_elems)[0]


def importance_draws_with_sums(
    atoms: Atoms, post: SmoothPosterior, num_samples: int, rng: np.random.Generator,
    *, sums: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, SmoothPosterior, np.ndarray | None]:
    """:func:`importance_draws`, and the per-bin sums of :func:`loglik_and_sums`
    of the resampled draws (computed in the same pass as the weights; None
    when ``sums`` is False)."""
    beta, lam, tau, log_ratio = post.sample(num_samples, rng)
    loglik, moments = loglik_and_sums(atoms, post.basis, beta, sums=sums)
    idx, info = psis_resample(loglik + log_ratio, rng)
    assert idx is not None
    post = replace(post, log_marginal_is=info["log_marginal_is"], pareto_k=info["pareto_k"],
                   is_ess=info["is_ess"])
    return beta[idx], lam[idx], tau[idx], post, None if moments is None else moments[idx]


def importance_draws(
    atoms: Atoms, post: SmoothPosterior, num_samples: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray, SmoothPosterior]:
    """Laplace-mixture draws corrected by Pareto-smoothed importance resampling.

    ``num_samples`` proposals :math:`(k, \\theta)` from the mixture get log
    weights :math:`\\ell(\\theta, \\eta_k) + \\log[p(\\theta\\mid\\eta_k)\\,
    \\text{mass}_k] - \\log[\\pi_k \\mathcal N(\\theta; \\hat\\theta_k, H_k^{-1})]`,
    smoothed by PSIS (:func:`bece._base.psis.psislw`, ArviZ 0.2x's algorithm),
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
    beta, lam, tau, post, _ = importance_draws_with_sums(atoms, post, num_samples, rng, sums=False)
    return beta, lam, tau, post


def ece_draws(
    atoms: Atoms, basis: SmoothBasis, beta: np.ndarray, rng: np.random.Generator,
    *, sums: np.ndarray | None = None, normal_bin_min: int = NORMAL_BIN_MIN,
    chunk_elems: int = BLOCK_ELEMS,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """ECE and per-bin summaries for curve draws ``beta`` under Bayesian-bootstrap weights.

    Each draw gets its own bootstrap weights, :math:`\\mathrm{Dirichlet}(t)`
    over the atoms: one Gamma variate per atom in bins with fewer than
    :data:`~bece._smooth.bootstrap.NORMAL_BIN_MIN` predictions; in the others
    the bin total is drawn exactly and the bin's two bootstrap means from
    their normal approximation with the exact mean and covariance
    (:mod:`bece._smooth.bootstrap`, which states the error).

    Parameters
    ----------
    atoms : Atoms
    basis : SmoothBasis
    beta : ndarray of shape (S, P)
        Curve coefficients (:meth:`SmoothPosterior.sample`).
    rng : numpy.random.Generator
        Draws the bootstrap weights: the Gamma variates of the sparse bins'
        atoms, block by block, then those of :func:`normal_bin_draws`, then
        the weights for the grid error bound.
    sums : ndarray of shape (S, 3, M), optional
        :func:`loglik_and_sums` of ``beta`` (computed here when needed and
        not given).
    normal_bin_min : int, default :data:`~bece._smooth.bootstrap.NORMAL_BIN_MIN`
        Predictions from which a bin's bootstrap is drawn from the normal
        approximation (``atoms.n + 1``: one Gamma variate per atom everywhere).

    Returns
    -------
    ece : ndarray of shape (S,)
    accuracy, confidence, weight : ndarrays of shape (S, M)
    bound : ndarray of shape (min(S, 200),)
        The grid error bound (:mod:`bece._smooth.grid_error`) of each of the
        first 200 draws (zeros when the atoms are exact); it hardly varies
        between draws, and computing it for all would double the cost. In
        crowded bins the bound's weights are drawn afresh, atom by atom,
        with the draw's bin totals.
    """
    m = atoms.binning.n_bins
    s_total = beta.shape[0]
    bm = BinMoments.from_atoms(atoms, min_count=normal_bin_min)
    normal = bm.normal
    sparse = ~normal[atoms.bin]
    n_bound = min(s_total, BOUND_DRAWS) if not atoms.exact else 0
    total = np.zeros((s_total, m))
    acc_num = np.zeros((s_total, m))
    conf_num = np.zeros((s_total, m))
    g_bound = np.zeros((n_bound, atoms.p.size))
    if sparse.any():
        xs, bs, ps = atoms.x[sparse], atoms.bin[sparse], atoms.p[sparse]
        ts = atoms.trials[sparse].astype(np.float64)
        logits = _Logits(xs, bs, basis)
        cols, starts = logits.bins, logits.starts
        sel = np.flatnonzero(sparse)
        for a in range(0, s_total, _rows(xs.size, chunk_elems)):
            b = min(s_total, a + _rows(xs.size, chunk_elems))
            s = special.expit(logits(beta[a:b]))
            if atoms.exact:
                g = rng.standard_exponential((b - a, xs.size))
            else:
                g = rng.standard_gamma(ts, size=(b - a, xs.size))
            total[a:b, cols] = np.add.reduceat(g, starts, axis=1)
            acc_num[a:b, cols] = np.add.reduceat(g * s, starts, axis=1)
            conf_num[a:b, cols] = np.add.reduceat(g * ps, starts, axis=1)
            if a < n_bound:
                e = min(b, n_bound)
                g_bound[a:e, sel] = g[:e - a]
    if bm.any_normal:
        if sums is None:
            sums = loglik_and_sums(atoms, basis, beta, chunk_elems=chunk_elems)[1]
        assert sums is not None
        nb = np.flatnonzero(normal)
        w_n, a_n, c_n = normal_bin_draws(bm, sums, rng)
        total[:, nb] = w_n
        acc_num[:, nb] = w_n * a_n
        conf_num[:, nb] = w_n * c_n
        if n_bound:
            crowded = ~sparse
            t_c = atoms.trials[crowded].astype(np.float64)
            g = rng.standard_gamma(t_c, size=(n_bound, t_c.size))
            bins = atoms.bin[crowded]
            _, first = np.unique(bins, return_index=True)
            per_bin = np.zeros((n_bound, m))
            per_bin[:, nb] = np.add.reduceat(g, first, axis=1)
            g_bound[:, crowded] = g * (total[:n_bound, bins] / per_bin[:, bins])
    grand = total.sum(axis=1, keepdims=True)
    ece = np.abs(acc_num - conf_num).sum(axis=1) / grand[:, 0]
    nonempty = np.flatnonzero(bm.count > 0)
    acc = np.empty((s_total, m))
    conf = np.empty((s_total, m))
    acc[:, nonempty] = acc_num[:, nonempty] / total[:, nonempty]
    conf[:, nonempty] = conf_num[:, nonempty] / total[:, nonempty]
    empty = np.flatnonzero(bm.count == 0)
    if empty.size:
        edges = atoms.binning.edges
        center = 0.5 * (edges[:-1] + edges[1:])
        acc[:, empty] = special.expit(basis.logits(logit_confidence(center[empty]), empty, beta))
        conf[:, empty] = center[empty]
    bound = np.zeros(n_bound if not atoms.exact else s_total)
    if n_bound:
        cells = CellCurve(atoms, basis)
        B = beta[:n_bound]
        f = _Logits(atoms.x, atoms.bin, basis)(B)
        bound[:] = draw_bounds(cells, basis, B, f, g_bound / grand[:n_bound])
    return ece, acc, conf, total / grand, bound


def curve_grid(p: np.ndarray) -> np.ndarray:
    return np.linspace(float(p.min()), float(p.max()), CURVE_POINTS)


def curve_values(basis: SmoothBasis, binning: Binning, grid: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """:math:`P(z=1 \\mid p)` at confidences ``grid`` for each draw, shape (S, G)."""
    xg = logit_confidence(grid)
    return special.expit(basis.logits(xg, binning.index(grid), beta))
