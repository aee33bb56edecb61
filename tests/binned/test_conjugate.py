"""bece._binned.conjugate: the closed-form posterior's exact parameters, and its
samplers against scipy.

Tolerances come from Monte Carlo error. A comparison of a sample mean with
its expectation passes when the gap is below ``Z`` standard errors; with
``Z = 5`` one comparison fails by chance with probability 5.7e-7, so the
largest test here (60 comparisons) has a false-alarm rate below 4e-5. The KS
tests use a p-value threshold of 1e-5 per distribution (6 distributions:
false-alarm rate 6e-5).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

import bece
from bece import CalibrationStats
from bece._base import sample_dirichlet
from bece._binned import conjugate_posterior
from bece._binned.conjugate import ece_of_draws, sample_truncated_normal

Z = 5.0


def assert_mean_close(sample, expected, z=Z):
    sample = np.asarray(sample)
    se = sample.std(axis=0, ddof=1) / np.sqrt(sample.shape[0])
    gap = np.abs(sample.mean(axis=0) - expected)
    assert np.all(gap <= z * se), (gap / se).max()


# ---------------------------------------------------------------- exact parameters
def test_conjugate_parameters_hand_computed():
    # bin 0 (width 0.5): p = 0.2, incorrect ; bin 1: p = 0.6, 0.9, correct
    s = CalibrationStats.from_arrays([0, 1, 1], [0.2, 0.6, 0.9], n_bins=2)
    post = conjugate_posterior(s)
    # alpha = 1/(2M) = 0.25 per cell
    np.testing.assert_allclose(post.concentration, [[1.25, 0.25], [0.25, 2.25]])
    tau2 = 0.5**2 / 12  # sigma = tau = w / sqrt(12)
    # bin 0: s^2 = 1/(1/tau2 + 1/tau2) = tau2/2, mean = (0.25 + 0.2)/2
    # bin 1: s^2 = tau2/3, mean = (0.75 + 1.5)/3
    np.testing.assert_allclose(post.loc, [0.225, 0.75], rtol=1e-14)
    np.testing.assert_allclose(post.scale, np.sqrt([tau2 / 2, tau2 / 3]), rtol=1e-14)
    np.testing.assert_allclose(post.lower, [0.0, 0.5])
    np.testing.assert_allclose(post.upper, [0.5, 1.0])


def test_empty_bin_falls_back_to_prior():
    s = CalibrationStats.from_arrays([1], [0.95], n_bins=4)
    post = conjugate_posterior(s, sigma=0.1, tau=0.2)
    np.testing.assert_allclose(post.loc[:3], [0.125, 0.375, 0.625])
    np.testing.assert_allclose(post.scale[:3], 0.2)
    np.testing.assert_allclose(post.concentration[:, :3], 1 / 8)


def test_ece_formula_hand_checked():
    q = np.array([[[0.1, 0.2], [0.3, 0.4]]])  # row 0 incorrect, row 1 correct
    mu = np.array([[0.5, 0.9]])
    # ours: |0.3 - 0.4*0.5| + |0.4 - 0.6*0.9| = 0.1 + 0.14
    assert ece_of_draws(q, mu)[0] == pytest.approx(0.24, abs=1e-15)
    # reference: 3/7 |0.3/0.4 - 0.5| + 4/7 |0.4/0.6 - 0.9|
    ref = 3 / 7 * 0.25 + 4 / 7 * abs(0.4 / 0.6 - 0.9)
    assert ece_of_draws(q, mu, "correct")[0] == pytest.approx(ref, abs=1e-15)


def test_preset_parameters_are_the_references():
    s = CalibrationStats.from_arrays([0, 1, 1], [0.2, 0.6, 0.9], n_bins=10)
    post = conjugate_posterior(s, preset="uncertainty-metrics")
    np.testing.assert_allclose(post.alpha, 0.1)
    np.testing.assert_allclose(post.sigma**2, 1 / 120)
    np.testing.assert_allclose(post.tau**2, 1 / 120)
    assert post.weighting == "correct"
    # the reference's posterior mean: s^2 (center/sigma0^2 + n * pmean / sigma^2)
    n = s.bin_counts
    pmean = s.sum_p / np.maximum(n, 1)
    var = 1 / (n * 120 + 120)
    np.testing.assert_allclose(post.loc, var * (post.center * 120 + n * pmean * 120), rtol=1e-12)


# ---------------------------------------------------------------- samplers
def test_dirichlet_sampler_matches_scipy_moments(rng):
    conc = np.array([[1 / 30, 2.5, 40.0], [0.5, 1 / 30, 7.0]])
    draws = sample_dirichlet(conc, 200_000, rng)
    assert draws.shape == (200_000, 2, 3)
    np.testing.assert_allclose(draws.sum(axis=(1, 2)), 1.0, rtol=1e-12)
    flat = draws.reshape(len(draws), -1)
    d = sps.dirichlet(conc.ravel())
    assert_mean_close(flat, d.mean())
    assert_mean_close(flat**2, d.var() + d.mean() ** 2)


TN_CASES = [
    # loc, scale, lower, upper: inside, one-sided, far tails, tiny scale
    (0.5, 0.1, 0.4, 0.6),
    (0.05, 0.3, 0.0, 1.0),
    (0.0, 0.01, 0.05, 0.06),  # 5 to 6 sd above the mean
    (1.0, 0.01, 0.55, 0.6),  # 40 to 45 sd below the mean
    (0.3, 1e-6, 0.0, 1.0),  # posterior of a bin with 10^10 points
    (0.9, 2.0, 0.8, 1.0),  # flat: nearly uniform
]


@pytest.mark.parametrize("loc,scale,lower,upper", TN_CASES)
def test_truncated_normal_matches_scipy(rng, loc, scale, lower, upper):
    x = sample_truncated_normal(
        np.array([loc]), np.array([scale]), np.array([lower]), np.array([upper]), 100_000, rng
    )[:, 0]
    assert np.all((x >= lower) & (x <= upper))
    ref = sps.truncnorm((lower - loc) / scale, (upper - loc) / scale, loc=loc, scale=scale)
    assert_mean_close(x, ref.mean())
    assert abs(x.std() - ref.std()) <= 0.02 * ref.std()  # sd of sd ~ 0.3% here
    assert sps.kstest(x, ref.cdf).pvalue > 1e-5


def test_zero_width_bin_is_a_point_mass():
    p = np.array([0.1, 0.2, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.9, 1.0])
    y = np.array([0, 1, 1, 1, 0, 1, 1, 1, 1, 1])
    r = bece.bayesian_ece(y, p, n_bins=5, binning="quantile", num_samples=500, model="binned")
    width = np.diff(r.stats.edges)
    assert (width == 0).any()
    assert np.all(r.confidence[:, width == 0] == r.stats.edges[:-1][width == 0])
    assert np.all(np.isfinite(r.draws))


# ----------------------------------------------------------- robustness #13, #14
@pytest.mark.parametrize("prior", [{"tau": 1e-160}, {"sigma": 1e-160}, {"tau": 1e-300},
                                   {"tau": 1e200}])
def test_sigma_tau_whose_update_is_not_finite_are_refused(prior):
    """Robustness #13: 1/tau**2 overflowed and every draw was NaN, silently
    (also in compare and the top-label posterior, which share the update)."""
    rng = np.random.default_rng(0)
    p = rng.beta(5, 1, size=200)  # empty low bins: tau = 1e200 has no data to meet there
    y = (rng.uniform(size=200) < p).astype(int)
    with pytest.raises(ValueError, match=r"sigma and tau must keep the conjugate update .* finite"):
        bece.bayesian_ece(y, p, num_samples=100, **prior, model="binned")
    with pytest.raises(ValueError, match="sigma and tau must keep"):
        bece.bayesian_top_label_ece(y, np.c_[1 - p, p], num_samples=100, **prior, model="binned")
    with pytest.raises(ValueError, match="sigma and tau must keep"):
        bece.compare(y, p, p**2, num_samples=100, **prior, model="binned")


@pytest.mark.parametrize("prior", [{"tau": 1e-150}, {"sigma": 1e-150}, {"tau": 1e150},
                                   {"sigma": 1e200}])
def test_extreme_but_finite_updates_give_finite_draws(prior):
    rng = np.random.default_rng(0)
    p = rng.beta(5, 1, size=200)
    y = (rng.uniform(size=200) < p).astype(int)
    r = bece.bayesian_ece(y, p, num_samples=200, **prior, model="binned")
    assert np.isfinite(r.draws).all()


@pytest.mark.parametrize("name", ["alpha", "sigma", "tau"])
@pytest.mark.parametrize("value", [True, np.bool_(True), "0.1", [True] * 15])
def test_prior_parameters_refuse_bools_and_strings(name, value):
    """Robustness #14: alpha=True was taken as 1.0 (n_bins, num_samples, seed refuse bools)."""
    with pytest.raises(ValueError, match=f"{name} must be a positive number or array of numbers"):
        bece.bayesian_ece([0, 1, 1], [0.2, 0.6, 0.9], **{name: value}, model="binned")
    with pytest.raises(ValueError, match=f"{name} must be a positive number or array of numbers"):
        bece.bayesian_top_label_ece([0, 1], [[0.8, 0.2], [0.3, 0.7]], **{name: value}, model="binned")
