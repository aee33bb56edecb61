"""Shared by the regression tests: heteroscedastic forecasts with a known truth."""

from __future__ import annotations

import numpy as np


def hetero(rng, n):
    """Heteroscedastic regression: x ~ U(-2, 2), y ~ N(2 sin x, (0.5 + 0.5|x|)^2)."""
    x = rng.uniform(-2, 2, n)
    mu = 2 * np.sin(x)
    sd = 0.5 + 0.5 * np.abs(x)
    return mu, sd, mu + sd * rng.normal(size=n)
