"""bece._calibrate.linear: matrix scaling with ODIR, Dirichlet calibration and
unregularised vector scaling against their definitions minimised here with scipy,
gradients against finite differences, the cross-validation against a naive
loop, and the families' relations.

The ODIR objective is that of dirichletcal (Kull et al. 2019,
dirichletcal/calib/multinomial.py, ``_objective`` with ``reg_norm=True`` and
``ref_row=False``): mean log-loss + lambda/(K(K-1)) * sum of squared
off-diagonal weights + mu/K * sum of squared intercepts; Dirichlet
calibration applies it to log-probabilities. It is written out below with
scipy's log_softmax and minimised by scipy's BFGS.

Deterministic (fixed data); no false-alarm rate.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, special
from sklearn.model_selection import KFold

from bece._calibrate.linear import linear_hessp, linear_objective
from bece._calibrate.scores import as_scores
from bece.calibrate import DirichletCalibration, MatrixScaling, TemperatureScaling, VectorScaling

from .helpers import logits_with_temperature, mean_nll


@pytest.fixture
def data():
    """K = 3 logits whose labels follow softmax(W z + b) with a non-diagonal W."""
    rng = np.random.default_rng(7)
    z = rng.normal(scale=2.0, size=(1500, 3))
    w = np.array([[0.6, 0.2, 0.0], [0.0, 0.8, -0.1], [0.1, 0.0, 0.5]])
    p = special.softmax(z @ w.T + [0.3, -0.2, 0.0], axis=1)
    y = (rng.uniform(size=(1500, 1)) > p.cumsum(axis=1)).sum(axis=1)
    return z, np.minimum(y, 2)


def odir_reference(x, y, lam, mu, nu=0.0, target=1.0, coef=False):
    """dirichletcal's ODIR objective, plus nu/K * sum_k (W_kk - target)^2 (the
    diagonal penalty), minimised by scipy's BFGS from W = I: the probabilities
    on ``x``, or ``(W, b)``."""
    k = x.shape[1]
    off = ~np.eye(k, dtype=bool)

    def objective(theta):
        w, b = theta[:k * k].reshape(k, k), theta[k * k:]
        return (mean_nll(x @ w.T + b, y) + lam / (k * (k - 1)) * np.sum(w[off] ** 2)
                + nu / k * np.sum((np.diag(w) - target) ** 2) + mu / k * np.sum(b**2))

    res = optimize.minimize(objective, np.r_[np.eye(k).ravel(), np.zeros(k)], method="BFGS",
                            options={"gtol": 1e-9, "maxiter": 10_000})
    w, b = res.x[:k * k].reshape(k, k), res.x[k * k:]
    return (w, b) if coef else special.softmax(x @ w.T + b, axis=1)


@pytest.mark.parametrize("lam,mu", [(0.0, 0.0), (0.5, 0.1), (5.0, 5.0)])
def test_matrix_scaling_is_the_odir_definition(data, lam, mu):
    z, y = data
    ms = MatrixScaling(input="logits", features="scores", reg_lambda=lam, reg_mu=mu).fit(z, y)
    ref = odir_reference(z, y, lam, mu)
    # both optimisers stop at gradients ~1e-8 of a strictly convex loss (for
    # lam = 0 only the probabilities are unique): agreement to 1e-5
    np.testing.assert_allclose(ms.predict_proba(z), ref, atol=1e-5)
    assert ms.reg_lambda_ == lam and ms.reg_mu_ == mu and ms.cv_nll_ is None


def test_dirichlet_is_odir_on_log_probabilities(data):
    z, y = data
    dc = DirichletCalibration(input="logits", features="scores", reg_lambda=0.5, reg_mu=0.1).fit(z, y)
    x = special.log_softmax(z, axis=1)
    np.testing.assert_allclose(dc.predict_proba(z), odir_reference(x, y, 0.5, 0.1), atol=1e-5)
    # on probabilities: the same (their log is the log-softmax)
    p = special.softmax(z, axis=1)
    dp = DirichletCalibration(features="scores", reg_lambda=0.5, reg_mu=0.1).fit(p, y)
    np.testing.assert_allclose(dp.predict_proba(p), dc.predict_proba(z), atol=1e-6)


def test_vector_scaling_is_its_definition(data):
    z, y = data

    def objective(theta):
        return mean_nll(z * theta[:3] + theta[3:], y)

    res = optimize.minimize(objective, np.r_[np.ones(3), np.zeros(3)], method="BFGS",
                            options={"gtol": 1e-10})
    vs = VectorScaling(input="logits", features="scores", reg_lambda=0).fit(z, y)
    ref = special.softmax(z * res.x[:3] + res.x[3:], axis=1)
    np.testing.assert_allclose(vs.predict_proba(z), ref, atol=1e-6)
    assert vs.intercept_.sum() == pytest.approx(0, abs=1e-12)  # centred
    assert vs.nll_ == pytest.approx(res.fun, rel=1e-9)


@pytest.mark.parametrize("full", [False, True])
def test_gradient_against_finite_differences(data, full):
    z, y = data
    s = as_scores(z, "logits")
    k = 3
    fun = linear_objective(s.blocks, y, s.n, k, full=full, reg_lambda=0.7, reg_mu=0.3)
    rng = np.random.default_rng(3)
    theta = rng.normal(scale=0.5, size=k * k + k if full else 2 * k)
    _, grad = fun(theta)
    h = 1e-6
    numeric = np.array([(fun(theta + h * e)[0] - fun(theta - h * e)[0]) / (2 * h)
                        for e in np.eye(theta.size)])
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-9)
    # the exact Hessian-vector product, by differences of the gradient along v
    hessp = linear_hessp(s.blocks, s.n, k, full=full, reg_lambda=0.7, reg_mu=0.3)
    for v in rng.normal(size=(3, theta.size)):
        numeric = (fun(theta + h * v)[1] - fun(theta - h * v)[1]) / (2 * h)
        np.testing.assert_allclose(hessp(theta, v), numeric, rtol=1e-5, atol=1e-8)
    _, grad2, curv = linear_objective(s.blocks, y, s.n, k, full=full, reg_lambda=0.7, reg_mu=0.3,
                                      curvature=True)(theta)
    np.testing.assert_array_equal(grad2, grad)
    if full:  # the Kronecker factors, written out with scipy's softmax, row by row
        p = special.softmax(z @ theta[:9].reshape(3, 3).T + theta[9:], axis=1)
        a = np.mean([np.diag(q) - np.outer(q, q) for q in p], axis=0)
        xt = np.c_[z, np.ones(len(z))]
        gram = np.mean([np.trace(np.diag(q) - np.outer(q, q)) * np.outer(u, u)
                        for q, u in zip(p, xt)], axis=0)
        np.testing.assert_allclose(curv[0], a, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(curv[1], gram, rtol=1e-12, atol=1e-15)
    else:  # vector scaling's 2 x 2 blocks (w_j, b_j): differences of the gradient
        e = np.eye(2 * k)
        for j in range(k):
            dw = (fun(theta + h * e[j])[1] - fun(theta - h * e[j])[1]) / (2 * h)
            db = (fun(theta + h * e[k + j])[1] - fun(theta - h * e[k + j])[1]) / (2 * h)
            np.testing.assert_allclose(curv[j], [dw[j], db[j], db[k + j]], rtol=1e-5, atol=1e-9)


def test_families_nest(rng):
    """Each family contains temperature scaling: on data made by temperature
    scaling, each fit's NLL is at most T's (to solver tolerance), and matrix
    scaling at least vector scaling's without penalty."""
    z, y = logits_with_temperature(2000, 4, rng, temperature=1.6)
    t = TemperatureScaling(input="logits").fit(z, y)
    v = VectorScaling(input="logits", features="scores", reg_lambda=0).fit(z, y)
    m = MatrixScaling(input="logits", features="scores", reg_lambda=0.0, reg_mu=0.0).fit(z, y)
    assert v.nll_ <= t.nll_ + 1e-9 and m.nll_ <= v.nll_ + 1e-9
    np.testing.assert_allclose(v.coef_, 1 / t.temperature_, atol=0.1)


