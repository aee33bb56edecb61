"""bece._calibrate.vector: vector scaling penalised towards temperature scaling
(on the logits, features="scores", and on the tempered log-probabilities),
against its objective minimised here by scipy, the unregularised fit as the
Newton solver ran it before the penalty, the temperature-scaling limit, and
the cross-validation against a naive loop.

The objective is written out with scipy's log_softmax: mean log-loss of
softmax(w * z + b) + lambda/K * sum_k (w_k - mean(w))^2 + mu/K * sum_k b_k^2
(the intercepts not centred: scipy's minimiser centres them itself, as the
softmax is unchanged by a common shift and the penalty least at mean zero).

Deterministic (fixed data); no false-alarm rate.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, special
from sklearn.base import clone
from sklearn.model_selection import KFold

from bece._calibrate.linear import linear_hessp, linear_objective
from bece._calibrate.newton import block_preconditioner, newton_cg, rough_temperature
from bece._calibrate.scores import as_scores
from bece._calibrate.temperature import PassCounter
from bece._calibrate.vector import penalised_preconditioner, vector_penalty
from bece.calibrate import TemperatureScaling, VectorScaling, from_json

from .helpers import logits_with_temperature, mean_nll


@pytest.fixture
def data():
    """K = 4 logits whose labels follow softmax(w * z + b) with unequal weights."""
    rng = np.random.default_rng(11)
    z = rng.normal(scale=2.5, size=(800, 4))
    p = special.softmax(z * [0.3, 0.5, 0.7, 0.4] + [0.2, -0.3, 0.0, 0.1], axis=1)
    y = (rng.uniform(size=(800, 1)) > p.cumsum(axis=1)).sum(axis=1)
    return z, np.minimum(y, 3)


def penalised_reference(z, y, lam, mu):
    """The penalised objective minimised by scipy's L-BFGS-B (analytic gradient, gtol 1e-12)."""
    n, k = z.shape
    onehot = np.eye(k)[y]

    def objective(theta):
        w, b = theta[:k], theta[k:]
        a = z * w + b
        value = (mean_nll(a, y) + lam / k * np.sum((w - w.mean()) ** 2) + mu / k * np.sum(b**2))
        r = (special.softmax(a, axis=1) - onehot) / n
        grad = np.r_[(r * z).sum(axis=0) + 2 * lam / k * (w - w.mean()), r.sum(axis=0) + 2 * mu / k * b]
        return value, grad

    res = optimize.minimize(objective, np.r_[np.ones(k), np.zeros(k)], jac=True, method="L-BFGS-B",
                            options={"gtol": 1e-12, "ftol": 0.0, "maxiter": 10_000, "maxcor": 30})
    return res.x, res.fun


@pytest.mark.parametrize("lam,mu", [(0.5, 0.2), (3.0, 0.0), (0.0, 1.0), (40.0, 40.0)])
def test_penalised_fit_is_its_definition(data, lam, mu):
    z, y = data
    ref, ref_value = penalised_reference(z, y, lam, mu)
    vs = VectorScaling(input="logits", features="scores", reg_lambda=lam, reg_mu=mu, tol=1e-11).fit(z, y)
    theta = np.r_[vs.coef_, vs.intercept_]
    if mu == 0:  # the intercepts' common shift is free: compare the centred ones
        ref = np.r_[ref[:4], ref[4:] - ref[4:].mean()]
    # both minimisers stop at gradients ~1e-11 of a strictly convex objective: 1e-6 relative
    assert np.linalg.norm(theta - ref) <= 1e-6 * np.linalg.norm(ref)
    penalty = lam / 4 * np.sum((vs.coef_ - vs.coef_.mean()) ** 2) + mu / 4 * np.sum(vs.intercept_**2)
    assert vs.nll_ + penalty == pytest.approx(ref_value, rel=1e-10)
    assert vs.nll_ == pytest.approx(mean_nll(z * vs.coef_ + vs.intercept_, y), rel=1e-12)
    assert vs.intercept_.sum() == pytest.approx(0, abs=1e-12)
    assert (vs.reg_lambda_, vs.reg_mu_, vs.cv_nll_) == (lam, mu, None)


