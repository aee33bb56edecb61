"""How predictions are read: the input keywords of every entry point as one checked object.

The public functions take ``labels``, ``pos_label``, ``from_logits`` and
``row_sum_tol`` as keywords (as scikit-learn's and torchmetrics' functions
do), build one :class:`Inputs` and hand it down; the rules that use them
live in :mod:`bece._stats.inputs` and :mod:`bece._stats.labels`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["DEFAULT_INPUTS", "Inputs"]


def _check_row_sum_tol(value: Any) -> float | None:
    """``row_sum_tol=`` (``value``) checked: None (the default tolerance of
    :func:`bece._stats.inputs.row_sum_tolerance`) or a number in [0, 1)."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, (int, float, np.integer, np.floating)):
        raise ValueError(f"row_sum_tol must be a number in [0, 1) or None, got {value!r}")
    tol = float(value)
    if not 0.0 <= tol < 1.0:  # NaN fails too
        raise ValueError(f"row_sum_tol must be a number in [0, 1) or None, got {value!r}")
    return tol


@dataclass(frozen=True, eq=False)
class Inputs:
    """How predictions are read: the input keywords of every entry point,
    checked once.

    The public functions take ``labels``, ``pos_label``, ``from_logits`` and
    ``row_sum_tol`` as keywords, build one ``Inputs`` and hand it to the
    layers below, which never see the keywords themselves.

    Attributes
    ----------
    labels : array_like or None
        The class of each column of ``y_prob`` in order (``clf.classes_``);
        for a 1-D ``y_prob`` the two classes, negative then positive.
        Checked against the data where it is used (:mod:`bece._stats.labels`).
    pos_label : label or None
        For a 1-D ``y_prob`` without ``y_pred``: the value of ``y_true``
        that is ``y = 1``.
    from_logits : bool
        ``y_prob`` holds logits (sigmoid for shape (n,), softmax over the
        columns for shape (n, K), in float64).
    row_sum_tol : float or None
        Tolerance of the row sums of a 2-D ``y_prob`` (None: the default of
        :func:`bece._stats.inputs.row_sum_tolerance`).
    """

    labels: Any = None
    pos_label: Any = None
    from_logits: bool = False
    row_sum_tol: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.from_logits, (bool, np.bool_)):
            raise ValueError(f"from_logits must be True or False, got {self.from_logits!r}")
        object.__setattr__(self, "from_logits", bool(self.from_logits))
        object.__setattr__(self, "row_sum_tol", _check_row_sum_tol(self.row_sum_tol))
        if self.from_logits and self.row_sum_tol is not None:
            raise ValueError("row_sum_tol applies to probabilities; with from_logits=True the "
                             "rows are logits, whose softmax sums to 1")

    @property
    def plain(self) -> bool:
        """Whether these are the defaults (probabilities, labels needing no
        naming, the default row-sum tolerance): the fast paths' condition."""
        return (self.labels is None and self.pos_label is None and not self.from_logits
                and self.row_sum_tol is None)


#: The default reading: probabilities, labels 0 .. K-1 (or 0/1, -1/1).
DEFAULT_INPUTS = Inputs()
