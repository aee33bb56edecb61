r"""Paired draws averaged with exact calibration of each model.

One model's smooth posterior is averaged with the identity curve (ECE
exactly 0) by the posterior probability of exact calibration,
:math:`\pi_0 = B_{01}O/(1 + B_{01}O)` (:mod:`bece._smooth.average`). In a
paired comparison each model has its own :math:`\pi^a_0, \pi^b_0` (each its
own Bayes factor of the identity curve against its smooth model, from the
same fit as its curve draws), and each joint draw needs both indicators
:math:`I_a, I_b` ("this draw of model A is exactly calibrated"). Their
marginals must be :math:`\pi^a_0, \pi^b_0`, so that each model's draws are
exactly its own averaged posterior; the data do not give their joint law
(the two models are two descriptions of the same outcomes, not one joint
model of them). Two couplings are offered:

``"independent"`` (the default)
    independent uniforms: :math:`P(I_a = I_b = 1) = \pi^a_0\pi^b_0`. No
    dependence is assumed that the data do not give.
``"shared"``
    one uniform :math:`u` per draw, :math:`I_a = [u < \pi^a_0]`,
    :math:`I_b = [u < \pi^b_0]`: the largest positive dependence the
    marginals allow, as for the hyper-parameter points of the paired draws
    (one uniform for both grids). Two models with the same predictions get
    the same indicators, so their difference is 0 in every draw where either
    is calibrated.

The difference of a joint draw is :math:`(1 - I_a)\,\mathrm{ECE}_a -
(1 - I_b)\,\mathrm{ECE}_b`, with :math:`\mathrm{ECE}_a, \mathrm{ECE}_b` the
paired smooth draws (:func:`bece._smooth.paired.paired_draws`). The Bayes
factors are the Laplace ones of each fit (the paired draws are the Laplace
mixture itself, not importance-resampled; :attr:`bece._smooth.fit.SmoothPosterior.log_bayes_factor`).

Measured (``benchmarks/paired_smooth_study.py --lean``, 100 replications per
row at n = 300 and 1,000, prior odds 0.02 as :func:`bece.bayesian_ece`;
coverage of the true difference by the 90% interval, Monte Carlo SE 0.03;
documentation: validation, "Paired comparisons"). The smooth models alone
cover a difference where one model is calibrated badly: a calibrated model
against a temperature of 1.25 (true difference -0.032) 0.56 at n = 300 and
0.33 at n = 1,000, because the calibrated model's ECE posterior, continuous
and positive, is biased up by about as much as the difference. Averaged with
independent indicators: 0.92 and 0.96; with shared ones 0.74 and 0.94. Two
calibrated models (true difference 0): every interval contains 0 with
either coupling (and without averaging); width 0.112 / 0.063 independent,
0.049 / 0.023 shared, 0.044 / 0.026 alone. Two miscalibrated temperatures
(+0.017): 0.99 / 1.00 independent, 0.95 / 1.00 shared, 0.95 / 0.98 alone,
the averaged intervals about twice as wide at n = 1,000 (B's mean
probability of calibration is 0.19 there). Top-label with B's own logit
noise (P(calibrated) about 0): unchanged. Independent indicators are the
default: they meet the coverage goal on every row, shared ones miss it on
the calibrated-against-miscalibrated row at n = 300; the cost is width where
both models may be calibrated.

Where a model's ECE is small but not 0, its averaged draws are often
exactly 0 and the difference's interval moves away from the truth (an
over- against an under-confident model at n = 2,000, B's ECE 0.022 and
mean probability of calibration 0.34: covered 0.75 with 200 replications).
So :meth:`bece.Comparison.interval` runs over the intervals of four priors,
each model's prior odds 0 or :math:`O`
(:func:`bece._results.comparison.differences_under_priors`):
0.92 there, as the smooth models alone.
"""

from __future__ import annotations

import numpy as np

from .._results.ece import SmoothBayesianECE
from .average import calibrated_at, prob_calibrated

__all__ = [
    "DEFAULT_COUPLING",
    "PAIR_COUPLINGS",
    "average_pair",
    "calibrated_picks",
    "check_coupling",
]

#: How the two models' indicators of exact calibration are drawn (module docstring)
PAIR_COUPLINGS = ("shared", "independent")

#: The coupling of :func:`bece.compare` (chosen by benchmarks/paired_smooth_study.py:
#: module docstring)
DEFAULT_COUPLING = "independent"


def check_coupling(coupling: str) -> str:
    """``coupling`` if it is one of :data:`PAIR_COUPLINGS`, else ``ValueError`` naming it."""
    if coupling not in PAIR_COUPLINGS:
        raise ValueError(f"coupling must be one of {PAIR_COUPLINGS}, got {coupling!r}")
    return coupling


def calibrated_picks(pi_a: float, pi_b: float, size: int, rng: np.random.Generator,
                     coupling: str = DEFAULT_COUPLING) -> tuple[np.ndarray, np.ndarray]:
    """Indicators :math:`I_a, I_b` of exact calibration for ``size`` joint draws.

    Parameters
    ----------
    pi_a, pi_b : float
        Each model's posterior probability of exact calibration.
    size : int
    rng : numpy.random.Generator
    coupling : {"independent", "shared"}, default "independent"
        Module docstring.

    Returns
    -------
    tuple of two ndarrays of shape (size,), bool

    Examples
    --------
    >>> import numpy as np
    >>> from bece._smooth.paired_average import calibrated_picks
    >>> ia, ib = calibrated_picks(0.3, 0.6, 10_000, np.random.default_rng(0), "shared")
    >>> bool(np.all(ib[ia]))          # shared: whenever A is calibrated, so is B
    True
    >>> round(float(ia.mean()), 2), round(float(ib.mean()), 2)
    (0.3, 0.6)
    """
    u = rng.random(size)
    if check_coupling(coupling) == "shared":
        return u < pi_a, u < pi_b
    return u < pi_a, rng.random(size) < pi_b


def average_pair(res_a: SmoothBayesianECE, res_b: SmoothBayesianECE, prior_odds: float,
                 rng: np.random.Generator, coupling: str = DEFAULT_COUPLING,
                 ) -> tuple[SmoothBayesianECE, SmoothBayesianECE]:
    """Both models' paired smooth draws averaged with exact calibration.

    Parameters
    ----------
    res_a, res_b : SmoothBayesianECE
        The paired draws of each model (``prior_odds`` 0), draw ``s`` of
        one paired with draw ``s`` of the other.
    prior_odds : float
        :math:`O \\ge 0`, the same for both models; 0 returns both unchanged
        (no randomness used).
    rng : numpy.random.Generator
    coupling : {"independent", "shared"}, default "independent"

    Returns
    -------
    tuple of two SmoothBayesianECE
        With ``prob_calibrated`` and ``prior_odds`` set, still paired.
    """
    check_coupling(coupling)
    if prior_odds == 0:
        return res_a, res_b
    pi_a = prob_calibrated(res_a.params.log_bayes_factor, prior_odds)
    pi_b = prob_calibrated(res_b.params.log_bayes_factor, prior_odds)
    pick_a, pick_b = calibrated_picks(pi_a, pi_b, res_a.draws.size, rng, coupling)
    out_a = calibrated_at(res_a, pick_a, pi_a, prior_odds)
    out_b = calibrated_at(res_b, pick_b, pi_b, prior_odds)
    for r in (out_a, out_b):
        r.draws.setflags(write=False)
    return out_a, out_b
