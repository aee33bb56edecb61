"""The smooth model from CalibrationStats (bece.smooth.smooth_posterior_ece).

What is checked: fine statistics from one pass over arrays give draws
identical (same seed) to ``smooth_ece(..., grid=128)`` on the arrays, for
binary, top-label and quantile (explicit-edge) ECE bins; statistics added
over chunks, read from files in batches (bece.io.read_statistics) or reduced
by Dask give the same draws to float64 rounding; the documented bound on the
grid's ECE error holds draw by draw against the exact (one atom per
prediction) ECE of the same curve under the same bootstrap weights; bad input
raises ValueError naming the argument. Nothing here is stochastic beyond
fixed seeds: every comparison is deterministic, so no false alarms.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

import bece
from bece.stats.binning import make_binning
from bece.io.files import read_statistics
from bece.smooth.atoms import atoms_from_stats, fine_binning, make_atoms
from bece.smooth.fit import fit_smooth
from bece.smooth.posterior import smooth_ece, smooth_posterior_ece
from bece.stats.calibration_stats import CalibrationStats

from ..conftest import simulate_binary, simulate_multiclass

N = 20_000
S = 1500
# chunked sums differ from one pass by float64 rounding in another order;
# that moves the Newton modes by ~1e-13 and the draws by far less than this
RTOL = 1e-9


def _same(a, b):
    """Every array of two smooth results identical."""
    for name in ("draws", "accuracy", "confidence", "weight", "curve", "curve_grid",
                 "coefficients", "smoothness", "bin_sd"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert a.params.grid_error == b.params.grid_error and a.params.grid == b.params.grid == 128


def _close(a, b):
    for name in ("draws", "accuracy", "confidence", "weight", "curve"):
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=RTOL, atol=1e-12,
                                   err_msg=name)


@pytest.fixture(scope="module")
def binary():
    y, p = simulate_binary(N, np.random.default_rng(7), power=2.0)
    p[:5] = 1.0  # the top edge
    p[5:8] = 0.0
    return y, p, smooth_ece(y, p, n_bins=15, grid=128, num_samples=S, seed=3)


# ------------------------------------------------------------- fine bins
def test_fine_binning_by_hand():
    fine = fine_binning(15)
    assert fine.rule == "uniform" and fine.n_bins == 15 * 128
    assert fine == make_binning(None, 15 * 128, "uniform")
    assert fine_binning(4, grid=2) == make_binning(None, 8, "uniform")
    edges = fine_binning(binning=[0.0, 0.5, 0.9, 1.0], grid=2).edges
    np.testing.assert_allclose(edges, [0.0, 0.25, 0.5, 0.7, 0.9, 0.95, 1.0], rtol=0, atol=1e-15)
    # the ECE edges are among the fine edges as the same floats
    q = make_binning(np.random.default_rng(0).uniform(size=999), 10, "quantile").edges
    fe = fine_binning(binning=q, grid=128).edges
    np.testing.assert_array_equal(fe[::128], q)
    assert np.all(np.diff(fe) >= 0)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"binning": "quantile"}, "quantile.*edges"),
        ({"grid": 0}, "grid"),
        ({"grid": 2.5}, "grid"),
        ({"n_bins": 0}, "n_bins"),
        ({"binning": [0.0, 0.5, 0.4, 1.0]}, "binning edges"),
    ],
)
def test_fine_binning_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        fine_binning(**kwargs)


def test_atoms_from_stats_are_the_fine_cells():
    """Hand case: 2 ECE bins x 2 sub-cells, five predictions."""
    p = np.array([0.1, 0.2, 0.3, 0.6, 1.0])
    y = np.array([0, 1, 1, 0, 1])
    stats = CalibrationStats.from_arrays(y, p, binning=fine_binning(2, grid=2))
    at = atoms_from_stats(stats, n_bins=2)
    np.testing.assert_array_equal(at.trials, [2, 1, 1, 1])
    np.testing.assert_array_equal(at.successes, [1, 1, 0, 1])
    np.testing.assert_allclose(at.p, [0.15, 0.3, 0.6, 1.0])
    np.testing.assert_array_equal(at.bin, [0, 0, 1, 1])
    np.testing.assert_array_equal(at.lower, [0.0, 0.25, 0.5, 0.75])
    np.testing.assert_array_equal(at.upper, [0.25, 0.5, 0.75, 1.0])
    np.testing.assert_allclose(at.x, special.logit([0.15, 0.3, 0.6, 1 - 1e-6]))
    assert at.grid == 2 and not at.exact and at.binning == make_binning(None, 2)


def test_atoms_from_stats_equal_make_atoms(binary):
    y, p, _ = binary
    bins = make_binning(None, 15)
    a = make_atoms(y, p, bins, 128)
    b = atoms_from_stats(CalibrationStats.from_arrays(y, p, binning=fine_binning(15)), n_bins=15)
    for name in ("p", "x", "trials", "successes", "bin", "lower", "upper"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    # each atom sits in its ECE bin (the same bin the binned model uses)
    np.testing.assert_array_equal(b.bin, bins.index(b.lower))
    assert b.n == N


# ------------------------------------------------ same draws as the arrays
def test_binary_from_stats_equals_from_arrays(binary):
    y, p, ref = binary
    stats = CalibrationStats.from_arrays(y, p, binning=fine_binning(15))
    r = smooth_posterior_ece(stats, n_bins=15, num_samples=S, seed=3)
    _same(r, ref)
    direct = CalibrationStats.from_arrays(y, p, n_bins=15)
    np.testing.assert_array_equal(r.stats.counts, direct.counts)
    np.testing.assert_allclose(r.stats.sum_p, direct.sum_p, rtol=1e-12)
    assert r.stats.binning == direct.binning
    assert r.plugin == pytest.approx(ref.plugin, rel=1e-12, abs=1e-15)
    assert r.model == "smooth" and r.method == "laplace"
    # the public dispatch is the same function
    _same(bece.posterior_ece(stats, model="smooth", num_samples=S, seed=3), ref)


def test_top_label_from_stats_equals_from_arrays():
    y, prob = simulate_multiclass(10_000, 4, np.random.default_rng(11), temperature=1.5)
    ref = smooth_ece(y, prob, grid=128, num_samples=S, seed=5)
    stats = CalibrationStats.from_arrays(y, prob, binning=fine_binning(15))
    _same(smooth_posterior_ece(stats, num_samples=S, seed=5), ref)
    assert ref.stats.n == 10_000


def test_quantile_bins_through_their_edges(binary):
    y, p, _ = binary
    ref = smooth_ece(y, p, n_bins=10, binning="quantile", grid=128, num_samples=S, seed=2)
    edges = ref.stats.edges  # what a first pass over the confidences gives
    np.testing.assert_array_equal(edges, make_binning(p, 10, "quantile").edges)
    stats = CalibrationStats.from_arrays(y, p, binning=fine_binning(binning=edges))
    _same(smooth_posterior_ece(stats, binning=edges, num_samples=S, seed=2), ref)
    with pytest.raises(ValueError, match="quantile.*edges"):
        smooth_posterior_ece(stats, n_bins=10, binning="quantile")


# ------------------------------------------------ chunks, files and Dask
def test_chunked_sum_gives_the_same_draws(binary):
    y, p, ref = binary
    fine = fine_binning(15)
    cuts = [0, 1234, 9000, 9001, 17_000, N]
    parts = [CalibrationStats.from_arrays(y[a:b], p[a:b], binning=fine)
             for a, b in zip(cuts[:-1], cuts[1:])]
    _close(smooth_posterior_ece(sum(parts[::-1]), num_samples=S, seed=3), ref)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_files_read_in_batches_give_the_same_draws(binary, tmp_path, suffix):
    import pandas as pd

    y, p, ref = binary
    path = tmp_path / f"pred{suffix}"
    df = pd.DataFrame({"y_true": y, "y_prob": p})
    df.to_csv(path, index=False) if suffix == ".csv" else df.to_parquet(path)
    fs = read_statistics(path, binning=fine_binning(15), batch_size=3000)
    assert fs.stats.n == N and fs.kind == "binary"
    # CSV: pandas writes the shortest repr, which reads back as the same float64
    _close(smooth_posterior_ece(fs.stats, num_samples=S, seed=3), ref)


def test_dask_statistics_give_the_same_draws(binary):
    da = pytest.importorskip("dask.array")
    dd = pytest.importorskip("dask.dataframe")
    import dask
    import pandas as pd

    y, p, ref = binary
    fine = fine_binning(15)
    with dask.config.set(scheduler="synchronous"):
        s_arr = CalibrationStats.from_arrays(da.from_array(y, chunks=3000),
                                             da.from_array(p, chunks=3000), binning=fine)
        frame = dd.from_pandas(pd.DataFrame({"y_true": y, "y_prob": p}), npartitions=5)
        s_df = CalibrationStats.from_dataframe(frame, binning=fine)
    np.testing.assert_array_equal(s_arr.counts, s_df.counts)
    _close(smooth_posterior_ece(s_arr, num_samples=S, seed=3), ref)
    _close(bece.posterior_ece(s_df, model="smooth", num_samples=S, seed=3), ref)


# ------------------------------------------------------- the error bound
def test_grid_error_bound_holds_draw_by_draw():
    """Module docstring, "Large n": for a curve draw s and exact bootstrap
    weights w_i, the fine-grid ECE (cell totals W_g = sum of w_i over the
    cell, cell means p_g) differs from the exact ECE by at most
    sum_g W_g (h_g + |s(u_g) - s(l_g)|). Checked for 200 posterior curve
    draws against a direct computation on the 20,000 predictions."""
    rng = np.random.default_rng(1)
    y, p = simulate_binary(N, rng, power=2.0)
    bins = make_binning(None, 15)
    at = atoms_from_stats(CalibrationStats.from_arrays(y, p, binning=fine_binning(15)))
    post = fit_smooth(at)
    beta = post.sample(200, rng)[0]
    basis = post.basis
    from bece.smooth.basis import logit_confidence

    b_exact = bins.index(p)
    s_exact = special.expit(basis.logits(logit_confidence(p), b_exact, beta))
    s_grid = special.expit(basis.logits(at.x, at.bin, beta))
    osc = np.abs(special.expit(basis.logits(logit_confidence(at.upper), at.bin, beta))
                 - special.expit(basis.logits(logit_confidence(at.lower), at.bin, beta)))
    h = at.upper - at.lower
    # which atom each prediction's cell is (the atoms are the non-empty cells in order)
    cell = np.minimum((p * 15 * 128).astype(np.int64), 15 * 128 - 1)
    atom = np.searchsorted(np.round(at.lower * 15 * 128).astype(np.int64), cell)
    assert np.array_equal(np.round(at.lower[atom] * 1920).astype(np.int64), cell)
    worst = 0.0
    for k in range(beta.shape[0]):
        w = rng.standard_exponential(N)
        w /= w.sum()
        exact = np.abs(np.bincount(b_exact, weights=w * (s_exact[k] - p), minlength=15)).sum()
        W = np.bincount(atom, weights=w, minlength=at.p.size)
        grid = np.abs(np.bincount(at.bin, weights=W * (s_grid[k] - at.p), minlength=15)).sum()
        bound = np.sum(W * (h + osc[k]))
        assert abs(grid - exact) <= bound
        worst = max(worst, bound)
    # about 2h = 2 / (128 * 15) = 1.04e-3 for a curve near the diagonal
    assert worst < 2.5e-3
    r = smooth_posterior_ece(CalibrationStats.from_arrays(y, p, binning=fine_binning(15)),
                             num_samples=S, seed=0)
    assert 0 < r.params.grid_error < 2.5e-3


# ------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "make, kwargs, match",
    [
        (lambda y, p: np.zeros((2, 1920)), {}, "stats must be a CalibrationStats"),
        (lambda y, p: CalibrationStats.from_arrays(y, p, n_bins=100), {"n_bins": 15},
         "100 uniform bins of stats do not refine the 15"),
        (lambda y, p: CalibrationStats.from_arrays(y, p, n_bins=15), {"binning": [0.0, 0.55, 1.0]},
         r"ECE edge\(s\) \[0.55\]"),
        (lambda y, p: CalibrationStats.from_arrays(y, p, binning=[0.0, 0.5, 0.75, 1.0]),
         {"n_bins": 3}, r"do not refine"),
        (lambda y, p: CalibrationStats.from_arrays(y, p, binning=fine_binning(15)),
         {"n_bins": 0}, "n_bins"),
        (lambda y, p: CalibrationStats.from_arrays(y, p, binning=fine_binning(15)),
         {"binning": "spline"}, "binning"),
        (lambda y, p: CalibrationStats.from_arrays(y, p, binning=fine_binning(15)),
         {"num_samples": 0}, "num_samples"),
        (lambda y, p: CalibrationStats.from_arrays(y, p, binning=fine_binning(15)),
         {"seed": -1}, "seed"),
        (lambda y, p: CalibrationStats.from_arrays(y, p, binning=fine_binning(15)),
         {"bin_scale": 0.0}, "bin_scale"),
        (lambda y, p: CalibrationStats(fine_binning(15), np.zeros((2, 1920)), np.zeros(1920),
                                       np.zeros(1920)), {}, "no predictions"),
    ],
)
def test_bad_input_names_the_argument(make, kwargs, match):
    y, p = simulate_binary(500, np.random.default_rng(3))
    with pytest.raises(ValueError, match=match):
        smooth_posterior_ece(make(y, p), **kwargs)


def test_posterior_ece_dispatch_refuses_mixed_options():
    y, p = simulate_binary(500, np.random.default_rng(3))
    fine = CalibrationStats.from_arrays(y, p, binning=fine_binning(15))
    with pytest.raises(ValueError, match="alpha"):
        bece.posterior_ece(fine, model="smooth", alpha=1.0)
    with pytest.raises(ValueError, match="n_bins belong"):
        bece.posterior_ece(fine, n_bins=15)
    with pytest.raises(ValueError, match="'binned' or 'smooth'"):
        bece.posterior_ece(fine, model="spline")
    with pytest.raises(ValueError, match="stats must be a CalibrationStats"):
        bece.posterior_ece([0.1, 0.2], model="smooth")
    # the binned model on fine statistics is the binned model in 1920 bins
    assert bece.posterior_ece(fine, num_samples=10).stats.n_bins == 1920


def test_jax_array_statistics_give_the_same_draws():
    """Statistics reduced on a JAX device (here the CPU) in fine bins: the
    same counts as NumPy on the same float32 confidences, and the same draws
    (checked on an H200 too, at n = 10^7: identical)."""
    jnp = pytest.importorskip("jax.numpy")
    y, p = simulate_binary(N, np.random.default_rng(5), power=2.0)
    p32 = p.astype(np.float32)
    fine = fine_binning(15)
    s_dev = CalibrationStats.from_arrays(jnp.asarray(y.astype(np.int32)), jnp.asarray(p32),
                                         binning=fine)
    s_host = CalibrationStats.from_arrays(y, p32.astype(np.float64), binning=fine)
    np.testing.assert_array_equal(s_dev.counts, s_host.counts)
    ref = smooth_ece(y, p32.astype(np.float64), grid=128, num_samples=S, seed=6)
    _close(smooth_posterior_ece(s_dev, num_samples=S, seed=6), ref)
