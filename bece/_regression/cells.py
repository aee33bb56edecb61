r"""PIT values known to be uniform within cells: quantile and sample forecasts.

The randomised PIT (:func:`~bece.regression.pit` with ``randomize=True``)
of a quantile forecast at levels :math:`\tau_1 < \dots < \tau_K` is uniform
between consecutive levels, whatever the forecaster: within
:math:`(\tau_k, \tau_{k+1}]` its position is the uniform variate the
randomisation drew, not information about the forecaster. The same holds for
a sample forecast of S draws on the cells :math:`(r/(S+1), (r+1)/(S+1)]`.
Its density is a step function on those cells, and its calibration curve
:math:`C(p) = P(u \le p)` is linear between the cell edges.

A smooth model of the PIT density fitted to where the values fall *within*
those cells fits the randomisation's noise and the steps, which its smooth
tilt cannot follow: for a quantile forecast with predictive sd x 0.5 at
99 levels, n = 10^5, the smooth model fitted to the 1000-cell histogram gave
90% intervals of the cal score that covered the truth in 0.765 of 200
replications (``benchmarks/regression_study.py``, before this module).

The model for such data (``forecast_levels=`` of
:func:`~bece.regression.bayesian_calibration_error`): the smooth model's
cell probabilities :math:`\pi_k(\theta)` on the fine grid of G cells
describe the *latent* PIT distribution; what is observed is the count
:math:`N_j` of PIT values in each *observed cell* :math:`(e_j, e_{j+1}]`
(edges 0, the forecast's levels, 1), with probability

.. math::

    P_j(\theta) = \sum_k A_{jk}\, \pi_k(\theta), \qquad
    A_{jk} = |(e_j, e_{j+1}] \cap (k/G, (k+1)/G]| \,\big/\, (1/G),

the share of fine cell k inside observed cell j, the fine cell taken as
uniform. The likelihood is multinomial in the :math:`N_j`; within an observed
cell the PIT is uniform under every model (calibration included), so that
factor cancels from the Bayes factor. The curve of the randomised PIT at a
level p in observed cell j is :math:`C(p) = \sum_{i<j} P_i + P_j (p -
e_j)/(e_{j+1} - e_j)`; at the forecast's own levels it is the curve of the
forecast itself.

Sample forecasts, the ranks' model (``forecast_draws=S``). The rank R of y
among S independent draws of a forecast F is Binomial(S, u) given the
continuous PIT :math:`u = F(y)`, so :math:`A_{rk}` is the binomial
probability averaged over fine cell k, and the smooth model describes u
itself (for a Gaussian forecast of a Gaussian target its probit-normal part
is then exact). An over-confident forecaster's u piles up near 0 and 1,
where the binomial kernel changes fast: :math:`(1-u)^{100}` falls from 1 to
0.905 across the first of 1000 equal cells. Taking u uniform within such a
cell put the model's best rank probabilities 4.7% off the truth at rank 1
(predictive sd x 0.5, S = 100: 2.8 binomial standard errors at n = 10^5,
enough to bias the fit). So the fine grid of the ranks' model
(:func:`rank_grid_edges`) adds cells equally spaced in probit space,
:math:`\Phi(z)` for z from -8 in steps of 0.05, below 0.01 and (mirrored)
above 0.99, to the 1000 equal cells between: the same rank probabilities
are then within 0.04% of the truth (0.03 standard errors at n = 10^5),
and within 0.02 standard errors for sd x 0.7 (0.49 on equal cells).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from .._base.checks import positive_int
from .forecast import check_levels
from .histogram import DEFAULT_CELLS, PITHistogram, grid_edges

__all__ = [
    "cell_curve",
    "cell_derivatives",
    "cell_log_likelihood",
    "forecast_cells",
    "ObservedCells",
    "observed_cells",
    "rank_grid_edges",
]

#: The ranks' fine grid: probit-spaced cells below this level and above 1 minus it
RANK_TAIL = 0.01
#: Their spacing in probit units and the probit of their outermost edge
RANK_TAIL_STEP = 0.05
RANK_TAIL_Z = -8.0


@dataclass(frozen=True)
class ObservedCells:
    """The observed cells of PIT values uniform within cells (module docstring).

    Attributes
    ----------
    edges : ndarray of shape (m + 1,)
        0, the forecast's levels, 1.
    counts : ndarray of shape (m,), int64
        PIT values in each cell :math:`(e_j, e_{j+1}]` (the first also holds 0).
    share : ndarray of shape (m, G)
        :math:`A_{jk}`, the share of fine cell k of the model's grid inside
        observed cell j (each column sums to 1).
    fine_edges : ndarray of shape (G + 1,)
        The edges of the model's fine grid: k/G, or for the ranks' model
        :func:`rank_grid_edges`.
    """

    edges: np.ndarray
    counts: np.ndarray
    share: np.ndarray
    fine_edges: np.ndarray

    @property
    def n_cells(self) -> int:
        """Cells G of the model's fine grid."""
        return int(self.share.shape[1])

    @property
    def widths(self) -> np.ndarray:
        return np.diff(self.edges)


