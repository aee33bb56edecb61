"""bece._smooth.fit: the Laplace fit of the smooth model on its hyper-parameter grid.

Deterministic parts are checked against independent implementations: the
posterior mode by its optimality on the full design matrix (the Newton
step there; not against another solver's stopping point, which moves with
the scipy version), the block Hessian against the dense one, the hyper-grid masses against
``scipy.stats.expon``, the importance ratios against
``scipy.stats.multivariate_normal``; the Laplace evidence against an
independent importance-sampling estimate.

Stochastic tests state their false-alarm rates: Z = 5 standard errors for
Monte Carlo comparisons (5.7e-7 each, two-sided).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special
from scipy import stats as sps

from bece._base.laplace import exponential_grid
from bece._smooth.draws import draw_loglik
from bece._smooth.fit import N_LAMBDA, N_TAU, _newton, fit_smooth

from .conftest import _problem

Z = 5.0


def test_newton_mode_and_hessian_match_scipy_on_the_full_design(rng):
    at, basis = _problem(rng)
    lam, tau = 0.7, 0.3
    prec = 1.0 / np.concatenate([[1.0, 0.5], np.ones(basis.n_spline + 15)]) ** 2
    col = np.concatenate([[1.0, 1.0], np.full(basis.n_spline, lam), np.full(15, tau)])
    X = basis.design(at.x, at.bin) * col
    c, t = at.successes.astype(float), at.trials.astype(float)

    nonempty, starts = np.unique(at.bin, return_index=True)
    theta, H, obj = _newton(basis.design(at.x) * col[:basis.n_smooth], tau, at.bin, starts,
                            nonempty, 15, at.x, c, t, prec, np.zeros(X.shape[1]))
    # the objective, gradient and Hessian on the full design, written out here
    f = at.x + X @ theta
    assert obj == pytest.approx(c @ f - t @ np.logaddexp(0, f) - 0.5 * prec @ theta**2, rel=1e-12)
    grad = X.T @ (c - t * special.expit(f)) - prec * theta
    w = t * special.expit(f) * special.expit(-f)
    dense = (X.T * w) @ X + np.diag(prec)
    np.testing.assert_allclose(H, dense, rtol=1e-10, atol=1e-10)
    # theta is the mode: the objective is strictly concave, so its maximiser is
    # unique and theta's distance to it is the Newton step (to first order).
    # _newton stops once the Newton decrement g' H^-1 g < 1e-10, so that step
    # is at most sqrt(1e-10 / lambda_min(H)) in every coordinate: a certificate
    # from the full design, not a comparison with another solver's stopping point
    step = np.linalg.solve(dense, grad)
    assert grad @ step < 1e-10
    bound = np.sqrt(1e-10 / np.linalg.eigvalsh(dense)[0])
    assert np.abs(step).max() <= bound < 1e-3


def test_hyper_grid_masses_are_the_exponential_prior():
    values, mass = exponential_grid(0.5, 7)
    mids = np.sqrt(values[:-1] * values[1:])
    cdf = sps.expon(scale=0.5).cdf(mids)
    np.testing.assert_allclose(mass, np.diff(np.concatenate([[0.0], cdf, [1.0]])), rtol=1e-12)
    assert mass.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(values[[0, -1]], [0.005, 5.0])


def test_fit_grid_and_weights(rng):
    at, _ = _problem(rng)
    post = fit_smooth(at)
    assert post.lambdas.size == N_LAMBDA * N_TAU
    assert post.weights.sum() == pytest.approx(1.0) and post.prior_mass.sum() == pytest.approx(1.0)
    # H0's likelihood is the identity curve's
    c = at.successes
    assert post.log_marginal_calibrated == pytest.approx(
        np.sum(sps.bernoulli.logpmf(c, special.expit(at.x))), rel=1e-12)
    no_bins = fit_smooth(at, bin_scale=None)
    assert no_bins.basis.n_bins == 0 and no_bins.lambdas.size == N_LAMBDA


def test_laplace_evidence_agrees_with_importance_sampling(rng):
    """Laplace log p(data | eta) vs an independent IS estimate (multivariate t
    proposal, 20,000 draws) at one grid point. Allowance: 0.05 for the Laplace
    error (measured: < 0.01 at this n) plus Z IS standard errors."""
    at, _ = _problem(rng, n=400)
    post = fit_smooth(at)
    k = int(np.argmax(post.weights))
    cov = np.linalg.inv(post.chol[k] @ post.chol[k].T)
    q = sps.multivariate_t(loc=post.modes[k], shape=cov, df=7)
    th = q.rvs(size=20_000, random_state=np.random.default_rng(1))
    beta = th * post.column_scale(np.full(th.shape[0], post.lambdas[k]),
                                  np.full(th.shape[0], post.taus[k]))
    ll = draw_loglik(at, post.basis, beta)
    prior = sps.norm(0, post.prior_scales).logpdf(th).sum(axis=1)
    lw = ll + prior - q.logpdf(th)
    est = special.logsumexp(lw) - np.log(lw.size)
    w = np.exp(lw - lw.max())
    se = np.std(w) / np.sqrt(w.size) / np.mean(w)  # delta method on the log
    assert abs(post.log_evidence[k] - est) <= 0.05 + Z * se


def test_importance_ratio_is_prior_over_proposal(rng):
    at, _ = _problem(rng)
    post = fit_smooth(at)
    g = np.random.default_rng(3)
    beta, lam, tau, log_ratio = post.sample(50, g)
    # recover the component of each draw from its hyper-parameters
    k = np.array([np.flatnonzero((post.lambdas == la) & (post.taus == ta))[0] for la, ta in zip(lam, tau)])
    theta = beta / post.column_scale(lam, tau)
    for j in range(50):
        kk = k[j]
        cov = np.linalg.inv(post.chol[kk] @ post.chol[kk].T)
        expected = (sps.norm(0, post.prior_scales).logpdf(theta[j]).sum() + np.log(post.prior_mass[kk])
                    - np.log(post.weights[kk])
                    - sps.multivariate_normal(post.modes[kk], cov).logpdf(theta[j]))
        assert log_ratio[j] == pytest.approx(expected, abs=1e-8)


def test_mixture_draws_have_the_components_moments(rng):
    at, _ = _problem(rng)
    post = fit_smooth(at)
    beta, lam, tau, _ = post.sample(40_000, np.random.default_rng(4))
    theta = beta / post.column_scale(lam, tau)
    mean = post.weights @ post.modes
    # mixture mean, coordinate-wise, within Z standard errors
    se = theta.std(axis=0) / np.sqrt(theta.shape[0])
    assert np.all(np.abs(theta.mean(axis=0) - mean) <= Z * se)


@pytest.mark.parametrize("n_knots", [1, 2])
def test_fewer_than_three_knots_are_refused(n_knots):
    """Robustness #17: n_knots = 1 or 2 leaves no non-linear spline function
    and silently equalled the linear model."""
    import bece

    rng = np.random.default_rng(0)
    p = rng.uniform(size=300)
    y = (rng.uniform(size=300) < p).astype(int)
    with pytest.raises(ValueError, match=f"n_knots must be an integer >= 3, got {n_knots}"):
        bece.calibration_test(y, p, n_knots=n_knots)
    with pytest.raises(ValueError, match="n_knots must be an integer >= 3"):
        bece._smooth.posterior.smooth_ece(y, p, n_knots=n_knots, num_samples=100)
