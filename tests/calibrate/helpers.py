"""Synthetic scores for the recalibrator tests (no real network outputs here)."""

from __future__ import annotations

import numpy as np
from scipy import special
from sklearn.base import BaseEstimator, ClassifierMixin


def logits_with_temperature(n: int, k: int, rng: np.random.Generator, temperature: float,
                            scale: float = 3.0) -> tuple[np.ndarray, np.ndarray]:
    """Logits z ~ N(0, scale^2) and labels drawn from softmax(z / temperature)."""
    z = rng.normal(scale=scale, size=(n, k))
    p = special.softmax(z / temperature, axis=1)
    y = (rng.uniform(size=(n, 1)) > p.cumsum(axis=1)).sum(axis=1)
    return z, np.minimum(y, k - 1)


def mean_nll(logits: np.ndarray, y: np.ndarray) -> float:
    """Mean negative log-likelihood, written out with scipy's log_softmax."""
    return float(-special.log_softmax(logits, axis=1)[np.arange(y.size), y].mean())


class PassThrough(ClassifierMixin, BaseEstimator):
    """A 'classifier' whose decision function is its input: lets scikit-learn's
    CalibratedClassifierCV recalibrate given logits."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def decision_function(self, X):
        return np.asarray(X)

    def predict(self, X):
        x = np.asarray(X)
        return self.classes_[(x > 0).astype(int) if x.ndim == 1 else x.argmax(axis=1)]
