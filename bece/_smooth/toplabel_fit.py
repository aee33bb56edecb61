r"""The Laplace/INLA fit of the hierarchical top-label model, by blocks.

Coefficients :math:`\theta = (\theta_s, \theta_1, \dots, \theta_L)`: the
shared curve's :math:`\theta_s = (a, b, u[, v])` (P of them, about 10, or 25
with bin deviations) and each label's :math:`\theta_l = (c_l, e_l)`. For
fixed hyper-parameters :math:`\eta = (\lambda, \kappa, \omega[, \tau])` the log
posterior is concave and its negative Hessian is an *arrowhead*: a dense
shared block :math:`A` (P x P), a 2 x 2 block :math:`C_l` per label, and the
couplings :math:`B_l` (P x 2); labels are coupled only through
:math:`\theta_s`. Newton's step solves it through the Schur complement

.. math::

    S = A - \sum_l B_l C_l^{-1} B_l^\top, \qquad
    \delta_s = S^{-1}\Big(g_s - \sum_l B_l C_l^{-1} g_l\Big), \qquad
    \delta_l = C_l^{-1}(g_l - B_l^\top \delta_s),

in :math:`O(J P^2 + L P^2 + P^3)` per step for J atoms (never a
:math:`(P + 2L)^2` matrix), and :math:`\log|H| = \log|S| + \sum_l \log|C_l|`.
Draws of :math:`\mathcal N(\hat\theta, H^{-1})` follow the same blocks:
:math:`\theta_s = \hat\theta_s + L_S^{-\top}\epsilon_s` (:math:`S = L_S
L_S^\top`, the precision of :math:`\theta_s`'s marginal) and
:math:`\theta_l = \hat\theta_l - C_l^{-1}B_l^\top(\theta_s - \hat\theta_s)
+ R_l^{-\top}\epsilon_l` (:math:`C_l = R_l R_l^\top`).

Hyper-parameters: a product grid as in :func:`bece._smooth.fit.fit_smooth`
(each value standing for the prior's mass between its geometric neighbours
over :math:`[10^{-2}, 10]` times the prior mean; the scales' priors are
those of :mod:`bece._smooth.scale_prior`: 8 values of :math:`\lambda`, 16
of the shift scale :math:`\kappa` and 16 of the tilt scale :math:`\omega`
(a ratio of 1.58 between neighbours), 8 of :math:`\tau` with bin
deviations; the smoothness is rarely sharply identified, and a coarse grid
of a flat direction costs little accuracy. The tilt scale is, on large
data sets: on CIFAR-100 DenseNet outputs (10^4 rows, K = 100) NUTS chains
put half of :math:`\omega` between 0.04 and 0.074, and 8 tilt scales (a
ratio of 2.68) put no point between 0.048 and 0.13, which made the labels'
curves at high confidence too narrow (a 5% quantile of 0.879 where NUTS
found 0.841; 0.845 with 16 scales, 0.841 with 32; three times as many
values of :math:`\kappa` or :math:`\lambda` changed it by under 0.003).
The grid is explored outwards: hill climbs over neighbouring grid points
from the point of largest prior mass and from the grids' middles (the scales'
mixture priors peak at their "shared" end), then every neighbour of a point whose log
posterior is within ``FLOOD_DROP`` (9) of the best is evaluated too. Points
never reached carry less than :math:`e^{-9}` of the best point's weight
each (the log posterior over the grid is unimodal in practice), so a sharp
hyper-posterior costs a few dozen Newton solves instead of the whole grid.

Then the cells of the points holding at least ``REFINE_WEIGHT`` (0.2%) of
the posterior are cut in three of equal log width along :math:`\kappa` and
along :math:`\omega` (a ratio of 1.17), each new point fitted from its
parent's mode and standing for its part of the cell's prior mass (the end
cells, reaching 0 and infinity, are not cut). The importance weights of
the draws correct each Gaussian to the exact conditional posterior at its
grid point, but not the quadrature of the scales, and a label's curve next
to confidence 1 moves with :math:`\omega` across one cell: on the DenseNet
outputs above, with 16 unrefined values of each scale the 5% quantiles of
such curves at confidence 0.9999 came out 0.006 to 0.008 above NUTS's (2 of
the 1,803 quantities a cross-check compares beyond the agreement rule's
tolerance, worst ratio 1.25); refined, 0.002 to 0.003 above and none beyond
(worst ratio 0.68), as with 32 values of each scale, at 1.9 times the
unrefined fit's time (432 Newton solves and 460 more) against 2.8
(benchmarks/toplabel_scale_grid.py). The refinement costs least where the
posterior is concentrated: 156 solves more than 204 at K = 1,000,
n = 10^6.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import linalg, sparse, special

from .._base.checks import check_scale, positive_int
from .._base.laplace import (
    backtrack,
    climb_and_flood,
    converged,
    exponential_grid,
    mixture_draws,
    not_converged,
)
from .._base.psis import PARETO_K_MAX
from .basis import DEFAULT_N_KNOTS, SmoothBasis
from .scale_prior import SHARED_PROB, check_shared_prob, scale_cdf, scale_grid
from .toplabel_atoms import LabelAtoms

__all__ = [
    "FLOOD_DROP",
    "fit_top_label_smooth",
    "label_loglik",
    "PointDesign",
    "LabelDesign",
    "REFINE_WEIGHT",
    "refine_scales",
    "N_KAPPA",
    "N_LAMBDA_LABEL",
    "N_OMEGA",
    "N_TAU_LABEL",
    "TopLabelSmoothPosterior",
]

N_KAPPA = 16
N_OMEGA = 16
N_LAMBDA_LABEL = 8
N_TAU_LABEL = 8
FLOOD_DROP = 9.0
KEEP_WEIGHT = 1e-12
#: Grid points holding at least this share of the posterior have their
#: (kappa, omega) cell split in three along each scale (module docstring).
REFINE_WEIGHT = 2e-3


class LabelDesign:
    """The atoms' design, computed once: shared smooth columns, label and bin maps."""

    def __init__(self, atoms: LabelAtoms, basis: SmoothBasis, center: float, spread: float,
                 prior_scales: np.ndarray) -> None:
        self.atoms = atoms
        self.basis = basis
        self.k = basis.n_smooth
        self.m = basis.n_bins
        self.n_labels = atoms.n_labels
        self.Ds = basis.design(atoms.x)  # (J, k)
        self.x = atoms.x
        self.zx = (atoms.x - center) / spread
        self.c = atoms.successes.astype(np.float64)
        self.t = atoms.trials.astype(np.float64)
        self.label = atoms.label
        self.bin = atoms.bin
        j = atoms.x.size
        # atoms are sorted by label and every label has one: sums per label by reduceat
        self.label_starts = np.searchsorted(atoms.label, np.arange(self.n_labels))
        self.bin_mat = (sparse.csr_matrix((np.ones(j), (atoms.bin, np.arange(j))), shape=(self.m, j))
                        if self.m else None)
        self.cell = atoms.label * max(self.m, 1) + (atoms.bin if self.m else 0)
        self.prec = 1.0 / prior_scales**2

    def logits(self, ts: np.ndarray, tl: np.ndarray, cs: np.ndarray, tau: float,
               kappa: float, omega: float) -> np.ndarray:
        f = self.x + self.Ds @ (cs * ts[:self.k])
        if self.m:
            f += tau * ts[self.k:][self.bin]
        f += kappa * tl[self.label, 0] + omega * tl[self.label, 1] * self.zx
        return f


