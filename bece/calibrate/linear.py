r"""Vector scaling, matrix scaling with ODIR, and Dirichlet calibration.

Each is a multinomial logistic regression on features :math:`x_i` of a
classifier's scores (Guo et al. 2017; Kull et al. 2019):

* :class:`VectorScaling`: :math:`\hat p_i = \operatorname{softmax}(w \odot z_i + b)`
  on the logits :math:`z_i` (2K parameters, unregularised);
* :class:`MatrixScaling`: :math:`\hat p_i = \operatorname{softmax}(W z_i + b)`
  (K(K+1) parameters);
* :class:`DirichletCalibration`: :math:`\hat p_i = \operatorname{softmax}(W \log p_i + b)`
  with :math:`\log p_i = \operatorname{log\,softmax}(z_i)` (the log of the
  probabilities themselves for ``input="probabilities"``), Kull et al.'s
  Dirichlet calibration in its log-linear form.

Matrix scaling and Dirichlet calibration minimise the mean negative
log-likelihood plus Kull et al.'s (2019) off-diagonal and intercept
regularisation (ODIR):

.. math::

    \frac1n \sum_i \big[\log \textstyle\sum_k e^{a_{ik}} - a_{i y_i}\big]
    + \frac{\lambda}{K(K-1)} \sum_{j \ne k} W_{jk}^2 + \frac{\mu}{K} \sum_k b_k^2,
    \qquad a_i = W x_i + b,

which leaves the diagonal (a per-class temperature) free and pulls the rest
towards temperature scaling. With ``reg_lambda`` or ``reg_mu`` None they are
chosen by ``cv``-fold cross-validation on the fitting data
(:class:`sklearn.model_selection.KFold`, shuffled with ``random_state``):
the value of ``reg_grid`` with the smallest held-out NLL; when both are None
they are tied (:math:`\mu = \lambda`, a one-dimensional search; Kull et al.
searched a grid of both). The chosen values are ``reg_lambda_`` and
``reg_mu_``. Across the grid each fold starts from its previous solution
(largest penalty first), and its fits stop at the larger of ``tol`` and :data:`CV_TOL`.

Every objective is convex; it is minimised by :func:`scipy.optimize.minimize`
(L-BFGS-B) with its analytic gradient, from temperature scaling's solution
(:math:`w = 1/\hat T`, :math:`W = I/\hat T`, :math:`b = 0`), which each
family contains, in float64, in parameters scaled by the square root of the
Hessian's diagonal there (:func:`hessian_diagonal`, one pass: a diagonal
preconditioner); vector scaling's parameters are instead whitened by the
Cholesky factor of each class's 2 x 2 Hessian block in :math:`(w_j, b_j)`
(:func:`vector_hessian_blocks`, one pass), which also removes their coupling
(at K = 1,000, n = 20,000: 190 passes with the diagonal, 65 with the blocks).
``tol`` is L-BFGS-B's ``gtol`` on the gradient of the mean
loss in those scaled parameters (and ``ftol`` is ``tol *``
:data:`FTOL_FACTOR`). Vector
scaling runs block by block over
the scores; matrix and Dirichlet scaling hold their float64 features
(n x K; refused above bece's memory limit, :mod:`bece.base.memory`).
The softmax is invariant to adding a constant to every intercept, so the
fitted ``intercept_`` is centred (mean zero); ``n_passes_`` counts the passes
over the data (one softmax each), temperature scaling's included.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from scipy.optimize import minimize

from ..base.memory import check_allocation
from .base import ScoreCalibrator
from .scores import BLOCK, Scores, log_softmax, softmax
from .temperature import PassCounter, check_bounds, fit_temperature

__all__ = [
    "DirichletCalibration",
    "FTOL_FACTOR",
    "MatrixScaling",
    "CV_TOL",
    "REG_GRID",
    "VectorScaling",
    "hessian_diagonal",
    "linear_objective",
    "vector_hessian_blocks",
]

#: Default grid of ODIR strengths searched by cross-validation
REG_GRID = (1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0)

#: ``tol`` of the cross-validation's fits (at least): they only rank the candidates
CV_TOL = 1e-6

#: L-BFGS-B's ``ftol`` is ``tol * FTOL_FACTOR`` (relative decrease of the loss)
FTOL_FACTOR = 1e-4

Blocks = Callable[[], Iterator[tuple[int, int, np.ndarray]]]


def linear_objective(blocks: Blocks, y: np.ndarray, n: int, k: int, *, full: bool,
                     reg_lambda: float = 0.0, reg_mu: float = 0.0,
                     counter: PassCounter | None = None) -> Callable[[np.ndarray], tuple[float, np.ndarray]]:
    r"""``theta -> (loss, gradient)`` of the mean NLL plus ODIR.

    ``full``: ``theta = [W.ravel() (K*K), b (K)]`` and :math:`a = x W^\top + b`;
    else ``theta = [w (K), b (K)]`` and :math:`a = x \odot w + b`.
    ``blocks()`` yields ``(start, stop, x)`` float64 feature blocks.
    """
    off = ~np.eye(k, dtype=bool)
    c_lam = reg_lambda / (k * (k - 1))
    c_mu = reg_mu / k

    def fun(theta: np.ndarray) -> tuple[float, np.ndarray]:
        if full:
            w = theta[:k * k].reshape(k, k)
        else:
            w = theta[:k]
        b = theta[-k:]
        gw = np.zeros_like(w)
        gb = np.zeros(k)
        loss = 0.0
        for start, stop, x in blocks():
            a = x @ w.T + b if full else x * w + b
            rows = np.arange(stop - start)
            yy = y[start:stop]
            m = a.max(axis=1, keepdims=True)
            e = np.exp(a - m)
            total = e.sum(axis=1, keepdims=True)
            loss += float(np.sum(m[:, 0] + np.log(total[:, 0]) - a[rows, yy]))
            g = e / total
            g[rows, yy] -= 1.0
            if full:
                gw += g.T @ x
            else:
                gw += np.einsum("ij,ij->j", g, x)
            gb += g.sum(axis=0)
        if counter is not None:
            counter.count += 1
        loss /= n
        gw /= n
        gb /= n
        if full and (c_lam or c_mu):
            loss += c_lam * float(np.sum(w[off] ** 2)) + c_mu * float(b @ b)
            gw = gw + 2 * c_lam * np.where(off, w, 0.0)
            gb = gb + 2 * c_mu * b
        return loss, np.concatenate([gw.ravel(), gb])

    return fun


def hessian_diagonal(blocks: Blocks, n: int, k: int, theta: np.ndarray, *, full: bool,
                     reg_lambda: float = 0.0, reg_mu: float = 0.0,
                     counter: PassCounter | None = None) -> np.ndarray:
    r"""Diagonal of the objective's Hessian at ``theta`` (one pass).

    :math:`\partial^2/\partial w_{jk}^2 = \frac1n \sum_i x_{ik}^2 \hat p_{ij}(1 - \hat p_{ij})`
    (:math:`w_k`: :math:`x_{ik}^2 \hat p_{ik}(1 - \hat p_{ik})`),
    :math:`\partial^2/\partial b_j^2 = \frac1n \sum_i \hat p_{ij}(1 - \hat p_{ij})`, plus the
    penalty's :math:`2\lambda/(K(K-1))` off the diagonal and :math:`2\mu/K`.
    """
    w = theta[:k * k].reshape(k, k) if full else theta[:k]
    b = theta[-k:]
    dw = np.zeros((k, k)) if full else np.zeros(k)
    db = np.zeros(k)
    for _, _, x in blocks():
        p = softmax(x @ w.T + b if full else x * w + b)
        v = p * (1.0 - p)
        dw += v.T @ (x * x) if full else np.einsum("ij,ij->j", v, x * x)
        db += v.sum(axis=0)
    if counter is not None:
        counter.count += 1
    dw /= n
    db /= n
    if full:
        dw = dw + 2 * reg_lambda / (k * (k - 1)) * ~np.eye(k, dtype=bool)
        db = db + 2 * reg_mu / k
    return np.concatenate([dw.ravel(), db])


def vector_hessian_blocks(blocks: Blocks, n: int, k: int, theta: np.ndarray,
                          counter: PassCounter | None = None) -> np.ndarray:
    r"""Per-class 2 x 2 blocks of vector scaling's Hessian at ``theta`` (one pass).

    Row ``j`` holds :math:`\frac1n \sum_i v_{ij} x_{ij}^2`, :math:`\frac1n \sum_i v_{ij} x_{ij}`,
    :math:`\frac1n \sum_i v_{ij}` with :math:`v_{ij} = \hat p_{ij}(1 - \hat p_{ij})`: the
    curvature of :math:`(w_j, b_j)` together, whose coupling (logits with a
    non-zero mean) a diagonal preconditioner misses.
    """
    w, b = theta[:k], theta[k:]
    h = np.zeros((k, 3))
    for _, _, x in blocks():
        p = softmax(x * w + b)
        v = p * (1.0 - p)
        vx = v * x
        h[:, 0] += np.einsum("ij,ij->j", vx, x)
        h[:, 1] += vx.sum(axis=0)
        h[:, 2] += v.sum(axis=0)
    if counter is not None:
        counter.count += 1
    return h / n


def _minimise_vector(fun: Callable[[np.ndarray], tuple[float, np.ndarray]], theta0: np.ndarray,
                     h: np.ndarray, tol: float, max_iter: int, name: str) -> tuple[np.ndarray, int]:
    r"""L-BFGS-B in vector scaling's parameters whitened by the Cholesky factor
    of each class's 2 x 2 Hessian block ``h`` (:func:`vector_hessian_blocks`):
    :math:`u_j = L_j^\top (w_j, b_j)`."""
    k = h.shape[0]
    floor = 1e-12 * max(float(h[:, 0].max()), float(h[:, 2].max()), 1e-300)
    l11 = np.sqrt(np.maximum(h[:, 0], floor))
    l21 = h[:, 1] / l11
    l22 = np.sqrt(np.maximum(h[:, 2] - l21**2, np.maximum(1e-12 * h[:, 2], floor)))

    def to_theta(u: np.ndarray) -> np.ndarray:
        b = u[k:] / l22
        return np.r_[(u[:k] - l21 * b) / l11, b]

    def scaled(u: np.ndarray) -> tuple[float, np.ndarray]:
        loss, g = fun(to_theta(u))
        gw = g[:k] / l11
        return loss, np.r_[gw, (g[k:] - l21 * gw) / l22]

    u0 = np.r_[l11 * theta0[:k] + l21 * theta0[k:], l22 * theta0[k:]]
    return _run_lbfgs(scaled, u0, to_theta, tol, max_iter, name)


def _run_lbfgs(scaled: Callable[[np.ndarray], tuple[float, np.ndarray]], u0: np.ndarray,
               to_theta: Callable[[np.ndarray], np.ndarray], tol: float, max_iter: int,
               name: str) -> tuple[np.ndarray, int]:
    res = minimize(scaled, u0, jac=True, method="L-BFGS-B",
                   options={"gtol": tol, "ftol": tol * FTOL_FACTOR, "maxiter": max_iter,
                            "maxfun": 2 * max_iter, "maxcor": 20})
    if res.nit >= max_iter:
        from sklearn.exceptions import ConvergenceWarning

        warnings.warn(f"{name}: L-BFGS-B stopped after max_iter={max_iter} iterations "
                      f"(gradient max {np.abs(res.jac).max():.2e}, tol {tol:g}); raise max_iter",
                      ConvergenceWarning, stacklevel=4)
    return to_theta(np.asarray(res.x, dtype=np.float64)), int(res.nit)


def _minimise(fun: Callable[[np.ndarray], tuple[float, np.ndarray]], theta0: np.ndarray,
              diag: np.ndarray, tol: float, max_iter: int, name: str) -> tuple[np.ndarray, int]:
    """L-BFGS-B in the parameters scaled by the square root of the Hessian's
    diagonal at the start (a diagonal preconditioner; zeros floored)."""
    scale = np.sqrt(np.maximum(diag, 1e-12 * max(float(diag.max()), 1e-300)))

    def scaled(u: np.ndarray) -> tuple[float, np.ndarray]:
        loss, grad = fun(u / scale)
        return loss, grad / scale

    return _run_lbfgs(scaled, theta0 * scale, lambda u: u / scale, tol, max_iter, name)


def _check_common(est: Any) -> None:
    check_bounds(est.bounds)
    if not isinstance(est.tol, (int, float)) or isinstance(est.tol, bool) or not 0 < est.tol < 1:
        raise ValueError(f"tol must be a number in (0, 1), got {est.tol!r}")
    if isinstance(est.max_iter, bool) or not isinstance(est.max_iter, (int, np.integer)) or est.max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer, got {est.max_iter!r}")


class VectorScaling(ScoreCalibrator):
    r"""Vector scaling: :math:`\operatorname{softmax}(w \odot z + b)`, by maximum likelihood.

    Parameters
    ----------
    input : {"auto", "logits", "probabilities"}, default "auto"
        What ``X`` holds (:mod:`bece.calibrate.scores`).
    tol : float, default 1e-8
        L-BFGS-B's ``gtol`` on the mean loss's gradient.
    max_iter : int, default 1000
    bounds : (float, float), default (0.01, 100)
        Temperature search interval of the starting point.

    Attributes
    ----------
    coef_ : ndarray of shape (K,)
        :math:`w`.
    intercept_ : ndarray of shape (K,)
        :math:`b`, centred.
    nll_ : float
        Mean NLL of the calibration set at the fit.
    n_passes_ : int
        Passes over the data (softmax evaluations), temperature scaling's included.
    n_iter_ : int
        L-BFGS-B iterations.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> logits = rng.normal(scale=3.0, size=(3000, 3))
    >>> p_true = np.exp(logits / 2) / np.exp(logits / 2).sum(axis=1, keepdims=True)
    >>> y = (rng.uniform(size=(3000, 1)) > p_true.cumsum(axis=1)).sum(axis=1)   # T = 2
    >>> from bece.calibrate import VectorScaling
    >>> vs = VectorScaling(input="logits").fit(logits, y)
    >>> vs.coef_.shape, bool(np.allclose(vs.coef_, 0.5, atol=0.05))   # w = 1/T per class
    ((3,), True)
    >>> q = vs.predict_proba(logits)
    >>> q.shape, bool(np.allclose(q.sum(axis=1), 1.0))
    ((3000, 3), True)
    """

    _fitted = ("coef_", "intercept_", "nll_", "n_passes_", "n_iter_")

    def __init__(self, *, input: str = "auto", tol: float = 1e-8, max_iter: int = 1000,
                 bounds: tuple[float, float] = (1e-2, 1e2)) -> None:
        self.input = input
        self.tol = tol
        self.max_iter = max_iter
        self.bounds = bounds

    def _check_params(self) -> None:
        _check_common(self)

    def _fit(self, scores: Scores, y: np.ndarray) -> None:
        counter = PassCounter()
        k = scores.k
        t = fit_temperature(scores, y, check_bounds(self.bounds), counter)
        fun = linear_objective(scores.blocks, y, scores.n, k, full=False, counter=counter)
        theta0 = np.r_[np.full(k, 1.0 / t), np.zeros(k)]
        h = vector_hessian_blocks(scores.blocks, scores.n, k, theta0, counter=counter)
        theta, self.n_iter_ = _minimise_vector(fun, theta0, h, self.tol, self.max_iter,
                                               type(self).__name__)
        self.coef_ = theta[:k]
        self.intercept_ = theta[k:] - theta[k:].mean()
        self.nll_ = fun(np.r_[self.coef_, self.intercept_])[0]
        self.n_passes_ = counter.count

    def _proba_block(self, block: np.ndarray) -> np.ndarray:
        return softmax(block * self.coef_ + self.intercept_)


class MatrixScaling(ScoreCalibrator):
    r"""Matrix scaling :math:`\operatorname{softmax}(W z + b)` with ODIR (module docstring).

    Parameters
    ----------
    input : {"auto", "logits", "probabilities"}, default "auto"
        What ``X`` holds (:mod:`bece.calibrate.scores`).
    reg_lambda, reg_mu : float or None, default None
        ODIR strengths :math:`\lambda` (off-diagonal weights) and :math:`\mu`
        (intercepts), >= 0; None: chosen by cross-validation.
    reg_grid : sequence of float, default :data:`REG_GRID`
        Candidates of the cross-validation (1e-4 ... 100).
    cv : int, default 3
        Folds of the cross-validation (>= 2).
    random_state : int, default 0
        Shuffling of the folds.
    tol, max_iter, bounds
        As :class:`VectorScaling`.

    Attributes
    ----------
    coef_ : ndarray of shape (K, K)
        :math:`W`.
    intercept_ : ndarray of shape (K,)
        :math:`b`, centred.
    reg_lambda_, reg_mu_ : float
        The strengths used.
    cv_nll_ : ndarray of shape (len(reg_grid),) or None
        Held-out mean NLL of each candidate, in increasing order of the
        candidates (None when none was searched).
    nll_ : float
        Mean NLL (without penalty) of the calibration set at the fit.
    n_passes_ : int
        Passes over the data (softmax evaluations), temperature scaling's and
        the cross-validation's included.
    n_iter_ : int
        L-BFGS-B iterations of the final fit.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> logits = rng.normal(scale=3.0, size=(3000, 3))
    >>> p_true = np.exp(logits / 2) / np.exp(logits / 2).sum(axis=1, keepdims=True)
    >>> y = (rng.uniform(size=(3000, 1)) > p_true.cumsum(axis=1)).sum(axis=1)   # T = 2
    >>> from bece.calibrate import MatrixScaling
    >>> ms = MatrixScaling(input="logits", reg_lambda=0.01, reg_mu=0.01).fit(logits, y)
    >>> W = ms.coef_                                        # close to I / T
    >>> bool(np.allclose(np.diag(W), 0.5, atol=0.05)), bool(np.abs(W - np.diag(np.diag(W))).max() < 0.05)
    (True, True)

    With ``reg_lambda`` and ``reg_mu`` left at None, they are chosen by
    cross-validation over ``reg_grid`` (``cv_nll_`` holds the held-out NLL).
    """

    _fitted = ("coef_", "intercept_", "reg_lambda_", "reg_mu_", "cv_nll_", "nll_", "n_passes_",
               "n_iter_")
    _log_features = False

    def __init__(self, *, input: str = "auto", reg_lambda: float | None = None,
                 reg_mu: float | None = None, reg_grid: tuple[float, ...] = REG_GRID, cv: int = 3,
                 random_state: int = 0, tol: float = 1e-8, max_iter: int = 1000,
                 bounds: tuple[float, float] = (1e-2, 1e2)) -> None:
        self.input = input
        self.reg_lambda = reg_lambda
        self.reg_mu = reg_mu
        self.reg_grid = reg_grid
        self.cv = cv
        self.random_state = random_state
        self.tol = tol
        self.max_iter = max_iter
        self.bounds = bounds

    def _check_params(self) -> None:
        _check_common(self)
        for name in ("reg_lambda", "reg_mu"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float, np.floating))
                                  or not 0 <= v < np.inf):
                raise ValueError(f"{name} must be None or a finite number >= 0, got {v!r}")
        grid = np.asarray(self.reg_grid, dtype=np.float64) if np.ndim(self.reg_grid) == 1 else None
        if grid is None or grid.size == 0 or not np.all(np.isfinite(grid) & (grid >= 0)):
            raise ValueError(f"reg_grid must be a non-empty sequence of finite numbers >= 0, "
                             f"got {self.reg_grid!r}")
        if isinstance(self.cv, bool) or not isinstance(self.cv, (int, np.integer)) or self.cv < 2:
            raise ValueError(f"cv must be an integer >= 2, got {self.cv!r}")

    def _features(self, scores: Scores) -> np.ndarray:
        check_allocation(8.0 * scores.n * scores.k,
                         what=f"the float64 features of {type(self).__name__} (n x K)",
                         argument=f"X of shape {scores.data.shape}",
                         advice="fit on fewer rows")
        x = np.empty((scores.n, scores.k), dtype=np.float64)
        for start, stop, block in scores.blocks():
            x[start:stop] = self._transform(block)
        return x

    def _transform(self, block: np.ndarray) -> np.ndarray:
        return log_softmax(block) if self._log_features else block

    def _solve(self, x: np.ndarray, y: np.ndarray, lam: float, mu: float, theta0: np.ndarray,
               counter: PassCounter, tol: float) -> tuple[np.ndarray, int]:
        n, k = x.shape
        rows = max(1, BLOCK // k)

        def blocks() -> Iterator[tuple[int, int, np.ndarray]]:
            for start in range(0, n, rows):
                yield start, min(n, start + rows), x[start:start + rows]

        fun = linear_objective(blocks, y, n, k, full=True, reg_lambda=lam, reg_mu=mu, counter=counter)
        diag = hessian_diagonal(blocks, n, k, theta0, full=True, reg_lambda=lam, reg_mu=mu,
                                counter=counter)
        return _minimise(fun, theta0, diag, tol, self.max_iter, type(self).__name__)

    def _fit(self, scores: Scores, y: np.ndarray) -> None:
        from sklearn.model_selection import KFold

        counter = PassCounter()
        k = scores.k
        t = fit_temperature(scores, y, check_bounds(self.bounds), counter)
        theta0 = np.r_[(np.eye(k) / t).ravel(), np.zeros(k)]
        x = self._features(scores)
        lam, mu = self.reg_lambda, self.reg_mu
        self.cv_nll_ = None
        if lam is None or mu is None:
            grid = np.sort(np.asarray(self.reg_grid, dtype=np.float64))[::-1]
            if scores.n < self.cv:
                raise ValueError(f"cross-validation of the ODIR strength needs at least cv={self.cv} "
                                 f"rows, got n = {scores.n}; pass reg_lambda and reg_mu")
            held = np.zeros(grid.size)
            folds = KFold(self.cv, shuffle=True, random_state=self.random_state).split(x)
            for train, test in folds:
                theta = theta0
                for j, value in enumerate(grid):
                    lj = value if lam is None else lam
                    mj = value if mu is None else mu
                    theta = self._solve(x[train], y[train], lj, mj, theta, counter,
                                        max(self.tol, CV_TOL))[0]
                    w, b = theta[:k * k].reshape(k, k), theta[k * k:]
                    lp = log_softmax(x[test] @ w.T + b)
                    held[j] -= float(lp[np.arange(test.size), y[test]].sum())
            best = int(np.argmin(held))
            lam = float(grid[best]) if lam is None else lam
            mu = float(grid[best]) if mu is None else mu
            self.cv_nll_ = (held / scores.n)[::-1].copy()  # in reg_grid's sorted order
        theta, self.n_iter_ = self._solve(x, y, float(lam), float(mu), theta0, counter, self.tol)
        w, b = theta[:k * k].reshape(k, k), theta[k * k:]
        self.coef_ = w
        self.intercept_ = b - b.mean()
        self.reg_lambda_ = float(lam)
        self.reg_mu_ = float(mu)
        lp = log_softmax(x @ w.T + self.intercept_)
        self.nll_ = float(-lp[np.arange(scores.n), y].mean())
        self.n_passes_ = counter.count

    def _proba_block(self, block: np.ndarray) -> np.ndarray:
        return softmax(self._transform(block) @ self.coef_.T + self.intercept_)


class DirichletCalibration(MatrixScaling):
    r"""Dirichlet calibration (Kull et al. 2019): :math:`\operatorname{softmax}(W \log p + b)` with ODIR.

    Matrix scaling on the log-probabilities :math:`\log p = \operatorname{log\,softmax}(z)`
    (module docstring); the same parameters and attributes as
    :class:`MatrixScaling`. :math:`W = I/T`, :math:`b = 0` is temperature
    scaling, where the fit starts.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> logits = rng.normal(scale=3.0, size=(3000, 3))
    >>> p_true = np.exp(logits / 2) / np.exp(logits / 2).sum(axis=1, keepdims=True)
    >>> y = (rng.uniform(size=(3000, 1)) > p_true.cumsum(axis=1)).sum(axis=1)   # T = 2
    >>> from bece.calibrate import DirichletCalibration
    >>> from bece.metrics import log_loss
    >>> dc = DirichletCalibration(input="logits", reg_lambda=0.01, reg_mu=0.01)
    >>> dc = dc.fit(logits[:2000], y[:2000])
    >>> p_test = np.exp(logits[2000:]) / np.exp(logits[2000:]).sum(axis=1, keepdims=True)
    >>> before, after = log_loss(y[2000:], p_test), log_loss(y[2000:], dc.predict_proba(logits[2000:]))
    >>> bool(after < before - 0.05)                         # test-set NLL
    True
    """

    _log_features = True
