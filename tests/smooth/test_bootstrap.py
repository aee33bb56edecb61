"""bece._smooth.bootstrap: crowded bins' bootstrap means drawn from their
normal approximation, against the exact Gamma draws (one variate per atom)
and against the Dirichlet's mean and covariance computed by hand."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from bece._smooth.atoms import make_atoms
from bece._smooth.bootstrap import NORMAL_BIN_MIN, BinMoments, normal_bin_draws
from bece._smooth.draws import ece_draws, loglik_and_sums
from bece._smooth.fit import fit_smooth
from bece._stats import make_binning


@pytest.fixture(scope="module")
def crowded():
    """40,000 predictions, p ~ Beta(2, 1): 15 bins of 180 to 5,200 predictions
    (the lowest ones below NORMAL_BIN_MIN: both routes in one call)."""
    rng = np.random.default_rng(11)
    p = rng.beta(2.0, 1.0, size=40_000)
    z = (rng.uniform(size=p.size) < p**1.3).astype(np.int64)
    atoms = make_atoms(z, p, make_binning(p, 15), 128)
    post = fit_smooth(atoms)
    beta, *_ = post.sample(1, np.random.default_rng(12))
    return atoms, post, beta


def test_the_bins_split_between_the_routes(crowded):
    atoms, _, _ = crowded
    bm = BinMoments.from_atoms(atoms)
    assert 0 < bm.normal.sum() < atoms.binning.n_bins
    np.testing.assert_array_equal(bm.normal, bm.count >= NORMAL_BIN_MIN)
    assert bm.count.sum() == atoms.n


def test_normal_draws_have_the_dirichlet_mean_and_covariance(crowded):
    """Hand formulas: for pi ~ Dirichlet(t), sum(pi a) has mean sum(t a)/n and
    Cov(sum pi a, sum pi b) = (sum(t a b)/n - mean_a mean_b)/(n + 1). 200,000
    draws per bin; tolerances 5 Monte Carlo s.e. (false alarm < 1e-5 per
    comparison, about 1e-4 over the test)."""
    atoms, post, beta = crowded
    bm = BinMoments.from_atoms(atoms)
    _, sums = loglik_and_sums(atoms, post.basis, beta)
    s_draws = 200_000
    total, acc, conf = normal_bin_draws(bm, np.repeat(sums, s_draws, axis=0), np.random.default_rng(3))
    f = post.basis.logits(atoms.x, atoms.bin, beta)[0]
    s = 1.0 / (1.0 + np.exp(-f))
    t = atoms.trials.astype(float)
    for col, m in enumerate(np.flatnonzero(bm.normal)):
        inside = atoms.bin == m
        n = t[inside].sum()
        mean = lambda a: np.sum(t[inside] * a[inside]) / n  # noqa: E731
        ms, mp = mean(s), mean(atoms.p)
        v_s = (mean(s * s) - ms**2) / (n + 1)
        v_p = (mean(atoms.p**2) - mp**2) / (n + 1)
        c_sp = (mean(s * atoms.p) - ms * mp) / (n + 1)
        se = np.sqrt(np.array([v_s, v_p]) / s_draws)
        assert abs(acc[:, col].mean() - ms) < 5 * se[0]
        assert abs(conf[:, col].mean() - mp) < 5 * se[1]
        # sample variances: relative s.e. sqrt(2 / S) = 0.3%; covariance likewise
        np.testing.assert_allclose(acc[:, col].var(), v_s, rtol=5 * np.sqrt(2 / s_draws))
        np.testing.assert_allclose(conf[:, col].var(), v_p, rtol=5 * np.sqrt(2 / s_draws))
        cov = np.cov(acc[:, col], conf[:, col])[0, 1]
        assert abs(cov - c_sp) < 5 * np.sqrt((v_s * v_p + c_sp**2) / s_draws)
        # the bin total is Gamma(n) exactly: mean n, variance n
        assert abs(total[:, col].mean() - n) < 5 * np.sqrt(n / s_draws)


def test_ece_draws_match_the_exact_gamma_draws(crowded):
    """One curve draw repeated 2,000 times, so that the ECE draws vary by the
    bootstrap alone: the default route (normal in crowded bins) and one Gamma
    variate per atom everywhere give the same distribution of the ECE and of
    each bin's accuracy and weight. Two-sample Kolmogorov-Smirnov at level
    1e-3 per comparison (46 comparisons: false alarm < 5%, measured p-values
    0.05-0.99); what the approximation leaves out moves the KS distance by
    about 0.13 |skewness| / sqrt(n_m) < 0.01 here, far below the test's
    resolution (0.062)."""
    atoms, post, beta = crowded
    reps = np.repeat(beta, 2000, axis=0)
    a = ece_draws(atoms, post.basis, reps, np.random.default_rng(1))
    b = ece_draws(atoms, post.basis, reps, np.random.default_rng(2), normal_bin_min=atoms.n + 1)
    assert stats.ks_2samp(a[0], b[0]).pvalue > 1e-3
    for m in range(atoms.binning.n_bins):
        assert stats.ks_2samp(a[1][:, m], b[1][:, m]).pvalue > 1e-3
        assert stats.ks_2samp(a[2][:, m], b[2][:, m]).pvalue > 1e-3
        assert stats.ks_2samp(a[3][:, m], b[3][:, m]).pvalue > 1e-3
    # the interval ends agree to their Monte Carlo error (sd of a 5% quantile
    # of 2,000 draws: about 0.05 sd of the draws; 5 of them)
    sd = b[0].std()
    for q in (0.05, 0.95):
        assert abs(np.quantile(a[0], q) - np.quantile(b[0], q)) < 5 * 0.05 * sd * np.sqrt(2)


def test_loglik_and_sums_against_float64(crowded):
    """The float32 exponential and logarithm (draws.loglik_and_sums, Notes):
    against np.logaddexp in float64, the log likelihood of 200 proposals
    errs by less than the per-atom rounding bound t 2^-24 (|f|/2 + 1)
    summed over the atoms, and varies between proposals by less than 0.01;
    the per-bin sums agree to float32's relative precision."""
    atoms, post, _ = crowded
    beta, *_ = post.sample(200, np.random.default_rng(4))
    ll, sums = loglik_and_sums(atoms, post.basis, beta)
    f = post.basis.logits(atoms.x, atoms.bin, beta)
    t = atoms.trials.astype(float)
    ref = f @ atoms.successes.astype(float) - np.logaddexp(0.0, f) @ t
    d = ll - ref
    assert np.all(np.abs(d) <= 2.0**-24 * ((np.abs(f) / 2 + 1) @ t))
    assert np.ptp(d) < 0.01
    s = 1.0 / (1.0 + np.exp(-f))
    for k, a in enumerate([s, s * atoms.p, s * s]):
        want = np.stack([np.bincount(atoms.bin, weights=t * row, minlength=15) for row in a])
        np.testing.assert_allclose(sums[:, k], want, rtol=1e-6)
