"""Atoms of the hierarchical top-label model: per (predicted label, fine cell) statistics."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special

from .._base.checks import positive_int
from .._base.typing import BinningSpec
from .._stats.binning import Binning, make_binning
from .._stats.calibration_stats import CalibrationStats, coarsened, label_statistics
from .atoms import EXACT_MAX_N, atoms_from_stats
from .basis import LOGIT_CLIP, logit_confidence

__all__ = [
    "ATOM_BUDGET",
    "auto_subcells",
    "check_label_grid",
    "coarse_label_stats",
    "exact_or_grid",
    "LabelAtoms",
    "label_atoms_exact",
    "label_atoms_from_cells",
    "label_atoms",
    "label_cells_from_stats",
    "label_coarse_stats",
    "label_fine_binning",
    "MAX_SUBCELLS",
    "top_label_fine_binning",
]

#: "auto": at most this many (label, sub-cell) atoms, L * M * r <= ATOM_BUDGET.
ATOM_BUDGET = 1 << 14


MAX_SUBCELLS = 128


#: Largest clipped-logit width of a sub-cell (:func:`label_fine_binning`).
END_LOGIT = 0.5


@dataclass(frozen=True)
class LabelAtoms:
    """What the top-label posterior sees: weighted points sorted by (label, bin).

    Attributes
    ----------
    p, x : ndarray of shape (J,)
        Confidence (mean over a (label, sub-cell)) and its clipped logit.
    trials, successes : ndarray of shape (J,), int64
        Predictions and correct predictions per atom.
    label, bin : ndarray of shape (J,), int64
        Label index (0 .. L-1) and ECE bin of each atom; sorted by
        ``label * M + bin``.
    binning : Binning
        The ECE bins.
    n_labels : int
    grid : int or None
        Sub-cells per ECE bin (None: one atom per prediction).
    """

    p: np.ndarray
    x: np.ndarray
    trials: np.ndarray
    successes: np.ndarray
    label: np.ndarray
    bin: np.ndarray
    binning: Binning
    n_labels: int
    grid: int | None = None

    @property
    def exact(self) -> bool:
        return self.grid is None

    @property
    def n(self) -> int:
        return int(self.trials.sum())

    @property
    def cell(self) -> np.ndarray:
        """``label * M + bin`` of each atom, non-decreasing."""
        return self.label * self.binning.n_bins + self.bin

    def segments(self) -> tuple[np.ndarray, np.ndarray]:
        """The non-empty (label, bin) cells ``label * M + bin`` (increasing) and
        the index of their first atom."""
        cells, starts = np.unique(self.cell, return_index=True)
        return cells, starts


def auto_subcells(n_labels: int, n_bins: int) -> int:
    """Sub-cells per ECE bin for ``grid="auto"``: the largest power of two r <=
    128 with ``L * M * r <= ATOM_BUDGET`` (at least 1).

    The fit's Newton steps and each posterior draw cost O(atoms); the budget
    keeps them bounded as labels grow (with 15 bins: r = 128 up to L = 8,
    8 at L = 100, 1 from L = 547; :func:`label_fine_binning` adds cells
    next to 0 and 1, at most 1/2 wide in logit).
    """
    r = MAX_SUBCELLS
    while r > 1 and n_labels * n_bins * r > ATOM_BUDGET:
        r //= 2
    return r


def check_label_grid(grid: str | int | None) -> str | int | None:
    if isinstance(grid, str):
        if grid != "auto":
            raise ValueError(f"grid must be 'auto', None or a positive integer, got {grid!r}")
        return grid
    if grid is None:
        return None
    return positive_int(grid, "grid")


def label_atoms_exact(label: np.ndarray, z: np.ndarray, p: np.ndarray, n_labels: int,
                      binning: Binning) -> LabelAtoms:
    """One atom per prediction: label indices, outcomes and confidences of shape (n,)."""
    b = binning.index(p)
    order = np.lexsort((b, label))
    ps = p[order]
    return LabelAtoms(ps, logit_confidence(ps), np.ones(p.size, dtype=np.int64),
                      np.asarray(z, dtype=np.int64)[order], label[order].astype(np.int64),
                      b[order].astype(np.int64), binning, int(n_labels), None)


def _index_edges(coarse: Binning) -> np.ndarray:
    r"""The ECE edges as ``coarse.index`` places them: for uniform bins edge j is
    the smallest float64 p with :math:`\mathrm{fl}(p M) \ge j` (``j / M`` itself
    can sit an ulp off), so that a confidence is in sub-cells of the ECE bin
    that ``coarse.index`` gives it; explicit edges as they are."""
    e = np.array(coarse.edges, dtype=np.float64)
    if coarse.rule != "uniform":
        return e
    m = coarse.n_bins
    j = np.arange(m + 1, dtype=np.float64)
    for _ in range(64):  # the float below still reaches j: step down
        below = np.nextafter(e, -np.inf)
        down = below * m >= j
        if not down.any():
            break
        e = np.where(down, below, e)
    for _ in range(64):  # e itself falls short of j: step up
        up = e * m < j
        if not up.any():
            break
        e = np.where(up, np.nextafter(e, np.inf), e)
    e[0], e[-1] = 0.0, 1.0
    return e


def label_fine_binning(coarse: Binning, r: int) -> Binning:
    """The sub-cells of the top-label atoms: each ECE bin cut into r equal-width
    cells, and every cell wider than ``END_LOGIT`` in clipped logit cut into
    equal logit widths (with the clip points 1e-6 and 1 - 1e-6 as edges).

    Top-label confidences of trained networks pile up next to 1 (on CIFAR
    outputs most of them in the top 1/1920 of [0, 1]), where a cell of
    equal width in p spans logits 4 to 14: one atom at the mean confidence
    would stand for curve values far from its own. Cells of logit width at
    most 1/2 keep the curve nearly linear within each cell.
    """
    m = coarse.n_bins
    e = _index_edges(coarse)
    lo, hi = e[:-1, None], e[1:, None]
    inner = np.clip(lo + (hi - lo) * (np.arange(r) / r), lo, hi)
    inner[:, 0] = e[:-1]  # the ECE edges themselves, exactly
    base = np.maximum.accumulate(np.append(inner.ravel(), e[-1]))
    assert base.size == m * r + 1
    clip = [c for c in (LOGIT_CLIP, 1.0 - LOGIT_CLIP) if base[0] < c < base[-1]]
    base = np.unique(np.concatenate([base, clip])) if np.all(np.diff(base) > 0) else \
        np.sort(np.concatenate([base, clip]), kind="stable")
    x = logit_confidence(base)
    pieces = np.ceil(np.diff(x) / END_LOGIT - 1e-9).astype(np.int64)
    parts = [base[:1]]
    for i in np.flatnonzero(pieces > 1):
        inner = special.expit(x[i] + (x[i + 1] - x[i]) * np.arange(1, pieces[i]) / pieces[i])
        parts.append(inner[(inner > base[i]) & (inner < base[i + 1])])
    parts.append(base[1:])
    return Binning(np.sort(np.concatenate(parts), kind="stable"), "edges")


def top_label_fine_binning(n_labels: int, n_bins: int | None = None,
                           binning: BinningSpec | Binning = "uniform", *,
                           grid: str | int = "auto") -> Binning:
    """The bins to collect per-label statistics in for the smooth top-label posterior.

    Statistics of each predicted label in these bins (e.g.
    ``bece._binned.toplabel.top_label_statistics(y, prob, binning=top_label_fine_binning(K))``,
    summed over chunks) give :func:`bece._smooth.toplabel.smooth_posterior_top_label_ece`
    exactly the atoms that :func:`bece._smooth.toplabel.smooth_top_label_ece`
    builds from the predictions with the same ``grid`` (above 2,000
    predictions).

    Parameters
    ----------
    n_labels : int
        L, the number of labels that will be predicted (K classes at most;
        with "auto" it sets the sub-cells per ECE bin).
    n_bins, binning
        The ECE bins (default 15 uniform; explicit edges allowed).
    grid : "auto" or int, default "auto"
        Sub-cells per ECE bin (:func:`auto_subcells` for "auto").
    """
    if isinstance(binning, str) and binning in ("quantile", "equal-mass"):
        raise ValueError("binning='quantile' has data-dependent edges: pass its edges")
    coarse = make_binning(None, n_bins, binning)
    g = check_label_grid(grid)
    if g is None:
        raise ValueError("grid must be 'auto' or a positive integer for statistics")
    r = auto_subcells(positive_int(n_labels, "n_labels"), coarse.n_bins) if g == "auto" else int(g)
    return label_fine_binning(coarse, r)


def label_cells_from_stats(
    stats: Sequence[CalibrationStats], n_bins: int | None, binning: BinningSpec | Binning,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, Binning, np.ndarray, Binning]:
    """Stacked per-label statistics in bins that refine the ECE bins.

    Returns ``counts`` (L, 2, G), ``sum_p``, ``sum_p2`` (L, G), the fine
    binning, the ECE bin of each fine bin (-1 where no label has data) and
    the ECE binning. ValueError unless ``stats`` is a non-empty sequence of
    CalibrationStats with the same bins refining the ECE bins, each with
    data.
    """
    if isinstance(stats, CalibrationStats) or not isinstance(stats, Sequence) or len(stats) == 0 \
            or not all(isinstance(s, CalibrationStats) for s in stats):
        raise ValueError("stats must be a non-empty sequence of CalibrationStats, one per predicted "
                         "label")
    fine = stats[0].binning
    if any(s.binning != fine for s in stats):
        raise ValueError("all labels' CalibrationStats must share the same bins")
    empty = [j for j, s in enumerate(stats) if s.n == 0]
    if empty:
        raise ValueError(
            f"stats[{empty[0]}] holds no predictions (n = 0; {len(empty)} label(s) in all): the "
            "posterior is conditional on the labels that are predicted; leave those out"
        )
    pooled = sum(stats[1:], stats[0])
    # validates that the fine bins refine the ECE bins, and gives the ECE bin of each
    # non-empty fine bin (atoms_from_stats keeps the non-empty bins in order)
    pooled_atoms = atoms_from_stats(pooled, n_bins=n_bins, binning=binning)
    cell_bin = np.full(fine.n_bins, -1, dtype=np.int64)
    cell_bin[np.flatnonzero(pooled.bin_counts)] = pooled_atoms.bin
    counts = np.stack([s.counts for s in stats])
    sp = np.stack([s.sum_p for s in stats])
    sp2 = np.stack([s.sum_p2 for s in stats])
    return counts, sp, sp2, fine, cell_bin, pooled_atoms.binning


def _merge(label: np.ndarray, bins: np.ndarray, cell: np.ndarray, t: np.ndarray, c: np.ndarray,
           sum_p: np.ndarray, n_labels: int, coarse: Binning, n_cells: int, r: int) -> LabelAtoms:
    """One atom per distinct (label, ECE bin, sub-cell): counts and sums added."""
    m = coarse.n_bins
    key = (label.astype(np.int64) * m + bins) * n_cells + cell
    uniq, inv = np.unique(key, return_inverse=True)
    size = uniq.size
    trials = np.bincount(inv, weights=t, minlength=size).round().astype(np.int64)
    succ = np.bincount(inv, weights=c, minlength=size).round().astype(np.int64)
    sp = np.bincount(inv, weights=sum_p, minlength=size)
    ub = uniq // n_cells
    b = ub % m
    ce = coarse.edges
    p = np.clip(sp / trials, ce[:-1][b], ce[1:][b])  # float rounding of the mean only
    return LabelAtoms(p, logit_confidence(p), trials, succ, (ub // m).astype(np.int64),
                      b.astype(np.int64), coarse, int(n_labels), int(r))


def label_atoms(label: np.ndarray, z: np.ndarray, p: np.ndarray, n_labels: int, coarse: Binning,
                r: int) -> LabelAtoms:
    """Grid atoms of checked predictions (label indices, outcomes, confidences of shape (n,)):
    the sub-cells of :func:`label_fine_binning`, the ECE bin of ``coarse.index(p)``."""
    fine = label_fine_binning(coarse, r)
    ones = np.ones(p.size)
    return _merge(label, coarse.index(p), fine.index(p), ones, np.asarray(z, dtype=np.float64), p,
                  n_labels, coarse, fine.n_bins, r)


def label_atoms_from_cells(counts: np.ndarray, sum_p: np.ndarray, fine: Binning,
                           cell_bin: np.ndarray, coarse: Binning, r: int) -> LabelAtoms:
    """Atoms from per-label statistics in bins ``fine`` that refine the ECE bins.

    A fine bin goes to the sub-cell of :func:`label_fine_binning` that holds
    its mid-point; one atom per non-empty (label, sub-cell): trials and
    successes added, confidence the mean. Statistics collected in
    ``label_fine_binning(coarse, r)`` itself give the atoms of
    :func:`label_atoms` exactly.
    """
    target = label_fine_binning(coarse, r)
    t = counts.sum(axis=1)
    lab, g = np.nonzero(t)
    e = fine.edges
    mid = 0.5 * (e[g] + e[g + 1])
    cell = np.clip(np.searchsorted(target.edges, mid, side="right") - 1, 0, target.n_bins - 1)
    return _merge(lab, cell_bin[g], cell, t[lab, g].astype(np.float64),
                  counts[lab, 1, g].astype(np.float64), sum_p[lab, g], counts.shape[0], coarse,
                  target.n_bins, r)


def label_coarse_stats(label: np.ndarray, z: np.ndarray, p: np.ndarray, n_labels: int,
                       coarse: Binning) -> tuple[CalibrationStats, ...]:
    """Per-label statistics of checked predictions in the ECE bins."""
    return label_statistics(coarse, label, z, p, n_labels)


def coarse_label_stats(stats: Sequence[CalibrationStats], cell_bin: np.ndarray,
                       coarse: Binning) -> tuple[CalibrationStats, ...]:
    """Per-label statistics added up to the ECE bins (for the plug-in and
    tables), exactly."""
    return tuple(coarsened(s, coarse, cell_bin).with_kind(None) for s in stats)


def exact_or_grid(grid: str | int | None, n: int, n_labels: int, n_bins: int) -> int | None:
    """Sub-cells per ECE bin (None: exact) for ``grid`` and n predictions."""
    if grid == "auto":
        return None if n <= EXACT_MAX_N else auto_subcells(n_labels, n_bins)
    return None if grid is None else int(grid)
