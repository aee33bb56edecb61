"""Statistics of JAX arrays where they live (GPU, TPU or CPU).

When ``y_prob`` is a ``jax.Array``,
:meth:`bece.CalibrationStats.from_arrays` computes the checks, the bin index
and the per-bin counts and sums with jitted JAX operations on the array's
device. Only small results come back to the host: the (2, M + 1) counts, the
(2 (M + 1), 6) limb sums, and a fixed number of scalars summarising the checks (counts
of bad values and the first three offending indices and values). A NumPy
``y_true`` or ``y_pred`` is sent to the device of ``y_prob``; nothing
n-sized is copied to the host.

The same statistics as the host path, to the last bit, whatever
``jax_enable_x64`` says. The computation is traced and run inside
``enable_x64()``, a context manager that changes the setting for the current
thread only, for the duration of the call, and restores it (the global
configuration is never touched). Inside it the confidences are converted to
float64 on the device (exact, also from float32), squared, split into
their 26-bit fractional limbs (:mod:`bece._stats.exact`) and summed as
int64 integers, which is exact in any order of XLA's reductions; the counts
are int64. The bin index uses the float64 value, so bins are identical to
the host path's. A backend without float64 arithmetic (TPU) cannot run this
path; move the array to the host or to a GPU.

Three ways of reducing into the 2(M + 1) cells are implemented
(:data:`METHODS`): ``"scatter"`` (``jax.ops.segment_sum``), ``"onehot"``
(compare each cell index with ``arange(2(M+1))`` and sum the selected values
down the (n, 2(M+1)) columns, which XLA fuses into one reduction that reads
the data once and needs no atomics) and ``"rows"`` (the same along rows of a
(2(M+1), n) view). Measured with ``benchmarks/device_check.py`` (uniform
bins, M = 15, float32 confidences and int32 labels, ratios to one
``jnp.sum`` of the same array in the same run):

==========================  =============  ==============  ===========
reduction                   H200, n = 1e7  H200, n = 1e8   CPU, n = 1e5
==========================  =============  ==============  ===========
``jnp.sum`` (yardstick)     1 (0.22 ms)    1 (0.37 ms)     1
``"onehot"``                9.4            17 (6.5 ms)     207
``"rows"``                  10             33              288
``"scatter"``               73             403 (150 ms)    7.8
==========================  =============  ==============  ===========

Scatter-adds into 32 addresses serialise on GPU atomics, while XLA:CPU
runs the scatter as a plain loop; so the default is ``"scatter"`` on CPU and
``"onehot"`` elsewhere. (On the same H200 machine the host path on the same
data already in host memory took 0.96 s at n = 1e8, 150 times the device.)

The checks are those of :mod:`bece._stats.inputs` with the same messages for an
input with one kind of problem. Quantile bins are refused (compute edges
first and pass them as ``binning=edges``).
"""

from __future__ import annotations

import sys
from functools import cache
from typing import Any

import numpy as np

from .._base.jaxcompat import enable_x64
from . import exact
from .binning import Binning, make_binning
from .inputs import (
    DEFAULT_INPUTS,
    Inputs,
    as_array,
    range_hint,
    row_sum_message,
    row_sum_tolerance,
)

__all__ = [
    "device_sums",
    "is_jax_array",
    "METHODS",
]

#: offending entries reported per problem, as bece._stats.inputs does
_SHOW = 3

#: ways of reducing into the cells (module docstring)
METHODS = ("scatter", "onehot", "rows")


def is_jax_array(x: Any) -> bool:
    """Whether ``x`` is a ``jax.Array`` (without importing JAX)."""
    jax = sys.modules.get("jax")
    return jax is not None and isinstance(x, jax.Array)


def _fetch(tree: Any) -> Any:
    """Bring small results to the host (the only device-to-host transfer)."""
    import jax

    return jax.device_get(tree)