def rank_grid_edges(n_cells: int = DEFAULT_CELLS) -> np.ndarray:
    """The fine grid of the ranks' model (module docstring): the edges k/G in
    [0.01, 0.99], and :math:`\\Phi(z)` and :math:`1 - \\Phi(z)` for z = -8, -7.95, ...
    below :math:`\\Phi^{-1}(0.01)` (the last one at least half a step from it).

    Examples
    --------
    >>> from bece._regression.cells import rank_grid_edges
    >>> e = rank_grid_edges(1000)
    >>> e.size - 1, float(e[491]), float(e[1]) < 1e-15   # 980 equal cells, 2 x 114 probit-spaced ones
    (1208, 0.387, True)
    """
    z = np.arange(RANK_TAIL_Z, special.ndtri(RANK_TAIL) - RANK_TAIL_STEP / 2, RANK_TAIL_STEP)
    tail = special.ndtr(z)
    equal = grid_edges(n_cells)
    middle = equal[(equal >= RANK_TAIL) & (equal <= 1.0 - RANK_TAIL)]
    edges = np.concatenate([[0.0], tail, middle, special.ndtr(-z[::-1]), [1.0]])
    return np.unique(edges)


def _share(edges: np.ndarray, fine: np.ndarray) -> np.ndarray:
    lo = np.maximum(edges[:-1, None], fine[None, :-1])
    hi = np.minimum(edges[1:, None], fine[None, 1:])
    share = np.clip(hi - lo, 0.0, None) / np.diff(fine)[None, :]
    return share / share.sum(axis=0, keepdims=True)  # columns sum to 1 up to rounding


def _binomial_share(size: int, fine: np.ndarray) -> np.ndarray:
    """:math:`A_{rk} = \\int_{e_k}^{e_{k+1}} \\binom{S}{r} u^r (1-u)^{S-r}\\,du / (e_{k+1} - e_k)`,
    e the ``fine`` edges, from the regularised incomplete beta function (each difference
    from the smaller tail)."""
    r = np.arange(size + 1, dtype=np.float64)[:, None]
    a, b = np.broadcast_arrays(r + 1, size - r + 1 + 0 * fine[None, :])
    x = np.broadcast_to(fine[None, :], a.shape)
    lower = special.betainc(a, b, x)
    use_upper = lower[:, 1:] > 0.5
    # the upper tail only where it is used: both edges of the cells where lower > 0.5
    need = np.zeros(lower.shape, dtype=bool)
    need[:, 1:] |= use_upper
    need[:, :-1] |= use_upper
    upper = np.zeros_like(lower)
    upper[need] = special.betaincc(a[need], b[need], x[need])
    from_lower = np.diff(lower, axis=1)
    from_upper = -np.diff(upper, axis=1)
    share = np.where(use_upper, from_upper, from_lower) / np.diff(fine)[None, :] / (size + 1)
    share = np.clip(share, 0.0, None)
    return share / share.sum(axis=0, keepdims=True)