def test_reg_lambda_zero_is_the_unregularised_fit(data):
    """features="scores", reg_lambda=0 (reg_mu None follows it) is the Newton fit of the plain
    likelihood (Guo et al.'s), step for step as it ran before the penalty existed."""
    z, y = data
    vs = VectorScaling(input="logits", features="scores", reg_lambda=0).fit(z, y)
    s, k = as_scores(z, "logits"), 4
    counter = PassCounter()
    t = rough_temperature(s, y, (1e-2, 1e2), counter)
    fun = linear_objective(s.blocks, y, s.n, k, full=False, counter=counter, curvature=True)

    def evaluate(theta):
        loss, grad, h = fun(theta)
        return loss, grad, block_preconditioner(h)

    theta, n_iter, loss = newton_cg(evaluate, linear_hessp(s.blocks, s.n, k, full=False, counter=counter),
                                    np.r_[np.full(k, 1 / t), np.zeros(k)], tol=1e-8, max_iter=1000,
                                    name="old")
    np.testing.assert_array_equal(vs.coef_, theta[:k])
    np.testing.assert_allclose(vs.intercept_, theta[k:] - theta[k:].mean(), rtol=0, atol=1e-15)
    assert (vs.n_iter_, vs.n_passes_) == (n_iter, counter.count)
    assert vs.nll_ == pytest.approx(loss, rel=1e-14)
    assert (vs.reg_lambda_, vs.reg_mu_) == (0.0, 0.0)
    # and the maximum-likelihood fit itself, by scipy's BFGS
    res = optimize.minimize(lambda th: mean_nll(z * th[:k] + th[k:], y), np.r_[np.ones(k), np.zeros(k)],
                            method="BFGS", options={"gtol": 1e-10})
    np.testing.assert_allclose(vs.predict_proba(z), special.softmax(z * res.x[:k] + res.x[k:], axis=1),
                               atol=1e-6)


def test_a_huge_penalty_is_temperature_scaling(rng):
    z, y = logits_with_temperature(1500, 5, rng, temperature=1.7)
    t = TemperatureScaling(input="logits").fit(z, y)
    vs = VectorScaling(input="logits", features="scores", reg_lambda=1e9).fit(z, y)
    # the weights' spread is ~ gradient * K / (2 lambda) ~ 1e-9
    np.testing.assert_allclose(vs.coef_, 1 / t.temperature_, rtol=1e-6)
    np.testing.assert_allclose(vs.intercept_, 0.0, atol=1e-7)
    assert vs.nll_ == pytest.approx(t.nll_, rel=1e-9)


