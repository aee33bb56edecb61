"""Atoms: the data of the smooth model, exact or on a fine grid of confidences."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..base.checks import positive_int
from ..base.typing import BinningSpec
from ..stats.binning import Binning, make_binning
from ..stats.calibration_stats import CalibrationStats
from .basis import logit_confidence

__all__ = [
    "Atoms",
    "atoms_and_ece_stats",
    "atoms_from_stats",
    "check_grid",
    "fine_binning",
    "make_atoms",
]

EXACT_MAX_N = 2_000


DEFAULT_SUBCELLS = 128


@dataclass(frozen=True)
class Atoms:
    """What the smooth posterior sees: weighted points sorted by bin.

    Attributes
    ----------
    p, x : ndarray of shape (J,)
        Confidence (mean over a sub-cell) and its clipped logit.
    trials, successes : ndarray of shape (J,), int64
        Predictions and correct predictions per atom (1 and z for exact atoms).
    bin : ndarray of shape (J,), int64
        ECE bin of each atom (non-decreasing).
    lower, upper : ndarray of shape (J,) or None
        The sub-cell of each atom (None when exact).
    binning : Binning
    grid : int or None
        Sub-cells per bin; None when every prediction is an atom.
    """

    p: np.ndarray
    x: np.ndarray
    trials: np.ndarray
    successes: np.ndarray
    bin: np.ndarray
    lower: np.ndarray | None
    upper: np.ndarray | None
    binning: Binning
    grid: int | None = None

    @property
    def exact(self) -> bool:
        return self.grid is None

    @property
    def n(self) -> int:
        return int(self.trials.sum())


def check_grid(grid: str | int | None, n: int) -> int | None:
    if isinstance(grid, str):
        if grid != "auto":
            raise ValueError(f"grid must be 'auto', None or a positive integer, got {grid!r}")
        return None if n <= EXACT_MAX_N else DEFAULT_SUBCELLS
    if grid is None:
        return None
    return positive_int(grid, "grid")


def make_atoms(z: np.ndarray, p: np.ndarray, binning: Binning, grid: int | None) -> Atoms:
    """Atoms from checked outcomes ``z`` and confidences ``p`` (shape (n,)).

    ``grid=None``: one atom per prediction. An int r: r equal-width
    sub-cells per bin (:func:`fine_binning`), one atom per non-empty
    sub-cell; computed as :func:`atoms_from_stats` of the statistics in
    those sub-cells, so that the two routes give the same atoms.
    """
    if grid is None:
        b = binning.index(p)
        order = np.argsort(b, kind="stable")
        ps = p[order]
        ones = np.ones(p.size, dtype=np.int64)
        return Atoms(ps, logit_confidence(ps), ones, np.asarray(z, dtype=np.int64)[order],
                     b[order], None, None, binning, None)
    fine = _subdivide(binning, int(grid))
    stats = CalibrationStats.from_outcomes(np.asarray(z), p, fine)
    return _stats_atoms(stats, binning, _bin_of_cells(fine, binning))


def _subdivide(coarse: Binning, grid: int) -> Binning:
    """Each bin of ``coarse`` cut into ``grid`` equal-width sub-cells.

    Uniform bins give uniform bins (``M * grid`` of them, index
    :math:`\\lfloor p M r \\rfloor`: for r a power of two this is
    :math:`r \\lfloor p M \\rfloor` plus the sub-cell exactly, since scaling
    by a power of two commutes with rounding); other bins explicit edges
    that contain every edge of ``coarse`` as the same float.
    """
    m = coarse.n_bins
    if coarse.rule == "uniform":
        return Binning(np.linspace(0.0, 1.0, m * grid + 1), "uniform")
    e = coarse.edges
    lo, hi = e[:-1, None], e[1:, None]
    inner = np.clip(lo + (hi - lo) * (np.arange(grid) / grid), lo, hi)
    fine = np.maximum.accumulate(np.append(inner.ravel(), e[-1]))
    return Binning(fine, "edges")


def _ece_binning(n_bins: int | None, binning: BinningSpec | Binning) -> Binning:
    if isinstance(binning, str) and binning in ("quantile", "equal-mass"):
        raise ValueError(
            "binning='quantile' needs the confidences to place its edges, which fine "
            "statistics do not keep; compute them first (e.g. bece.stats.binning.make_binning(p, "
            "n_bins, 'quantile').edges, or a first pass over the file) and pass binning=edges "
            "both here and to bece.smooth.fine_binning"
        )
    return make_binning(None, n_bins, binning)


def _bin_of_cells(fine: Binning, coarse: Binning) -> np.ndarray:
    """ECE bin (index into ``coarse``) of each cell of ``fine``, shape (M',);
    ValueError unless ``fine`` refines ``coarse``."""
    mf, mc = fine.n_bins, coarse.n_bins
    if fine.rule == "uniform" and coarse.rule == "uniform":
        if mf % mc:
            raise ValueError(
                f"the {mf} uniform bins of stats do not refine the {mc} uniform ECE bins given "
                f"by n_bins/binning: their number must be a multiple of {mc}, e.g. "
                f"{mc} * {DEFAULT_SUBCELLS} = {mc * DEFAULT_SUBCELLS} "
                f"(bece.smooth.fine_binning(n_bins={mc}))"
            )
        return np.arange(mf, dtype=np.int64) // (mf // mc)
    fe, ce = fine.edges, coarse.edges
    inside = np.isin(ce, fe)
    if fe[0] != ce[0] or fe[-1] != ce[-1] or not inside.all():
        missing = ce[~inside] if not inside.all() else ce[[0, -1]]
        raise ValueError(
            f"the {mf} bins of stats (edges {fe[0]:g} .. {fe[-1]:g}) do not refine the {mc} ECE "
            f"bins given by n_bins/binning: ECE edge(s) {np.round(missing[:5], 6).tolist()} "
            "are not edges of stats' bins (equal as floats); build stats with "
            "binning=bece.smooth.fine_binning(n_bins, binning)"
        )
    return np.minimum(np.searchsorted(ce, fe[:-1], side="right") - 1, mc - 1).astype(np.int64)


def _stats_atoms(stats: CalibrationStats, coarse: Binning, cell_bin: np.ndarray) -> Atoms:
    """One atom per non-empty cell of ``stats`` (cells refining ``coarse``,
    ``cell_bin`` their ECE bins, non-decreasing)."""
    t_all = stats.bin_counts
    keep = np.flatnonzero(t_all)
    t = t_all[keep]
    e = stats.edges
    lower, upper = e[keep], e[keep + 1]
    pm = np.clip(stats.sum_p[keep] / t, lower, upper)  # float rounding of the mean only
    per_bin = np.bincount(cell_bin, minlength=coarse.n_bins)
    grid = int(per_bin[per_bin > 0].min())
    return Atoms(pm, logit_confidence(pm), t.astype(np.int64),
                 stats.counts[1][keep].astype(np.int64), cell_bin[keep], lower, upper,
                 coarse, grid)


def _coarsen(stats: CalibrationStats, coarse: Binning, cell_bin: np.ndarray) -> CalibrationStats:
    """The statistics of ``stats`` added up over the cells of each ECE bin."""
    m = coarse.n_bins
    counts = np.zeros((2, m), dtype=np.int64)
    sum_p, sum_p2 = np.zeros(m), np.zeros(m)
    # numpy's stubs type `indices` as an integer array, but a tuple of index objects
    # (here a slice and an array) is documented and works
    np.add.at(counts, (slice(None), cell_bin), stats.counts)  # type: ignore[arg-type]
    np.add.at(sum_p, cell_bin, stats.sum_p)
    np.add.at(sum_p2, cell_bin, stats.sum_p2)
    return CalibrationStats(coarse, counts, sum_p, sum_p2)


def fine_binning(n_bins: int | None = None, binning: BinningSpec | Binning = "uniform", *,
                 grid: int = DEFAULT_SUBCELLS) -> Binning:
    """The fine bins to collect statistics in for the smooth model.

    Each of the M ECE bins is cut into ``grid`` equal-width sub-cells.
    Statistics in these bins (:meth:`bece.CalibrationStats.from_arrays`,
    :func:`bece.io.stream.file_statistics`, :func:`bece.io.read_statistics`,
    Dask arrays and DataFrames, JAX arrays) add across chunks like any
    other, and :func:`smooth_posterior_ece` turns them into the posterior
    that :func:`smooth_ece` gives with ``grid=grid``.

    Parameters
    ----------
    n_bins : int, default 15
        ECE bins M.
    binning : {"uniform"} or array_like of edges or Binning, default "uniform"
        The ECE bins. ``"quantile"`` raises ``ValueError``: its edges
        depend on all confidences, so compute them first (a first pass)
        and pass them as edges.
    grid : int, default 128
        Sub-cells per ECE bin; the bound on the ECE error of the grid is
        about :math:`2/(\\text{grid}\\,M)` (module docstring).

    Returns
    -------
    Binning
        Uniform ECE bins give uniform bins, ``M * grid`` of them (the same
        as ``n_bins=M * grid``); explicit edges give explicit edges
        containing every ECE edge.

    Examples
    --------
    >>> from bece.smooth import fine_binning
    >>> fine_binning(15)
    Binning(rule='uniform', n_bins=1920)
    >>> fine_binning(binning=[0.0, 0.5, 0.9, 1.0], grid=2).edges.tolist()
    [0.0, 0.25, 0.5, 0.7, 0.9, 0.95, 1.0]
    """
    return _subdivide(_ece_binning(n_bins, binning), positive_int(grid, "grid"))


def atoms_and_ece_stats(
    stats: CalibrationStats, n_bins: int | None, binning: BinningSpec | Binning
) -> tuple[Atoms, CalibrationStats]:
    if not isinstance(stats, CalibrationStats):
        raise ValueError(f"stats must be a CalibrationStats, got {type(stats).__name__}")
    if stats.n == 0:
        raise ValueError("stats holds no predictions (n = 0)")
    coarse = _ece_binning(n_bins, binning)
    cell_bin = _bin_of_cells(stats.binning, coarse)
    return _stats_atoms(stats, coarse, cell_bin), _coarsen(stats, coarse, cell_bin)


def atoms_from_stats(stats: CalibrationStats, *, n_bins: int | None = None,
                     binning: BinningSpec | Binning = "uniform") -> Atoms:
    """Fine-grid atoms from statistics whose bins refine the ECE bins.

    Each non-empty bin g of ``stats`` becomes one atom: ``trials``
    :math:`t_g = n_g`, ``successes`` :math:`c_{1,g}`, confidence
    :math:`\\bar p_g = S_g / n_g` (clipped to the cell, float rounding
    only), ``lower``/``upper`` the cell's edges (for the error bound), and
    ``bin`` the ECE bin containing the cell.

    Parameters
    ----------
    stats : CalibrationStats
        Statistics in fine bins, e.g. ``binning=fine_binning(n_bins)``;
        possibly summed over chunks.
    n_bins, binning
        The ECE bins (default 15 uniform). The bins of ``stats`` must refine
        them: uniform in a multiple of ``n_bins`` bins, or edges that contain
        every ECE edge. ``"quantile"`` raises (pass its edges).

    Returns
    -------
    Atoms
        ``grid`` is the number of cells per ECE bin (the smallest, if
        uneven).

    Raises
    ------
    ValueError
        If ``stats`` is not a CalibrationStats or holds no predictions, or
        its bins do not refine the ECE bins.
    """
    return atoms_and_ece_stats(stats, n_bins, binning)[0]
