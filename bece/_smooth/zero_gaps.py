r"""Bins exactly calibrated: a spike at zero gap for each ECE bin.

The ECE adds up :math:`|\text{gap}_m|` over the bins, and a bin whose true
gap is 0 still gets a positive :math:`|\text{gap}_m|` from every posterior
with a continuous gap: about 0.8 of its noise sd. Where several bins have
no gap (a curve that crosses the diagonal, a staircase whose flat steps
cross it in their middle bins) those terms add up to a bias that the
smooth model's per-bin deviations let through: on the staircase problem at
n = 10^4 the posterior mean was as biased as the plug-in and the 90%
interval covered the truth in 0.71 of replications.

The model here gives each bin, independently, prior probability
:math:`\omega` of an exactly zero gap,

.. math::

    H_{0m}:\ \psi_m = \frac{1}{n_m}\sum_{j \in m} t_j\,(\sigma(f(x_j)) - p_j) = 0,

with the smooth model's prior restricted to :math:`\psi_m = 0` under
:math:`H_{0m}`, and the smooth model's prior otherwise. The Bayes factor of
:math:`H_{0m}` is then the Savage--Dickey ratio

.. math::

    B_m = \frac{p(\psi_m = 0 \mid \text{data}, H_1)}{p(\psi_m = 0 \mid H_1)},
    \qquad \pi_m = \frac{\omega B_m}{1 - \omega + \omega B_m}.

* The prior density of :math:`\psi_m` at 0 is a Monte Carlo average over
  prior draws of the curve, Rao--Blackwellised over the intercept
  :math:`a \sim \mathcal N(0, s_a^2)`: :math:`\psi_m` is increasing in
  :math:`a`, so given the other coefficients its density at 0 is
  :math:`\mathcal N(a^*; 0, s_a^2) / \psi_m'(a^*)` at the root :math:`a^*`
  of :math:`\psi_m(a) = 0` (found by safeguarded Newton inside a bracket).
* The posterior density at 0 is that of the normal with the mean and
  variance of the posterior draws of the gap (the Laplace approximation's
  own form).
* **The gate.** The prior probability is :math:`\omega` times the posterior
  probability that the curve is rough at the bin scale,
  :math:`\Pr(\tau > \tau_0 \mid \text{data})` (:func:`rough_probability`;
  :math:`\tau` the bin-deviation scale, :math:`\tau_0` = :data:`ZERO_GAP_TAU` = 0.3):
  an exactly calibrated bin belongs to a curve with flat steps that cross
  the diagonal, not to a smooth curve, which crosses it at a point.
* Each draw then zeroes bin m's gap, independently, with probability
  :math:`\pi_m` (its accuracy set to its mean confidence, its term of the
  ECE removed). The indicators of different bins are taken as independent
  and each :math:`B_m` is computed with the other bins under the smooth
  model: a mean-field approximation of the joint spike-and-slab posterior.

Bins with a resolvable gap get :math:`B_m \approx 0`; a bin whose gap the
data cannot tell from 0 gets :math:`\pi_m` near :math:`\omega' B_m / (1 +
\omega' B_m)` (:math:`\omega'` the gated prior), which pulls its
:math:`|\text{gap}_m|` toward 0 exactly where the continuous posterior
inflates it -- and equally where the gap is small but not 0, which is why
the gate is there. ``benchmarks/zero_gap_study.py`` (documentation:
validation, "A zero gap per bin") measured it with 200 replications per
row. Ungated, :math:`\omega = 0.05` raised the staircase's coverage at
n = 10^4 from 0.755 to 0.880 but dropped Beta(5,1), p^1.1 (true ECE 0.014,
most predictions in bins whose gap is below 0.01) from 0.860 to 0.790. The
bin-deviation scale separates the two: :math:`\Pr(\tau > 0.3)` is 0.99 on
the staircase and below 0.01 on the smooth problems at n = 10^4 (0.08 to
0.27 on average on every problem at n = 300, where the prior still speaks).
Gated, :math:`\omega = 0.1` (the default) covers the staircase at n = 10^4
0.890 (bias +0.0010 against the plug-in's +0.0044) and leaves every other
row at n = 10^4 unchanged; at n = 300 and 1,000 it moves the other problems'
coverage by at most 0.015 (the staircase's rises, to 0.985 and 0.970) and
their posterior means by at most 0.002 (the staircase's at n = 1,000 from
+0.0019 to -0.0039, the plug-in's bias being +0.0167). ``zero_gap_prior=0``
turns it off.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
from scipy import special

from .._results.ece import SmoothBayesianECE
from .atoms import Atoms
from .fit import SmoothPosterior

__all__ = [
    "DEFAULT_ZERO_GAP_PRIOR",
    "ZERO_GAP_TAU",
    "average_bins_with_zero_gap",
    "check_zero_gap_prior",
    "prior_gap_density",
    "rough_probability",
    "zero_gap_probabilities",
]

#: Prior probability that an ECE bin's gap is exactly 0 (each bin
#: independently), before the gate (:data:`ZERO_GAP_TAU`; module docstring)
DEFAULT_ZERO_GAP_PRIOR = 0.1

#: Prior draws of the curve behind the prior density of each bin's gap at 0
PRIOR_DRAWS = 128

#: Newton steps for each prior draw's root (6 steps: density within 3e-4 of
#: the converged one on the staircase problem at n = 10^4, against a Monte
#: Carlo error of 2 to 6% with 128 draws)
NEWTON_STEPS = 6

#: Simpson nodes per interval of the tau grid in :func:`rough_probability`
#: (intervals 0.66 wide in log tau: error below 1e-9 of the probability)
ROUGH_NODES = 65

#: The spike's gate: its prior probability is :math:`\omega \Pr(\tau > \tau_0 \mid \text{data})`
#: with :math:`\tau_0` this (module docstring, "The gate")
ZERO_GAP_TAU = 0.3

#: Bins whose posterior gap lies more than this many sd from 0 get
#: probability 0 without the prior density: their Bayes factor is below
#: exp(-32) times the posterior density over the prior density at 0.
FAR_SD = 8.0


def check_zero_gap_prior(value: Any) -> float:
    """``zero_gap_prior`` as a float in [0, 1), or ``ValueError`` naming it."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"zero_gap_prior must be a number in [0, 1), got {value!r}")
    out = float(value)
    if not (np.isfinite(out) and 0.0 <= out < 1.0):
        raise ValueError(f"zero_gap_prior must be a number in [0, 1), got {value!r}")
    return out


