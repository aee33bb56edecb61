"""Paired comparison of two classifiers' calibration on the same test set.

Two models A and B predict the same n examples. Each example falls in one
cell :math:`(z^a, b^a, z^b, b^b)` of a joint table with :math:`4M^2` cells
(correct or not under A, A's bin, correct or not under B, B's bin). One
Dirichlet over the joint cells keeps the pairing of examples:

.. math::

    Q &\\sim \\mathrm{Dirichlet}(\\alpha^{ab}), \\qquad
    (z^a_i, b^a_i, z^b_i, b^b_i) \\sim \\mathrm{Categorical}(Q), \\\\
    \\mu^a_m, \\mu^b_m &\\ \\text{as in}\\ :func:`bece.bayesian_ece`
        \\ \\text{(independent priors, conjugate Normal restricted to the bin)},

so :math:`Q \\mid \\text{data} \\sim \\mathrm{Dirichlet}(\\alpha^{ab} + C)` with
:math:`C` the joint counts (shape ``(2, M, 2, M)``, int64). The marginal cell
probabilities of each model are sums of joint cells,

.. math::

    q^a_{z,m} = \\sum_{z', m'} Q_{z, m, z', m'}, \\qquad
    q^b_{z',m'} = \\sum_{z, m} Q_{z, m, z', m'},

and each draw gives :math:`\\mathrm{ECE}_a = \\sum_m |q^a_{1,m} - (q^a_{0,m} +
q^a_{1,m})\\mu^a_m|`, likewise :math:`\\mathrm{ECE}_b`, and the difference
:math:`\\Delta = \\mathrm{ECE}_a - \\mathrm{ECE}_b`.

Prior concentration and why: with ``alpha`` the per-cell concentration of
:func:`bece.bayesian_ece` (default :math:`1/(2M)`, total weight
:math:`W = 2M\\alpha = 1`), the joint cell gets

.. math::

    \\alpha^{ab}_{z,m,z',m'} = \\frac{\\alpha^a_{z,m}\\,\\alpha^b_{z',m'}}{W},

total weight :math:`W` again. By the aggregation property of the Dirichlet
the marginal posterior of :math:`q^a` is then exactly
:math:`\\mathrm{Dirichlet}(\\alpha + c^a)`, the posterior of
:func:`bece.bayesian_ece` for model A alone (and likewise for B): pairing
changes the *joint* law, never a model's own posterior.

Why pairing matters: when both models err on the same examples (two fits of
similar models, a model before and after recalibration), their ECE
estimates move together and the difference is much better determined than
two independent posteriors suggest. When the errors move in opposite
directions the paired interval is *wider*; it is right in both cases.

The bin means :math:`\\mu^a, \\mu^b` are a posteriori independent (the model
does not couple the two models' confidences). Their spread is small next to
that of the cell probabilities (a relative :math:`w_m/\\sqrt{12\\,
\\mathrm{acc}_m(1-\\mathrm{acc}_m)}`, a few percent with 15 bins), so the
difference of identical predictions has a narrow posterior around 0, not
a point mass.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._base.checks import positive_int
from .._base.memory import check_allocation
from .._base.random import as_generator, sample_dirichlet
from .._base.typing import BinningSpec, PriorParam, Seed
from .._results.comparison import Comparison
from .._stats.binning import Binning, make_binning
from .._stats.calibration_stats import CalibrationStats
from .._stats.inputs import DEFAULT_INPUTS, Inputs
from .._stats.paired_stats import PairedStats, paired_outcomes
from .conjugate import (
    ConjugatePosterior,
    conjugate_posterior,
    ece_of_draws,
    sample_truncated_normal,
)
from .posterior import binned_result

__all__ = [
    "binned_compare",
    "compare_from_stats",
    "CostWarning",
    "joint_concentration",
    "joint_counts",
]

# joint Gamma draws held in memory at once (float64): 2**21 values = 16 MiB
_CHUNK_VALUES = 2**21

#: Gamma variates per second assumed for the cost estimate of :func:`compare`
#: (numpy's standard_gamma on one core of the development machine: about
#: 2e7 per second, i.e. 50 ns each, measured at n_bins = 1000).
GAMMA_RATE = 2e7

#: Above this many joint Gamma variates (S * 4 * M_a * M_b) compare warns of
#: the time it will take (10**9: about a minute at GAMMA_RATE).
WARN_GAMMAS = 10**9


class CostWarning(UserWarning):
    """A call will take long; the message gives the estimate and how to cut it."""


def joint_counts(b_a: np.ndarray, z_a: np.ndarray, b_b: np.ndarray, z_b: np.ndarray,
                 n_bins_a: int, n_bins_b: int) -> np.ndarray:
    """Counts of the joint cells, shape ``(2, M_a, 2, M_b)``, int64.

    ``b_a, b_b`` are bin indices (int, in ``0 .. M-1``), ``z_a, z_b`` the
    outcomes (0/1), all of shape (n,).
    """
    cell = ((np.asarray(z_a, np.int64) * n_bins_a + b_a) * 2 + np.asarray(z_b, np.int64)) * n_bins_b + b_b
    k = 4 * n_bins_a * n_bins_b
    return np.bincount(cell, minlength=k).astype(np.int64).reshape(2, n_bins_a, 2, n_bins_b)


def joint_concentration(alpha_a: np.ndarray, alpha_b: np.ndarray) -> np.ndarray:
    """Prior concentration of the joint cells, :math:`\\alpha^a_{z,m}\\alpha^b_{z',m'}/W`.

    Parameters
    ----------
    alpha_a : ndarray of shape (2, M_a)
    alpha_b : ndarray of shape (2, M_b)
        Per-cell concentrations of the two marginal models, with equal total
        weight :math:`W`.

    Returns
    -------
    ndarray of shape (2, M_a, 2, M_b)
        Summing over B's axes gives ``alpha_a``, over A's axes ``alpha_b``.
    """
    w_a, w_b = float(alpha_a.sum()), float(alpha_b.sum())
    if not np.isclose(w_a, w_b, rtol=1e-12, atol=0.0):
        raise ValueError(
            f"alpha gives the two models different total prior weights ({w_a:g} and {w_b:g}); "
            "a joint Dirichlet with both as marginals needs them equal"
        )
    return alpha_a[:, :, None, None] * alpha_b[None, None, :, :] / w_a


def binned_compare(
    y_true: ArrayLike,
    y_prob_a: ArrayLike,
    y_prob_b: ArrayLike,
    *,
    y_pred_a: ArrayLike | None = None,
    y_pred_b: ArrayLike | None = None,
    n_bins: int | None = None,
    binning: BinningSpec | Binning = "uniform",
    alpha: PriorParam = None,
    sigma: PriorParam = None,
    tau: PriorParam = None,
    num_samples: int = 10_000,
    seed: Seed = 0,
    progress: bool = False,
    inputs: Inputs = DEFAULT_INPUTS,
) -> Comparison:
    """Paired posterior of two models' ECEs on the same test set.

    Parameters
    ----------
    y_true : array_like of shape (n,)
        True labels, shared by both models.
    y_prob_a, y_prob_b : array_like of shape (n,) or (n, K)
        Each model's ``P(y=1)`` (binary) or class probabilities (top-label:
        confidence = row maximum, correct = ``[argmax == y_true]``), both of
        the same form; row ``i`` of each is the prediction for example ``i``.
    y_pred_a, y_pred_b : array_like of shape (n,), optional
        Predicted labels (triples y_pred, y_true, confidence); then ``y_prob_*`` is the
        confidence of ``y_pred_*``.
    n_bins : int, default 15
        Number of bins M of each model.
    binning : {"uniform", "quantile"} or array_like, default "uniform"
        Binning rule, applied to each model's confidences separately (with
        ``"quantile"`` the two models get their own edges).
    alpha : float or array of shape (2, M), default 1/(2M)
        Per-cell concentration of each model's marginal Dirichlet, as in
        :func:`bece.bayesian_ece`; the joint cells get
        :math:`\\alpha_{z,m}\\alpha_{z',m'}/W` (module docstring), so each
        marginal posterior equals :func:`bece.bayesian_ece`'s.
    sigma, tau : float or array of shape (M,), default w_m / sqrt(12)
        As in :func:`bece.bayesian_ece`, for each model.
    num_samples : int, default 10_000
        Joint posterior draws S. Cost: :math:`S \\cdot 4M^2` Gamma variates
        (about 0.5 s for the defaults), drawn in chunks of at most
        :math:`2^{21}` values.
    seed : int or numpy.random.Generator, default 0
        Randomness; the same int gives identical draws.
    progress : bool, default False
        Show a ``tqdm`` progress bar over the chunks of draws (on stderr,
        after half a second).
    inputs : Inputs, optional
        How ``y_true`` and both models' ``y_prob`` are read: the input
        keywords of :func:`bece.compare` (``labels``, ``pos_label``,
        ``from_logits``, ``row_sum_tol``) as one
        :class:`~bece._stats.inputs.Inputs`.

    Returns
    -------
    Comparison
        ``.diff_draws`` (:math:`\\mathrm{ECE}_a - \\mathrm{ECE}_b`),
        ``.prob_a_better``, ``.interval(prob)``, ``.a`` and ``.b``
        (:class:`~bece.BayesianECE`), ``.to_inference_data()``.

    Notes
    -----
    Each joint draw is :math:`Q \\sim \\mathrm{Dirichlet}(\\alpha^{ab} + C)`,
    :math:`\\mu^a \\sim p(\\mu^a \\mid \\text{data})`,
    :math:`\\mu^b \\sim p(\\mu^b \\mid \\text{data})`; the module docstring
    gives the formulas.

    Examples
    --------
    >>> import numpy as np
    >>> from bece._binned.compare import binned_compare   # bece.compare(..., model="binned")
    >>> rng = np.random.default_rng(0)
    >>> t = rng.uniform(size=3000)                 # true P(y=1)
    >>> y = (rng.uniform(size=3000) < t).astype(int)
    >>> c = binned_compare(y, t, t**0.7, n_bins=10, num_samples=2000, seed=1)
    >>> c.prob_a_better > 0.99                     # t is calibrated, t**0.7 is not
    True
    >>> lo, hi = c.interval(0.9)
    >>> bool(hi < 0)
    True
    """
    o = paired_outcomes(y_true, y_prob_a, y_prob_b, (y_pred_a, y_pred_b), inputs)
    num_samples = positive_int(num_samples, "num_samples")
    rng = as_generator(seed)
    if not isinstance(progress, (bool, np.bool_)):
        raise ValueError(f"progress must be True or False, got {progress!r}")

    bin_a = make_binning(o.p_a, n_bins, binning)
    bin_b = make_binning(o.p_b, n_bins, binning)
    _check_cost(num_samples, bin_a.n_bins, bin_b.n_bins)
    stats_a = CalibrationStats.from_outcomes(o.z_a, o.p_a, bin_a, kind=o.kind)
    stats_b = CalibrationStats.from_outcomes(o.z_b, o.p_b, bin_b, kind=o.kind)
    counts = joint_counts(bin_a.index(o.p_a), o.z_a, bin_b.index(o.p_b), o.z_b, bin_a.n_bins,
                          bin_b.n_bins)
    return _paired(stats_a, stats_b, counts, alpha, sigma, tau, num_samples, rng, progress)


def compare_from_stats(
    stats: PairedStats,
    *,
    alpha: PriorParam = None,
    sigma: PriorParam = None,
    tau: PriorParam = None,
    num_samples: int = 10_000,
    seed: Seed = 0,
    progress: bool = False,
) -> Comparison:
    """The paired binned posterior of :func:`compare` from joint statistics.

    ``bece.posterior_compare(stats, model="binned")`` calls this.

    Parameters
    ----------
    stats : PairedStats
        Joint statistics of both models in their ECE bins (possibly added
        over chunks; :meth:`bece.PairedStats.from_arrays`).
    alpha, sigma, tau, num_samples, seed, progress
        As :func:`compare`.

    Returns
    -------
    Comparison
        As :func:`compare` on the predictions the statistics came from, to
        the last bit: joint counts and sums are exact, so the draws (same
        seed) are identical.

    Examples
    --------
    >>> import numpy as np
    >>> from bece import PairedStats
    >>> from bece._binned.compare import binned_compare, compare_from_stats
    >>> rng = np.random.default_rng(0)
    >>> t = rng.uniform(size=3000)
    >>> y = (rng.uniform(size=3000) < t).astype(int)
    >>> parts = [PairedStats.from_arrays(y[i:i + 1000], t[i:i + 1000], t[i:i + 1000] ** 0.7,
    ...                                  n_bins=10) for i in range(0, 3000, 1000)]
    >>> c = compare_from_stats(sum(parts), num_samples=2000, seed=1)
    >>> d = binned_compare(y, t, t**0.7, n_bins=10, num_samples=2000, seed=1)
    >>> bool(np.array_equal(c.counts, d.counts)), bool(np.allclose(c.diff_draws, d.diff_draws))
    (True, True)
    """
    if not isinstance(stats, PairedStats):
        raise ValueError(f"stats must be a PairedStats, got {type(stats).__name__}")
    if stats.n == 0:
        raise ValueError("stats holds no predictions (n = 0)")
    num_samples = positive_int(num_samples, "num_samples")
    rng = as_generator(seed)
    if not isinstance(progress, (bool, np.bool_)):
        raise ValueError(f"progress must be True or False, got {progress!r}")
    _check_cost(num_samples, stats.binning_a.n_bins, stats.binning_b.n_bins)
    return _paired(stats.stats_a, stats.stats_b, stats.joint_counts(), alpha, sigma, tau,
                   num_samples, rng, progress)


def _paired(stats_a: CalibrationStats, stats_b: CalibrationStats, counts: np.ndarray,
            alpha: PriorParam, sigma: PriorParam, tau: PriorParam, num_samples: int,
            rng: np.random.Generator, progress: bool) -> Comparison:
    """The joint posterior from each model's statistics and the joint counts."""
    post_a = conjugate_posterior(stats_a, alpha=alpha, sigma=sigma, tau=tau)
    post_b = conjugate_posterior(stats_b, alpha=alpha, sigma=sigma, tau=tau)
    prior = joint_concentration(post_a.alpha, post_b.alpha)

    q_a, q_b = _sample_marginals(prior + counts, num_samples, rng, progress)
    mu_a = _sample_mu(post_a, num_samples, rng)
    mu_b = _sample_mu(post_b, num_samples, rng)
    a = binned_result(q_a, mu_a, ece_of_draws(q_a, mu_a, post_a.weighting), stats_a, post_a,
                      method="conjugate-paired")
    b = binned_result(q_b, mu_b, ece_of_draws(q_b, mu_b, post_b.weighting), stats_b, post_b,
                      method="conjugate-paired")
    diff = a.draws - b.draws
    diff.setflags(write=False)
    counts.setflags(write=False)
    return Comparison(a=a, b=b, diff_draws=diff, counts=counts, concentration=prior)


