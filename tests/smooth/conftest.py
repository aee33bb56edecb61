"""Shared by the tests of bece.smooth: a fitted small problem, and N binary
predictions with the smooth posterior of their fine-grid atoms."""

from __future__ import annotations

import numpy as np
import pytest

from bece._smooth.atoms import make_atoms
from bece._smooth.basis import SmoothBasis
from bece._smooth.posterior import smooth_ece
from bece._stats import make_binning

from ..conftest import _data, simulate_binary

N = 20_000
S = 1500


def _problem(rng, n=300):
    z, p = _data(n, rng)
    at = make_atoms(z, p, make_binning(p, 15), None)
    basis = SmoothBasis.from_logits(at.x, at.trials.astype(float), 10, 15)
    return at, basis


@pytest.fixture(scope="module")
def binary():
    y, p = simulate_binary(N, np.random.default_rng(7), power=2.0)
    p[:5] = 1.0  # the top edge
    p[5:8] = 0.0
    return y, p, smooth_ece(y, p, n_bins=15, grid=128, num_samples=S, seed=3)