def prior_gap_density(atoms: Atoms, post: SmoothPosterior, rng: np.random.Generator,
                      num_draws: int = PRIOR_DRAWS, bins: np.ndarray | None = None) -> np.ndarray:
    """Prior density of each bin's gap :math:`\\psi_m` at 0 under the smooth model.

    Parameters
    ----------
    atoms : Atoms
    post : SmoothPosterior
        Its hyper-parameter grid, prior masses and prior scales define the prior.
    rng : numpy.random.Generator
        Draws the hyper-parameters and coefficients of the prior draws.
    num_draws : int, default 128
    bins : ndarray of bool, shape (M,), optional
        Only these bins (default: all).

    Returns
    -------
    ndarray of shape (M,)
        :math:`p(\\psi_m = 0)`, Rao--Blackwellised over the intercept (module
        docstring); NaN for empty bins and bins not asked for.
    """
    comp = rng.choice(post.lambdas.size, size=num_draws, p=post.prior_mass)
    theta = rng.standard_normal((num_draws, post.prior_scales.size)) * post.prior_scales
    out = np.full(atoms.binning.n_bins, np.nan)
    keep = np.ones(atoms.x.size, dtype=bool) if bins is None else np.asarray(bins)[atoms.bin]
    if not keep.any():
        return out
    beta = theta * post.column_scale(post.lambdas[comp], post.taus[comp])
    beta[:, 0] = 0.0
    x, p, b = atoms.x[keep], atoms.p[keep], atoms.bin[keep]
    rest = post.basis.logits(x, b, beta)  # (S, J) without the intercept
    t = atoms.trials[keep].astype(np.float64)
    used, starts = np.unique(b, return_index=True)
    col = np.repeat(np.arange(used.size), np.diff(np.append(starts, x.size)))
    n_m = np.add.reduceat(t, starts)
    p_bar = np.add.reduceat(t * p, starts) / n_m
    target = special.logit(p_bar)
    # mean sigma(rest + a) over the bin lies between sigma(min rest + a) and
    # sigma(max rest + a): the root lies in [target - max, target - min]
    lo = target - np.maximum.reduceat(rest, starts, axis=1)
    hi = target - np.minimum.reduceat(rest, starts, axis=1)
    a = 0.5 * (lo + hi)
    for _ in range(NEWTON_STEPS):
        s = special.expit(rest + a[:, col])
        g = np.add.reduceat(t * s, starts, axis=1) / n_m - p_bar
        dg = np.add.reduceat(t * s * (1.0 - s), starts, axis=1) / n_m
        lo = np.where(g < 0, a, lo)
        hi = np.where(g > 0, a, hi)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = a - g / dg
        a = np.where((step > lo) & (step < hi), step, 0.5 * (lo + hi))
    s = special.expit(rest + a[:, col])
    dg = np.add.reduceat(t * s * (1.0 - s), starts, axis=1) / n_m
    s_a = float(post.prior_scales[0])
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        terms = np.exp(-0.5 * (a / s_a) ** 2) / (np.sqrt(2.0 * np.pi) * s_a * dg)
    terms = np.where(np.isfinite(terms), terms, 0.0)  # a saturated curve: density 0
    out[used] = terms.mean(axis=0)
    return out