def _check_cost(num_samples: int, m_a: int, m_b: int) -> None:
    """Refuse draws that do not fit in memory; warn of draws that take long.

    Memory: each model's draws keep about 9 float64 per bin and draw
    (:func:`bece._binned.posterior.check_draws`), plus the joint table
    (4 M_a M_b) and one chunk of joint draws. Time: S * 4 * M_a * M_b Gamma
    variates at :data:`GAMMA_RATE` per second; above :data:`WARN_GAMMAS` a
    :class:`CostWarning` gives the estimate.
    """
    cells = 4 * m_a * m_b
    check_allocation(
        8.0 * (9 * num_samples * (m_a + m_b) + 3 * cells + max(_CHUNK_VALUES, cells)),
        what="the paired posterior draws (num_samples x 2 models x n_bins x 9 float64, and "
             "the 4 n_bins**2 joint cells)",
        argument=f"num_samples={num_samples} with n_bins={m_a}" + (f" and {m_b}" if m_b != m_a else ""),
        advice="pass fewer num_samples or n_bins",
    )
    gammas = float(num_samples) * cells
    if gammas > WARN_GAMMAS:
        import warnings

        seconds = gammas / GAMMA_RATE
        took = f"{seconds / 60:.0f} minutes" if seconds >= 120 else f"{seconds:.0f} s"
        warnings.warn(
            f"compare draws num_samples x 4 x n_bins**2 = {gammas:.2g} Gamma variates "
            f"(num_samples={num_samples}, {cells} joint cells), about {took} at "
            f"{GAMMA_RATE:.0e} per second; pass fewer num_samples or n_bins to shorten it "
            "(progress=True shows a progress bar)",
            CostWarning,
            stacklevel=3,
        )


