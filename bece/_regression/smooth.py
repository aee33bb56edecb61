r"""The smooth model of the PIT distribution: Laplace over a hyper-parameter grid, PSIS.

Model (written out in NumPyro in :mod:`bece.models._regression`). On the G
cells of a :class:`~bece.regression.PITHistogram` the PIT distribution has
cell probabilities

.. math::

    \pi_k(\theta) \propto M_k(a, b)\, e^{h_k}, \qquad
    M_k = \Phi(a + e^b z_{k+1}) - \Phi(a + e^b z_k), \qquad
    h_k = \lambda\, \psi(c_k)^\top w,

with :math:`\theta = (a, b, w)`, :math:`z_k = \Phi^{-1}(k/G)`, a probit-normal
part (exact for a Gaussian forecast of a Gaussian target: ``shift`` a is its
mean error and :math:`e^b` its sd, in units of the target's sd) and a smooth
tilt of the log density (K = 24 cosine functions of u with a
smoothing-spline prior; :math:`\lambda` is its prior RMS over u). The
uniform distribution, calibration, is :math:`\theta = 0`.

Prior (defaults, each a keyword of
:func:`~bece.regression.bayesian_calibration_error`): :math:`a \sim
\mathcal N(0, 0.6^2)`, 90% prior probability on mean errors within one
target sd, so a shift of 0.3 sd sits at 0.5 prior sd; :math:`b \sim
\mathcal N(0, 0.67^2)`, 90% on sd ratios between 1/3 and 3, so the ratios
0.5 to 2 that users meet are within 1.04 prior sd; :math:`\lambda \sim
\mathrm{Exponential}(\text{mean } 0.25)`, :math:`w \sim \mathcal N(0, I)`.

Fit. For fixed :math:`\lambda` the log posterior of :math:`\theta` is
maximised by Newton's method (Fisher scoring where the Hessian is not
negative definite), giving the Laplace approximation
:math:`\mathcal N(\hat\theta_\lambda, H_\lambda^{-1})` and the evidence
:math:`p(\text{counts} \mid \lambda)`; :math:`\lambda` is integrated over 16
values log-spaced over :math:`[10^{-2}, 10]` times its prior mean, each
standing for the prior mass between its geometric neighbours, as in
:mod:`bece.smooth`. Draws of the mixture are corrected by Pareto-smoothed
importance resampling (:func:`bece._base.psis.psislw`), whose weights' mean also
estimates the marginal likelihood :math:`p(\text{counts} \mid H_1)`.

Calibration. The uniform distribution :math:`H_0` has the exact marginal
likelihood :math:`\prod_k G^{-c_k}` (the multinomial coefficient is common to
both models and cancels), so the Bayes factor is
:math:`B_{01} = p(\text{counts} \mid H_0) / p(\text{counts} \mid H_1)` and,
with prior odds O, :math:`P(H_0 \mid \text{counts}) = B_{01} O /
(1 + B_{01} O)`. :math:`H_1`'s marginal likelihood is the importance
estimate when the Pareto :math:`\hat k` is below 0.7, else the Laplace one.

Prior odds of calibration: O = 0.1 by default (prior probability 1/11).
Exact calibration is one point among the forecasters users meet, and even
odds give it so much weight that small miscalibrations at small n are
taken for calibration: a forecast whose mean is off by 0.3 sd, n = 100,
200 replications (``benchmarks/regression_study.py``): with O = 1 the data
favour calibration often enough that the 90% interval of the cal score
covered the truth in 0.73 (Gaussian forecasts) and 0.705 (sample
forecasts) of replications, with O = 0.25 in 0.825 and 0.795, with O = 0.1
in 0.87 and 0.83. For calibrated forecasters the interval still includes 0
in at least 0.99 of replications with O = 0.1 (n = 100 and 1000, all
three forecast forms). The Bayes factor does not depend on O; pass
``prior_odds=1`` for the even-odds probability.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy import special

from .._base.checks import check_scale
from .._base.laplace import (
    backtrack,
    converged,
    exponential_grid,
    grid_fits,
    laplace_mixture_draws,
    not_converged,
)
from .._base.psis import PARETO_K_MAX, psis_resample
from .cells import ObservedCells, cell_curve, cell_derivatives, cell_log_likelihood
from .histogram import PITHistogram

__all__ = [
    "curve_draws",
    "fit_pit_model",
    "log_cell_probs",
    "model_grid",
    "pit_model_draws",
    "PITGrid",
    "pit_grid",
    "SmoothPITPosterior",
    "tilt_basis",
]

#: Number K of cosine functions in the tilt of the log density
N_TILT = 24
#: Values of the tilt's scale lambda on its integration grid
N_LAMBDA = 16
#: Range of the grid of lambda, in units of its prior mean
#: Default prior odds of calibration, P(H0) / P(H1) (module docstring)
PRIOR_ODDS = 0.1
#: Default prior scales: shift sd, log-spread sd, mean of lambda
SHIFT_SCALE = 0.6
SPREAD_SCALE = 0.67
SMOOTHNESS_SCALE = 0.25
#: (draw, cell) values computed at once
CHUNK_ELEMENTS = 1 << 20


def tilt_basis(n_cells: int, n_tilt: int = N_TILT, edges: np.ndarray | None = None) -> np.ndarray:
    """:math:`\\psi_j(c_k) = \\sqrt2 \\cos(j\\pi c_k)\\, d_j` at the cell centres, shape (G, K).

    :math:`d_j = j^{-2} / (\\sum_i i^{-4})^{1/2}`: the prior RMS of
    :math:`\\psi^\\top w` over u is 1 for :math:`w \\sim \\mathcal N(0, I)`.
    The cells are the G equal ones, or those between ``edges`` (G + 1,).
    """
    centre = (np.arange(n_cells) + 0.5) / n_cells if edges is None else 0.5 * (edges[:-1] + edges[1:])
    j = np.arange(1, n_tilt + 1, dtype=np.float64)
    d = j**-2.0
    d /= np.sqrt(np.sum(d**2))
    return np.sqrt(2.0) * np.cos(np.pi * np.outer(centre, j)) * d


@dataclass(frozen=True)
class PITGrid:
    """The grid's probit edges and tilt basis (read-only arrays)."""

    n_cells: int
    z: np.ndarray  # (G + 1,) probit edges, -inf and inf at the ends
    basis: np.ndarray  # (G, K)


