r"""Paired comparison of two classifiers under the smooth calibration-curve model.

Two models A and B predict the same n examples. Each has its own smooth
curve posterior (:mod:`bece.smooth`: Laplace over the coefficients on a grid
of hyper-parameters), fitted to its own outcomes :math:`z^a_i, z^b_i` and
confidences. Both are scored on the *same* outcomes, so the two posteriors
are not independent: an example whose outcome happened to fall above its
expected value pushes both curves up where the two models put it. Drawing
the two curves independently and sharing only the bootstrap weights of the
confidences gives the difference :math:`\mathrm{ECE}_a - \mathrm{ECE}_b` the
spread of two independent posteriors.

Construction (perturb-and-MAP with shared perturbations). Under the
Laplace approximation at hyper-parameter point :math:`k`, model A's
coefficients have posterior :math:`\mathcal N(\hat\theta_k, H_k^{-1})` with

.. math::

    H_k = C_k^\top W_k C_k + P, \qquad W_k = \mathrm{diag}\big(t_j
    \sigma(f_k(x_j))\,\sigma(-f_k(x_j))\big),

:math:`C_k` the design of the atoms (:math:`\partial f / \partial\theta`),
:math:`P` the prior precision. A draw is the fit to randomly perturbed
data (randomize-then-optimize; exact for a Gaussian likelihood,
Papandreou & Yuille 2010, Bardsley et al. 2014):

.. math::

    \theta = \hat\theta_k + H_k^{-1}\big(C_k^\top \delta z + P^{1/2}\eta\big),
    \qquad \delta z_j \sim \mathcal N(0, W_{k,jj}),\ \eta \sim \mathcal N(0, I),

whose covariance is :math:`H_k^{-1}(C_k^\top W_k C_k + P)H_k^{-1} =
H_k^{-1}`: each model's marginal is its own Laplace mixture, whatever the
perturbations of the other. :math:`\delta z` is a perturbation of the
*outcomes*, and the outcomes are shared, so the pair uses one perturbation
per example: with standard normals :math:`\varepsilon_i, \varepsilon'_i`,

.. math::

    \delta z^a_i = \sqrt{v^a_i}\,\varepsilon_i, \qquad
    \delta z^b_i = \sqrt{v^b_i}\,\big(\rho_i\varepsilon_i +
        \sqrt{1 - \rho_i^2}\,\varepsilon'_i\big),

:math:`v_i = \sigma(1 - \sigma)` of each curve. :math:`\rho_i` is the
correlation of the two outcomes: 1 when both models predict the same label
(binary ``P(y=1)`` input always: :math:`z^a = z^b`), and when they predict
different labels (only one can be right) :math:`\rho_i =
-\sqrt{\pi^a_i\pi^b_i/((1-\pi^a_i)(1-\pi^b_i))}` with :math:`\pi` the curves
at the best hyper-parameter point's mode (clipped to [-1, 0]). Two examples'
perturbations are independent, as their outcomes are. The prior parts
:math:`\eta^a, \eta^b` are independent, as the two models' priors are:
randomize-then-optimize for two models with independent priors whose
likelihoods share the data perturbs the shared data once and each prior on
its own. (Sharing :math:`\eta` as well makes identical predictions give a
difference of exactly 0, but it narrowed the interval past what the data
support: coverage of the true difference 0.70 in 100 replications at
n = 1000 on two similar temperatures, against 0.9 nominal.) Each draw
picks both models' hyper-parameter points from one uniform (inverse CDF
over each grid in the same order), an approximation of the dependence the
shared outcomes give the two hyper-parameter posteriors. The correlation of
the two curve draws is then that of the two fits under resampling of the
shared outcomes, which is what the binned paired comparison's joint
Dirichlet over (correct, bin) cells of both models expresses for bins; as
there, identical predictions get a narrow posterior around 0, not a point
mass.

Distribution of the confidences: one Bayesian bootstrap over the examples
(Dirichlet(1, ..., 1) weights :math:`g_i`; on the fine grid one
:math:`\mathrm{Gamma}(t)` weight per joint cell of both models' sub-cells,
the exact law of the cell's total), shared by both ECEs:

.. math::

    \mathrm{ECE}_a = \sum_m \Big|\sum_{i \in m^a} g_i\,
        \big(\sigma(f_a(x^a_i)) - p^a_i\big)\Big| \Big/ \sum_i g_i,

likewise :math:`\mathrm{ECE}_b` with B's bins, curve and confidences, and
:math:`\Delta = \mathrm{ECE}_a - \mathrm{ECE}_b` per draw.

What differs from :func:`bece._smooth.posterior.smooth_ece` on one model: the draws
are the Laplace mixture itself (no Pareto-smoothed importance resampling:
resampling each model by its own weights would break the coupling), and
each model's average with exact calibration uses its Laplace Bayes factor
(:mod:`bece._smooth.paired_average`, which also says how the two models'
indicators of exact calibration are drawn jointly).
The fits are those of :func:`~bece._smooth.posterior.smooth_ece` (same atoms, same
defaults). Above 2,000 predictions the atoms are the fine grid's sub-cells
(:mod:`bece._smooth.atoms`); the perturbations and bootstrap weights live on
the joint cells (A's sub-cell, B's sub-cell, same label or not), so their
sums over a model's sub-cell have the laws above.

Measured (``benchmarks/paired_smooth_study.py``; 100 replications per row at
n = 300 and 1000, 50 at n = 10^4, 1,000 joint draws; coverage of the true
difference by the 90% interval, and the median width ratio paired /
independent from the same fits): two temperatures of the same binary scores
(true difference +0.017) 0.96 / 0.97 / 1.00 at ratio 0.39 / 0.35 / 0.29;
top-label K = 10, temperatures 0.7 and 0.8 (+0.041, n = 300 only) 1.00 at
0.32; top-label with B's own logit noise (labels differ; -0.008) 0.97 /
0.95 / 0.88 at 0.78; under- against over-confident binary (-0.014, n = 300
only) 0.96 at 1.07 (errors that move apart do not narrow). These are the
smooth models alone; :mod:`bece._smooth.paired_average` has what averaging
with exact calibration (the default) does, e.g. 0.92 / 0.96 instead of
0.55 / 0.34 for a calibrated model against a miscalibrated one.

The statistics path: two :class:`~bece.CalibrationStats` (one per model)
cannot give this posterior, because they do not say which of A's cells each
of B's examples shares; :class:`~bece.PairedStats` keeps the joint cells
(A's fine sub-cell, B's fine sub-cell, correct under each, same label), and
:func:`smooth_compare_from_stats` draws from them. Above 2,000 predictions
the comparison works on the fine grid: each model's atoms are its non-empty
fine sub-cells, and the outcome perturbations and bootstrap weights live on
the joint cells (:func:`joint_atoms`), all functions of the joint statistics,
which add across chunks. With the same seed its draws are those of
``smooth_compare(..., grid=128)`` on the predictions themselves, to float64
rounding of the sums (the same atoms in the same order).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import linalg, sparse, special

from .._base.checks import positive_int
from .._base.laplace import single_threaded_blas
from .._base.random import as_generator
from .._base.typing import BinningSpec, Seed
from .._results.comparison import Comparison
from .._results.ece import SmoothBayesianECE
from .._stats import exact
from .._stats.binning import Binning, make_binning
from .._stats.calibration_stats import CalibrationStats
from .._stats.inputs import DEFAULT_INPUTS, Inputs
from .._stats.paired_stats import PairedStats, paired_outcomes
from .atoms import Atoms, atoms_and_ece_stats, check_grid, make_atoms
from .average import DEFAULT_PRIOR_ODDS
from .basis import logit_confidence
from .draws import curve_grid, curve_values
from .fit import SmoothPosterior, fit_smooth
from .paired_average import DEFAULT_COUPLING, average_pair, check_coupling
from .posterior import check_prior_odds, check_smooth_draws

__all__ = [
    "PairedSide",
    "bootstrap_ece",
    "label_correlation",
    "outcome_correlation",
    "paired_comparison",
    "paired_draws",
    "paired_result",
    "smooth_compare",
    "joint_atoms",
    "smooth_compare_from_stats",
]

CHUNK_ELEMS = 2_000_000


@dataclass(frozen=True)
class PairedSide:
    """One model of the pair: its atoms, fit, and where its examples sit.

    Attributes
    ----------
    atoms : Atoms
        The model's atoms (as :func:`bece._smooth.posterior.smooth_ece` builds them).
    post : SmoothPosterior
        Its Laplace mixture (:func:`~bece._smooth.fit.fit_smooth`).
    stats : CalibrationStats
        Its statistics in the ECE bins (plug-in ECE, tables).
    atom_of : ndarray of shape (n,), int64, or None
        The atom of each example, in the input order (None from statistics).
    z, p : ndarray of shape (n,) or None
        Its outcomes and confidences, in the input order (None from statistics).
    """

    atoms: Atoms
    post: SmoothPosterior
    stats: CalibrationStats
    atom_of: np.ndarray | None = None
    z: np.ndarray | None = None
    p: np.ndarray | None = None

    @classmethod
    def fit(cls, z: np.ndarray, p: np.ndarray, binning: Binning, grid: int | None,
            **model: Any) -> PairedSide:
        atoms = make_atoms(z, p, binning, grid)
        if atoms.exact:  # make_atoms sorts the examples by bin (stable)
            order = np.argsort(binning.index(p), kind="stable")
            atom_of = np.empty(p.size, dtype=np.int64)
            atom_of[order] = np.arange(p.size)
        else:  # one atom per non-empty sub-cell, in order: the last lower edge <= p
            assert atoms.lower is not None
            atom_of = np.searchsorted(atoms.lower, p, side="right").astype(np.int64) - 1
        stats = CalibrationStats.from_outcomes(z, p, binning)
        return cls(atoms, fit_smooth(atoms, **model), stats, atom_of, z, p)

    def mode_logits(self, k: int) -> np.ndarray:
        """Logits of the atoms at hyper-parameter point ``k``'s mode, shape (J,)."""
        return self._mode_logits()[k]

    def _base_design(self) -> np.ndarray:
        """``[1, x, phi(x), onehot(bin)]`` at the atoms (unscaled), shape (J, P); cached."""
        cache = self.__dict__.setdefault("_cache", {})
        if "design" not in cache:
            cache["design"] = self.post.basis.design(self.atoms.x, self.atoms.bin)
        return cache["design"]

    def _scales(self) -> np.ndarray:
        """Column scales of every hyper-parameter point, shape (G, P)."""
        return self.post.column_scale(self.post.lambdas, self.post.taus)

    def _mode_logits(self) -> np.ndarray:
        cache = self.__dict__.setdefault("_cache", {})
        if "logits" not in cache:
            cache["logits"] = self.atoms.x + (self.post.modes * self._scales()) @ self._base_design().T
        return cache["logits"]

    def design(self, k: int) -> np.ndarray:
        """:math:`C_k = \\partial f / \\partial\\theta` at the atoms, shape (J, P)."""
        return self._base_design() * self._scales()[k]

    def hessian(self, k: int) -> np.ndarray:
        """:math:`C_k^\\top W_k C_k + P` rebuilt from the atoms (for checks), shape (P, P)."""
        c = self.design(k)
        f = self.mode_logits(k)
        w = self.atoms.trials * special.expit(f) * special.expit(-f)
        return (c.T * w) @ c + np.diag(1.0 / self.post.prior_scales**2)

    def perturbed(self, comp: np.ndarray, noise: np.ndarray, eta: np.ndarray) -> np.ndarray:
        """Coefficient draws :math:`\\beta = (\\hat\\theta_k + H_k^{-1}(C_k^\\top
        \\sqrt{v}\\,u + P^{1/2}\\eta))\\cdot\\text{scale}_k`, shape (S, P).

        ``comp`` (S,) the hyper-parameter point of each draw; ``noise`` (S, J)
        the standard outcome perturbation summed over each atom (variance
        ``trials``); ``eta`` (S, >= P) standard normals.
        """
        post = self.post
        p_dim = post.modes.shape[1]
        f = self._mode_logits()[comp]  # (S, J)
        root_v = np.sqrt(special.expit(f) * special.expit(-f))
        scales = self._scales()[comp]
        rhs = ((noise * root_v) @ self._base_design()) * scales + eta[:, :p_dim] / post.prior_scales
        out = np.empty((comp.size, p_dim))
        for k in np.unique(comp):
            sel = np.flatnonzero(comp == k)
            delta = linalg.cho_solve((post.chol[k], True), rhs[sel].T, check_finite=False).T
            out[sel] = post.modes[k] + delta
        return out * scales


