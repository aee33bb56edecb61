"""bece._stats.distributed: Dask arrays and DataFrames on a 2-process LocalCluster
give the same statistics as one pass."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bece import CalibrationStats

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("dask.distributed")


@pytest.fixture(scope="module")
def client():
    """Two worker processes, one thread each, started here and closed after."""
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def _assert_same(got: CalibrationStats, ref: CalibrationStats) -> None:
    assert got.binning == ref.binning
    assert np.array_equal(got.counts, ref.counts)
    eps = np.finfo(np.float64).eps
    atol = 2 * ref.n * eps * ref.sum_p.sum()  # two orders of n additions (Higham 4.4)
    np.testing.assert_allclose(got.sum_p, ref.sum_p, rtol=0, atol=atol)
    np.testing.assert_allclose(got.sum_p2, ref.sum_p2, rtol=0, atol=atol)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    n, k = 20_011, 5
    p = rng.beta(4, 1, size=n)
    y = (rng.uniform(size=n) < p).astype(np.int64)
    prob = rng.dirichlet(np.ones(k) * 0.4, size=n)
    labels = rng.integers(0, k, n)
    return y, p, prob, labels


def test_dask_arrays_on_the_cluster(client, data):
    y, p, prob, labels = data
    ran_on = set(client.scheduler_info()["workers"])
    assert len(ran_on) == 2
    for chunks in (1000, 3001, 20_011):
        with distributed.get_task_stream(client) as ts:
            got = CalibrationStats.from_arrays(da.from_array(y, chunks=chunks),
                                               da.from_array(p, chunks=chunks))
        _assert_same(got, CalibrationStats.from_arrays(y, p))
        # the blocks and the tree ran in the worker processes
        assert ts.data and {t["worker"] for t in ts.data} <= ran_on
    # top-label with column chunks (merged), y_pred, and a NumPy y_true rechunked
    P = da.from_array(prob, chunks=(2500, 2))
    _assert_same(CalibrationStats.from_arrays(labels, P, n_bins=8),
                 CalibrationStats.from_arrays(labels, prob, n_bins=8))
    yp = da.from_array(labels[::-1].copy(), chunks=4000)
    _assert_same(CalibrationStats.from_arrays(labels, P, y_pred=yp, binning=[0, 0.3, 0.6, 1.0]),
                 CalibrationStats.from_arrays(labels, prob, y_pred=labels[::-1].copy(),
                                              binning=[0, 0.3, 0.6, 1.0]))


def test_dask_dataframe_on_the_cluster(client, data):
    y, p, prob, labels = data
    frame = pd.DataFrame({"y_true": y, "y_prob": p, "other": "x"})
    got = CalibrationStats.from_dataframe(dd.from_pandas(frame, npartitions=9), n_bins=12)
    _assert_same(got, CalibrationStats.from_arrays(y, p, n_bins=12))
    wide = pd.DataFrame({"y_true": labels, **{f"p_{j}": prob[:, j] for j in range(prob.shape[1])}})
    got = CalibrationStats.from_dataframe(dd.from_pandas(wide, npartitions=4))
    _assert_same(got, CalibrationStats.from_arrays(labels, prob))
    named = pd.DataFrame({"label": labels, "guess": labels[::-1], "conf": p})
    got = CalibrationStats.from_dataframe(
        dd.from_pandas(named, npartitions=3), y_true="label", y_prob="conf", y_pred="guess"
    )
    _assert_same(got, CalibrationStats.from_arrays(labels, p, y_pred=labels[::-1]))
    # pandas takes the same path without Dask, quantile bins included
    _assert_same(CalibrationStats.from_dataframe(frame, binning="quantile"),
                 CalibrationStats.from_arrays(y, p, binning="quantile"))


def test_errors_come_back_from_the_workers(client, data):
    y, p, _, _ = data
    bad = p.copy()
    bad[12_345] = 1.5
    message = r"dask array: y_prob must lie in \[0, 1\]; 1 value\(s\) \(row 12345: 1.5\)"
    with pytest.raises(ValueError, match=message):
        CalibrationStats.from_arrays(da.from_array(y, chunks=1000), da.from_array(bad, chunks=1000))
    frame = pd.DataFrame({"y_true": y, "y_prob": bad})
    with pytest.raises(ValueError, match=r"dask dataframe partition \d+: y_prob must lie in \[0, 1\]"):
        CalibrationStats.from_dataframe(dd.from_pandas(frame, npartitions=4))


def test_refusals(data):
    y, p, _, _ = data
    with pytest.raises(ValueError, match="binning='quantile' needs the global quantiles"):
        CalibrationStats.from_arrays(da.from_array(y), da.from_array(p), binning="quantile")
    with pytest.raises(ValueError, match="y_true has 20010 entries but y_prob has 20011"):
        CalibrationStats.from_arrays(da.from_array(y[:-1]), da.from_array(p))
    frame = pd.DataFrame({"y_true": y, "y_prob": p})
    with pytest.raises(ValueError, match="dataframe has no column"):
        CalibrationStats.from_dataframe(frame, y_prob="score")
    with pytest.raises(ValueError, match="no probability columns"):
        CalibrationStats.from_dataframe(frame.rename(columns={"y_prob": "s"}))
    with pytest.raises(ValueError, match="empty"):
        CalibrationStats.from_dataframe(dd.from_pandas(frame.iloc[:0], npartitions=1))


# ------------------------------------------------------ robustness #22, #23, #24
def test_from_dataframe_refuses_a_dict_by_name(data):
    """Robustness #22: a dict crashed with AttributeError (no attribute 'columns')."""
    y, p, _, _ = data
    with pytest.raises(ValueError, match=r"df must be a pandas or Dask DataFrame, got dict \(a dict "
                                         r"of columns: pass pandas.DataFrame\(df\)"):
        CalibrationStats.from_dataframe({"y_true": y, "y_prob": p})
    with pytest.raises(ValueError, match="got ndarray"):
        CalibrationStats.from_dataframe(np.c_[y, p])


