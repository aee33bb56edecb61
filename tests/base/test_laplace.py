"""bece.base.laplace: draws of a Laplace mixture and their importance ratios,
against scipy's multivariate Normal densities."""

from __future__ import annotations

import numpy as np
from scipy import stats

from bece.base.laplace import laplace_mixture_draws


def test_draws_and_log_ratios_are_the_mixtures():
    rng = np.random.default_rng(0)
    p, k = 3, 2
    modes = rng.normal(size=(k, p))
    hess = [a @ a.T + p * np.eye(p) for a in rng.normal(size=(k, p, p))]
    chol = np.stack([np.linalg.cholesky(h) for h in hess])
    weights, mass = np.array([0.3, 0.7]), np.array([0.5, 0.5])
    scales = np.array([1.0, 0.5, 2.0])
    comp, theta, log_ratio = laplace_mixture_draws(modes, chol, weights, mass, scales, 4000,
                                                   np.random.default_rng(1))
    prior = stats.multivariate_normal(np.zeros(p), np.diag(scales**2))
    for j in range(k):
        sel = comp == j
        q = stats.multivariate_normal(modes[j], np.linalg.inv(hess[j]))
        expected = prior.logpdf(theta[sel]) - q.logpdf(theta[sel]) + np.log(mass[j] / weights[j])
        np.testing.assert_allclose(log_ratio[sel], expected, rtol=1e-10, atol=1e-10)
        # each component's draws have its mean and covariance (4 standard errors:
        # a false alarm below 1e-3 per coordinate)
        n = sel.sum()
        cov = np.linalg.inv(hess[j])
        assert np.all(np.abs(theta[sel].mean(axis=0) - modes[j]) < 4 * np.sqrt(np.diag(cov) / n))
    # the components in proportion to the weights (4 standard errors)
    assert abs((comp == 1).mean() - 0.7) < 4 * np.sqrt(0.21 / 4000)
