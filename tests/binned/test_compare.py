"""bece._binned.compare: joint counts, the joint prior, marginals, an independent
sampler, and frequentist behaviour of the paired interval on simulations."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from scipy import integrate, special, stats

import bece
from bece import bayesian_ece
from bece._binned.compare import binned_compare as compare
from bece._binned.compare import joint_concentration, joint_counts
from bece._results import Comparison
from bece._stats import CalibrationStats

from ..conftest import simulate_multiclass

KS_ALPHA = 1e-3  # each KS / z check below has false-alarm rate 0.1%


def _binary(n, rng):
    t = rng.uniform(size=n)
    y = (rng.uniform(size=n) < t).astype(np.int64)
    return t, y


# ------------------------------------------------------------- joint counts
def test_joint_counts_hand_case():
    y = [1, 0, 1, 1]
    pa = [0.9, 0.8, 0.2, 0.6]  # bins (M=2): 1, 1, 0, 1
    pb = [0.7, 0.3, 0.4, 0.9]  # bins:       1, 0, 0, 1
    c = compare(y, pa, pb, n_bins=2, num_samples=10)
    expected = np.zeros((2, 2, 2, 2), dtype=np.int64)
    expected[1, 1, 1, 1] = 2  # examples 0 and 3
    expected[0, 1, 0, 0] = 1  # example 1
    expected[1, 0, 1, 0] = 1  # example 2
    np.testing.assert_array_equal(c.counts, expected)
    assert c.counts.dtype == np.int64


def test_joint_counts_match_a_loop_and_the_marginal_stats(rng):
    y, prob_a = simulate_multiclass(400, 4, rng)
    prob_b = rng.dirichlet(np.ones(4), size=400)
    c = compare(y, prob_a, prob_b, n_bins=6, num_samples=10)
    loop = np.zeros((2, 6, 2, 6), dtype=np.int64)
    for i in range(400):
        ka, kb = prob_a[i].argmax(), prob_b[i].argmax()
        ba = min(int(prob_a[i, ka] * 6), 5)
        bb = min(int(prob_b[i, kb] * 6), 5)
        loop[int(ka == y[i]), ba, int(kb == y[i]), bb] += 1
    np.testing.assert_array_equal(c.counts, loop)
    sa = CalibrationStats.from_arrays(y, prob_a, n_bins=6)
    sb = CalibrationStats.from_arrays(y, prob_b, n_bins=6)
    np.testing.assert_array_equal(c.counts.sum(axis=(2, 3)), sa.counts)
    np.testing.assert_array_equal(c.counts.sum(axis=(0, 1)), sb.counts)
    np.testing.assert_array_equal(c.a.stats.counts, sa.counts)
    np.testing.assert_array_equal(c.b.stats.counts, sb.counts)
    assert c.a.plugin == bece.expected_calibration_error(y, prob_a, n_bins=6)
    assert c.b.plugin == bece.expected_calibration_error(y, prob_b, n_bins=6)


def test_joint_counts_function_directly():
    # two examples, M_a = 2, M_b = 3: cells (z_a, b_a, z_b, b_b) = (1,0,0,2) and (0,1,1,0)
    out = joint_counts(np.array([0, 1]), np.array([1, 0]), np.array([2, 0]), np.array([0, 1]), 2, 3)
    assert out.shape == (2, 2, 2, 3) and out.sum() == 2
    assert out[1, 0, 0, 2] == 1 and out[0, 1, 1, 0] == 1


# ------------------------------------------------------------- the joint prior
def test_joint_prior_has_bayesian_ece_marginals():
    m = 7
    alpha = np.full((2, m), 1 / (2 * m))
    joint = joint_concentration(alpha, alpha)
    np.testing.assert_allclose(joint, 1 / (4 * m * m), rtol=1e-15)
    np.testing.assert_allclose(joint.sum(axis=(2, 3)), alpha, rtol=1e-14)
    np.testing.assert_allclose(joint.sum(axis=(0, 1)), alpha, rtol=1e-14)
    assert joint.sum() == pytest.approx(1.0, rel=1e-14)
    # a non-uniform alpha of equal total weight
    rng = np.random.default_rng(0)
    a = rng.uniform(0.1, 1, size=(2, m))
    b = rng.uniform(0.1, 1, size=(2, 4))
    b *= a.sum() / b.sum()
    j = joint_concentration(a, b)
    np.testing.assert_allclose(j.sum(axis=(2, 3)), a, rtol=1e-13)
    np.testing.assert_allclose(j.sum(axis=(0, 1)), b, rtol=1e-13)
    with pytest.raises(ValueError, match="different total prior weights"):
        joint_concentration(a, 2 * b)


def test_default_prior_concentration_stored():
    rng = np.random.default_rng(1)
    t, y = _binary(300, rng)
    c = compare(y, t, t**2, n_bins=5, num_samples=10)
    np.testing.assert_allclose(c.concentration, 1 / 100, rtol=1e-15)
    c2 = compare(y, t, t**2, n_bins=5, num_samples=10, alpha=0.5)
    np.testing.assert_allclose(c2.concentration.sum(axis=(2, 3)), 0.5, rtol=1e-14)


# ------------------------------------------------------------- marginals
def test_each_marginal_is_the_bayesian_ece_posterior():
    """KS two-sample tests of compare's marginal ECE draws against
    bayesian_ece's on the same data (independent seeds); false-alarm rate
    0.1% per test (two tests: 0.2%). The Dirichlet aggregation property
    makes them equal in law."""
    rng = np.random.default_rng(2)
    t, y = _binary(600, rng)
    pa, pb = t**0.8, np.clip(t + 0.1, 0, 1)
    s = 4000
    c = compare(y, pa, pb, n_bins=8, num_samples=s, seed=3)
    for mine, p in ((c.a, pa), (c.b, pb)):
        ref = bayesian_ece(y, p, n_bins=8, num_samples=s, seed=4, model="binned")
        assert stats.ks_2samp(mine.draws, ref.draws).pvalue > KS_ALPHA
        assert mine.plugin == ref.plugin
    # mean bin mass: E[pi_m] = (2 alpha + n_m) / (1 + n), exact for the Dirichlet
    n_m = c.a.stats.bin_counts
    expect = (2 / 16 + n_m) / (1 + 600)
    mc_se = c.a.weight.std(axis=0, ddof=1) / np.sqrt(s)
    z = (c.a.weight.mean(axis=0) - expect) / mc_se
    assert np.all(np.abs(z) < stats.norm.isf(KS_ALPHA / 2 / 8))  # Bonferroni over 8 bins


def _naive_compare(y, pa, pb, m, s, rng, alpha_cell):
    """A loop implementation: numpy's Dirichlet over the flattened joint cells,
    scipy's truncnorm for the bin means, ECE summed bin by bin."""
    n = len(y)
    ba = np.minimum((pa * m).astype(int), m - 1)
    bb = np.minimum((pb * m).astype(int), m - 1)
    counts = np.zeros((2, m, 2, m))
    for i in range(n):
        counts[y[i], ba[i], y[i], bb[i]] += 1
    conc = (counts + alpha_cell).ravel()
    edges = np.linspace(0, 1, m + 1)
    w = 1 / m
    sd = w / np.sqrt(12)

    def mu_draws(p, b):
        out = np.empty((s, m))
        for k in range(m):
            sel = p[b == k]
            prec = 1 / sd**2 + sel.size / sd**2
            mean = ((edges[k] + w / 2) / sd**2 + sel.sum() / sd**2) / prec
            scale = np.sqrt(1 / prec)
            lo, hi = (edges[k] - mean) / scale, (edges[k + 1] - mean) / scale
            out[:, k] = stats.truncnorm.rvs(lo, hi, loc=mean, scale=scale, size=s, random_state=rng)
        return out

    mu_a, mu_b = mu_draws(pa, ba), mu_draws(pb, bb)
    diff = np.empty(s)
    for j in range(s):
        q = rng.dirichlet(conc).reshape(2, m, 2, m)
        qa, qb = q.sum(axis=(2, 3)), q.sum(axis=(0, 1))
        ea = sum(abs(qa[1, k] - (qa[0, k] + qa[1, k]) * mu_a[j, k]) for k in range(m))
        eb = sum(abs(qb[1, k] - (qb[0, k] + qb[1, k]) * mu_b[j, k]) for k in range(m))
        diff[j] = ea - eb
    return diff