def test_cross_validation_is_the_naive_loop(data):
    """Two paths: ODIR (mu = lambda, nu = 0) and mu = nu = lambda / (K-1)^2; each
    candidate's held-out NLL that of fits made one by one on the folds. The
    diagonal's target 1/T_0 is temperature scaling's on all the rows."""
    z, y = data
    grid = (0.01, 10.0)
    ms = MatrixScaling(input="logits", features="scores", reg_grid=grid, cv=3,
                       random_state=5).fit(z, y)
    t0 = TemperatureScaling(input="logits").fit(z, y).temperature_
    assert ms.feature_temperature_ == pytest.approx(t0, rel=1e-8)
    held = np.zeros((2, 2))
    for path in (0, 1):
        for j, value in enumerate(grid):
            for train, test in KFold(3, shuffle=True, random_state=5).split(z):
                x = z[train]
                small = value / 4 if path else value   # (K - 1)^2 = 4
                fit = odir_reference(x, y[train], value, small, nu=small * path, target=1 / t0,
                                     coef=True)
                lp = special.log_softmax(z[test] @ fit[0].T + fit[1], axis=1)
                held[path, j] -= lp[np.arange(test.size), y[test]].sum() / y.size
    # the folds' fits stop at gtol 1e-6 (CV_TOL) and start elsewhere: 1e-6
    np.testing.assert_allclose(ms.cv_nll_, held, rtol=1e-6)
    path, j = np.unravel_index(np.argmin(held), held.shape)
    assert ms.reg_lambda_ == grid[j] and ms.reg_mu_ == grid[j] / (4 if path else 1)
    assert ms.reg_diagonal_ == (grid[j] / 4 if path else 0.0)
    # reg_diagonal given: one path
    m0 = MatrixScaling(input="logits", features="scores", reg_grid=grid, cv=3, random_state=5,
                       reg_diagonal=0).fit(z, y)
    np.testing.assert_allclose(m0.cv_nll_, held[:1], rtol=1e-6)