def zero_gap_probabilities(gap: np.ndarray, prior_density: np.ndarray, omega: float) -> np.ndarray:
    """:math:`\\pi_m`, the posterior probability that bin m's gap is exactly 0.

    Parameters
    ----------
    gap : ndarray of shape (S, M)
        Posterior draws of each bin's gap under the smooth model.
    prior_density : ndarray of shape (M,)
        :func:`prior_gap_density` (NaN: empty bin, probability 0).
    omega : float
        Prior probability of a zero gap, in [0, 1).

    Returns
    -------
    ndarray of shape (M,)
    """
    if omega == 0:
        return np.zeros(gap.shape[1])
    mu, sd = gap.mean(axis=0), gap.std(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_post = -0.5 * (mu / sd) ** 2 - np.log(np.sqrt(2.0 * np.pi) * sd)
        log_bf = log_post - np.log(prior_density)
    # a prior density of 0 at psi_m = 0 (a bin whose mean confidence is exactly
    # 0 or 1, which no curve sigma(f) in (0, 1) reaches): the restricted prior
    # does not exist, so H_0m has probability 0 (not the ratio's infinity)
    log_bf = np.where(np.isnan(log_bf) | ~(prior_density > 0), -np.inf, log_bf)
    return special.expit(log_bf + np.log(omega) - np.log1p(-omega))


def rough_probability(post: SmoothPosterior, tau: float = ZERO_GAP_TAU) -> float:
    r""":math:`\Pr(\tau > \tau_0 \mid \text{data})`, the posterior probability that
    the bin-deviation scale exceeds ``tau``.

    The grid gives the marginal likelihood of :math:`\tau` at its points,
    :math:`L_j \propto w_j / m_j` (posterior weight over prior mass, both summed
    over the spline scale). Between neighbouring points :math:`\log L` is
    taken as linear in :math:`\log\tau`, constant beyond the ends, and the
    posterior is :math:`L(\tau)` times the Exponential prior, integrated by
    Simpson's rule in :math:`\log\tau` (:data:`ROUGH_NODES` nodes per
    interval; the tails in closed form). Counting the weight of the points
    above :math:`\tau_0` instead moves the whole cell around :math:`\tau_0`
    to one side: with the binary grid's ratio of 1.93 between neighbours,
    calibrated data at n = 2,000 (seed 2 of ``benchmarks/crosscheck_agreement.py``)
    gave 0.288 against NUTS's 0.163, and 0.153 interpolated.
    """
    values, index = np.unique(post.taus, return_inverse=True)
    weight = np.bincount(index, weights=post.weights, minlength=values.size)
    if values.size < 2 or not post.bin_scale > 0:
        return float(weight[values > tau].sum())
    prior = np.bincount(index, weights=post.prior_mass, minlength=values.size)
    lik = weight / prior
    lik = lik / lik.max()
    scale = float(post.bin_scale)

    def mass_above(t0: float) -> float:
        # below the first point and above the last, L is constant
        low = lik[0] * max(np.exp(-max(t0, 0.0) / scale) - np.exp(-values[0] / scale), 0.0)
        high = lik[-1] * np.exp(-max(t0, values[-1]) / scale)
        a, b = np.log(np.maximum(values[:-1], t0)), np.log(values[1:])
        keep = (a < b) & (lik[:-1] > 0) & (lik[1:] > 0)  # L = 0 at an end: 0 throughout
        if not keep.any():
            return float(low + high)
        x = np.linspace(0.0, 1.0, ROUGH_NODES)
        u = a[keep, None] + (b - a)[keep, None] * x
        log_l = np.interp(u, np.log(values), np.log(np.where(lik > 0, lik, 1.0)))
        t = np.exp(u)
        from scipy.integrate import simpson  # its import costs 0.4 s: on use

        inner = simpson(np.exp(log_l - t / scale) * t / scale, x=u, axis=1)
        return float(low + high + inner.sum())

    return float(np.clip(mass_above(tau) / mass_above(0.0), 0.0, 1.0))


def average_bins_with_zero_gap(result: SmoothBayesianECE, atoms: Atoms, omega: float,
                               rng: np.random.Generator,
                               tau_gate: float | None = ZERO_GAP_TAU) -> SmoothBayesianECE:
    """The smooth model's draws with each bin's gap exactly 0 with probability :math:`\\pi_m`.

    Parameters
    ----------
    result : SmoothBayesianECE
        Draws of the smooth model (not yet averaged with exact calibration).
    atoms : Atoms
        The atoms it was fitted to.
    omega : float
        Prior probability of a zero gap per bin; 0 returns ``result`` with
        ``params.zero_gap_prior = 0`` (no randomness used).
    rng : numpy.random.Generator
        Draws the prior curves, then which bins of which draws are zeroed.
    tau_gate : float or None, default :data:`ZERO_GAP_TAU`
        The spike's prior probability is ``omega`` times :func:`rough_probability`
        at this :math:`\tau_0` (None: ``omega`` itself, ungated).

    Returns
    -------
    SmoothBayesianECE
        ``draws`` and ``accuracy`` changed in the zeroed bins of each draw;
        ``params.prob_zero_gap`` holds :math:`\\pi_m` and
        ``params.zero_gap_prior`` :math:`\\omega`. The curve and the
        coefficients stay the smooth model's.
    """
    post = result.params
    if omega == 0:
        return replace(result, params=replace(post, zero_gap_prior=0.0,
                                              prob_zero_gap=np.zeros(atoms.binning.n_bins)))
    gap = result.accuracy - result.confidence
    near = np.abs(gap.mean(axis=0)) < FAR_SD * gap.std(axis=0)
    prior = omega if tau_gate is None else omega * rough_probability(post, tau_gate)
    pi = zero_gap_probabilities(gap, prior_gap_density(atoms, post, rng, bins=near), prior)
    zero = rng.random(gap.shape) < pi
    hit = zero.any(axis=1)
    draws = result.draws.copy()
    draws[hit] = np.sum(np.where(zero[hit], 0.0, result.weight[hit] * np.abs(gap[hit])), axis=1)
    return replace(
        result, draws=draws, accuracy=np.where(zero, result.confidence, result.accuracy),
        params=replace(post, zero_gap_prior=omega, prob_zero_gap=pi),
    )