def test_difference_matches_a_naive_implementation():
    """KS two-sample test of the paired difference against a loop with
    numpy's Dirichlet and scipy's truncnorm, plus a z-test on the mean;
    false-alarm rate 0.1% each."""
    rng = np.random.default_rng(5)
    t, y = _binary(300, rng)
    pa, pb = t**0.7, t**1.3
    m, s = 5, 3000
    c = compare(y, pa, pb, n_bins=m, num_samples=s, seed=6)
    ref = _naive_compare(y, pa, pb, m, s, np.random.default_rng(7), 1 / (4 * m * m))
    assert stats.ks_2samp(c.diff_draws, ref).pvalue > KS_ALPHA
    se = np.sqrt(c.diff_draws.var(ddof=1) / s + ref.var(ddof=1) / s)
    assert abs(c.mean - ref.mean()) < stats.norm.isf(KS_ALPHA / 2) * se


# ------------------------------------------------------------- summaries
def test_summaries_are_those_of_the_draws():
    rng = np.random.default_rng(8)
    t, y = _binary(500, rng)
    c = compare(y, t, t**0.6, n_bins=10, num_samples=3000, seed=9)
    d = c.a.draws - c.b.draws
    np.testing.assert_array_equal(c.diff_draws, d)
    assert c.prob_a_better == np.mean(d < 0)
    assert c.interval(0.8) == tuple(np.quantile(d, [0.1, 0.9]))
    assert c.mean == np.mean(d) and c.std == np.std(d, ddof=1)
    lo, hi = c.hdi(0.9)
    assert lo < hi and hi - lo <= (c.interval(0.9)[1] - c.interval(0.9)[0]) + 1e-12
    assert "prob_a_better" in repr(c) and isinstance(c, Comparison)
    with pytest.raises(ValueError, match="prob must be a number in"):
        c.interval(1.5)
    with pytest.raises(Exception):
        c.diff_draws[0] = 1.0  # read-only