def _components(weights: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Hyper-parameter point of each draw from uniforms ``u`` (inverse CDF)."""
    cdf = np.cumsum(weights)
    return np.minimum(np.searchsorted(cdf, u * cdf[-1], side="right"), weights.size - 1)


def _joint_cells(a: PairedSide, b: PairedSide, same: np.ndarray) -> dict[str, np.ndarray]:
    """The joint atoms: one per (A's atom, B's atom, same label) with its size and
    each model's mean confidence, in increasing (A's atom, B's atom, same)."""
    assert a.atom_of is not None and b.atom_of is not None and a.p is not None and b.p is not None
    key = (a.atom_of * b.atoms.p.size + b.atom_of) * 2 + same.astype(np.int64)
    uniq, inv = np.unique(key, return_inverse=True)
    inv = inv.reshape(-1)
    t = np.bincount(inv, minlength=uniq.size).astype(np.float64)
    # exact sums (bece._stats.exact), as the statistics path sums them
    pa = exact.value(exact.cell_sums(inv, a.p, uniq.size)) / t
    pb = exact.value(exact.cell_sums(inv, b.p, uniq.size)) / t
    return {"t": t, "atom_a": (uniq // 2) // b.atoms.p.size, "atom_b": (uniq // 2) % b.atoms.p.size,
            "same": (uniq % 2).astype(bool), "p_a": pa, "p_b": pb}


def bootstrap_ece(side: PairedSide, p: np.ndarray, beta: np.ndarray, g: np.ndarray,
              onehot: sparse.csr_matrix, smooth_t: np.ndarray) -> tuple[np.ndarray, ...]:
    """ECE and pooled per-bin accuracy, confidence, weight of draws ``beta`` at
    joint atoms with confidences ``p``, normalised weights ``g`` (s, J) and the
    smooth columns ``smooth_t`` (k, J) of the curve there."""
    binning = side.atoms.binning
    bins = binning.index(p)
    k = side.post.basis.n_smooth
    f = beta[:, :k] @ smooth_t
    f += logit_confidence(p)
    if side.post.basis.n_bins:
        f += beta[:, k:][:, bins]
    s = special.expit(f)
    wsum = np.asarray((onehot.T @ g.T).T)
    acc_num = np.asarray((onehot.T @ (g * s).T).T)
    conf_num = np.asarray((onehot.T @ (g * p).T).T)
    ece = np.abs(acc_num - conf_num).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc, conf = acc_num / wsum, conf_num / wsum
    empty = np.flatnonzero(wsum[0] == 0)
    if empty.size:  # no prediction in the bin: the curve at its centre
        e = binning.edges
        center = 0.5 * (e[:-1] + e[1:])[empty]
        acc[:, empty] = special.expit(side.post.basis.logits(logit_confidence(center), empty, beta))
        conf[:, empty] = center
    return ece, acc, conf, wsum


def outcome_correlation(a: PairedSide, b: PairedSide, cells: dict[str, np.ndarray]) -> np.ndarray:
    """:math:`\\rho` of each joint atom: 1 for the same predicted label, else
    :math:`-\\sqrt{\\pi_a\\pi_b/((1-\\pi_a)(1-\\pi_b))}` (clipped to [-1, 0]) with
    each curve at its best hyper-parameter point's mode."""
    rho = np.ones(cells["t"].size)
    diff = ~cells["same"]
    if diff.any():
        fa = a.mode_logits(int(np.argmax(a.post.weights)))[cells["atom_a"][diff]]
        fb = b.mode_logits(int(np.argmax(b.post.weights)))[cells["atom_b"][diff]]
        rho[diff] = label_correlation(fa, fb)
    return rho


def label_correlation(f_a: np.ndarray, f_b: np.ndarray) -> np.ndarray:
    """Correlation of :math:`z^a = [y = l_a]` and :math:`z^b = [y = l_b]` for
    labels :math:`l_a \\ne l_b` with :math:`P(z = 1) = \\sigma(f)`:

    .. math::

        \\rho = \\frac{-\\pi_a\\pi_b}{\\sqrt{\\pi_a(1-\\pi_a)\\pi_b(1-\\pi_b)}}
             = -e^{(f_a + f_b)/2},

    clipped at -1 (where :math:`\\pi_a + \\pi_b > 1`, which no joint law has)."""
    return -np.minimum(np.exp(0.5 * (np.asarray(f_a) + np.asarray(f_b))), 1.0)


def _bootstrap_weights(rng: np.random.Generator, t: np.ndarray, size: int, exact: bool) -> np.ndarray:
    """Normalised Bayesian-bootstrap weights (size, J): Exp(1) per example, Gamma(t) per cell."""
    g = rng.standard_exponential((size, t.size)) if exact else rng.standard_gamma(t, size=(size, t.size))
    return g / g.sum(axis=1, keepdims=True)


def paired_draws(a: PairedSide, b: PairedSide, same: np.ndarray | None, num_samples: int,
                 rng: np.random.Generator, *, coupled: bool = True,
                 share_prior: bool = False,
                 cells: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """Joint draws of both models' ECEs (module docstring).

    Parameters
    ----------
    a, b : PairedSide
    same : ndarray of shape (n,), bool
        Whether both models predict the same label for each example (all
        True for binary ``P(y=1)`` input).
    num_samples : int
    rng : numpy.random.Generator
    coupled : bool, default True
        False draws B's perturbations, hyper-parameter points and bootstrap
        weights independently of A's: two independent posteriors, for
        comparison (the width a paired analysis avoids).
    share_prior : bool, default False
        With ``coupled``, also share the prior part :math:`\\eta` of the
        perturbations. By default only the outcome perturbations, bootstrap
        weights and hyper-parameter uniforms are shared (module docstring:
        the two priors are independent); sharing :math:`\\eta` too narrowed
        the interval past what the data support.
    cells : dict, optional
        The joint atoms (``t``, ``atom_a``, ``atom_b``, ``same``, ``p_a``,
        ``p_b``, each of shape (J,), in increasing (atom_a, atom_b, same))
        when the sides come from statistics (``same`` is then None).

    Returns
    -------
    dict with ``beta_a``, ``beta_b`` (S, P), ``comp_a``, ``comp_b`` (S,),
    ``ece_a``, ``ece_b`` (S,) and ``accuracy_*``, ``confidence_*``,
    ``weight_*`` (S, M).
    """
    if cells is None:
        assert same is not None
        cells = _joint_cells(a, b, same)
    t = cells["t"]
    j = t.size
    rho = outcome_correlation(a, b, cells)
    u = rng.random(num_samples)
    u_b = u if coupled else rng.random(num_samples)
    comp_a, comp_b = _components(a.post.weights, u), _components(b.post.weights, u_b)
    p_max = max(a.post.modes.shape[1], b.post.modes.shape[1])
    eta = rng.standard_normal((num_samples, p_max))
    eta_b = eta if coupled and share_prior else rng.standard_normal((num_samples, p_max))
    if not coupled:
        rho = np.zeros_like(rho)
    # outcome perturbations per joint atom (variance t), summed into each model's atoms
    agg_a = sparse.csr_matrix((np.ones(j), (cells["atom_a"], np.arange(j))), shape=(a.atoms.p.size, j))
    agg_b = sparse.csr_matrix((np.ones(j), (cells["atom_b"], np.arange(j))), shape=(b.atoms.p.size, j))
    beta_a = np.empty((num_samples, a.post.modes.shape[1]))
    beta_b = np.empty((num_samples, b.post.modes.shape[1]))
    exact = a.atoms.exact and b.atoms.exact and bool(np.all(t == 1))
    out: dict[str, np.ndarray] = {"comp_a": comp_a, "comp_b": comp_b}
    for tag, side in (("a", a), ("b", b)):
        m = side.atoms.binning.n_bins
        out[f"ece_{tag}"] = np.empty(num_samples)
        for name in ("accuracy", "confidence", "weight"):
            out[f"{name}_{tag}"] = np.empty((num_samples, m))
    onehot_a = sparse.csr_matrix((np.ones(j), (np.arange(j), a.atoms.binning.index(cells["p_a"]))),
                                 shape=(j, a.atoms.binning.n_bins))
    onehot_b = sparse.csr_matrix((np.ones(j), (np.arange(j), b.atoms.binning.index(cells["p_b"]))),
                                 shape=(j, b.atoms.binning.n_bins))
    smooth_cols = {tag: np.ascontiguousarray(side.post.basis.design(logit_confidence(cells[f"p_{tag}"])).T)
                   for tag, side in (("a", a), ("b", b))}
    root_t = np.sqrt(t)
    lone = np.sqrt(np.clip(1.0 - rho**2, 0.0, None))
    step = max(1, CHUNK_ELEMS // max(j, 1))
    for lo in range(0, num_samples, step):
        hi = min(num_samples, lo + step)
        e1 = rng.standard_normal((hi - lo, j)) * root_t
        e2 = e1 * rho + rng.standard_normal((hi - lo, j)) * root_t * lone
        beta_a[lo:hi] = a.perturbed(comp_a[lo:hi], np.asarray((agg_a @ e1.T).T), eta[lo:hi])
        beta_b[lo:hi] = b.perturbed(comp_b[lo:hi], np.asarray((agg_b @ e2.T).T), eta_b[lo:hi])
        g = _bootstrap_weights(rng, t, hi - lo, exact)
        g_b = g if coupled else _bootstrap_weights(rng, t, hi - lo, exact)
        for tag, side, beta, onehot, w in (("a", a, beta_a, onehot_a, g), ("b", b, beta_b, onehot_b, g_b)):
            ece, acc, conf, wt = bootstrap_ece(side, cells[f"p_{tag}"], beta[lo:hi], w, onehot,
                                           smooth_cols[tag])
            out[f"ece_{tag}"][lo:hi] = ece
            out[f"accuracy_{tag}"][lo:hi] = acc
            out[f"confidence_{tag}"][lo:hi] = conf
            out[f"weight_{tag}"][lo:hi] = wt
    out.update(beta_a=beta_a, beta_b=beta_b)
    return out


def paired_result(side: PairedSide, d: dict[str, np.ndarray], tag: str,
                  kind: str | None) -> SmoothBayesianECE:
    """One model's :class:`~bece.SmoothBayesianECE` from the joint draws ``d``
    (``tag`` "a" or "b"; ``prior_odds`` 0)."""
    from .._metrics.binned import plugin_ece

    post, atoms = side.post, side.atoms
    beta, comp = d[f"beta_{tag}"], d[f"comp_{tag}"]
    points = curve_grid(side.p if atoms.exact and side.p is not None else atoms.p)
    # the grid error bound of :mod:`bece._smooth.grid_error` is not computed here
    params = replace(post, grid_error=0.0 if atoms.exact else float("nan"))
    draws = d[f"ece_{tag}"]
    draws.setflags(write=False)
    return SmoothBayesianECE(
        draws=draws, accuracy=d[f"accuracy_{tag}"], confidence=d[f"confidence_{tag}"],
        weight=d[f"weight_{tag}"], plugin=plugin_ece(side.stats), stats=side.stats.with_kind(kind),
        model="smooth", method="laplace-paired", preset=None, params=params, curve_grid=points,
        curve=curve_values(post.basis, atoms.binning, points, beta), coefficients=beta,
        smoothness=post.lambdas[comp], bin_sd=post.taus[comp], prob_calibrated=0.0, prior_odds=0.0,
    )


def smooth_compare(
    y_true: ArrayLike,
    y_prob_a: ArrayLike,
    y_prob_b: ArrayLike,
    *,
    y_pred_a: ArrayLike | None = None,
    y_pred_b: ArrayLike | None = None,
    n_bins: int | None = None,
    binning: BinningSpec | Binning = "uniform",
    grid: str | int | None = "auto",
    num_samples: int = 10_000,
    seed: Seed = 0,
    inputs: Inputs = DEFAULT_INPUTS,
    prior_odds: float = DEFAULT_PRIOR_ODDS,
    coupling: str = DEFAULT_COUPLING,
) -> Comparison:
    """Paired posterior of two models' ECEs under the smooth calibration-curve model.

    ``bece.compare(..., model="smooth")`` calls this.

    Parameters
    ----------
    y_true : array_like of shape (n,)
        True labels, shared by both models.
    y_prob_a, y_prob_b : array_like of shape (n,) or (n, K)
        Each model's ``P(y=1)`` (binary) or class probabilities (top-label
        confidence: the row maximum, correct = ``[argmax == y_true]``), of
        the same form; row ``i`` of each is the prediction for example ``i``.
    y_pred_a, y_pred_b : array_like of shape (n,), optional
        Predicted labels (triples y_pred, y_true, confidence); then
        ``y_prob_*`` is the confidence of ``y_pred_*``.
    n_bins : int, default 15
        ECE bins M of each model.
    binning : {"uniform", "quantile"} or array_like, default "uniform"
        Applied to each model's confidences separately.
    grid : "auto", None or int, default "auto"
        Atoms of each model's fit, as :func:`bece._smooth.posterior.smooth_ece`
        (exact up to 2,000 predictions, 128 sub-cells per bin above).
    num_samples : int, default 10_000
        Joint draws S. Cost per draw: both curves at the joint atoms (at
        most n, one per example up to 2,000).
    seed : int or numpy.random.Generator, default 0
    inputs : Inputs, optional
        How ``y_true`` and both ``y_prob`` are read: the input keywords of
        :func:`bece.compare` as one :class:`~bece._stats.inputs.Inputs`.
    prior_odds : float, default :data:`bece._smooth.average.DEFAULT_PRIOR_ODDS`
        Prior odds of exact calibration of each model: each model's draws
        are averaged with the identity curve (ECE exactly 0) by its
        posterior probability, as :func:`bece.bayesian_ece` does for one
        model (:mod:`bece._smooth.paired_average`). 0: the smooth models alone.
    coupling : {"independent", "shared"}, default "independent"
        How the two models' indicators of exact calibration are drawn
        (:mod:`bece._smooth.paired_average`, which has the study that chose
        the default).

    Returns
    -------
    Comparison
        ``.a``, ``.b``: :class:`~bece.SmoothBayesianECE` (``model="smooth"``,
        ``method="laplace-paired"``, ``prob_calibrated`` and ``prior_odds``
        set); ``.diff_draws``,
        ``.prob_a_better``, ``.interval(prob)``; ``.counts`` the joint counts
        of (correct under A, A's bin, correct under B, B's bin), int64
        ``(2, M, 2, M)``; ``.concentration`` zeros of that shape (the smooth
        model has no Dirichlet over cells).

    Notes
    -----
    The module docstring gives the construction and why it keeps the
    pairing: the outcome perturbations that make each curve draw are shared
    example by example, so the difference has the width the shared outcomes
    leave it, not that of two independent posteriors.

    Examples
    --------
    >>> import numpy as np
    >>> from bece._smooth.paired import smooth_compare
    >>> rng = np.random.default_rng(0)
    >>> t = rng.uniform(size=1000)
    >>> y = (rng.uniform(size=1000) < t).astype(int)
    >>> c = smooth_compare(y, t, t**0.7, n_bins=10, num_samples=1000, seed=1)
    >>> c.a.model, c.diff_draws.shape
    ('smooth', (1000,))
    >>> bool(c.interval(0.9)[1] < 0)               # t is calibrated, t**0.7 is not
    True
    """
    o = paired_outcomes(y_true, y_prob_a, y_prob_b, (y_pred_a, y_pred_b), inputs)
    z_a, p_a, z_b, p_b, n = o.z_a, o.p_a, o.z_b, o.p_b, o.p_a.shape[0]
    num_samples = positive_int(num_samples, "num_samples")
    prior_odds = check_prior_odds(prior_odds)
    check_coupling(coupling)
    rng = as_generator(seed)
    bin_a, bin_b = make_binning(p_a, n_bins, binning), make_binning(p_b, n_bins, binning)
    r = check_grid(grid, n)
    check_smooth_draws(2 * num_samples, 10, max(bin_a.n_bins, bin_b.n_bins))
    with single_threaded_blas():
        a = PairedSide.fit(z_a, p_a, bin_a, r)
        b = PairedSide.fit(z_b, p_b, bin_b, r)
        d = paired_draws(a, b, o.same, num_samples, rng)
    ia, ib = bin_a.index(p_a), bin_b.index(p_b)
    m_a, m_b = bin_a.n_bins, bin_b.n_bins
    cell = ((z_a.astype(np.int64) * m_a + ia) * 2 + z_b.astype(np.int64)) * m_b + ib
    counts = np.bincount(cell, minlength=4 * m_a * m_b).astype(np.int64).reshape(2, m_a, 2, m_b)
    return paired_comparison(a, b, d, (o.kind, o.kind), counts, prior_odds, coupling, rng)


def paired_comparison(a: PairedSide, b: PairedSide, d: dict[str, np.ndarray],
                      kinds: tuple[str | None, str | None], counts: np.ndarray, prior_odds: float,
                      coupling: str, rng: np.random.Generator) -> Comparison:
    """The :class:`~bece.Comparison` of the joint draws ``d``, each model
    averaged with exact calibration (:mod:`bece._smooth.paired_average`)."""
    res_a, res_b = average_pair(paired_result(a, d, "a", kinds[0]), paired_result(b, d, "b", kinds[1]),
                                prior_odds, rng, coupling)
    diff = res_a.draws - res_b.draws
    diff.setflags(write=False)
    counts.setflags(write=False)
    return Comparison(a=res_a, b=res_b, diff_draws=diff, counts=counts,
                      concentration=np.zeros(counts.shape))


def joint_atoms(stats: PairedStats, atom_a: np.ndarray, atom_b: np.ndarray,
                n_atoms_b: int) -> dict[str, np.ndarray]:
    """The joint atoms of :func:`bece._smooth.paired.paired_draws` from joint statistics.

    ``atom_a``, ``atom_b`` map each model's fine cells to its atoms; one
    joint atom per (A's atom, B's atom, same label), in that increasing
    order, with its size ``t`` and each model's mean confidence."""
    c = stats.cells()
    key = (atom_a[c["bin_a"]] * n_atoms_b + atom_b[c["bin_b"]]) * 2 + c["same"].astype(np.int64)
    uniq, inv = np.unique(key, return_inverse=True)
    inv = inv.reshape(-1)
    t = np.bincount(inv, weights=stats.counts, minlength=uniq.size)
    pa, pb = exact.value(exact.regroup(stats._exact[:2], inv, uniq.size))  # as the array path
    return {"t": t, "atom_a": (uniq // 2) // n_atoms_b, "atom_b": (uniq // 2) % n_atoms_b,
            "same": (uniq % 2).astype(bool), "p_a": pa / t, "p_b": pb / t}


def smooth_compare_from_stats(
    stats: PairedStats,
    *,
    n_bins: int | None = None,
    binning: BinningSpec | Binning = "uniform",
    binning_b: BinningSpec | Binning | None = None,
    num_samples: int = 10_000,
    seed: Seed = 0,
    prior_odds: float = DEFAULT_PRIOR_ODDS,
    coupling: str = DEFAULT_COUPLING,
) -> Comparison:
    """Paired smooth posterior of two models' ECEs from joint statistics in fine bins.

    ``bece.posterior_compare(stats, model="smooth")`` calls this.

    Parameters
    ----------
    stats : PairedStats
        Joint statistics in fine bins that refine each model's ECE bins
        (``binning=bece.smooth.fine_binning(n_bins)``), possibly added over chunks.
    n_bins, binning : optional
        The ECE bins (default 15 uniform) of model A, and of B unless
        ``binning_b``; ``"quantile"`` raises (pass edges, as
        :func:`bece.smooth.fine_binning`).
    binning_b : optional
        B's ECE bins when they differ from A's.
    num_samples, seed, prior_odds, coupling
        As :func:`bece._smooth.paired.smooth_compare`.

    Returns
    -------
    Comparison
        As :func:`~bece._smooth.paired.smooth_compare` with ``grid=128``
        (module docstring); ``.a.stats``, ``.b.stats`` are each model's
        statistics added up to its ECE bins, ``.counts`` the joint counts
        in the ECE bins.

    Raises
    ------
    ValueError
        ``stats`` not a PairedStats or empty; its bins do not refine the ECE
        bins; a bad option.

    Examples
    --------
    >>> import numpy as np
    >>> from bece import PairedStats
    >>> from bece.smooth import fine_binning
    >>> from bece._smooth.paired import smooth_compare
    >>> from bece._smooth.paired import smooth_compare_from_stats
    >>> rng = np.random.default_rng(0)
    >>> t = rng.uniform(size=3000)
    >>> y = (rng.uniform(size=3000) < t).astype(int)
    >>> fine = fine_binning(10)
    >>> parts = [PairedStats.from_arrays(y[i:i + 1000], t[i:i + 1000], t[i:i + 1000] ** 0.7,
    ...                                  binning=fine) for i in range(0, 3000, 1000)]
    >>> c = smooth_compare_from_stats(sum(parts), n_bins=10, num_samples=500, seed=1)
    >>> d = smooth_compare(y, t, t**0.7, n_bins=10, num_samples=500, seed=1)
    >>> bool(np.allclose(c.diff_draws, d.diff_draws, rtol=1e-9, atol=1e-12))
    True
    """
    if not isinstance(stats, PairedStats):
        raise ValueError(f"stats must be a PairedStats, got {type(stats).__name__}")
    if stats.n == 0:
        raise ValueError("stats holds no predictions (n = 0)")
    num_samples = positive_int(num_samples, "num_samples")
    prior_odds = check_prior_odds(prior_odds)
    check_coupling(coupling)
    rng = as_generator(seed)
    sides, atom_of_cell, bin_of_cell = [], [], []
    for tag, ece in (("a", binning), ("b", binning if binning_b is None else binning_b)):
        fine = getattr(stats, f"stats_{tag}")
        atoms, coarse = atoms_and_ece_stats(fine, n_bins, ece)
        # the atoms are the non-empty fine cells in order
        rank = np.cumsum(fine.bin_counts > 0) - 1
        atom_of_cell.append(rank)
        bin_of_cell.append(atoms.bin[np.maximum(rank, 0)])
        sides.append((atoms, coarse))
    check_smooth_draws(2 * num_samples, 10, max(s[0].binning.n_bins for s in sides))
    with single_threaded_blas():
        a, b = (PairedSide(atoms, fit_smooth(atoms), coarse) for atoms, coarse in sides)
        cells = joint_atoms(stats, atom_of_cell[0], atom_of_cell[1], b.atoms.p.size)
        d = paired_draws(a, b, None, num_samples, rng, cells=cells)
    counts = stats.joint_counts(bin_of_cell[0], bin_of_cell[1], a.atoms.binning.n_bins,
                                b.atoms.binning.n_bins)
    return paired_comparison(a, b, d, (stats.kind, stats.kind), counts, prior_odds, coupling, rng)
