r"""The bound on the ECE error of the fine grid, draw by draw.

On the fine grid a cell g with :math:`t_g` predictions is one atom at its
mean confidence :math:`\bar p_g`. For one draw of the curve
:math:`s(p) = \sigma(f(\operatorname{logit} p))` and of the bootstrap weights
:math:`w_i` (cell totals :math:`W_g = \sum_{i \in g} w_i`), the exact ECE
has, per bin, :math:`\sum_i w_i\,r(p_i)` with :math:`r(p) = s(p) - p`, and
the grid :math:`\sum_g W_g\,r(\bar p_g)`. Whatever the weights inside a cell,

.. math::

    |\Delta\mathrm{ECE}| \le \sum_g W_g\,\max_{p \in g}|r(p) - r(\bar p_g)|
    \le \sum_g W_g\Big(|s'(\bar p_g) - 1|\,d_g + \tfrac12 K_g d_g^2\Big),

with :math:`d_g = \max(\bar p_g - l_g, u_g - \bar p_g)` for the cell
:math:`[l_g, u_g]` and :math:`K_g \ge \sup_g |s''|` (Taylor's theorem with
the remainder; :math:`r'' = s''`). The first-order term is the slope of
the *miscalibration* :math:`s(p) - p`, not of :math:`s` and :math:`p`
separately (the former bound, :math:`\sum_g W_g(h_g + |s(u_g) - s(l_g)|)`,
added the two): near the diagonal it is small. :math:`K_g` comes from
bounds over the cell that hold for the cubic spline exactly (its second
derivative is linear between knots, so its extremes lie at the cell's ends
and knots):

.. math::

    |s''| \le \sigma'_{\max}\big(F_1^2 X_1^2 + F_2 X_1^2 + F_1 X_2\big),

where, on the cell, :math:`F_2 \ge |f''|` (ends and knots inside),
:math:`F_1 = (|f'(x_l)| + |f'(x_u)| + F_2 \Delta x)/2 \ge |f'|`,
:math:`\sigma'_{\max} = \sigma'(\max(0, (|f(x_l)| + |f(x_u)| - F_1\Delta
x)/2)) \ge \sigma'(f)`, :math:`X_1 = \max 1/(p(1-p))` and :math:`X_2 =
\max |2p - 1|/(p(1-p))^2` (derivatives of :math:`\operatorname{logit} p`),
and :math:`|\sigma''| \le \sigma'`. Two kinds of cell need no Taylor
expansion: one within 1e-6 of 0 or 1, where the clipped logit and hence
:math:`s` are constant (:math:`|r(p) - r(\bar p)| = |p - \bar p| \le d`),
and one that contains a clip point (statistics in bins other than
:func:`bece.smooth.fine_binning`'s), where :math:`s` has a kink:
:math:`|r(p) - r(\bar p)| \le d + \sigma'_{\max} F_1 \Delta x`.

The bound holds for every draw and every weighting inside the cells. It is
tight for what it bounds: each cell's term exceeds
:math:`\max_{p \in g}|r(p) - r(\bar p_g)|` by 1.3% (weighted over the cells,
in the tests), and weights inside the cells reach that when the cells hold
predictions near their ends (in the tests, on 20,000 predictions, the worst
weights reached 19-37% of the bound: sparse cells' predictions sit away
from the ends). The Bayesian bootstrap's random weights give far less
(about 2% of the bound), because the first-order terms average out. The
bound is about the ECE of a given curve: the curve's posterior is fitted to
the cells too, which it does not cover; ``benchmarks/grid_error.py``
measures the whole difference between the paths (below the bound in every
case measured).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .atoms import Atoms
from .basis import LOGIT_CLIP, SmoothBasis, logit_confidence

__all__ = [
    "CellCurve",
    "draw_bounds",
]


class CellCurve:
    """What the bound needs of the cells, computed once per set of atoms.

    Attributes
    ----------
    xl, xu : ndarray of shape (J,)
        Clipped logits of each cell's ends.
    d : ndarray of shape (J,)
        :math:`d_g`, largest distance from the cell mean to an end.
    x1, x2 : ndarray of shape (J,)
        :math:`X_1, X_2` on regular cells (0 elsewhere).
    regular, flat, kinked : ndarray of shape (J,), bool
        Cells strictly inside :math:`[10^{-6}, 1 - 10^{-6}]` with positive
        width; cells on which the clipped logit is constant; the rest.
    knot_cell : ndarray of shape (K,), int64
        For each knot, the regular cell with the knot strictly inside its
        logit range, or -1.
    """

    def __init__(self, atoms: Atoms, basis: SmoothBasis) -> None:
        assert atoms.lower is not None and atoms.upper is not None  # grid atoms
        lo, up, pm = atoms.lower, atoms.upper, atoms.p
        self.xl, self.xu = logit_confidence(lo), logit_confidence(up)
        self.d = np.maximum(pm - lo, up - pm)
        self.flat = self.xu == self.xl
        self.regular = (lo >= LOGIT_CLIP) & (up <= 1.0 - LOGIT_CLIP) & ~self.flat
        self.kinked = ~self.flat & ~self.regular
        with np.errstate(divide="ignore", invalid="ignore"):
            pq = np.minimum(lo * (1.0 - lo), up * (1.0 - up))
            curv = np.maximum(np.abs(2.0 * lo - 1.0) / (lo * (1.0 - lo)) ** 2,
                              np.abs(2.0 * up - 1.0) / (up * (1.0 - up)) ** 2)
        self.x1 = np.where(self.regular, 1.0 / np.where(self.regular, pq, 1.0), 0.0)
        self.x2 = np.where(self.regular, curv, 0.0)
        knots = basis.knots
        cell = np.searchsorted(self.xl, knots, side="right") - 1
        ok = (cell >= 0) & (knots < self.xu[np.maximum(cell, 0)]) & (knots > self.xl[np.maximum(cell, 0)])
        self.knot_cell = np.where(ok, cell, -1).astype(np.int64)
        self.bins = atoms.bin
        self.p = pm


def draw_bounds(cells: CellCurve, basis: SmoothBasis, beta: np.ndarray, f_mean: np.ndarray,
                weights: np.ndarray) -> np.ndarray:
    """The bound of the module docstring for each draw, shape (S,).

    Parameters
    ----------
    cells : CellCurve
    basis : SmoothBasis
    beta : ndarray of shape (S, P)
        Curve coefficients.
    f_mean : ndarray of shape (S, J)
        :math:`f` at the atoms' logits (as the ECE draws computed it).
    weights : ndarray of shape (S, J)
        Bootstrap cell totals :math:`W_g` of each draw (summing to 1).
    """
    bins = cells.bins
    f_l = basis.logits(cells.xl, bins, beta)
    f_u = basis.logits(cells.xu, bins, beta)
    d1_l, d2_l = basis.derivatives(cells.xl, beta)
    d1_u, d2_u = basis.derivatives(cells.xu, beta)
    f2 = np.maximum(np.abs(d2_l), np.abs(d2_u))
    inside = cells.knot_cell >= 0
    if inside.any():
        _, d2_k = basis.derivatives(basis.knots[inside], beta)
        for j, g in enumerate(cells.knot_cell[inside]):
            f2[:, g] = np.maximum(f2[:, g], np.abs(d2_k[:, j]))
    dx = cells.xu - cells.xl
    f1 = 0.5 * (np.abs(d1_l) + np.abs(d1_u) + f2 * dx)
    f_min = np.maximum(0.0, 0.5 * (np.abs(f_l) + np.abs(f_u) - f1 * dx))
    sp_max = special.expit(f_min) * special.expit(-f_min)
    d = cells.d
    # regular cells: |s'(p_mean) - 1| d + K d^2 / 2
    d1_m, _ = basis.derivatives(logit_confidence(cells.p), beta)
    pm = cells.p
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = special.expit(f_mean) * special.expit(-f_mean) * d1_m / (pm * (1.0 - pm))
    k2 = sp_max * (f1**2 * cells.x1**2 + f2 * cells.x1**2 + f1 * cells.x2)
    with np.errstate(invalid="ignore"):  # NaN slopes at p = 0 or 1 sit in flat cells, not used
        regular = np.abs(slope - 1.0) * d + 0.5 * k2 * d**2
    kinked = d + sp_max * f1 * dx
    per_cell = np.where(cells.regular, regular, np.where(cells.kinked, kinked, d))
    return np.sum(weights * per_cell, axis=1)