def test_inference_data_layout():
    rng = np.random.default_rng(10)
    t, y = _binary(200, rng)
    c = compare(y, t, t**2, n_bins=4, num_samples=500, seed=0)
    idata = c.to_inference_data()
    post = idata.posterior
    assert set(post.data_vars) >= {"ece_a", "ece_b", "ece_diff", "accuracy_a", "weight_b"}
    np.testing.assert_array_equal(post["ece_diff"].values[0], c.diff_draws)
    assert post["accuracy_a"].dims == ("chain", "draw", "bin_a")
    np.testing.assert_array_equal(idata.constant_data["joint_counts"].values, c.counts)
    assert post.attrs["prob_a_better"] == c.prob_a_better
    table = c.summary(kind="stats")
    assert list(table.index) == ["ece_a", "ece_b", "ece_diff"]


def test_same_seed_same_draws_and_generator_accepted():
    rng = np.random.default_rng(11)
    t, y = _binary(300, rng)
    c1 = compare(y, t, t**2, num_samples=700, seed=5)
    c2 = compare(y, t, t**2, num_samples=700, seed=5)
    c3 = compare(y, t, t**2, num_samples=700, seed=np.random.default_rng(5))
    np.testing.assert_array_equal(c1.diff_draws, c2.diff_draws)
    np.testing.assert_array_equal(c1.diff_draws, c3.diff_draws)
    assert not np.array_equal(c1.diff_draws, compare(y, t, t**2, num_samples=700, seed=6).diff_draws)


