"""bece._smooth.average: the smooth model averaged with exact calibration.

Stochastic checks use fixed seeds; the fraction of draws set to 0 is
compared with pi0 within 4.5 binomial standard errors (false-alarm rate
below 1e-5).
"""

from __future__ import annotations

import numpy as np
import pytest

from bece._smooth.average import DEFAULT_PRIOR_ODDS, average_with_calibrated, prob_calibrated
from bece._smooth.posterior import smooth_ece

from ..conftest import simulate_binary


def test_prob_calibrated_by_hand():
    assert prob_calibrated(0.0, 1.0) == pytest.approx(0.5)
    assert prob_calibrated(0.0, 0.25) == pytest.approx(0.2)
    assert prob_calibrated(np.log(3.0), 1.0) == pytest.approx(0.75)
    assert prob_calibrated(50.0, 0.0) == 0.0


def test_draws_of_the_identity_model_are_exact_calibration():
    y, p = simulate_binary(400, np.random.default_rng(1), power=1.0)  # calibrated
    alone = smooth_ece(y, p, num_samples=4000, seed=2, prior_odds=0, zero_gap_prior=0)
    assert alone.prob_calibrated == 0.0 and np.all(alone.draws > 0)
    avg = average_with_calibrated(alone, 1.0, np.random.default_rng(3))
    pi0 = prob_calibrated(alone.params.log_bayes_factor, 1.0)
    assert avg.prob_calibrated == pytest.approx(pi0) and avg.prior_odds == 1.0
    zero = avg.draws == 0
    se = np.sqrt(pi0 * (1 - pi0) / zero.size)
    assert abs(zero.mean() - pi0) < 4.5 * se
    # H0 draws: every bin's accuracy its mean confidence, the identity curve
    np.testing.assert_array_equal(avg.accuracy[zero], avg.confidence[zero])
    np.testing.assert_array_equal(avg.curve[zero], np.broadcast_to(avg.curve_grid, avg.curve[zero].shape))
    assert np.all(avg.coefficients[zero] == 0) and np.all(avg.smoothness[zero] == 0)
    # the other draws are the smooth model's, untouched
    np.testing.assert_array_equal(avg.draws[~zero], alone.draws[~zero])
    np.testing.assert_array_equal(avg.accuracy[~zero], alone.accuracy[~zero])


def test_calibrated_data_get_an_interval_from_zero_and_miscalibrated_do_not():
    y, p = simulate_binary(2000, np.random.default_rng(4), power=1.0)
    r = smooth_ece(y, p, num_samples=4000, seed=5)
    assert r.prior_odds == DEFAULT_PRIOR_ODDS
    assert r.prob_calibrated > 0.05 and r.interval(0.9)[0] == 0.0
    y, p = simulate_binary(2000, np.random.default_rng(4), power=2.0)
    r = smooth_ece(y, p, num_samples=4000, seed=5)
    assert r.prob_calibrated < 1e-6 and np.all(r.draws > 0)
    idata = r.to_inference_data()
    assert "prob_calibrated" in idata.posterior.attrs


def test_same_seed_same_draws_and_prior_odds_checked():
    y, p = simulate_binary(300, np.random.default_rng(6), power=1.0)
    a = smooth_ece(y, p, num_samples=500, seed=7)
    b = smooth_ece(y, p, num_samples=500, seed=7)
    np.testing.assert_array_equal(a.draws, b.draws)
    for bad in (-1.0, np.inf, np.nan, "1", True):
        with pytest.raises(ValueError, match="prior_odds must be"):
            smooth_ece(y, p, num_samples=100, prior_odds=bad)
