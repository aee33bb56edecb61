"""A size check before large allocations.

Where the memory a call needs is a product of its arguments (posterior draws
``num_samples x n_bins``, top-label draws ``num_samples x labels x bins``,
``num_resamples`` of the calibration test, the bins' accumulators), bece
estimates it before allocating and raises ``ValueError`` naming the argument
and the size when it exceeds the limit, instead of failing later with
numpy's ``MemoryError`` (or swapping for minutes).

The limit
---------
Half of the memory available when the check runs: ``MemAvailable`` of
``/proc/meminfo`` on Linux, else ``os.sysconf("SC_AVPHYS_PAGES") *
os.sysconf("SC_PAGE_SIZE")``. Where neither is known, nothing is checked.
Half, because the estimates count the arrays a call keeps and its largest
temporaries, not every copy numpy or the caller makes along the way.
Requests of at most 16 MiB are not checked against it (reading the available
memory would cost as much as a small call's work).

The environment variable ``BECE_MEMORY_LIMIT`` replaces it: a number of
bytes (``BECE_MEMORY_LIMIT=68719476736``) or a number with a unit, decimal
(``kB``, ``MB``, ``GB``, ``TB``) or binary (``KiB``, ``MiB``, ``GiB``,
``TiB``), e.g. ``BECE_MEMORY_LIMIT=64GiB``; ``BECE_MEMORY_LIMIT=none``
switches the check off. It is read at every check, so it can be set in a
running process (``os.environ["BECE_MEMORY_LIMIT"] = "64GiB"``).
"""

from __future__ import annotations

import os
import re

__all__ = [
    "ENV_VAR",
    "check_allocation",
    "format_bytes",
    "memory_limit",
]

#: The environment variable that sets the limit.
ENV_VAR = "BECE_MEMORY_LIMIT"

#: Fraction of the available memory a single call may plan to use.
FRACTION = 0.5

#: Requests up to this size are not checked against the available memory
#: (reading it costs about 50 microseconds, as much as a small call's work);
#: they are checked against BECE_MEMORY_LIMIT when it is set.
SMALL = 16 << 20

_UNITS = {
    "": 1, "b": 1,
    "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
    "t": 10**12, "tb": 10**12,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
}
_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([a-zA-Z]*)\s*$")
_OFF = ("none", "off", "unlimited", "inf")


def format_bytes(nbytes: float) -> str:
    """``nbytes`` in binary units, e.g. ``'224 GiB'``."""
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= size:
            value = nbytes / size
            return f"{value:.3g} {unit}" if value < 1000 else f"{value:.0f} {unit}"
    return f"{int(nbytes)} bytes"


def _parse(text: str) -> int | None:
    if text.strip().lower() in _OFF:
        return None
    m = _SIZE.match(text)
    unit = m.group(2).lower() if m else ""
    if m is None or unit not in _UNITS:
        raise ValueError(
            f"{ENV_VAR} must be a number of bytes or a size such as '64GiB' or '500MB' "
            f"(units kB, MB, GB, TB, KiB, MiB, GiB, TiB), or 'none' to switch the check "
            f"off; got {text!r}"
        )
    return int(float(m.group(1)) * _UNITS[unit])


def _available() -> int | None:
    """Memory available to new allocations, in bytes; None when unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        pages, size = os.sysconf("SC_AVPHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None
    if pages <= 0 or size <= 0:
        return None
    return int(pages) * int(size)


def _address_space_left() -> int | None:
    """Bytes the process may still map under its address-space limit
    (RLIMIT_AS, e.g. ``ulimit -v``): the soft limit less what it maps now;
    None without a limit (or where it cannot be read)."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft == resource.RLIM_INFINITY or soft <= 0:
            return None
        with open("/proc/self/statm", encoding="ascii") as f:
            mapped = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (ImportError, OSError, ValueError, IndexError, AttributeError):
        return None
    return max(int(soft) - mapped, 0)


def memory_limit() -> tuple[int | None, str]:
    """The limit in bytes (None: no check) and where it comes from, in words:
    half of the memory available, or of what the process's address-space
    limit (RLIMIT_AS) still allows if that is less."""
    env = os.environ.get(ENV_VAR)
    if env is not None and env.strip():
        return _parse(env), f"set by {ENV_VAR}={env.strip()}"
    avail, left = _available(), _address_space_left()
    if left is not None and (avail is None or left < avail):
        return int(left * FRACTION), (f"half of the {format_bytes(left)} the process's "
                                      "address-space limit (ulimit -v) still allows")
    if avail is None:
        return None, "unknown"
    return int(avail * FRACTION), f"half of the {format_bytes(avail)} of memory available"


def check_allocation(nbytes: float, *, what: str, argument: str, advice: str = "") -> None:
    """Raise ``ValueError`` when ``nbytes`` exceed :func:`memory_limit`.

    Parameters
    ----------
    nbytes : float
        Estimated size of what the call is about to allocate.
    what : str
        What would be allocated, e.g. ``"the posterior draws (num_samples x 2 x n_bins)"``.
    argument : str
        The argument(s) that make it large, with their values, e.g.
        ``"num_samples=1000000000"``: the message starts with it.
    advice : str, optional
        What to pass instead (default: a smaller value of ``argument``).
    """
    if nbytes <= SMALL and not os.environ.get(ENV_VAR, "").strip():
        return
    limit, source = memory_limit()
    if limit is None or nbytes <= limit:
        return
    advice = advice or "pass a smaller value"
    raise ValueError(
        f"{argument}: {what} would take {format_bytes(nbytes)}, more than bece's memory "
        f"limit of {format_bytes(limit)} ({source}); {advice}, or raise the limit with the "
        f"environment variable {ENV_VAR} (e.g. {ENV_VAR}=64GiB, or 'none' to switch the "
        "check off)"
    )
