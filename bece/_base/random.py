"""Randomness: numpy Generators from seeds, and Dirichlet draws."""

from __future__ import annotations

import numpy as np

from .typing import Seed

__all__ = [
    "as_generator",
    "sample_dirichlet",
]


def as_generator(seed: Seed) -> np.random.Generator:
    """A numpy Generator from an int seed or a Generator (used as is)."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed must be a non-negative int or a numpy Generator, got {seed!r}")
    if seed < 0:
        raise ValueError(f"seed must be a non-negative int or a numpy Generator, got {seed}")
    return np.random.default_rng(int(seed))


def sample_dirichlet(concentration: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """Draws of shape ``(size,) + concentration.shape`` from a Dirichlet.

    Normalised independent Gamma(concentration, 1) variables, summed over
    all axes of ``concentration``. Valid when at least one concentration is
    >= 1 (a cell with data), so that the normaliser is positive.
    """
    g = rng.standard_gamma(concentration, size=(size,) + concentration.shape)
    axes = tuple(range(1, g.ndim))
    g /= g.sum(axis=axes, keepdims=True)
    return g
