"""bece.smooth: atoms, the Laplace fit, Bayesian-bootstrap draws, results, NUTS cross-check.

Deterministic parts are checked against independent implementations: the
posterior mode against ``scipy.optimize.minimize`` on the full design matrix,
the block Hessian against the dense one, the hyper-grid masses against
``scipy.stats.expon``, the importance ratios against
``scipy.stats.multivariate_normal``, the ECE draws against a naive loop fed
the same bootstrap weights, the fine-grid statistics against numpy sums.

Stochastic tests state their false-alarm rates: Z = 5 standard errors for
Monte Carlo comparisons (5.7e-7 each, two-sided); the coverage test's
binomial bound is computed from the binomial distribution at the nominal
coverage 0.9 (below).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy import optimize, special
from scipy import stats as sps

import bece
from bece.stats.binning import make_binning
from bece.smooth.fit import N_LAMBDA, N_TAU, _exponential_grid, _newton, fit_smooth
from bece.smooth.basis import SmoothBasis, logit_confidence
from bece.results.ece import SmoothBayesianECE
from bece.smooth.draws import draw_loglik, ece_draws, importance_draws
from bece.smooth.atoms import make_atoms
from bece.smooth.posterior import smooth_ece

Z = 5.0


def _data(n, rng, power=1.5, a=1.0, b=1.0):
    p = rng.beta(a, b, size=n)
    z = (rng.uniform(size=n) < p**power).astype(np.int64)
    return z, p


# ------------------------------------------------------------------ atoms
def test_exact_atoms_keep_every_prediction_sorted_by_bin(rng):
    z, p = _data(500, rng)
    bins = make_binning(p, 15)
    at = make_atoms(z, p, bins, None)
    assert at.exact and at.n == 500 and np.all(np.diff(at.bin) >= 0)
    np.testing.assert_array_equal(np.sort(at.p), np.sort(p))
    assert at.successes.sum() == z.sum()
    np.testing.assert_array_equal(at.bin, bins.index(at.p))
    np.testing.assert_allclose(at.x, special.logit(at.p))


@pytest.mark.parametrize("binning", ["uniform", "quantile"])
def test_grid_atoms_preserve_bin_statistics(rng, binning):
    z, p = _data(20_000, rng)
    p[:7] = 1.0  # the top edge
    bins = make_binning(p, 15, binning)
    at = make_atoms(z, p, bins, 16)
    stats = bece.CalibrationStats.from_arrays(z, p, n_bins=15, binning=bins)
    assert at.trials.sum() == 20_000 and at.grid == 16
    np.testing.assert_array_equal(np.bincount(at.bin, weights=at.trials, minlength=15),
                                  stats.bin_counts)
    np.testing.assert_array_equal(np.bincount(at.bin, weights=at.successes, minlength=15),
                                  stats.counts[1])
    np.testing.assert_allclose(np.bincount(at.bin, weights=at.trials * at.p, minlength=15),
                               stats.sum_p, rtol=1e-12)
    assert np.all((at.lower <= at.p) & (at.p <= at.upper))
    edges = bins.edges
    assert np.all(at.lower >= edges[at.bin] - 1e-15) and np.all(at.upper <= edges[at.bin + 1] + 1e-15)


def test_logit_clip_only_affects_the_curve():
    x = logit_confidence(np.array([0.0, 0.5, 1.0]))
    np.testing.assert_allclose(x, [special.logit(1e-6), 0.0, special.logit(1 - 1e-6)])


# ------------------------------------------------------------ Laplace fit
def _problem(rng, n=300):
    z, p = _data(n, rng)
    at = make_atoms(z, p, make_binning(p, 15), None)
    basis = SmoothBasis.from_logits(at.x, at.trials.astype(float), 10, 15)
    return at, basis


def test_newton_mode_and_hessian_match_scipy_on_the_full_design(rng):
    at, basis = _problem(rng)
    lam, tau = 0.7, 0.3
    prec = 1.0 / np.concatenate([[1.0, 0.5], np.ones(basis.n_spline + 15)]) ** 2
    col = np.concatenate([[1.0, 1.0], np.full(basis.n_spline, lam), np.full(15, tau)])
    X = basis.design(at.x, at.bin) * col
    c, t = at.successes.astype(float), at.trials.astype(float)

    def neg(th):
        f = at.x + X @ th
        val = -(c @ f - t @ np.logaddexp(0, f)) + 0.5 * prec @ th**2
        grad = -X.T @ (c - t * special.expit(f)) + prec * th
        return val, grad

    ref = optimize.minimize(neg, np.zeros(X.shape[1]), jac=True, method="L-BFGS-B",
                            options={"ftol": 1e-15, "gtol": 1e-10, "maxiter": 10_000})
    nonempty, starts = np.unique(at.bin, return_index=True)
    theta, H, obj = _newton(basis.design(at.x) * col[:basis.n_smooth], tau, at.bin, starts,
                            nonempty, 15, at.x, c, t, prec, np.zeros(X.shape[1]))
    np.testing.assert_allclose(theta, ref.x, atol=2e-5)
    assert obj == pytest.approx(-ref.fun, abs=1e-8)
    f = at.x + X @ theta
    w = t * special.expit(f) * special.expit(-f)
    np.testing.assert_allclose(H, (X.T * w) @ X + np.diag(prec), rtol=1e-10, atol=1e-10)


def test_hyper_grid_masses_are_the_exponential_prior():
    values, mass = _exponential_grid(0.5, 7)
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
    c, t = at.successes, at.trials
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
    k = np.array([np.flatnonzero((post.lambdas == l) & (post.taus == t))[0] for l, t in zip(lam, tau)])
    theta = beta / post.column_scale(lam, tau)
    for j in range(50):
        kk = k[j]
        cov = np.linalg.inv(post.chol[kk] @ post.chol[kk].T)
        expected = (sps.norm(0, post.prior_scales).logpdf(theta[j]).sum() + np.log(post.prior_mass[kk])
                    - np.log(post.weights[kk])
                    - sps.multivariate_normal(post.modes[kk], cov).logpdf(theta[j]))
        assert log_ratio[j] == pytest.approx(expected, abs=1e-8)


def test_importance_correction_is_reliable_and_estimates_the_evidence(rng):
    at, _ = _problem(rng, n=1000)
    post = fit_smooth(at)
    beta, lam, tau, corrected = importance_draws(at, post, 4000, np.random.default_rng(8))
    assert beta.shape == (4000, post.basis.n_coef) and lam.shape == tau.shape == (4000,)
    assert corrected.pareto_k < 0.7 and corrected.is_ess > 0.5 * 4000
    # IS and Laplace marginal likelihoods agree to the Laplace error (measured 0.01)
    assert abs(corrected.log_marginal_is - post.log_marginal) < 0.1
    assert corrected.log_marginal_smooth == corrected.log_marginal_is
    assert np.isnan(post.log_marginal_is) and post.log_marginal_smooth == post.log_marginal


def test_mixture_draws_have_the_components_moments(rng):
    at, _ = _problem(rng)
    post = fit_smooth(at)
    beta, lam, tau, _ = post.sample(40_000, np.random.default_rng(4))
    theta = beta / post.column_scale(lam, tau)
    mean = post.weights @ post.modes
    # mixture mean, coordinate-wise, within Z standard errors
    se = theta.std(axis=0) / np.sqrt(theta.shape[0])
    assert np.all(np.abs(theta.mean(axis=0) - mean) <= Z * se)


# --------------------------------------------------------------- draws
class _FixedRng:
    """Stands in for a Generator: returns given bootstrap weights."""

    def __init__(self, g):
        self.g = g
        self.at = 0

    def _take(self, size):
        out = self.g[self.at:self.at + size[0]]
        self.at += size[0]
        return out.copy()

    def standard_exponential(self, size):
        return self._take(size)

    def standard_gamma(self, shape, size):
        return self._take(size)


@pytest.mark.parametrize("grid", [None, 8])
def test_ece_draws_match_a_naive_loop(rng, grid):
    z, p = _data(600, rng)
    p[:3] = [0.0, 1.0, 0.5]
    bins = make_binning(p, 6)
    at = make_atoms(z, p, bins, grid)
    post = fit_smooth(at)
    beta, *_ = post.sample(7, np.random.default_rng(5))
    g = np.random.default_rng(6).gamma(at.trials.astype(float), size=(7, at.p.size))
    ece, acc, conf, wt, bound = ece_draws(at, post.basis, beta, _FixedRng(g), chunk_elems=3 * at.p.size)
    design = post.basis.design(at.x, at.bin)
    for s in range(7):
        w = g[s] / g[s].sum()
        curve = special.expit(at.x + design @ beta[s])
        total = 0.0
        for m in range(6):
            inside = at.bin == m
            total += abs(np.sum(w[inside] * (curve[inside] - at.p[inside])))
            np.testing.assert_allclose(wt[s, m], w[inside].sum(), rtol=1e-12)
            if inside.any():
                np.testing.assert_allclose(acc[s, m], np.sum(w[inside] * curve[inside]) / w[inside].sum(),
                                           rtol=1e-10)
                np.testing.assert_allclose(conf[s, m], np.sum(w[inside] * at.p[inside]) / w[inside].sum(),
                                           rtol=1e-10)
        assert ece[s] == pytest.approx(total, rel=1e-10)
        if grid:
            xl, xu = logit_confidence(at.lower), logit_confidence(at.upper)
            osc = np.abs(special.expit(xu + post.basis.design(xu, at.bin) @ beta[s])
                         - special.expit(xl + post.basis.design(xl, at.bin) @ beta[s]))
            assert bound[s] == pytest.approx(np.sum(w * (at.upper - at.lower + osc)), rel=1e-10)
    assert not grid or bound.max() < 0.1


def test_empty_bins_have_zero_weight_and_the_curve_at_their_centre(rng):
    p = rng.uniform(0.5, 1.0, size=300)  # bins below 0.5 are empty
    z = (rng.uniform(size=300) < p).astype(int)
    r = smooth_ece(z, p, n_bins=10, num_samples=500, seed=1)
    assert np.all(r.weight[:, :5] == 0)
    np.testing.assert_allclose(r.confidence[:, :5], np.broadcast_to(np.arange(5) / 10 + 0.05, (500, 5)))
    assert np.all((r.accuracy[:, :5] > 0) & (r.accuracy[:, :5] < 1))
    np.testing.assert_allclose(r.weight.sum(axis=1), 1.0)


# ---------------------------------------------------------------- results
def test_bayesian_ece_model_smooth_is_smooth_ece(rng):
    z, p = _data(400, rng)
    r = bece.bayesian_ece(z, p, model="smooth", num_samples=800, seed=3)
    s = smooth_ece(z, p, num_samples=800, seed=3)
    assert isinstance(r, SmoothBayesianECE) and isinstance(r, bece.BayesianECE)
    assert r.model == "smooth" and r.method == "laplace"
    np.testing.assert_array_equal(r.draws, s.draws)
    assert r.accuracy.shape == r.confidence.shape == r.weight.shape == (800, 15)
    assert r.plugin == pytest.approx(bece.expected_calibration_error(z, p))
    binned = bece.bayesian_ece(z, p, num_samples=800)
    np.testing.assert_array_equal(r.stats.counts, binned.stats.counts)


def test_top_label_input_is_the_outcome_confidence_pair(rng):
    logits = rng.normal(size=(500, 4)) * 2
    prob = special.softmax(logits, axis=1)
    y = np.array([rng.choice(4, p=row) for row in special.softmax(1.5 * logits, axis=1)])
    conf, correct = prob.max(axis=1), (prob.argmax(axis=1) == y).astype(int)
    a = smooth_ece(y, prob, num_samples=300, seed=2)
    b = smooth_ece(correct, conf, num_samples=300, seed=2)
    np.testing.assert_array_equal(a.draws, b.draws)
    c = smooth_ece(y, conf, y_pred=prob.argmax(axis=1), num_samples=300, seed=2)
    np.testing.assert_array_equal(a.draws, c.draws)


def test_inference_data_holds_the_curve(rng):
    z, p = _data(300, rng)
    r = smooth_ece(z, p, num_samples=200, seed=0)
    idata = r.to_inference_data()
    post = idata.posterior
    assert post["curve"].shape == (1, 200, r.curve_grid.size)
    np.testing.assert_allclose(post["curve_confidence"].values, r.curve_grid)
    for name in ("ece", "accuracy", "intercept", "slope", "smoothness", "bin_sd"):
        assert name in post
    assert post.attrs["model"] == "smooth" and np.isfinite(post.attrs["log_bayes_factor_calibrated"])
    assert np.all((r.curve > 0) & (r.curve < 1))
    assert "smooth" in repr(r)


def test_same_seed_same_draws_and_generator_seed(rng):
    z, p = _data(200, rng)
    a = smooth_ece(z, p, num_samples=300, seed=7)
    b = smooth_ece(z, p, num_samples=300, seed=7)
    c = smooth_ece(z, p, num_samples=300, seed=np.random.default_rng(7))
    np.testing.assert_array_equal(a.draws, b.draws)
    assert c.draws.shape == (300,)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"grid": "fine"}, "grid"),
        ({"grid": 0}, "grid"),
        ({"n_knots": 0}, "n_knots"),
        ({"smoothness_scale": 0.0}, "smoothness_scale"),
        ({"bin_scale": float("nan")}, "bin_scale"),
        ({"slope_scale": True}, "slope_scale"),
        ({"intercept_scale": -1}, "intercept_scale"),
        ({"num_samples": 0}, "num_samples"),
        ({"seed": -1}, "seed"),
    ],
)
def test_bad_options_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        smooth_ece([0, 1, 1], [0.2, 0.7, 0.9], **kwargs)


def test_bad_data_and_binned_options_raise():
    with pytest.raises(ValueError, match="y_prob contains NaN"):
        smooth_ece([0, 1], [0.2, np.nan])
    with pytest.raises(ValueError, match="same length"):
        smooth_ece([0, 1, 1], [0.2, 0.4])
    with pytest.raises(ValueError, match="alpha"):
        bece.bayesian_ece([0, 1], [0.2, 0.4], model="smooth", alpha=1.0)
    with pytest.raises(ValueError, match="'binned' or 'smooth'"):
        bece.bayesian_ece([0, 1], [0.2, 0.4], model="spline")
    with pytest.raises(ValueError, match="sigma"):
        bece.cross_check([0, 1], [0.2, 0.4], model="smooth", sigma=0.1)


def test_few_distinct_confidences_give_a_linear_curve():
    r = smooth_ece([0, 1, 1, 0, 1, 1], [0.3, 0.3, 0.8, 0.8, 0.8, 0.3], num_samples=200)
    assert r.params.basis.n_spline == 0 and np.isfinite(r.draws).all()


def test_fast_path_does_not_import_jax():
    code = ("import sys, numpy as np, bece\n"
            "p = np.linspace(0.01, 0.99, 300); y = (np.arange(300) % 3 == 0)\n"
            "bece.bayesian_ece(y, p, model='smooth', num_samples=100)\n"
            "print(sorted(m for m in ('jax', 'numpyro') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ---------------------------------------------------------- large n, grid
def test_grid_path_agrees_with_the_exact_path(rng):
    """The fine-grid posterior mean equals the exact one within the grid's
    bound plus Z Monte Carlo standard errors (independent draws)."""
    z, p = _data(8000, rng)
    exact = smooth_ece(z, p, grid=None, num_samples=3000, seed=1)
    fine = smooth_ece(z, p, grid=128, num_samples=3000, seed=2)
    assert 0 < fine.params.grid_error < 2.5e-3 and exact.params.grid_error == 0
    se = np.hypot(exact.std, fine.std) / np.sqrt(3000)
    assert abs(exact.mean - fine.mean) <= fine.params.grid_error + Z * se
    assert abs(exact.std - fine.std) <= 0.1 * exact.std


def test_a_million_predictions_take_seconds(rng):
    z, p = _data(1_000_000, rng)
    import time

    t = time.perf_counter()
    r = smooth_ece(z, p, num_samples=2000, seed=0)
    assert time.perf_counter() - t < 30  # about 2 s on an idle core
    # the population ECE of p^1.5 under U(0, 1) is 1/2 - 1/2.5 = 0.1 (Z sd)
    assert abs(r.mean - 0.1) <= Z * r.std
    assert abs(r.mean - r.plugin) <= r.std and r.params.grid_error < 2e-3


# --------------------------------------------------------------- coverage
def _coverage(reps, n, power, seed):
    truth = 0.5 - 1.0 / (power + 1.0)  # p - p^d > 0 in every bin: binned = unbinned ECE
    covered, means, plugins = 0, [], []
    for r in range(reps):
        g = np.random.default_rng([seed, r])
        z, p = _data(n, g, power)
        res = smooth_ece(z, p, num_samples=1000, seed=g)
        lo, hi = res.interval(0.9)
        covered += lo <= truth <= hi
        means.append(res.mean - truth)
        plugins.append(res.plugin - truth)
    return covered, np.array(means), np.array(plugins)


def test_coverage_on_a_known_truth_small():
    """25 data sets of n = 300 from p ~ U(0, 1), P(y=1|p) = p^1.5 (ECE = 0.1
    exactly). With coverage at its nominal 0.9, P(covered <= 17) = 0.0023
    (binomial): the false-alarm rate. The full study is the slow test below."""
    covered, _, _ = _coverage(25, 300, 1.5, 0)
    assert covered >= 18


@pytest.mark.slow
def test_coverage_and_bias_on_known_truths():
    """200 data sets per case. Coverage: P(Binomial(200, 0.9) <= 166) = 7e-4
    at nominal coverage; we ask for >= 167 (0.835). Bias: the smooth posterior
    mean's bias is at most half the plug-in's plus Z standard errors."""
    for n, power in ((300, 1.25), (1000, 1.25), (300, 1.5)):
        covered, bias, plug = _coverage(200, n, power, 1)
        assert covered >= 167, (n, power, covered)
        se = bias.std() / np.sqrt(bias.size)
        assert abs(bias.mean()) <= 0.5 * abs(plug.mean()) + Z * se, (n, power)


# ------------------------------------------------------------------ NUTS
def test_laplace_agrees_with_nuts_on_a_well_specified_problem():
    """NUTS (4 chains x 1000 draws) on the smooth model against the
    PSIS-corrected Laplace path: quantile comparison with a family-wise
    false-alarm rate of 1e-4 (bece.cross_check)."""
    g = np.random.default_rng(0)
    p = g.uniform(size=1000)
    y = (g.uniform(size=1000) < special.expit(0.8 * special.logit(p) + 0.2)).astype(int)
    cc = bece.cross_check(y, p, model="smooth", num_warmup=500, num_samples=1000, seed=0,
                          num_closed_form=10_000)
    assert cc.model == "smooth" and cc.nuts.method == "nuts" and cc.closed_form.method == "laplace"
    assert cc.converged, cc
    assert cc.agree, cc.table.sort_values("z").tail()
    assert cc.divergences < 20