@cache
def _kernel(m: int, uniform: bool, kind: str, has_pred: bool, method: str, locate: bool):
    """The jitted reduction for M bins and one input form.

    ``kind``: ``"binary"`` (1-D y_prob, z = y_true), ``"pairs"`` (1-D
    y_prob with y_pred) or ``"matrix"`` (2-D y_prob). Without ``locate`` the
    checks are only counted (cheap sums that XLA fuses with the reduction)
    and the result is ``{"bad": total, "stats": ...}``; with ``locate`` each
    problem also gets its first offending indices and values (``nonzero``,
    run only once something was found).
    """
    import jax
    import jax.numpy as jnp

    cells = 2 * (m + 1)

    found: list[Any] = []

    def first(mask: Any, values: Any) -> tuple[Any, ...]:
        count = jnp.sum(mask, dtype=jnp.int64)
        found.append(count)
        if not locate:
            return (count,)
        idx = jnp.nonzero(mask.ravel(), size=_SHOW, fill_value=-1)[0]
        vals = jnp.where(idx >= 0, values.ravel()[jnp.maximum(idx, 0)], 0)
        return count, idx, vals

    def label_report(y: Any, n_classes: int | None) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if jnp.issubdtype(y.dtype, jnp.floating):
            yf = y.astype(jnp.float64)
            out["nonfinite"] = first(~jnp.isfinite(yf), yf)
            out["fraction"] = first(jnp.isfinite(yf) & (yf != jnp.floor(yf)), yf)
        if n_classes is not None:
            yi = y.astype(jnp.float64)
            out["range"] = first(jnp.isfinite(yi) & ((yi < 0) | (yi >= n_classes)), yi)
        elif jnp.issubdtype(y.dtype, jnp.floating):  # int64 casts must not wrap
            out["int64"] = first((yf < -(2.0**63)) | (yf >= 2.0**63), yf)
        elif jnp.issubdtype(y.dtype, jnp.unsignedinteger) and y.dtype.itemsize == 8:
            out["int64"] = first(y > jnp.uint64(2**63 - 1), y)
        return out

    def limbs(x: Any) -> list[Any]:
        # the fractional limbs of x and x * x in [0, 1] (bece._stats.exact.limbs), int64
        out = []
        for f in (x, x * x):
            for _ in range(3):
                f = f * float(1 << exact.LIMB_BITS)
                whole = jnp.floor(f)
                out.append(whole.astype(jnp.int64))
                f = f - whole
        return out

    def reduce(cell: Any, x: Any) -> tuple[Any, Any]:
        parts = limbs(x)
        if method == "scatter":
            cnt = jax.ops.segment_sum(jnp.ones_like(cell, dtype=jnp.int64), cell, cells)
            sums = [jax.ops.segment_sum(v, cell, cells) for v in parts]
        elif method == "rows":
            hit = jnp.arange(cells)[:, None] == cell[None, :]
            cnt = jnp.sum(hit, axis=1, dtype=jnp.int64)
            sums = [jnp.sum(jnp.where(hit, v[None, :], 0), axis=1, dtype=jnp.int64) for v in parts]
        else:
            hit = cell[:, None] == jnp.arange(cells)[None, :]
            cnt = jnp.sum(hit, axis=0, dtype=jnp.int64)
            sums = [jnp.sum(jnp.where(hit, v[:, None], 0), axis=0, dtype=jnp.int64) for v in parts]
        return cnt, jnp.stack(sums)

    def fn(p: Any, yt: Any, yp: Any, edges: Any, tol: Any) -> dict[str, Any]:
        found.clear()  # counts of this trace only (a new shape retraces)
        pf = p.astype(jnp.float64)
        report: dict[str, Any] = {
            "nan": first(jnp.isnan(pf), pf),
            "inf": first(jnp.isinf(pf), pf),
            "out": first((pf < 0) | (pf > 1), pf),
        }
        n_classes = 2 if kind == "binary" else (p.shape[1] if kind == "matrix" else None)
        report["y_true"] = label_report(yt, n_classes)
        if has_pred:
            report["y_pred"] = label_report(yp, n_classes)
        if kind == "matrix":
            dev = jnp.abs(jnp.sum(pf, axis=1) - 1.0)
            bad_rows = dev > tol
            row = jnp.argmax(bad_rows)
            found.append(jnp.sum(bad_rows, dtype=jnp.int64))
            report["rows"] = (found[-1], row, jnp.sum(pf[row]), jnp.max(dev))
            if has_pred:
                pred = yp.astype(jnp.int64)
                safe = jnp.clip(pred, 0, p.shape[1] - 1)
                x = jnp.take_along_axis(pf, safe[:, None], axis=1)[:, 0]
            else:
                pred = jnp.argmax(pf, axis=1)
                x = jnp.max(pf, axis=1)
            z = pred == yt.astype(jnp.int64)
        elif kind == "pairs":
            x = pf
            # as int64, as the host path compares them (labels beyond int64 are refused)
            z = yt.astype(jnp.int64) == yp.astype(jnp.int64)
        else:
            x = pf
            z = yt.astype(jnp.float64) == 1
        if uniform:
            b = jnp.floor(x * m).astype(jnp.int64)
        else:
            b = jnp.searchsorted(edges, x, side="right").astype(jnp.int64) - 1
            report["edges"] = first((x < edges[0]) | (x > edges[-1]), x)
        cell = jnp.clip(2 * b + z.astype(jnp.int64), 0, cells - 1)
        stats = reduce(cell, x)
        if not locate:
            return {"bad": sum(found), "stats": stats}
        report["stats"] = stats
        report["negative"] = jnp.any(pf < 0)
        return report

    return jax.jit(fn)


