"""The conjugate ("closed-form") posterior of the binned BECE model.

Model (DESIGN.md §2) for M bins with intervals :math:`I_m = [l_m, u_m)`,
centres :math:`c_m` and widths :math:`w_m`:

.. math::

    q &\\sim \\mathrm{Dirichlet}(\\alpha\\,\\mathbb 1_{2M}),
        \\qquad (z_i, b_i) \\sim \\mathrm{Categorical}(q), \\\\
    \\mu_m &\\sim \\mathcal N(c_m, \\tau_m^2)\\ \\text{restricted to}\\ I_m,
        \\qquad p_i \\mid b_i = m \\sim \\mathcal N(\\mu_m, \\sigma_m^2).

The posterior factorises and is available in closed form:

.. math::

    q \\mid \\text{data} &\\sim \\mathrm{Dirichlet}(\\alpha + c), \\\\
    \\mu_m \\mid \\text{data} &\\sim \\mathcal N(\\bar\\mu_m, s_m^2)\\ \\text{restricted to}\\ I_m,
    \\quad s_m^2 = \\Big(\\frac1{\\tau_m^2} + \\frac{n_m}{\\sigma_m^2}\\Big)^{-1},
    \\quad \\bar\\mu_m = s_m^2\\Big(\\frac{c_m}{\\tau_m^2} + \\frac{S_m}{\\sigma_m^2}\\Big).

Each draw gives the population binned ECE

.. math::

    \\mathrm{ECE}(q, \\mu) = \\sum_m \\pi_m |\\mathrm{acc}_m - \\mu_m|
                         = \\sum_m |q_{1,m} - (q_{0,m} + q_{1,m})\\mu_m|.

This is exact for the model above, where the truncation sits on the prior of
:math:`\\mu` (the *conjugate model*). The literal BECE model writes each :math:`p_i` as a
truncated Normal; there the normaliser depends on :math:`\\mu` and the closed
form is an approximation whose size the MCMC cross-check measures.

Defaults and why: :math:`\\alpha = 1/(2M)` per cell puts a total prior weight
of one observation on the Dirichlet, so the prior cannot dominate small test
sets; :math:`\\sigma_m = \\tau_m = w_m/\\sqrt{12}` is the standard deviation of
a uniform distribution over the bin, the spread of confidences one expects
within it.

``preset="uncertainty-metrics"`` reproduces google/uncertainty-metrics'
``bayesian_expected_calibration_error``: :math:`\\alpha = 1/M` per cell,
:math:`\\sigma^2 = \\tau^2 = 1/(12M)` in every bin, and the ECE of a draw
weighted by :math:`P(b \\mid z=1) = q_{1,m}/\\sum_k q_{1,k}`:

.. math::

    \\mathrm{ECE}_{\\text{ref}}(q, \\mu) = \\sum_m \\frac{q_{1,m}}{\\sum_k q_{1,k}}
        \\Big|\\frac{q_{1,m}}{q_{0,m} + q_{1,m}} - \\mu_m\\Big|.

We do not use it by default: weighting by the bin mass of correct predictions
does not reduce to the ECE as :math:`n\\to\\infty` (it over-weights accurate
bins), and :math:`1/(12M)` is the variance of a uniform over a bin of width
:math:`\\sqrt{1/M}`, not :math:`1/M` (the reference meant :math:`w^2/12`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from .._base.checks import positive_array
from .._base.random import sample_dirichlet
from .._base.typing import PriorParam
from .._stats.calibration_stats import CalibrationStats

__all__ = [
    "closed_form",
    "conjugate_posterior",
    "ConjugatePosterior",
    "ece_of_draws",
    "PRESETS",
    "sample_posterior",
    "sample_truncated_normal",
]

PRESETS = ("uncertainty-metrics",)


@dataclass(frozen=True)
class ConjugatePosterior:
    """Parameters of the closed-form posterior for M bins.

    Attributes
    ----------
    concentration : ndarray of shape (2, M)
        Dirichlet parameters :math:`\\alpha + c` (row 0 incorrect, row 1 correct).
    loc, scale : ndarray of shape (M,)
        :math:`\\bar\\mu_m` and :math:`s_m` of the restricted Normal of each
        :math:`\\mu_m` (``scale`` is 0 for a zero-width bin, where
        :math:`\\mu_m = l_m`).
    lower, upper : ndarray of shape (M,)
        The bin intervals.
    alpha : ndarray of shape (2, M)
        Prior concentration per cell.
    sigma, tau, center : ndarray of shape (M,)
        Likelihood scale, prior scale and prior centre of :math:`\\mu_m`.
    weighting : {"bin", "correct"}
        ``"bin"`` weights bins by :math:`\\pi_m` (our ECE), ``"correct"`` by
        :math:`P(b\\mid z=1)` (the uncertainty-metrics preset).
    """

    concentration: np.ndarray
    loc: np.ndarray
    scale: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    alpha: np.ndarray
    sigma: np.ndarray
    tau: np.ndarray
    center: np.ndarray
    weighting: str


def conjugate_posterior(
    stats: CalibrationStats,
    *,
    alpha: PriorParam = None,
    sigma: PriorParam = None,
    tau: PriorParam = None,
    preset: str | None = None,
) -> ConjugatePosterior:
    """Closed-form posterior parameters from statistics.

    Parameters
    ----------
    stats : CalibrationStats
    alpha : float or array of shape (2, M) or (M,), optional
        Dirichlet prior concentration per cell; default :math:`1/(2M)`.
    sigma : float or array of shape (M,), optional
        Standard deviation of confidences around :math:`\\mu_m`; default
        :math:`w_m/\\sqrt{12}`.
    tau : float or array of shape (M,), optional
        Prior standard deviation of :math:`\\mu_m` around the bin centre;
        default :math:`w_m/\\sqrt{12}`.
    preset : {"uncertainty-metrics"}, optional
        Use the reference implementation's choices (see the module
        docstring); cannot be combined with ``alpha``, ``sigma`` or ``tau``.
    """
    m = stats.n_bins
    edges = stats.edges
    lower, upper = edges[:-1].copy(), edges[1:].copy()
    width = upper - lower
    if preset is not None:
        if preset not in PRESETS:
            raise ValueError(f"preset must be one of {PRESETS} or None, got {preset!r}")
        given = [k for k, v in (("alpha", alpha), ("sigma", sigma), ("tau", tau)) if v is not None]
        if given:
            raise ValueError(
                f"preset={preset!r} fixes alpha, sigma and tau; do not also pass {', '.join(given)}"
            )
        alpha_a = np.full((2, m), 1.0 / m)
        sigma_a = np.full(m, np.sqrt(1.0 / (12.0 * m)))
        tau_a = sigma_a.copy()
        weighting = "correct"
    else:
        alpha_a = (
            np.full((2, m), 1.0 / (2 * m)) if alpha is None else positive_array(alpha, "alpha", (2, m))
        )
        default_scale = width / np.sqrt(12.0)
        sigma_a = default_scale.copy() if sigma is None else positive_array(sigma, "sigma", (m,))
        tau_a = default_scale.copy() if tau is None else positive_array(tau, "tau", (m,))
        weighting = "bin"

    return closed_form(stats.counts, stats.sum_p, lower, upper, alpha_a, sigma_a, tau_a, weighting)


def closed_form(
    counts: np.ndarray,
    sum_p: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    alpha: np.ndarray,
    sigma: np.ndarray,
    tau: np.ndarray,
    weighting: str = "bin",
) -> ConjugatePosterior:
    """The conjugate update for B bins given as arrays (checked prior).

    ``counts`` and ``alpha`` have shape (2, B), the others (B,). The bins
    need not be contiguous: the top-label posterior passes its (label, bin)
    cells flattened, B = L M, with each label's intervals repeated.

    Raises ``ValueError`` naming ``sigma`` and ``tau`` when the update is not
    finite in float64 for a bin of positive width: :math:`1/\\tau^2` or
    :math:`n_m/\\sigma^2` overflowing (``tau`` or ``sigma`` below about
    1e-154, less with many predictions in the bin), or :math:`\\tau^2`
    overflowing in a bin without data (``tau`` above about 1e154). Such
    values gave all-NaN draws before.
    """
    width = upper - lower
    center = 0.5 * (lower + upper)
    n_m = counts.sum(axis=0).astype(np.float64)
    point = width == 0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        prec = 1.0 / tau**2 + n_m / sigma**2
        var = 1.0 / prec
        loc = var * (center / tau**2 + sum_p / sigma**2)
    bad = ~point & ~(np.isfinite(loc) & np.isfinite(var) & (var > 0))
    if bad.any():
        j = int(np.argmax(bad))
        raise ValueError(
            f"sigma and tau must keep the conjugate update 1/tau**2 + n_m/sigma**2 finite and "
            f"positive in float64; in {int(bad.sum())} bin(s) it is not, e.g. bin {j} with "
            f"sigma = {float(sigma[j])!r}, tau = {float(tau[j])!r} and n_m = {int(n_m[j])} "
            "(their squares overflow or underflow): pass sigma and tau between about 1e-150 "
            "and 1e150 (the defaults are the bin width / sqrt(12))"
        )
    loc = np.where(point, lower, np.clip(loc, lower, upper))
    scale = np.where(point, 0.0, np.sqrt(var))
    return ConjugatePosterior(
        concentration=alpha + counts,
        loc=loc,
        scale=scale,
        lower=lower,
        upper=upper,
        alpha=alpha,
        sigma=sigma,
        tau=tau,
        center=center,
        weighting=weighting,
    )


def sample_truncated_normal(
    loc: np.ndarray,
    scale: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    size: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Draws of shape ``(size, M)`` from Normal(loc, scale) restricted to [lower, upper].

    Inverse-CDF sampling in log space: standardised bounds on the positive
    side are mirrored to the negative side, where ``log_ndtr`` keeps full
    relative precision, and the uniform is mapped through ``ndtri_exp``.
    Stable for bounds tens of standard deviations into the tails. A bin with
    ``scale == 0`` returns ``loc``.
    """
    loc = np.asarray(loc, dtype=np.float64)
    point = scale == 0
    safe = np.where(point, 1.0, scale)
    a = (lower - loc) / safe
    b = (upper - loc) / safe
    flip = a > 0
    lo = np.where(flip, -b, a)
    hi = np.where(flip, -a, b)
    log_lo = special.log_ndtr(lo)
    log_hi = special.log_ndtr(hi)
    d = log_lo - log_hi  # <= 0
    u = rng.random((size, loc.size))
    # log(Phi(lo) + U (Phi(hi) - Phi(lo))), written so it never subtracts
    # nearly equal numbers: log Phi(hi) + log1p(-(1-U)(1 - e^d))
    x = special.ndtri_exp(log_hi + np.log1p((1.0 - u) * np.expm1(d)))
    np.clip(x, lo, hi, out=x)
    x = np.where(flip, -x, x)
    out = loc + safe * x
    return np.where(point, loc, out)


