r"""Calibration per group, with partial pooling across groups.

Groups (model versions, regions, subgroups) are what the hierarchical
top-label model (:mod:`bece._smooth.toplabel`) calls labels: group g's
calibration curve is a curve shared by all groups plus a logit shift and a
change of logit slope, each of learned scale,

.. math::

    \operatorname{logit} P(z = 1 \mid p, g) = f(x) + \kappa\,c_g + \omega\,e_g\,x,
    \qquad x = \operatorname{logit} p,

written out in NumPyro in :func:`bece.models.top_label_smooth_model` (with
the group index as ``label``). ``z`` is y for P(y = 1) input and "correct"
for top-label or (y_pred, confidence) input, as everywhere. A small group
borrows the shared curve as far as the spread between groups allows; a
large group gets its own.

**Exact calibration, group by group.** Each group's draws are averaged
with "this group is exactly calibrated" (ECE 0), with the probability that
the binary smooth model gives it on the group's own data
(:mod:`bece._smooth.average`, the same prior odds): the hierarchical model
says how large a group's miscalibration is, the group's own data whether it
is there at all. Why not the hierarchical model's own Bayes factors: with
the shared curve pinned near the identity by large calibrated groups, "group
g calibrated" and "group g near the shared curve" predict almost the same
data, the Bayes factor stays near 1 and the probability near the prior
odds, so a calibrated group's interval does not reach 0 (on 4 calibrated
groups of 3,000 and one miscalibrated group of 100, it covered their ECE of
0 in 0.4 to 0.7 of 10 replications; its own data: 1.0). "Every group
exactly calibrated" (``prob_calibrated``) is the product of the groups'
probabilities.

What each group gets:

- its ECE (the population binned ECE of its predictions, under the Bayesian
  bootstrap of its confidences);
- the probability that it is the worst calibrated (a draw where several
  groups tie at the largest ECE, as the draws of exact calibration do,
  counts a share for each);
- its mean gap to the shared curve, :math:`\delta_g = \sum_{i \in g} t_i
  (\sigma(f(x_i) + d_g(x_i)) - \sigma(f(x_i))) / \sum_{i \in g} t_i` over the
  group's predictions: the group "differs from the pooled curve" when the
  95% interval of :math:`\delta_g` excludes 0. A group whose curve crosses
  the shared one (a slope change alone) can have :math:`\delta_g` near 0;
  its ECE shows it;
- its **independent posterior**: the binary smooth model (:mod:`bece.smooth`,
  with its own defaults) on the group's data alone, what
  :func:`bece.bayesian_ece` gives for that group.

**Where pooling hides a group.** A small group unlike the rest is pulled
towards the shared curve: the spread between groups is learned from all of
them, and a few large similar groups make it small. A group whose pooled
posterior mean lies below the 5% quantile of its own posterior is named in
a warning (``GroupECE.hidden``): its own data put its ECE above the pooled
estimate with probability 0.95. The validation study
(``benchmarks/groups_study.py``, documentation: validation, "Groups")
measures coverage and how often the warning appears.

``pooling="none"`` gives the independent posteriors alone.

The statistics are per-group counts and sums in the fine bins of the binary
smooth model (:func:`bece._smooth.atoms.fine_binning`), mergeable with
``+``; the pooled fit merges them into its sub-cells by their mid-points
(:func:`~bece._smooth.toplabel_atoms.label_atoms_from_cells`), the
independent fits use them as they are.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import special

from .._base.laplace import single_threaded_blas
from .._base.random import as_generator
from .._base.typing import BinningSpec, Seed
from .._results.groups import GroupECE
from .._stats.binning import Binning
from .._stats.groups import GroupStats
from .posterior import smooth_posterior_ece
from .toplabel import default_num_samples, label_posterior_draws
from .toplabel_atoms import (
    coarse_label_stats,
    exact_or_grid,
    label_atoms_from_cells,
    label_cells_from_stats,
)
from .toplabel_fit import PointDesign, fit_top_label_smooth

__all__ = ["POOLINGS", "group_posterior"]

POOLINGS = ("partial", "none")


def _mean_gaps(atoms: Any, post: Any, beta: np.ndarray, label_beta: np.ndarray,
               chunk_elems: int = 2_000_000) -> np.ndarray:
    """:math:`\\delta_g` of each draw (module docstring), shape (S, G)."""
    design = PointDesign(post, atoms.x, atoms.label, atoms.bin)
    t = atoms.trials.astype(np.float64)
    g = atoms.n_labels
    # (J, G): each atom's share of its group's predictions
    share = np.zeros((t.size, g))
    share[np.arange(t.size), atoms.label] = t / np.bincount(atoms.label, weights=t, minlength=g)[
        atoms.label]
    zero = np.zeros_like(label_beta[:1])
    out = np.empty((beta.shape[0], g))
    step = max(1, chunk_elems // max(t.size, 1))
    for a in range(0, beta.shape[0], step):
        b = min(beta.shape[0], a + step)
        own = special.expit(design.logits(beta[a:b], label_beta[a:b]))
        shared = special.expit(design.logits(beta[a:b], np.broadcast_to(zero, label_beta[a:b].shape)))
        out[a:b] = (own - shared) @ share
    return out


def _independent(stats: GroupStats, seeds: np.ndarray, num_samples: int, n_bins: int | None,
                 binning: BinningSpec | Binning, options: dict[str, Any],
                 prior_odds: float) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    """Each group's binary smooth posterior on its own data: draws (S, G),
    P(calibrated) per group, and the posteriors' parameters."""
    draws = np.empty((num_samples, stats.n_groups))
    pi0 = np.empty(stats.n_groups)
    params = []
    for j, s in enumerate(stats.stats):
        r = smooth_posterior_ece(s, n_bins=n_bins, binning=binning, **options,
                                 num_samples=num_samples, seed=int(seeds[j]), prior_odds=prior_odds)
        draws[:, j] = r.draws
        pi0[j] = np.nan if r.prob_calibrated is None else r.prob_calibrated
        params.append(r.params)
    return draws, pi0, params