def _platform(x: Any) -> str:
    try:
        return next(iter(x.devices())).platform
    except Exception:  # pragma: no cover - very old or exotic arrays
        return "cpu"


def _describe(count: int, idx: np.ndarray, vals: np.ndarray, k: int | None = None) -> str:
    def where(i: int) -> str:
        return f"row {i // k}, column {i % k}" if k else f"index {i}"

    shown = ", ".join(f"{where(int(i))}: {float(v)!r}" for i, v in zip(idx, vals) if i >= 0)
    more = f" and {count - _SHOW} more" if count > _SHOW else ""
    return f"{count} value(s) ({shown}{more})"


def _label_errors(rep: dict[str, Any], name: str, n_classes: int | None) -> None:
    if "nonfinite" in rep and rep["nonfinite"][0]:
        raise ValueError(f"{name} contains NaN or infinity: {_describe(*rep['nonfinite'])}")
    if "fraction" in rep and rep["fraction"][0]:
        raise ValueError(
            f"{name} must hold integer class labels; {_describe(*rep['fraction'])} are not integers"
        )
    if "int64" in rep and rep["int64"][0]:
        c, idx, vals = rep["int64"]
        shown = ", ".join(f"index {int(i)}: {v.item()!r}" for i, v in zip(idx, vals) if i >= 0)
        more = f" and {int(c) - _SHOW} more" if c > _SHOW else ""
        raise ValueError(
            f"{name} must hold class labels in the int64 range (-2**63 .. 2**63 - 1); "
            f"{int(c)} value(s) ({shown}{more}) are beyond it"
        )
    if "range" in rep and rep["range"][0]:
        assert n_classes is not None  # labels are range-checked only against a number of classes
        c, idx, vals = rep["range"]
        vals = [int(v) for v in vals]
        shown = ", ".join(f"index {int(i)}: {v!r}" for i, v in zip(idx, vals) if i >= 0)
        more = f" and {int(c) - _SHOW} more" if c > _SHOW else ""
        raise ValueError(
            f"{name} must hold labels in 0..{n_classes - 1}; {int(c)} value(s) ({shown}{more}) are outside"
        )


