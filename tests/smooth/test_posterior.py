"""bece._smooth.posterior: the smooth model's ECE posterior from arrays
(smooth_ece) and from CalibrationStats (smooth_posterior_ece).

From arrays: the result's draws, curve and ArviZ layer, seeds, bad options,
the fine-grid path against the exact one, and coverage on known truths.
Stochastic tests state their false-alarm rates: Z = 5 standard errors for
Monte Carlo comparisons (5.7e-7 each, two-sided); the coverage test's
binomial bound is computed from the binomial distribution at the nominal
coverage 0.9 (below).

From statistics: fine statistics from one pass over arrays give draws
identical (same seed) to ``smooth_ece(..., grid=128)`` on the arrays, for
binary, top-label and quantile (explicit-edge) ECE bins; statistics added
over chunks, read from files in batches (bece.io.read_statistics) or reduced
by Dask give the same draws to float64 rounding; the documented bound on the
grid's ECE error holds draw by draw against the exact (one atom per
prediction) ECE of the same curve under the same bootstrap weights; bad input
raises ValueError naming the argument. These comparisons are deterministic
(fixed seeds), so they have no false alarms.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy import special

import bece
from bece._smooth.atoms import atoms_from_stats
from bece._smooth.fit import fit_smooth
from bece._smooth.posterior import smooth_ece
from bece._stats import CalibrationStats, make_binning
from bece.io import read_statistics
from bece.smooth import fine_binning, smooth_posterior_ece

from ..conftest import _data, simulate_binary, simulate_multiclass
from .conftest import N, S

Z = 5.0


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


# ---------------------------------------------------------------- results
def test_top_label_input_is_the_outcome_confidence_pair(rng):
    logits = rng.normal(size=(500, 4)) * 2
    prob = special.softmax(logits, axis=1)
    y = np.array([rng.choice(4, p=row) for row in special.softmax(1.5 * logits, axis=1)])
    conf, correct = prob.max(axis=1), (prob.argmax(axis=1) == y).astype(int)
    a = smooth_ece(y, prob, num_samples=300, seed=2)
    b = smooth_ece(correct, conf, num_samples=300, seed=2)
    np.testing.assert_array_equal(a.draws, b.draws)
    c = smooth_ece(y, conf, y_pred=prob.argmax(axis=1), num_samples=300, seed=2)
    np.testing.assert_array_equal(a.draws, c.draws)


def test_inference_data_holds_the_curve(rng):
    z, p = _data(300, rng)
    r = smooth_ece(z, p, num_samples=200, seed=0)
    idata = r.to_inference_data()
    post = idata.posterior
    assert post["curve"].shape == (1, 200, r.curve_grid.size)
    np.testing.assert_allclose(post["curve_confidence"].values, r.curve_grid)
    for name in ("ece", "accuracy", "intercept", "slope", "smoothness", "bin_sd"):
        assert name in post
    assert post.attrs["model"] == "smooth" and np.isfinite(post.attrs["log_bayes_factor_calibrated"])
    assert np.all((r.curve > 0) & (r.curve < 1))
    assert "smooth" in repr(r)


def test_same_seed_same_draws_and_generator_seed(rng):
    z, p = _data(200, rng)
    a = smooth_ece(z, p, num_samples=300, seed=7)
    b = smooth_ece(z, p, num_samples=300, seed=7)
    c = smooth_ece(z, p, num_samples=300, seed=np.random.default_rng(7))
    np.testing.assert_array_equal(a.draws, b.draws)
    assert c.draws.shape == (300,)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"grid": "fine"}, "grid"),
        ({"grid": 0}, "grid"),
        ({"n_knots": 0}, "n_knots"),
        ({"smoothness_scale": 0.0}, "smoothness_scale"),
        ({"bin_scale": float("nan")}, "bin_scale"),
        ({"slope_scale": True}, "slope_scale"),
        ({"intercept_scale": -1}, "intercept_scale"),
        ({"num_samples": 0}, "num_samples"),
        ({"seed": -1}, "seed"),
    ],
)
def test_bad_options_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        smooth_ece([0, 1, 1], [0.2, 0.7, 0.9], **kwargs)


def test_bad_data_and_binned_options_raise():
    with pytest.raises(ValueError, match="y_prob contains NaN"):
        smooth_ece([0, 1], [0.2, np.nan])
    with pytest.raises(ValueError, match="same length"):
        smooth_ece([0, 1, 1], [0.2, 0.4])
    with pytest.raises(ValueError, match="alpha"):
        bece.bayesian_ece([0, 1], [0.2, 0.4], model="smooth", alpha=1.0)
    with pytest.raises(ValueError, match="model must be one of .*'smooth'.*got 'spline'"):
        bece.bayesian_ece([0, 1], [0.2, 0.4], model="spline")
    with pytest.raises(ValueError, match="sigma"):
        bece.cross_check([0, 1], [0.2, 0.4], model="smooth", sigma=0.1)


def test_few_distinct_confidences_give_a_linear_curve():
    r = smooth_ece([0, 1, 1, 0, 1, 1], [0.3, 0.3, 0.8, 0.8, 0.8, 0.3], num_samples=200)
    assert r.params.basis.n_spline == 0 and np.isfinite(r.draws).all()


def test_fast_path_does_not_import_jax():
    # ArviZ 1.x (arviz_base) registers jax and numpyro as lazy modules, which
    # load on first use: only a module of the plain module type was imported
    code = ("import sys, types, numpy as np, bece\n"
            "p = np.linspace(0.01, 0.99, 300); y = (np.arange(300) % 3 == 0)\n"
            "bece.bayesian_ece(y, p, model='smooth', num_samples=100)\n"
            "print(sorted(m for m in ('jax', 'numpyro') if m in sys.modules\n"
            "             and type(sys.modules[m]) is types.ModuleType))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ---------------------------------------------------------- large n, grid
def test_grid_path_agrees_with_the_exact_path(rng):
    """The fine-grid posterior mean equals the exact one within the grid's
    bound plus Z Monte Carlo standard errors (independent draws)."""
    z, p = _data(8000, rng)
    exact = smooth_ece(z, p, grid=None, num_samples=3000, seed=1)
    fine = smooth_ece(z, p, grid=128, num_samples=3000, seed=2)
    assert 0 < fine.params.grid_error < 5e-4 and exact.params.grid_error == 0
    se = np.hypot(exact.std, fine.std) / np.sqrt(3000)
    assert abs(exact.mean - fine.mean) <= fine.params.grid_error + Z * se
    assert abs(exact.std - fine.std) <= 0.1 * exact.std


def test_a_million_predictions_take_seconds(rng):
    z, p = _data(1_000_000, rng)
    import time

    t = time.perf_counter()
    r = smooth_ece(z, p, num_samples=2000, seed=0)
    assert time.perf_counter() - t < 30  # about 2 s on an idle core
    # the population ECE of p^1.5 under U(0, 1) is 1/2 - 1/2.5 = 0.1 (Z sd)
    assert abs(r.mean - 0.1) <= Z * r.std
    assert abs(r.mean - r.plugin) <= r.std and r.params.grid_error < 5e-4


# --------------------------------------------------------------- coverage
def _coverage(reps, n, power, seed):
    truth = 0.5 - 1.0 / (power + 1.0)  # p - p^d > 0 in every bin: binned = unbinned ECE
    covered, means, plugins = 0, [], []
    for r in range(reps):
        g = np.random.default_rng([seed, r])
        z, p = _data(n, g, power)
        res = smooth_ece(z, p, num_samples=1000, seed=g)
        lo, hi = res.interval(0.9)
        covered += lo <= truth <= hi
        means.append(res.mean - truth)
        plugins.append(res.plugin - truth)
    return covered, np.array(means), np.array(plugins)


def test_coverage_on_a_known_truth_small():
    """25 data sets of n = 300 from p ~ U(0, 1), P(y=1|p) = p^1.5 (ECE = 0.1
    exactly). With coverage at its nominal 0.9, P(covered <= 17) = 0.0023
    (binomial): the false-alarm rate. The full study is the slow test below."""
    covered, _, _ = _coverage(25, 300, 1.5, 0)
    assert covered >= 18


@pytest.mark.slow
def test_coverage_and_bias_on_known_truths():
    """200 data sets per case. Coverage: P(Binomial(200, 0.9) <= 166) = 7e-4
    at nominal coverage; we ask for >= 167 (0.835). Bias: the smooth posterior
    mean's bias is at most half the plug-in's plus Z standard errors."""
    for n, power in ((300, 1.25), (1000, 1.25), (300, 1.5)):
        covered, bias, plug = _coverage(200, n, power, 1)
        assert covered >= 167, (n, power, covered)
        se = bias.std() / np.sqrt(bias.size)
        assert abs(bias.mean()) <= 0.5 * abs(plug.mean()) + Z * se, (n, power)


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
    sum_g W_g (|s'(p_g) - 1| d_g + K_g d_g^2 / 2) (bece._smooth.grid_error).
    Checked for 200 posterior curve draws against a direct computation on
    the 20,000 predictions (piled at 0 and 1: tests/smooth/test_grid_error.py)."""
    rng = np.random.default_rng(1)
    y, p = simulate_binary(N, rng, power=2.0)
    bins = make_binning(None, 15)
    at = atoms_from_stats(CalibrationStats.from_arrays(y, p, binning=fine_binning(15)))
    post = fit_smooth(at)
    beta = post.sample(200, rng)[0]
    basis = post.basis
    from bece._smooth.basis import logit_confidence
    from bece._smooth.grid_error import CellCurve, draw_bounds

    b_exact = bins.index(p)
    s_exact = special.expit(basis.logits(logit_confidence(p), b_exact, beta))
    f_grid = basis.logits(at.x, at.bin, beta)
    s_grid = special.expit(f_grid)
    cells = CellCurve(at, basis)
    # which atom each prediction's cell is (the atoms are the non-empty cells in order)
    atom = np.searchsorted(at.lower, p, side="right") - 1
    assert np.all((at.lower[atom] <= p) & (p <= at.upper[atom]))
    worst = 0.0
    for k in range(beta.shape[0]):
        w = rng.standard_exponential(N)
        w /= w.sum()
        exact = np.abs(np.bincount(b_exact, weights=w * (s_exact[k] - p), minlength=15)).sum()
        W = np.bincount(atom, weights=w, minlength=at.p.size)
        grid = np.abs(np.bincount(at.bin, weights=W * (s_grid[k] - at.p), minlength=15)).sum()
        bound = draw_bounds(cells, basis, beta[k:k + 1], f_grid[k:k + 1], W[None])[0]
        assert abs(grid - exact) <= bound
        worst = max(worst, bound)
    # about E|s' - 1| h / 2 = 0.5 / (2 * 1920) = 1.3e-4 for this curve (s = p^2: |s' - 1| <= 1)
    assert worst < 5e-4
    r = smooth_posterior_ece(CalibrationStats.from_arrays(y, p, binning=fine_binning(15)),
                             num_samples=S, seed=0)
    assert 0 < r.params.grid_error < 5e-4


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
        (lambda y, p: CalibrationStats(fine_binning(15), np.zeros((2, fine_binning(15).n_bins)),
                                       np.zeros(fine_binning(15).n_bins),
                                       np.zeros(fine_binning(15).n_bins)), {}, "no predictions"),
    ],
)
def test_bad_input_names_the_argument(make, kwargs, match):
    y, p = simulate_binary(500, np.random.default_rng(3))
    with pytest.raises(ValueError, match=match):
        smooth_posterior_ece(make(y, p), **kwargs)


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


