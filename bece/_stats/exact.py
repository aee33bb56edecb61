"""Exact sums: the same bits in any order, on any engine.

The statistics add sums of confidences and of their squares over millions
of predictions, read from memory, from a file in chunks, from Dask
partitions, from processes of a training job or from a database. Float64
sums in different orders differ in their last bits, and so would every
result read from them. Here each term :math:`x \\ge 0` is written as its
integer part and three 26-bit fractional limbs,

.. math::

    x = i + l_1 2^{-26} + l_2 2^{-52} + l_3 2^{-78} + r,
    \\qquad l_k \\in [0, 2^{26}),\\ 0 \\le r < 2^{-78},

each step exact in float64 (scaling by a power of two and taking away the
integer part of a non-negative float lose nothing), and the remainder
:math:`r` is dropped: each term is read to an absolute :math:`2^{-78}
\\approx 3 \\cdot 10^{-24}`, below a float64 unit in the last place of any
confidence above :math:`2^{-25}`. The limbs are summed as int64 integers,
which is exact and associative, so the sum of a set of terms does not depend
on their order, on how they were split into chunks, files, threads,
processes or engines, nor on JAX's 32- or 64-bit mode. A sum is kept in the
canonical form (carries propagated, :math:`l_k \\in [0, 2^{26})`; int64
arrays with the four limbs on the second-to-last axis and the cells on the
last, e.g. ``(4, M)`` or ``(2, 4, M)``) and read as float64 by one fixed formula
(:func:`value`), within about one unit in the last place of the exact sum --
closer than a float64 sum of the same terms in any order.

A limb sum stays below :math:`2^{63}` for up to :math:`2^{37}` terms
(about :math:`1.4 \\cdot 10^{11}`) before normalising; every engine
normalises per block of at most :data:`BLOCK` terms. A database sums the
same integers (``SUM(CAST(FLOOR(p * 67108864) AS BIGINT))`` and so on) and
gets the same statistics.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "BLOCK",
    "LIMB_BITS",
    "N_LIMBS",
    "add",
    "cell_sums",
    "checked_limbs",
    "fraction_limbs",
    "limbs",
    "normalise",
    "of_floats",
    "regroup",
    "value",
]

#: Bits per fractional limb, and the number of limbs (integer part + 3).
LIMB_BITS = 26
N_LIMBS = 4
_SCALE = float(1 << LIMB_BITS)
_MASK = (1 << LIMB_BITS) - 1

#: Terms per block of :func:`cell_sums`: float64 sums of the limbs of one
#: block (each below 2**26, integer parts below 2**31) are exact integers.
BLOCK = 1 << 22

#: Largest magnitude of a float accepted by :func:`of_floats` (sums of
#: counts of up to 2**62 terms).
_LIMIT = 2.0**62


def limbs(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The integer part and the three fractional limbs of float64 ``x >= 0``,
    as float64 arrays holding integers (every operation exact)."""
    i = np.floor(x)
    return (i, *fraction_limbs(x - i))