def test_cross_validation_stops_a_path_after_two_rises(rng):
    """Calibrated logits, few rows: the held-out NLL is least at strong penalties;
    each path stops after two rises in a row (CV_PATIENCE), the candidates it did not
    reach are NaN, and the ones it reached are the naive loop's."""
    from bece._calibrate.linear import CV_PATIENCE

    assert CV_PATIENCE == 2
    z, y = logits_with_temperature(300, 4, rng, temperature=1.0)
    grid = (1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0, 1e3)
    ms = MatrixScaling(input="logits", features="scores", reg_grid=grid, cv=3).fit(z, y)
    t0 = ms.feature_temperature_
    for path, row in enumerate(ms.cv_nll_):
        seen = row[::-1]   # largest first, the order of the path
        reached = int(np.sum(~np.isnan(seen)))
        assert np.all(~np.isnan(seen[:reached])) and reached >= 3
        rises = [seen[j] >= np.min(seen[:j]) for j in range(1, reached)]
        # it stopped at the first second rise in a row, or at the end of the grid
        stop = next((j + 2 for j in range(1, len(rises)) if rises[j - 1] and rises[j]), len(grid))
        assert reached == stop
        for j in (0, reached - 1):
            value = grid[::-1][j]
            small = value / 9 if path else value   # (K - 1)^2 = 9
            total = 0.0
            for train, test in KFold(3, shuffle=True, random_state=0).split(z):
                w, b = odir_reference(z[train], y[train], value, small, nu=small * path,
                                      target=1 / t0, coef=True)
                lp = special.log_softmax(z[test] @ w.T + b, axis=1)
                total -= lp[np.arange(test.size), y[test]].sum() / y.size
            assert seen[j] == pytest.approx(total, rel=1e-5)
    assert np.isnan(ms.cv_nll_).any()   # this data stops at least one path early
    # the JSON of the parameters keeps the candidates not reached (NaN)
    from bece.calibrate import from_json

    back = from_json(ms.to_json())
    np.testing.assert_array_equal(np.isnan(back.cv_nll_), np.isnan(ms.cv_nll_))
    np.testing.assert_allclose(back.predict_proba(z), ms.predict_proba(z), rtol=1e-12)
    assert back.reg_diagonal_ == ms.reg_diagonal_ and back.feature_temperature_ == t0