def test_readme_recipe_for_chunked_quantile_statistics_with_tied_confidences():
    """Robustness #2: with 20% of the confidences at 1.0 the quantile edges
    coincide, and bece refused its own edges as binning=edges (the README's
    recipe: compute the edges, pass them to fine_binning and posterior_ece)."""
    from bece import CalibrationStats
    from bece.smooth import fine_binning

    rng = np.random.default_rng(3)
    n = 6000
    p = rng.uniform(size=n)
    p[rng.uniform(size=n) < 0.2] = 1.0
    y = (rng.uniform(size=n) < p**1.3).astype(int)
    edges = make_binning(p, 15, "quantile").edges
    assert (np.diff(edges) == 0).any()
    fine = fine_binning(15, edges)
    whole = bece.bayesian_ece(y, p, model="smooth", binning="quantile", num_samples=500, seed=0)
    one = CalibrationStats.from_arrays(y, p, binning=fine)
    r = bece.posterior_ece(one, model="smooth", binning=edges, num_samples=500, seed=0)
    assert np.array_equal(r.draws, whole.draws)
    chunks = sum(CalibrationStats.from_arrays(y[i:i + 1000], p[i:i + 1000], binning=fine)
                 for i in range(0, n, 1000))
    r = bece.posterior_ece(chunks, model="smooth", binning=edges, num_samples=500, seed=0)
    np.testing.assert_allclose(r.draws, whole.draws, rtol=1e-9, atol=1e-12)