def fraction_limbs(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The three fractional limbs of ``x`` in [0, 1] (the first up to 2**26,
    for x = 1), as float64 arrays holding integers."""
    f = x * _SCALE
    l1 = np.floor(f)
    f -= l1
    f *= _SCALE
    l2 = np.floor(f)
    f -= l2
    f *= _SCALE
    return l1, l2, np.floor(f, out=f)


def normalise(a: np.ndarray) -> np.ndarray:
    """The canonical form of limb sums ``a`` (shape ``(..., 4, cells)``,
    int64): carries propagated so that the fractional limbs lie in
    [0, 2**26)."""
    a = np.array(a, dtype=np.int64)
    for k in (3, 2, 1):
        carry = a[..., k, :] >> LIMB_BITS  # floor division, negative limbs included
        a[..., k, :] &= _MASK
        a[..., k - 1, :] += carry
    return a


def add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The exact sum of two limb sums, canonical."""
    return normalise(np.asarray(a, dtype=np.int64) + np.asarray(b, dtype=np.int64))


def value(a: np.ndarray) -> np.ndarray:
    """Float64 value (shape ``(..., cells)``) of canonical limb sums ``a``
    (shape ``(..., 4, cells)``): the
    fraction by Horner's rule from the smallest limb, then the integer part
    (of the magnitude, for a negative sum); a fixed formula, so equal sums
    give equal bits. A float read by :func:`of_floats` comes back as it was
    (to the 2**-78 of its smallest limb)."""
    a = np.asarray(a, dtype=np.int64)
    negative = a[..., :1, :] < 0
    if negative.any():
        a = np.where(negative, normalise(-a), a)
    frac = ((a[..., 3, :] / _SCALE + a[..., 2, :]) / _SCALE + a[..., 1, :]) / _SCALE
    v = a[..., 0, :].astype(np.float64) + frac
    return np.where(negative[..., 0, :], -v, v)


def regroup(a: np.ndarray, index: ArrayLike, n_cells: int) -> np.ndarray:
    """Limb sums ``a`` (shape ``(..., 4, cells)``) added up into ``n_cells``
    cells, cell ``j`` of ``a`` into cell ``index[j]``: canonical, shape
    ``(..., 4, n_cells)``."""
    out = np.zeros(np.shape(a)[:-1] + (n_cells,), dtype=np.int64)
    np.add.at(np.moveaxis(out, -1, 0), np.asarray(index), np.moveaxis(np.asarray(a), -1, 0))
    return normalise(out)


def of_floats(x: ArrayLike) -> np.ndarray:
    """Limb sums (canonical, shape ``(..., 4, cells)``) of sums ``x`` (shape
    ``(..., cells)``) given as
    floats, e.g. statistics written by hand or read from an older file.
    A negative ``x`` (sums of simulated confidences) is read by its
    magnitude and negated."""
    x = np.asarray(x, dtype=np.float64)
    if x.size and not np.all(np.abs(x) < _LIMIT):
        raise ValueError(f"sums must be finite and below 2**62 in magnitude, got {x.max()!r}")
    magnitude = np.stack([np.rint(part) for part in limbs(np.abs(x))], axis=-2).astype(np.int64)
    return normalise(np.where((x < 0)[..., None, :], -magnitude, magnitude))


def cell_sums(cell: np.ndarray, x: np.ndarray, n_cells: int) -> np.ndarray:
    """Exact sums of float64 ``x >= 0`` (integer parts below 2**31) per cell.

    ``cell`` (int, shape (n,)) holds each term's cell in ``0 .. n_cells - 1``.
    Blocks of :data:`BLOCK` terms are summed by ``np.bincount`` of each limb
    (float64 sums of integers below 2**53, so exact) and added in int64.
    Terms in [0, 1] (confidences and their squares) skip the integer part:
    a term of exactly 1 is 2**26 units of the first limb, carried later.

    Returns
    -------
    ndarray of shape (4, n_cells), int64, canonical
    """
    out = np.zeros((N_LIMBS, n_cells), dtype=np.int64)
    for start in range(0, x.shape[0], BLOCK):
        c = cell[start:start + BLOCK]
        part = np.asarray(x[start:start + BLOCK], dtype=np.float64)
        unit = part.size == 0 or part.max() <= 1.0
        for k, limb in enumerate(fraction_limbs(part) if unit else limbs(part),
                                 start=1 if unit else 0):
            out[k] += np.rint(np.bincount(c, weights=limb, minlength=n_cells)).astype(np.int64)
        out = normalise(out)
    return out


def checked_limbs(data: object, values: np.ndarray, name: str) -> np.ndarray:
    """Limb sums read from a file (a nested list), checked against the float
    sums ``values`` (shape ``(..., cells)``) stored beside them: integers of
    shape ``(..., 4, cells)``, canonical, whose :func:`value` is ``values``
    exactly. ``ValueError`` naming ``name`` otherwise."""
    shape = values.shape[:-1] + (N_LIMBS, values.shape[-1])
    try:
        raw = np.asarray(data)
    except (TypeError, ValueError):
        raw = np.asarray(None)
    if raw.shape != shape or raw.dtype.kind not in "iu" \
            or (raw.size and (raw.min() < -(2**62) or raw.max() >= 2**62)):
        raise ValueError(f"{name} must be integers of shape {shape} (per sum, its integer part "
                         "and three 26-bit fractional limbs), as to_dict writes them")
    limbs = np.array(raw, dtype=np.int64)
    if not np.array_equal(normalise(limbs), limbs):
        raise ValueError(f"{name} are not in canonical form (fractional limbs in [0, 2**26)), "
                         "as to_dict writes them")
    if not np.array_equal(value(limbs), values):
        raise ValueError(f"{name} disagree with the float sums beside them: the statistics "
                         "were edited or corrupted")
    return limbs