def test_chunked_sampling_equals_one_chunk(monkeypatch):
    """The chunk size only changes memory, not the law; with one Generator the
    draws are the same stream split differently, so compare summaries within
    Monte Carlo error (z-test, false-alarm rate 0.1%)."""
    bc = importlib.import_module("bece._binned.compare")  # bece.compare may be the function

    rng = np.random.default_rng(12)
    t, y = _binary(400, rng)
    big = compare(y, t, t**2, n_bins=6, num_samples=3000, seed=1)
    monkeypatch.setattr(bc, "_CHUNK_VALUES", 144 * 7)  # 7 draws per chunk
    small = compare(y, t, t**2, n_bins=6, num_samples=3000, seed=2)
    se = np.sqrt(big.diff_draws.var() / 3000 + small.diff_draws.var() / 3000)
    assert abs(big.mean - small.mean) < stats.norm.isf(KS_ALPHA / 2) * se
    assert stats.ks_2samp(big.diff_draws, small.diff_draws).pvalue > KS_ALPHA


def test_identical_models_give_a_symmetric_narrow_difference():
    """Same predictions twice: the joint law is exchangeable in (A, B), so
    P(ECE_a < ECE_b) = 1/2 exactly in law; checked within 3.29 Monte Carlo
    standard errors (false-alarm rate 0.1%). The interval holds 0 and is
    far narrower than from two independent posteriors."""
    rng = np.random.default_rng(13)
    t, y = _binary(1000, rng)
    p = t**0.8
    s = 10_000
    c = compare(y, p, p, num_samples=s, seed=1)
    assert abs(c.prob_a_better - 0.5) < 3.29 * np.sqrt(0.25 / s)
    lo, hi = c.interval(0.9)
    assert lo < 0 < hi
    ind = (bayesian_ece(y, p, num_samples=s, seed=2, model="binned").draws
           - bayesian_ece(y, p, num_samples=s, seed=3, model="binned").draws)
    ind_lo, ind_hi = np.quantile(ind, [0.05, 0.95])
    assert (hi - lo) < 0.25 * (ind_hi - ind_lo)


def test_top_label_and_triples_inputs(rng):
    y, prob_a = simulate_multiclass(300, 3, rng)
    prob_b = simulate_multiclass(300, 3, rng, temperature=2.0)[1]
    c = compare(y, prob_a, prob_b, n_bins=5, num_samples=200)
    assert c.a.stats.counts.tolist() == CalibrationStats.from_arrays(y, prob_a, n_bins=5).counts.tolist()
    # triples: the confidence of given predicted labels
    ya, yb = prob_a.argmax(1), prob_b.argmax(1)
    ct = compare(y, prob_a.max(1), prob_b.max(1), y_pred_a=ya, y_pred_b=yb, n_bins=5, num_samples=200)
    np.testing.assert_array_equal(ct.counts, c.counts)


def test_quantile_binning_gives_each_model_its_own_edges():
    rng = np.random.default_rng(14)
    t, y = _binary(500, rng)
    c = compare(y, t, t**3, n_bins=5, binning="quantile", num_samples=100)
    np.testing.assert_allclose(c.a.stats.edges[1:-1], np.quantile(t, [0.2, 0.4, 0.6, 0.8]))
    np.testing.assert_allclose(c.b.stats.edges[1:-1], np.quantile(t**3, [0.2, 0.4, 0.6, 0.8]))
    assert c.a.stats.bin_counts.tolist() == [100] * 5


