"""Result of the drift rule: which windows moved away from the reference's calibration."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .groups import plain_name
from .html import HTMLDisplay

__all__ = ["DRIFT_EXIT_STATUS", "Drift"]

#: Exit status of ``bece report --fail-on-drift`` when the last window alarms
#: (0, 1, 2 and 130 are taken: success, an unexpected error, bad input, interrupted).
DRIFT_EXIT_STATUS = 3


@dataclass(frozen=True, repr=False, eq=False)
class Drift(HTMLDisplay):
    """The drift rule on each window after the reference (:func:`bece.drift_test`).

    Attributes
    ----------
    windows : ndarray of shape (W,)
        The windows compared with the reference, in order.
    reference : ndarray
        The windows pooled into the reference.
    statistic, p_value : ndarray of shape (W,)
        :math:`T` and :math:`P(\\chi^2_k \\ge T)` of each window
        (:mod:`bece._metrics.drift`).
    df : ndarray of shape (W,), int64
        k, the bins that count (0: too few predictions to judge; p-value 1).
    n : ndarray of shape (W,), int64
        Predictions per window.
    alpha : float
        False-alarm rate per window: a window alarms when its p-value is below it.
    min_count : int

    Examples
    --------
    >>> import numpy as np
    >>> import bece
    >>> rng = np.random.default_rng(0)
    >>> day = np.repeat(np.arange(10), 2000)
    >>> p = rng.uniform(size=day.size)
    >>> truth = np.where(day >= 7, p ** 1.5, p)           # drifts on day 7
    >>> y = rng.uniform(size=day.size) < truth
    >>> stats = bece.SmoothGroupModel().group_statistics(y, p, by=day)
    >>> d = bece.drift_test(stats)
    >>> d.reference.tolist(), d.alarm.tolist()
    ([0], [False, False, False, False, False, False, True, True, True])
    >>> d.first_alarm, d.drifted
    (7, True)
    """

    windows: np.ndarray
    reference: np.ndarray
    statistic: np.ndarray
    df: np.ndarray
    p_value: np.ndarray
    n: np.ndarray
    alpha: float
    min_count: int

    @property
    def alarm(self) -> np.ndarray:
        """Whether each window alarms (p-value below ``alpha``)."""
        return self.p_value < self.alpha

    @property
    def first_alarm(self) -> Any:
        """The first window that alarms, or None."""
        hits = np.flatnonzero(self.alarm)
        return None if hits.size == 0 else plain_name(self.windows[hits[0]])

    @property
    def drifted(self) -> bool:
        """Whether the last window alarms: what ``bece report --fail-on-drift`` acts on."""
        return bool(self.alarm.size and self.alarm[-1])

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": "chi2 of per-bin gap differences against the reference",
            "alpha": self.alpha, "min_count": self.min_count,
            "reference": [plain_name(w) for w in self.reference],
            "drifted": self.drifted, "first_alarm": self.first_alarm,
            "windows": [{"window": plain_name(w), "n": int(n), "statistic": float(t), "df": int(k),
                         "p_value": float(p), "alarm": bool(p < self.alpha)}
                        for w, n, t, k, p in zip(self.windows, self.n, self.statistic, self.df,
                                                 self.p_value)],
        }

    def text(self) -> str:
        ref = ", ".join(str(plain_name(w)) for w in self.reference)
        lines = [f"drift from the reference ({ref}): a window alarms when its per-bin "
                 f"calibration gaps differ from the reference's with p < {self.alpha:g} (chi2)"]
        names = [str(plain_name(w)) for w in self.windows]
        width = max(6, *(len(s) for s in names)) if names else 6
        lines.append(f"{'window':<{width}}  {'n':>9}  {'chi2':>8}  {'df':>3}  {'p-value':>8}  alarm")
        for name, n, t, k, p in zip(names, self.n, self.statistic, self.df, self.p_value):
            flag = "DRIFT" if p < self.alpha else ("-" if k else "too few")
            lines.append(f"{name:<{width}}  {n:>9,}  {t:>8.2f}  {k:>3}  {p:>8.4f}  {flag}")
        if self.drifted:
            lines.append(f"the last window ({names[-1]}) has drifted (first alarm: "
                         f"{self.first_alarm})")
        elif self.first_alarm is not None:
            lines.append(f"earlier windows alarmed (first: {self.first_alarm}); the last has not")
        else:
            lines.append("no window has drifted")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return (f"Drift(windows={self.windows.size}, alarms={int(self.alarm.sum())}, "
                f"drifted={self.drifted}, alpha={self.alpha:g})")
