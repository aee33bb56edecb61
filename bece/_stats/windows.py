"""Windows of time: each prediction's window, for calibration over time.

A window is the start of the interval of width ``window`` that holds the
prediction's time: ``floor((t - origin) / width) * width + origin`` with
the origin at the Unix epoch (datetimes) or 0 (numbers). Windows of
datetimes take a count and a unit, ``"1D"``, ``"6h"``, ``"7D"``, ``"1W"``
(weeks start on Thursday 1970-01-01, as NumPy's), ``"1M"`` (calendar
months), ``"30min"``, ``"15s"``; windows of numbers (a step, a batch
number) take a positive number.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .arrays import as_array, describe_bad, missing_mask

__all__ = ["UNITS", "window_starts"]

#: Units of a datetime window and NumPy's codes for them.
UNITS = {"s": "s", "min": "m", "h": "h", "D": "D", "W": "W", "M": "M", "Y": "Y"}

_SPEC = re.compile(r"^\s*(\d*)\s*(s|min|h|D|W|M|Y)\s*$")


def _datetimes(arr: np.ndarray, name: str) -> np.ndarray | None:
    """``arr`` as datetime64 when it holds datetimes (or ISO text), else None."""
    if arr.dtype.kind == "M":
        return arr
    if arr.dtype.kind in "OUS":
        try:
            return np.asarray(arr, dtype="datetime64[ns]")
        except (ValueError, TypeError):
            raise ValueError(f"{name} must hold datetimes (or ISO 8601 text such as "
                             f"'2026-11-27T14:00') or numbers, got values like "
                             f"{arr.ravel()[:1].tolist()}") from None
    return None


def window_starts(time: ArrayLike, window: Any, name: str = "time") -> np.ndarray:
    """Each prediction's window, named by its start: datetime64 or float64 of shape (n,).

    Parameters
    ----------
    time : array_like of shape (n,)
        Datetimes (NumPy ``datetime64``, pandas timestamps, ISO 8601 text)
        or numbers; a missing time (NaT, NaN, None) raises ``ValueError``.
    window : str or number
        ``"1D"``, ``"6h"``, ``"1W"``, ``"1M"``, ... for datetimes; a
        positive number for numbers.

    Examples
    --------
    >>> import numpy as np
    >>> from bece.io import window_starts
    >>> t = np.array(["2026-11-27T09:30", "2026-11-27T23:59", "2026-11-28T00:00"],
    ...              dtype="datetime64[m]")
    >>> window_starts(t, "1D").tolist() == [np.datetime64("2026-11-27")] * 2 + [np.datetime64("2026-11-28")]
    True
    >>> window_starts(np.array([0, 99, 100, 250]), 100).tolist()
    [0.0, 0.0, 100.0, 200.0]

    Each window's ECE and a drift rule, with ``by=`` the windows:
    ``bece.bayesian_ece(y, p, by=window_starts(t, "1D"))`` and
    :func:`bece.drift_test`.
    """
    arr = as_array(time, name)
    if arr.ndim != 1:
        raise ValueError(f"{name} must have shape (n,), got shape {arr.shape}")
    missing = missing_mask(arr)
    if missing.any():
        raise ValueError(f"{name} has {int(missing.sum())} missing value(s): "
                         f"{describe_bad(arr, missing)}; give every prediction a time")
    dt = _datetimes(arr, name)
    if dt is not None:
        if not isinstance(window, str) or not _SPEC.match(window):
            raise ValueError(f"window must be a count and a unit such as '1D', '6h', '1W' or "
                             f"'1M' ({', '.join(UNITS)}) for datetimes, got {window!r}")
        m = _SPEC.match(window)
        assert m is not None
        count = int(m.group(1) or 1)
        if count < 1:
            raise ValueError(f"window must be a positive count of {m.group(2)}, got {window!r}")
        unit = UNITS[m.group(2)]
        ticks = dt.astype(f"datetime64[{unit}]").astype(np.int64)
        starts = np.floor_divide(ticks, count) * count
        return starts.astype(f"datetime64[{unit}]")
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must hold datetimes or numbers, got dtype {arr.dtype}")
    values = arr.astype(np.float64)
    if not np.isfinite(values).all():
        raise ValueError(f"{name} contains infinity: {describe_bad(arr, ~np.isfinite(values))}")
    if isinstance(window, (bool, np.bool_)) or not isinstance(window, (int, float, np.integer,
                                                                        np.floating)) \
            or not np.isfinite(window) or window <= 0:
        raise ValueError(f"window must be a positive number for a numeric {name}, got {window!r}")
    return np.floor(values / float(window)) * float(window)
