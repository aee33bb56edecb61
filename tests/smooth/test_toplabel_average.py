"""The hierarchical top-label posterior averaged with exact calibration.

H0 (every label's curve the identity) has the exact likelihood
sum_i z_i log p_i + (1 - z_i) log(1 - p_i), checked against that sum by hand
(exact atoms, n <= 2,000); the average sets a fraction pi_0 of the draws to
0 jointly in the top-label ECE and every label's ECE; prior_odds=0 is the
hierarchical model alone, draw for draw. The calibrated / miscalibrated
checks use fixed seeds and margins far from the boundary (the Bayes factors
are e^4 or more, the log Bayes factor of the miscalibrated data about -300).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

import bece
from bece._smooth.average import DEFAULT_PRIOR_ODDS, prob_calibrated
from bece._smooth.toplabel import smooth_top_label_ece


def _data(n, k, temperature, seed):
    rng = np.random.default_rng(seed)
    logits = rng.normal(0.0, 2.0, (n, k))
    prob = special.softmax(logits, axis=1)
    truth = special.softmax(logits / temperature, axis=1)
    y = np.array([rng.choice(k, p=row) for row in truth])
    return y, prob


def test_h0_likelihood_is_the_bernoulli_sum_and_pi0_the_bayes_rule():
    y, prob = _data(800, 5, 1.0, seed=0)
    r = smooth_top_label_ece(y, prob, num_samples=500, seed=1)
    conf, z = prob.max(axis=1), (prob.argmax(axis=1) == y)
    by_hand = np.sum(np.where(z, np.log(conf), np.log1p(-conf)))
    assert r.params.log_marginal_calibrated == pytest.approx(by_hand, rel=1e-12)
    assert r.params.log_bayes_factor == pytest.approx(
        by_hand - r.params.log_marginal_smooth, rel=1e-12)
    pi0 = special.expit(r.params.log_bayes_factor + np.log(DEFAULT_PRIOR_ODDS))
    assert r.prob_calibrated == pytest.approx(pi0, rel=1e-12)
    assert r.prior_odds == DEFAULT_PRIOR_ODDS
    assert prob_calibrated(r.params.log_bayes_factor, 1.0) > 0.9  # calibrated data


def test_the_average_zeroes_whole_draws_and_prior_odds_zero_is_the_model_alone():
    y, prob = _data(800, 5, 1.0, seed=0)
    alone = smooth_top_label_ece(y, prob, num_samples=2000, seed=1, prior_odds=0)
    avg = smooth_top_label_ece(y, prob, num_samples=2000, seed=1, prior_odds=1.0)
    assert alone.prob_calibrated == 0.0 and np.all(alone.draws > 0)
    zero = avg.draws == 0.0
    # each draw is 0 with probability pi0: binomial, |Z| < 5 (false alarm 6e-7)
    pi0, s = avg.prob_calibrated, zero.size
    assert abs(zero.sum() - s * pi0) < 5 * np.sqrt(s * pi0 * (1 - pi0))
    # zeroed jointly: every label's ECE, and the bins' accuracy is their confidence
    assert np.all(avg.label_draws[zero] == 0.0)
    np.testing.assert_array_equal(avg.accuracy[zero], avg.confidence[zero])
    np.testing.assert_array_equal(avg.label_accuracy[zero], avg.label_confidence[zero])
    # the other draws are the model's own (same seed: same fit and draws)
    np.testing.assert_array_equal(avg.draws[~zero], alone.draws[~zero])
    lo, _ = avg.interval(0.9)
    assert lo == 0.0 and alone.interval(0.9)[0] > 0.0


def test_miscalibrated_data_get_no_mass_at_zero_and_the_default_is_averaged():
    y, prob = _data(1500, 5, 0.5, seed=3)  # truth sharper than the predictions: under-confident
    r = bece.bayesian_top_label_ece(y, prob, num_samples=1000, seed=2)
    assert r.model == "smooth-top-label" and r.prior_odds == DEFAULT_PRIOR_ODDS
    assert r.params.log_bayes_factor < -50 and r.prob_calibrated < 1e-20
    assert np.all(r.draws > 0)
    assert "P(calibrated)" in str(r)
    b = bece.bayesian_top_label_ece(y, prob, num_samples=1000, seed=2, model="binned")
    assert b.prob_calibrated is None and "P(calibrated)" not in str(b)


def test_prior_odds_is_checked_and_belongs_to_the_smooth_model():
    y, prob = _data(200, 3, 1.0, seed=4)
    with pytest.raises(ValueError, match="prior_odds must be a finite number >= 0"):
        smooth_top_label_ece(y, prob, prior_odds=-1.0)
    with pytest.raises(ValueError, match="prior_odds: not an option of BinnedModel"):
        bece.bayesian_top_label_ece(y, prob, model="binned", prior_odds=0.1)
    with pytest.raises(ValueError, match="alpha: not an option of SmoothTopLabelModel.*"
                                         "alpha is an option of BinnedModel"):
        bece.bayesian_top_label_ece(y, prob, alpha=0.1)
    with pytest.raises(ValueError, match="sigma is an option of BinnedModel"):
        bece.bayesian_ece(y == prob.argmax(1), prob.max(1), sigma=0.1)
