"""Per-label statistics of top-label predictions, mergeable with ``+``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .calibration_stats import CalibrationStats

__all__ = ["LabelStats"]


class LabelStats:
    """For each predicted label, the :class:`CalibrationStats` of its confidences.

    The sufficient statistics of the top-label models: ``stats[j]`` counts
    the predictions whose predicted label is ``labels[j]``, in bins shared by
    every label. ``a + b`` gives the statistics of the concatenated data (a
    label predicted in one chunk only gets empty statistics in the other);
    :meth:`to_dict` and :meth:`from_dict` round-trip through plain Python
    (JSON) exactly.

    Examples
    --------
    >>> import numpy as np
    >>> from bece import BinnedModel
    >>> rng = np.random.default_rng(0)
    >>> prob = rng.dirichlet(np.ones(3), size=600)
    >>> y = (rng.uniform(size=(600, 1)) > prob.cumsum(axis=1)).sum(axis=1)
    >>> model = BinnedModel(n_bins=10)
    >>> whole = model.label_statistics(y, prob)
    >>> merged = model.label_statistics(y[:200], prob[:200]) + model.label_statistics(y[200:], prob[200:])
    >>> merged.labels.tolist(), [s.n for s in merged.stats] == [s.n for s in whole.stats]
    ([0, 1, 2], True)
    """

    __slots__ = ("labels", "stats")

    def __init__(self, labels: ArrayLike, stats: Sequence[CalibrationStats]) -> None:
        labels = np.asarray(labels)
        stats = tuple(stats)
        if labels.ndim != 1 or labels.size != len(stats):
            raise ValueError(f"labels must have shape ({len(stats)},), one per statistics, "
                             f"got {labels.shape}")
        if not stats:
            raise ValueError("LabelStats needs the statistics of at least one label")
        if not all(isinstance(s, CalibrationStats) for s in stats):
            raise ValueError("stats must be CalibrationStats, one per label")
        if any(s.binning != stats[0].binning for s in stats):
            raise ValueError("the labels' statistics must share their bins")
        if np.unique(labels).size != labels.size:
            raise ValueError(f"labels must be distinct, got {labels.tolist()}")
        order = np.argsort(labels, kind="stable")
        self.labels = labels[order]
        self.labels.setflags(write=False)
        self.stats = tuple(stats[i] for i in order)

    @property
    def n(self) -> int:
        return sum(s.n for s in self.stats)

    @property
    def n_labels(self) -> int:
        return len(self.stats)

    @property
    def binning(self) -> Any:  # Binning
        return self.stats[0].binning

    def __add__(self, other: LabelStats | int) -> LabelStats:
        if isinstance(other, int) and other == 0:  # lets sum() start at 0
            return self
        if not isinstance(other, LabelStats) or type(other) is not type(self):
            return NotImplemented  # per-label and per-group statistics do not add
        if self.binning != other.binning:
            raise ValueError("cannot add LabelStats with different bins: build every chunk with "
                             "the same n_bins and binning")
        try:
            labels = np.union1d(self.labels, other.labels)
        except TypeError as err:
            raise ValueError(f"cannot add LabelStats whose labels are of different types "
                             f"({self.labels.dtype} and {other.labels.dtype})") from err
        mine = dict(zip(self.labels.tolist(), self.stats))
        theirs = dict(zip(other.labels.tolist(), other.stats))
        merged = []
        for label in labels.tolist():
            parts = [d[label] for d in (mine, theirs) if label in d]
            merged.append(parts[0] + parts[1] if len(parts) == 2 else parts[0])
        return LabelStats(labels, merged)

    __radd__ = __add__

    def to_dict(self) -> dict[str, Any]:
        """``{"labels": [...], "stats": [CalibrationStats.to_dict(), ...]}``."""
        return {"labels": self.labels.tolist(), "stats": [s.to_dict() for s in self.stats]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LabelStats:
        """The statistics :meth:`to_dict` wrote; ``ValueError`` naming what is wrong."""
        if not isinstance(data, dict) or set(data) != {"labels", "stats"}:
            raise ValueError("LabelStats.from_dict needs a dict with the keys 'labels' and 'stats'")
        if not isinstance(data["stats"], list):
            raise ValueError("LabelStats.from_dict: 'stats' must be a list of dicts")
        return cls(np.asarray(data["labels"]), [CalibrationStats.from_dict(s) for s in data["stats"]])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LabelStats):
            return NotImplemented
        return (np.array_equal(self.labels, other.labels)
                and all(a == b for a, b in zip(self.stats, other.stats)))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"LabelStats(n={self.n}, n_labels={self.n_labels}, "
                f"n_bins={self.binning.n_bins}, rule={self.binning.rule!r})")
