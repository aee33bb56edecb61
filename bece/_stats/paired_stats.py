"""Joint statistics of two models' predictions on the same examples, additive across chunks.

A paired comparison (:func:`bece.compare`) needs more than each model's
:class:`~bece.CalibrationStats`: it needs which of A's cells each of B's
examples shares. Each example falls in one joint cell

.. math::

    (c^a, z^a, c^b, z^b, s)

with :math:`c^a, c^b` the bins of the two models' confidences (each in its
own bins), :math:`z^a, z^b` whether each model was correct (binary input:
both are ``y = 1``) and :math:`s` whether both predict the same label
(always for binary ``P(y=1)`` input). Per joint cell the statistics are the
count (int64) and, per model, the sums of its confidences and of their
squares (float64). Only the non-empty joint cells are kept (at most one per
example), as sorted int64 keys, so that fine bins (the smooth model's 2,520
cells per model by default, :func:`bece.smooth.fine_binning`) cost memory in
proportion to the occupied cells, not to the :math:`8 M_a M_b` possible
ones. Statistics of chunks add with ``+``, counts and sums exactly (the sums
are kept as int64 limbs, :mod:`bece._stats.exact`). Summing over one model's cells gives the other model's
:class:`~bece.CalibrationStats` (:attr:`PairedStats.stats_a`,
:attr:`PairedStats.stats_b`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._base.typing import BinningSpec
from . import exact
from .binning import Binning, make_binning
from .calibration_stats import CalibrationStats
from .inputs import KINDS, Inputs, as_outcomes, check_pair, input_kind
from .labels import label_values

__all__ = [
    "PairedStats",
]

_INT64_MAX = int(np.iinfo(np.int64).max)

#: Key spaces up to this many cells are counted with a dense bincount.
_DENSE_KEYS = 1 << 22


class PairedStats:
    """Counts and sums of two models' predictions in their joint cells.

    Build with :meth:`from_arrays`; add chunks with ``+`` (or ``sum``). Turn
    into a paired posterior with :func:`bece.posterior_compare`.

    Attributes
    ----------
    binning_a, binning_b : Binning
        Each model's bins (for the smooth model: fine bins,
        ``bece.smooth.fine_binning(n_bins)``).
    keys : ndarray of shape (J,), int64
        The non-empty joint cells, increasing:
        ``(((c_a * 2 + z_a) * M_b + c_b) * 2 + z_b) * 2 + same``.
    counts : ndarray of shape (J,), int64
        Predictions per joint cell.
    sum_p_a, sum_p_b, sum_p2_a, sum_p2_b : ndarray of shape (J,), float64
        Sums of each model's confidences and of their squares per joint
        cell, read from their exact sums: the same bits in any order or
        split of the data.
    kind : {"binary", "top-label", "triples"} or None
        How the predictions were read (:class:`~bece.CalibrationStats`).

    Examples
    --------
    >>> import numpy as np
    >>> from bece import PairedStats
    >>> y = np.array([0, 1, 1, 1])
    >>> s = PairedStats.from_arrays(y, [0.2, 0.6, 0.9, 0.7], [0.4, 0.8, 0.6, 0.9], n_bins=2)
    >>> s
    PairedStats(n=4, n_bins=(2, 2), joint_cells=2, kind='binary')
    >>> s.joint_counts()[1, :, 1, :].tolist()       # both correct: A's bin x B's bin
    [[0, 0], [0, 3]]
    >>> first = PairedStats.from_arrays(y[:2], [0.2, 0.6], [0.4, 0.8], n_bins=2)
    >>> rest = PairedStats.from_arrays(y[2:], [0.9, 0.7], [0.6, 0.9], n_bins=2)
    >>> bool(np.array_equal((first + rest).counts, s.counts))
    True
    >>> s.stats_a.counts.tolist(), s.stats_b.counts.tolist()
    ([[1, 0], [0, 3]], [[1, 0], [0, 3]])
    """

    __slots__ = ("_exact", "binning_a", "binning_b", "counts", "keys", "kind", "sum_p2_a",
                 "sum_p2_b", "sum_p_a", "sum_p_b")

    def __init__(self, binning_a: Binning, binning_b: Binning, keys: ArrayLike, counts: ArrayLike,
                 sum_p_a: ArrayLike, sum_p_b: ArrayLike, sum_p2_a: ArrayLike, sum_p2_b: ArrayLike,
                 *, kind: str | None = None) -> None:
        """Check and store statistics (usually built by :meth:`from_arrays`).

        Raises ``ValueError`` unless both binnings are :class:`Binning`, the
        keys are increasing int64 keys of that key space, the counts
        positive integers, and each model's statistics possible
        (:class:`~bece.CalibrationStats`' checks on the sums over the other
        model's cells).
        """
        for name, b in (("binning_a", binning_a), ("binning_b", binning_b)):
            if not isinstance(b, Binning):
                raise ValueError(f"{name} must be a Binning, got {type(b).__name__}")
        self.binning_a, self.binning_b = binning_a, binning_b
        space = _key_space(binning_a, binning_b)
        k = np.asarray(keys)
        if k.ndim != 1 or k.dtype.kind not in "iu":
            raise ValueError(f"keys must be a 1-D array of integers, got {k.dtype} of shape {k.shape}")
        k = k.astype(np.int64)
        if k.size and (k[0] < 0 or k[-1] >= space or np.any(np.diff(k) <= 0)):
            raise ValueError(f"keys must be increasing and in [0, {space}) for these bins")
        c = np.asarray(counts)
        if c.shape != k.shape or c.dtype.kind not in "iu" or (c.size and c.min() < 1):
            raise ValueError(f"counts must be {k.size} positive integers, one per key")
        sums = []
        for name, v in (("sum_p_a", sum_p_a), ("sum_p_b", sum_p_b), ("sum_p2_a", sum_p2_a),
                        ("sum_p2_b", sum_p2_b)):
            arr = np.array(v, dtype=np.float64)
            if arr.shape != k.shape or not np.isfinite(arr).all():
                raise ValueError(f"{name} must be {k.size} finite numbers, one per key")
            sums.append(arr)
        self._set(k, c.astype(np.int64), exact.of_floats(np.stack(sums)))
        self.kind = _check_kind(kind)
        for tag in ("a", "b"):  # CalibrationStats checks each model's sums
            side = self._side(tag)
            CalibrationStats(side.binning, side.counts, side.sum_p, side.sum_p2)

    def _set(self, keys: np.ndarray, counts: np.ndarray, sums: np.ndarray) -> None:
        """Store keys, counts and the exact sums (4, 4, J): sum_p_a, sum_p_b,
        sum_p2_a, sum_p2_b, each as limbs (:mod:`bece._stats.exact`)."""
        sums = exact.normalise(sums)
        values = exact.value(sums)
        for arr in (keys, counts, sums, values):
            arr.setflags(write=False)
        self.keys, self.counts, self._exact = keys, counts, sums
        self.sum_p_a, self.sum_p_b, self.sum_p2_a, self.sum_p2_b = values

    @classmethod
    def _grouped(cls, binning_a: Binning, binning_b: Binning, keys: np.ndarray,
                 counts: np.ndarray | None, sums: tuple[np.ndarray, ...] | np.ndarray,
                 kind: str | None) -> PairedStats:
        """Statistics of (possibly repeated) keys, added up: with ``counts``
        None one prediction per key and ``sums`` its four values (p_a, p_b,
        p_a**2, p_b**2); else per-key counts and exact sums (4, 4, len(keys))."""
        self = cls.__new__(cls)
        self.binning_a, self.binning_b, self.kind = binning_a, binning_b, kind
        space = _key_space(binning_a, binning_b)
        if space <= max(_DENSE_KEYS, 4 * keys.size):
            uniq = np.flatnonzero(np.bincount(keys, minlength=space)).astype(np.int64)
            inv = np.searchsorted(uniq, keys)
        else:
            uniq, inv = np.unique(keys, return_inverse=True)
            inv = inv.reshape(-1)
        if counts is None:
            c = np.bincount(inv, minlength=uniq.size).astype(np.int64)
            limbs = np.stack([exact.cell_sums(inv, w, uniq.size) for w in sums])
        else:
            c = np.zeros(uniq.size, dtype=np.int64)
            np.add.at(c, inv, counts)
            limbs = exact.regroup(np.asarray(sums), inv, uniq.size)
        self._set(uniq, c, limbs)
        return self

    @classmethod
    def from_outcomes(cls, z_a: np.ndarray, p_a: np.ndarray, z_b: np.ndarray, p_b: np.ndarray,
                      same: np.ndarray, binning_a: Binning, binning_b: Binning, *,
                      kind: str | None = None) -> PairedStats:
        """Statistics of checked outcomes and confidences of both models
        (shape (n,) each; ``same`` bool), e.g. from
        :func:`bece._stats.inputs.as_outcomes`; :meth:`from_arrays` checks user input."""
        keys = _keys(binning_a.index(p_a), np.asarray(z_a, np.int64), binning_b.index(p_b),
                     np.asarray(z_b, np.int64), np.asarray(same, bool), binning_b.n_bins)
        p_a, p_b = np.asarray(p_a, np.float64), np.asarray(p_b, np.float64)
        return cls._grouped(binning_a, binning_b, keys, None, (p_a, p_b, p_a * p_a, p_b * p_b),
                            _check_kind(kind))

    @classmethod
    def from_arrays(
        cls,
        y_true: ArrayLike,
        y_prob_a: ArrayLike,
        y_prob_b: ArrayLike,
        *,
        y_pred_a: ArrayLike | None = None,
        y_pred_b: ArrayLike | None = None,
        n_bins: int | None = None,
        binning: BinningSpec | Binning = "uniform",
        binning_b: BinningSpec | Binning | None = None,
        labels: ArrayLike | None = None,
        pos_label: Any = None,
        from_logits: bool = False,
        row_sum_tol: float | None = None,
    ) -> PairedStats:
        """Joint statistics of two models' outputs on the same examples.

        Parameters
        ----------
        y_true : array_like of shape (n,)
            True labels, shared by both models.
        y_prob_a, y_prob_b : array_like of shape (n,) or (n, K)
            As :func:`bece.compare`: ``P(y=1)``, class probabilities
            (top-label), or with ``y_pred_*`` the confidence of ``y_pred_*``.
        y_pred_a, y_pred_b : array_like of shape (n,), optional
            Predicted labels (give both or neither).
        n_bins : int, default 15
            Bins of each model.
        binning : {"uniform", "quantile"} or array_like of edges or Binning, default "uniform"
            A's bins (and B's unless ``binning_b``). For chunks that add, and
            for the smooth model, fixed bins:
            ``binning=bece.smooth.fine_binning(n_bins)``. ``"quantile"``
            places each model's edges at its own confidences' quantiles (one
            chunk only: chunks with other edges do not add).
        binning_b : optional
            B's bins when they differ from A's.
        labels, pos_label, from_logits, row_sum_tol
            As :meth:`bece.CalibrationStats.from_arrays`.

        Returns
        -------
        PairedStats

        Raises
        ------
        ValueError
            For anything :func:`bece.compare` refuses: different numbers of
            rows or shapes, only one ``y_pred``, bad labels or probabilities.
        """
        o = paired_outcomes(y_true, y_prob_a, y_prob_b, (y_pred_a, y_pred_b),
                            Inputs(labels, pos_label, from_logits, row_sum_tol))
        bin_a = make_binning(o.p_a, n_bins, binning)
        bin_b = make_binning(o.p_b, n_bins, binning if binning_b is None else binning_b)
        return cls.from_outcomes(o.z_a, o.p_a, o.z_b, o.p_b, o.same, bin_a, bin_b, kind=o.kind)

    # ------------------------------------------------------------------ merge
    def to_dict(self) -> dict[str, Any]:
        """Plain Python (for JSON): both binnings, the joint cells' keys,
        counts and sums, ``kind``, and ``exact_sums`` (the four sums as
        integer limbs, 4 x 4 x J, as :meth:`bece.CalibrationStats.to_dict`);
        :meth:`from_dict` restores them exactly."""
        return {"edges_a": self.binning_a.edges.tolist(), "rule_a": self.binning_a.rule,
                "edges_b": self.binning_b.edges.tolist(), "rule_b": self.binning_b.rule,
                "keys": self.keys.tolist(), "counts": self.counts.tolist(),
                "sum_p_a": self.sum_p_a.tolist(), "sum_p_b": self.sum_p_b.tolist(),
                "sum_p2_a": self.sum_p2_a.tolist(), "sum_p2_b": self.sum_p2_b.tolist(),
                "kind": self.kind, "exact_sums": self._exact.tolist()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PairedStats:
        """The statistics :meth:`to_dict` wrote, checked as by the constructor."""
        keys = {"edges_a", "rule_a", "edges_b", "rule_b", "keys", "counts", "sum_p_a", "sum_p_b",
                "sum_p2_a", "sum_p2_b", "kind"}
        if not isinstance(data, dict) or not keys <= set(data) <= keys | {"exact_sums"}:
            got = sorted(data) if isinstance(data, dict) else type(data).__name__
            raise ValueError(f"PairedStats.from_dict needs the keys {sorted(keys)} (and "
                             f"optionally 'exact_sums'), got {got}")
        binnings = []
        for tag in ("a", "b"):
            one = CalibrationStats.from_dict({
                "edges": data[f"edges_{tag}"], "rule": data[f"rule_{tag}"], "kind": None,
                "counts": [[0] * (len(data[f"edges_{tag}"]) - 1)] * 2,
                "sum_p": [0.0] * (len(data[f"edges_{tag}"]) - 1),
                "sum_p2": [0.0] * (len(data[f"edges_{tag}"]) - 1)})  # checks the bins
            binnings.append(one.binning)
        stats = cls(binnings[0], binnings[1], np.asarray(data["keys"], dtype=np.int64),
                    np.asarray(data["counts"], dtype=np.int64), data["sum_p_a"], data["sum_p_b"],
                    data["sum_p2_a"], data["sum_p2_b"], kind=data["kind"])
        if "exact_sums" in data:
            given = np.stack([stats.sum_p_a, stats.sum_p_b, stats.sum_p2_a, stats.sum_p2_b])
            stats._set(stats.keys, stats.counts,
                       exact.checked_limbs(data["exact_sums"], given, "exact_sums"))
        return stats

    def __eq__(self, other: object) -> bool:
        """Equal bins, kind, joint cells and exact sums."""
        if not isinstance(other, PairedStats):
            return NotImplemented
        return (self.binning_a == other.binning_a and self.binning_b == other.binning_b
                and self.kind == other.kind
                and all(np.array_equal(getattr(self, k), getattr(other, k))
                        for k in ("keys", "counts", "_exact")))

    __hash__ = None  # type: ignore[assignment]

    def __add__(self, other: PairedStats | int) -> PairedStats:
        if isinstance(other, int) and other == 0:  # lets sum() start at 0
            return self
        if not isinstance(other, PairedStats):
            return NotImplemented
        for tag in ("a", "b"):
            if getattr(self, f"binning_{tag}") != getattr(other, f"binning_{tag}"):
                raise ValueError(
                    f"cannot add PairedStats with different bins for model {tag.upper()}: "
                    f"{getattr(self, f'binning_{tag}')!r} vs {getattr(other, f'binning_{tag}')!r}; "
                    "build every chunk with the same n_bins and binning (explicit edges for "
                    "quantile bins)"
                )
        if self.n + other.n > _INT64_MAX:
            raise ValueError(f"cannot add PairedStats of {self.n} and {other.n} predictions: the "
                             "total exceeds 2**63 - 1, the most int64 counts can hold")
        if self.kind is not None and other.kind is not None and self.kind != other.kind:
            raise ValueError(f"cannot add PairedStats of {self.kind} predictions to {other.kind} "
                             "ones: their counts and confidences mean different things")
        keys = np.concatenate([self.keys, other.keys])
        return PairedStats._grouped(self.binning_a, self.binning_b, keys,
                                    np.concatenate([self.counts, other.counts]),
                                    np.concatenate([self._exact, other._exact], axis=-1),
                                    self.kind if self.kind is not None else other.kind)

    __radd__ = __add__

    # ------------------------------------------------------------- derived
    def cells(self) -> dict[str, np.ndarray]:
        """The joint cells decoded: ``bin_a``, ``z_a``, ``bin_b``, ``z_b`` (int64)
        and ``same`` (bool), each of shape (J,)."""
        m_b = self.binning_b.n_bins
        k = self.keys
        same = (k % 2).astype(bool)
        k = k // 2
        z_b = k % 2
        k = k // 2
        bin_b = k % m_b
        k = k // m_b
        return {"bin_a": k // 2, "z_a": k % 2, "bin_b": bin_b, "z_b": z_b, "same": same}

    def joint_counts(self, to_a: np.ndarray | None = None, to_b: np.ndarray | None = None,
                     m_a: int | None = None, m_b: int | None = None) -> np.ndarray:
        """Counts of (correct under A, A's bin, correct under B, B's bin),
        shape (2, M_a, 2, M_b), int64 (the joint table of :func:`bece.compare`).

        ``to_a``, ``to_b``: optional maps of each model's bins to coarser ones
        (arrays of bin indices), with ``m_a``, ``m_b`` their numbers.
        """
        c = self.cells()
        ba, bb = c["bin_a"], c["bin_b"]
        if to_a is not None:
            ba = np.asarray(to_a)[ba]
        if to_b is not None:
            bb = np.asarray(to_b)[bb]
        m_a = self.binning_a.n_bins if m_a is None else m_a
        m_b = self.binning_b.n_bins if m_b is None else m_b
        cell = ((c["z_a"] * m_a + ba) * 2 + c["z_b"]) * m_b + bb
        out = np.zeros(4 * m_a * m_b, dtype=np.int64)
        np.add.at(out, cell, self.counts)
        return out.reshape(2, m_a, 2, m_b)

    def _side(self, tag: str) -> CalibrationStats:
        c = self.cells()
        b, z = c[f"bin_{tag}"], c[f"z_{tag}"]
        binning: Binning = getattr(self, f"binning_{tag}")
        m = binning.n_bins
        counts = np.zeros((2, m), dtype=np.int64)
        np.add.at(counts, (z, b), self.counts)
        which = [0, 2] if tag == "a" else [1, 3]  # (sum_p, sum_p2) of this model
        return CalibrationStats._computed(binning, counts, exact.regroup(self._exact[which], b, m),
                                          self.kind)

    @property
    def stats_a(self) -> CalibrationStats:
        """Model A's statistics in its bins (summed over B's cells)."""
        return self._side("a")

    @property
    def stats_b(self) -> CalibrationStats:
        """Model B's statistics in its bins (summed over A's cells)."""
        return self._side("b")

    @property
    def n(self) -> int:
        return int(self.counts.sum())

    def __repr__(self) -> str:
        return (f"PairedStats(n={self.n}, n_bins=({self.binning_a.n_bins}, "
                f"{self.binning_b.n_bins}), joint_cells={self.keys.size}, kind={self.kind!r})")


def _key_space(binning_a: Binning, binning_b: Binning) -> int:
    space = 8 * binning_a.n_bins * binning_b.n_bins
    if space > _INT64_MAX:
        raise ValueError(f"{binning_a.n_bins} x {binning_b.n_bins} bins are too many joint "
                         "cells for int64 keys; use fewer bins")
    return space


def _keys(bin_a: np.ndarray, z_a: np.ndarray, bin_b: np.ndarray, z_b: np.ndarray,
          same: np.ndarray, m_b: int) -> np.ndarray:
    return (((bin_a.astype(np.int64) * 2 + z_a) * m_b + bin_b) * 2 + z_b) * 2 + same


def _check_kind(kind: Any) -> str | None:
    if kind is not None and kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS} or None, got {kind!r}")
    return kind


@dataclass(frozen=True)
class PairedOutcomes:
    """Two models' predictions on the same examples, read: outcomes ``z_*``
    and confidences ``p_*`` of each (shape (n,)), ``same``: whether both
    predicted the same label (all True for binary data), and ``kind``, how
    they were read (:func:`bece._stats.inputs.input_kind`)."""

    z_a: np.ndarray
    p_a: np.ndarray
    z_b: np.ndarray
    p_b: np.ndarray
    same: np.ndarray
    kind: str


def paired_outcomes(y_true: ArrayLike, y_prob_a: ArrayLike, y_prob_b: ArrayLike,
                    y_preds: tuple[ArrayLike | None, ArrayLike | None],
                    inputs: Inputs) -> PairedOutcomes:
    """Check two models' predictions for a paired comparison
    (:func:`bece._stats.inputs.check_pair`: same rows, same shape; both
    ``y_pred`` or neither) and read each with ``inputs``."""
    y_pred_a, y_pred_b = y_preds
    pa, pb = check_pair(y_prob_a, y_prob_b, inputs)
    n = pa.shape[0]
    if (y_pred_a is None) != (y_pred_b is None):
        raise ValueError("give both y_pred_a and y_pred_b, or neither")
    if y_pred_a is not None:
        same = np.asarray(label_values(y_pred_a, "y_pred_a", n)
                          == label_values(y_pred_b, "y_pred_b", n), dtype=bool)
    elif pa.ndim == 2:
        same = np.argmax(pa, axis=1) == np.argmax(pb, axis=1)
    else:
        same = np.ones(n, dtype=bool)
    z_a, p_a = as_outcomes(y_true, pa, y_pred_a, inputs)
    z_b, p_b = as_outcomes(y_true, pb, y_pred_b, inputs)
    return PairedOutcomes(z_a, p_a, z_b, p_b, same, input_kind(pa, y_pred_a))