def test_from_dataframe_with_integer_column_names(data):
    """Robustness #23: 'dataframe has no column(s) 0, 1 (found: y_true, 0, 1)'."""
    y, p, _, _ = data
    ref = CalibrationStats.from_arrays(y, np.c_[1 - p, p])
    frame = pd.DataFrame({"y_true": y, 0: 1 - p, 1: p})
    got = CalibrationStats.from_dataframe(frame, y_prob=[0, 1])
    assert np.array_equal(got.counts, ref.counts) and np.array_equal(got.sum_p, ref.sum_p)
    got = CalibrationStats.from_dataframe(dd.from_pandas(frame, npartitions=3), y_prob=[0, 1])
    assert np.array_equal(got.counts, ref.counts)
    numbered = pd.DataFrame({7: y, 3: p})
    got = CalibrationStats.from_dataframe(numbered, y_true=7, y_prob=3)
    assert np.array_equal(got.counts, CalibrationStats.from_arrays(y, p).counts)
    with pytest.raises(ValueError, match=r"dataframe has no column\(s\) 2 \(found: 'y_true', 0, 1\)"):
        CalibrationStats.from_dataframe(frame, y_prob=[0, 2])


def test_unknown_chunk_sizes_are_refused_with_the_remedy(data):
    """Robustness #24: 'y_true has nan entries but y_prob has nan; they must
    have the same length'."""
    y, p, _, _ = data
    dy, dp = da.from_array(y, chunks=5000), da.from_array(p, chunks=5000)
    keep = dp > 0.3
    with pytest.raises(ValueError, match=r"y_prob is a Dask array with unknown chunk sizes .* "
                                         r"y_prob.compute_chunk_sizes\(\)"):
        CalibrationStats.from_arrays(dy[keep], dp[keep])
    with pytest.raises(ValueError, match="y_true is a Dask array with unknown chunk sizes"):
        CalibrationStats.from_arrays(dy[keep], dp[keep].compute_chunk_sizes())
    got = CalibrationStats.from_arrays(dy[keep].compute_chunk_sizes(), dp[keep].compute_chunk_sizes())
    ref = CalibrationStats.from_arrays(y[p > 0.3], p[p > 0.3])
    assert np.array_equal(got.counts, ref.counts)
