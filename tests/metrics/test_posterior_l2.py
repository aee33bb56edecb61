"""bece._metrics.posterior_l2: l2 ECE draws from the per-bin draws of a Bayesian ECE."""

from __future__ import annotations

import numpy as np
import pytest

import bece
from bece.metrics import l2_ece_draws

from ..conftest import simulate_binary


def test_same_draws_as_l1_and_loop(rng):
    y, p = simulate_binary(800, rng, power=1.7)
    post = bece.bayesian_ece(y, p, model="binned", num_samples=500)
    d2 = l2_ece_draws(post)
    # the l1 draws are sum_m pi_m |a_m - c_m| of the same per-bin draws
    l1 = np.nansum(post.weight * np.abs(post.accuracy - post.confidence), axis=1)
    assert np.allclose(l1, post.draws, atol=1e-14, rtol=0)
    for s in (0, 17, 499):
        want = np.sqrt(sum(post.weight[s, m] * (post.accuracy[s, m] - post.confidence[s, m]) ** 2
                           for m in range(post.weight.shape[1]) if post.weight[s, m] > 0))
        assert d2[s] == pytest.approx(want, abs=1e-14)
    assert np.all(d2 >= post.draws - 1e-15)  # Jensen: l2 >= l1 for weights summing to 1


def test_concentrates_on_plugin_l2(rng):
    # n = 200,000: both estimate the same population l2 ECE; their difference (prior,
    # O(M/n) noise terms) is far below 4 posterior sd (deterministic: fixed seeds)
    y, p = simulate_binary(200_000, rng, power=1.5)
    d2 = l2_ece_draws(bece.bayesian_ece(y, p, model="binned", num_samples=2000))
    plug = bece.metrics.l2_calibration_error(y, p)
    assert abs(d2.mean() - plug) < 4 * d2.std()


def test_empty_bins_and_bad_input(rng):
    y, p = simulate_binary(200, rng)
    p = 0.5 + 0.3 * (p - 0.5)  # bins near 0 and 1 empty
    post = bece.bayesian_ece(y, p, model="binned", num_samples=200)
    assert np.isfinite(l2_ece_draws(post)).all()
    with pytest.raises(ValueError, match="posterior must be a Bayesian ECE result"):
        l2_ece_draws(np.zeros(3))