def test_penalty_and_preconditioner_against_their_definitions():
    """vector_penalty against finite differences of itself; the preconditioner
    against the dense matrix (the data's 2 x 2 blocks plus the penalty's exact
    Hessian) solved by numpy."""
    rng = np.random.default_rng(2)
    k = 5
    penalty, hvp = vector_penalty(k, 0.8, 0.3)
    theta = rng.normal(size=2 * k)
    value, grad = penalty(theta)
    w, b = theta[:k], theta[k:]
    assert value == pytest.approx(0.8 / k * np.sum((w - w.mean()) ** 2)
                                  + 0.3 / k * np.sum((b - b.mean()) ** 2))
    h = 1e-6
    numeric = np.array([(penalty(theta + h * e)[0] - penalty(theta - h * e)[0]) / (2 * h)
                        for e in np.eye(2 * k)])
    np.testing.assert_allclose(grad, numeric, rtol=1e-7, atol=1e-10)
    centre = np.eye(k) - 1.0 / k
    for lam, mu in [(0.8, 0.3), (1e6, 0.0), (0.0, 2.0), (0.0, 0.0)]:
        a = rng.uniform(0.5, 2.0, size=k)
        c = rng.uniform(0.5, 2.0, size=k)
        blocks = np.c_[a, rng.uniform(-0.4, 0.4, size=k) * np.sqrt(a * c), c]
        dense = np.zeros((2 * k, 2 * k))
        for j in range(k):
            dense[np.ix_([j, k + j], [j, k + j])] = [[blocks[j, 0], blocks[j, 1]],
                                                     [blocks[j, 1], blocks[j, 2]]]
        pen = np.zeros((2 * k, 2 * k))
        pen[:k, :k] = 2 * lam / k * centre
        pen[k:, k:] = 2 * mu / k * centre
        _, pen_hvp = vector_penalty(k, lam, mu)
        np.testing.assert_allclose(np.column_stack([pen_hvp(e) for e in np.eye(2 * k)]), pen, atol=1e-9)
        r = rng.normal(size=2 * k)
        np.testing.assert_allclose(penalised_preconditioner(blocks, lam, mu)(r),
                                   np.linalg.solve(dense + pen, r), rtol=1e-8)


@pytest.mark.parametrize("features", ["scores", "tempered"])
def test_cross_validation_is_the_naive_loop(data, features):
    """Each fold fitted on its own; "tempered" keeps the T_0 of all the rows,
    so its loop fits "scores" on log_softmax(z / T_0)."""
    z, y = data
    x = z
    if features == "tempered":
        x = special.log_softmax(z / TemperatureScaling(input="logits").fit(z, y).temperature_, axis=1)
    grid = (0.01, 1.0, 100.0)
    vs = VectorScaling(input="logits", features=features, reg_grid=grid, cv=3, random_state=5).fit(z, y)
    held = []
    for value in grid:
        total = 0.0
        for train, test in KFold(3, shuffle=True, random_state=5).split(z):
            fit = VectorScaling(input="logits", features="scores", reg_lambda=value).fit(x[train], y[train])
            total -= np.log(fit.predict_proba(x[test])[np.arange(test.size), y[test]]).sum()
        held.append(total / y.size)
    # the folds' fits stop at gradient 1e-6 (CV_TOL) and start elsewhere: 1e-6
    np.testing.assert_allclose(vs.cv_nll_, held, rtol=1e-6)
    assert vs.reg_lambda_ == vs.reg_mu_ == grid[int(np.argmin(held))]
    again = VectorScaling(input="logits", features=features, reg_grid=grid, cv=3, random_state=5).fit(z, y)
    np.testing.assert_array_equal(again.cv_nll_, vs.cv_nll_)
    np.testing.assert_array_equal(again.coef_, vs.coef_)
    # reg_mu given: only lambda is searched
    fixed = VectorScaling(input="logits", reg_mu=0.0, reg_grid=grid, random_state=5).fit(z, y)
    assert fixed.reg_mu_ == 0.0 and fixed.reg_lambda_ in grid


def test_default_cross_validation_picks_a_finite_value(rng):
    """The defaults (tempered features, 5 folds, the grid 1e-4 ... 1e6); on
    temperature-scaled logits the weights barely differ from 1 (T_0 = 1.5)."""
    z, y = logits_with_temperature(1200, 4, rng, temperature=1.5)
    vs = VectorScaling(input="logits").fit(z, y)
    assert vs.features == "tempered" and vs.cv == 5
    assert vs.cv_nll_.shape == (11,) and np.all(np.isfinite(vs.cv_nll_))
    assert 1e-4 <= vs.reg_lambda_ <= 1e6 and vs.reg_mu_ == vs.reg_lambda_
    assert vs.feature_temperature_ == pytest.approx(1.5, abs=0.15)
    np.testing.assert_allclose(vs.coef_, 1.0, atol=0.15)
    assert vs.n_passes_ > vs.n_iter_


