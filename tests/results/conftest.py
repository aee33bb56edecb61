"""A binned BayesianECE result shared by the tests of bece._results."""

from __future__ import annotations

import pytest

import bece

from ..conftest import simulate_binary


@pytest.fixture
def result(rng):
    y, p = simulate_binary(400, rng, power=1.5)
    return bece.bayesian_ece(y, p, n_bins=8, num_samples=4000, seed=5, model="binned")
