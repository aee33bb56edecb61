"""The paired smooth comparison from joint statistics (:class:`~bece.PairedStats`).

:func:`bece._smooth.paired.smooth_compare` above 2,000 predictions works on
the fine grid: each model's atoms are its non-empty fine sub-cells, and the
outcome perturbations and bootstrap weights live on the joint cells (A's
sub-cell, B's sub-cell, same label or not). All of this is a function of the
joint statistics in both models' fine bins, which add across chunks: each
model's fine :class:`~bece.CalibrationStats` is the sum over the other
model's cells, and a joint cell's size and mean confidences are sums over
the correct/incorrect cells it holds. With the same seed the draws are those
of ``smooth_compare(..., grid=128)`` on the predictions themselves, to
float64 rounding of the sums (the same atoms in the same order).
"""

from __future__ import annotations

import numpy as np

from .._base.checks import positive_int
from .._base.laplace import single_threaded_blas
from .._base.random import as_generator
from .._base.typing import BinningSpec, Seed
from .._results.comparison import Comparison
from .._stats.binning import Binning
from .._stats.paired_stats import PairedStats
from .atoms import atoms_and_ece_stats
from .average import DEFAULT_PRIOR_ODDS
from .fit import fit_smooth
from .paired import PairedSide, paired_comparison, paired_draws
from .paired_average import DEFAULT_COUPLING, check_coupling
from .posterior import check_prior_odds, check_smooth_draws

__all__ = [
    "joint_atoms",
    "smooth_compare_from_stats",
]


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
    return {"t": t, "atom_a": (uniq // 2) // n_atoms_b, "atom_b": (uniq // 2) % n_atoms_b,
            "same": (uniq % 2).astype(bool),
            "p_a": np.bincount(inv, weights=stats.sum_p_a, minlength=uniq.size) / t,
            "p_b": np.bincount(inv, weights=stats.sum_p_b, minlength=uniq.size) / t}


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
    >>> from bece._smooth.paired_stats import smooth_compare_from_stats
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
