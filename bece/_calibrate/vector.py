r"""Vector scaling, regularised towards temperature scaling.

:class:`VectorScaling` maps features :math:`x_i` of a classifier's scores to
:math:`\hat p_i = \operatorname{softmax}(w \odot x_i + b)`, a weight and an
intercept per class (Guo et al. 2017), minimising

.. math::

    \frac1n \sum_i \big[\log \textstyle\sum_k e^{a_{ik}} - a_{i y_i}\big]
    + \frac{\lambda}{K} \sum_k (w_k - \bar w)^2 + \frac{\mu}{K} \sum_k b_k^2,
    \qquad a_i = w \odot x_i + b,\ \bar w = \frac1K \sum_k w_k.

The features (``features``):

* ``"tempered"`` (the default): :math:`x_i = \log\operatorname{softmax}(z_i / T_0)`,
  the log-probabilities after temperature scaling, with :math:`z_i` the
  logits (the log-probabilities for ``input="probabilities"``) and
  :math:`T_0` temperature scaling's fit on the same rows. :math:`w = 1, b = 0`
  is temperature scaling; as :math:`x_{ik} = z_{ik}/T_0 - \log\sum_j e^{z_{ij}/T_0}`,
  each weight also multiplies the row's log-normaliser (a per-row
  confidence), and the penalty is in units of :math:`1/T_0`. For
  probabilities this is the diagonal case of Dirichlet calibration (Kull et
  al. 2019) after temperature scaling; probmetrics' ``svs`` uses the same features.
* ``"scores"``: :math:`x_i = z_i`, Guo et al.'s vector scaling; with
  ``reg_lambda=0`` their unregularised maximum-likelihood fit.

The penalty leaves the common weight :math:`\bar w` (one inverse temperature)
free and pulls the classes' weights towards it and the intercepts towards 0:
a large penalty is temperature scaling (for ``"tempered"``, :math:`\bar w = 1`).
As the softmax does not change when a
constant is added to every intercept, the fit keeps :math:`b` centred, where
:math:`\sum_k b_k^2` is least; the penalty is taken on :math:`b - \bar b`, the
same objective at the optimum, and the intercepts' constant direction stays
flat as without penalty. The objective is convex (strictly where
:math:`\lambda, \mu > 0` and the features vary), minimised by the exact
truncated Newton of :mod:`bece._calibrate.linear` (:func:`~bece._calibrate.linear.linear_objective`,
:func:`~bece._calibrate.linear.linear_hessp`) with the penalty's gradient
and Hessian added (:func:`vector_penalty`) and its curvature in the
preconditioner (:func:`penalised_preconditioner`).

With ``reg_lambda=None`` (the default) :math:`\lambda` is chosen by
``cv``-fold cross-validation on the fitting data
(:class:`sklearn.model_selection.KFold`, shuffled with ``random_state``;
:math:`T_0` is the one of all the rows in every fold): the
value of ``reg_grid`` with the smallest held-out NLL, each fold's fits warm-started
from the previous (largest first), as for matrix scaling's ODIR
(:mod:`bece._calibrate.linear`). ``reg_mu=None`` (the default) ties
:math:`\mu` to :math:`\lambda`, so ``reg_lambda=0`` alone is the unregularised
fit. The default is 5 folds, not matrix scaling's 3: vector scaling's fits
are cheap, and with 3 folds the fits see 2/3 of the rows and lean to stronger
penalties than the whole set needs (on RepVGG-A2 CIFAR-100 logits, 3 folds chose
:math:`\lambda = 10` on one of three splits where 1 was better on the test
half by 0.004; 5 folds chose 1 on all three).

**probmetrics' ``svs``** (Berta et al. 2026; probmetrics 1.3.0,
``SVSCalibrator`` with its defaults) first fits temperature scaling
without penalty, then on :math:`x_i = \log\operatorname{softmax}(z_i / T_0)`
(float32) minimises

.. math::

    \frac1n \sum_i \operatorname{CE}\big((1 + \delta) \odot x_i + b,\ y_i\big)
    + \frac{K}{n} \|\delta\|^2 + \frac{K}{n} \|b\|^2

by BFGS from :math:`\delta = b = 0`: a fixed strength :math:`K^\rho / n^\tau`,
:math:`\rho = \tau = 1`. Its penalty pulls every weight to 1 (the first stage's
:math:`1/T_0` on the logits), which stays fixed. Here the common weight is refitted with
the others and only the spread of the weights is penalised, so a strong penalty still
leaves the best single temperature (for ``features="tempered"`` that is :math:`T_0`
itself, :math:`\bar w = 1`), and the strength is chosen by cross-validation rather than
by a rule in K and n: at K = 100 the chosen strengths on CIFAR network outputs range
over 0.01 to 10, where the rule's, in these units (:math:`\lambda = K^2/n` on the
tempered features, :math:`K^2 T_0^2/n` on the logits; :math:`\mu = K^2/n`), is about 2
to 5 for n = 5,000. Held-out comparisons on the docs' validation page ("Recalibrators
against netcal and probmetrics").
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from .base import ScoreCalibrator
from .linear import CV_TOL, REG_GRID, check_common, check_regularisation, linear_hessp, linear_objective
from .newton import block_preconditioner, newton_cg, rough_temperature
from .scores import Scores, log_softmax, softmax
from .stored import SHAPES, linear_contract
from .temperature import PassCounter, check_bounds, fit_temperature

__all__ = ["FEATURES", "VectorScaling", "penalised_preconditioner", "vector_penalty"]

Vec = Callable[[np.ndarray], np.ndarray]
Blocks = Callable[[], Iterator[tuple[int, int, np.ndarray]]]

#: ``features`` of :class:`VectorScaling`: the scores themselves, or temperature-scaled log-probabilities
FEATURES = ("tempered", "scores")


def vector_penalty(k: int, reg_lambda: float, reg_mu: float) -> tuple[
        Callable[[np.ndarray], tuple[float, np.ndarray]], Vec]:
    r"""``(penalty, hvp)`` for ``theta = [w (K), b (K)]``: ``penalty(theta) -> (value, gradient)``
    of :math:`\frac{\lambda}{K}\sum_k (w_k - \bar w)^2 + \frac{\mu}{K}\sum_k (b_k - \bar b)^2`
    and ``hvp(v)``, its (constant) Hessian times ``v``.

    Examples
    --------
    >>> import numpy as np
    >>> from bece._calibrate.vector import vector_penalty
    >>> penalty, hvp = vector_penalty(2, 1.0, 0.5)
    >>> value, grad = penalty(np.array([1.0, 3.0, 2.0, 0.0]))   # w = (1, 3), b = (2, 0)
    >>> value, grad                  # (1 + 1) / 2 + 0.5 * (1 + 1) / 2
    (1.5, array([-1. ,  1. ,  0.5, -0.5]))
    >>> hvp(np.array([1.0, 0.0, 0.0, 0.0]))
    array([ 0.5, -0.5,  0. ,  0. ])
    """
    c_lam = 2.0 * reg_lambda / k
    c_mu = 2.0 * reg_mu / k

    def penalty(theta: np.ndarray) -> tuple[float, np.ndarray]:
        dw = theta[:k] - theta[:k].mean()
        db = theta[k:] - theta[k:].mean()
        value = 0.5 * (c_lam * float(dw @ dw) + c_mu * float(db @ db))
        return value, np.concatenate([c_lam * dw, c_mu * db])

    def hvp(v: np.ndarray) -> np.ndarray:
        return np.concatenate([c_lam * (v[:k] - v[:k].mean()), c_mu * (v[k:] - v[k:].mean())])

    return penalty, hvp


def penalised_preconditioner(h: np.ndarray, reg_lambda: float, reg_mu: float) -> Vec:
    r"""``r -> M^{-1} r``: the class blocks of :func:`~bece._calibrate.newton.block_preconditioner`
    (``h`` (K, 3), the data's 2 x 2 blocks in :math:`(w_j, b_j)`) plus the
    penalty's exact Hessian :math:`\frac{2\lambda}{K}(I - \frac1K 11^\top)` on
    :math:`w` and :math:`\frac{2\mu}{K}(I - \frac1K 11^\top)` on :math:`b`.

    :math:`M = D - U C U^\top`, with :math:`D` the blocks plus the penalty's diagonal
    and :math:`U C U^\top` its rank-one parts, is solved by Woodbury's identity.
    Without them a strong penalty would make :math:`M` large along the common
    weight :math:`\bar w`, which it leaves free (CG would crawl along the temperature).

    Examples
    --------
    >>> import numpy as np
    >>> from bece._calibrate.vector import penalised_preconditioner
    >>> h = np.array([[2.0, 0.5, 1.0], [1.0, 0.2, 3.0]])
    >>> solve = penalised_preconditioner(h, 4.0, 1.0)
    >>> blocks = np.zeros((4, 4))                          # [w0 w1 b0 b1]
    >>> for j in range(2):
    ...     blocks[np.ix_([j, 2 + j], [j, 2 + j])] = [[h[j, 0], h[j, 1]], [h[j, 1], h[j, 2]]]
    >>> c = np.eye(2) - 0.5                                  # I - 11^T / K
    >>> m = blocks + np.block([[4.0 * c, np.zeros((2, 2))], [np.zeros((2, 2)), 1.0 * c]])
    >>> r = np.array([1.0, -2.0, 0.5, 3.0])
    >>> bool(np.allclose(solve(r), np.linalg.solve(m, r)))
    True
    """
    k = h.shape[0]
    c_lam, c_mu = 2.0 * reg_lambda / k, 2.0 * reg_mu / k
    hp = np.array(h, dtype=np.float64, copy=True)
    hp[:, 0] += c_lam
    hp[:, 2] += c_mu
    base = block_preconditioner(hp)
    parts = [(np.r_[np.ones(k), np.zeros(k)], c_lam / k), (np.r_[np.zeros(k), np.ones(k)], c_mu / k)]
    parts = [(u, c) for u, c in parts if c > 0]
    if not parts:
        return base
    u = np.column_stack([p[0] for p in parts])
    du = np.column_stack([base(col) for col in u.T])
    small = np.diag([1.0 / p[1] for p in parts]) - u.T @ du  # C^-1 - U^T D^-1 U

    def solve(r: np.ndarray) -> np.ndarray:
        z = base(r)
        return z + du @ np.linalg.solve(small, u.T @ z)

    return solve


class VectorScaling(ScoreCalibrator):
    r"""Vector scaling :math:`\operatorname{softmax}(w \odot z + b)`, regularised
    towards temperature scaling (module docstring).

    Parameters
    ----------
    input : {"auto", "logits", "probabilities"}, default "auto"
        What ``X`` holds (:mod:`bece._calibrate.scores`).
    reg_lambda : float or None, default None
        :math:`\lambda` >= 0, the penalty on the spread of the weights; None:
        chosen by cross-validation. 0 (with ``reg_mu`` None or 0) is the
        unregularised maximum-likelihood fit (Guo et al.'s with ``features="scores"``).
    reg_mu : float or None, default None
        :math:`\mu` >= 0, the penalty on the intercepts; None: the same as :math:`\lambda`
        (given or chosen).
    features : {"tempered", "scores"}, default "tempered"
        :math:`x`: ``"tempered"``, :math:`\log\operatorname{softmax}(z / T_0)`
        with :math:`T_0` temperature scaling's fit on the same data, as
        probmetrics' ``svs`` (:math:`w = 1, b = 0` is temperature scaling);
        ``"scores"``, the logits :math:`z` themselves (the log-probabilities for
        probability input), Guo et al.'s vector scaling (module docstring).
    reg_grid : sequence of float, default :data:`~bece._calibrate.linear.REG_GRID`
        Candidates of the cross-validation (1e-4 ... 1e6). The largest is
        temperature scaling to about 1e-6 in the weights, so no warning says
        when it wins.
    cv : int, default 5
        Folds of the cross-validation (>= 2; module docstring).
    random_state : int, default 0
        Shuffling of the folds.
    tol : float, default 1e-8
        Bound on the gradient of the penalised mean loss in whitened coordinates
        (:mod:`bece._calibrate.linear`).
    max_iter : int, default 1000
    bounds : (float, float), default (0.01, 100)
        Search interval of :math:`T_0` and of the starting temperature.

    Attributes
    ----------
    coef_ : ndarray of shape (K,)
        :math:`w`.
    intercept_ : ndarray of shape (K,)
        :math:`b`, centred.
    reg_lambda_, reg_mu_ : float
        The strengths used.
    feature_temperature_ : float
        :math:`T_0` of ``features="tempered"`` (1.0 for ``"scores"``, unused).
    cv_nll_ : ndarray of shape (len(reg_grid),) or None
        Held-out mean NLL of each candidate, in increasing order of the
        candidates (None when none was searched).
    nll_ : float
        Mean NLL (without penalty) of the calibration set at the fit.
    n_passes_ : int
        Passes over the data (softmax evaluations), the starting temperature's and
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
    >>> from bece.calibrate import VectorScaling
    >>> vs = VectorScaling(input="logits", features="scores", reg_lambda=0).fit(logits, y)   # Guo et al.
    >>> vs.coef_.shape, bool(np.allclose(vs.coef_, 0.5, atol=0.05))   # w = 1/T per class
    ((3,), True)
    >>> q = vs.predict_proba(logits)
    >>> q.shape, bool(np.allclose(q.sum(axis=1), 1.0))
    ((3000, 3), True)
    >>> cv = VectorScaling(input="logits").fit(logits, y)   # tempered; lambda = mu by 5-fold CV
    >>> cv.cv_nll_.shape, bool(cv.reg_lambda_ == cv.reg_mu_), bool(abs(cv.feature_temperature_ - 2) < 0.2)
    ((11,), True, True)
    """

    _contract = linear_contract(SHAPES["K"], diagonal=False)

    def __init__(self, *, input: str = "auto", reg_lambda: float | None = None,
                 reg_mu: float | None = None, features: str = "tempered",
                 reg_grid: tuple[float, ...] = REG_GRID, cv: int = 5, random_state: int = 0,
                 tol: float = 1e-8, max_iter: int = 1000,
                 bounds: tuple[float, float] = (1e-2, 1e2)) -> None:
        self.input = input
        self.reg_lambda = reg_lambda
        self.reg_mu = reg_mu
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

    def _blocks(self, scores: Scores) -> Blocks:
        """The feature blocks of ``scores`` (``features``)."""
        if self.features == "scores":
            return scores.blocks
        t = self.feature_temperature_

        def blocks() -> Iterator[tuple[int, int, np.ndarray]]:
            for start, stop, x in scores.blocks():
                yield start, stop, log_softmax(x / t)

        return blocks

    def _solve(self, scores: Scores, y: np.ndarray, lam: float, mu: float, theta0: np.ndarray,
               counter: PassCounter, tol: float) -> tuple[np.ndarray, int, float]:
        """``(theta, iterations, mean NLL)`` of the penalised fit from ``theta0``."""
        k = scores.k
        blocks = self._blocks(scores)
        fun = linear_objective(blocks, y, scores.n, k, full=False, counter=counter, curvature=True)
        data_hessp = linear_hessp(blocks, scores.n, k, full=False, counter=counter)
        penalty, pen_hvp = vector_penalty(k, lam, mu)

        def evaluate(theta: np.ndarray) -> tuple[float, np.ndarray, Vec]:
            loss, grad, h = fun(theta)
            value, pgrad = penalty(theta)
            return loss + value, grad + pgrad, penalised_preconditioner(h, lam, mu)

        def hessp(theta: np.ndarray, v: np.ndarray) -> np.ndarray:
            return data_hessp(theta, v) + pen_hvp(v)

        theta, n_iter, loss = newton_cg(evaluate, hessp, theta0, tol=tol, max_iter=self.max_iter,
                                        name=type(self).__name__)
        theta = np.concatenate([theta[:k], theta[k:] - theta[k:].mean()])
        return theta, n_iter, loss - penalty(theta)[0]

    def _fit(self, scores: Scores, y: np.ndarray) -> None:
        if self.reg_lambda is None and scores.n < self.cv:
            raise ValueError(f"cross-validation of reg_lambda needs at least cv={self.cv} rows (one "
                             f"per fold), got n_samples = {scores.n}; pass reg_lambda")
        counter = PassCounter()
        k = scores.k
        bounds = check_bounds(self.bounds)
        if self.features == "tempered":  # T_0 exactly; then w = 1, b = 0 is temperature scaling
            self.feature_temperature_ = fit_temperature(scores, y, bounds, counter)
            theta0 = np.r_[np.ones(k), np.zeros(k)]
        else:
            self.feature_temperature_ = 1.0
            theta0 = np.r_[np.full(k, 1.0 / rough_temperature(scores, y, bounds, counter)), np.zeros(k)]
        lam, mu = self.reg_lambda, self.reg_mu
        self.cv_nll_ = None
        if lam is None:
            lam, theta0 = self._cross_validate(scores, y, theta0, counter)
        lam = float(lam)
        mu = lam if mu is None else float(mu)
        theta, self.n_iter_, self.nll_ = self._solve(scores, y, lam, mu, theta0, counter, self.tol)
        self.coef_ = theta[:k]
        self.intercept_ = theta[k:]
        self.reg_lambda_ = lam
        self.reg_mu_ = mu
        self.n_passes_ = counter.count

    def _cross_validate(self, scores: Scores, y: np.ndarray, theta0: np.ndarray,
                        counter: PassCounter) -> tuple[float, np.ndarray]:
        """``(lambda, start)``: the candidate with the least held-out NLL, and
        the folds' mean solution there (the final fit's start). ``features="tempered"``
        keeps the :math:`T_0` of all the rows in every fold."""
        from sklearn.model_selection import KFold

        grid = np.sort(np.asarray(self.reg_grid, dtype=np.float64))[::-1]
        held = np.zeros(grid.size)
        start = np.zeros((grid.size, theta0.size))
        k = scores.k
        for train, test in KFold(self.cv, shuffle=True, random_state=self.random_state).split(scores.data):
            fold = Scores(scores.data[train], scores.kind, scores.binary)
            out = self._blocks(Scores(scores.data[test], scores.kind, scores.binary))
            theta = theta0
            for j, value in enumerate(grid):
                mu = value if self.reg_mu is None else float(self.reg_mu)
                theta = self._solve(fold, y[train], float(value), mu, theta, counter,
                                    max(self.tol, CV_TOL))[0]
                start[j] += theta / self.cv
                for s, e, x in out():
                    lp = log_softmax(x * theta[:k] + theta[k:])
                    held[j] -= float(lp[np.arange(e - s), y[test[s:e]]].sum())
        counter.count += grid.size  # the held-out NLL: one pass per candidate over the folds
        best = int(np.argmin(held))
        self.cv_nll_ = (held / scores.n)[::-1].copy()  # in reg_grid's sorted order
        return float(grid[best]), start[best]

    def _proba_block(self, block: np.ndarray) -> np.ndarray:
        if self.features == "tempered":
            block = log_softmax(block / self.feature_temperature_)
        return softmax(block * self.coef_ + self.intercept_)
