"""bece._stats.fused: the one-pass reduction (NumPy and numba engines) against
a naive loop with exactly rounded sums, the same bits from every engine,
block size, thread count and order, and its input checks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bece import CalibrationStats
from bece._stats import exact, make_binning
from bece._stats import fused as _fused

ENGINES = ["numpy"] + (["numba"] if _fused.available_engine() == "numba" else [])


def _naive(z, p, edges):
    """Per-bin counts and exactly rounded sums (math.fsum) by a plain loop."""
    m = len(edges) - 1
    counts = np.zeros((2, m), dtype=np.int64)
    terms = [[] for _ in range(m)]
    for zi, pi in zip(z, p):
        pi = float(pi)
        b = m - 1 if pi == edges[-1] else int(np.searchsorted(edges, pi, side="right")) - 1
        counts[int(zi), b] += 1
        terms[b].append(pi)
    sp = np.array([math.fsum(t) for t in terms])
    sp2 = np.array([math.fsum(x * x for x in t) for t in terms])
    return counts, sp, sp2


def _assert_sums_exact(got, exact_sum, n):
    """Within two units in the last place of the exactly rounded sum (math.fsum),
    plus the 2**-78 each term is read to (bece._stats.exact)."""
    np.testing.assert_array_less(np.abs(got - exact_sum),
                                 2 * np.spacing(np.abs(exact_sum)) + n * 2.0**-78 + 1e-300)


def _values(sums):
    sp, sp2 = exact.value(sums)
    return sp, sp2


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("binning", ["uniform", "edges", "quantile"])
def test_fused_pass_matches_naive_loop(rng, engine, dtype, binning):
    n, m = 3001, 9
    p = rng.beta(4, 1, size=n).astype(dtype)
    p[:5] = [0.0, 1.0, 0.5, 1 / 3, 8 / 9]  # edges of uniform bins, both ends
    y = (rng.uniform(size=n) < p).astype(np.int64)
    spec = {"uniform": "uniform", "quantile": "quantile",
            "edges": [0.0, 0.1, 0.5, 0.5 + 1e-9, 0.7, 0.9, 1.0]}[binning]
    nb = None if binning == "edges" else m
    bins, counts, sums = _fused.binned_sums(y, p, None, nb, spec, engine=engine)
    sp, sp2 = _values(sums)
    p64 = p.astype(np.float64)
    if binning == "uniform":
        # uniform bins index by floor(pM), which can differ from searchsorted on
        # linspace edges by one ulp: compare with that rule directly
        b = np.minimum((p64 * m).astype(np.int64), m - 1)
        exp_counts = np.zeros((2, m), np.int64)
        np.add.at(exp_counts, (y, b), 1)
        exp_sp = np.array([math.fsum(p64[b == j]) for j in range(m)])
        exp_sp2 = np.array([math.fsum(p64[b == j] ** 2) for j in range(m)])
    else:
        exp_counts, exp_sp, exp_sp2 = _naive(y, p64, bins.edges)
    assert counts.dtype == np.int64 and sp.dtype == np.float64
    assert np.array_equal(counts, exp_counts)
    _assert_sums_exact(sp, exp_sp, n)
    _assert_sums_exact(sp2, exp_sp2, n)


@pytest.mark.parametrize("engine", ENGINES)
def test_fused_pass_input_forms_equal_as_outcomes(rng, engine):
    """Binary, triples (int, bool and whole float labels) and top-label input
    give what the NumPy reference gives on as_outcomes' (z, p)."""
    from bece._stats.inputs import as_outcomes

    n = 777
    p = rng.uniform(size=n)
    y = rng.integers(0, 2, n)
    yt, yp = rng.integers(0, 5, n), rng.integers(0, 5, n)
    prob = rng.dirichlet(np.ones(5), size=n)
    cases = [
        (y, p, None),
        (y.astype(bool), p, None),
        (y.astype(np.float64), p.astype(np.float32), None),
        (y.astype(np.int8), p, None),
        (yt, p, yp),
        (yt.astype(np.float64), p, yp.astype(np.uint16)),
        (yt, prob, None),
        (yt, prob, yp),
        (list(y), list(p), None),
    ]
    for y_true, y_prob, y_pred in cases:
        bins, counts, sums = _fused.binned_sums(y_true, y_prob, y_pred, 10, "uniform", engine=engine)
        z, conf = as_outcomes(y_true, y_prob, y_pred)
        ref = _fused.numpy_cells(z, conf, make_binning(None, 10))
        assert np.array_equal(counts, ref[0])
        assert np.array_equal(sums, ref[1])


