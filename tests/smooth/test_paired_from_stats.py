"""Paired comparisons from joint statistics (bece.posterior_compare), and the
paired draws averaged with exact calibration (bece._smooth.paired_average)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

import bece
from bece import PairedStats, posterior_compare
from bece._binned.compare import binned_compare
from bece._smooth.average import prob_calibrated
from bece._smooth.paired import smooth_compare
from bece._smooth.paired_average import calibrated_picks
from bece.smooth import fine_binning


def _binary(n, seed, ka=1.4, kb=1.25):
    rng = np.random.default_rng(seed)
    s = rng.beta(2, 2, size=n)
    y = (rng.uniform(size=n) < s).astype(np.int64)
    x = special.logit(s)
    return y, special.expit(ka * x), special.expit(kb * x)


def _top_label(n, seed, k=4):
    rng = np.random.default_rng(seed)
    lg = 2.0 * rng.standard_normal((n, k))
    y = np.array([rng.choice(k, p=row) for row in special.softmax(lg, axis=1)])
    return y, special.softmax(lg / 0.7, axis=1), special.softmax(lg + rng.standard_normal((n, k)), axis=1)


def _chunks(n, parts=3):
    return np.array_split(np.arange(n), parts)


def test_binned_from_chunked_statistics_equals_the_arrays():
    """Joint counts and sums exactly (bece._stats.exact), so the same draws
    (same seed), to the last bit."""
    y, qa, qb = _top_label(3000, 1)
    stats = sum(PairedStats.from_arrays(y[i], qa[i], qb[i], n_bins=10) for i in _chunks(3000))
    c = posterior_compare(stats, num_samples=500, seed=5)
    d = binned_compare(y, qa, qb, n_bins=10, num_samples=500, seed=5)
    assert c.a.model == "binned"
    np.testing.assert_array_equal(c.counts, d.counts)
    np.testing.assert_array_equal(c.diff_draws, d.diff_draws)
    np.testing.assert_array_equal(c.a.draws, d.a.draws)
    assert c.a.plugin == d.a.plugin


@pytest.mark.parametrize("kind", ["binary", "top-label"])
def test_smooth_from_chunked_fine_statistics_equals_the_arrays(kind):
    """Above 2,000 predictions the array path works on the fine grid: the same
    atoms and joint cells from the statistics, with exact sums on both paths,
    so the same draws to the last bit (top-label: the models predict
    different labels on some examples, which the joint cells keep)."""
    n = 2500
    y, pa, pb = _binary(n, 2) if kind == "binary" else _top_label(n, 3)
    fine = fine_binning(10)
    stats = sum(PairedStats.from_arrays(y[i], pa[i], pb[i], binning=fine) for i in _chunks(n))
    c = posterior_compare(stats, model="smooth", n_bins=10, num_samples=300, seed=6)
    d = smooth_compare(y, pa, pb, n_bins=10, num_samples=300, seed=6)
    assert c.a.model == "smooth" and c.a.stats.kind == kind and c.a.stats.n_bins == 10
    np.testing.assert_array_equal(c.counts, d.counts)
    np.testing.assert_array_equal(c.diff_draws, d.diff_draws)
    np.testing.assert_array_equal(c.b.accuracy, d.b.accuracy)
    assert c.a.prob_calibrated == d.a.prob_calibrated
    assert c.b.plugin == d.b.plugin


def test_posterior_compare_bad_input():
    y, pa, pb = _binary(200, 4)
    coarse = PairedStats.from_arrays(y, pa, pb, n_bins=10)
    with pytest.raises(ValueError, match="stats must be a PairedStats"):
        posterior_compare(bece.CalibrationStats.from_arrays(y, pa))
    with pytest.raises(ValueError, match="model must be one of"):
        posterior_compare(coarse, model="literal")
    with pytest.raises(ValueError, match="the statistics have 10 bins and the model n_bins=12"):
        posterior_compare(coarse, n_bins=12)
    with pytest.raises(ValueError, match="binning_b applies to the smooth model"):
        posterior_compare(coarse, binning_b="uniform")
    with pytest.raises(ValueError, match="prior_odds: not an option of BinnedModel"):
        posterior_compare(coarse, prior_odds=0.1)
    with pytest.raises(ValueError, match="alpha: not an option of SmoothModel"):
        posterior_compare(coarse, model="smooth", alpha=0.1)
    with pytest.raises(ValueError, match="do not refine"):  # 10 uniform bins for 15 ECE bins
        posterior_compare(coarse, model="smooth")
    with pytest.raises(ValueError, match="coupling must be one of"):
        smooth_compare(y, pa, pb, coupling="comonotone")
    with pytest.raises(ValueError, match="prior_odds must be"):
        smooth_compare(y, pa, pb, prior_odds=-1.0)
    with pytest.raises(ValueError, match="prior_odds: not an option of BinnedModel"):
        bece.compare(y, pa, pb, model="binned", prior_odds=0.1)


def test_calibrated_picks_marginals_and_joint():
    """Marginals pi_a, pi_b; P(both) = min(pi_a, pi_b) shared, pi_a pi_b
    independent. S = 40,000: each frequency within 5 binomial SEs (at most
    0.0025; false alarm < 1e-5 per check)."""
    s = 40_000
    tol = 5 * np.sqrt(0.25 / s)
    ia, ib = calibrated_picks(0.3, 0.6, s, np.random.default_rng(1), "shared")
    assert abs(ia.mean() - 0.3) < tol and abs(ib.mean() - 0.6) < tol
    assert np.all(ib[ia])  # u < 0.3 implies u < 0.6
    ia, ib = calibrated_picks(0.3, 0.6, s, np.random.default_rng(2), "independent")
    assert abs(ia.mean() - 0.3) < tol and abs(ib.mean() - 0.6) < tol
    assert abs((ia & ib).mean() - 0.18) < tol


def test_averaged_draws_are_the_smooth_draws_or_exact_calibration():
    """With the same seed the paired smooth draws are the same with and without
    averaging (the indicators are drawn after them); each model's draws are
    its own (0 where picked), the fraction picked is its pi_0 =
    expit(log B01 + log O) within 5 binomial SEs (S = 3000), and the shared
    coupling picks B wherever it picks A when pi_a <= pi_b."""
    y, pa, _ = _binary(400, 7, ka=1.0)  # A calibrated by construction
    pb = special.expit(1.1 * special.logit(pa))
    plain = smooth_compare(y, pa, pb, num_samples=3000, seed=8, prior_odds=0)
    avg = smooth_compare(y, pa, pb, num_samples=3000, seed=8, prior_odds=0.5, coupling="shared")
    assert plain.a.prob_calibrated == 0.0 and np.all(plain.a.draws > 0)
    picks = {}
    for tag in ("a", "b"):
        r0, r1 = getattr(plain, tag), getattr(avg, tag)
        pick = r1.draws == 0
        np.testing.assert_array_equal(r1.draws[~pick], r0.draws[~pick])
        pi = prob_calibrated(r1.params.log_bayes_factor, 0.5)
        assert r1.prob_calibrated == pytest.approx(pi, rel=1e-12) and r1.prior_odds == 0.5
        assert abs(pick.mean() - pi) < 5 * np.sqrt(pi * (1 - pi) / 3000) + 1e-9
        np.testing.assert_array_equal(r1.accuracy[pick], r1.confidence[pick])
        picks[tag] = pick
    lo, hi = ("a", "b") if avg.a.prob_calibrated <= avg.b.prob_calibrated else ("b", "a")
    assert np.all(picks[hi][picks[lo]])
    np.testing.assert_array_equal(avg.diff_draws, avg.a.draws - avg.b.draws)
    assert 0.05 < avg.a.prob_calibrated  # the data here cannot rule calibration out


def test_identical_predictions_under_each_coupling():
    """Shared indicators: the difference is 0 wherever either draw is exact
    calibration. Independent: one but not the other with probability
    2 pi (1 - pi) (within 5 binomial SEs, S = 1000)."""
    y, pa, _ = _binary(300, 9, ka=1.0)
    c = smooth_compare(y, pa, pa.copy(), num_samples=1000, seed=1, coupling="shared")
    assert c.a.prob_calibrated == c.b.prob_calibrated > 0
    zero = (c.a.draws == 0) | (c.b.draws == 0)
    assert zero.any() and np.all(c.diff_draws[zero] == 0)
    assert c.interval(0.9)[0] <= 0 <= c.interval(0.9)[1]
    # independent indicators: one model's draw can be exact calibration while the
    # other's is not (P = 2 pi (1 - pi)), so the difference is not 0 there
    d = smooth_compare(y, pa, pa.copy(), num_samples=1000, seed=1, coupling="independent")
    one = (d.a.draws == 0) != (d.b.draws == 0)
    pi = d.a.prob_calibrated
    assert abs(one.mean() - 2 * pi * (1 - pi)) < 5 * np.sqrt(0.25 / 1000)
    assert np.all(d.diff_draws[one] != 0)
