"""The fused statistics pass: checks, bin index, counts and sums in one loop.

:meth:`bece.CalibrationStats.from_arrays` spends its time here. For each
prediction ``i`` one compiled loop reads :math:`p_i` and the labels once,
checks them, and adds into the cell :math:`k_i = 2 b_i + z_i`:

.. math::

    c_{k} \\mathrel{+}= 1, \\qquad s_{k} \\mathrel{+}= p_i, \\qquad
    s^{(2)}_{k} \\mathrel{+}= p_i^2 \\qquad
    (\\text{int64 counts; sums as int64 limbs}),

with :math:`b_i = \\lfloor p_i M \\rfloor` for uniform bins and
:math:`b_i = |\\{j : e_j \\le p_i\\}| - 1` (``searchsorted(edges, p,
side="right") - 1``) for explicit edges, computed on :math:`p_i` converted to
float64 exactly as :func:`bece._stats.inputs.check_probabilities` does. Slot
:math:`b = M` (a confidence on the upper edge) is folded into bin
:math:`M - 1` afterwards, as :meth:`bece._stats.binning.Binning.raw_index` documents.
The sums are exact (:mod:`bece._stats.exact`): the loop splits
:math:`p_i` and :math:`p_i^2` into three 26-bit fractional limbs each and adds
them to int64 accumulators, so the result does not depend on the order of
the predictions, the number of threads or the engine. The loop keeps four
interleaved copies of the accumulators (element ``i`` goes to copy
``i mod 4``) so that consecutive predictions in the same bin -- the common
case for a confident classifier -- do not wait on each other's additions;
the copies are added at the end. Exact sums cost about 1.5x float64
sums in the loop and 3x in the NumPy formulation (n = 10^7 on the 2-core
machine, both in one run: the loop 11-13x one ``np.sum`` against 7-9x for
float64 accumulators, the NumPy formulation 108x against 37x).

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
The data are cut into blocks of 2^20 predictions, run on up to 8 threads
(the kernels release the GIL; numba's own ``parallel=True`` cost 8 s of
compilation), each thread with its own accumulators. Kernels are compiled on
first use and cached on disk (``cache=True``): the first call in a new
environment pays about 0.3 s per combination of input dtypes, later
processes load the machine code.

Both engines give the same bits for the same input, whichever runs it,
whether or not an earlier call has loaded numba and whether or not numba is
installed: ``engine="auto"`` picks one by the input's size and what is
already loaded, for speed only.

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
from . import exact
from .binning import Binning
from .inputs import DEFAULT_INPUTS, Inputs

#: Per-bin statistics: (binning, counts (2, M) int64, sums (2, 4, M) int64), the
#: sums the exact sums of the confidences and of their squares (bece._stats.exact).
Sums = tuple[Binning, np.ndarray, np.ndarray]

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

    scale = float64(1 << exact.LIMB_BITS)

    @jit
    def add_limbs(row, x):  # pragma: no cover - compiled
        # the fractional limbs of x and of x * x (bece._stats.exact.limbs; x in [0, 1])
        for j in range(2):
            f = x if j == 0 else x * x
            for k in range(3):
                f *= scale
                whole = np.floor(f)
                row[3 * j + k] += int64(whole)
                f -= whole

    @jit
    def binary(p, y, lanes, m, edges, uniform, cnt, acc):  # pragma: no cover - compiled
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
            add_limbs(acc[k], x)
        return -1

    @jit
    def binary_int(p, y, lanes, m, edges, uniform, cnt, acc):  # pragma: no cover - compiled
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
            add_limbs(acc[k], x)
        return -1

    @jit
    def pairs(p, yt, yp, whole, lanes, m, edges, uniform, cnt, acc):  # pragma: no cover - compiled
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
            add_limbs(acc[k], x)
        return -1

    _KERNELS = {"binary": binary, "binary_int": binary_int, "pairs": pairs}
    return _KERNELS


def available_engine() -> str:
    """``"numba"`` if the compiled loop can be used in this process, else ``"numpy"``."""
    return "numba" if _compile() is not None else "numpy"


def numpy_cells(z: np.ndarray, p: np.ndarray, binning: Binning) -> tuple[np.ndarray, np.ndarray]:
    """Counts and exact sums of checked ``z`` and float64 ``p`` with NumPy.

    One index pass, one ``np.bincount`` of the cells ``2 b + z`` with
    ``M + 1`` bin slots, and the exact sums per slot
    (:func:`bece._stats.exact.cell_sums`); the top slot is folded into bin
    ``M - 1``.

    Returns
    -------
    counts : ndarray of shape (2, M), int64
    sums : ndarray of shape (2, 4, M), int64
        Exact sums of ``p`` and of ``p**2`` (:mod:`bece._stats.exact`).
    """
    m = binning.n_bins
    slot = binning.raw_index(p)
    counts = np.bincount(2 * slot + z, minlength=2 * (m + 1)).reshape(m + 1, 2).T
    sums = np.stack([exact.cell_sums(slot, p, m + 1), exact.cell_sums(slot, p * p, m + 1)])
    return fold(counts, sums, m)


def fold(counts: np.ndarray, sums: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Add slot M (confidences on the upper edge) into bin M - 1: counts
    (2, M + 1) and exact sums (2, 4, M + 1) to (2, M) and (2, 4, M)."""
    counts = np.array(counts, dtype=np.int64)
    counts[:, m - 1] += counts[:, m]
    sums = np.array(sums, dtype=np.int64)
    sums[..., m - 1] += sums[..., m]
    return counts[:, :m], exact.normalise(sums[..., :m])


