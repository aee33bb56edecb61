"""bece._calibrate.newton: the preconditioners against dense linear algebra,
the truncated Newton against scipy's minimiser, and its warnings.

Deterministic (fixed data); no false-alarm rate.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, special
from sklearn.exceptions import ConvergenceWarning

from bece._calibrate.newton import (
    block_preconditioner,
    kronecker_preconditioner,
    newton_cg,
    rough_temperature,
)
from bece._calibrate.scores import as_scores
from bece._calibrate.temperature import PassCounter, fit_temperature


def test_block_preconditioner_is_the_dense_solve():
    rng = np.random.default_rng(1)
    k = 4
    m = rng.normal(size=(k, 2, 2))
    blocks = m @ m.transpose(0, 2, 1) + 0.1 * np.eye(2)
    h = np.column_stack([blocks[:, 0, 0], blocks[:, 0, 1], blocks[:, 1, 1]])
    dense = np.zeros((2 * k, 2 * k))
    for j in range(k):  # theta = [w (k), b (k)]
        idx = [j, k + j]
        dense[np.ix_(idx, idx)] = blocks[j]
    r = rng.normal(size=2 * k)
    np.testing.assert_allclose(block_preconditioner(h)(r), np.linalg.solve(dense, r), rtol=1e-10)


def test_kronecker_preconditioner_is_the_dense_solve():
    rng = np.random.default_rng(2)
    k = 3
    u = rng.normal(size=(k, k))
    a = u @ u.T + 0.2 * np.eye(k)
    v = rng.normal(size=(k + 1, k + 1))
    s = v @ v.T + 0.3 * np.eye(k + 1)
    dense = np.kron(a, s) + 0.05 * np.eye(k * (k + 1))  # rows of [W, b], class by class
    order = np.arange(k * (k + 1)).reshape(k, k + 1)      # position in theta = [W.ravel(), b]
    pos = np.concatenate([order[:, :k].ravel(), order[:, k]])
    r = rng.normal(size=k * (k + 1))
    ref = np.linalg.solve(dense, r[np.argsort(pos)])[pos]
    np.testing.assert_allclose(kronecker_preconditioner(a, np.linalg.eigh(s), 0.05)(r), ref,
                               rtol=1e-9)


def test_newton_is_scipys_minimiser_of_a_logistic_loss():
    """Binary logistic regression with two features: Newton-CG with the
    exact Hessian against scipy's BFGS, both to a gradient below 1e-10."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(500, 2))
    y = (rng.uniform(size=500) < special.expit(x @ [1.5, -0.7] + 0.3)).astype(float)
    xt = np.c_[x, np.ones(500)]

    def loss(t):
        a = xt @ t
        return float(np.mean(np.logaddexp(0, a) - y * a))

    def evaluate(t):
        p = special.expit(xt @ t)
        return loss(t), xt.T @ (p - y) / 500, lambda r: r

    def hessp(t, v):
        p = special.expit(xt @ t)
        return xt.T @ (p * (1 - p) * (xt @ v)) / 500

    theta, it, value = newton_cg(evaluate, hessp, np.zeros(3), tol=1e-12, max_iter=50, name="test")
    ref = optimize.minimize(loss, np.zeros(3), method="BFGS", options={"gtol": 1e-10})
    np.testing.assert_allclose(theta, ref.x, atol=1e-6)  # BFGS's gradient 1e-10 / curvature ~0.1
    assert value <= ref.fun + 1e-14 and it < 15


def test_newton_warns_at_max_iter():
    a = np.diag([1.0, 100.0])

    def evaluate(t):
        return 0.5 * t @ a @ t, a @ t, lambda r: r  # unpreconditioned

    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        newton_cg(evaluate, lambda t, v: a @ v, np.ones(2), tol=1e-14, max_iter=1, name="test",
                  max_cg=1)


@pytest.mark.parametrize("scale", [0.02, 1.0, 30.0])
def test_rough_temperature_is_near_the_fitted_one(rng, scale):
    z = rng.normal(scale=3.0, size=(3000, 5)) * scale
    p = special.softmax(z / (1.5 * scale), axis=1)
    y = np.minimum((rng.uniform(size=(3000, 1)) > p.cumsum(axis=1)).sum(axis=1), 4)
    s = as_scores(z, "logits")
    counter = PassCounter()
    t = rough_temperature(s, y, (1e-3, 1e3), counter)
    t_ref = fit_temperature(s, y, (1e-3, 1e3))
    # its last Newton step was below 0.05 in log T; the step after it
    # (quadratic convergence) smaller still: 5% is the stated precision
    assert abs(np.log(t / t_ref)) < 0.05
    assert counter.count <= 12


def test_without_room_for_the_class_blocks_the_fit_reaches_the_same_minimum(monkeypatch, rng):
    """Where the class blocks would exceed BLOCK_BYTES_MAX (K above about 280)
    matrix scaling preconditions CG by the blocks' diagonal: more Hessian
    products, the same minimum. Forced here at K = 8 (BLOCK_BYTES_MAX = 0):
    the two fits' parameters agree to the Newton tolerance."""
    from bece._calibrate import newton
    from bece.calibrate import MatrixScaling

    k, n = 8, 3000
    logits = rng.normal(scale=2.0, size=(n, k))
    truth = special.softmax(logits / 1.4 + rng.normal(scale=0.3, size=k), axis=1)
    y = (rng.uniform(size=(n, 1)) > truth.cumsum(axis=1)).sum(axis=1).clip(0, k - 1)
    blocks = MatrixScaling(input="logits", reg_lambda=0.01, reg_mu=0.01, tol=1e-10).fit(logits, y)
    assert newton.class_block_bytes(k) == 3 * 8 * k * (k + 1) ** 2
    monkeypatch.setattr(newton, "BLOCK_BYTES_MAX", 0)
    diagonal = MatrixScaling(input="logits", reg_lambda=0.01, reg_mu=0.01, tol=1e-10).fit(logits, y)
    np.testing.assert_allclose(diagonal.coef_, blocks.coef_, atol=1e-5)
    np.testing.assert_allclose(diagonal.predict_proba(logits), blocks.predict_proba(logits), atol=1e-6)


def test_a_matrix_fit_too_large_for_memory_is_refused_up_front(monkeypatch, rng):
    """The Newton fit's memory (probabilities, a Hessian product, the
    parameters and the class blocks) is checked before it starts: over
    bece's limit, a ValueError names X's shape and what to do instead."""
    from bece.calibrate import MatrixScaling

    k, n = 60, 200
    logits = rng.normal(size=(n, k))
    y = rng.integers(0, k, size=n)
    y[:k] = np.arange(k)
    monkeypatch.setenv("BECE_MEMORY_LIMIT", "2MiB")  # the blocks alone take 5.4 MB
    with pytest.raises(ValueError, match=r"X of shape \(200, 60\): MatrixScaling's Newton fit .* "
                                         r"use VectorScaling or TemperatureScaling"):
        MatrixScaling(input="logits", reg_lambda=0.01, reg_mu=0.01).fit(logits, y)