BAD = [
    ("y_prob NaN", lambda y, p: (y, np.r_[p[:-1], np.nan], None), "y_prob contains NaN"),
    ("y_prob inf", lambda y, p: (y, np.r_[np.inf, p[1:]], None), "y_prob contains infinity"),
    ("y_prob > 1", lambda y, p: (y, np.r_[p[:7], 1.0 + 1e-12, p[8:]], None), "outside"),
    ("y_prob < 0", lambda y, p: (y, np.r_[p[:7], -0.1, p[8:]], None), "outside"),
    ("label 2", lambda y, p: (np.r_[y[:-1], 2], p, None), r"labels in 0\.\.1"),
    ("label -1", lambda y, p: (np.r_[-1, y[1:]], p, None), r"labels in 0\.\.1"),
    ("label 0.5", lambda y, p: (np.r_[y[:-1], 0.5], p, None), "not integers"),
    ("label NaN", lambda y, p: (np.r_[y[:-1], np.nan], p, None), "NaN or infinity"),
    ("y_pred 1.5", lambda y, p: (y, p, np.r_[y[:-1], 1.5]), "y_pred must hold integer"),
    ("y_pred inf", lambda y, p: (y.astype(float), p, np.r_[y[:-1], np.inf]), "y_pred contains NaN or inf"),
    ("short y_true", lambda y, p: (y[:-1], p, None), "same length"),
    ("2-D y_true", lambda y, p: (y[:, None], p, None), "shape"),
    ("strings", lambda y, p: (y.astype(str), p, None), "y_true"),
    ("empty", lambda y, p: (y[:0], p[:0], None), "empty"),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name,make,message", BAD, ids=[b[0] for b in BAD])
def test_fused_pass_raises_what_the_checks_raise(rng, engine, name, make, message):
    """The compiled loop only detects; the message is bece._stats.inputs' own."""
    from bece._stats.inputs import as_outcomes

    y, p = rng.integers(0, 2, 50), rng.uniform(size=50)
    y_true, y_prob, y_pred = make(y, p)
    with pytest.raises(ValueError, match=message) as ours:
        _fused.binned_sums(y_true, y_prob, y_pred, 15, "uniform", engine=engine)
    with pytest.raises(ValueError) as ref:
        as_outcomes(y_true, y_prob, y_pred)
    assert str(ours.value) == str(ref.value)


@pytest.mark.parametrize("engine", ENGINES)
def test_fused_pass_outside_explicit_edges(rng, engine):
    y, p = rng.integers(0, 2, 40), rng.uniform(0.2, 0.8, size=40)
    p[3] = 0.95
    with pytest.raises(ValueError, match=r"outside the bin edges \[0.1, 0.9\]"):
        _fused.binned_sums(y, p, None, None, [0.1, 0.5, 0.9], engine=engine)


@pytest.mark.skipif(_fused.available_engine() != "numba", reason="numba is not installed")
def test_auto_engine_and_numba_agree_on_large_input(rng):
    """Above AUTO_ROWS the loop is used; it gives the NumPy formulation's bits."""
    n = _fused.AUTO_ROWS + 3
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p).astype(np.int8)
    got = CalibrationStats.from_arrays(y, p)
    ref = _fused.binned_sums(y, p, None, 15, "uniform", engine="numpy")
    assert np.array_equal(got.counts, ref[1])
    assert np.array_equal(got._exact, ref[2])


