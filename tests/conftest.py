"""Shared fixtures: small synthetic classifier outputs with known structure."""

from __future__ import annotations

import numpy as np
import pytest


def simulate_binary(n: int, rng: np.random.Generator, power: float = 1.0):
    """Confidences p ~ U(0, 1) and outcomes with P(y=1 | p) = p**power."""
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p**power).astype(np.int64)
    return y, p


def simulate_multiclass(n: int, k: int, rng: np.random.Generator, temperature: float = 1.0):
    """Softmax probabilities with labels drawn from softmax(logits / temperature)."""
    logits = rng.normal(scale=3.0, size=(n, k))
    z = logits - logits.max(axis=1, keepdims=True)
    prob = np.exp(z)
    prob /= prob.sum(axis=1, keepdims=True)
    zt = logits / temperature
    zt -= zt.max(axis=1, keepdims=True)
    truth = np.exp(zt)
    truth /= truth.sum(axis=1, keepdims=True)
    cum = truth.cumsum(axis=1)
    y = (rng.uniform(size=(n, 1)) > cum).sum(axis=1)
    return np.minimum(y, k - 1), prob


def _data(n, rng, power=1.5, a=1.0, b=1.0):
    """Confidences p ~ Beta(a, b) and outcomes with P(z=1 | p) = p**power
    (the smooth model's tests)."""
    p = rng.beta(a, b, size=n)
    z = (rng.uniform(size=n) < p**power).astype(np.int64)
    return z, p


@pytest.fixture
def rng():
    return np.random.default_rng(20261125)