@functools.lru_cache(maxsize=8)
def pit_grid(n_cells: int) -> PITGrid:
    z = special.ndtri(np.arange(n_cells + 1) / n_cells)
    basis = tilt_basis(n_cells)
    z.setflags(write=False)
    basis.setflags(write=False)
    return PITGrid(n_cells=n_cells, z=z, basis=basis)


def model_grid(hist: PITHistogram, cells: ObservedCells | None) -> PITGrid:
    """The fine grid the model lives on: the histogram's G equal cells, or the
    observed cells' fine grid (:attr:`~bece._regression.cells.ObservedCells.fine_edges`,
    not equal for the ranks' model)."""
    if cells is None:
        return pit_grid(hist.n_cells)
    edges = cells.fine_edges
    g = edges.size - 1
    if np.array_equal(edges, np.arange(g + 1) / g):
        return pit_grid(g)
    z = special.ndtri(edges)
    basis = tilt_basis(g, edges=edges)
    z.setflags(write=False)
    basis.setflags(write=False)
    return PITGrid(n_cells=g, z=z, basis=basis)


def _cell_mass(x: np.ndarray) -> np.ndarray:
    """:math:`\\Phi(x_{k+1}) - \\Phi(x_k)` along the last axis (x non-decreasing).

    From :math:`t = \\Phi(-|x|)`, the smaller tail at each edge, so that no
    difference of two numbers near 1 is taken: a cell on one side of 0 has
    mass :math:`|t_{k+1} - t_k|`, the cell around 0 has :math:`1 - t_k - t_{k+1}`.
    """
    t = special.ndtr(-np.abs(x))
    lo, hi = x[..., :-1], x[..., 1:]
    m = np.abs(t[..., 1:] - t[..., :-1])
    around = (lo < 0) & (hi > 0)
    if around.any():
        m[around] = 1.0 - t[..., 1:][around] - t[..., :-1][around]
    return m


def _edges_x(shift: np.ndarray, log_spread: np.ndarray, z: np.ndarray) -> np.ndarray:
    s = np.exp(log_spread)[..., None]
    with np.errstate(invalid="ignore"):
        x = shift[..., None] + s * z
    return x


