r"""Truncated Newton (Newton-CG) for the convex multinomial losses of
:mod:`bece._calibrate.linear`, counting passes over the data.

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
(:func:`bece._calibrate.linear.linear_objective` with ``curvature=True``, or
the probabilities :func:`bece._calibrate.newton.full_evaluate` keeps):

* vector scaling, :func:`block_preconditioner`: each class's exact 2 x 2
  Hessian block in :math:`(w_j, b_j)` (the coupling of a weight and its
  intercept; the classes' coupling :math:`-\hat p_{ij}\hat p_{ik}` is left to CG);
* matrix scaling and Dirichlet calibration, :func:`class_block_preconditioner`:
  the Hessian :math:`\frac1n\sum_i (\operatorname{diag}\hat p_i - \hat p_i\hat p_i^\top)
  \otimes \tilde x_i \tilde x_i^\top` (with :math:`\tilde x_i = (x_i, 1)`) by its
  K diagonal blocks, one per class (:func:`class_blocks`: exact, or from rows
  drawn by their curvature in that class), plus the penalty's diagonal. The
  class coupling :math:`-\hat p_{ij}\hat p_{ik}` is left to CG; per row,
  :math:`\operatorname{diag}\hat p_i - \hat p_i\hat p_i^\top` is at most twice its diagonal
  (Gershgorin), and the softmax's flat directions (a shift of every class's
  row, which CG could only resolve through the weak penalty) are removed
  from the objective (:func:`best_shift`, :func:`bece._calibrate.newton.full_evaluate`).
  On CIFAR-100 logits it takes about a tenth of the Hessian products that
  :func:`kronecker_preconditioner` (a K-FAC-like Kronecker product, kept for
  comparison) took (``benchmarks/preconditioners.py``).

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

__all__ = ["BLOCK_BYTES_MAX", "best_shift", "block_preconditioner", "class_block_bytes",
           "class_block_preconditioner", "class_blocks", "class_diagonal_preconditioner",
           "full_evaluate", "kronecker_preconditioner", "newton_cg", "penalty_weights",
           "rough_temperature"]

#: entries (row, class) per row drawn for :func:`class_blocks` (about that many passes' products)
BLOCK_DRAWS = 8
#: The most memory the class-block preconditioner may take: its blocks, their
#: copy and their inverses, 3 x 8 K (K+1)^2 bytes (1 GiB at K = 280; 24 GB at
#: K = 1,000). Above it the preconditioner is each block's diagonal
#: (:func:`class_diagonal_preconditioner`, 8 K (K+1) bytes): more CG steps, the
#: same minimum.
BLOCK_BYTES_MAX = 1 << 30


def class_block_bytes(k: int) -> int:
    """Bytes of the class-block preconditioner at K classes."""
    return 3 * 8 * k * (k + 1) ** 2


def class_diagonal_preconditioner(p: np.ndarray, x: np.ndarray,
                                  diag: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    r"""``r -> M^{-1} r`` with :math:`M` the diagonal of the exact class blocks
    of :func:`class_blocks` (one pass) plus the penalty's ``diag`` (K, K+1):
    the preconditioner where the blocks would not fit in memory
    (:data:`BLOCK_BYTES_MAX`).

    Examples
    --------
    >>> import numpy as np
    >>> from bece._calibrate.newton import class_blocks, class_diagonal_preconditioner
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(40, 3)); p = rng.dirichlet(np.ones(3), size=40)
    >>> g = class_blocks(p, x)
    >>> solve = class_diagonal_preconditioner(p, x, np.zeros((3, 4)))
    >>> d = np.concatenate([np.diagonal(g, axis1=1, axis2=2)[:, :3].ravel(), g[:, 3, 3]])
    >>> bool(np.allclose(solve(d), 1.0))
    True
    """
    n, k = x.shape
    v = p * (1.0 - p)
    m = np.empty((k, k + 1))
    m[:, :k] = v.T @ (x * x) / n
    m[:, k] = v.sum(axis=0) / n
    m += diag
    m += 1e-10 * max(float(m.mean(axis=1).max()), 1e-300)
    flat = np.concatenate([m[:, :k].ravel(), m[:, k]])

    def solve(r: np.ndarray) -> np.ndarray:
        return r / flat

    return solve
#: rows, drawn uniformly without replacement, from which :func:`class_blocks` draws its entries
BLOCK_ROWS = 50_000

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
    >>> from bece._calibrate.newton import newton_cg
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
    >>> from bece._calibrate.newton import block_preconditioner
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
    >>> from bece._calibrate.newton import kronecker_preconditioner
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


def best_shift(theta: np.ndarray, k: int, weights: np.ndarray | None = None,
               target: np.ndarray | None = None) -> np.ndarray:
    r"""``theta = [W.ravel(), b]`` plus the shift :math:`1 c^\top` of every
    class's row that leaves the softmax unchanged and minimises ODIR: each
    column's off-diagonal weights and the intercepts to mean zero.

    With ``weights`` and ``target`` (K x K, :func:`bece._calibrate.linear.penalty_weights`),
    the shift that minimises :math:`\sum_{jk} h_{jk} (W_{jk} - t_{jk})^2`
    instead: each column's weighted mean of :math:`W - t` to zero (intercepts as above).

    Examples
    --------
    >>> import numpy as np
    >>> from bece._calibrate.newton import best_shift
    >>> best_shift(np.array([1.0, 2.0, 4.0, 1.0, 3.0, 1.0]), 2)   # [W00 W01 W10 W11 b0 b1]
    array([-3.,  0.,  0., -1.,  1., -1.])
    """
    w, b = theta[:k * k].reshape(k, k), theta[k * k:]
    if weights is None:
        weights = np.ones((k, k)) - np.eye(k)
    if target is None:
        target = np.zeros((k, k))
    return np.concatenate([(_shifted(w - target, weights) + target).ravel(), b - b.mean()])


def class_blocks(p: np.ndarray, x: np.ndarray, draws: int = BLOCK_DRAWS,
                 seed: int = 0, rows: int = BLOCK_ROWS) -> np.ndarray:
    r"""Each class's (K+1) x (K+1) Hessian block of the mean log-loss of
    :math:`\operatorname{softmax}(W x_i + b)` in its row of :math:`[W, b]`,
    :math:`G_j = \frac1n \sum_i v_{ij} \tilde x_i \tilde x_i^\top` with
    :math:`v_{ij} = \hat p_{ij}(1 - \hat p_{ij})`, :math:`\tilde x_i = (x_i, 1)`;
    shape (K, K+1, K+1).

    Exact where K <= ``draws``; else estimated without bias from about
    ``draws`` x m entries :math:`(i, j)` of m = min(n, ``rows``) rows drawn
    uniformly without replacement (weighted n/m), each entry kept with probability
    :math:`\min(1, v_{ij}/\tau)` and weighted :math:`\max(v_{ij}, \tau)`
    (the rows that carry a class's curvature are the ones drawn; :math:`\tau`
    from 200,000 entries; fixed ``seed``): about ``draws`` x m/n passes'
    products where the exact blocks cost K. Each block's diagonal is then
    raised to the exact one over all n rows (one more product). The row
    subsample bounds the build's cost as n grows; at n = 10^5, K = 100, 20,000
    rows instead of all took 35 passes instead of 27 to fit matrix scaling.

    Examples
    --------
    >>> import numpy as np
    >>> from bece._calibrate.newton import class_blocks
    >>> x = np.array([[1.0, 0.0], [0.0, 2.0]])
    >>> p = np.array([[0.5, 0.5], [0.9, 0.1]])
    >>> g = class_blocks(p, x)                     # K = 2: exact
    >>> xt = np.c_[x, np.ones(2)]
    >>> bool(np.allclose(g[1], (0.25 * np.outer(xt[0], xt[0]) + 0.09 * np.outer(xt[1], xt[1])) / 2))
    True
    """
    n, k = x.shape
    v = p * (1.0 - p)
    g = np.empty((k, k + 1, k + 1))
    rng = np.random.default_rng(seed)
    m = n if k <= draws else min(n, max(int(rows), 1))
    keep = np.sort(rng.choice(n, size=m, replace=False)) if m < n else slice(None)
    vs = v[keep]  # a uniform subsample of the rows, weighted n / m
    xts = np.empty((m, k + 1))
    xts[:, :k] = x[keep]
    xts[:, k] = 1.0
    if k <= draws:
        for j in range(k):
            xs = xts * np.sqrt(v[:, j])[:, None]
            g[j] = xs.T @ xs
        return g / n
    sub = np.sort(rng.choice(vs.ravel(), size=min(vs.size, 200_000), replace=False))[::-1]
    tail = np.r_[np.cumsum(sub[::-1])[::-1][1:], 0.0]  # sum of the entries after each
    drawn = vs.size / sub.size * (np.arange(sub.size) + 1 + tail / np.maximum(sub, 1e-300))
    tau = sub[min(int(np.searchsorted(drawn, draws * m)), sub.size - 1)]
    cls, idx = np.nonzero((vs >= tau * rng.random(vs.shape)).T)
    weight = np.maximum(vs[idx, cls], tau)
    edges = np.searchsorted(cls, np.arange(k + 1))
    for j in range(k):
        s, e = edges[j], edges[j + 1]
        xs = xts[idx[s:e]] * np.sqrt(weight[s:e])[:, None]
        g[j] = xs.T @ xs
    g /= m
    i = np.arange(k + 1)
    exact = np.empty((k, k + 1))
    exact[:, :k] = v.T @ (x * x)
    exact[:, k] = v.sum(axis=0)
    g[:, i, i] = np.maximum(g[:, i, i], exact / n)
    return g


def class_block_preconditioner(g: np.ndarray, diag: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    r"""``r -> M^{-1} r`` for ``theta = [W.ravel(), b]`` with :math:`M` block
    diagonal by class: class j's block ``g[j] + diag(diag[j])`` over its row of
    :math:`[W, b]` (``g`` from :func:`class_blocks`, ``diag`` (K, K+1) the
    penalty's diagonal), plus 1e-10 of the largest mean diagonal (positive definite).

    Examples
    --------
    >>> import numpy as np
    >>> from bece._calibrate.newton import class_block_preconditioner
    >>> g = np.array([[[2.0, 0, 0], [0, 1, 0], [0, 0, 1]], [[1, 0, 0], [0, 4, 0], [0, 0, 1]]])
    >>> solve = class_block_preconditioner(g, np.zeros((2, 3)))
    >>> solve(np.array([2.0, 1.0, 1.0, 4.0, 1.0, 1.0]))     # [W00 W01 W10 W11 b0 b1]
    array([1., 1., 1., 1., 1., 1.])
    """
    k = g.shape[0]
    m = g.copy()
    i = np.arange(k + 1)
    m[:, i, i] += diag + 1e-10 * max(float(m[:, i, i].mean(axis=1).max()), 1e-300)
    inv = np.linalg.inv(m)

    def solve(r: np.ndarray) -> np.ndarray:
        rm = np.concatenate([r[:k * k].reshape(k, k), r[k * k:, None]], axis=1)
        out = np.einsum("jab,jb->ja", inv, rm)
        return np.concatenate([out[:, :k].ravel(), out[:, k]])

    return solve


def rough_temperature(scores: Scores, y: np.ndarray, bounds: tuple[float, float],
                      counter: PassCounter) -> float:
    r"""A starting temperature: Newton steps on :math:`v = \log(1/T)` from
    :math:`T = 1`, each at most 2 in :math:`v`, until a step is below 0.05 (or
    20 steps); one pass each. Where it ends at ``bounds`` (or outside),
    :func:`~bece._calibrate.temperature.fit_temperature` decides (and raises
    its error when the minimum lies beyond a bound).

    Examples
    --------
    >>> import numpy as np
    >>> from bece._calibrate.newton import rough_temperature
    >>> from bece._calibrate.scores import as_scores
    >>> from bece._calibrate.temperature import PassCounter
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


def full_evaluate(x: np.ndarray, y: np.ndarray, reg_lambda: float, reg_mu: float,
                  counter: PassCounter | None = None, *,
                  shift: bool = True, builds: int = 2, reg_diagonal: float = 0.0,
                  diagonal: float = 1.0) -> Callable[[np.ndarray], Any]:
    r"""``theta -> (loss, gradient, solve, hvp)`` for matrix scaling's
    ``theta = [W.ravel(), b]`` on features ``x`` (n x K, float64), for
    :func:`~bece._calibrate.newton.newton_cg`.

    The softmax does not change when the same vector :math:`c` is added to
    every class's row of :math:`[W, b]`, so the NLL is flat along those K+1
    directions and only ODIR, weakly, curves them. The objective here is the
    one after the best such shift (:func:`best_shift`: each column's
    off-diagonal weights and the intercepts centred), :math:`f(P\theta)` with
    :math:`P` that linear projection: it has the same minimum, reached at
    ``best_shift`` of any of its minimisers, and no weakly curved directions.
    (``shift=False``: ODIR itself, :func:`bece._calibrate.linear.linear_objective`'s, for comparison.)

    The loss and gradient in one pass, which keeps the probabilities
    :math:`\hat p` (n x K); ``hvp(v)``, the exact Hessian times ``v``, from the
    kept :math:`\hat p` (one pass over ``x``: two products of size n K^2 and
    no softmax); ``solve``, the class-block preconditioner
    (:func:`class_blocks`,
    :func:`class_block_preconditioner`), built from the kept
    :math:`\hat p` on first use (only where Newton's line search stops) at the first
    ``builds`` such points; later ones keep the last (a build costs ~8 products).
    Where the blocks would take more than :data:`BLOCK_BYTES_MAX` (K above
    about 280), each block's diagonal instead
    (:func:`class_diagonal_preconditioner`), rebuilt at every point (one pass).

    Examples
    --------
    >>> import numpy as np
    >>> from bece._calibrate.linear import linear_objective
    >>> from bece._calibrate.newton import best_shift, full_evaluate
    >>> rng = np.random.default_rng(0)
    >>> x, y = rng.normal(size=(50, 3)), rng.integers(0, 3, size=50)
    >>> theta = rng.normal(size=12)
    >>> loss, grad, solve, hvp = full_evaluate(x, y, 0.5, 0.1)(theta)
    >>> blocks = lambda: iter([(0, 50, x)])
    >>> ref = linear_objective(blocks, y, 50, 3, full=True, reg_lambda=0.5, reg_mu=0.1)
    >>> bool(np.isclose(loss, ref(best_shift(theta, 3))[0]))
    True
    """
    n, k = x.shape
    c_mu = reg_mu / k
    h, target = penalty_weights(k, reg_lambda, reg_diagonal, diagonal)
    pen_diag = np.concatenate([2 * h, np.full((k, 1), 2 * c_mu)], axis=1)  # by class and feature
    penalised = bool(h.any() or c_mu)
    rows, label_x = np.arange(n), np.zeros((k, k))  # label_x: the features' sums by label
    np.add.at(label_x, y, x)
    label_n = np.bincount(y, minlength=k).astype(np.float64)
    built: list[Callable[[np.ndarray], np.ndarray]] = []
    count = PassCounter() if counter is None else counter

    def evaluate(theta: np.ndarray) -> tuple[float, np.ndarray, Callable[[np.ndarray], np.ndarray],
                                             Callable[[np.ndarray], np.ndarray]]:
        w, b = theta[:k * k].reshape(k, k), theta[k * k:]
        p = x @ w.T
        p += b
        p -= p.max(axis=1, keepdims=True)
        zy = p[rows, y]
        np.exp(p, out=p)
        total = p.sum(axis=1, keepdims=True)
        loss = float(np.sum(np.log(total[:, 0]) - zy)) / n
        p /= total
        gw = (p.T @ x - label_x) / n
        gb = (p.sum(axis=0) - label_n) / n
        count.count += 1
        if penalised:  # the penalty after its best shift (weighted columns, b centred)
            wc = _shifted(w - target, h) if shift else w - target
            bc = b - b.mean() if shift else b
            loss += float(np.sum(h * wc**2)) + c_mu * float(bc @ bc)
            gw += 2 * h * wc
            gb += 2 * c_mu * bc
        kept: list[Callable[[np.ndarray], np.ndarray]] = []

        def solve(r: np.ndarray) -> np.ndarray:
            if not kept:
                if class_block_bytes(k) > BLOCK_BYTES_MAX:  # the blocks' diagonal: one pass
                    kept.append(class_diagonal_preconditioner(p, x, pen_diag))
                    count.count += 1
                    return kept[0](r)
                if len(built) < builds:  # one pass, and ~BLOCK_DRAWS passes' products
                    built.append(class_block_preconditioner(class_blocks(p, x), pen_diag))
                    count.count += 1
                kept.append(built[-1])
            return kept[0](r)

        def hvp(v: np.ndarray) -> np.ndarray:
            dw, db = v[:k * k].reshape(k, k), v[k * k:]
            da = x @ dw.T
            da += db
            da -= np.einsum("ij,ij->i", p, da)[:, None]
            da *= p
            count.count += 1
            dwc = _shifted(dw, h) if shift else dw
            dbc = db - db.mean() if shift else db
            hw = (da.T @ x) / n + 2 * h * dwc
            hb = da.sum(axis=0) / n + 2 * c_mu * dbc
            return np.concatenate([hw.ravel(), hb])

        return loss, np.concatenate([gw.ravel(), gb]), solve, hvp

    return evaluate


def penalty_weights(k: int, reg_lambda: float, reg_diagonal: float = 0.0,
                    diagonal: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    r"""``(h, t)``, each (K, K): the weight and the target of each entry of :math:`W`
    in the penalty :math:`\sum_{jk} h_{jk} (W_{jk} - t_{jk})^2`:
    :math:`\lambda/(K(K-1))` off the diagonal (target 0, ODIR) and
    :math:`\nu/K` on it (target ``diagonal``; ODIR alone for :math:`\nu = 0`)."""
    h = np.full((k, k), reg_lambda / (k * (k - 1)))
    np.fill_diagonal(h, reg_diagonal / k)
    return h, np.eye(k) * diagonal


def _shifted(w: np.ndarray, h: np.ndarray) -> np.ndarray:
    """``w`` plus each column's constant that minimises the column's sum of ``h * w**2``
    (its weighted mean removed; nothing where the column's weights are all 0)."""
    total = h.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        c = np.where(total > 0, (h * w).sum(axis=0) / total, 0.0)
    return w - c