def test_progress_bar_goes_to_stderr(capsys, monkeypatch):
    bc = importlib.import_module("bece._binned.compare")  # bece.compare may be the function

    monkeypatch.setattr(bc, "_CHUNK_VALUES", 400)
    rng = np.random.default_rng(15)
    t, y = _binary(100, rng)
    c = compare(y, t, t**2, n_bins=5, num_samples=300, progress=True)
    out, _ = capsys.readouterr()
    assert out == "" and c.num_samples == 300


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(y_prob_b=np.full(9, 0.5)), "y_prob_a has 10 predictions but y_prob_b has 9"),
        (dict(y_prob_b=np.full((10, 2), 0.5)),
         "y_prob_a has shape \\(10,\\) but y_prob_b has shape \\(10, 2\\)"),
        (dict(y_prob_b=np.r_[np.nan, np.full(9, 0.5)]), "y_prob_b contains NaN"),
        (dict(y_prob_a=np.r_[1.5, np.full(9, 0.5)]), "y_prob_a must lie in \\[0, 1\\]"),
        (dict(y_true=np.r_[2, np.zeros(9, int)]), "y_true must hold labels in 0..1"),
        (dict(y_true=np.zeros(8, int)), "y_true has 8 entries but y_prob has 10"),
        (dict(y_pred_a=np.zeros(10, int)), "give both y_pred_a and y_pred_b"),
        (dict(y_pred_a=np.zeros(9, int), y_pred_b=np.zeros(10, int)), "y_pred_a has 9 entries"),
        (dict(num_samples=0), "num_samples must be a positive integer"),
        (dict(seed=-1), "seed must be a non-negative int"),
        (dict(n_bins=0), "n_bins must be a positive integer"),
        (dict(alpha=-1.0), "alpha must be finite and > 0"),
        (dict(progress="yes"), "progress must be True or False"),
        (dict(y_prob_a=[]), "y_prob_a is empty"),
    ],
)
def test_bad_input_raises_naming_the_argument(kwargs, message):
    args = dict(y_true=np.zeros(10, int), y_prob_a=np.full(10, 0.3), y_prob_b=np.full(10, 0.6))
    args.update(kwargs)
    y_true, a, b = args.pop("y_true"), args.pop("y_prob_a"), args.pop("y_prob_b")
    with pytest.raises(ValueError, match=message):
        compare(y_true, a, b, num_samples=args.pop("num_samples", 10), **args)


# ------------------------------------------------------------- simulations
def _shift_scenario(n, rng):
    """t ~ U(0.1, 0.8), y ~ Bernoulli(t); A predicts t + 0.12 + e_A and B
    t + 0.08 + e_B with independent e ~ U(-0.04, 0.04). Every bin of either
    model is over-confident (t - p < 0 pointwise), so the population binned
    ECE is E[p - t]: exactly 0.12 for A and 0.08 for B, difference 0.04."""
    t = rng.uniform(0.1, 0.8, size=n)
    y = (rng.uniform(size=n) < t).astype(np.int64)
    pa = t + 0.12 + rng.uniform(-0.04, 0.04, size=n)
    pb = t + 0.08 + rng.uniform(-0.04, 0.04, size=n)
    return y, pa, pb


def _power_ece(k, m):
    """Population binned ECE of p = expit(k logit t), t ~ U(0, 1), y ~ Bernoulli(t),
    by quadrature: sum_m | int_{g^-1(l_m)}^{g^-1(u_m)} (t - g(t)) dt |."""
    g = lambda t: special.expit(k * special.logit(t))  # noqa: E731
    ginv = lambda p: special.expit(special.logit(p) / k)  # noqa: E731
    edges = np.linspace(0, 1, m + 1)
    total = 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        a = 0.0 if lo == 0 else ginv(lo)
        b = 1.0 if hi == 1 else ginv(hi)
        total += abs(integrate.quad(lambda t: t - g(t), a, b)[0])
    return total


def test_power_truth_matches_monte_carlo():
    # the quadrature truth used below, against a 2e6-sample Monte Carlo using
    # E[y | t] = t (standard error < 3e-4, tolerance 1e-3)
    rng = np.random.default_rng(16)
    t = rng.uniform(size=2_000_000)
    for k in (2.0, 0.6):
        p = special.expit(k * special.logit(t))
        b = np.minimum((p * 10).astype(int), 9)
        mc = np.abs(np.bincount(b, weights=t - p, minlength=10)).sum() / t.size
        assert abs(mc - _power_ece(k, 10)) < 1e-3


