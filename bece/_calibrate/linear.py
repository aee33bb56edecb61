r"""Matrix scaling with ODIR and Dirichlet calibration, and the objective and
Hessian that vector scaling (:mod:`bece._calibrate.vector`) shares with them.

Each is a multinomial logistic regression on features :math:`x_i` of a
classifier's scores (Guo et al. 2017; Kull et al. 2019):

* vector scaling (:class:`~bece._calibrate.vector.VectorScaling`):
  :math:`\hat p_i = \operatorname{softmax}(w \odot x_i + b)` on the logits or
  (its default) the log-probabilities after temperature scaling (2K
  parameters, penalised towards temperature scaling);
* :class:`MatrixScaling`: :math:`\hat p_i = \operatorname{softmax}(W z_i + b)`
  (K(K+1) parameters);
* :class:`DirichletCalibration`: :math:`\hat p_i = \operatorname{softmax}(W \log p_i + b)`
  with :math:`\log p_i = \operatorname{log\,softmax}(z_i)` (the log of the
  probabilities themselves for ``input="probabilities"``), Kull et al.'s
  Dirichlet calibration in its log-linear form. On the default features
  (``"tempered"``) the two coincide; they differ on ``features="scores"``.

Matrix scaling and Dirichlet calibration minimise the mean negative
log-likelihood plus Kull et al.'s (2019) off-diagonal and intercept
regularisation (ODIR) and a penalty on the diagonal:

.. math::

    \frac1n \sum_i \big[\log \textstyle\sum_k e^{a_{ik}} - a_{i y_i}\big]
    + \frac{\lambda}{K(K-1)} \sum_{j \ne k} W_{jk}^2 + \frac{\mu}{K} \sum_k b_k^2
    + \frac{\nu}{K} \sum_k (W_{kk} - d)^2,
    \qquad a_i = W x_i + b,

with :math:`d` temperature scaling's diagonal (1 on ``features="tempered"``,
:math:`x_i = \log\operatorname{softmax}(z_i / T_0)`; :math:`1/T_0` on the scores).
:math:`\nu = 0` is ODIR, which leaves the diagonal (a per-class temperature)
free; strong penalties are temperature scaling. With ``reg_lambda`` or
``reg_mu`` None the strengths are chosen by ``cv``-fold cross-validation on
the fitting data (:class:`sklearn.model_selection.KFold`, shuffled with
``random_state``): the candidate with the smallest held-out NLL among two paths
over ``reg_grid`` (``reg_diagonal=None``), ODIR (:math:`\mu = \lambda`,
:math:`\nu = 0`; Kull et al. searched a grid of both) and
:math:`\mu = \nu = \lambda/(K-1)^2`, the proportions of probmetrics' ``sms``
(Berta et al. 2026: a fixed strength, ``K(K-1)/n`` per off-diagonal weight
and ``K/n`` per diagonal weight and intercept). The chosen values are
``reg_lambda_``, ``reg_mu_`` and ``reg_diagonal_``. Along each path each fold
starts from its previous solution (largest penalty first), its fits stop
at the larger of ``tol`` and :data:`CV_TOL`, and the path stops once its
held-out NLL has risen :data:`CV_PATIENCE` candidates in a row (at K = 100 the
weak penalties are the slow fits: 10,100 parameters on a few thousand rows). Why these defaults (tempered
features, both paths, 5 folds): on public CIFAR network outputs ODIR's path
alone, with its own strength, was 0.0012 to 0.0015 worse in held-out NLL than
``sms`` at K = 10 and up to 0.005 worse at K = 100, where the diagonal
overfits; the documentation's validation page ("Recalibrators against netcal
and probmetrics") has the table. Kull et al.'s calibrators are
``features="scores", reg_diagonal=0``.

Every objective is convex; it is minimised in float64 by truncated Newton
(:func:`bece._calibrate.newton.newton_cg`): each iteration one pass for the
loss, the gradient and a preconditioner, and one pass per product of the
exact Hessian with a vector (:func:`linear_hessp`) in its conjugate
gradients. For matrix and Dirichlet scaling (:func:`~bece._calibrate.newton.full_evaluate`) the
iteration's pass keeps the probabilities (n x K), each Hessian product
reuses them (two products of size :math:`n K^2`, no softmax), and the penalty is
taken after the best shift of the classes' rows (the softmax's flat
directions). Vector scaling is preconditioned by each class's exact 2 x 2
Hessian block in :math:`(w_j, b_j)`, matrix and Dirichlet scaling by each
class's (K+1) x (K+1) block, estimated from sampled rows
(:mod:`bece._calibrate.newton`). The start is temperature scaling
(:math:`w = 1/T`, :math:`W = I/T`, :math:`b = 0`, or :math:`W = I` on tempered features),
which each family contains, with a rough T where no :math:`T_0` is needed
(:func:`~bece._calibrate.newton.rough_temperature`, a few passes). ``tol``
bounds the gradient of the mean loss in the coordinates whitened by the
preconditioner (l2 norm). At K = 1,000, n = 10^5 unregularised vector scaling
(``reg_lambda=0``) takes 17 passes where L-BFGS-B took 127
(``benchmarks/recalibration.py --part cost --quick``).
Vector scaling runs block by block over the scores; matrix and Dirichlet
scaling hold their float64 features, the probabilities and one work matrix
(3 x n x K float64; refused above bece's memory limit, :mod:`bece._base.memory`).
The softmax is invariant to adding a constant to every intercept, so the fitted
``intercept_`` is centred (mean zero); ``n_passes_`` counts the passes over the data (a
softmax each, or a Hessian product's pass), the starting temperature's and the CV's included.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .._base.memory import check_allocation
from .base import ScoreCalibrator
from .newton import (
    BLOCK_BYTES_MAX,
    best_shift,
    class_block_bytes,
    full_evaluate,
    newton_cg,
    penalty_weights,
    rough_temperature,
)
from .scores import Scores, log_softmax, softmax
from .stored import SHAPES, linear_contract
from .temperature import PassCounter, check_bounds, fit_temperature

__all__ = [
    "DirichletCalibration",
    "MatrixScaling",
    "CV_PATIENCE",
    "CV_TOL",
    "REG_GRID",
    "check_common",
    "check_regularisation",
    "FEATURES",
    "linear_hessp",
    "linear_objective",
]

#: Default grid of ODIR strengths searched by cross-validation; up to 1e6, as at K = 100 a penalty
#: of 100 still overfits (docs' validation page, "Multiclass, K = 100")
REG_GRID = (1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6)

#: ``tol`` of the cross-validation's fits (at least): they only rank the candidates
CV_TOL = 1e-6

#: A path of matrix scaling's cross-validation stops after its held-out NLL has risen this many
#: candidates in a row (a weaker penalty than the best by two grid steps is not fitted)
CV_PATIENCE = 2

#: ``features`` of the scaling calibrators: temperature-scaled log-probabilities, or the scores themselves
FEATURES = ("tempered", "scores")

Blocks = Callable[[], Iterator[tuple[int, int, np.ndarray]]]


def linear_objective(blocks: Blocks, y: np.ndarray, n: int, k: int, *, full: bool,
                     reg_lambda: float = 0.0, reg_mu: float = 0.0,
                     counter: PassCounter | None = None,
                     curvature: bool = False) -> Callable[[np.ndarray], Any]:
    r"""``theta -> (loss, gradient)`` of the mean NLL plus ODIR, in one pass.

    ``full``: ``theta = [W.ravel() (K*K), b (K)]`` and :math:`a = x W^\top + b`;
    else ``theta = [w (K), b (K)]`` and :math:`a = x \odot w + b`.
    ``blocks()`` yields ``(start, stop, x)`` float64 feature blocks.

    With ``curvature`` the same pass also returns the statistics of the
    preconditioners (:mod:`bece._calibrate.newton`), ``(loss, gradient, c)``:
    for vector scaling ``c[j] =`` :math:`\frac1n \sum_i (v_{ij} x_{ij}^2, v_{ij} x_{ij}, v_{ij})`
    with :math:`v_{ij} = \hat p_{ij}(1 - \hat p_{ij})`, the 2 x 2 Hessian
    block of :math:`(w_j, b_j)`; for the full map
    ``c = (A, S)``, :math:`A = \frac1n \sum_i (\operatorname{diag}\hat p_i - \hat p_i \hat p_i^\top)`
    (K x K) and :math:`S = \frac1n \sum_i t_i \tilde x_i \tilde x_i^\top` ((K+1) x (K+1),
    :math:`\tilde x_i = (x_i, 1)`) weighted by :math:`t_i = \operatorname{tr}(\operatorname{diag}
    \hat p_i - \hat p_i \hat p_i^\top) = 1 - \|\hat p_i\|^2`, the rows' curvature.
    """
    off = ~np.eye(k, dtype=bool)
    c_lam = reg_lambda / (k * (k - 1))
    c_mu = reg_mu / k

    def fun(theta: np.ndarray) -> Any:
        if full:
            w = theta[:k * k].reshape(k, k)
        else:
            w = theta[:k]
        b = theta[-k:]
        gw = np.zeros_like(w)
        gb = np.zeros(k)
        curv = np.zeros((k, k) if full else (k, 3))
        gram = np.zeros((k + 1, k + 1)) if full and curvature else curv
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
            if curvature and full:
                curv += np.diag(g.sum(axis=0)) - g.T @ g
                wr = 1.0 - np.einsum("ij,ij->i", g, g)  # each row's tr(diag p - p p^T)
                wx = x * wr[:, None]
                gram[:k, :k] += wx.T @ x
                gram[k, :k] += wx.sum(axis=0)
                gram[k, k] += wr.sum()
            elif curvature:
                v = g * (1.0 - g)
                vx = v * x
                curv[:, 0] += np.einsum("ij,ij->j", vx, x)
                curv[:, 1] += vx.sum(axis=0)
                curv[:, 2] += v.sum(axis=0)
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
        grad = np.concatenate([gw.ravel(), gb])
        if not curvature:
            return loss, grad
        if not full:
            return loss, grad, curv / n
        gram[:k, k] = gram[k, :k]
        return loss, grad, (curv / n, gram / n)

    return fun


def linear_hessp(blocks: Blocks, n: int, k: int, *, full: bool, reg_lambda: float = 0.0,
                 reg_mu: float = 0.0,
                 counter: PassCounter | None = None) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    r"""``(theta, v) -> H v``, the exact Hessian of :func:`linear_objective`
    times a vector, in one pass (the softmax recomputed).

    For :math:`\delta a_i` the change of the scores along ``v``
    (:math:`\delta W x_i + \delta b`, or :math:`\delta w \odot x_i + \delta b`),
    :math:`r_i = \hat p_i \odot (\delta a_i - \langle \hat p_i, \delta a_i \rangle)`
    and :math:`H v = \frac1n \sum_i (r_i x_i^\top, r_i)` (:math:`(r_i \odot x_i, r_i)`),
    plus the penalty's :math:`2\lambda/(K(K-1))` (off the diagonal) and :math:`2\mu/K` times ``v``.
    """
    off = ~np.eye(k, dtype=bool)
    c_lam = reg_lambda / (k * (k - 1))
    c_mu = reg_mu / k

    def hessp(theta: np.ndarray, v: np.ndarray) -> np.ndarray:
        w = theta[:k * k].reshape(k, k) if full else theta[:k]
        dw = v[:k * k].reshape(k, k) if full else v[:k]
        b, db = theta[-k:], v[-k:]
        hw = np.zeros_like(w)
        hb = np.zeros(k)
        for _, _, x in blocks():
            p = softmax(x @ w.T + b if full else x * w + b)
            da = x @ dw.T + db if full else x * dw + db
            r = p * (da - np.einsum("ij,ij->i", p, da)[:, None])
            hw += r.T @ x if full else np.einsum("ij,ij->j", r, x)
            hb += r.sum(axis=0)
        if counter is not None:
            counter.count += 1
        hw /= n
        hb /= n
        if full:
            hw = hw + 2 * c_lam * np.where(off, dw, 0.0)
            hb = hb + 2 * c_mu * db
        return np.concatenate([hw.ravel(), hb])

    return hessp


def check_regularisation(est: Any) -> None:
    """ValueError naming ``reg_lambda``, ``reg_mu``, ``reg_diagonal`` (where it has one),
    ``reg_grid`` or ``cv`` of a regularised calibrator (matrix, Dirichlet or vector scaling)
    that is not allowed."""
    for name in ("reg_lambda", "reg_mu", "reg_diagonal"):
        if not hasattr(est, name):
            continue
        v = getattr(est, name)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float, np.floating))
                              or not 0 <= v < np.inf):
            raise ValueError(f"{name} must be None or a finite number >= 0, got {v!r}")
    grid = np.asarray(est.reg_grid, dtype=np.float64) if np.ndim(est.reg_grid) == 1 else None
    if grid is None or grid.size == 0 or not np.all(np.isfinite(grid) & (grid >= 0)):
        raise ValueError(f"reg_grid must be a non-empty sequence of finite numbers >= 0, "
                         f"got {est.reg_grid!r}")
    if isinstance(est.cv, bool) or not isinstance(est.cv, (int, np.integer)) or est.cv < 2:
        raise ValueError(f"cv must be an integer >= 2, got {est.cv!r}")


def check_common(est: Any) -> None:
    """ValueError naming ``bounds``, ``tol`` or ``max_iter`` of a scaling calibrator that is not allowed."""
    check_bounds(est.bounds)
    if not isinstance(est.tol, (int, float)) or isinstance(est.tol, bool) or not 0 < est.tol < 1:
        raise ValueError(f"tol must be a number in (0, 1), got {est.tol!r}")
    if isinstance(est.max_iter, bool) or not isinstance(est.max_iter, (int, np.integer)) or est.max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer, got {est.max_iter!r}")


class MatrixScaling(ScoreCalibrator):
    r"""Matrix scaling :math:`\operatorname{softmax}(W z + b)` with ODIR (module docstring).

    Parameters
    ----------
    input : {"auto", "logits", "probabilities"}, default "auto"
        What ``X`` holds (:mod:`bece._calibrate.scores`).
    reg_lambda, reg_mu : float or None, default None
        ODIR strengths :math:`\lambda` (off-diagonal weights) and :math:`\mu`
        (intercepts), >= 0; None: chosen by cross-validation.
    reg_diagonal : float or None, default None
        :math:`\nu` >= 0, the penalty on the diagonal's distance from temperature
        scaling's; 0: Kull et al.'s ODIR, which leaves the diagonal free. None: where
        :math:`\lambda` or :math:`\mu` is cross-validated, the cross-validation also
        chooses between :math:`\nu = 0` and :math:`\nu = \lambda` (module docstring);
        else 0.
    features : {"scores", "tempered"}, default "scores"
        :math:`x`: ``"scores"``, the logits (matrix scaling) or the
        log-probabilities (Dirichlet calibration), as Kull et al.;
        ``"tempered"``, :math:`\log\operatorname{softmax}(z / T_0)` with
        :math:`T_0` temperature scaling's fit on the same rows (:math:`W = I`,
        :math:`b = 0` is temperature scaling), as vector scaling's default and
        probmetrics' ``sms``; matrix scaling and Dirichlet calibration then coincide.
    reg_grid : sequence of float, default :data:`REG_GRID`
        Candidates of the cross-validation (1e-4 ... 1e6). A UserWarning says when the largest
        is chosen; the smallest needs none (a penalty of 1e-4 changes the fit little).
    cv : int, default 5
        Folds of the cross-validation (>= 2). With 3 the fits see 2/3 of the
        rows and lean to stronger penalties (on LeNet-5 CIFAR-10 outputs, 3 folds
        chose :math:`\lambda = 10` on one of three splits where 5 folds chose 1,
        better on the test half by 0.0013).
    random_state : int, default 0
        Shuffling of the folds.
    tol : float, default 1e-8
        Bound on the gradient of the penalised mean loss in whitened coordinates (module docstring).
    max_iter : int, default 1000
    bounds : (float, float), default (0.01, 100)
        Temperature search interval of the starting point.

    Attributes
    ----------
    coef_ : ndarray of shape (K, K)
        :math:`W`.
    intercept_ : ndarray of shape (K,)
        :math:`b`, centred.
    reg_lambda_, reg_mu_, reg_diagonal_ : float
        The strengths used.
    feature_temperature_ : float
        :math:`T_0`: temperature scaling's fit, the features' temperature for
        ``features="tempered"`` and the diagonal's target :math:`1/T_0` for ``"scores"``.
    cv_nll_ : ndarray of shape (paths, len(reg_grid)) or None
        Held-out mean NLL of each candidate, in increasing order of the
        candidates: row 0 the ODIR path, row 1 (``reg_diagonal=None``) the path
        :math:`\mu = \nu = \lambda/(K-1)^2`; NaN for the candidates a path
        did not reach (:data:`CV_PATIENCE`); None when none was searched.
    nll_ : float
        Mean NLL (without penalty) of the calibration set at the fit.
    n_passes_ : int
        Passes over the data (softmax evaluations), temperature scaling's and
        the cross-validation's included.
    n_iter_ : int
        Newton iterations of the final fit.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> logits = rng.normal(scale=3.0, size=(3000, 3))
    >>> p_true = np.exp(logits / 2) / np.exp(logits / 2).sum(axis=1, keepdims=True)
    >>> y = (rng.uniform(size=(3000, 1)) > p_true.cumsum(axis=1)).sum(axis=1)   # T = 2
    >>> from bece.calibrate import MatrixScaling
    >>> ms = MatrixScaling(input="logits", features="scores", reg_lambda=0.01, reg_mu=0.01,
    ...                    reg_diagonal=0).fit(logits, y)   # Kull et al.'s ODIR
    >>> W = ms.coef_                                        # close to I / T
    >>> bool(np.allclose(np.diag(W), 0.5, atol=0.05)), bool(np.abs(W - np.diag(np.diag(W))).max() < 0.05)
    (True, True)

    With ``reg_lambda`` and ``reg_mu`` left at None, they are chosen by
    cross-validation over ``reg_grid`` (``cv_nll_`` holds the held-out NLL).
    """

    _contract = linear_contract(SHAPES["KxK"], diagonal=True)
    _log_features = False

    def __init__(self, *, input: str = "auto", reg_lambda: float | None = None,
                 reg_mu: float | None = None, reg_diagonal: float | None = None,
                 features: str = "tempered", reg_grid: tuple[float, ...] = REG_GRID, cv: int = 5,
                 random_state: int = 0, tol: float = 1e-8, max_iter: int = 1000,
                 bounds: tuple[float, float] = (1e-2, 1e2)) -> None:
        self.input = input
        self.reg_lambda = reg_lambda
        self.reg_mu = reg_mu
        self.reg_diagonal = reg_diagonal
        self.features = features
        self.reg_grid = reg_grid
        self.cv = cv
        self.random_state = random_state
        self.tol = tol
        self.max_iter = max_iter
        self.bounds = bounds

    def _check_params(self) -> None:
        check_common(self)
        check_regularisation(self)
        if not isinstance(self.features, str) or self.features not in FEATURES:
            raise ValueError(f"features must be one of {FEATURES}, got {self.features!r}")

    def _features(self, scores: Scores) -> np.ndarray:
        check_allocation(3 * 8.0 * scores.n * scores.k,
                         what=f"the float64 features, probabilities and work matrix of "
                              f"{type(self).__name__} (3 x n x K)",
                         argument=f"X of shape {scores.data.shape}",
                         advice="fit on fewer rows")
        x = np.empty((scores.n, scores.k), dtype=np.float64)
        for start, stop, block in scores.blocks():
            x[start:stop] = self._transform(block)
        return x

    def _transform(self, block: np.ndarray) -> np.ndarray:
        if self.features == "tempered":
            return log_softmax(block / self.feature_temperature_)
        return log_softmax(block) if self._log_features else block

    def _solve(self, x: np.ndarray, y: np.ndarray, lam: float, mu: float, nu: float,
               theta0: np.ndarray, counter: PassCounter, tol: float) -> tuple[np.ndarray, int]:
        n, k = x.shape
        block = class_block_bytes(k)
        check_allocation(
            8.0 * (2 * n * k + 12 * k * (k + 1)) + (block if block <= BLOCK_BYTES_MAX else 0),
            what=f"{type(self).__name__}'s Newton fit (the probabilities and a Hessian product, "
                 f"n x K each, K (K + 1) parameters, and its preconditioner)",
            argument=f"X of shape ({n}, {k})",
            advice="fit on fewer rows, or use VectorScaling or TemperatureScaling, whose "
                   "parameters grow as K")
        target = 1.0 if self.features == "tempered" else 1.0 / self.feature_temperature_
        evaluate = full_evaluate(x, y, lam, mu, counter, reg_diagonal=nu, diagonal=target)
        theta, n_iter, _ = newton_cg(evaluate, None, theta0, tol=tol, max_iter=self.max_iter,
                                     name=type(self).__name__)
        return best_shift(theta, k, *penalty_weights(k, lam, nu, target)), n_iter

    def _fit(self, scores: Scores, y: np.ndarray) -> None:
        counter = PassCounter()
        k = scores.k
        bounds = check_bounds(self.bounds)
        searched = self.reg_diagonal is None and (self.reg_lambda is None or self.reg_mu is None)
        if self.features == "tempered" or searched or self.reg_diagonal:  # T_0: features or target
            t = self.feature_temperature_ = fit_temperature(scores, y, bounds, counter)
        else:
            t = rough_temperature(scores, y, bounds, counter)
            self.feature_temperature_ = 1.0
        theta0 = np.r_[(np.eye(k) / (1.0 if self.features == "tempered" else t)).ravel(), np.zeros(k)]
        x = self._features(scores)
        lam, mu = self.reg_lambda, self.reg_mu
        nu = 0.0 if self.reg_diagonal is None else float(self.reg_diagonal)
        self.cv_nll_ = None
        if lam is None or mu is None:
            if scores.n < self.cv:
                raise ValueError(f"cross-validation of the ODIR strength needs at least cv={self.cv} "
                                 f"rows, got n = {scores.n}; pass reg_lambda and reg_mu")
            lam, mu, nu, theta0 = self._cross_validate(x, y, theta0, counter)
        theta, self.n_iter_ = self._solve(x, y, float(lam), float(mu), float(nu), theta0, counter,
                                          self.tol)
        w, b = theta[:k * k].reshape(k, k), theta[k * k:]
        self.coef_ = w
        self.intercept_ = b - b.mean()
        self.reg_lambda_ = float(lam)
        self.reg_mu_ = float(mu)
        self.reg_diagonal_ = float(nu)
        lp = log_softmax(x @ w.T + self.intercept_)
        self.nll_ = float(-lp[np.arange(scores.n), y].mean())
        self.n_passes_ = counter.count + 1

    def _cross_validate(self, x: np.ndarray, y: np.ndarray, theta0: np.ndarray,
                        counter: PassCounter) -> tuple[float, float, float, np.ndarray]:
        r"""``(lambda, mu, nu, start)``: the candidate with the least held-out NLL,
        and the folds' mean solution there (the final fit's start). Each path
        (``reg_diagonal`` None: ODIR and :math:`\mu = \nu = \lambda/(K-1)^2`) runs
        from the largest candidate down, each fold warm-started from its previous
        solution, and stops once its held-out NLL has risen :data:`CV_PATIENCE`
        times in a row (the weak penalties, the slowest fits, are then not fitted)."""
        from sklearn.model_selection import KFold

        k = x.shape[1]
        grid = np.sort(np.asarray(self.reg_grid, dtype=np.float64))[::-1]
        tied = [False, True] if self.reg_diagonal is None else [False]
        folds = list(KFold(self.cv, shuffle=True, random_state=self.random_state).split(x))
        held = np.full((len(tied), grid.size), np.nan)
        start = np.zeros((len(tied), grid.size, theta0.size))  # the folds' mean solutions
        for path, tie in enumerate(tied):
            thetas = [theta0] * len(folds)
            best, risen = np.inf, 0
            for j, value in enumerate(grid):
                lj, mj, nj = self._candidate(value, tie, k)
                total = 0.0
                for f, (train, test) in enumerate(folds):
                    thetas[f] = self._solve(x[train], y[train], lj, mj, nj, thetas[f], counter,
                                            max(self.tol, CV_TOL))[0]
                    start[path, j] += thetas[f] / self.cv
                    w, b = thetas[f][:k * k].reshape(k, k), thetas[f][k * k:]
                    lp = log_softmax(x[test] @ w.T + b)
                    total -= float(lp[np.arange(test.size), y[test]].sum())
                counter.count += 1  # the held-out NLL: one pass over the folds
                held[path, j] = total
                risen = risen + 1 if total >= best else 0
                best = min(best, total)
                if risen >= CV_PATIENCE:
                    break
        path, best_j = (int(i) for i in np.unravel_index(int(np.nanargmin(held)), held.shape))
        if grid.size > 1 and best_j == 0 and not tied[path]:  # grid is sorted largest first
            warnings.warn(f"the ODIR strength chosen by cross-validation, {grid[0]:g}, is the largest of "
                          "reg_grid: a stronger penalty may fit better; pass a reg_grid with larger "
                          "values", UserWarning, stacklevel=4)
        self.cv_nll_ = (held / y.size)[:, ::-1].copy()  # in reg_grid's sorted order
        return (*self._candidate(float(grid[best_j]), tied[path], k), start[path, best_j])

    def _candidate(self, value: float, tied: bool, k: int) -> tuple[float, float, float]:
        r"""``(lambda, mu, nu)`` of a candidate strength: the given ones kept; else
        :math:`\lambda` = ``value``, and :math:`\mu` = ``value`` and :math:`\nu` = ``reg_diagonal``
        or 0 on the ODIR path, :math:`\mu = \nu` = ``value`` / (K-1)^2 on the other."""
        lam = value if self.reg_lambda is None else float(self.reg_lambda)
        small = value / (k - 1) ** 2 if tied else value
        mu = small if self.reg_mu is None else float(self.reg_mu)
        nu = small if tied else (0.0 if self.reg_diagonal is None else float(self.reg_diagonal))
        return lam, mu, nu

    def _proba_block(self, block: np.ndarray) -> np.ndarray:
        return softmax(self._transform(block) @ self.coef_.T + self.intercept_)


class DirichletCalibration(MatrixScaling):
    r"""Dirichlet calibration (Kull et al. 2019): :math:`\operatorname{softmax}(W \log p + b)` with ODIR.

    Matrix scaling on the log-probabilities :math:`\log p = \operatorname{log\,softmax}(z)`
    (module docstring); the same parameters and attributes as
    :class:`MatrixScaling`. :math:`W = I/T`, :math:`b = 0` is temperature
    scaling, where the fit starts. Its default features, :math:`\log\operatorname{softmax}(z/T_0)`
    (Dirichlet calibration after temperature scaling), are matrix scaling's
    default too, so the two defaults give the same fit; Kull et al.'s is
    ``features="scores", reg_diagonal=0``.

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
