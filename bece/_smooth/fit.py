"""The Laplace/INLA fit of the smooth calibration curve."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .._base.checks import check_scale, positive_int
from .._base.laplace import (
    backtrack,
    converged,
    exponential_grid,
    grid_fits,
    laplace_mixture_draws,
    not_converged,
)
from .._base.psis import PARETO_K_MAX
from .atoms import Atoms, cell_knots
from .basis import DEFAULT_N_KNOTS, SmoothBasis

__all__ = [
    "fit_smooth",
    "SmoothPosterior",
]

#: The grid of the spline scale lambda and the bin scale tau: GRID_LOW to 10
#: times each prior mean, N_LAMBDA and N_TAU log-spaced points (ratio 1.67
#: and 1.93 between neighbours). The grid starts lower than the other smooth
#: posteriors' (:data:`bece._base.laplace.HYPER_RANGE`): on calibrated data
#: at n = 10^6 the posterior of lambda reaches below 0.01 times its prior
#: mean, and a grid stopping there put 5% of the draws on its first point
#: and the fast path's 5% quantile of the ECE 0.25 posterior sd above
#: NUTS's (4.6e-4 against 3.9e-4, seed 3 of benchmarks/crosscheck_agreement.py;
#: 4.0e-4 from 10^-3, and no further change from 10^-4). The fit takes as
#: long (0.75 s at n = 10^6, 1.1 s at n = 5,000).
GRID_LOW = 1e-3
N_LAMBDA = 19
N_TAU = 15




def _loglik(f: np.ndarray, c: np.ndarray, t: np.ndarray) -> float:
    return float(np.dot(c, f) - np.dot(t, np.logaddexp(0.0, f)))


def _loglik_sigmoid(f: np.ndarray, c: np.ndarray, t: np.ndarray) -> tuple[float, np.ndarray]:
    """:func:`_loglik` (to 1e-16 per atom) and :math:`\\sigma(f)`, from one
    exponential: :math:`\\log(1 + e^f) = \\max(f, 0) + \\log(1 + e^{-|f|})`."""
    e = np.exp(-np.abs(f))
    one_e = 1.0 + e
    ll = float(np.dot(c, f) - np.dot(t, np.log(one_e) + np.maximum(f, 0.0)))
    s = np.where(f >= 0, 1.0, e) / one_e
    return ll, s


def _newton(Ds, tau, bins, starts, nonempty, n_bins, off, c, t, prec, theta, max_iter=100):
    """Mode and negative Hessian of sum(c f - t log(1+e^f)) - theta' P theta / 2.

    f = off + Ds theta_s + tau theta_v[bins], theta = (theta_s, theta_v): a
    smooth design ``Ds`` (J, k) and M bin deviations; atoms sorted by bin
    (``starts`` of the ``nonempty`` bins). The Hessian is assembled by blocks,
    O(J k^2) instead of O(J (k + M)^2). Concave: damped Newton converges.
    """
    k = Ds.shape[1]
    Dt = np.ascontiguousarray(Ds.T)

    def logits(th):
        f = off + th[:k] @ Dt
        if n_bins:
            f = f + tau * th[k:][bins]
        return f

    def objective(th):
        f = logits(th)
        ll, s = _loglik_sigmoid(f, c, t)
        return ll - 0.5 * np.dot(prec * th, th), s

    def hessian(s):
        w = t * s * (1.0 - s)
        H = np.diag(prec)
        Dw = Dt * w
        H[:k, :k] += Dw @ Ds
        if n_bins:
            cross = np.add.reduceat(Dw, starts, axis=1)  # (k, nonempty)
            H[:k, k + nonempty] += tau * cross
            H[k + nonempty, :k] += tau * cross.T
            H[k + nonempty, k + nonempty] += tau**2 * np.add.reduceat(w, starts)
        return H

    obj, s = objective(theta)
    for _ in range(max_iter):
        r = c - t * s
        grad = -prec * theta
        grad[:k] += Dt @ r
        if n_bins:
            grad[k + nonempty] += tau * np.add.reduceat(r, starts)
        H = hessian(s)
        step = np.linalg.solve(H, grad)  # H is symmetric positive definite
        dec = float(np.dot(grad, step))
        if converged(dec):  # H is the Hessian at theta
            return theta, H, obj

        def along(lr: float, theta: np.ndarray = theta, step: np.ndarray = step) -> tuple[float, Any]:
            new_theta = theta + lr * step
            new_obj, new_s = objective(new_theta)
            return new_obj, (new_theta, new_s)

        _, obj, (theta, s) = backtrack(along, obj, dec)
    not_converged("the smooth curve's fit", dec, max_iter)
    return theta, hessian(s), obj


@dataclass(frozen=True)
class SmoothPosterior:
    """The Laplace mixture posterior of the smooth curve.

    The hyper-parameters :math:`h = (\\lambda, \\tau)` (smoothness scale,
    scale of the per-bin deviations) run over a product grid of L values.

    Attributes
    ----------
    basis : SmoothBasis
    lambdas, taus : ndarray of shape (L,)
        The grid of :math:`(\\lambda, \\tau)` pairs (``taus`` is 0 without
        bin deviations).
    prior_mass : ndarray of shape (L,)
        Prior probability each grid pair stands for (sums to 1).
    log_evidence : ndarray of shape (L,)
        Laplace :math:`\\log p(\\text{data} \\mid \\lambda_k, \\tau_k)`.
    weights : ndarray of shape (L,)
        Posterior probability of each grid pair.
    modes : ndarray of shape (L, P)
        :math:`\\hat\\theta_k` (``(a, b, u, v)``).
    chol : ndarray of shape (L, P, P)
        Lower Cholesky factors of the negative Hessians :math:`H_k`.
    prior_scales : ndarray of shape (P,)
        :math:`(s_a, s_b, 1, \\dots, 1)`.
    smoothness_scale, bin_scale : float
        Prior means :math:`s_\\lambda`, :math:`s_\\tau` (``bin_scale`` 0
        without bin deviations).
    log_marginal : float
        :math:`\\log p(\\text{data} \\mid \\text{smooth model})`.
    log_marginal_calibrated : float
        :math:`\\log p(\\text{data} \\mid f(x) = x) = \\sum_j c_j x_j - t_j \\log(1 + e^{x_j})`.
    grid : int or None
        Sub-cells per bin (None: exact, one atom per prediction).
    n_atoms : int
    grid_error : float
        Largest bound on the grid's ECE error over the first 200 draws (0 when
        exact; :mod:`bece._smooth.grid_error`); filled in by :func:`smooth_ece`.
    log_marginal_is, pareto_k, is_ess : float
        Importance-sampling correction of the Laplace mixture
        (:func:`importance_draws`): the log marginal likelihood it
        estimates, the Pareto :math:`\\hat k` of its weights (below 0.7 the
        corrected draws are reliable; Vehtari et al. 2024) and the effective
        sample size of the weights. NaN until computed.
    zero_gap_prior : float
        :math:`\\omega`, the prior probability that an ECE bin's gap is
        exactly 0 (:mod:`bece._smooth.zero_gaps`; 0 when not used).
    prob_zero_gap : ndarray of shape (M,) or None
        Posterior probability that each bin's gap is exactly 0 (None until
        computed).
    """

    basis: SmoothBasis
    lambdas: np.ndarray
    taus: np.ndarray
    prior_mass: np.ndarray
    log_evidence: np.ndarray
    weights: np.ndarray
    modes: np.ndarray
    chol: np.ndarray
    prior_scales: np.ndarray
    smoothness_scale: float
    bin_scale: float
    log_marginal: float
    log_marginal_calibrated: float
    grid: int | None
    n_atoms: int
    grid_error: float = 0.0
    log_marginal_is: float = float("nan")
    pareto_k: float = float("nan")
    is_ess: float = float("nan")
    zero_gap_prior: float = 0.0
    prob_zero_gap: np.ndarray | None = None

    @property
    def log_bayes_factor(self) -> float:
        """:math:`\\log B_{01}`: calibrated (identity curve) against the smooth model.

        Uses the importance-sampling marginal likelihood when it was computed
        and is reliable (Pareto :math:`\\hat k < 0.7`), else the Laplace one.
        """
        return self.log_marginal_calibrated - self.log_marginal_smooth

    @property
    def log_marginal_smooth(self) -> float:
        """The smooth model's log marginal likelihood used for the Bayes factor."""
        if np.isfinite(self.log_marginal_is) and self.pareto_k < PARETO_K_MAX:
            return float(self.log_marginal_is)
        return float(self.log_marginal)

    def column_scale(self, lam: np.ndarray, tau: np.ndarray) -> np.ndarray:
        """Per-draw multipliers of the design columns, shape (S, P): 1 for
        :math:`a, b`, :math:`\\lambda` for the spline, :math:`\\tau` for the bins."""
        b = self.basis
        lam = np.asarray(lam, dtype=np.float64).reshape(-1, 1)
        tau = np.asarray(tau, dtype=np.float64).reshape(-1, 1)
        return np.concatenate([np.ones((lam.shape[0], 2)), np.repeat(lam, b.n_spline, axis=1),
                               np.repeat(tau, b.n_bins, axis=1)], axis=1)

    def sample(
        self, num_samples: int, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Draws of the Laplace mixture (uncorrected; see :func:`importance_draws`).

        Returns
        -------
        beta : ndarray of shape (S, P)
            :math:`(a, b, \\lambda u, \\tau v)`: the curve is
            :math:`x + [1, x, \\phi(x), e_{m(x)}]\\beta`.
        lam, tau : ndarray of shape (S,)
            The hyper-parameters of each draw.
        log_ratio : ndarray of shape (S,)
            :math:`\\log[p(\\theta \\mid \\eta_k)\\,\\text{mass}_k] - \\log[\\pi_k\\,
            \\mathcal N(\\theta; \\hat\\theta_k, H_k^{-1})]` of each draw, its
            component k: adding the log likelihood gives its importance weight.
        """
        k, theta, log_ratio = laplace_mixture_draws(self.modes, self.chol, self.weights,
                                                    self.prior_mass, self.prior_scales,
                                                    num_samples, rng)
        lam, tau = self.lambdas[k], self.taus[k]
        return theta * self.column_scale(lam, tau), lam, tau, log_ratio


def fit_smooth(
    atoms: Atoms,
    *,
    n_knots: int = DEFAULT_N_KNOTS,
    intercept_scale: float = 1.0,
    slope_scale: float = 0.5,
    smoothness_scale: float = 0.5,
    bin_scale: float | None = 0.25,
) -> SmoothPosterior:
    """Laplace mixture posterior of the smooth curve (see the module docstring).

    Parameters
    ----------
    atoms : Atoms
    n_knots : int, default 10
        Knots K >= 3 of the natural cubic spline (K - 2 non-linear functions;
        fewer when the confidences have fewer distinct values), at
        equally spaced quantiles of the distinct logits (of the predictions
        as the cells tell them for fine-grid atoms:
        :func:`~bece._smooth.atoms.cell_knots`).
        The smoothness prior, not the knot count, controls the wiggle; what
        ten knots cannot follow (a staircase) the bin deviations take up.
    intercept_scale : float, default 1.0
        :math:`s_a`: prior sd of the logit shift at p = 0.5 (95% of prior
        curves have accuracy within 0.12..0.88 at confidence 0.5).
    slope_scale : float, default 0.5
        :math:`s_b`: prior sd of the change of slope in logit space
        (temperatures 1/(1+b) of 0.5 to 2 sit at about 1 to 2 sd).
    smoothness_scale : float, default 0.5
        :math:`s_\\lambda`: prior mean of the RMS non-linear deviation, in
        logit units (the exponential PC prior puts 14% on more than 1).
    bin_scale : float or None, default 0.25
        :math:`s_\\tau`: prior mean of the sd of the per-bin logit
        deviations :math:`\\tau v_m`, :math:`v_m \\sim \\mathcal N(0, 1)`
        (exponential PC prior: 2% above 1). None leaves them out (a purely
        smooth curve, which is biased for a curve it cannot follow however
        large n is).
    """
    n_knots = positive_int(n_knots, "n_knots")
    if n_knots < 3:
        raise ValueError(
            f"n_knots must be an integer >= 3, got {n_knots}: a natural cubic spline with K "
            "knots has K - 2 non-linear functions, so 1 or 2 knots would leave only the "
            "linear part of the curve"
        )
    s_a = check_scale(intercept_scale, "intercept_scale")
    s_b = check_scale(slope_scale, "slope_scale")
    s_l = check_scale(smoothness_scale, "smoothness_scale")
    s_t = None if bin_scale is None else check_scale(bin_scale, "bin_scale")
    m = atoms.binning.n_bins if s_t is not None else 0
    knots = None if atoms.exact else cell_knots(atoms, n_knots)
    basis = SmoothBasis.from_logits(atoms.x, atoms.trials.astype(np.float64), n_knots, m, knots=knots)
    Ds = basis.design(atoms.x)
    nonempty, starts = np.unique(atoms.bin, return_index=True)
    c = atoms.successes.astype(np.float64)
    t = atoms.trials.astype(np.float64)
    x = atoms.x
    scales = np.concatenate([[s_a, s_b], np.ones(basis.n_spline + basis.n_bins)])
    prec = 1.0 / scales**2
    lam_v, lam_m = (exponential_grid(s_l, N_LAMBDA, low=GRID_LOW) if basis.n_spline
                    else (np.array([s_l]), np.ones(1)))
    tau_v, tau_m = (exponential_grid(s_t, N_TAU, low=GRID_LOW) if m and s_t is not None
                    else (np.zeros(1), np.ones(1)))
    # a snake through the grid so that each fit starts from a neighbour's mode
    pairs = [(i, j if i % 2 == 0 else tau_v.size - 1 - j)
             for i in range(lam_v.size) for j in range(tau_v.size)]
    lambdas = np.array([lam_v[i] for i, _ in pairs])
    taus = np.array([tau_v[j] for _, j in pairs])
    mass = np.array([lam_m[i] * tau_m[j] for i, j in pairs])
    post = SmoothPosterior(
        basis=basis, lambdas=lambdas, taus=taus, prior_mass=mass, log_evidence=np.empty(0),
        weights=np.empty(0), modes=np.empty(0), chol=np.empty(0), prior_scales=scales,
        smoothness_scale=s_l, bin_scale=0.0 if s_t is None else s_t, log_marginal=np.nan,
        log_marginal_calibrated=_loglik(x, c, t), grid=atoms.grid, n_atoms=int(atoms.p.size),
    )
    cols = post.column_scale(lambdas, taus)
    ks = basis.n_smooth

    def fit_at(k: int, start: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        theta, H, obj = _newton(Ds * cols[k, :ks], taus[k], atoms.bin, starts, nonempty, m,
                                x, c, t, prec, start)
        return theta, np.linalg.cholesky(H), obj

    modes, chol, log_ev, weights, log_marg = grid_fits(fit_at, mass, scales)
    return replace(post, log_evidence=log_ev, weights=weights, modes=modes, chol=chol,
                   log_marginal=log_marg)