def test_engine_argument_is_checked():
    with pytest.raises(ValueError, match="engine must be one of"):
        _fused.binned_sums([0], [0.5], None, 2, "uniform", engine="gpu")


def test_statistics_do_not_touch_jax_config(rng):
    """Sums are float64 and exact in JAX's default 32-bit mode too, and
    computing them leaves JAX's configuration alone."""
    jax = pytest.importorskip("jax")
    before = jax.config.jax_enable_x64
    p = rng.uniform(size=1000)
    y = rng.integers(0, 2, 1000)
    s = CalibrationStats.from_arrays(y, p, n_bins=4)
    assert jax.config.jax_enable_x64 == before
    exp = _naive(y, p, np.linspace(0, 1, 5))
    _assert_sums_exact(s.sum_p, exp[1], p.size)


@pytest.mark.skipif(_fused.available_engine() != "numba", reason="numba is not installed")
def test_blocks_and_threads_do_not_change_the_result(rng, monkeypatch):
    """Each thread adds its blocks into its own accumulators: the sums are
    bit-identical for any number of threads and equal the NumPy
    formulation's, and a bad value in the last block is still found."""
    monkeypatch.setattr(_fused, "_BLOCK", 1000)
    n = 7_777
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p).astype(np.int64)
    results = []
    for threads in (1, 2, 3, 8):
        monkeypatch.setattr(_fused, "_MAX_THREADS", threads)
        results.append(_fused.binned_sums(y, p, None, 15, "uniform", engine="numba"))
    ref = _fused.binned_sums(y, p, None, 15, "uniform", engine="numpy")
    for got in results:
        assert _same(got, ref)
    bad = p.copy()
    bad[-2] = np.nan
    with pytest.raises(ValueError, match=r"index 7775: nan"):
        _fused.binned_sums(y, bad, None, 15, "uniform", engine="numba")
    with pytest.raises(ValueError, match=r"index 7775: 3"):
        _fused.binned_sums(np.r_[y[:-2], 3, 1], p, None, 15, "uniform", engine="numba")


def _same(a, b):
    return all(np.array_equal(x, y) for x, y in zip(a[1:], b[1:]))


@pytest.mark.skipif(_fused.available_engine() != "numba", reason="numba is not installed")
def test_auto_result_does_not_depend_on_numba_being_loaded(rng, monkeypatch):
    """Robustness #25: the same call gives the same bits before and after an
    unrelated large call has loaded numba (engine='auto' used to switch from
    NumPy's sequential sums to the loop's lanes)."""
    _fused._compile()
    p = rng.uniform(size=300_001)
    y = (rng.uniform(size=p.size) < p).astype(np.int64)
    loaded = _fused.binned_sums(y, p, None, 15, "uniform")
    monkeypatch.setattr(_fused, "_KERNELS", None)  # as in a fresh process
    monkeypatch.setattr(_fused, "_NUMBA_ERROR", None)
    fresh = _fused.binned_sums(y, p, None, 15, "uniform")
    assert _same(loaded, fresh)
    assert _same(loaded, _fused.binned_sums(y, p, None, 15, "uniform", engine="numpy"))


