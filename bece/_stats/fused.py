"""The fused statistics pass: checks, bin index, counts and sums in one loop.

:meth:`bece.CalibrationStats.from_arrays` spends its time here. For each
prediction ``i`` one compiled loop reads :math:`p_i` and the labels once,
checks them, and adds into the cell :math:`k_i = 2 b_i + z_i`:

.. math::

    c_{k} \\mathrel{+}= 1, \\qquad s_{k} \\mathrel{+}= p_i, \\qquad
    s^{(2)}_{k} \\mathrel{+}= p_i^2 \\qquad
    (\\text{int64 counts, float64 sums}),

with :math:`b_i = \\lfloor p_i M \\rfloor` for uniform bins and
:math:`b_i = |\\{j : e_j \\le p_i\\}| - 1` (``searchsorted(edges, p,
side="right") - 1``) for explicit edges, computed on :math:`p_i` converted to
float64 exactly as :func:`bece._stats.inputs.check_probabilities` does. Slot
:math:`b = M` (a confidence on the upper edge) is folded into bin
:math:`M - 1` afterwards, as :meth:`bece._stats.binning.Binning.raw_index` documents.
The loop keeps four interleaved copies of the accumulators (element ``i``
goes to copy ``i mod 4``) so that consecutive predictions in the same bin --
the common case for a confident classifier -- do not wait on each other's
additions; the copies are added at the end. Sums therefore differ from a
sequential float64 sum only by float64 rounding, in another order.

What is checked in the loop is exactly what :func:`bece._stats.inputs.as_outcomes`
rejects for 1-D ``y_prob``: a confidence that is NaN or outside [0, 1] (or
outside explicit edges), a binary label other than 0/1, a non-integer label
with ``y_pred``. The loop only *detects*; when it stops on a bad value the
arrays are handed to the NumPy checks of :mod:`bece._stats.inputs`, which raise the
usual ``ValueError`` naming the argument, the values and their indices. A 2-D
``y_prob`` is reduced to (outcome, confidence) by
:func:`bece._stats.inputs.as_outcomes` (its block-wise top-label scan) and then
binned here.

Why numba. Measured on the 2-core development machine (AMD EPYC, shared with
other jobs, so ratios in one run and noisy), relative to one ``np.sum`` over
the same float64 confidences at n = 10^7 (int64 labels):

=========================================================  =========
implementation                                             time
=========================================================  =========
``np.sum(p)`` (the yardstick)                              1
NumPy: checks + index + three ``np.bincount`` (before)     19
one ``np.bincount`` with weights alone                     4
JAX ``jit`` on CPU (scatter-add, float64 in a scoped x64)  41, plus 0.9 s import and 0.9 s compile
numba, one sequential loop, one accumulator copy           5-7
numba, this loop (four accumulator copies)                 2.5-6
=========================================================  =========

On an idle 16-core Xeon (``benchmarks/run.py``) the loop on one thread took
3.8x one ``np.sum`` at n = 10^7 and 3.5x at 10^8; on 8 threads (below)
1.4x and 0.7x (the yardstick stays single-threaded). Integer and bool labels go through
a variant that checks 0/1 with one unsigned comparison (float labels need
two comparisons; with int8 or int32 labels the two-comparison loop was 3x
slower).

NumPy cannot fuse the index with three weighted reductions (each
``bincount`` is a pass of its own), and XLA's CPU scatter is slow; a numba
loop is the only well-kept tool here that reaches the memory-bound regime.
The data are cut into blocks of 2^20 predictions, each with its own
accumulators, run on up to 8 threads (the kernels release the GIL; numba's
own ``parallel=True`` cost 8 s of compilation) and added in block order, so
the result does not depend on the number of threads. Kernels are compiled on
first use and cached on disk (``cache=True``): the first call in a new
environment pays about 0.3 s per combination of input dtypes, later
processes load the machine code.

Summation order. The sums are float64 sums in some order, and orders differ
in the last bits. The order is fixed by the input's size alone: below
:data:`AUTO_ROWS` predictions one sequential pass per cell in input order
(``np.bincount``'s), from :data:`AUTO_ROWS` on the blocks and lanes above.
Both engines implement both orders bit for bit (the loop with one lane and
one block; NumPy by binning into (block, lane, cell) slots), so
``engine="auto"`` gives the same bits for the same input whichever engine
runs it -- whether or not an earlier call has loaded numba, and whether or
not numba is installed. An explicit ``engine="numpy"`` always sums
sequentially, ``engine="numba"`` always in blocks.

numba is imported only when the first statistics are computed (``import
bece`` stays light). Where numba is not installed or cannot be imported (a
NumPy release newer than numba supports, an unsupported platform), the same
results come from the NumPy formulation (:func:`numpy_cells`), which is
also the reference the tests compare the loop with. Neither path touches
JAX; sums are float64 whatever ``jax_enable_x64`` says.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from .._base.memory import check_allocation
from .binning import Binning
from .inputs import DEFAULT_INPUTS, Inputs

#: Per-bin sums: (binning, counts (2, M) int64, sum_p (M,) float64, sum_p2 (M,) float64).
Sums = tuple[Binning, np.ndarray, np.ndarray, np.ndarray]

__all__ = [
    "AUTO_ROWS",
    "available_engine",
    "binned_sums",
    "ENGINES",
    "fold",
    "numpy_cells",
    "outcome_sums",
]

ENGINES = ("auto", "numba", "numpy")

#: Accumulator copies; element i adds into copy i % _LANES.
_LANES = 4

#: Elements per block of the loop; blocks run on up to _MAX_THREADS threads.
_BLOCK = 1 << 20
_MAX_THREADS = 8

#: engine="auto" imports numba (about 0.4 s in a fresh process) only for
#: inputs of at least this many predictions, or once it is loaded anyway;
#: below it the NumPy formulation costs less than the import.
AUTO_ROWS = 1 << 22

_KERNELS: dict[str, Callable[..., Any]] | None = None
_NUMBA_ERROR: str | None = None


def _compile() -> dict[str, Callable[..., Any]] | None:
    """Build the numba kernels once per process; None when numba is unusable."""
    global _KERNELS, _NUMBA_ERROR
    if _KERNELS is not None or _NUMBA_ERROR is not None:
        return _KERNELS
    if os.environ.get("BECE_NO_NUMBA"):
        _NUMBA_ERROR = "disabled by BECE_NO_NUMBA"
        return None
    try:
        import numba
    except Exception as exc:  # ImportError, or numba refusing this NumPy
        _NUMBA_ERROR = f"{type(exc).__name__}: {exc}"
        return None

    jit = numba.njit(nogil=True, cache=True)
    int64, float64 = numba.int64, numba.float64

    @jit
    def bin_of(x, m, edges, uniform):  # pragma: no cover - compiled
        # bin slot in 0..m of a checked x (m: x on the upper edge)
        if uniform:
            return int64(x * m)
        lo, hi = 0, m + 1  # invariant: edges[lo] <= x < edges[hi] (edges[m+1] = +inf)
        while hi - lo > 1:
            mid = (lo + hi) >> 1
            if edges[mid] <= x:
                lo = mid
            else:
                hi = mid
        return lo

    @jit
    def binary(p, y, lanes, m, edges, uniform, cnt, sp, sp2):  # pragma: no cover - compiled
        # z = y in {0, 1}; returns -1, or the index of the first bad element
        lo_e, hi_e = edges[0], edges[m]
        w = 2 * (m + 1)
        n = p.shape[0]
        for i in range(n):
            x = float64(p[i])
            if not (x >= lo_e and x <= hi_e):  # NaN fails too
                return i
            yi = y[i]
            if yi == 0:
                z = 0
            elif yi == 1:
                z = 1
            else:
                return i
            k = (i & lanes) * w + 2 * bin_of(x, m, edges, uniform) + z
            cnt[k] += 1
            sp[k] += x
            sp2[k] += x * x
        return -1

    @jit
    def binary_int(p, y, lanes, m, edges, uniform, cnt, sp, sp2):  # pragma: no cover - compiled
        # as binary, for integer or bool labels: one unsigned compare checks 0/1
        lo_e, hi_e = edges[0], edges[m]
        w = 2 * (m + 1)
        n = p.shape[0]
        for i in range(n):
            x = float64(p[i])
            if not (x >= lo_e and x <= hi_e):
                return i
            z = int64(y[i])
            if numba.uint64(z) > 1:
                return i
            k = (i & lanes) * w + 2 * bin_of(x, m, edges, uniform) + z
            cnt[k] += 1
            sp[k] += x
            sp2[k] += x * x
        return -1

    @jit
    def pairs(p, yt, yp, whole, lanes, m, edges, uniform, cnt, sp, sp2):  # pragma: no cover - compiled
        # z = [yt == yp] as int64 (as the NumPy checks compare them); with
        # whole, float labels must be whole numbers within the int64 range
        lo_e, hi_e = edges[0], edges[m]
        w = 2 * (m + 1)
        n = p.shape[0]
        for i in range(n):
            x = float64(p[i])
            if not (x >= lo_e and x <= hi_e):
                return i
            a = yt[i]
            b = yp[i]
            if whole and not (a - np.floor(a) == 0 and b - np.floor(b) == 0):  # NaN, inf, 2.5
                return i
            if whole and not (a >= -9.223372036854775808e18 and a < 9.223372036854775808e18
                              and b >= -9.223372036854775808e18 and b < 9.223372036854775808e18):
                return i  # beyond int64: the checks refuse it
            z = 1 if int64(a) == int64(b) else 0
            k = (i & lanes) * w + 2 * bin_of(x, m, edges, uniform) + z
            cnt[k] += 1
            sp[k] += x
            sp2[k] += x * x
        return -1

    _KERNELS = {"binary": binary, "binary_int": binary_int, "pairs": pairs}
    return _KERNELS


def available_engine() -> str:
    """``"numba"`` if the compiled loop can be used in this process, else ``"numpy"``."""
    return "numba" if _compile() is not None else "numpy"


def _order(engine: str, size: int) -> str:
    """The summation order for ``size`` predictions: ``"sequential"`` (one
    pass per cell in input order, ``np.bincount``'s) or ``"blocked"`` (blocks
    of :data:`_BLOCK` with :data:`_LANES` lanes each, the loop's).

    ``engine="auto"`` picks it by the input's size alone (blocked from
    :data:`AUTO_ROWS` on), so that the same input gives the same bits whichever
    engine runs it and whatever ran before in the process; an explicit
    engine keeps its own order (``"numpy"`` sequential, ``"numba"`` blocked).
    """
    if engine == "numpy":
        return "sequential"
    if engine == "numba":
        return "blocked"
    return "blocked" if size >= AUTO_ROWS else "sequential"


def numpy_cells(
    z: np.ndarray, p: np.ndarray, binning: Binning, *, order: str = "sequential"
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Counts and sums of checked ``z`` and float64 ``p`` with NumPy.

    One index pass and three ``np.bincount`` over cells ``2 b + z`` with
    ``M + 1`` bin slots, the top slot folded into bin ``M - 1``. With
    ``order="blocked"`` the cells are also split by block and lane (element
    ``i`` in block ``i // 2**20``, lane ``i % 4``) and added as the compiled
    loop adds them, so the sums equal the loop's bit for bit.

    Returns
    -------
    counts : ndarray of shape (2, M), int64
    sum_p, sum_p2 : ndarray of shape (M,), float64
    """
    m = binning.n_bins
    cell = binning.raw_index(p)
    cell *= 2
    cell += z
    k = 2 * (m + 1)
    if order == "blocked":
        n = p.shape[0]
        blocks = max(1, -(-n // _BLOCK))
        _check_accumulators(blocks, m)
        i = np.arange(n, dtype=np.int64)
        cell += k * ((i & (_LANES - 1)) + _LANES * (i // _BLOCK))
        del i
        w = _LANES * k
        cnt = np.bincount(cell, minlength=blocks * w).reshape(blocks, w)
        sp = np.bincount(cell, weights=p, minlength=blocks * w).reshape(blocks, w)
        sp2 = np.bincount(cell, weights=p * p, minlength=blocks * w).reshape(blocks, w)
        return _reduce(cnt, sp, sp2, m)
    counts = np.bincount(cell, minlength=k).reshape(m + 1, 2).T
    sp = np.bincount(cell, weights=p, minlength=k).reshape(m + 1, 2)
    sp2 = np.bincount(cell, weights=p * p, minlength=k).reshape(m + 1, 2)
    return fold(counts, sp.sum(axis=1), sp2.sum(axis=1), m)


def fold(
    counts: np.ndarray, sum_p: np.ndarray, sum_p2: np.ndarray, m: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Add slot M (confidences on the upper edge) into bin M - 1."""
    counts = np.array(counts, dtype=np.int64)
    counts[:, m - 1] += counts[:, m]
    sum_p = np.array(sum_p, dtype=np.float64)
    sum_p[m - 1] += sum_p[m]
    sum_p2 = np.array(sum_p2, dtype=np.float64)
    sum_p2[m - 1] += sum_p2[m]
    return counts[:, :m], sum_p[:m], sum_p2[:m]


def _reduce(
    cnt: np.ndarray, sp: np.ndarray, sp2: np.ndarray, m: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-block, per-lane accumulators (blocks, LANES * 2 (M + 1)) to the
    statistics: blocks added in order, then lanes, then the two outcomes."""
    cnt = cnt.sum(axis=0).reshape(_LANES, m + 1, 2).sum(axis=0).T
    sp = sp.sum(axis=0).reshape(_LANES, m + 1, 2).sum(axis=(0, 2))
    sp2 = sp2.sum(axis=0).reshape(_LANES, m + 1, 2).sum(axis=(0, 2))
    return fold(cnt, sp, sp2, m)


def _check_accumulators(blocks: int, m: int) -> None:
    """Refuse n_bins whose per-block accumulators would not fit in memory."""
    check_allocation(
        3 * 8 * blocks * _LANES * 2 * (m + 1),
        what=f"the accumulators of the statistics ({blocks} block(s) x {_LANES} lanes x "
             "2 (n_bins + 1) cells x 3 sums, 8 bytes each)",
        argument=f"n_bins={m}",
        advice="pass fewer bins",
    )


#: dtypes the loop reads as they are (native byte order); others take the NumPy path
_PROB_DTYPES = frozenset(np.dtype(t) for t in ("f4", "f8", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8"))
_LABEL_DTYPES = _PROB_DTYPES | {np.dtype(bool)}
#: label dtypes of the loop for y_true with y_pred: uint64 labels go through the
#: NumPy checks (those from 2**63 are refused, which an int64 cast would wrap)
_PAIR_DTYPES = _LABEL_DTYPES - {np.dtype("u8")}


def _try_array(x: Any) -> np.ndarray | None:
    """``np.asarray(x)``, or None where that fails or would unmask a masked
    array (the checks then say why)."""
    if x is None or np.ma.isMaskedArray(x):
        return None
    try:
        return np.asarray(x)
    except Exception:
        return None


def _label_like(a: np.ndarray, n: int, dtypes: frozenset[np.dtype] = _LABEL_DTYPES) -> bool:
    return a.ndim == 1 and a.shape[0] == n and a.dtype in dtypes


def _threads(blocks: int) -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - macOS, Windows
        cores = os.cpu_count() or 1
    return max(1, min(blocks, cores, _MAX_THREADS))


def _run(
    kernel: Callable[..., Any], arrays: tuple[np.ndarray, ...], binning: Binning, *extra: Any,
    order: str = "blocked",
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Run ``kernel`` in the summation ``order``; None if it stopped on a bad value.

    ``"blocked"``: blocks of :data:`_BLOCK` elements with :data:`_LANES`
    accumulator lanes each, on up to :data:`_MAX_THREADS` threads; each
    block has its own accumulators and the blocks are added in block order,
    so the sums do not depend on the number of threads. ``"sequential"``:
    one block and one lane over the whole input, one thread: the order of
    :func:`numpy_cells`, whose sums it equals bit for bit.
    """
    m = binning.n_bins
    w = _LANES * 2 * (m + 1)
    n = arrays[0].shape[0]
    sequential = order == "sequential"
    block = max(n, 1) if sequential else _BLOCK
    lanes = 0 if sequential else _LANES - 1
    blocks = max(1, -(-n // block))
    _check_accumulators(blocks, m)
    cnt = np.zeros((blocks, w), dtype=np.int64)
    sp = np.zeros((blocks, w), dtype=np.float64)
    sp2 = np.zeros((blocks, w), dtype=np.float64)
    uniform = binning.rule == "uniform"
    edges = np.ascontiguousarray(binning.edges, dtype=np.float64)

    def one(j: int) -> int:
        part = tuple(a[j * block:(j + 1) * block] for a in arrays)
        return kernel(*part, *extra, lanes, m, edges, uniform, cnt[j], sp[j], sp2[j])

    threads = _threads(blocks)
    if threads == 1:
        bad = [one(j) for j in range(blocks)]
    else:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(threads) as pool:  # the kernels release the GIL
            bad = list(pool.map(one, range(blocks)))
    if max(bad) >= 0:
        return None
    return _reduce(cnt, sp, sp2, m)


def _kernels(engine: str, size: int) -> dict[str, Callable[..., Any]] | None:
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    if engine == "numpy":
        return None
    if engine == "auto" and _KERNELS is None and size < AUTO_ROWS:
        return None
    kernels = _compile()
    if engine == "numba" and kernels is None:
        raise RuntimeError(f"engine='numba' but numba cannot be used: {_NUMBA_ERROR}")
    return kernels


def binned_sums(
    y_true: Any,
    y_prob: Any,
    y_pred: Any,
    n_bins: Any,
    binning: Any,
    inputs: Inputs = DEFAULT_INPUTS,
    *,
    engine: str = "auto",
    infer_labels: bool = True,
) -> Sums:
    """Check classifier outputs and compute their per-bin statistics.

    Parameters are those of :meth:`bece.CalibrationStats.from_arrays`, the
    input keywords as :class:`~bece._stats.inputs.Inputs` (``infer_labels``:
    :func:`bece._stats.inputs.as_outcomes`'s);
    ``engine`` picks the loop (``"auto"``: numba when it is importable and
    either already loaded or ``y_prob`` has at least :data:`AUTO_ROWS`
    entries, else NumPy, with the summation order set by the size alone, so
    the result does not depend on which runs; ``"numpy"`` forces the NumPy
    formulation in its sequential order; ``"numba"`` the loop in its blocked
    order, and raises ``RuntimeError`` when numba cannot be used).

    Returns
    -------
    binning : Binning
    counts : ndarray of shape (2, M), int64
    sum_p, sum_p2 : ndarray of shape (M,), float64

    Raises
    ------
    ValueError
        Exactly as :func:`bece._stats.inputs.as_outcomes` and
        :func:`bece._stats.binning.make_binning` do.
    """
    from .binning import make_binning
    from .inputs import as_outcomes

    p = _try_array(y_prob)
    kernels = _kernels(engine, 0 if p is None else p.size)
    quantile = isinstance(binning, str) and binning in ("quantile", "equal-mass")
    plain = inputs.plain
    if kernels is not None and not quantile and plain:
        yt = _try_array(y_true)
        yp = _try_array(y_pred)
        if (  # the fast path
            p is not None
            and p.ndim == 1
            and p.shape[0] > 0
            and p.dtype in _PROB_DTYPES
            and yt is not None
            and _label_like(yt, p.shape[0], _LABEL_DTYPES if yp is None else _PAIR_DTYPES)
            and (yp is None or _label_like(yp, p.shape[0], _PAIR_DTYPES))
            and (y_pred is None) == (yp is None)
        ):
            bins = make_binning(None, n_bins, binning)
            order = _order(engine, p.shape[0])
            if yp is None:
                # float labels need the two comparisons; integer ones one
                # unsigned compare (3x faster for int8/int32 labels)
                kernel = kernels["binary" if yt.dtype.kind == "f" else "binary_int"]
                out = _run(kernel, (p, yt), bins, order=order)
            else:
                whole = yt.dtype.kind == "f" or yp.dtype.kind == "f"
                out = _run(kernels["pairs"], (p, yt, yp), bins, whole, order=order)
            if out is not None:
                return (bins, *out)
            # a bad value, or labels -1/1: the NumPy path below raises its
            # message, or reads them

    z, conf = as_outcomes(y_true, y_prob, y_pred, inputs, infer_labels=infer_labels)
    bins = make_binning(conf, n_bins, binning)
    return (bins, *outcome_sums(z, conf, bins, engine=engine))


def outcome_sums(
    z: np.ndarray, p: np.ndarray, binning: Binning, *, engine: str = "auto"
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Counts and sums of checked outcomes ``z`` (bool or 0/1, shape (n,))
    and confidences ``p`` (float64, shape (n,)) in the bins of ``binning``.

    The summation order follows ``engine`` as in :func:`binned_sums`.
    Raises ``ValueError`` (from :meth:`~bece._stats.binning.Binning.raw_index`)
    for confidences outside explicit edges.
    """
    kernels = _kernels(engine, p.size)
    order = _order(engine, p.size)
    if kernels is None or p.dtype not in _PROB_DTYPES or z.dtype not in _LABEL_DTYPES:
        return numpy_cells(z, p, binning, order=order)
    out = _run(kernels["binary" if z.dtype.kind == "f" else "binary_int"], (p, z), binning,
               order=order)
    if out is None:  # only confidences outside explicit edges get here
        binning.raw_index(p)  # raises the message
        raise AssertionError("fused pass stopped on input that the checks accept")
    return out