def group_posterior(
    stats: GroupStats,
    *,
    pooling: str = "partial",
    n_bins: int | None = None,
    binning: BinningSpec | Binning = "uniform",
    grid: str | int = "auto",
    num_samples: int | None = None,
    seed: Seed = 0,
    prior_odds: float,
    curve: dict[str, Any],
    pooled: dict[str, Any],
) -> GroupECE:
    """Posterior of each group's ECE from per-group fine statistics.

    Parameters
    ----------
    stats : GroupStats
        Per-group statistics in bins that refine the ECE bins.
    pooling : {"partial", "none"}
    n_bins, binning
        The ECE bins (default 15 uniform).
    grid : "auto" or int
        Sub-cells per ECE bin of the pooled fit (:func:`~bece._smooth.toplabel_atoms.auto_subcells`).
    num_samples : int, optional
        Draws per group; default as the top-label posterior (10,000, fewer
        for many groups).
    seed : int or numpy.random.Generator
    prior_odds : float
        Prior odds of each group's exact calibration.
    curve : dict
        The shared curve's options: ``n_knots``, ``intercept_scale``,
        ``slope_scale``, ``smoothness_scale``.
    pooled : dict
        The groups' deviations: ``label_scale``, ``tilt_scale``,
        ``shared_prob`` (:func:`~bece._smooth.toplabel_fit.fit_top_label_smooth`).
    """
    if pooling not in POOLINGS:
        raise ValueError(f"pooling must be one of {POOLINGS}, got {pooling!r}")
    if not isinstance(stats, GroupStats):
        raise ValueError(f"stats must be a GroupStats (SmoothGroupModel.group_statistics), got "
                         f"{type(stats).__name__}")
    rng = as_generator(seed)
    counts, sp, _, fine, cell_bin, coarse = label_cells_from_stats(stats.stats, n_bins, binning)
    n_groups, m = counts.shape[0], coarse.n_bins
    s_total = default_num_samples(n_groups, m) if num_samples is None else int(num_samples)
    coarse_stats = GroupStats(stats.groups, coarse_label_stats(stats.stats, cell_bin, coarse))
    kind = stats.stats[0].kind
    common: dict[str, Any] = {"groups": stats.groups, "stats": coarse_stats, "pooling": pooling,
                              "prior_odds": float(prior_odds), "kind": kind}
    if pooling == "none":
        seeds = np.asarray(rng.integers(0, 2**63 - 1, size=n_groups))
        draws, pi0, params = _independent(stats, seeds, s_total, n_bins, binning,
                                          curve, prior_odds)
        return GroupECE(draws=draws, prob_calibrated=float(np.prod(pi0)),
                        group_prob_calibrated=pi0, params=tuple(params), **common)
    r = exact_or_grid(grid, 1 << 62, n_groups, m)
    assert r is not None
    atoms = label_atoms_from_cells(counts, sp, fine, cell_bin, coarse, r)
    with single_threaded_blas():
        post = fit_top_label_smooth(atoms, **curve, **pooled)
        e, post = label_posterior_draws(atoms, post, s_total, rng, keep=False)
        gaps = _mean_gaps(atoms, post, e["beta"], e["label_beta"])
    seeds = np.asarray(rng.integers(0, 2**63 - 1, size=n_groups))
    independent, group_pi0, _ = _independent(stats, seeds, s_total, n_bins, binning, curve,
                                             prior_odds)
    draws = e["label_ece"]
    if prior_odds > 0:  # each group's draws averaged with its own exact calibration
        pick = rng.random((s_total, n_groups)) < group_pi0
        draws = np.where(pick, 0.0, draws)
        gaps = np.where(pick, 0.0, gaps)
    return GroupECE(draws=draws, prob_calibrated=float(np.prod(group_pi0)),
                    group_prob_calibrated=group_pi0,
                    gap_draws=gaps, independent_draws=independent, params=post, **common)