@pytest.mark.parametrize("edges", [False, True])
def test_sums_do_not_depend_on_order_split_engine_or_block(rng, monkeypatch, edges):
    """Issue: plug-in ECEs differed in the last bits between CSV, Parquet and
    in-memory input. The same predictions in any order, split into any
    chunks, by either engine and any block size, give the same bits."""
    n = 7_777
    p = rng.uniform(size=n)
    p[:4] = [0.0, 1.0, 1e-30, 1 - 2.0**-53]
    y = (rng.uniform(size=n) < p).astype(np.int64)
    spec = np.sort(np.r_[0, rng.uniform(size=7), 1]) if edges else "uniform"
    nb = None if edges else 15
    ref = CalibrationStats.from_arrays(y, p, n_bins=nb, binning=spec)
    order = rng.permutation(n)
    assert CalibrationStats.from_arrays(y[order], p[order], n_bins=nb, binning=spec) == ref
    cuts = np.sort(rng.choice(np.arange(1, n), size=9, replace=False))
    parts = [CalibrationStats.from_arrays(a, b, n_bins=nb, binning=spec)
             for a, b in zip(np.split(y, cuts), np.split(p, cuts))]
    assert sum(parts[::-1]) == ref and sum(parts) == ref
    for engine in ENGINES:
        for block in (1000, 1 << 22):
            monkeypatch.setattr(_fused, "_BLOCK", block)
            monkeypatch.setattr(exact, "BLOCK", block)
            got = _fused.binned_sums(y, p, None, nb, spec, engine=engine)
            assert np.array_equal(got[1], ref.counts) and np.array_equal(got[2], ref._exact)
    # and the float sums are the exactly rounded ones, to two units in the last place
    b = ref.binning.index(p)
    _assert_sums_exact(ref.sum_p, np.array([math.fsum(p[b == j]) for j in range(ref.n_bins)]), n)


@pytest.mark.parametrize("engine", ENGINES)
def test_labels_beyond_int64_are_refused_by_every_engine(engine):
    """Robustness #11: 2.0**63 used to wrap to -2**63 and 'equal' y_pred = -2**63
    in the NumPy path while the loop said unequal."""
    with pytest.raises(ValueError, match=r"y_true must hold class labels in the int64 range.*9\.22"):
        _fused.binned_sums([0, 1, 2.0**63], [0.6, 0.7, 0.8], [0, 1, -(2**63)], 15, "uniform",
                           engine=engine)
    big = np.array([0, 1, 2**63 + 1], dtype=np.uint64)
    with pytest.raises(ValueError, match="index 2: 9223372036854775809"):
        _fused.binned_sums(big, [0.6, 0.7, 0.8], np.zeros(3, np.uint64), 15, "uniform",
                           engine=engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_large_labels_compare_exactly_in_every_engine(engine):
    """Labels above 2**53 compare as int64, not as floats (2**53 + 1 != 2**53)."""
    out = _fused.binned_sums(np.array([2**53 + 1, 5]), [0.2, 0.7], np.array([2.0**53, 5.0]),
                             2, "uniform", engine=engine)
    assert out[1].tolist() == [[1, 0], [0, 1]]


@pytest.mark.parametrize("engine", ENGINES)
def test_masked_arrays_are_refused_not_unmasked(engine):
    """Robustness #7: np.asarray drops the mask; the fast path must not use it."""
    p = np.ma.masked_array([0.9, 0.5, 0.6], mask=[1, 0, 0])
    with pytest.raises(ValueError, match=r"y_prob is a masked array with 1 masked value\(s\) \(index 0\)"):
        _fused.binned_sums([0, 1, 1], p, None, 2, "uniform", engine=engine)
    y = np.ma.masked_array([0, 1, 1], mask=[0, 1, 0])
    with pytest.raises(ValueError, match="y_true is a masked array"):
        _fused.binned_sums(y, [0.9, 0.5, 0.6], None, 2, "uniform", engine=engine)
    unmasked = np.ma.masked_array([0.9, 0.5, 0.6], mask=[0, 0, 0])
    assert _same(_fused.binned_sums([0, 1, 1], unmasked, None, 2, "uniform", engine=engine),
                 _fused.binned_sums([0, 1, 1], [0.9, 0.5, 0.6], None, 2, "uniform", engine=engine))


def test_n_bins_beyond_the_memory_limit_is_refused_before_allocating(monkeypatch):
    monkeypatch.setenv("BECE_MEMORY_LIMIT", "100MiB")
    with pytest.raises(ValueError, match=r"n_bins=10000000: the accumulators .* BECE_MEMORY_LIMIT"):
        _fused.binned_sums([0, 1], [0.2, 0.7], None, 10**7, "uniform")