def _sample_marginals(concentration: np.ndarray, num_samples: int, rng: np.random.Generator,
                      progress: bool) -> tuple[np.ndarray, np.ndarray]:
    """Joint Dirichlet draws reduced to each model's cells: two arrays (S, 2, M)."""
    two, m_a, _, m_b = concentration.shape
    chunk = max(1, _CHUNK_VALUES // concentration.size)
    q_a = np.empty((num_samples, 2, m_a))
    q_b = np.empty((num_samples, 2, m_b))
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=num_samples, desc="joint posterior draws", unit="draw", delay=0.5,
                   leave=False)
    try:
        for start in range(0, num_samples, chunk):
            size = min(chunk, num_samples - start)
            q = sample_dirichlet(concentration, size, rng)  # (size, 2, M_a, 2, M_b)
            q_a[start:start + size] = q.sum(axis=(3, 4))
            q_b[start:start + size] = q.sum(axis=(1, 2))
            if bar is not None:
                bar.update(size)
    finally:
        if bar is not None:
            bar.close()
    return q_a, q_b


def _sample_mu(post: ConjugatePosterior, num_samples: int, rng: np.random.Generator) -> np.ndarray:
    return sample_truncated_normal(post.loc, post.scale, post.lower, post.upper, num_samples, rng)
