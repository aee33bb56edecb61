"""Sufficient statistics of binned predictions, additive across chunks.

For M bins the statistics are, per bin m,

.. math::

    c_{z,m} = |\\{i : z_i = z, b_i = m\\}| \\quad (z \\in \\{0, 1\\},\\ \\text{int64}),
    \\qquad S_m = \\sum_{i: b_i = m} p_i, \\qquad Q_m = \\sum_{i: b_i = m} p_i^2
    \\quad (\\text{float64}).

Everything the plug-in metrics and the conjugate posterior need is a
function of them, and they add: the statistics of a concatenation are the sum
of the statistics of the parts (counts exactly, sums to float64 rounding).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..base.typing import BinningSpec
from .binning import Binning
from .fused import binned_sums, outcome_sums

__all__ = [
    "CalibrationStats",
]


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
        Sum of confidences and of squared confidences in each bin.
    """

    __slots__ = ("binning", "counts", "sum_p", "sum_p2")

    def __init__(self, binning: Binning, counts: ArrayLike, sum_p: ArrayLike, sum_p2: ArrayLike) -> None:
        m = binning.n_bins
        counts = np.array(counts, dtype=np.int64)
        sum_p = np.array(sum_p, dtype=np.float64)
        sum_p2 = np.array(sum_p2, dtype=np.float64)
        if counts.shape != (2, m) or sum_p.shape != (m,) or sum_p2.shape != (m,):
            raise ValueError(
                f"statistics for {m} bins need counts of shape (2, {m}) and sums of "
                f"shape ({m},), got {counts.shape}, {sum_p.shape}, {sum_p2.shape}"
            )
        if (counts < 0).any():
            raise ValueError("counts must be non-negative")
        for a in (counts, sum_p, sum_p2):
            a.setflags(write=False)
        self.binning = binning
        self.counts = counts
        self.sum_p = sum_p
        self.sum_p2 = sum_p2

    # ------------------------------------------------------------------ build
    @classmethod
    def from_outcomes(cls, z: np.ndarray, p: np.ndarray, binning: Binning) -> CalibrationStats:
        """Statistics of checked outcomes ``z`` and confidences ``p``.

        ``z`` (bool or int 0/1, shape (n,)) and ``p`` (float64, shape (n,))
        are assumed valid (use :meth:`from_arrays` for user input); one
        fused pass (:mod:`bece.stats.fused`).
        """
        return cls(binning, *outcome_sums(np.asarray(z), np.asarray(p), binning))

    @classmethod
    def from_arrays(
        cls,
        y_true: ArrayLike,
        y_prob: ArrayLike,
        *,
        y_pred: ArrayLike | None = None,
        n_bins: int | None = None,
        binning: BinningSpec | Binning = "uniform",
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
            Predicted labels (the seed's triples).
        n_bins : int, default 15
            Number of bins M.
        binning : {"uniform", "quantile"} or array_like of edges, default "uniform"
            See :mod:`bece.stats.binning`. ``"quantile"`` is refused for Dask and
            JAX arrays (pass explicit edges).

        Notes
        -----
        NumPy input: one fused pass checks, bins and sums
        (:mod:`bece.stats.fused`). A ``jax.Array`` ``y_prob`` is reduced on its
        device and only the (2, M) results come back
        (:mod:`bece.stats.device`). Dask arrays are reduced block by block up a
        tree on the current Dask scheduler (:mod:`bece.stats.distributed`).

        Examples
        --------
        >>> import numpy as np
        >>> from bece import CalibrationStats
        >>> s = CalibrationStats.from_arrays([0, 1, 1], [0.1, 0.8, 0.9], n_bins=2)
        >>> s.counts.tolist(), s.sum_p.tolist()
        ([[1, 0], [0, 2]], [0.1, 1.7000000000000002])
        """
        from .device import device_sums, is_jax_array
        from .distributed import array_sums, is_dask

        if is_jax_array(y_prob):
            return cls(*device_sums(y_true, y_prob, y_pred, n_bins, binning))
        if any(is_dask(a) for a in (y_true, y_prob, y_pred)):
            return cls(*array_sums(y_true, y_prob, y_pred=y_pred, n_bins=n_bins, binning=binning))
        return cls(*binned_sums(y_true, y_prob, y_pred, n_bins, binning))

    @classmethod
    def from_dataframe(
        cls,
        df: Any,  # a pandas or Dask DataFrame (neither is imported with bece)
        *,
        y_true: str = "y_true",
        y_prob: str | list[str] | None = None,
        y_pred: str | None = None,
        n_bins: int | None = None,
        binning: BinningSpec | Binning = "uniform",
    ) -> CalibrationStats:
        """Statistics of the predictions in a pandas or Dask DataFrame.

        Parameters
        ----------
        df : pandas.DataFrame or dask.dataframe.DataFrame
            One row per prediction.
        y_true : str, default "y_true"
            Column of true labels.
        y_prob : str or list of str, optional
            Column of :math:`P(y=1)` or of confidences, or the K columns of
            class probabilities. Default: the conventions of :mod:`bece.io`
            (``y_prob``, or ``p_0 ... p_{K-1}``, and ``y_pred`` if present).
        y_pred : str, optional
            Column of predicted labels (default: ``"y_pred"`` if present and
            ``y_prob`` is not given).
        n_bins : int, default 15
        binning : {"uniform"} or array_like of edges, default "uniform"
            ``"quantile"`` works for pandas only (global quantiles cannot be
            reduced from partitions exactly).

        Notes
        -----
        A Dask DataFrame is reduced partition by partition on the current
        Dask scheduler (a ``dask.distributed.Client`` if one is open) and
        the partitions' statistics are added up a tree
        (:mod:`bece.stats.distributed`); the result equals one pass over the whole
        frame (counts exactly, sums to float64 rounding).

        Examples
        --------
        >>> import pandas as pd
        >>> from bece import CalibrationStats
        >>> df = pd.DataFrame({"y_true": [0, 1, 1], "y_prob": [0.1, 0.8, 0.9]})
        >>> CalibrationStats.from_dataframe(df, n_bins=2).counts.tolist()
        [[1, 0], [0, 2]]
        """
        from .distributed import dataframe_sums

        return cls(*dataframe_sums(
            df, y_true=y_true, y_prob=y_prob, y_pred=y_pred, n_bins=n_bins, binning=binning
        ))

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
        return CalibrationStats(
            self.binning,
            self.counts + other.counts,
            self.sum_p + other.sum_p,
            self.sum_p2 + other.sum_p2,
        )

    __radd__ = __add__

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
            f"empty_bins={int((self.bin_counts == 0).sum())})"
        )