def ece_of_draws(q: np.ndarray, mu: np.ndarray, weighting: str = "bin") -> np.ndarray:
    """ECE of each posterior draw.

    Parameters
    ----------
    q : ndarray of shape (S, 2, M)
        Cell probabilities (row 0 incorrect, row 1 correct).
    mu : ndarray of shape (S, M)
        Mean confidence of each bin.
    weighting : {"bin", "correct"}
        ``"bin"``: :math:`\\sum_m |q_{1,m} - \\pi_m \\mu_m|`; ``"correct"``: the
        uncertainty-metrics formula (module docstring).

    Returns
    -------
    ndarray of shape (S,)
    """
    q0, q1 = q[:, 0, :], q[:, 1, :]
    if weighting == "bin":
        return np.abs(q1 - (q0 + q1) * mu).sum(axis=1)
    if weighting == "correct":
        pi = q0 + q1
        w = q1 / q1.sum(axis=1, keepdims=True)
        # a cell pair can underflow to 0 when its concentration is tiny; its
        # weight is then 0 too, so its term is 0
        acc = np.divide(q1, pi, out=np.zeros_like(q1), where=pi > 0)
        return (w * np.abs(acc - mu)).sum(axis=1)
    raise ValueError(f"weighting must be 'bin' or 'correct', got {weighting!r}")


def sample_posterior(
    post: ConjugatePosterior, num_samples: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Independent draws of the closed-form posterior.

    Returns
    -------
    q : ndarray of shape (S, 2, M)
    mu : ndarray of shape (S, M)
    ece : ndarray of shape (S,)
        :func:`ece_of_draws` of each draw with the posterior's weighting.
    """
    q = sample_dirichlet(post.concentration, num_samples, rng)
    mu = sample_truncated_normal(post.loc, post.scale, post.lower, post.upper, num_samples, rng)
    return q, mu, ece_of_draws(q, mu, post.weighting)


