"""Atoms: the data of the smooth model, exact or on a fine grid of confidences."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from .._base.checks import positive_int
from .._base.typing import BinningSpec
from .._stats.binning import Binning, make_binning
from .._stats.calibration_stats import CalibrationStats, coarsened
from .basis import LOGIT_CLIP, logit_confidence

__all__ = [
    "Atoms",
    "atoms_and_ece_stats",
    "atoms_from_stats",
    "cell_knots",
    "check_grid",
    "ece_statistics",
    "END_LOGIT_WIDTH",
    "fine_binning",
    "make_atoms",
]

EXACT_MAX_N = 2_000


DEFAULT_SUBCELLS = 128


#: Largest logit width of a fine cell (after the logit clip at 1e-6): the
#: equal-width sub-cells next to 0 and 1 are cut further, uniformly in logit.
END_LOGIT_WIDTH = 1.0 / 32


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
    sub-cells per bin, cut further in logit next to 0 and 1
    (:func:`fine_binning`), one atom per non-empty sub-cell; computed as
    :func:`atoms_from_stats` of the statistics in those sub-cells, so that
    the two routes give the same atoms.
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


def _uniform_edges(n: int) -> np.ndarray:
    """Edges of ``n`` uniform bins as bece indexes them: edge j is the smallest
    float64 p with :math:`\\mathrm{fl}(p\\,n) \\ge j` (0 and 1 at the ends), so that
    ``searchsorted(edges, p, "right") - 1`` is :math:`\\lfloor p n \\rfloor` for
    every float p in [0, 1) -- :math:`\\mathrm{fl}(p\\,n)` is monotone in p."""
    j = np.arange(n + 1, dtype=np.float64)
    c = j / n
    for _ in range(64):  # the float below still reaches j: step down (an ulp or two)
        below = np.nextafter(c, -np.inf)
        down = below * n >= j
        if not down.any():
            break
        c = np.where(down, below, c)
    for _ in range(64):  # c itself falls short of j: step up
        up = c * n < j
        if not up.any():
            break
        c = np.where(up, np.nextafter(c, np.inf), c)
    c[0], c[-1] = 0.0, 1.0
    return c


def _canonical(v: np.ndarray) -> np.ndarray:
    """``v`` in (0, 1) with its distance to the nearer end rounded to 21
    significant bits, so that edges computed through ``exp``/``log`` are the
    same floats on every platform (statistics from elsewhere add only when
    their edges are equal)."""
    near_top = v > 0.5
    q = np.where(near_top, 1.0 - v, v)
    m, e = np.frexp(q)
    q = np.ldexp(np.round(np.ldexp(m, 21)), e - 21)
    return np.where(near_top, 1.0 - q, q)


def _refine_ends(edges: np.ndarray) -> np.ndarray:
    """``edges`` with the logit clip points 1e-6 and 1 - 1e-6 added (the curve
    is constant beyond them) and every cell wider than END_LOGIT_WIDTH in
    clipped logit cut into equal logit widths; repeated edges stay."""
    lo, hi = edges[0], edges[-1]
    clip = [c for c in (LOGIT_CLIP, 1.0 - LOGIT_CLIP) if lo < c < hi and c not in edges]
    e = np.sort(np.concatenate([edges, clip]), kind="stable")
    x = logit_confidence(e)
    pieces = np.ceil(np.diff(x) / END_LOGIT_WIDTH - 1e-9).astype(np.int64)
    where, values = [], []
    for i in np.flatnonzero(pieces > 1):
        inner = _canonical(special.expit(x[i] + (x[i + 1] - x[i]) * np.arange(1, pieces[i])
                                         / pieces[i]))
        inner = np.unique(inner[(inner > e[i]) & (inner < e[i + 1])])
        where.append(np.full(inner.size, i + 1))
        values.append(inner)
    if not values:
        return e
    return np.insert(e, np.concatenate(where), np.concatenate(values))


def _subdivide(coarse: Binning, grid: int) -> Binning:
    """Each bin of ``coarse`` cut into ``grid`` equal-width sub-cells, and
    the sub-cells next to 0 and 1 cut further in logit (:func:`_refine_ends`).

    Uniform ECE bins: the edges of ``M * grid`` uniform bins as
    :func:`_uniform_edges` places them, so that away from the ends a
    confidence falls in the same sub-cell as in ``M * grid`` uniform bins
    (index :math:`\\lfloor p M r \\rfloor`: for r a power of two this is
    :math:`r \\lfloor p M \\rfloor` plus the sub-cell exactly, since scaling by
    a power of two commutes with rounding; for other r the ECE edges are put
    in place). Other bins: explicit edges that contain every edge of
    ``coarse`` as the same float.
    """
    m = coarse.n_bins
    if coarse.rule == "uniform":
        base = _uniform_edges(m * grid)
        if grid & (grid - 1):
            base[::grid] = _uniform_edges(m)
            base = np.maximum.accumulate(base)
    else:
        e = coarse.edges
        lo, hi = e[:-1, None], e[1:, None]
        inner = np.clip(lo + (hi - lo) * (np.arange(grid) / grid), lo, hi)
        base = np.maximum.accumulate(np.append(inner.ravel(), e[-1]))
    return Binning(_refine_ends(base), "edges")


def _ece_binning(n_bins: int | None, binning: BinningSpec | Binning) -> Binning:
    if isinstance(binning, str) and binning in ("quantile", "equal-mass"):
        raise ValueError(
            "binning='quantile' needs the confidences to place its edges, which fine "
            "statistics do not keep; compute them first (e.g. bece._stats.binning.make_binning(p, "
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
    if coarse.rule == "uniform":
        # the open interior of each cell must lie in one ECE bin (an edge value
        # itself may fall either way by float rounding of p * M)
        if fe[0] != 0.0 or fe[-1] != 1.0:
            raise ValueError(
                f"the {mf} bins of stats (edges {fe[0]:g} .. {fe[-1]:g}) do not refine the {mc} "
                "uniform ECE bins given by n_bins/binning: they must span [0, 1]; build stats "
                "with binning=bece.smooth.fine_binning(n_bins)"
            )
        lower, upper = fe[:-1], fe[1:]
        wide = upper > lower
        first = coarse.index(np.where(wide, np.nextafter(lower, np.inf), lower))
        last = coarse.index(np.where(wide, np.nextafter(upper, -np.inf), lower))
        if np.any(first != last):
            i = int(np.argmax(first != last))
            raise ValueError(
                f"the {mf} bins of stats do not refine the {mc} uniform ECE bins given by "
                f"n_bins/binning: bin [{lower[i]!r}, {upper[i]!r}) straddles an ECE edge; build "
                "stats with binning=bece.smooth.fine_binning(n_bins)"
            )
        return first.astype(np.int64)
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


def cell_knots(atoms: Atoms, n_knots: int) -> np.ndarray:
    """Spline knots for fine-grid atoms: the quantiles that the exact path
    would take, as far as the cells tell them.

    The exact path puts its ``K = min(n_knots, distinct values)`` knots at
    the K equally spaced quantiles (numpy's linear rule) of the distinct
    logits of the predictions. Here a cell with :math:`t_g` predictions
    stands for :math:`t_g` distinct logits spread evenly over its logit
    range (:math:`x_{g,i} = x_{l,g} + (i + 1/2)(x_{u,g} - x_{l,g})/t_g`),
    except a cell over which the clipped logit is constant (confidences
    within 1e-6 of 0 or 1), which stands for one. Taking the distinct cell
    means instead would spread the knots evenly over the occupied cells, a
    different model from the exact path's (the grid and exact posterior
    means then differed by up to 1e-4 at n = 10^4).

    Returns
    -------
    ndarray of shape (K,), increasing (fewer if values coincide)
    """
    assert atoms.lower is not None and atoms.upper is not None  # grid atoms only
    k = min(n_knots, np.unique(atoms.x).size)
    if k < 3:
        return np.empty(0)
    xl, xu = logit_confidence(atoms.lower), logit_confidence(atoms.upper)
    mult = np.where(xu > xl, atoms.trials, 1).astype(np.float64)
    cum = np.concatenate([[0.0], np.cumsum(mult)])

    def order_stat(r: np.ndarray) -> np.ndarray:  # 0-based rank in the spread sample
        g = np.minimum(np.searchsorted(cum, r, side="right") - 1, mult.size - 1)
        return xl[g] + (xu[g] - xl[g]) * (r - cum[g] + 0.5) / mult[g]

    pos = np.linspace(0.0, 1.0, k) * (cum[-1] - 1.0)
    below = np.floor(pos)
    frac = pos - below
    above = np.minimum(below + 1.0, cum[-1] - 1.0)
    return np.unique(order_stat(below) * (1.0 - frac) + order_stat(above) * frac)




def fine_binning(n_bins: int | None = None, binning: BinningSpec | Binning = "uniform", *,
                 grid: int = DEFAULT_SUBCELLS) -> Binning:
    """The fine bins to collect statistics in for the smooth model.

    Each of the M ECE bins is cut into ``grid`` equal-width sub-cells, and
    each sub-cell wider than ``END_LOGIT_WIDTH`` = 1/32 in logit p (those
    within about 0.017 of 0 or 1 for 15 x 128) is cut into equal logit
    widths, with 1e-6 and 1 - 1e-6 (where the curve's logit is clipped) as
    edges: confidences that pile up next to 0 or 1 then still fall in
    narrow cells, which keeps the grid's error small
    (:mod:`bece._smooth.grid_error`). Statistics in these bins (:meth:`bece.CalibrationStats.from_arrays`,
    :func:`bece._io.stream.file_statistics`, :func:`bece.io.read_statistics`,
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
        Equal-width sub-cells per ECE bin; the bound on the ECE error of
        the grid is about :math:`|s' - 1|/(2\\,\\text{grid}\\,M)` for a
        curve of slope :math:`s'` (module docstring).

    Returns
    -------
    Binning
        Explicit edges containing every ECE edge as the same float. For
        uniform ECE bins, away from the ends a confidence falls in the same
        sub-cell as in ``M * grid`` uniform bins (each edge is the smallest
        float that bece's uniform rule puts in its bin). Statistics in
        ``M * grid`` uniform bins (earlier versions' ``fine_binning``) are
        still accepted, with a looser bound in their wide end cells.

    Examples
    --------
    >>> from bece.smooth import fine_binning
    >>> fine_binning(15)
    Binning(rule='edges', n_bins=2520)
    >>> e = fine_binning(binning=[0.0, 0.5, 0.9, 1.0], grid=2).edges
    >>> e[:2].tolist(), e[-2:].tolist(), e.size
    ([0.0, 1e-06], [0.999999, 1.0], 890)
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
    return _stats_atoms(stats, coarse, cell_bin), coarsened(stats, coarse, cell_bin).with_kind(None)


def ece_statistics(stats: CalibrationStats, n_bins: int | None,
                   binning: BinningSpec | Binning) -> CalibrationStats:
    """Fine statistics (:func:`fine_binning` of the ECE bins) added up into
    the ECE bins, ``kind`` kept: bit for bit the statistics of the same
    predictions read in the ECE bins (the fine edges hold every ECE edge as
    the same float, and the sums are exact), so one pass over a file serves
    both the binned posterior and the smooth model's test."""
    coarse = _ece_binning(n_bins, binning)
    return coarsened(stats, coarse, _bin_of_cells(stats.binning, coarse))


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
