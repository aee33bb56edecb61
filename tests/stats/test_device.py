"""bece._stats.device: statistics of JAX arrays computed where the array lives
(tested on CPU).

Each case compares with the host path on the *same* values (a JAX array in
32-bit mode holds float32; ``np.asarray`` of it is what the host path sees).
"""

from __future__ import annotations

import numpy as np
import pytest

from bece import CalibrationStats
from bece._base.jaxcompat import enable_x64
from bece._stats import device as _device

jax = pytest.importorskip("jax")
jnp = jax.numpy


def _assert_same(got: CalibrationStats, ref: CalibrationStats) -> None:
    assert got.binning == ref.binning
    assert got.counts.dtype == np.int64 and got.sum_p.dtype == np.float64
    assert np.array_equal(got.counts, ref.counts)
    # exact sums: the device gives the host's bits
    assert np.array_equal(got.sum_p, ref.sum_p) and np.array_equal(got.sum_p2, ref.sum_p2)


def _host(y_true, y_prob, y_pred=None, **kw):
    as_np = lambda a: None if a is None else np.asarray(a)  # noqa: E731
    return CalibrationStats.from_arrays(as_np(y_true), as_np(y_prob), y_pred=as_np(y_pred), **kw)


@pytest.fixture
def arrays(rng):
    n, k = 1537, 6
    p = rng.beta(5, 1, size=n)
    p[:3] = [0.0, 1.0, 0.4]
    prob = rng.dirichlet(np.ones(k) * 0.3, size=n)
    return {
        "y": (rng.uniform(size=n) < p).astype(np.int32),
        "p": p,
        "prob": prob,
        "labels": rng.integers(0, k, n).astype(np.int32),
        "pred": rng.integers(0, k, n).astype(np.int32),
    }


EDGES = [0.0, 0.25, 0.5, 0.9, 0.95, 1.0]


def _cases(a):
    """Every input form: binary (device or NumPy labels), triples, top-label."""
    return {
        "binary": (jnp.asarray(a["y"]), jnp.asarray(a["p"]), None),
        "binary-numpy-bool": (a["y"].astype(bool), jnp.asarray(a["p"]), None),
        "pairs": (jnp.asarray(a["labels"]), jnp.asarray(a["p"]), jnp.asarray(a["pred"])),
        "matrix": (jnp.asarray(a["labels"]), jnp.asarray(a["prob"]), None),
        "matrix-pred-numpy": (a["labels"], jnp.asarray(a["prob"]), a["pred"]),
        "matrix-float-labels": (jnp.asarray(a["labels"].astype(np.float32)), jnp.asarray(a["prob"]), None),
    }


def _check(arrays, method, binning, names):
    nb = 10 if binning == "uniform" else None
    cases = _cases(arrays)
    for name in names:
        y_true, y_prob, y_pred = cases[name]
        got = CalibrationStats._computed(*_device.device_sums(y_true, y_prob, y_pred, nb, binning,
                                                              method=method))
        _assert_same(got, _host(y_true, y_prob, y_pred, n_bins=nb, binning=binning))


# each (form, method, binning) is one XLA compilation (~1-3 s on 2 cores):
# by default every form and every method once, the full grid under -m slow
@pytest.mark.parametrize(
    "method,binning,names",
    [
        ("scatter", "uniform", ["binary", "pairs", "matrix"]),
        ("scatter", EDGES, ["binary-numpy-bool", "matrix-pred-numpy"]),
        ("onehot", EDGES, ["matrix-float-labels", "pairs"]),
        ("rows", "uniform", ["binary-numpy-bool", "matrix"]),
    ],
)
def test_device_equals_host_on_the_same_values(arrays, method, binning, names):
    _check(arrays, method, binning, names)


@pytest.mark.slow
@pytest.mark.parametrize("method", list(_device.METHODS))
@pytest.mark.parametrize("binning", ["uniform", EDGES])
def test_device_equals_host_full_grid(arrays, method, binning):
    _check(arrays, method, binning, list(_cases(arrays)))


def test_float64_sums_in_32_bit_mode_without_changing_the_config(arrays):
    """In 32-bit mode the array is float32; its sums still come back float64,
    equal to the host path's float64 sums of the same float32 values, and
    jax_enable_x64 is what it was."""
    before = jax.config.jax_enable_x64
    p = jnp.asarray(arrays["p"].astype(np.float32))
    got = CalibrationStats.from_arrays(arrays["y"], p)
    assert jax.config.jax_enable_x64 == before
    ref = CalibrationStats.from_arrays(arrays["y"], np.asarray(p))
    _assert_same(got, ref)
    # float32 partial sums would be off by ~1e-5 here; float64 ones are not
    p64 = np.asarray(p, np.float64)
    bins = ref.binning.index(p64)
    exact = np.array([np.sum(p64[bins == m], dtype=np.longdouble) for m in range(15)])
    np.testing.assert_allclose(got.sum_p, exact.astype(np.float64), rtol=1e-13, atol=1e-300)


def test_x64_array_input(arrays):
    with enable_x64():
        p = jnp.asarray(arrays["p"])
        assert p.dtype == jnp.float64
    got = CalibrationStats.from_arrays(arrays["y"], p)
    _assert_same(got, CalibrationStats.from_arrays(arrays["y"], arrays["p"]))


