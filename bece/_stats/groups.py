"""Statistics per group (model version, region, subgroup), mergeable with ``+``.

A group is any value of a column given beside the predictions (``by=``):
each group's predictions are summarised by their own
:class:`~bece._stats.calibration_stats.CalibrationStats` in bins shared by
every group. A day's statistics added to the month's give the month's,
group by group, exactly (a group seen on one day only keeps its statistics).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .arrays import as_array, describe_bad, missing_mask
from .binning import Binning
from .calibration_stats import CalibrationStats, label_statistics
from .label_stats import LabelStats

__all__ = ["GroupStats", "group_index"]


def group_index(by: ArrayLike, n: int, name: str = "by") -> tuple[np.ndarray, np.ndarray]:
    """The distinct groups of ``by`` (sorted) and each row's index among them.

    ``by`` is a 1-D array of n values of one kind (integers, text, booleans,
    dates); a missing value (None, NaN, NaT) raises ``ValueError`` naming
    where it is: a prediction with no group is not silently dropped.
    """
    arr = as_array(by, name)
    if arr.ndim != 1:
        raise ValueError(f"{name} must have shape (n,), one group per prediction, got shape "
                         f"{arr.shape}")
    if arr.shape[0] != n:
        raise ValueError(f"{name} has {arr.shape[0]} entries but y_prob has {n}; they must have "
                         "the same length")
    if n == 0:
        raise ValueError(f"{name} is empty: there are no predictions to group")
    missing = missing_mask(arr)
    if missing.any():
        raise ValueError(f"{name} has {int(missing.sum())} missing value(s) (None, NaN or NaT): "
                         f"{describe_bad(arr, missing)}; give every prediction a group")
    try:
        names, inverse = np.unique(arr, return_inverse=True)
    except TypeError as err:
        raise ValueError(f"{name} mixes values that cannot be ordered ({err}); give the groups "
                         "as one type (all text, or all numbers)") from None
    return names, inverse.reshape(-1).astype(np.int64)


class GroupStats(LabelStats):
    """For each group, the :class:`CalibrationStats` of its predictions.

    The sufficient statistics of the group posteriors
    (:class:`bece.SmoothGroupModel`): ``stats[j]`` counts the predictions of
    group ``groups[j]``, in bins shared by every group. ``a + b`` gives the
    statistics of the concatenated data, group by group; :meth:`to_dict`
    and :meth:`from_dict` round-trip through JSON exactly.

    Examples
    --------
    >>> import numpy as np
    >>> from bece import SmoothGroupModel
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=900)
    >>> y = rng.uniform(size=900) < p
    >>> region = np.array(["north", "south", "west"])[rng.integers(0, 3, size=900)]
    >>> model = SmoothGroupModel(n_bins=10)
    >>> day1 = model.group_statistics(y[:300], p[:300], by=region[:300])
    >>> month = day1 + model.group_statistics(y[300:], p[300:], by=region[300:])
    >>> month == model.group_statistics(y, p, by=region)     # exactly, sums included
    True
    >>> month.groups.tolist(), [s.n for s in month.stats]
    (['north', 'south', 'west'], [333, 311, 256])
    """

    __slots__ = ()

    @property
    def groups(self) -> np.ndarray:
        """The groups' names, sorted (the order of :attr:`stats`)."""
        return self.labels

    @property
    def n_groups(self) -> int:
        return len(self.stats)

    @classmethod
    def from_arrays(cls, binning: Binning, by: ArrayLike, z: np.ndarray, p: np.ndarray,
                    kind: str | None = None) -> GroupStats:
        """Statistics of checked outcomes ``z`` and confidences ``p`` (float64)
        per group of ``by``, in ``binning``, with exact sums."""
        names, index = group_index(by, p.shape[0])
        return cls(names, label_statistics(binning, index, z, p, names.size, kind))

    def __add__(self, other: Any) -> GroupStats:
        if isinstance(other, int) and other == 0:  # lets sum() start at 0
            return self
        if not isinstance(other, GroupStats):
            return NotImplemented
        merged = LabelStats.__add__(self, other)
        return GroupStats(merged.labels, merged.stats)

    __radd__ = __add__

    def to_dict(self) -> dict[str, Any]:
        """``{"groups": [...], "stats": [CalibrationStats.to_dict(), ...]}``."""
        return {"groups": self.labels.tolist(), "stats": [s.to_dict() for s in self.stats]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GroupStats:
        """The statistics :meth:`to_dict` wrote; ``ValueError`` naming what is wrong."""
        if not isinstance(data, dict) or set(data) != {"groups", "stats"}:
            raise ValueError("GroupStats.from_dict needs a dict with the keys 'groups' and 'stats'")
        if not isinstance(data["stats"], list):
            raise ValueError("GroupStats.from_dict: 'stats' must be a list of dicts")
        return cls(np.asarray(data["groups"]), [CalibrationStats.from_dict(s) for s in data["stats"]])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GroupStats):
            return NotImplemented
        return LabelStats.__eq__(self, other)

    __hash__ = None

    def subset(self, groups: Sequence[Any]) -> GroupStats:
        """The statistics of the named groups only."""
        where = {g: j for j, g in enumerate(self.labels.tolist())}
        missing = [g for g in groups if g not in where]
        if missing:
            raise ValueError(f"no group {missing[0]!r}; the groups are {self.labels.tolist()}")
        return GroupStats(np.asarray(list(groups)), [self.stats[where[g]] for g in groups])

    def __repr__(self) -> str:
        return (f"GroupStats(n={self.n}, n_groups={self.n_groups}, "
                f"n_bins={self.binning.n_bins}, rule={self.binning.rule!r})")