def _inv2(h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Inverses and log-determinants of 2 x 2 symmetric positive definite blocks (L, 2, 2)."""
    a, b, d = h[:, 0, 0], h[:, 0, 1], h[:, 1, 1]
    det = a * d - b * b
    inv = np.empty_like(h)
    inv[:, 0, 0], inv[:, 1, 1] = d / det, a / det
    inv[:, 0, 1] = inv[:, 1, 0] = -b / det
    return inv, np.log(det)


def _chol2(h: np.ndarray) -> np.ndarray:
    """Lower Cholesky factors of 2 x 2 blocks (L, 2, 2)."""
    out = np.zeros_like(h)
    l11 = np.sqrt(h[:, 0, 0])
    l21 = h[:, 1, 0] / l11
    out[:, 0, 0], out[:, 1, 0] = l11, l21
    out[:, 1, 1] = np.sqrt(h[:, 1, 1] - l21 * l21)
    return out


@dataclass
class _Fit:
    ts: np.ndarray
    tl: np.ndarray
    log_evidence: float
    chol: np.ndarray       # (P, P) Cholesky of the Schur complement
    label_chol: np.ndarray  # (L, 2, 2)
    coupling: np.ndarray   # (L, 2, P) = C_l^{-1} B_l^T


def _newton(d: LabelDesign, lam: float, tau: float, kappa: float, omega: float, ts: np.ndarray,
            tl: np.ndarray, max_iter: int = 100) -> _Fit:
    """Mode and blocks of the negative Hessian of the log posterior of theta
    given (lam, tau, kappa, omega) (module docstring). Concave: damped Newton."""
    k, m, n_labels = d.k, d.m, d.n_labels
    cs = np.ones(k)
    cs[2:] = lam
    prec = d.prec

    def objective(ts_: np.ndarray, tl_: np.ndarray) -> tuple[float, np.ndarray]:
        f = d.logits(ts_, tl_, cs, tau, kappa, omega)
        ll = float(np.dot(d.c, f) - np.dot(d.t, np.logaddexp(0.0, f)))
        return ll - 0.5 * float(np.dot(prec * ts_, ts_)) - 0.5 * float(np.sum(tl_ * tl_)), f

    obj, f = objective(ts, tl)
    for it in range(max_iter + 1):
        sig = special.expit(f)
        r = d.c - d.t * sig
        w = d.t * sig * (1.0 - sig)
        gs = -prec * ts
        gs[:k] += cs * (d.Ds.T @ r)
        wz = w * d.zx
        lab_r = np.stack([np.bincount(d.label, r, n_labels), np.bincount(d.label, r * d.zx, n_labels)],
                         axis=1)
        gl = np.array([kappa, omega]) * lab_r - tl
        wd = d.Ds * w[:, None]
        H = np.diag(prec)
        H[:k, :k] += cs[:, None] * (d.Ds.T @ wd) * cs[None, :]
        cross = np.empty((n_labels, k + m, 2))
        cross[:, :k, 0] = np.add.reduceat(wd, d.label_starts, axis=0)
        cross[:, :k, 1] = np.add.reduceat(wd * d.zx[:, None], d.label_starts, axis=0)
        cross[:, :k, 0] *= kappa * cs
        cross[:, :k, 1] *= omega * cs
        if m:
            assert d.bin_mat is not None
            bw = np.bincount(d.bin, w, m)
            hb = tau * cs[:, None] * (d.bin_mat @ wd).T  # (k, M)
            H[:k, k:] += hb
            H[k:, :k] += hb.T
            H[k:, k:] += np.diag(tau**2 * bw)
            gs[k:] += tau * np.bincount(d.bin, r, m)
            size = n_labels * m
            cross[:, k:, 0] = kappa * tau * np.bincount(d.cell, w, size).reshape(n_labels, m)
            cross[:, k:, 1] = omega * tau * np.bincount(d.cell, wz, size).reshape(n_labels, m)
        blk = np.empty((n_labels, 2, 2))
        sw = np.bincount(d.label, w, n_labels)
        swz = np.bincount(d.label, wz, n_labels)
        swzz = np.bincount(d.label, wz * d.zx, n_labels)
        blk[:, 0, 0] = kappa**2 * sw + 1.0
        blk[:, 0, 1] = blk[:, 1, 0] = kappa * omega * swz
        blk[:, 1, 1] = omega**2 * swzz + 1.0
        cinv, logdet_l = _inv2(blk)
        coupling = cinv @ cross.transpose(0, 2, 1)  # (L, 2, P): C_l^{-1} B_l^T
        wide = cross.transpose(1, 0, 2).reshape(k + m, 2 * n_labels)  # [B_1 ... B_L]
        schur = H - wide @ coupling.reshape(2 * n_labels, k + m)
        cg = (cinv @ gl[:, :, None])[:, :, 0]
        rhs = gs - wide @ cg.reshape(-1)
        chol = linalg.cholesky(schur, lower=True, check_finite=False)
        ds = linalg.cho_solve((chol, True), rhs, check_finite=False)
        dl = cg - coupling @ ds
        dec = float(np.dot(gs, ds) + np.sum(gl * dl))
        if converged(dec) or it == max_iter:  # the blocks are those at (ts, tl)
            if not converged(dec):
                not_converged("the hierarchical top-label fit", dec, max_iter)
            half_logdet = float(np.sum(np.log(np.diag(chol)))) + 0.5 * float(np.sum(logdet_l))
            log_ev = obj + 0.5 * float(np.sum(np.log(prec))) - half_logdet
            return _Fit(ts, tl, log_ev, chol, _chol2(blk), coupling)

        def along(lr: float, ts: np.ndarray = ts, tl: np.ndarray = tl, ds: np.ndarray = ds,
                  dl: np.ndarray = dl) -> tuple[float, Any]:
            new_ts, new_tl = ts + lr * ds, tl + lr * dl
            new_obj, new_f = objective(new_ts, new_tl)
            return new_obj, (new_ts, new_tl, new_f)

        _, obj, (ts, tl, f) = backtrack(along, obj, dec)
    raise AssertionError("unreachable")  # pragma: no cover


@dataclass(frozen=True)
class TopLabelSmoothPosterior:
    """The Laplace mixture posterior of the hierarchical top-label model.

    Attributes
    ----------
    basis : SmoothBasis
        The shared curve's basis.
    center, spread : float
        :math:`x_0`, :math:`s_x` of the label tilt :math:`\\omega e_l (x - x_0)/s_x`
        (the fit uses :math:`x_0 = 0`, :math:`s_x = 1`: a per-label slope).
    n_labels : int
    lambdas, taus, kappas, omegas : ndarray of shape (G,)
        The grid points kept (posterior weight above 1e-12; ``taus`` 0
        without bin deviations); ``kappas`` scale the label shifts,
        ``omegas`` the label tilts.
    prior_mass, log_evidence, weights : ndarray of shape (G,)
        Prior mass each point stands for, Laplace :math:`\\log p(\\text{data}
        \\mid \\eta)`, posterior weight (sums to 1).
    modes : ndarray of shape (G, P)
        Shared coefficients :math:`\\hat\\theta_s`.
    label_modes : ndarray of shape (G, L, 2)
        :math:`(\\hat c_l, \\hat e_l)`.
    chol : ndarray of shape (G, P, P)
        Lower Cholesky factors of the Schur complements :math:`S`.
    label_chol : ndarray of shape (G, L, 2, 2)
        Lower Cholesky factors of the label blocks :math:`C_l`.
    coupling : ndarray of shape (G, L, 2, P)
        :math:`C_l^{-1} B_l^\\top`.
    prior_scales : ndarray of shape (P,)
    smoothness_scale, bin_scale, label_scale, tilt_scale : float
        Prior means of :math:`\\lambda`, :math:`\\tau` (0 without bin
        deviations), and of the exponential components of :math:`\\kappa`,
        :math:`\\omega`.
    log_marginal : float
        Laplace :math:`\\log p(\\text{data})` (over all evaluated points).
    n_evaluated : int
        Points at which the mode was found (grid points and the points of
        the refined cells).
    grid : int or None
        Sub-cells per ECE bin (None: one atom per prediction).
    n_atoms : int
    log_marginal_is, pareto_k, is_ess : float
        Importance-sampling correction (:func:`psis_resample`); NaN
        until computed.
    resampled : bool
        Whether the draws were resampled with the importance weights
        (Pareto :math:`\\hat k < 0.7`); else they are the Laplace mixture's.
    shared_prob : float
        Prior probability of the "shared" component of :math:`\\kappa`'s and
        :math:`\\omega`'s priors (:mod:`bece._smooth.scale_prior`).
    log_marginal_calibrated : float
        :math:`\\log p(\\text{data} \\mid H_0)` of the identity curve for every
        label (all coefficients 0): :math:`\\sum_j c_j x_j - t_j \\log(1 + e^{x_j})`
        over the atoms, exact.
    """

    basis: SmoothBasis
    center: float
    spread: float
    n_labels: int
    lambdas: np.ndarray
    taus: np.ndarray
    kappas: np.ndarray
    omegas: np.ndarray
    prior_mass: np.ndarray
    log_evidence: np.ndarray
    weights: np.ndarray
    modes: np.ndarray
    label_modes: np.ndarray
    chol: np.ndarray
    label_chol: np.ndarray
    coupling: np.ndarray
    prior_scales: np.ndarray
    smoothness_scale: float
    bin_scale: float
    label_scale: float
    tilt_scale: float
    log_marginal: float
    n_evaluated: int
    grid: int | None
    n_atoms: int
    log_marginal_is: float = float("nan")
    pareto_k: float = float("nan")
    is_ess: float = float("nan")
    resampled: bool = False
    log_marginal_calibrated: float = float("nan")
    shared_prob: float = 0.0

    @property
    def log_marginal_smooth(self) -> float:
        """The hierarchical model's log marginal likelihood used for the Bayes
        factor: the importance-sampling estimate when reliable (Pareto
        :math:`\\hat k < 0.7`), else the Laplace one."""
        if np.isfinite(self.log_marginal_is) and self.pareto_k < PARETO_K_MAX:
            return float(self.log_marginal_is)
        return float(self.log_marginal)

    @property
    def log_bayes_factor(self) -> float:
        """:math:`\\log B_{01}`: every label calibrated (identity curves) against
        the hierarchical smooth model, as :attr:`bece._smooth.fit.SmoothPosterior.log_bayes_factor`."""
        return self.log_marginal_calibrated - self.log_marginal_smooth

    def column_scale(self, lam: np.ndarray, tau: np.ndarray) -> np.ndarray:
        """Per-draw multipliers of the shared columns, shape (S, P)."""
        b = self.basis
        lam = np.asarray(lam, dtype=np.float64).reshape(-1, 1)
        tau = np.asarray(tau, dtype=np.float64).reshape(-1, 1)
        return np.concatenate([np.ones((lam.shape[0], 2)), np.repeat(lam, b.n_spline, axis=1),
                               np.repeat(tau, b.n_bins, axis=1)], axis=1)

    def sample(self, num_samples: int, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
        """Draws of the Laplace mixture (uncorrected).

        Returns
        -------
        beta : ndarray of shape (S, P)
            :math:`(a, b, \\lambda u, \\tau v)`.
        label_beta : ndarray of shape (S, L, 2)
            :math:`(\\kappa c_l, \\omega e_l)`.
        lam, tau, kappa, omega : ndarray of shape (S,)
        log_ratio : ndarray of shape (S,)
            :math:`\\log[p(\\theta\\mid\\eta_k)\\,\\text{mass}_k] - \\log[\\pi_k
            \\mathcal N(\\theta; \\hat\\theta_k, H_k^{-1})]`.
        """
        p_dim, n_labels = self.modes.shape[1], self.n_labels

        def draw(j: int, eps: list[np.ndarray]) -> tuple[list[np.ndarray], float]:
            # theta_s = mode + L^{-T} eps: covariance (L L^T)^{-1} = S^{-1}
            inv_t = linalg.solve_triangular(self.chol[j], np.eye(p_dim), lower=True, trans="T",
                                            check_finite=False)
            dev = eps[0] @ inv_t.T
            lc = self.label_chol[j]  # R_l, lower: solve R_l^T y = eps
            e = eps[1]
            y1 = e[..., 1] / lc[:, 1, 1]
            y0 = (e[..., 0] - lc[:, 1, 0] * y1) / lc[:, 0, 0]
            shift = (dev @ self.coupling[j].reshape(2 * n_labels, p_dim).T).reshape(-1, n_labels, 2)
            tl = self.label_modes[j] - shift + np.stack([y0, y1], axis=-1)
            half_logdet = (np.sum(np.log(np.diag(self.chol[j])))
                           + np.sum(np.log(lc[:, 0, 0] * lc[:, 1, 1])))
            return [self.modes[j] + dev, tl], float(half_logdet)

        # the shared coefficients (prior scales) and the labels' (standard normal)
        parts = [((p_dim,), 1.0 / self.prior_scales**2), ((n_labels, 2), None)]
        comp, (ts, tl), log_ratio = mixture_draws(self.weights, self.prior_mass, parts, draw,
                                                  num_samples, rng)
        lam, tau, kappa, omega = (self.lambdas[comp], self.taus[comp], self.kappas[comp],
                                  self.omegas[comp])
        label_beta = tl * np.stack([kappa, omega], axis=-1)[:, None, :]
        return ts * self.column_scale(lam, tau), label_beta, lam, tau, kappa, omega, log_ratio

    def logits(self, x: np.ndarray, label: np.ndarray, bins: np.ndarray | None, beta: np.ndarray,
               label_beta: np.ndarray) -> np.ndarray:
        """Each draw's :math:`f(x) + d_l(x)` at points ``x`` of labels ``label``, shape (S, n)."""
        return PointDesign(self, x, label, bins).logits(beta, label_beta)


class PointDesign:
    r"""The curves' design at fixed points (atoms), for many draws: shared columns
    :math:`[1, x, \phi(x)]`, bin index and the label columns :math:`(1, \tilde x)`
    as a sparse (2L, n) matrix."""

    def __init__(self, post: TopLabelSmoothPosterior, x: np.ndarray, label: np.ndarray,
                 bins: np.ndarray | None) -> None:
        n = x.size
        self.x = x
        self.k = post.basis.n_smooth
        self.Ds_t = np.ascontiguousarray(post.basis.design(x).T)  # (k, n)
        self.bins = bins if post.basis.n_bins else None
        zx = (x - post.center) / post.spread
        rows = np.concatenate([2 * label, 2 * label + 1])
        cols = np.concatenate([np.arange(n), np.arange(n)])
        self.label_t = sparse.csr_matrix((np.concatenate([np.ones(n), zx]), (cols, rows)),
                                         shape=(n, 2 * post.n_labels))

    def logits(self, beta: np.ndarray, label_beta: np.ndarray) -> np.ndarray:
        """(S, n) logits of draws ``beta`` (S, P) and ``label_beta`` (S, L, 2)."""
        f = beta[:, :self.k] @ self.Ds_t
        f += self.x
        if self.bins is not None:
            f += beta[:, self.k:][:, self.bins]
        f += (self.label_t @ label_beta.reshape(label_beta.shape[0], -1).T).T
        return f


def label_loglik(atoms: LabelAtoms, post: TopLabelSmoothPosterior, beta: np.ndarray,
                 label_beta: np.ndarray, *, chunk_elems: int = 4_000_000) -> np.ndarray:
    """:math:`\\sum_j c_j f_j - t_j \\log(1 + e^{f_j})` for each draw, shape (S,)."""
    c = atoms.successes.astype(np.float64)
    t = atoms.trials.astype(np.float64)
    out = np.empty(beta.shape[0])
    step = max(1, chunk_elems // max(atoms.p.size, 1))
    design = PointDesign(post, atoms.x, atoms.label, atoms.bin)
    for a in range(0, beta.shape[0], step):
        f = design.logits(beta[a:a + step], label_beta[a:a + step])
        out[a:a + step] = f @ c - np.logaddexp(0.0, f) @ t
    return out


@dataclass(frozen=True)
class _Point:
    """A hyper-parameter point: its grid index (None for a point of a split
    cell), values and cell masses of (lambda, tau, kappa, omega), and its fit."""

    index: tuple[int, ...] | None
    eta: tuple[float, ...]
    mass: tuple[float, ...]
    fit: _Fit

    @property
    def log_joint(self) -> float:
        return self.fit.log_evidence + float(np.sum(np.log(self.mass)))


def fit_label_grid(design: LabelDesign, *grids: tuple[np.ndarray, np.ndarray]) -> list[_Point]:
    """Modes at the grid points reached from the best one (module docstring).

    ``grids`` are the (values, prior mass) of lambda, tau, kappa and omega.
    Returns every evaluated point with the prior mass of its cell.
    """
    dims = len(grids)
    log_mass = [np.log(g[1]) for g in grids]
    p_dim, n_labels = design.k + design.m, design.n_labels

    def evaluate(idx: tuple[int, ...], start: _Fit | None) -> tuple[_Fit, float]:
        ts = np.zeros(p_dim) if start is None else start.ts
        tl = np.zeros((n_labels, 2)) if start is None else start.tl
        lam, tau, kappa, omega = (float(grids[d][0][idx[d]]) for d in range(dims))
        fit = _newton(design, lam, tau, kappa, omega, ts, tl)
        return fit, fit.log_evidence + sum(float(log_mass[d][idx[d]]) for d in range(dims))

    # climb from where each prior's mass is largest and from each grid's middle
    # (the exponential's mean: the mixture's mass peaks at its "shared" end)
    middle = tuple(int(np.argmin(np.abs(np.log(g[0] / g[0][0]) - np.log(100.0)))) if g[0].size > 1
                   else 0 for g in grids)  # the value nearest the prior mean (HYPER_RANGE)
    starts = [tuple(int(np.argmax(g[1])) for g in grids), middle]
    done = climb_and_flood(evaluate, tuple(g[0].size for g in grids), starts, FLOOD_DROP)
    return [_Point(idx, tuple(float(grids[d][0][idx[d]]) for d in range(dims)),
                   tuple(float(grids[d][1][idx[d]]) for d in range(dims)), fit)
            for idx, (fit, _) in done.items()]


def _split_cell(values: np.ndarray, i: int, scale: float, shared_prob: float,
                ) -> tuple[np.ndarray, np.ndarray] | None:
    """Grid value ``i``'s cell (between its geometric mid-points) cut into
    three of equal log width: the thirds' middles (the centre one is the
    value itself) and their prior masses (summing to the cell's); None for
    the two end cells, which reach 0 and infinity."""
    if i == 0 or i == values.size - 1:
        return None
    edges = np.geomspace(np.sqrt(values[i - 1] * values[i]), np.sqrt(values[i] * values[i + 1]), 4)
    points = np.sqrt(edges[:-1] * edges[1:])
    points[1] = values[i]
    return points, np.diff(scale_cdf(edges, scale, shared_prob))


def refine_scales(design: LabelDesign, grids: tuple, points: list[_Point], scales: tuple[float, float],
                  shared_prob: float) -> list[_Point]:
    """The points of :func:`fit_label_grid` with the (kappa, omega) cell of each
    point of posterior weight at least :data:`REFINE_WEIGHT` split in three
    along each scale (:func:`_split_cell`; an end cell is left whole): up to
    eight new points per cell, each fitted from its parent's mode, and the
    parent keeping the centre's mass (module docstring). ``scales`` are the
    prior means of kappa and omega."""
    lj = np.array([q.log_joint for q in points])
    weights = np.exp(lj - special.logsumexp(lj))
    out = []
    for q, w in zip(points, weights):
        if w < REFINE_WEIGHT:
            out.append(q)
            continue
        assert q.index is not None  # a grid point of fit_label_grid
        index = q.index
        axes = [_split_cell(grids[d][0], index[d], scales[d - 2], shared_prob)
                or (np.array([q.eta[d]]), np.array([q.mass[d]])) for d in (2, 3)]
        lam, tau = q.eta[:2]
        for a, (kappa, k_mass) in enumerate(zip(*axes[0])):
            for b, (omega, o_mass) in enumerate(zip(*axes[1])):
                centre = kappa == q.eta[2] and omega == q.eta[3]
                fit = q.fit if centre else _newton(design, lam, tau, kappa, omega, q.fit.ts, q.fit.tl)
                out.append(_Point(None, (lam, tau, float(kappa), float(omega)),
                                  (q.mass[0], q.mass[1], float(k_mass), float(o_mass)), fit))
    return out


def assemble(points: list[_Point], **fields) -> TopLabelSmoothPosterior:
    """The posterior from the evaluated points (weights, pruning)."""
    lj = np.array([q.log_joint for q in points])
    log_marg_joint = float(special.logsumexp(lj))
    weights = np.exp(lj - log_marg_joint)
    keep = np.flatnonzero(weights > KEEP_WEIGHT * weights.max())
    kept = [points[i] for i in keep]
    w = weights[keep] / weights[keep].sum()
    fits = [q.fit for q in kept]
    eta = np.array([q.eta for q in kept]).reshape(-1, 4)
    return TopLabelSmoothPosterior(
        lambdas=eta[:, 0], taus=eta[:, 1], kappas=eta[:, 2], omegas=eta[:, 3],
        prior_mass=np.array([np.prod(q.mass) for q in kept]),
        log_evidence=np.array([f.log_evidence for f in fits]), weights=w,
        modes=np.stack([f.ts for f in fits]), label_modes=np.stack([f.tl for f in fits]),
        chol=np.stack([f.chol for f in fits]), label_chol=np.stack([f.label_chol for f in fits]),
        coupling=np.stack([f.coupling for f in fits]), log_marginal=log_marg_joint,
        n_evaluated=len({id(f) for f in (q.fit for q in points)}), **fields,
    )


def fit_top_label_smooth(
    atoms: LabelAtoms,
    *,
    n_knots: int = DEFAULT_N_KNOTS,
    intercept_scale: float = 1.0,
    slope_scale: float = 0.5,
    smoothness_scale: float = 0.5,
    bin_scale: float | None = None,
    label_scale: float = 0.5,
    tilt_scale: float = 0.25,
    shared_prob: float = SHARED_PROB,
) -> TopLabelSmoothPosterior:
    """Laplace mixture posterior of the hierarchical top-label model (module docstring).

    Parameters
    ----------
    atoms : LabelAtoms
    n_knots, intercept_scale, slope_scale, smoothness_scale
        The shared curve and its prior, as :func:`bece._smooth.fit.fit_smooth`.
    bin_scale : float or None, default None
        Prior mean of the scale of the shared per-bin deviations; None
        leaves them out (module docstring of :mod:`bece._smooth.toplabel`).
    label_scale : float, default 0.5
        :math:`s_\\kappa`, mean of the exponential component of the label
        shifts' scale :math:`\\kappa` (a penalised-complexity prior: 14% above
        1 logit unit).
    tilt_scale : float, default 0.25
        :math:`s_\\omega`, the same for the label tilts' scale :math:`\\omega`:
        the spread of the labels' logit slopes (inverse temperatures) about
        the shared one, as a fraction of it (14% prior probability that the
        labels' temperatures differ by more than about 50%).
    shared_prob : float, default 0.5
        Prior probability of each scale's "shared" component (mean 0.02
        times :math:`s_\\kappa` or :math:`s_\\omega`: all labels share one
        curve), :mod:`bece._smooth.scale_prior`; 0 gives the exponentials alone.
    """
    n_knots = positive_int(n_knots, "n_knots")
    if n_knots < 3:
        raise ValueError(f"n_knots must be an integer >= 3, got {n_knots}: a natural cubic spline "
                         "with K knots has K - 2 non-linear functions")
    s_a = check_scale(intercept_scale, "intercept_scale")
    s_b = check_scale(slope_scale, "slope_scale")
    s_l = check_scale(smoothness_scale, "smoothness_scale")
    s_t = None if bin_scale is None else check_scale(bin_scale, "bin_scale")
    s_k = check_scale(label_scale, "label_scale")
    s_o = check_scale(tilt_scale, "tilt_scale")
    p_s = check_shared_prob(shared_prob)
    m = atoms.binning.n_bins if s_t is not None else 0
    t = atoms.trials.astype(np.float64)
    basis = SmoothBasis.from_logits(atoms.x, t, n_knots, m)
    # the tilt is a change of the logit slope about logit 0 (p = 1/2), where a
    # per-label temperature has no effect
    center, spread = 0.0, 1.0
    scales = np.concatenate([[s_a, s_b], np.ones(basis.n_spline + basis.n_bins)])
    design = LabelDesign(atoms, basis, center, spread, scales)
    one = (np.ones(1), np.ones(1))
    lam_grid = exponential_grid(s_l, N_LAMBDA_LABEL) if basis.n_spline else (np.array([s_l]), np.ones(1))
    tau_grid = exponential_grid(s_t, N_TAU_LABEL) if s_t is not None else (np.zeros(1), one[1])
    grids = (lam_grid, tau_grid, scale_grid(s_k, N_KAPPA, p_s), scale_grid(s_o, N_OMEGA, p_s))
    points = refine_scales(design, grids, fit_label_grid(design, *grids), (s_k, s_o), p_s)
    return assemble(points, basis=basis, center=center, spread=spread,
                    n_labels=atoms.n_labels, prior_scales=scales, smoothness_scale=s_l,
                    bin_scale=0.0 if s_t is None else s_t, label_scale=s_k, tilt_scale=s_o, shared_prob=p_s,
                    grid=atoms.grid, n_atoms=int(atoms.p.size),
                    log_marginal_calibrated=float(np.dot(atoms.successes, atoms.x)
                                                  - np.dot(t, np.logaddexp(0.0, atoms.x))))
