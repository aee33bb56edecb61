"""Sufficient statistics of binned predictions, additive across chunks.

For M bins the statistics are, per bin m,

.. math::

    c_{z,m} = |\\{i : z_i = z, b_i = m\\}| \\quad (z \\in \\{0, 1\\},\\ \\text{int64}),
    \\qquad S_m = \\sum_{i: b_i = m} p_i, \\qquad Q_m = \\sum_{i: b_i = m} p_i^2
    \\quad (\\text{float64}).

Everything the plug-in metrics and the conjugate posterior need is a
function of them, and they add: the statistics of a concatenation are the sum
of the statistics of the parts. Both add exactly: the sums are kept as int64
limbs (:mod:`bece._stats.exact`) and read as float64 by one formula, so the
same predictions give the same bits whether they come from memory, a file
read in chunks, Dask partitions, processes or a JAX device, in any order.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._base.typing import BinningSpec
from . import exact
from .binning import Binning
from .fused import binned_sums, outcome_sums
from .inputs import KINDS, Inputs, describe_bad, input_kind

__all__ = [
    "CalibrationStats",
    "coarsened",
    "label_statistics",
]


_INT64_MAX = int(np.iinfo(np.int64).max)
_U = np.finfo(np.float64).eps / 2  # unit roundoff of float64


def _as_counts(counts: ArrayLike) -> np.ndarray:
    """Counts as int64; ValueError for anything an int64 cast would change."""
    try:
        raw = np.asarray(counts)
    except (TypeError, ValueError):
        raise ValueError(f"counts must be an array of non-negative integers, got {counts!r}") from None
    if raw.dtype.kind == "f":
        bad = ~np.isfinite(raw) | (raw != np.floor(raw))
        if bad.any():
            raise ValueError(
                f"counts must be non-negative integers; {describe_bad(raw, bad)} are not"
            )
    elif raw.dtype.kind not in "iu":
        raise ValueError(f"counts must be non-negative integers, got dtype {raw.dtype}")
    if not raw.size:
        return np.array(raw, dtype=np.int64)
    lo, hi = raw.min(), raw.max()
    if lo < 0:
        raise ValueError(f"counts must be non-negative; {describe_bad(raw, raw < 0)} are not")
    # the total must fit in int64: exact Python ints only when size * max could exceed it
    if float(hi) * raw.size >= 2.0**62:
        total = sum(int(c) for c in raw.ravel())
        if total > _INT64_MAX:
            raise ValueError(
                f"counts total {total} predictions, more than 2**63 - 1, the most int64 "
                "counts can hold"
            )
    return np.array(raw, dtype=np.int64)


def _as_sums(x: ArrayLike, name: str) -> np.ndarray:
    try:
        raw = np.asarray(x)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of real numbers, got {x!r}") from None
    if raw.dtype.kind not in "fiu":
        raise ValueError(f"{name} must be an array of real numbers, got dtype {raw.dtype}")
    arr = np.array(raw, dtype=np.float64)
    if not np.isfinite(arr).all():
        bad = ~np.isfinite(arr)
        raise ValueError(f"{name} contains NaN or infinity: {describe_bad(arr, bad)}")
    return arr


def _check_possible(n_m: np.ndarray, sum_p: np.ndarray, sum_p2: np.ndarray) -> None:
    """Refuse sums no confidences in [0, 1] can give: per bin 0 <= S <= n,
    0 <= Q <= S and S**2 <= n Q, each up to a relative 8 n u of rounding."""
    n = n_m.astype(np.float64)
    slack = 1.0 + 8.0 * n * _U
    checks = (
        (sum_p < 0, "sum_p must be >= 0"),
        (sum_p > n * slack, "sum_p must be <= the bin's count (confidences are at most 1)"),
        (sum_p2 < 0, "sum_p2 must be >= 0"),
        (sum_p2 > sum_p * slack, "sum_p2 must be <= sum_p (p**2 <= p for p in [0, 1])"),
        (sum_p * sum_p > n * sum_p2 * slack * slack,
         "sum_p**2 must be <= count * sum_p2 (Cauchy-Schwarz)"),
    )
    for bad, rule in checks:
        if bad.any():
            j = int(np.argmax(bad))
            raise ValueError(
                f"impossible statistics: {rule}; {int(bad.sum())} bin(s) break it, e.g. bin {j} "
                f"with count {int(n_m[j])}, sum_p {float(sum_p[j])!r}, sum_p2 {float(sum_p2[j])!r}"
            )


class CalibrationStats:
    """Per-bin counts and sums of binned (outcome, confidence) pairs.

    Build with :meth:`from_arrays` (or :meth:`from_outcomes`); add two
    instances with ``+`` (or ``sum([...])``) to merge chunks.

    Attributes
    ----------
    binning : Binning
        Edges (shape ``(M + 1,)``) and index rule.
    counts : ndarray of shape (2, M), int64
        ``counts[0]`` incorrect (``z = 0``), ``counts[1]`` correct (``z = 1``).
    sum_p, sum_p2 : ndarray of shape (M,), float64
        Sum of confidences and of squared confidences in each bin, read
        from their exact sums (:mod:`bece._stats.exact`): the same bits
        for the same predictions in any order or split.
    kind : {"binary", "top-label", "triples"} or None
        How the predictions were read (:func:`bece._stats.inputs.input_kind`):
        ``"binary"``, :math:`P(y = 1)` against ``y = 1`` (``counts[1]``
        counts ``y = 1``, ``sum_p`` sums :math:`P(y = 1)`); ``"top-label"``,
        the largest class probability against ``argmax == y_true``;
        ``"triples"``, the confidence of ``y_pred`` against
        ``y_pred == y_true``. None when not known (statistics built from
        counts). ``+`` keeps it when both agree (None takes the other's)
        and refuses statistics of two different kinds.

    Examples
    --------
    >>> import numpy as np
    >>> from bece import CalibrationStats, posterior_ece
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=1000)
    >>> y = rng.uniform(size=1000) < p
    >>> stats = CalibrationStats.from_arrays(y, p, n_bins=10)
    >>> stats
    CalibrationStats(n=1000, n_bins=10, rule='uniform', empty_bins=0, kind='binary')
    >>> stats.counts.shape, stats.counts.dtype, stats.sum_p.dtype
    ((2, 10), dtype('int64'), dtype('float64'))
    >>> bool(np.max(np.abs(stats.confidence - (np.arange(10) + 0.5) / 10)) < 0.01)
    True

    Statistics of chunks add up to those of the whole:

    >>> first = CalibrationStats.from_arrays(y[:600], p[:600], n_bins=10)
    >>> rest = CalibrationStats.from_arrays(y[600:], p[600:], n_bins=10)
    >>> merged = first + rest
    >>> merged == stats        # counts and sums alike, to the last bit
    True
    >>> posterior_ece(merged, num_samples=2000).num_samples
    2000
    """

    __slots__ = ("_exact", "binning", "counts", "kind", "sum_p", "sum_p2")

    def __init__(self, binning: Binning, counts: ArrayLike, sum_p: ArrayLike, sum_p2: ArrayLike,
                 *, kind: str | None = None) -> None:
        """Check and store statistics (usually built by :meth:`from_arrays`).

        Raises ``ValueError`` unless ``counts`` are non-negative integers
        (int64, or whole floats) whose total fits in int64, and the sums are
        finite and possible for the counts, up to float64 rounding: per bin,
        :math:`0 \\le S_m \\le n_m`, :math:`0 \\le Q_m \\le S_m` and
        :math:`S_m^2 \\le n_m Q_m` (Cauchy-Schwarz), with a relative slack of
        :math:`8 n_m u` (u = 2**-53) for the rounding of sums of n_m terms.
        """
        self._store(binning, counts, sum_p, sum_p2, possible=True)
        self.kind = _check_kind(kind)

    @classmethod
    def from_simulation(cls, binning: Binning, counts: ArrayLike, sum_p: ArrayLike,
                        sum_p2: ArrayLike) -> CalibrationStats:
        """Statistics of simulated confidences, which need not lie in [0, 1].

        For simulation-based checks of the conjugate model, which draws each
        confidence from a Normal around its bin's mean
        (:func:`bece._validation.sbc.stats_from_cells`): the counts and the
        finiteness of the sums are checked, their range is not. Statistics of
        predictions are built with the constructor or :meth:`from_arrays`.
        """
        self = cls.__new__(cls)
        self._store(binning, counts, sum_p, sum_p2, possible=False)
        self.kind = None
        return self

    @classmethod
    def _computed(cls, binning: Binning, counts: np.ndarray, sums: np.ndarray,
                  kind: str | None = None) -> CalibrationStats:
        """Statistics computed from checked predictions (or added): int64
        counts (2, M) and the exact sums ``sums`` (2, 4, M) of the
        confidences and of their squares (:mod:`bece._stats.exact`, any
        carries), possible by construction, so the constructor's checks (as
        costly as a small call's work) are skipped."""
        self = cls.__new__(cls)
        self._set(binning, np.array(counts, dtype=np.int64), sums)
        self.kind = kind
        return self

    def _set(self, binning: Binning, counts: np.ndarray, sums: np.ndarray) -> None:
        sums = exact.normalise(sums)
        sum_p, sum_p2 = exact.value(sums)
        for a in (counts, sums, sum_p, sum_p2):
            a.setflags(write=False)
        self.binning, self.counts, self._exact = binning, counts, sums
        self.sum_p, self.sum_p2 = sum_p, sum_p2

    def with_kind(self, kind: str | None) -> CalibrationStats:
        """The same statistics (arrays shared, read-only) with ``kind`` set."""
        return CalibrationStats._computed(self.binning, self.counts, self._exact, _check_kind(kind))

    def _store(self, binning: Binning, counts: ArrayLike, sum_p: ArrayLike, sum_p2: ArrayLike,
               *, possible: bool) -> None:
        if not isinstance(binning, Binning):
            raise ValueError(f"binning must be a Binning, got {type(binning).__name__}")
        m = binning.n_bins
        counts = _as_counts(counts)
        sum_p = _as_sums(sum_p, "sum_p")
        sum_p2 = _as_sums(sum_p2, "sum_p2")
        if counts.shape != (2, m) or sum_p.shape != (m,) or sum_p2.shape != (m,):
            raise ValueError(
                f"statistics for {m} bins need counts of shape (2, {m}) and sums of "
                f"shape ({m},), got {counts.shape}, {sum_p.shape}, {sum_p2.shape}"
            )
        if possible:
            _check_possible(counts.sum(axis=0), sum_p, sum_p2)
        self._set(binning, counts, np.stack([exact.of_floats(sum_p), exact.of_floats(sum_p2)]))

    # ------------------------------------------------------------------ build
    @classmethod
    def from_outcomes(cls, z: np.ndarray, p: np.ndarray, binning: Binning, *,
                      kind: str | None = None) -> CalibrationStats:
        """Statistics of checked outcomes ``z`` and confidences ``p``.

        ``z`` (bool or int 0/1, shape (n,)) and ``p`` (float64, shape (n,))
        are assumed valid (use :meth:`from_arrays` for user input); one
        fused pass (:mod:`bece._stats.fused`). ``kind``: how they were read
        (class docstring).
        """
        return cls._computed(binning, *outcome_sums(np.asarray(z), np.asarray(p), binning),
                             kind=_check_kind(kind))

    @classmethod
    def from_arrays(
        cls,
        y_true: ArrayLike,
        y_prob: ArrayLike,
        *,
        y_pred: ArrayLike | None = None,
        n_bins: int | None = None,
        binning: BinningSpec | Binning = "uniform",
        labels: ArrayLike | None = None,
        pos_label: Any = None,
        from_logits: bool = False,
        row_sum_tol: float | None = None,
    ) -> CalibrationStats:
        """Statistics of classifier outputs.

        Parameters
        ----------
        y_true : array_like of shape (n,)
            True labels.
        y_prob : array_like of shape (n,) or (n, K)
            ``P(y=1)`` of a binary classifier, or class probabilities (the
            top-label confidence is used), or with ``y_pred`` the confidence
            of ``y_pred``.
        y_pred : array_like of shape (n,), optional
            Predicted labels: triples (y_pred, y_true, confidence of y_pred).
        n_bins : int, default 15
            Number of bins M.
        binning : {"uniform", "quantile"} or array_like of edges, default "uniform"
            See :mod:`bece._stats.binning`. ``"quantile"`` is refused for Dask and
            JAX arrays (pass explicit edges).
        labels : array_like, optional
            The class of each column of ``y_prob`` in order (e.g.
            ``clf.classes_``), for labels that are not ``0 .. K-1``; with a
            1-D ``y_prob``, the two classes (negative, positive).
            :mod:`bece._stats.labels` has the rules; Dask needs it for text labels.
        pos_label : optional
            The value of ``y_true`` that is ``y = 1`` for a 1-D ``y_prob``
            (default 1 for labels 0/1 and -1/1, as scikit-learn).
        from_logits : bool, default False
            ``y_prob`` holds logits: sigmoid (n,) or softmax (n, K), applied
            in float64 block by block (not for JAX arrays).
        row_sum_tol : float, optional
            Tolerance of the row sums of a 2-D ``y_prob`` instead of the
            strict default (:func:`bece._stats.inputs.row_sum_tolerance`);
            accepted rows are used as given, never renormalised.

        Notes
        -----
        NumPy input: one fused pass checks, bins and sums
        (:mod:`bece._stats.fused`). A ``jax.Array`` ``y_prob`` is reduced on its
        device and only the (2, M) results come back
        (:mod:`bece._stats.device`). Dask arrays are reduced block by block up a
        tree on the current Dask scheduler (:mod:`bece._stats.distributed`).

        Examples
        --------
        >>> import numpy as np
        >>> from bece import CalibrationStats
        >>> s = CalibrationStats.from_arrays([0, 1, 1], [0.1, 0.8, 0.9], n_bins=2)
        >>> s.counts.tolist(), s.sum_p.tolist()
        ([[1, 0], [0, 2]], [0.1, 1.7000000000000002])
        """
        return statistics_of(y_true, y_prob, y_pred, n_bins, binning,
                             Inputs(labels, pos_label, from_logits, row_sum_tol))

    @classmethod
    def from_dataframe(
        cls,
        df: Any,  # a pandas or Dask DataFrame (neither is imported with bece)
        *,
        y_true: Hashable = "y_true",
        y_prob: Hashable | list[Hashable] | None = None,
        y_pred: Hashable | None = None,
        n_bins: int | None = None,
        binning: BinningSpec | Binning = "uniform",
        labels: ArrayLike | None = None,
        pos_label: Any = None,
        from_logits: bool = False,
        row_sum_tol: float | None = None,
    ) -> CalibrationStats:
        """Statistics of the predictions in a pandas or Dask DataFrame.

        Parameters
        ----------
        df : pandas.DataFrame or dask.dataframe.DataFrame
            One row per prediction.
        y_true : column label, default "y_true"
            Column of true labels. Labels are used as they are (integer
            column names stay integers).
        y_prob : column label or list of labels, optional
            Column of :math:`P(y=1)` or of confidences, or the K columns of
            class probabilities. Default: the conventions of :mod:`bece.io`
            (``y_prob``, or ``p_0 ... p_{K-1}``, and ``y_pred`` if present).
        y_pred : column label, optional
            Column of predicted labels (default: ``"y_pred"`` if present and
            ``y_prob`` is not given).
        n_bins : int, default 15
        binning : {"uniform"} or array_like of edges, default "uniform"
            ``"quantile"`` works for pandas only (global quantiles cannot be
            reduced from partitions exactly).
        labels, pos_label, from_logits, row_sum_tol
            As :meth:`from_arrays`.

        Notes
        -----
        A Dask DataFrame is reduced partition by partition on the current
        Dask scheduler (a ``dask.distributed.Client`` if one is open) and
        the partitions' statistics are added up a tree
        (:mod:`bece._stats.distributed`); the result equals one pass over the whole
        frame, to the last bit.

        Examples
        --------
        >>> import pandas as pd
        >>> from bece import CalibrationStats
        >>> df = pd.DataFrame({"y_true": [0, 1, 1], "y_prob": [0.1, 0.8, 0.9]})
        >>> CalibrationStats.from_dataframe(df, n_bins=2).counts.tolist()
        [[1, 0], [0, 2]]
        """
        from .distributed import dataframe_sums

        bins, counts, sums, kind = dataframe_sums(
            df, y_true=y_true, y_prob=y_prob, y_pred=y_pred, n_bins=n_bins, binning=binning,
            inputs=Inputs(labels, pos_label, from_logits, row_sum_tol),
        )
        return cls._computed(bins, counts, sums, kind)

    # ------------------------------------------------------------------ merge
    def __add__(self, other: CalibrationStats | int) -> CalibrationStats:
        if isinstance(other, int) and other == 0:  # lets sum() start at 0
            return self
        if not isinstance(other, CalibrationStats):
            return NotImplemented
        if self.binning != other.binning:
            raise ValueError(
                "cannot add CalibrationStats with different bins: "
                f"{self.binning!r} with edges {np.round(self.binning.edges, 4).tolist()} vs "
                f"{other.binning!r} with edges {np.round(other.binning.edges, 4).tolist()}; "
                "build every chunk with the same n_bins and binning (explicit edges "
                "for quantile bins)"
            )
        if self.n + other.n > _INT64_MAX:  # Python ints: the int64 sum would wrap
            raise ValueError(
                f"cannot add CalibrationStats of {self.n} and {other.n} predictions: the total "
                f"exceeds 2**63 - 1, the most int64 counts can hold"
            )
        if self.kind is not None and other.kind is not None and self.kind != other.kind:
            raise ValueError(
                f"cannot add CalibrationStats of {self.kind} predictions to {other.kind} ones: "
                "their counts and confidences mean different things (CalibrationStats.kind)"
            )
        # sums of checked statistics: counts and sums stay possible
        return CalibrationStats._computed(
            self.binning,
            self.counts + other.counts,
            self._exact + other._exact,
            self.kind if self.kind is not None else other.kind,
        )

    __radd__ = __add__

    def __eq__(self, other: object) -> bool:
        """Equal bins, kind, counts and exact sums."""
        if not isinstance(other, CalibrationStats):
            return NotImplemented
        return (self.binning == other.binning and self.kind == other.kind
                and all(np.array_equal(getattr(self, k), getattr(other, k))
                        for k in ("counts", "_exact")))

    __hash__ = None  # type: ignore[assignment]

    # ------------------------------------------------------------ plain data
    def to_dict(self) -> dict[str, Any]:
        """Plain Python (for JSON): ``edges``, ``rule``, ``counts`` (2 x M),
        ``sum_p``, ``sum_p2``, ``kind``, and ``exact_sums``: the exact sums
        of the confidences and of their squares as integers (2 x 4 x M: per
        bin the integer part and three 26-bit fractional limbs,
        :mod:`bece._stats.exact`), so that :meth:`from_dict` (and a JSON
        round trip) restores the statistics exactly and statistics merged
        from files equal those of the whole data."""
        return {"edges": self.edges.tolist(), "rule": self.binning.rule,
                "counts": self.counts.tolist(), "sum_p": self.sum_p.tolist(),
                "sum_p2": self.sum_p2.tolist(), "kind": self.kind,
                "exact_sums": self._exact.tolist()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CalibrationStats:
        """The statistics :meth:`to_dict` wrote, checked as by the constructor.

        Examples
        --------
        >>> import json
        >>> import numpy as np
        >>> from bece import CalibrationStats
        >>> stats = CalibrationStats.from_arrays([0, 1, 1], [0.2, 0.7, 0.9], n_bins=5)
        >>> CalibrationStats.from_dict(json.loads(json.dumps(stats.to_dict()))) == stats
        True
        """
        keys = {"edges", "rule", "counts", "sum_p", "sum_p2", "kind"}
        if not isinstance(data, dict) or not keys <= set(data) <= keys | {"exact_sums"}:
            got = sorted(data) if isinstance(data, dict) else type(data).__name__
            raise ValueError(f"CalibrationStats.from_dict needs the keys {sorted(keys)} "
                             f"(and optionally 'exact_sums'), got {got}")
        if data["rule"] not in ("uniform", "edges"):
            raise ValueError(f"rule must be 'uniform' or 'edges', got {data['rule']!r}")
        edges = np.asarray(data["edges"], dtype=np.float64)
        if edges.ndim != 1 or edges.size < 2 or not np.all(np.isfinite(edges)) \
                or np.any(np.diff(edges) < 0) or edges[0] < 0 or edges[-1] > 1:
            raise ValueError("edges must be a non-decreasing list of at least two numbers in [0, 1]")
        stats = cls(Binning(edges, data["rule"]), np.asarray(data["counts"]),
                    np.asarray(data["sum_p"], dtype=np.float64),
                    np.asarray(data["sum_p2"], dtype=np.float64), kind=data["kind"])
        if "exact_sums" in data:
            given = np.stack([stats.sum_p, stats.sum_p2])
            stats._set(stats.binning, stats.counts,
                       exact.checked_limbs(data["exact_sums"], given, "exact_sums"))
        return stats

    # ------------------------------------------------------------- derived
    @property
    def edges(self) -> np.ndarray:
        """Bin edges, shape (M + 1,)."""
        return self.binning.edges

    @property
    def n_bins(self) -> int:
        return self.binning.n_bins

    @property
    def bin_counts(self) -> np.ndarray:
        """Number of predictions per bin, :math:`n_m`, shape (M,), int64."""
        return self.counts.sum(axis=0)

    @property
    def n(self) -> int:
        return int(self.counts.sum())

    @property
    def accuracy(self) -> np.ndarray:
        """Observed accuracy :math:`c_{1,m}/n_m` per bin; NaN for empty bins."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.bin_counts > 0, self.counts[1] / self.bin_counts, np.nan)

    @property
    def confidence(self) -> np.ndarray:
        """Mean confidence :math:`S_m/n_m` per bin; NaN for empty bins."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.bin_counts > 0, self.sum_p / self.bin_counts, np.nan)

    def __repr__(self) -> str:
        return (
            f"CalibrationStats(n={self.n}, n_bins={self.n_bins}, rule={self.binning.rule!r}, "
            f"empty_bins={int((self.bin_counts == 0).sum())}, kind={self.kind!r})"
        )


def coarsened(stats: CalibrationStats, binning: Binning, bin_of: ArrayLike) -> CalibrationStats:
    """``stats`` added up into the bins of ``binning``: bin ``j`` of
    ``stats`` goes into bin ``bin_of[j]`` (an empty bin may carry any index,
    -1 included), counts and exact sums alike; ``kind`` is kept."""
    bin_of = np.asarray(bin_of, dtype=np.int64)
    target = np.where(stats.bin_counts > 0, bin_of, 0)
    counts = np.zeros((2, binning.n_bins), dtype=np.int64)
    np.add.at(counts.T, target, stats.counts.T)
    return CalibrationStats._computed(binning, counts,
                                      exact.regroup(stats._exact, target, binning.n_bins),
                                      stats.kind)


def label_statistics(binning: Binning, label: np.ndarray, z: np.ndarray, p: np.ndarray,
                     n_labels: int, kind: str | None = None) -> tuple[CalibrationStats, ...]:
    """Per-label statistics of checked predictions: ``label`` (int, in
    ``0 .. n_labels - 1``), outcomes ``z`` (0/1) and confidences ``p``
    (float64) in the bins of ``binning``, one :class:`CalibrationStats` per
    label with exact sums."""
    m = binning.n_bins
    slot = np.asarray(label, dtype=np.int64) * m + binning.index(p)
    size = n_labels * m
    counts = np.bincount(2 * slot + np.asarray(z, dtype=np.int64), minlength=2 * size)
    counts = counts.reshape(n_labels, m, 2).transpose(0, 2, 1)
    sums = np.stack([exact.cell_sums(slot, p, size), exact.cell_sums(slot, p * p, size)])
    sums = sums.reshape(2, exact.N_LIMBS, n_labels, m)
    return tuple(CalibrationStats._computed(binning, counts[j], sums[:, :, j], kind)
                 for j in range(n_labels))


def _check_kind(kind: Any) -> str | None:
    if kind is not None and kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS} or None, got {kind!r}")
    return kind


def statistics_of(y_true: ArrayLike, y_prob: ArrayLike, y_pred: ArrayLike | None,
                  n_bins: int | None, binning: BinningSpec | Binning,
                  inputs: Inputs) -> CalibrationStats:
    """:meth:`CalibrationStats.from_arrays` with its input keywords as one
    :class:`~bece._stats.inputs.Inputs`: NumPy in one fused pass, a
    ``jax.Array`` on its device, Dask block by block."""
    from .device import device_sums, is_jax_array
    from .distributed import array_sums, is_dask

    kind = input_kind(y_prob, y_pred)
    if is_jax_array(y_prob):
        return CalibrationStats._computed(
            *device_sums(y_true, y_prob, y_pred, n_bins, binning, inputs), kind=kind)
    if any(is_dask(a) for a in (y_true, y_prob, y_pred)):
        return CalibrationStats._computed(*array_sums(y_true, y_prob, y_pred=y_pred, n_bins=n_bins,
                                                      binning=binning, inputs=inputs), kind=kind)
    return CalibrationStats._computed(*binned_sums(y_true, y_prob, y_pred, n_bins, binning, inputs),
                                      kind=kind)
