"""The paired smooth comparison (bece._smooth.paired, bece.compare(model="smooth"))."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats

import bece
from bece._smooth.atoms import check_grid
from bece._smooth.paired import (
    PairedSide,
    bootstrap_ece,
    label_correlation,
    paired_draws,
    smooth_compare,
)
from bece._stats.binning import make_binning


def _pair(n, seed, ka=1.4, kb=1.25):
    """Binary outcomes of s ~ Beta(2, 2) and two temperature maps of s."""
    rng = np.random.default_rng(seed)
    s = rng.beta(2, 2, size=n)
    y = (rng.uniform(size=n) < s).astype(np.int64)
    x = special.logit(s)
    return y, special.expit(ka * x), special.expit(kb * x)


def _sides(y, pa, pb, n_bins=15):
    r = check_grid("auto", y.size)
    return (PairedSide.fit(y, pa, make_binning(pa, n_bins, "uniform"), r),
            PairedSide.fit(y, pb, make_binning(pb, n_bins, "uniform"), r))


def _true_binary_ece(k, n_bins=15):
    """Population binned ECE of expit(k logit s), s ~ Beta(2, 2), by the midpoint rule."""
    s = (np.arange(400_000) + 0.5) / 400_000
    w = stats.beta.pdf(s, 2, 2)
    p = special.expit(k * special.logit(s))
    b = np.minimum((p * n_bins).astype(np.int64), n_bins - 1)
    return float(np.abs(np.bincount(b, weights=w * (s - p), minlength=n_bins)).sum() / w.sum())


def test_label_correlation_hand_computed():
    # pi_a = 0.3, pi_b = 0.2 (different labels): cov = -0.06, sds sqrt(0.21), sqrt(0.16)
    rho = label_correlation(special.logit(0.3), special.logit(0.2))
    assert rho == pytest.approx(-0.06 / np.sqrt(0.21 * 0.16), rel=1e-12)
    # the same from the joint law of (z_a, z_b) by brute force: cells (1,0), (0,1), (0,0)
    pa, pb = 0.3, 0.2
    vals = np.array([[1, 0], [0, 1], [0, 0]])
    prob = np.array([pa, pb, 1 - pa - pb])
    cov = np.cov(vals.T, aweights=prob, bias=True)
    assert rho == pytest.approx(cov[0, 1] / np.sqrt(cov[0, 0] * cov[1, 1]), rel=1e-12)
    assert label_correlation(3.0, 3.0) == -1.0  # pi_a + pi_b > 1: clipped


@pytest.mark.parametrize("n", [400, 3000])
def test_perturbation_has_the_laplace_covariance(n):
    """theta - mode = H^{-1}(C^T sqrt(W) eps + P^{1/2} eta) has covariance H^{-1}
    exactly when H = C^T W C + P: the Hessian rebuilt from the atoms equals the
    fit's (its Cholesky factor) at the hyper-parameter points that carry the
    posterior (exact atoms at n = 400, fine-grid atoms at n = 3000)."""
    y, pa, _ = _pair(n, 1)
    a = PairedSide.fit(y, pa, make_binning(pa, 15, "uniform"), check_grid("auto", n))
    assert a.atoms.exact == (n <= 2000)
    for k in np.argsort(a.post.weights)[-6:]:
        chol = a.post.chol[k]
        np.testing.assert_allclose(a.hessian(k), chol @ chol.T, rtol=1e-7, atol=1e-7)
    # the atoms hold the examples: counts and successes per atom from atom_of
    np.testing.assert_array_equal(np.bincount(a.atom_of, minlength=a.atoms.p.size), a.atoms.trials)
    np.testing.assert_array_equal(np.bincount(a.atom_of, weights=y, minlength=a.atoms.p.size),
                                  a.atoms.successes)


def test_perturbed_draws_match_the_laplace_component():
    """Monte Carlo: draws at one hyper-parameter point have mean mode_k and
    variances diag(H_k^{-1}). S = 8,000: each variance within 5 relative
    standard errors sqrt(2/S) (false alarm < 1e-4 over the coefficients),
    each mean within 5 standard errors."""
    y, pa, pb = _pair(300, 2)
    a, _ = _sides(y, pa, pb)
    k = int(np.argmax(a.post.weights))
    rng = np.random.default_rng(3)
    s = 8_000
    noise = rng.standard_normal((s, a.atoms.p.size)) * np.sqrt(a.atoms.trials)
    eta = rng.standard_normal((s, a.post.modes.shape[1]))
    beta = a.perturbed(np.full(s, k), noise, eta)
    cols = a.post.column_scale(a.post.lambdas[k:k + 1], a.post.taus[k:k + 1])[0]
    theta = beta / cols
    cov = np.linalg.inv(a.post.chol[k] @ a.post.chol[k].T)
    sd = np.sqrt(np.diag(cov))
    assert np.all(np.abs(theta.mean(axis=0) - a.post.modes[k]) < 5 * sd / np.sqrt(s))
    assert np.all(np.abs(theta.var(axis=0) / np.diag(cov) - 1) < 5 * np.sqrt(2 / s))


def test_bootstrap_ece_against_a_naive_loop():
    y, pa, pb = _pair(200, 4)
    a, _ = _sides(y, pa, pb, n_bins=5)
    rng = np.random.default_rng(5)
    beta = a.post.modes[:3] * a.post.column_scale(a.post.lambdas[:3], a.post.taus[:3])
    g = rng.dirichlet(np.ones(pa.size), size=3)
    bins = a.atoms.binning.index(pa)
    onehot = np.zeros((pa.size, 5))
    onehot[np.arange(pa.size), bins] = 1.0
    from scipy import sparse

    smooth_t = a.post.basis.design(special.logit(pa)).T
    ece, acc, conf, wt = bootstrap_ece(a, pa, beta, g, sparse.csr_matrix(onehot), smooth_t)
    for s in range(3):
        total = 0.0
        for m in range(5):
            gap = 0.0
            for i in range(pa.size):
                if bins[i] == m:
                    f = a.post.basis.logits(np.array([special.logit(pa[i])]), np.array([m]), beta[s:s + 1])
                    gap += g[s, i] * (special.expit(f[0, 0]) - pa[i])
            total += abs(gap)
        assert ece[s] == pytest.approx(total, rel=1e-10)
    np.testing.assert_allclose(wt.sum(axis=1), 1.0, rtol=1e-12)


def test_identical_predictions():
    """Sharing every perturbation gives a difference of exactly 0; the default
    (independent prior parts) a posterior around 0 narrower than either ECE's
    (sd ratio measured 0.43 here, n = 300: the two priors' parts do not
    cancel), its mean within 4 of its MC standard errors of 0 (false alarm
    6e-5). The smooth models alone (prior_odds=0): averaging with exact
    calibration adds its own spread (tests/smooth/test_paired_stats.py)."""
    y, pa, _ = _pair(300, 6)
    a, b = _sides(y, pa, pa.copy())
    same = np.ones(y.size, bool)
    d = paired_draws(a, b, same, 300, np.random.default_rng(1), share_prior=True)
    assert np.all(d["ece_a"] == d["ece_b"])
    c = smooth_compare(y, pa, pa.copy(), num_samples=1000, seed=1, prior_odds=0)
    assert c.a.model == "smooth" and c.a.method == "laplace-paired"
    assert c.std < 0.6 * c.a.std
    assert abs(c.mean) < 4 * c.std / np.sqrt(1000)


def test_marginals_match_each_models_own_posterior():
    """Each model's ECE draws in the pair have the mean and sd of the smooth model
    alone (prior_odds=0, zero_gap_prior=0; its draws are PSIS-resampled, the pair's the Laplace
    mixture). Tolerance: 5 Monte Carlo SEs of the mean (S = 2000 each, the
    ECE's sd over sqrt(S/2)) plus 5% of the sd for the Laplace/PSIS gap."""
    y, pa, pb = _pair(400, 7)
    c = smooth_compare(y, pa, pb, num_samples=2000, seed=2, prior_odds=0)
    for res, p in ((c.a, pa), (c.b, pb)):
        one = bece._smooth.posterior.smooth_ece(y, p, num_samples=2000, seed=3, prior_odds=0,
                                     zero_gap_prior=0)
        assert abs(res.mean - one.mean) < 5 * one.std / np.sqrt(1000) + 0.05 * one.std
        assert res.std == pytest.approx(one.std, rel=0.15)
        assert res.plugin == one.plugin


def test_paired_interval_is_narrower_than_independent_on_similar_models():
    """Two temperatures of the same scores (1.4 and 1.25), n = 3000 (fine-grid
    atoms): the paired 90% interval of ECE_A - ECE_B is a fraction of the width
    of two independent posteriors from the same fits (measured 0.37 here; the
    study in benchmarks/paired_smooth_study.py has the table). Deterministic
    given the seeds."""
    y, pa, pb = _pair(3000, 8)
    a, b = _sides(y, pa, pb)
    same = np.ones(y.size, bool)
    width = {}
    for coupled in (True, False):
        d = paired_draws(a, b, same, 1000, np.random.default_rng(9), coupled=coupled)
        width[coupled] = np.diff(np.quantile(d["ece_a"] - d["ece_b"], [0.05, 0.95]))[0]
    assert width[True] < 0.6 * width[False]


def test_top_label_input_and_different_labels():
    rng = np.random.default_rng(10)
    n, k = 400, 4
    lg = 2.0 * rng.standard_normal((n, k))
    pi = special.softmax(lg, axis=1)
    y = np.array([rng.choice(k, p=row) for row in pi])
    qa = special.softmax(lg / 0.7, axis=1)
    qb = special.softmax(lg + rng.standard_normal((n, k)), axis=1)
    c = bece.compare(y, qa, qb, num_samples=300, seed=1, model="smooth")
    assert c.a.stats.kind == "top-label" and c.diff_draws.shape == (300,)
    assert not np.all(qa.argmax(axis=1) == qb.argmax(axis=1))
    # the top-label confidence's plug-in ECE, as the binned compare reads (n, K) input
    assert c.a.plugin == pytest.approx(bece.expected_calibration_error(y, qa), rel=1e-12)
    assert c.counts.dtype == np.int64 and c.counts.sum() == n
    # the same with triples (y_pred, y_true, confidence)
    t = bece.compare(y, qa.max(axis=1), qb.max(axis=1), y_pred_a=qa.argmax(axis=1),
                     y_pred_b=qb.argmax(axis=1), num_samples=300, seed=1, model="smooth")
    np.testing.assert_array_equal(t.diff_draws, c.diff_draws)


def _coverage(reps, n, draws):
    true = _true_binary_ece(1.4) - _true_binary_ece(1.25)
    hits = 0
    for r in range(reps):
        y, pa, pb = _pair(n, 1000 + r)
        c = smooth_compare(y, pa, pb, num_samples=draws, seed=r)
        lo, hi = c.interval(0.9)
        hits += lo <= true <= hi
    return hits


def test_coverage_of_the_true_difference_small():
    """Known maps (temperatures 1.4 and 1.25 of s ~ Beta(2, 2); true difference
    +0.0168), 8 replications at n = 300. At the goal's coverage 0.85 the
    chance of fewer than 5 hits is binom.cdf(4, 8, 0.85) = 0.021 (the false
    alarm rate); at the nominal 0.9 it is 0.005."""
    assert _coverage(8, 300, 300) >= 5


@pytest.mark.slow
def test_coverage_of_the_true_difference():
    """As above with 100 replications at n = 1000: fewer than 78 hits has
    probability binom.cdf(77, 100, 0.85) = 0.022 at coverage 0.85."""
    assert _coverage(100, 1000, 1000) >= 78


def test_bad_input():
    y, pa, pb = _pair(50, 11)
    with pytest.raises(ValueError, match="y_prob_a has 50 predictions but y_prob_b has 49"):
        smooth_compare(y, pa, pb[:49])
    with pytest.raises(ValueError, match="give both y_pred_a and y_pred_b"):
        smooth_compare(y, pa, pb, y_pred_a=y)
    with pytest.raises(ValueError, match="num_samples"):
        smooth_compare(y, pa, pb, num_samples=0)
    bad = pa.copy()
    bad[3] = np.nan
    with pytest.raises(ValueError, match="y_prob_b"):
        smooth_compare(y, pa, bad)
    with pytest.raises(ValueError, match="model must be one of"):
        bece.compare(y, pa, pb, model="literal")
    with pytest.raises(ValueError, match="alpha: not an option of SmoothModel"):
        bece.compare(y, pa, pb, model="smooth", alpha=0.1)


def test_default_model_is_smooth_and_binned_is_one_keyword_away():
    y, pa, pb = _pair(100, 12)
    assert bece.compare(y, pa, pb, num_samples=100).a.model == "smooth"
    assert bece.compare(y, pa, pb, num_samples=100, model="binned").a.model == "binned"


def _over_vs_under(n, seed):
    """The over- against under-confident pair of the paired study: s ~ Beta(2, 2),
    A predicts expit(1.3 logit s + 0.1), B expit(0.85 logit s)."""
    rng = np.random.default_rng(seed)
    s = rng.beta(2, 2, size=n)
    y = (rng.uniform(size=n) < s).astype(np.int64)
    x = special.logit(s)
    return y, special.expit(1.3 * x + 0.1), special.expit(0.85 * x)


def test_interval_is_robust_over_each_models_prior_odds():
    """The default's interval runs over the four priors' intervals: each
    model's prior odds of exact calibration 0 or 0.02, from the same draws."""
    y, pa, pb = _over_vs_under(2000, 5)
    c = smooth_compare(y, pa, pb, num_samples=2000, seed=3)
    alone = smooth_compare(y, pa, pb, num_samples=2000, seed=3, prior_odds=0.0)
    rows = c.diff_under_priors
    assert rows.shape == (4, 2000) and alone.diff_under_priors is None
    # rows: odds (0, 0), (O, 0), (0, O), (O, O) for (A, B), by hand from the two results
    np.testing.assert_array_equal(rows[0], alone.diff_draws)
    np.testing.assert_array_equal(rows[1], c.a.draws - alone.b.draws)
    np.testing.assert_array_equal(rows[2], alone.a.draws - c.b.draws)
    np.testing.assert_array_equal(rows[3], c.diff_draws)
    assert 0.0 < c.b.prob_calibrated < 1.0 and np.any(c.b.draws == 0.0)
    lo, hi = c.interval(0.9)
    q = [np.quantile(r, [0.05, 0.95]) for r in rows]
    assert lo == pytest.approx(min(v[0] for v in q), rel=1e-12)
    assert hi == pytest.approx(max(v[1] for v in q), rel=1e-12)
    a_lo, a_hi = alone.interval(0.9)
    d_lo, d_hi = np.quantile(c.diff_draws, [0.05, 0.95])
    assert lo <= min(a_lo, d_lo) and hi >= max(a_hi, d_hi)
    assert c.upper_bound(0.9) == pytest.approx(max(np.quantile(r, 0.9) for r in rows), rel=1e-12)
    # the other summaries are the default prior's draws
    assert c.mean == pytest.approx(c.diff_draws.mean(), rel=1e-12)
    assert c.prob_a_better == np.mean(c.diff_draws < 0)
    d = c.to_dict()
    assert d["diff"]["interval"] == [lo, hi] and d["diff"]["interval_prior_odds"] == [0.0, 0.02]
    assert "interval holds for each model's prior odds from 0 to 0.02" in c.text()
    assert "interval_prior_odds" not in alone.to_dict()["diff"]
    assert "prior odds from 0" not in alone.text()


def test_binned_comparison_interval_is_that_of_its_draws():
    y, pa, pb = _pair(500, 13)
    c = bece.compare(y, pa, pb, num_samples=500, seed=1, model="binned")
    assert c.diff_under_priors is None
    assert c.interval(0.8) == tuple(float(v) for v in np.quantile(c.diff_draws, [0.1, 0.9]))


def _over_vs_under_hits(reps, n, draws):
    true = _true_binary_ece_map(1.3, 0.1) - _true_binary_ece_map(0.85, 0.0)
    hits = 0
    for r in range(reps):
        y, pa, pb = _over_vs_under(n, 2000 + r)
        lo, hi = smooth_compare(y, pa, pb, num_samples=draws, seed=r).interval(0.9)
        hits += lo <= true <= hi
    return hits


def _true_binary_ece_map(k, c, n_bins=15):
    """Population binned ECE of expit(k logit s + c), s ~ Beta(2, 2), by the midpoint rule."""
    s = (np.arange(400_000) + 0.5) / 400_000
    w = stats.beta.pdf(s, 2, 2)
    p = special.expit(k * special.logit(s) + c)
    b = np.minimum((p * n_bins).astype(np.int64), n_bins - 1)
    return float(np.abs(np.bincount(b, weights=w * (s - p), minlength=n_bins)).sum() / w.sum())


def test_over_vs_under_truth_by_hand():
    """The paired study's true difference +0.0190 (15 bins)."""
    assert _true_binary_ece_map(1.3, 0.1) - _true_binary_ece_map(0.85, 0.0) == pytest.approx(
        0.0190, abs=5e-5)
    assert _true_binary_ece_map(1.4, 0.0) == pytest.approx(_true_binary_ece(1.4), abs=1e-15)


def test_over_vs_under_coverage_small():
    """Over- against under-confident at n = 2,000, where B's probability of
    exact calibration averages 0.34 and the default prior's own interval
    covered 0.75 (docs: validation). 20 replications: fewer than 14 hits has
    probability binom.cdf(13, 20, 0.85) = 0.022 at coverage 0.85 (the false
    alarm rate); at 0.75, 14 or more has probability 0.79, so this small
    version mostly guards against gross errors, the slow one below against 0.75."""
    assert _over_vs_under_hits(20, 2000, 500) >= 14


@pytest.mark.slow
def test_over_vs_under_coverage():
    """As above with 100 replications: fewer than 78 hits has probability
    binom.cdf(77, 100, 0.85) = 0.022 at coverage 0.85 (0.71 at 0.75)."""
    assert _over_vs_under_hits(100, 2000, 1000) >= 78