def _check_shapes(y_prob: Any, y_true: Any, y_pred: Any) -> None:
    dt = np.dtype(y_prob.dtype)
    if dt.kind not in "fiu":
        raise ValueError(f"y_prob must hold real numbers (probabilities), got dtype {dt}")
    if y_prob.ndim not in (1, 2):
        raise ValueError(f"y_prob must have shape (n,) or (n, K), got shape {y_prob.shape}")
    if y_prob.shape[0] == 0:
        raise ValueError("y_prob is empty: at least one prediction is needed")
    if y_prob.ndim == 2 and y_prob.shape[1] < 2:
        raise ValueError(
            f"y_prob of shape (n, K) needs K >= 2 classes, got K = {y_prob.shape[1]}; "
            "for a binary classifier pass P(y=1) as a 1-D array"
        )
    n = y_prob.shape[0]
    for y, name in ((y_true, "y_true"), (y_pred, "y_pred")):
        if y is None:
            if name == "y_true":
                raise ValueError("y_true is required, got None")
            continue
        if y.ndim != 1:
            raise ValueError(f"{name} must have shape (n,), got shape {y.shape}")
        if y.shape[0] != n:
            raise ValueError(
                f"{name} has {y.shape[0]} entries but y_prob has {n}; they must have the same length"
            )
        if is_jax_array(y) and np.dtype(y.dtype).kind not in "biuf":
            # (labels on the host, of any type, are read by bece._stats.labels)
            raise ValueError(f"{name} must hold integer class labels, got dtype {y.dtype}")


def _host_labels(yt: Any, yp: Any, y_prob: Any, kind: str,
                 inputs: Inputs) -> tuple[np.ndarray, np.ndarray | None]:
    """Labels read on the host (:mod:`bece._stats.labels`): the 0/1 outcome of
    binary labels, or the column indices (``"pairs"``: common indices) of
    class labels; the device then checks them as integers."""
    from .labels import binary_outcome, class_indices

    n = y_prob.shape[0]
    host_t = np.asarray(yt)
    host_p = None if yp is None else np.asarray(yp)
    if inputs.pos_label is not None and kind != "binary":
        raise ValueError("pos_label applies to P(y = 1) of shape (n,) without y_pred")
    if kind == "binary":
        return binary_outcome(host_t, n, inputs), None
    k = y_prob.shape[1] if kind == "matrix" else None
    t, p, _ = class_indices(host_t, host_p, n, k, labels=inputs.labels)
    return t, p


