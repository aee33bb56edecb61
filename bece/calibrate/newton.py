r"""Truncated Newton (Newton-CG) for the convex multinomial losses of
:mod:`bece.calibrate.linear`, counting passes over the data.

Each iteration evaluates the loss, its gradient and a positive definite
preconditioner :math:`M` at the current point in **one pass** (one softmax
of every row), then solves the Newton system :math:`H d = -g` approximately
by preconditioned conjugate gradients, where each product :math:`H v` with the
exact Hessian is **one more pass** (the softmax recomputed, nothing of size
n x K kept). For rows with probabilities :math:`\hat p_i` and a change
:math:`\delta a_i` of their scores :math:`a_i`, the Hessian of the log-loss
in :math:`a_i` acts as

.. math::

    \delta a_i \mapsto \hat p_i \odot \big(\delta a_i - \langle \hat p_i, \delta a_i\rangle\big)

(:math:`\operatorname{diag}(\hat p_i) - \hat p_i \hat p_i^\top`: the diagonal
:math:`\hat p_{ik}(1 - \hat p_{ik})` and the off-diagonal
:math:`-\hat p_{ij}\hat p_{ik}`), chained through the linear map from the
parameters to :math:`a_i` and back.

CG stops at a relative residual :math:`\eta = \min(0.5, \sqrt{\|g\|_{M^{-1}}})`
(the forcing sequence of Eisenstat and Walker that makes the outer
iteration superlinear), or where the residual (the gradient the step
predicts) is below ``tol / 2``, or on non-positive curvature (the softmax's constant
direction). The step is taken whole when it satisfies Armijo's condition,
else halved. The fit stops when :math:`\|g\|_{M^{-1}} = \sqrt{g^\top M^{-1} g}`
falls to ``tol`` (an l2 norm in the coordinates whitened by :math:`M`).

Preconditioners, built from statistics of the same pass as the gradient
(:func:`bece.calibrate.linear.linear_objective` with ``curvature=True``):

* vector scaling, :func:`block_preconditioner`: each class's exact 2 x 2
  Hessian block in :math:`(w_j, b_j)` (the coupling of a weight and its
  intercept; the classes' coupling :math:`-\hat p_{ij}\hat p_{ik}` is left to CG);
* matrix scaling and Dirichlet calibration, :func:`kronecker_preconditioner`:
  the Hessian :math:`\frac1n\sum_i (\operatorname{diag}\hat p_i - \hat p_i\hat p_i^\top)
  \otimes \tilde x_i \tilde x_i^\top` (with :math:`\tilde x_i = (x_i, 1)`)
  approximated by a Kronecker product :math:`(A / \operatorname{tr} A) \otimes S` (as K-FAC
  does), :math:`A` the mean of :math:`\operatorname{diag}\hat p_i - \hat p_i\hat p_i^\top`
  and :math:`S` the mean of :math:`\tilde x_i \tilde x_i^\top` weighted by each row's
  curvature :math:`1 - \|\hat p_i\|^2` (confident rows, which carry none, do
  not count; the sum of the diagonal blocks is exact), plus the penalty's
  mean diagonal :math:`\delta`; it is inverted through the
  eigendecompositions of :math:`A` (K x K) and :math:`S` ((K+1) x (K+1)).

Starting point: :func:`rough_temperature`, a few safeguarded one-dimensional
Newton steps on :math:`\log(1/T)` (one pass each) to 5% in T, not
temperature scaling's 1e-10 (the full Newton refines every direction).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .scores import Scores
from .temperature import PassCounter, fit_temperature, temperature_terms

__all__ = ["block_preconditioner", "kronecker_preconditioner", "newton_cg", "rough_temperature"]

Vec = Callable[[np.ndarray], np.ndarray]
Evaluate = Callable[[np.ndarray], tuple[Any, ...]]


def newton_cg(evaluate: Evaluate, hessp: Callable[[np.ndarray, np.ndarray], np.ndarray] | None,
              theta0: np.ndarray, *, tol: float, max_iter: int, name: str,
              max_cg: int = 200) -> tuple[np.ndarray, int, float]:
    """Minimise by truncated Newton from ``theta0`` (module docstring).

    ``evaluate(theta) -> (loss, gradient, solve)`` in one pass, where
    ``solve(r)`` applies :math:`M^{-1}`; ``hessp(theta, v)`` is :math:`H v`
    in one pass. ``evaluate`` may return a fourth element instead,
    ``hvp(v)`` (:math:`H v` at that ``theta``, for instance from the
    probabilities its pass kept), with ``hessp`` None.
    Returns ``(theta, iterations, loss)``; a
    :class:`sklearn.exceptions.ConvergenceWarning` when ``max_iter``
    iterations end above ``tol`` or no step decreases the loss.

    Examples
    --------
    >>> import numpy as np
    >>> from bece.calibrate.newton import newton_cg
    >>> a = np.array([[3.0, 1.0], [1.0, 2.0]])
    >>> def evaluate(t):
    ...     return 0.5 * t @ a @ t - t.sum(), a @ t - 1.0, lambda r: r / np.diag(a)
    >>> theta, it, loss = newton_cg(evaluate, lambda t, v: a @ v, np.zeros(2),
    ...                             tol=1e-12, max_iter=20, name="example")
    >>> bool(np.allclose(theta, np.linalg.solve(a, [1.0, 1.0])))
    True
    """
    theta = np.asarray(theta0, dtype=np.float64).copy()
    loss, g, solve, hvp = _evaluate(evaluate, hessp, theta)
    eps = np.finfo(np.float64).eps
    for it in range(max_iter):
        z = solve(g)
        gnorm = float(np.sqrt(max(float(g @ z), 0.0)))
        if gnorm <= tol:
            return theta, it, loss
        # preconditioned CG on H d = -g
        eta = min(0.5, np.sqrt(gnorm))
        d = np.zeros_like(theta)
        r = -g
        zr = -z
        p = zr.copy()
        rz = float(r @ zr)
        for _ in range(max_cg):
            hp = hvp(p)
            curv = float(p @ hp)
            if curv <= 0:
                if not d.any():
                    d = p
                break
            alpha = rz / curv
            d += alpha * p
            r = r - alpha * hp
            zr = solve(r)
            rz_new = float(r @ zr)
            if np.sqrt(max(rz_new, 0.0)) <= max(eta * gnorm, 0.5 * tol):
                break
            p = zr + (rz_new / rz) * p
            rz = rz_new
        slope = float(g @ d)
        if slope >= 0:  # not a descent direction (rounding): the preconditioned gradient
            d, slope = -z, -gnorm**2
        step = 1.0
        while True:
            new = theta + step * d
            new_loss, new_g, new_solve, new_hvp = _evaluate(evaluate, hessp, new)
            if new_loss <= loss + 1e-4 * step * slope + 8 * eps * abs(loss):
                break
            step *= 0.5
            if step < 1e-10:
                _warn(name, f"no step decreases the loss (gradient norm {gnorm:.2e}, tol {tol:g})")
                return theta, it + 1, loss
        theta, loss, g, solve, hvp = new, new_loss, new_g, new_solve, new_hvp
    z = solve(g)
    gnorm = float(np.sqrt(max(float(g @ z), 0.0)))
    if gnorm > tol:
        _warn(name, f"Newton-CG stopped after max_iter={max_iter} iterations (gradient norm "
                    f"{gnorm:.2e}, tol {tol:g}); raise max_iter")
    return theta, max_iter, loss


def _evaluate(evaluate: Evaluate, hessp: Callable[[np.ndarray, np.ndarray], np.ndarray] | None,
              theta: np.ndarray) -> tuple[float, np.ndarray, Vec, Vec]:
    out = evaluate(theta)
    if len(out) == 4:
        return out[0], out[1], out[2], out[3]
    if hessp is None:
        raise ValueError("newton_cg needs hessp where evaluate returns no hvp")
    return out[0], out[1], out[2], lambda v: hessp(theta, v)


def _warn(name: str, message: str) -> None:
    from sklearn.exceptions import ConvergenceWarning

    warnings.warn(f"{name}: {message}", ConvergenceWarning, stacklevel=4)


def block_preconditioner(h: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    r"""``r -> M^{-1} r`` for vector scaling's ``theta = [w, b]``, with :math:`M`
    the 2 x 2 blocks ``h[j] = (H_ww, H_wb, H_bb)`` of each class (eigenvalues
    floored at 1e-12 of the largest diagonal, so :math:`M` is positive definite).

    Examples
    --------
    >>> import numpy as np
    >>> from bece.calibrate.newton import block_preconditioner
    >>> solve = block_preconditioner(np.array([[2.0, 1.0, 1.0]]))
    >>> solve(np.array([3.0, 2.0]))                    # [[2, 1], [1, 1]]^-1 (3, 2)
    array([1., 1.])
    """
    k = h.shape[0]
    floor = 1e-12 * max(float(h[:, 0].max()), float(h[:, 2].max()), 1e-300)
    h0 = np.maximum(h[:, 0], floor)
    h2 = np.maximum(h[:, 2], floor)
    h1 = h[:, 1]
    det = np.maximum(h0 * h2 - h1**2, 1e-12 * h0 * h2)

    def solve(r: np.ndarray) -> np.ndarray:
        rw, rb = r[:k], r[k:]
        return np.concatenate([(h2 * rw - h1 * rb) / det, (h0 * rb - h1 * rw) / det])

    return solve


def kronecker_preconditioner(a: np.ndarray, s_eig: tuple[np.ndarray, np.ndarray],
                             delta: float) -> Callable[[np.ndarray], np.ndarray]:
    r"""``r -> (A \otimes S + \delta I)^{-1} r`` for ``theta = [W.ravel(), b]``,
    the class-by-feature blocks ordered as the rows of :math:`[W, b]`
    (K x (K+1)). ``s_eig`` is ``numpy.linalg.eigh`` of :math:`S` ((K+1) x (K+1));
    the eigenvalues of :math:`A` and :math:`S` are floored at 1e-8 of their
    largest (:math:`A`'s constant direction is null).

    Examples
    --------
    >>> import numpy as np
    >>> from bece.calibrate.newton import kronecker_preconditioner
    >>> a = np.array([[0.25, -0.25], [-0.25, 0.25]]) + 0.1 * np.eye(2)
    >>> s = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.2], [0.0, 0.2, 1.0]])
    >>> solve = kronecker_preconditioner(a, np.linalg.eigh(s), 0.01)
    >>> r = np.arange(6.0)                            # [W (2 x 2) row by row, b (2)]
    >>> m = np.kron(a, s) + 0.01 * np.eye(6)          # rows of [W, b]: W00 W01 b0 W10 W11 b1
    >>> order = [0, 1, 4, 2, 3, 5]
    >>> bool(np.allclose(solve(r)[order], np.linalg.solve(m, r[order])))
    True
    """
    k = a.shape[0]
    al, qa = np.linalg.eigh(a)
    al = np.maximum(al, 1e-8 * max(float(al.max()), 1e-300))
    sl, qs = s_eig
    sl = np.maximum(sl, 1e-8 * max(float(sl.max()), 1e-300))
    den = al[:, None] * sl[None, :] + delta

    def solve(r: np.ndarray) -> np.ndarray:
        rm = np.concatenate([r[:k * k].reshape(k, k), r[k * k:, None]], axis=1)
        out = qa @ (((qa.T @ rm @ qs) / den) @ qs.T)
        return np.concatenate([out[:, :k].ravel(), out[:, k]])

    return solve


def rough_temperature(scores: Scores, y: np.ndarray, bounds: tuple[float, float],
                      counter: PassCounter) -> float:
    r"""A starting temperature: Newton steps on :math:`v = \log(1/T)` from
    :math:`T = 1`, each at most 2 in :math:`v`, until a step is below 0.05 (or
    20 steps); one pass each. Where it ends at ``bounds`` (or outside),
    :func:`~bece.calibrate.temperature.fit_temperature` decides (and raises
    its error when the minimum lies beyond a bound).

    Examples
    --------
    >>> import numpy as np
    >>> from bece.calibrate.newton import rough_temperature
    >>> from bece.calibrate.scores import as_scores
    >>> from bece.calibrate.temperature import PassCounter
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(scale=3.0, size=(4000, 3))
    >>> p = np.exp(z / 2) / np.exp(z / 2).sum(axis=1, keepdims=True)
    >>> y = (rng.uniform(size=(4000, 1)) > p.cumsum(axis=1)).sum(axis=1)   # T = 2
    >>> t = rough_temperature(as_scores(z, "logits"), y, (0.01, 100.0), PassCounter())
    >>> bool(1.8 < t < 2.2)
    True
    """
    lo, hi = -np.log(bounds[1]), -np.log(bounds[0])
    v = float(np.clip(0.0, lo, hi))
    for _ in range(20):
        beta = np.exp(v)
        _, g, h = temperature_terms(scores, y, beta, second=True, counter=counter)
        gv = beta * g
        hv = beta * g + beta**2 * h
        if gv == 0 and not hv > 0:  # flat: fit_temperature says why
            return fit_temperature(scores, y, bounds, counter)
        step = -gv / hv if hv > 0 else -2.0 * np.sign(gv)
        step = float(np.clip(step, -2.0, 2.0))
        v = float(np.clip(v + step, lo, hi))
        if abs(step) < 0.05:
            break
    if v <= lo or v >= hi:
        return fit_temperature(scores, y, bounds, counter)
    return float(np.exp(-v))