def test_diagonal_penalty_is_its_definition(data):
    """reg_diagonal: nu/K * sum_k (W_kk - 1/T_0)^2 added to ODIR (T_0: temperature
    scaling's), against the objective written out and minimised by scipy's BFGS;
    on features="tempered" (log softmax(z / T_0)) the target is 1; very strong
    penalties are temperature scaling."""
    z, y = data
    t0 = TemperatureScaling(input="logits").fit(z, y).temperature_
    ms = MatrixScaling(input="logits", features="scores", reg_lambda=0.5, reg_mu=0.1,
                       reg_diagonal=2.0).fit(z, y)
    np.testing.assert_allclose(ms.predict_proba(z),
                               odir_reference(z, y, 0.5, 0.1, nu=2.0, target=1 / t0), atol=1e-5)
    assert ms.reg_diagonal_ == 2.0
    mt = MatrixScaling(input="logits", features="tempered", reg_lambda=0.5, reg_mu=0.1,
                       reg_diagonal=2.0).fit(z, y)
    x = special.log_softmax(z / t0, axis=1)
    np.testing.assert_allclose(mt.predict_proba(z), odir_reference(x, y, 0.5, 0.1, nu=2.0, target=1.0),
                               atol=1e-5)
    dt = DirichletCalibration(input="logits", features="tempered", reg_lambda=0.5, reg_mu=0.1,
                              reg_diagonal=2.0).fit(z, y)
    np.testing.assert_allclose(dt.predict_proba(z), mt.predict_proba(z), atol=1e-6)
    ts = TemperatureScaling(input="logits").fit(z, y).predict_proba(z)
    for features in ("scores", "tempered"):
        strong = MatrixScaling(input="logits", features=features, reg_lambda=1e7, reg_mu=1e7,
                               reg_diagonal=1e7).fit(z, y)
        np.testing.assert_allclose(strong.predict_proba(z), ts, atol=1e-4)
    # a diagonal penalty without the off-diagonal one is no penalty: a shift of each column
    # (which leaves the softmax unchanged) takes the diagonal to its target
    free = MatrixScaling(input="logits", features="scores", reg_lambda=0.0, reg_mu=0.0,
                         reg_diagonal=2.0).fit(z, y)
    np.testing.assert_allclose(free.predict_proba(z), odir_reference(z, y, 0.0, 0.0), atol=1e-5)


def test_full_evaluate_with_a_diagonal_penalty(data):
    """full_evaluate with reg_diagonal: its loss is the penalised objective at the
    shift that minimises it (scipy over the shifts), its gradient and Hessian
    products the finite differences of that loss and gradient."""
    from bece._calibrate.newton import full_evaluate

    z, y = data
    k = 3
    evaluate = full_evaluate(z, y, 0.7, 0.3, reg_diagonal=1.5, diagonal=0.8)
    rng = np.random.default_rng(9)
    theta = rng.normal(scale=0.5, size=k * k + k)

    def plain(t):
        w, b = t[:9].reshape(3, 3), t[9:]
        off = ~np.eye(3, dtype=bool)
        return (mean_nll(z @ w.T + b, y) + 0.7 / 6 * np.sum(w[off] ** 2)
                + 1.5 / 3 * np.sum((np.diag(w) - 0.8) ** 2) + 0.3 / 3 * np.sum(b ** 2))

    def shifted(c):
        return plain(theta + np.r_[np.tile(c[:3], 3), np.full(3, c[3])])

    best = optimize.minimize(shifted, np.zeros(4), method="BFGS", options={"gtol": 1e-10})
    loss, grad, _, hvp = evaluate(theta)
    assert loss == pytest.approx(best.fun, rel=1e-9)
    h = 1e-6
    numeric = np.array([(evaluate(theta + h * e)[0] - evaluate(theta - h * e)[0]) / (2 * h)
                        for e in np.eye(theta.size)])
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-9)
    for v in rng.normal(size=(3, theta.size)):
        numeric = (evaluate(theta + h * v)[1] - evaluate(theta - h * v)[1]) / (2 * h)
        np.testing.assert_allclose(hvp(v), numeric, rtol=1e-5, atol=1e-8)


def test_weighted_best_shift_by_hand():
    """K = 2, weights 1 off the diagonal and 3 on it, target 1 on the diagonal:
    column 0 is (W00 - 1, W10) = (1, 4), weighted mean (3 + 4) / 4 = 7/4;
    column 1 is (W01, W11 - 1) = (2, 0), weighted mean 2/4."""
    from bece._calibrate.newton import best_shift

    theta = np.array([2.0, 2.0, 4.0, 1.0, 3.0, 1.0])   # [W00 W01 W10 W11 b0 b1]
    out = best_shift(theta, 2, np.array([[3.0, 1.0], [1.0, 3.0]]), np.eye(2))
    np.testing.assert_allclose(out, [2 - 7 / 4, 2 - 0.5, 4 - 7 / 4, 1 - 0.5, 1.0, -1.0])