def device_sums(
    y_true: Any,
    y_prob: Any,
    y_pred: Any,
    n_bins: Any,
    binning: Any,
    inputs: Inputs = DEFAULT_INPUTS,
    *,
    method: str | None = None,
) -> tuple[Binning, np.ndarray, np.ndarray]:
    """Checks and per-bin statistics of a ``jax.Array`` ``y_prob`` on its device.

    Parameters are those of :meth:`bece.CalibrationStats.from_arrays`
    (the input keywords as :class:`~bece._stats.inputs.Inputs`); ``method``
    (``"scatter"`` or ``"onehot"``) overrides the reduction chosen for the
    device's platform. Labels given as NumPy (or with
    ``labels``/``pos_label``) are read on the host by
    :mod:`bece._stats.labels` and sent as 0/1 outcomes or column indices;
    ``from_logits`` is refused (apply ``jax.nn.softmax`` on the device).

    Returns
    -------
    binning : Binning
    counts : ndarray of shape (2, M), int64
    sums : ndarray of shape (2, 4, M), int64
        Exact sums of the confidences and of their squares
        (:mod:`bece._stats.exact`), equal to the host path's.
    """
    import jax
    import jax.numpy as jnp

    from .fused import fold

    if isinstance(binning, str) and binning in ("quantile", "equal-mass"):
        raise ValueError(
            "binning='quantile' is not computed on the device; compute edges first "
            "(e.g. jax.numpy.quantile of the confidences, brought to the host) and pass "
            "them as binning=edges"
        )
    bins = make_binning(None, n_bins, binning)
    m = bins.n_bins
    device = next(iter(y_prob.devices()))

    def on_device(y: Any, name: str) -> Any:
        if y is None:
            return None
        if is_jax_array(y):
            return y
        return as_array(y, name)

    if inputs.from_logits:
        raise ValueError(
            "from_logits=True is not applied to a jax.Array on its device: pass "
            "jax.nn.softmax(logits, axis=-1) (jax.nn.sigmoid for shape (n,)), or the logits as "
            "a NumPy array"
        )
    yt = on_device(y_true, "y_true")
    yp = on_device(y_pred, "y_pred")
    _check_shapes(y_prob, yt, yp)
    kind = "matrix" if y_prob.ndim == 2 else ("pairs" if yp is not None else "binary")
    if inputs.labels is not None or inputs.pos_label is not None or not is_jax_array(yt):
        yt, yp = _host_labels(yt, yp, y_prob, kind, inputs)
    if method is None:
        method = "scatter" if _platform(y_prob) == "cpu" else "onehot"
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    in_dtype = np.dtype(y_prob.dtype)
    k = y_prob.shape[1] if y_prob.ndim == 2 else 0
    tol = inputs.row_sum_tol
    if tol is None:
        tol = row_sum_tolerance(in_dtype, k) if k else 0.0
    shape = (m, bins.rule == "uniform", kind, yp is not None, method)
    with enable_x64():
        # labels given as NumPy are sent to y_prob's device (host to device only)
        yt_d = yt if is_jax_array(yt) else jax.device_put(yt, device)
        yp_d = None if yp is None else (yp if is_jax_array(yp) else jax.device_put(yp, device))
        edges = jax.device_put(np.asarray(bins.edges, dtype=np.float64), device)
        args = (y_prob, yt_d, yp_d, edges, jnp.float64(tol))
        rep = _fetch(_kernel(*shape, locate=False)(*args))
        if rep["bad"]:  # find the offending values (one more pass, errors only)
            rep = _fetch(_kernel(*shape, locate=True)(*args))
    if "nan" in rep:  # located: raise the first problem, as bece._stats.inputs would
        for key, what in (("nan", "contains NaN"), ("inf", "contains infinity")):
            if rep[key][0]:
                count, idx, vals = rep[key]
                raise ValueError(f"y_prob {what}: {_describe(count, idx, vals, k or None)}")
        if rep["out"][0]:
            count, idx, vals = rep["out"]
            raise ValueError(
                f"y_prob must lie in [0, 1]; {_describe(count, idx, vals, k or None)} are outside"
                + range_hint("y_prob", bool(rep["negative"]))
            )
        if kind == "matrix":
            count, row, total, worst = rep["rows"]
            if count:
                raise ValueError(row_sum_message("y_prob", tol, int(count), int(row), float(total),
                                                 float(worst), inputs.row_sum_tol))
        n_classes = 2 if kind == "binary" else (k if kind == "matrix" else None)
        _label_errors(rep["y_true"], "y_true", n_classes)
        if yp is not None:
            _label_errors(rep["y_pred"], "y_pred", n_classes)
        if "edges" in rep and rep["edges"][0]:
            count, idx, vals = rep["edges"]
            raise ValueError(
                f"y_prob has {int(count)} confidence(s) outside the bin edges "
                f"[{bins.edges[0]:g}, {bins.edges[-1]:g}] given in binning, e.g. {np.float64(vals[0])!r}"
            )
        raise AssertionError("a problem was counted on the device but not found")  # pragma: no cover
    cnt, limbs = (np.asarray(a, dtype=np.int64) for a in rep["stats"])
    counts = cnt.reshape(m + 1, 2).T
    limbs = limbs.reshape(2, 3, m + 1, 2).sum(axis=3)  # (p or p**2, limb, slot)
    sums = np.concatenate([np.zeros((2, 1, m + 1), dtype=np.int64), limbs], axis=1)
    return (bins, *fold(counts, sums, m))