def _unnormalised(theta: np.ndarray, lam: np.ndarray, grid: PITGrid) -> tuple[np.ndarray, np.ndarray]:
    """Cell masses :math:`M_k` and tilts :math:`h_k` of draws, each (S, G)."""
    mass = _cell_mass(_edges_x(theta[:, 0], theta[:, 1], grid.z))
    return mass, lam[:, None] * (theta[:, 2:] @ grid.basis.T)


def log_cell_probs(theta: np.ndarray, lam: np.ndarray, grid: PITGrid) -> np.ndarray:
    """:math:`\\log \\pi_k` for draws ``theta`` (S, 2 + K) and ``lam`` (S,), shape (S, G)."""
    mass, tilt = _unnormalised(theta, lam, grid)
    with np.errstate(divide="ignore"):
        r = np.log(mass) + tilt
    top = r.max(axis=1, keepdims=True)
    r -= top + np.log(np.exp(r - top).sum(axis=1, keepdims=True))
    return r


#: Cell masses below this are treated as 0 in the Newton derivatives.
MASS_FLOOR = 1e-250


def _gauss_terms(a: float, b: float, z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """log M (G,), its gradient (G, 2) and Hessian (G, 2, 2) in (a, b)."""
    s = np.exp(b)
    x = a + s * z
    m = _cell_mass(x[None, :])[0]
    fin = np.isfinite(z)
    zz = np.where(fin, z, 0.0)
    xx = np.where(fin, x, 0.0)
    ph = np.where(fin, np.exp(-0.5 * xx**2) / np.sqrt(2 * np.pi), 0.0)
    # derivatives of Phi(a + e^b z) at each edge (0 at the infinite ones)
    da, db = ph, s * zz * ph
    daa, dab = -xx * ph, -s * xx * zz * ph
    dbb = s * zz * ph - s * s * xx * zz * zz * ph
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # a cell whose mass underflows (a forecaster far too wide or narrow for
        # the data, e.g. every PIT value equal) carries no probability: its
        # terms are 0, not 1/m = inf times 0
        inv = np.where(m > MASS_FLOOR, 1.0 / m, 0.0)
        log_m = np.log(m)
    ga, gb = np.diff(da) * inv, np.diff(db) * inv
    grad = np.stack([ga, gb], axis=1)
    hess = np.empty((m.size, 2, 2))
    hess[:, 0, 0] = np.diff(daa) * inv - ga * ga
    hess[:, 0, 1] = hess[:, 1, 0] = np.diff(dab) * inv - ga * gb
    hess[:, 1, 1] = np.diff(dbb) * inv - gb * gb
    return log_m, grad, hess


def _newton(counts: np.ndarray, grid: PITGrid, lam: float, prec: np.ndarray, theta: np.ndarray,
            max_iter: int = 100, cells: ObservedCells | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    """Mode, lower Cholesky factor of the negative Hessian, and the log posterior
    (up to its normaliser) at the mode, for fixed lambda; the likelihood is that of
    the fine-cell ``counts``, or of the observed ``cells``' counts when given."""
    c = counts.astype(np.float64)
    n = c.sum()
    nz = np.flatnonzero(counts)
    basis = lam * grid.basis

    def objective(th: np.ndarray) -> float:
        # a trial step far out (e^b overflowing) gives -inf or NaN: the line
        # search halves it, so numpy's warnings there are not the user's
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            log_m = np.log(_cell_mass(_edges_x(np.array(th[0]), np.array(th[1]), grid.z)[None, :])[0])
        r = log_m + basis @ th[2:]
        if cells is not None:
            with np.errstate(over="ignore", invalid="ignore"):
                ll = float(cell_log_likelihood(np.exp(r - special.logsumexp(r))[None, :], cells)[0])
            return ll - 0.5 * float(np.dot(prec * th, th)) if np.isfinite(ll) else -np.inf
        lp = r[nz] - special.logsumexp(r)
        return float(c[nz] @ lp - 0.5 * np.dot(prec * th, th))

    def derivatives(th: np.ndarray) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
        log_m, g2, h2 = _gauss_terms(float(th[0]), float(th[1]), grid.z)
        r = log_m + basis @ th[2:]
        log_p = r - special.logsumexp(r)
        p = np.exp(log_p)
        jac = np.concatenate([g2, basis], axis=1)
        if cells is not None:
            ll, g, f, o = cell_derivatives(p, jac, h2, cells)
            pr = np.diag(prec)
            return ll - 0.5 * float(np.dot(prec * th, th)), g - prec * th, f + pr, o + pr
        obj = float(c[nz] @ log_p[nz] - 0.5 * np.dot(prec * th, th))
        centred = jac - p @ jac
        grad = jac.T @ (c - n * p) - prec * th
        fisher = n * (centred.T * p) @ centred + np.diag(prec)
        observed = fisher.copy()
        observed[:2, :2] -= np.einsum("g,gij->ij", c - n * p, h2)
        return obj, grad, fisher, observed

    from scipy import linalg  # here: import bece loads scipy.special only

    obj, grad, fisher, observed = derivatives(theta)
    for _ in range(max_iter):
        try:
            chol = linalg.cholesky(observed, lower=True, check_finite=False)
        except linalg.LinAlgError:
            chol = linalg.cholesky(fisher, lower=True, check_finite=False)
        step = linalg.cho_solve((chol, True), grad, check_finite=False)
        dec = float(grad @ step)
        if converged(dec):
            break

        def along(lr: float, theta: np.ndarray = theta, step: np.ndarray = step) -> tuple[float, Any]:
            new = theta + lr * step
            return objective(new), new

        _, _, theta = backtrack(along, obj, dec)
        obj, grad, fisher, observed = derivatives(theta)
    else:
        not_converged("the PIT model's fit", dec, max_iter)
    try:
        chol = linalg.cholesky(observed, lower=True, check_finite=False)
    except linalg.LinAlgError:  # pragma: no cover - the observed Hessian is definite at a maximum
        chol = linalg.cholesky(fisher, lower=True, check_finite=False)
    return theta, chol, obj


@dataclass(frozen=True)
class SmoothPITPosterior:
    """The Laplace mixture posterior of the smooth PIT model and its evidence.

    Attributes
    ----------
    n_cells, n : int
        Cells G of the histogram and number of PIT values.
    lambdas, prior_mass : ndarray of shape (L,)
        The grid of the tilt's scale :math:`\\lambda` and the prior
        probability each value stands for.
    log_evidence, weights : ndarray of shape (L,)
        Laplace :math:`\\log p(\\text{counts} \\mid \\lambda_l, H_1)` and the
        posterior probability of each :math:`\\lambda_l`.
    modes : ndarray of shape (L, 2 + K)
        :math:`\\hat\\theta_l = (a, b, w)`.
    chol : ndarray of shape (L, 2 + K, 2 + K)
        Lower Cholesky factors of the negative Hessians.
    prior_scales : ndarray of shape (2 + K,)
        :math:`(s_a, s_b, 1, \\dots, 1)`.
    smoothness_scale : float
        Prior mean :math:`s_\\lambda`.
    log_marginal : float
        Laplace :math:`\\log p(\\text{counts} \\mid H_1)` (without the
        multinomial coefficient).
    log_marginal_calibrated : float
        :math:`\\log p(\\text{counts} \\mid H_0) = -n \\log G` (same convention).
    log_marginal_is, pareto_k, is_ess : float
        Importance-sampling estimate of :math:`\\log p(\\text{counts} \\mid
        H_1)`, the Pareto :math:`\\hat k` of its weights and their effective
        sample size; NaN until :func:`pit_model_draws` has run.
    cells : ObservedCells or None
        The observed cells the model was fitted to
        (:mod:`bece._regression.cells`), or None: the histogram's own cells.
    """

    n_cells: int
    n: int
    lambdas: np.ndarray
    prior_mass: np.ndarray
    log_evidence: np.ndarray
    weights: np.ndarray
    modes: np.ndarray
    chol: np.ndarray
    prior_scales: np.ndarray
    smoothness_scale: float
    log_marginal: float
    log_marginal_calibrated: float
    log_marginal_is: float = float("nan")
    pareto_k: float = float("nan")
    is_ess: float = float("nan")
    cells: ObservedCells | None = None

    @property
    def log_bayes_factor(self) -> float:
        """:math:`\\log B_{01}`, calibrated against the smooth model (positive favours
        calibration); from the importance estimate when :math:`\\hat k < 0.7`."""
        trusted = np.isfinite(self.log_marginal_is) and self.pareto_k < PARETO_K_MAX
        log_m1 = self.log_marginal_is if trusted else self.log_marginal
        return float(self.log_marginal_calibrated - log_m1)

    def prob_calibrated(self, prior_odds: float = PRIOR_ODDS) -> float:
        """:math:`P(H_0 \\mid \\text{counts}) = B_{01}O / (1 + B_{01}O)`."""
        return float(special.expit(self.log_bayes_factor + np.log(prior_odds)))

    def sample(self, num_samples: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Draws of the Laplace mixture (uncorrected).

        Returns
        -------
        theta : ndarray of shape (S, 2 + K)
        lam : ndarray of shape (S,)
        log_ratio : ndarray of shape (S,)
            :math:`\\log[p(\\theta)\\,\\text{mass}_l] - \\log[\\text{weight}_l\\,
            \\mathcal N(\\theta; \\hat\\theta_l, H_l^{-1})]`: adding the log
            likelihood gives the importance weight.
        """
        k, theta, log_ratio = laplace_mixture_draws(self.modes, self.chol, self.weights,
                                                    self.prior_mass, self.prior_scales,
                                                    num_samples, rng)
        return theta, self.lambdas[k], log_ratio


def fit_pit_model(
    hist: PITHistogram,
    *,
    shift_scale: float = SHIFT_SCALE,
    spread_scale: float = SPREAD_SCALE,
    smoothness_scale: float = SMOOTHNESS_SCALE,
    cells: ObservedCells | None = None,
) -> SmoothPITPosterior:
    """Laplace mixture posterior of the smooth PIT model (module docstring).

    Parameters
    ----------
    hist : PITHistogram
        With n >= 1.
    shift_scale, spread_scale, smoothness_scale : float
        :math:`s_a, s_b, s_\\lambda` (defaults 0.6, 0.67, 0.25; module docstring).
    cells : ObservedCells, optional
        Fit to the counts in these cells, within which the PIT is uniform
        (quantile and sample forecasts; :mod:`bece._regression.cells`),
        instead of the histogram's cells.
    """
    s_a = check_scale(shift_scale, "shift_scale")
    s_b = check_scale(spread_scale, "spread_scale")
    s_l = check_scale(smoothness_scale, "smoothness_scale")
    if hist.n == 0:
        raise ValueError("the PIT histogram is empty (n = 0): there is nothing to fit")
    grid = model_grid(hist, cells)
    k = grid.basis.shape[1]
    scales = np.concatenate([[s_a, s_b], np.ones(k)])
    prec = 1.0 / scales**2
    lambdas, mass = exponential_grid(s_l, N_LAMBDA)

    def fit_at(i: int, start: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        return _newton(hist.counts, grid, float(lambdas[i]), prec, start, cells=cells)

    modes, chol, log_ev, weights, log_marg = grid_fits(fit_at, mass, scales)
    if cells is None:
        log_h0 = -float(hist.n) * float(np.log(hist.n_cells))
    else:  # uniform: P_j = the cell's width
        log_h0 = float(cells.counts.astype(np.float64) @ np.log(cells.widths))
    return SmoothPITPosterior(
        n_cells=grid.n_cells, n=hist.n, lambdas=lambdas, prior_mass=mass, log_evidence=log_ev,
        weights=weights, modes=modes, chol=chol, prior_scales=scales, smoothness_scale=s_l,
        log_marginal=log_marg, log_marginal_calibrated=log_h0, cells=cells,
    )


def _level_cells(levels: np.ndarray, n_cells: int) -> np.ndarray:
    """Cell k with k/G <= p < (k+1)/G of each level (at p = k/G the share of
    cell k below p is exactly 0)."""
    cell = np.searchsorted(np.arange(n_cells + 1) / n_cells, levels, side="right") - 1
    return np.clip(cell, 0, n_cells - 1)


def _evaluate(theta: np.ndarray, lam: np.ndarray, grid: PITGrid, counts: np.ndarray | None,
              levels: np.ndarray | None, cells: ObservedCells | None = None,
              ) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Log likelihood of ``counts`` (S,) and :math:`C(p_j)` (S, J) for each draw, in one
    pass over chunks of draws (either may be None: not computed). With ``cells``, the
    likelihood is that of the observed cells' counts and the curve is linear within them."""
    s_total = theta.shape[0]
    ll = None if counts is None else np.empty(s_total)
    curve = None if levels is None else np.empty((s_total, levels.size))
    if counts is not None:
        nz = np.flatnonzero(counts)
        c = counts[nz].astype(np.float64)
    if levels is not None:
        cell = _level_cells(levels, grid.n_cells)
        zp = special.ndtri(levels)
    step = max(1, CHUNK_ELEMENTS // grid.n_cells)
    for a in range(0, s_total, step):
        th, lm = theta[a:a + step], lam[a:a + step]
        # pi = M e^h / sum(M e^h): the tilt is bounded (|h| <= lam * sqrt(2) * sum_j d_j |w_j|), so
        # e^h neither overflows nor underflows, and logs are taken only where they are needed
        mass, tilt = _unnormalised(th, lm, grid)
        p = mass * np.exp(tilt)
        total = p.sum(axis=1, keepdims=True)
        if cells is not None:
            p /= total
            if ll is not None:
                ll[a:a + step] = cell_log_likelihood(p, cells)
            if curve is not None:
                assert levels is not None
                curve[a:a + step] = cell_curve(p, cells, levels)
            continue
        if ll is not None:
            with np.errstate(divide="ignore"):
                ll[a:a + step] = (np.log(mass[:, nz]) + tilt[:, nz]) @ c - np.log(total[:, 0]) * c.sum()
        if curve is not None:
            p /= total
            cdf = np.cumsum(p, axis=1)
            below = np.where(cell > 0, cdf[:, np.maximum(cell - 1, 0)], 0.0)
            lo = _edges_x(th[:, 0], th[:, 1], grid.z[cell])
            xp = _edges_x(th[:, 0], th[:, 1], zp)
            hi = _edges_x(th[:, 0], th[:, 1], grid.z[cell + 1])
            part = _cell_mass(np.stack([lo, xp], axis=-1))[..., 0]
            whole = _cell_mass(np.stack([lo, hi], axis=-1))[..., 0]
            with np.errstate(divide="ignore", invalid="ignore"):
                frac = np.where(whole > 0, part / whole, 0.0)
            curve[a:a + step] = np.minimum(below + p[:, cell] * frac, 1.0)
    return ll, curve


def pit_model_draws(
    hist: PITHistogram, post: SmoothPITPosterior, num_samples: int, rng: np.random.Generator,
    levels: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, SmoothPITPosterior]:
    """Laplace-mixture draws corrected by Pareto-smoothed importance resampling.

    ``num_samples`` proposals from the mixture get log weights
    :math:`\\ell(\\theta) + \\log[p(\\theta)\\,\\text{mass}_l] - \\log[\\text{weight}_l\\,
    \\mathcal N(\\theta; \\hat\\theta_l, H_l^{-1})]`, smoothed by PSIS, and
    ``num_samples`` draws are resampled with them; the mean of the raw
    weights estimates :math:`p(\\text{counts} \\mid H_1)`.

    Returns
    -------
    theta : ndarray of shape (S, 2 + K)
    lam : ndarray of shape (S,)
    curve : ndarray of shape (S, J) or None
        :math:`C(p_j)` of each draw at ``levels`` (:func:`curve_draws`).
    post : SmoothPITPosterior
        With ``log_marginal_is``, ``pareto_k`` and ``is_ess`` filled in.
    """
    grid = model_grid(hist, post.cells)
    theta, lam, log_ratio = post.sample(num_samples, rng)
    ll, curve = _evaluate(theta, lam, grid, hist.counts, levels, post.cells)
    assert ll is not None
    idx, info = psis_resample(ll + log_ratio, rng)
    assert idx is not None
    post = replace(post, log_marginal_is=info["log_marginal_is"], pareto_k=info["pareto_k"],
                   is_ess=info["is_ess"])
    return theta[idx], lam[idx], None if curve is None else curve[idx], post


def curve_draws(theta: np.ndarray, lam: np.ndarray, levels: np.ndarray, n_cells: int) -> np.ndarray:
    """:math:`C(p_j) = P(u \\le p_j)` for each draw, shape (S, J).

    At a level inside cell k the cell's probability is shared out as its
    probit-normal factor is: :math:`C(p) = C(k/G) + \\pi_k [\\Phi(x_p) -
    \\Phi(x_k)] / M_k` with :math:`x = a + e^b \\Phi^{-1}(\\cdot)` (the tilt is
    constant within a cell); on the grid this is the sum of the cells below.
    """
    _, curve = _evaluate(theta, lam, pit_grid(n_cells), None, levels)
    assert curve is not None
    return curve