def test_cross_validation_warns_when_the_largest_penalty_wins(rng):
    """Few rows, many parameters, calibrated logits: the strongest penalty of a grid that stops
    at 0.01 wins and the user is told to extend the grid; with many rows and labels that
    depend on the other classes' logits (an off-diagonal W), the weak penalty wins, silently.
    The default grid reaches 1e6 (at K = 100 the old largest value, 100, still overfitted)."""
    import warnings

    from bece._calibrate.linear import REG_GRID

    assert max(REG_GRID) == 1e6 and min(REG_GRID) == 1e-4
    z, y = logits_with_temperature(150, 15, rng, temperature=1.0)
    with pytest.warns(UserWarning, match="largest of reg_grid"):
        ms = MatrixScaling(input="logits", features="scores", reg_diagonal=0, reg_grid=(1e-3, 1e-2),
                           cv=3).fit(z, y)
    assert ms.reg_lambda_ == 1e-2
    x = rng.normal(scale=2.0, size=(3000, 3))
    mix = np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0], [1.0, 0.0, 1.0]])   # class k also follows logit k+1
    y2 = (rng.uniform(size=(3000, 1)) > special.softmax(x @ mix.T, axis=1).cumsum(axis=1)).sum(axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ms2 = MatrixScaling(input="logits", features="scores", reg_diagonal=0, reg_grid=(1e-3, 1e3),
                            cv=3).fit(x, np.minimum(y2, 2))
    assert ms2.reg_lambda_ == 1e-3


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"reg_lambda": -1.0}, "reg_lambda must be None or a finite number >= 0"),
        ({"reg_diagonal": np.nan}, "reg_diagonal must be None or a finite number >= 0"),
        ({"features": "logits"}, "features must be one of"),
        ({"reg_grid": ()}, "reg_grid must be a non-empty sequence"),
        ({"cv": 1}, "cv must be an integer >= 2"),
        ({"tol": 0.0}, "tol must be a number in"),
        ({"max_iter": 0}, "max_iter must be a positive integer"),
    ],
)
def test_bad_options(data, kwargs, message):
    z, y = data
    with pytest.raises(ValueError, match=message):
        MatrixScaling(input="logits", **kwargs).fit(z, y)


def test_full_evaluate_is_the_objective_after_its_best_shift(data):
    """matrix scaling's evaluate is f(P theta), f = linear_objective and P =
    best_shift (a linear projection, written here as a matrix): its loss,
    gradient P^T grad f(P theta) and Hessian products P^T H P v (H from
    linear_hessp, which recomputes the softmax); the shift leaves the softmax
    unchanged, and its preconditioner is the class blocks' solve."""
    from bece._calibrate.newton import best_shift, class_block_preconditioner, class_blocks, full_evaluate
    from bece._calibrate.temperature import PassCounter

    z, y = data
    s = as_scores(z, "logits")
    k = 3
    rng = np.random.default_rng(4)
    theta = rng.normal(scale=0.5, size=k * k + k)
    proj = np.column_stack([best_shift(e, k) for e in np.eye(k * k + k)])
    np.testing.assert_allclose(proj @ proj, proj, atol=1e-14)
    shifted = proj @ theta
    w0, w1 = theta[:9].reshape(3, 3), shifted[:9].reshape(3, 3)
    np.testing.assert_allclose(special.softmax(z @ w0.T + theta[9:], axis=1),
                               special.softmax(z @ w1.T + shifted[9:], axis=1), rtol=1e-12)
    counter = PassCounter()
    loss, grad, solve, hvp = full_evaluate(z, y, 0.7, 0.3, counter)(theta)
    f = linear_objective(s.blocks, y, s.n, k, full=True, reg_lambda=0.7, reg_mu=0.3)
    ref_loss, ref_grad = f(shifted)
    assert loss == pytest.approx(ref_loss, rel=1e-13)
    np.testing.assert_allclose(grad, proj.T @ ref_grad, rtol=1e-11, atol=1e-14)
    hessp = linear_hessp(s.blocks, s.n, k, full=True, reg_lambda=0.7, reg_mu=0.3)
    for v in rng.normal(size=(3, theta.size)):
        np.testing.assert_allclose(hvp(v), proj.T @ hessp(shifted, proj @ v), rtol=1e-10,
                                   atol=1e-13)
    assert counter.count == 1 + 3  # one pass for the loss, one per product
    solve(np.ones(theta.size))
    assert counter.count == 5  # and one for the preconditioner (its exact diagonal)
    p = special.softmax(z @ w0.T + theta[9:], axis=1)
    pen = np.array([[0, 1, 1, 0], [1, 0, 1, 0], [1, 1, 0, 0]]) * 2 * 0.7 / 6
    pen[:, 3] = 2 * 0.3 / 3
    r = rng.normal(size=theta.size)
    np.testing.assert_allclose(solve(r), class_block_preconditioner(class_blocks(p, z), pen)(r),
                               rtol=1e-10)
    # the preconditioner is built at the first `builds` points solved, then the last one kept
    evaluate = full_evaluate(z, y, 0.7, 0.3, counter, builds=2)
    points = [theta, theta + 0.1, theta - 0.1]
    solves = []
    for j, t in enumerate(points):
        solve_j = evaluate(t)[2]
        solves.append(solve_j(r))
        solve_j(r)  # built once per point
        assert counter.count == 5 + 2 * (j + 1) - (j == 2)
    for j in (0, 1):
        wj, bj = points[j][:9].reshape(3, 3), points[j][9:]
        ref = class_block_preconditioner(class_blocks(special.softmax(z @ wj.T + bj, axis=1), z), pen)
        np.testing.assert_allclose(solves[j], ref(r), rtol=1e-10)
    np.testing.assert_allclose(solves[2], solves[1], rtol=1e-12)  # the third keeps the second's