def observed_cells(forecast_levels: ArrayLike, hist: PITHistogram,
                   values: np.ndarray | None, draws: int | None = None) -> ObservedCells:
    """The observed cells of ``forecast_levels`` and their counts.

    From the PIT ``values`` when given (exact, any levels), else from the
    histogram, whose grid must then contain the levels. The model's fine grid
    is the histogram's, or 1000 cells for a finer histogram (a histogram of
    10,100 cells holds the levels k/101 of 100 draws and k/100; the model
    needs no more than 1000 cells to describe the latent PIT). The ranks'
    model (``draws``) always uses :func:`rank_grid_edges` of 1000 cells,
    whatever grid counted the ranks, and takes any number of draws: its
    rank probabilities at a forecast's exact latent PIT were within 1.2% of
    the truth for S = 100 to 10^4 draws and predictive sd x 0.5, 0.7, 1.5
    (at most 0.04 binomial standard errors at n = 10^5). Before, a histogram
    of fewer cells (e.g. S + 1 for S draws) made the fine grid that coarse,
    1.3% to 5% off at S = 100, and S >= 1000 was refused. Building the
    binomial shares takes about 4 s for S = 1000 and grows linearly in S.

    Raises
    ------
    ValueError
        If the levels are not strictly increasing in (0, 1), they cut [0, 1]
        into more cells than the histogram's grid has (the fine grid would
        not resolve them), or (histogram input) a level is off the grid.

    With ``draws`` = S (``forecast_levels`` then k/(S+1)), the observed cell r
    is the rank r of y among S draws, Binomial(S, u) given the continuous PIT
    u of the distribution the draws come from: :math:`A_{rk}` is the binomial
    probability averaged over fine cell k, on the fine grid of
    :func:`rank_grid_edges` (:mod:`bece._regression.cells`).
    """
    try:
        tau = check_levels(forecast_levels)
    except ValueError as exc:
        raise ValueError(f"forecast_levels: {exc}") from None
    # the ranks' fine grid describes the latent PIT, whatever grid counted the ranks
    g = min(hist.n_cells, DEFAULT_CELLS) if draws is None else DEFAULT_CELLS
    if draws is None and tau.size + 1 > g:
        raise ValueError(
            f"forecast_levels cut [0, 1] into {tau.size + 1} cells, more than the {g} cells of the PIT "
            f"grid; pass n_cells >= {tau.size + 1} (PIT values) or a finer PITHistogram"
        )
    edges = np.concatenate([[0.0], tau, [1.0]])
    if values is not None:
        cell = np.maximum(np.searchsorted(edges, values, side="left") - 1, 0)
        counts = np.bincount(cell, minlength=tau.size + 1).astype(np.int64)
    else:
        try:
            below = hist.cumulative(tau)
        except ValueError as exc:
            raise ValueError(
                f"forecast_levels must lie on the PIT histogram's grid to count the values between "
                f"them ({exc}; e.g. n_cells = S + 1 for S draws), or pass PIT values"
            ) from None
        counts = np.diff(np.concatenate([[0], below, [int(hist.counts.sum())]])).astype(np.int64)
    for a in (edges, counts):
        a.setflags(write=False)
    fine = grid_edges(g) if draws is None else rank_grid_edges(g)
    share = _share(edges, fine) if draws is None else _binomial_share(draws, fine)
    share.setflags(write=False)
    fine.setflags(write=False)
    return ObservedCells(edges=edges, counts=counts, share=share, fine_edges=fine)