def _study(make, truth, n, reps, m, s, seed):
    rng = np.random.default_rng(seed)
    covered, ratios = 0, []
    for _ in range(reps):
        y, pa, pb = make(n, rng)
        c = compare(y, pa, pb, n_bins=m, num_samples=s, seed=rng)
        lo, hi = c.interval(0.9)
        covered += lo <= truth <= hi
        ind = (bayesian_ece(y, pa, n_bins=m, num_samples=s, seed=rng, model="binned").draws
               - bayesian_ece(y, pb, n_bins=m, num_samples=s, seed=rng, model="binned").draws)
        ind_lo, ind_hi = np.quantile(ind, [0.05, 0.95])
        ratios.append((hi - lo) / (ind_hi - ind_lo))
    return covered / reps, np.array(ratios)


def _opposite_scenario(n, rng):
    """A over-confident (k = 2), B under-confident (k = 0.6) on the same t."""
    t = rng.uniform(size=n)
    y = (rng.uniform(size=n) < t).astype(np.int64)
    return y, special.expit(2.0 * special.logit(t)), special.expit(0.6 * special.logit(t))


def _coverage_floor(reps, z=3.09):
    # one-sided binomial bound: a true coverage >= 0.9 falls below it with
    # probability <= 0.1% (normal approximation)
    return 0.9 - z * np.sqrt(0.9 * 0.1 / reps)


@pytest.mark.parametrize("reps", [60, pytest.param(600, marks=pytest.mark.slow)])
def test_paired_interval_narrower_and_covers_when_errors_move_together(reps):
    """Similar models (both over-confident everywhere): the paired 90%
    interval is narrower than the one from independent posteriors in every
    replication (measured: median width ratio 0.15, largest 0.43 over 300
    replications) and covers the true difference 0.04 at least at the
    nominal rate (measured 0.99: the binned model's bin-mean discretisation
    makes it conservative). False-alarm rate of the coverage check 0.1%."""
    cover, ratios = _study(_shift_scenario, 0.04, n=2000, reps=reps, m=10, s=1000, seed=17)
    assert np.all(ratios < 1.0)
    assert np.median(ratios) < 0.5
    assert cover >= _coverage_floor(reps)


@pytest.mark.parametrize("reps", [40, pytest.param(400, marks=pytest.mark.slow)])
def test_paired_interval_wider_and_covers_when_errors_move_apart(reps):
    """One over-, one under-confident model: their ECE estimates move in
    opposite directions with the shared labels, so the paired interval is
    *wider* than the independent one (measured median ratio 1.28) and it is
    the independent one that under-covers (measured 0.83 vs 0.91 paired,
    400 replications). Coverage check false-alarm rate 0.1%."""
    truth = _power_ece(2.0, 10) - _power_ece(0.6, 10)
    cover, ratios = _study(_opposite_scenario, truth, n=1000, reps=reps, m=10, s=1000, seed=18)
    assert np.median(ratios) > 1.0
    assert cover >= _coverage_floor(reps)


def test_compare_warns_of_long_runs_and_refuses_what_does_not_fit(monkeypatch):
    """Robustness #16: S * 4 * M**2 Gamma draws with no guard (n_bins=1000 with
    the default 10,000 draws ran for about an hour)."""
    mod = importlib.import_module("bece._binned.compare")
    rng = np.random.default_rng(0)
    p = rng.uniform(size=200)
    y = (rng.uniform(size=200) < p).astype(int)
    monkeypatch.setattr(mod, "WARN_GAMMAS", 10_000)
    with pytest.warns(mod.CostWarning, match=r"compare draws num_samples x 4 x n_bins\*\*2 = 4e\+04"):
        bece.compare(y, p, p**0.5, n_bins=10, num_samples=100, model="binned")
    monkeypatch.setenv("BECE_MEMORY_LIMIT", "1GiB")
    with pytest.raises(ValueError, match=r"^num_samples=100000000 with n_bins=15: the paired"):
        bece.compare(y, p, p**0.5, num_samples=10**8, model="binned")


def test_compare_default_cost_stays_quiet():
    import warnings

    rng = np.random.default_rng(0)
    p = rng.uniform(size=200)
    y = (rng.uniform(size=200) < p).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bece.compare(y, p, p**0.5, num_samples=2000, model="binned")