def test_no_n_sized_array_comes_to_the_host(arrays, monkeypatch):
    """Spy on every way an array can reach NumPy: only the small results of
    one explicit device_get may, and nothing n-sized does."""
    n = arrays["p"].size
    fetched = []
    real_fetch = _device._fetch

    def fetch(tree):
        sizes = [np.size(x) for x in jax.tree_util.tree_leaves(tree)]
        fetched.append(max(sizes))
        return real_fetch(tree)

    def guard(real):
        def wrapped(a, *args, **kw):
            if isinstance(a, jax.Array) and a.size >= n:
                raise AssertionError(f"{real.__name__} on an n-sized device array")
            return real(a, *args, **kw)
        return wrapped

    monkeypatch.setattr(_device, "_fetch", fetch)
    for name in ("asarray", "array", "asanyarray", "ascontiguousarray"):
        monkeypatch.setattr(np, name, guard(getattr(np, name)))
    monkeypatch.setattr(jax, "device_get", guard(jax.device_get))
    p, y = jnp.asarray(arrays["prob"]), jnp.asarray(arrays["labels"])
    s = CalibrationStats.from_arrays(y, p, n_bins=12)
    assert s.n == n
    assert len(fetched) == 1 and fetched[0] <= 6 * 2 * 13  # six limb sums per cell
    monkeypatch.undo()
    _assert_same(s, _host(y, p, n_bins=12))


@pytest.mark.parametrize(
    "make",
    [
        lambda y, p: (y, np.r_[p[:-1], np.nan]),
        lambda y, p: (y, np.r_[p[:5], np.inf, p[6:]]),
        lambda y, p: (y, np.r_[p[:5], 1.5, -0.5, 2.0, 3.0, p[9:]]),
        lambda y, p: (np.r_[y[:-1], 2], p),
        lambda y, p: (np.r_[y[:-1], 0.5], p),
        lambda y, p: (np.r_[np.nan, y[1:]], p),
        lambda y, p: (y[:-1], p),
        lambda y, p: (y[:, None], p),
    ],
)
def test_device_errors_match_host_messages(arrays, make):
    y, p = make(arrays["y"], arrays["p"].astype(np.float32))
    with pytest.raises(ValueError) as host:
        CalibrationStats.from_arrays(y, p)
    with pytest.raises(ValueError) as dev:
        CalibrationStats.from_arrays(y, jnp.asarray(p))
    assert str(dev.value) == str(host.value)


def test_device_matrix_errors(arrays):
    prob = arrays["prob"].astype(np.float32)
    a, b, c = prob.copy(), prob.copy(), prob.copy()
    a[7, 2] = np.nan
    b[9, 0] += 0.01
    labels = arrays["labels"].copy()
    labels[4] = 6
    for y_true, y_prob in ((arrays["labels"], a), (arrays["labels"], b), (labels, c)):
        with pytest.raises(ValueError) as host:
            CalibrationStats.from_arrays(y_true, y_prob)
        with pytest.raises(ValueError) as dev:
            CalibrationStats.from_arrays(y_true, jnp.asarray(y_prob))
        assert str(dev.value) == str(host.value)
    with pytest.raises(ValueError, match="outside the bin edges"):
        CalibrationStats.from_arrays(arrays["y"], jnp.asarray(arrays["p"]), binning=[0.0, 0.5, 0.9])
    with pytest.raises(ValueError, match="binning='quantile' is not computed on the device"):
        CalibrationStats.from_arrays(arrays["y"], jnp.asarray(arrays["p"]), binning="quantile")
    with pytest.raises(ValueError, match="method must be"):
        _device.device_sums(arrays["y"], jnp.asarray(arrays["p"]), None, 5, "uniform", method="gpu")


def test_device_row_sum_tolerance_is_the_host_one(rng):
    """Robustness #1 on the device path: float32 rows summing to 1.05 at K = 1e5."""
    prob = np.full((2, 100_000), np.float32(1.05 / 1e5))
    with pytest.raises(ValueError, match=r"rows must sum to 1 \(tolerance 1.5e-04\)"):
        CalibrationStats.from_arrays(np.zeros(2, int), jnp.asarray(prob))
    logits = rng.normal(size=(50, 1000)).astype(np.float32)
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    ok = e / e.sum(axis=1, keepdims=True)
    y = rng.integers(0, 1000, 50)
    _assert_same(CalibrationStats.from_arrays(y, jnp.asarray(ok)), _host(y, ok))


def test_device_labels_beyond_int64_are_refused():
    """Robustness #11 on the device path (it compared labels as floats)."""
    p = jnp.asarray(np.array([0.6, 0.7, 0.8]))
    with pytest.raises(ValueError, match=r"y_true must hold class labels in the int64 range.*index 2"):
        CalibrationStats.from_arrays(np.array([0, 1, 2.0**63]), p, y_pred=np.array([0, 1, -(2**63)]))
    got = CalibrationStats.from_arrays(np.array([2**53 + 1, 5]), jnp.asarray(np.array([0.2, 0.7])),
                                       y_pred=np.array([2.0**53, 5.0]), n_bins=2)
    assert got.counts.tolist() == [[1, 0], [0, 1]]