def test_saved_and_cloned(data):
    z, y = data
    vs = VectorScaling(input="logits", reg_grid=(0.1, 10.0)).fit(z, y)
    again = from_json(vs.to_json())
    np.testing.assert_array_equal(again.predict_proba(z), vs.predict_proba(z))
    assert again.reg_lambda_ == vs.reg_lambda_ and again.get_params() == vs.get_params()
    np.testing.assert_array_equal(again.cv_nll_, vs.cv_nll_)
    c = clone(vs).set_params(reg_lambda=0.5)
    assert c.get_params()["reg_lambda"] == 0.5 and not hasattr(c, "coef_")


def test_tempered_features_are_vector_scaling_of_the_tempered_log_probabilities(data):
    """features="tempered": T_0 is temperature scaling's on the same rows, and
    the fit is vector scaling of log_softmax(z / T_0) given as logits (the same
    penalised objective, solved from another start); a huge penalty leaves
    temperature scaling itself (w = 1, b = 0)."""
    z, y = data
    t = TemperatureScaling(input="logits").fit(z, y)
    vt = VectorScaling(input="logits", features="tempered", reg_lambda=0.5, reg_mu=0.1).fit(z, y)
    assert vt.feature_temperature_ == pytest.approx(t.temperature_, rel=1e-12)
    x = special.log_softmax(z / t.temperature_, axis=1)
    ref = VectorScaling(input="logits", features="scores", reg_lambda=0.5, reg_mu=0.1).fit(x, y)
    assert ref.feature_temperature_ == 1.0
    # both stop at whitened gradients below 1e-8 of a strictly convex objective
    np.testing.assert_allclose(vt.coef_, ref.coef_, rtol=1e-6)
    np.testing.assert_allclose(vt.predict_proba(z), ref.predict_proba(x), atol=1e-8)
    huge = VectorScaling(input="logits", features="tempered", reg_lambda=1e9).fit(z, y)
    np.testing.assert_allclose(huge.coef_, 1.0, rtol=1e-6)
    np.testing.assert_allclose(huge.predict_proba(z), t.predict_proba(z), atol=1e-6)
    again = from_json(vt.to_json())
    np.testing.assert_array_equal(again.predict_proba(z), vt.predict_proba(z))
    assert again.feature_temperature_ == vt.feature_temperature_
    cv = VectorScaling(input="logits", features="tempered", reg_grid=(0.01, 1.0)).fit(z, y)
    assert cv.reg_lambda_ in (0.01, 1.0) and cv.cv_nll_.shape == (2,)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"reg_lambda": -1.0}, "reg_lambda must be None or a finite number >= 0"),
        ({"reg_lambda": np.inf}, "reg_lambda must be None or a finite number >= 0"),
        ({"reg_lambda": float("nan")}, "reg_lambda must be None or a finite number >= 0"),
        ({"reg_lambda": "1"}, "reg_lambda must be None or a finite number >= 0"),
        ({"reg_lambda": True}, "reg_lambda must be None or a finite number >= 0"),
        ({"reg_mu": -0.5}, "reg_mu must be None or a finite number >= 0"),
        ({"reg_grid": ()}, "reg_grid must be a non-empty sequence"),
        ({"reg_grid": (1.0, -1.0)}, "reg_grid must be a non-empty sequence"),
        ({"cv": 1}, "cv must be an integer >= 2"),
        ({"features": "logits"}, "features must be one of"),
        ({"tol": 0.0}, "tol must be a number in"),
        ({"max_iter": 0}, "max_iter must be a positive integer"),
    ],
)
def test_bad_options(data, kwargs, message):
    z, y = data
    with pytest.raises(ValueError, match=message):
        VectorScaling(input="logits", **kwargs).fit(z, y)


def test_too_few_rows_for_the_folds():
    z = np.array([[1.0, 0.0], [0.0, 2.0]])
    with pytest.raises(ValueError, match="needs at least cv=5 rows"):
        VectorScaling(input="logits").fit(z, [0, 1])