def forecast_cells(forecast_levels: ArrayLike | None, forecast_draws: int | None, hist: PITHistogram,
                   values: np.ndarray | None) -> ObservedCells | None:
    """The observed cells for the keywords ``forecast_levels=`` / ``forecast_draws=`` of
    :func:`~bece.regression.bayesian_calibration_error` and
    :func:`~bece.regression.pit_calibration_test` (None when neither is given).

    Raises
    ------
    ValueError
        If both are given, ``forecast_draws`` is not a positive integer, or
        :func:`observed_cells` refuses the levels.
    """
    if forecast_draws is None:
        return None if forecast_levels is None else observed_cells(forecast_levels, hist, values)
    draws = positive_int(forecast_draws, "forecast_draws")
    if forecast_levels is not None:
        raise ValueError("pass forecast_draws or forecast_levels, not both "
                         "(forecast_draws=S implies the levels k/(S+1))")
    return observed_cells(np.arange(1, draws + 1) / (draws + 1), hist, values, draws)


def cell_derivatives(p: np.ndarray, jac: np.ndarray, h2: np.ndarray, cells: ObservedCells,
                     ) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """Log likelihood of the observed counts, its gradient, Fisher information and
    negative Hessian in :math:`\\theta`, for the fine-cell probabilities ``p`` (G,),
    the Jacobian ``jac`` (G, D) of :math:`r_k = \\log M_k + h_k` and the Hessians
    ``h2`` (G, 2, 2) of :math:`\\log M_k` in (a, b) (prior terms not included).

    With :math:`q_{jk} = A_{jk} p_k / P_j`, :math:`\\bar J_j = \\sum_k q_{jk} J_k`
    and :math:`\\bar J = \\sum_k p_k J_k`: gradient :math:`\\sum_j N_j(\\bar J_j -
    \\bar J)`; Fisher :math:`n \\sum_j P_j (\\bar J_j - \\bar J)(\\cdot)^\\top`;
    negative Hessian :math:`n \\mathrm{Cov}_p(J) - \\sum_j N_j \\mathrm{Cov}_{q_j}(J)
    - \\sum_k (c_k - n p_k) H_k` with :math:`c_k = p_k \\sum_j A_{jk} N_j / P_j`.
    """
    c = cells.counts.astype(np.float64)
    n = c.sum()
    weighted = cells.share * p[None, :]  # (m, G): A_jk p_k
    big_p = weighted.sum(axis=1)
    nz = c > 0
    with np.errstate(divide="ignore"):
        loglik = float(c[nz] @ np.log(big_p[nz]))
    ratio = np.divide(c, big_p, out=np.zeros_like(c), where=nz)
    c_eff = p * (ratio @ cells.share)  # (G,)
    centred = jac - p @ jac
    jbar = np.divide(weighted @ centred, big_p[:, None], out=np.zeros((c.size, jac.shape[1])),
                     where=big_p[:, None] > 0)  # (m, D), centred
    grad = c @ jbar
    fisher = n * (jbar.T * big_p) @ jbar
    within = (centred.T * c_eff) @ centred - (jbar.T * c) @ jbar
    observed = n * (centred.T * p) @ centred - within
    observed[:2, :2] -= np.einsum("g,gij->ij", c_eff - n * p, h2)
    return loglik, grad, fisher, observed


def cell_log_likelihood(p: np.ndarray, cells: ObservedCells) -> np.ndarray:
    """:math:`\\sum_j N_j \\log P_j` for normalised fine-cell probabilities ``p`` (S, G), shape (S,)."""
    nz = np.flatnonzero(cells.counts)
    big_p = p @ cells.share[nz].T
    with np.errstate(divide="ignore"):
        return np.log(big_p) @ cells.counts[nz].astype(np.float64)


def cell_curve(p: np.ndarray, cells: ObservedCells, levels: np.ndarray) -> np.ndarray:
    """:math:`C(p_j)` of the randomised PIT (linear within observed cells) for
    normalised fine-cell probabilities ``p`` (S, G), shape (S, J)."""
    big_p = p @ cells.share.T  # (S, m)
    cdf = np.concatenate([np.zeros((p.shape[0], 1)), np.cumsum(big_p, axis=1)], axis=1)
    j = np.clip(np.searchsorted(cells.edges, levels, side="right") - 1, 0, cells.counts.size - 1)
    frac = (levels - cells.edges[j]) / cells.widths[j]
    return np.minimum(cdf[:, j] + big_p[:, j] * frac[None, :], 1.0)