def _reduce(cnt: np.ndarray, acc: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-thread, per-lane accumulators -- counts (threads, LANES * 2 (M + 1))
    and limbs (threads, LANES * 2 (M + 1), 6) -- to the statistics."""
    counts = cnt.sum(axis=0).reshape(_LANES, m + 1, 2).sum(axis=0).T
    limbs = acc.sum(axis=0).reshape(_LANES, m + 1, 2, 6).sum(axis=(0, 2))  # (M + 1, 6)
    sums = np.zeros((2, exact.N_LIMBS, m + 1), dtype=np.int64)
    sums[0, 1:] = limbs[:, :3].T
    sums[1, 1:] = limbs[:, 3:].T
    return fold(counts, sums, m)


def _check_accumulators(threads: int, m: int) -> None:
    """Refuse n_bins whose per-thread accumulators would not fit in memory."""
    check_allocation(
        7 * 8 * threads * _LANES * 2 * (m + 1),
        what=f"the accumulators of the statistics ({threads} thread(s) x {_LANES} lanes x "
             "2 (n_bins + 1) cells x 7 integers, 8 bytes each)",
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
) -> tuple[np.ndarray, np.ndarray] | None:
    """Run ``kernel`` over blocks of :data:`_BLOCK` elements on up to
    :data:`_MAX_THREADS` threads, each thread adding its blocks into its own
    accumulators (:data:`_LANES` lanes each); None if it stopped on a bad
    value. The limb sums of one thread stay below 2**63 up to 2**37
    elements per thread."""
    m = binning.n_bins
    w = _LANES * 2 * (m + 1)
    n = arrays[0].shape[0]
    blocks = max(1, -(-n // _BLOCK))
    threads = _threads(blocks)
    _check_accumulators(threads, m)
    cnt = np.zeros((threads, w), dtype=np.int64)
    acc = np.zeros((threads, w, 6), dtype=np.int64)
    uniform = binning.rule == "uniform"
    edges = np.ascontiguousarray(binning.edges, dtype=np.float64)

    def work(t: int) -> int:
        for j in range(t, blocks, threads):
            part = tuple(a[j * _BLOCK:(j + 1) * _BLOCK] for a in arrays)
            if kernel(*part, *extra, _LANES - 1, m, edges, uniform, cnt[t], acc[t]) >= 0:
                return 1
        return 0

    if threads == 1:
        bad = work(0)
    else:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(threads) as pool:  # the kernels release the GIL
            bad = max(pool.map(work, range(threads)))
    if bad:
        return None
    return _reduce(cnt, acc, m)


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
    entries, else NumPy; ``"numpy"`` forces the NumPy formulation;
    ``"numba"`` the loop, and raises ``RuntimeError`` when numba cannot be
    used). Every engine gives the same bits.

    Returns
    -------
    binning : Binning
    counts : ndarray of shape (2, M), int64
    sums : ndarray of shape (2, 4, M), int64
        Exact sums of the confidences and of their squares
        (:mod:`bece._stats.exact`).

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
            if yp is None:
                # float labels need the two comparisons; integer ones one
                # unsigned compare (3x faster for int8/int32 labels)
                kernel = kernels["binary" if yt.dtype.kind == "f" else "binary_int"]
                out = _run(kernel, (p, yt), bins)
            else:
                whole = yt.dtype.kind == "f" or yp.dtype.kind == "f"
                out = _run(kernels["pairs"], (p, yt, yp), bins, whole)
            if out is not None:
                return (bins, *out)
            # a bad value, or labels -1/1: the NumPy path below raises its
            # message, or reads them

    z, conf = as_outcomes(y_true, y_prob, y_pred, inputs, infer_labels=infer_labels)
    bins = make_binning(conf, n_bins, binning)
    return (bins, *outcome_sums(z, conf, bins, engine=engine))


def outcome_sums(
    z: np.ndarray, p: np.ndarray, binning: Binning, *, engine: str = "auto"
) -> tuple[np.ndarray, np.ndarray]:
    """Counts (2, M) and exact sums (2, 4, M) of checked outcomes ``z`` (bool
    or 0/1, shape (n,)) and confidences ``p`` (float64, shape (n,)) in the
    bins of ``binning``, by the loop ``engine`` picks (:func:`binned_sums`).

    Raises ``ValueError`` (from :meth:`~bece._stats.binning.Binning.raw_index`)
    for confidences outside explicit edges.
    """
    kernels = _kernels(engine, p.size)
    if kernels is None or p.dtype not in _PROB_DTYPES or z.dtype not in _LABEL_DTYPES:
        return numpy_cells(z, p, binning)
    out = _run(kernels["binary" if z.dtype.kind == "f" else "binary_int"], (p, z), binning)
    if out is None:  # only confidences outside explicit edges get here
        binning.raw_index(p)  # raises the message
        raise AssertionError("fused pass stopped on input that the checks accept")
    return out