def test_class_blocks_are_the_hessian_blocks_and_their_estimate_is_unbiased():
    """K = 3 exact: each class's block of the dense Hessian (written out row by
    row with np.kron); K = 12 with 2 draws per row: the mean of 400 seeds
    within 5 standard errors of the exact blocks (a false alarm per entry
    below 1e-6; 0.08% of the 24 x 13 x 13 entries... bound by the max over
    entries, so the tolerance is 6 s.e.: about 1e-9 each, < 3e-6 overall)."""
    from bece._calibrate.newton import class_block_preconditioner, class_blocks

    rng = np.random.default_rng(8)
    x = rng.normal(size=(40, 3))
    p = special.softmax(rng.normal(size=(40, 3)), axis=1)
    xt = np.c_[x, np.ones(40)]
    dense = np.mean([np.kron(np.diag(q) - np.outer(q, q), np.outer(u, u)) for q, u in zip(p, xt)],
                    axis=0)  # class-major rows of [W, b]
    g = class_blocks(p, x)
    for j in range(3):
        np.testing.assert_allclose(g[j], dense[4 * j:4 * j + 4, 4 * j:4 * j + 4], rtol=1e-12)
    order = np.arange(12).reshape(3, 4)
    pos = np.concatenate([order[:, :3].ravel(), order[:, 3]])  # theta's order in the dense one
    blockdiag = np.zeros((12, 12))
    for j in range(3):
        blockdiag[4 * j:4 * j + 4, 4 * j:4 * j + 4] = g[j] + np.eye(4) * 0.01
    r = rng.normal(size=12)
    ref = np.linalg.solve(blockdiag, r[np.argsort(pos)])[pos]
    np.testing.assert_allclose(class_block_preconditioner(g, np.full((3, 4), 0.01))(r), ref,
                               rtol=1e-6)
    k = 12
    x = rng.normal(size=(300, k))
    p = special.softmax(2 * rng.normal(size=(300, k)), axis=1)
    exact = class_blocks(p, x, draws=k)
    draws = np.array([class_blocks(p, x, draws=2, seed=s) for s in range(400)])
    i = np.arange(k + 1)
    draws[:, :, i, i] = 0.0  # the diagonal is raised to the exact one (biased up): not tested here
    exact[:, i, i] = 0.0
    se = draws.std(axis=0) / np.sqrt(400) + 1e-15
    assert np.all(np.abs(draws.mean(axis=0) - exact) <= 6 * se)
    # and from a uniform subsample of 100 of the 300 rows (weighted 3): unbiased too, same rule
    draws = np.array([class_blocks(p, x, draws=2, seed=s, rows=100) for s in range(400)])
    draws[:, :, i, i] = 0.0
    se = draws.std(axis=0) / np.sqrt(400) + 1e-15
    assert np.all(np.abs(draws.mean(axis=0) - exact) <= 6 * se)
    assert not np.allclose(draws[0], draws[1])  # the seeds draw different rows
