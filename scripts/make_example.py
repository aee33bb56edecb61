"""Write the example shipped with bece: bece/data/example.csv.

Predictions of an L2-regularised multinomial logistic regression
(scikit-learn's ``LogisticRegression()`` model: C = 1, intercepts not
penalised) on the held-out half of scikit-learn's digits data set
(10 classes, 899 test images). Columns: ``y_true`` and the class
probabilities ``p_0 ... p_9`` (10 significant digits, so every row still
sums to 1 within 1e-8).

Reproducible across library versions. The file must not depend on the
version of scikit-learn or scipy that regenerates it, so:

* the split is drawn here from NumPy's legacy ``RandomState(0)``, whose
  stream NumPy keeps fixed (NEP 19), not by scikit-learn's splitter;
* the fit is the unique optimum of the objective, converged far beyond a
  solver's default tolerance. The objective (scikit-learn's)

      f(W, b) = mean_i -log softmax(W x_i + b)[y_i] + ||W||^2 / (2 C n)

  is strictly convex except along one direction that changes no
  probability (the same constant added to every intercept), so its
  predicted probabilities at the optimum are unique and any converged
  solver reaches them. Newton's method on f, written out below with NumPy
  only, brings the gradient to ``||g||_2 <= GRAD_TOL`` (12 steps; about
  1e-15 is reached). (The earlier file used scikit-learn's lbfgs at its
  default tolerance: 0.93 away from the optimum in some probability, and
  0.018 apart between two scikit-learn/scipy versions.) scikit-learn's
  ``LogisticRegression().fit`` minimises the same f, to its own tolerance.

How far the written probabilities can be from the optimum's: the error in
the parameters is ``delta = H^-1 g`` (to first order), so
``||delta|| <= ||g|| / mu`` with ``mu`` the smallest eigenvalue of the
Hessian H away from the flat direction; a row's logits move by at most
``||delta|| * ||(x, 1)||`` and its probabilities by half that (the softmax
Jacobian has norm <= 1/2). :func:`error_bound` is this bound at
``||g|| = GRAD_TOL``: about 3e-6 here (the digits problem is
ill-conditioned, mu ~ 1e-6, because most training predictions are near
certain). Two runs that both meet ``GRAD_TOL`` therefore agree within twice
it, plus 5e-11 from the 10 digits written; tests/test_package.py checks
exactly that.

Run from the repository root::

    python scripts/make_example.py [OUT]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "bece" / "data" / "example.csv"

#: inverse regularisation strength (scikit-learn's default)
C = 1.0
#: ||gradient||_2 of f at the written fit (machine precision is ~1e-16 here)
GRAD_TOL = 1e-13


def split() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Stratified half split of the digits: 898 training, 899 test images.

    A permutation from ``RandomState(0)`` (a stream NumPy keeps fixed),
    stably sorted by class; every other image of that sequence is a test
    image (so each class is halved to within one), kept in permuted order.
    """
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    perm = np.random.RandomState(0).permutation(y.size)
    by_class = perm[np.argsort(y[perm], kind="stable")]
    is_test = np.zeros(y.size, dtype=bool)
    is_test[by_class[0::2]] = True
    test, train = perm[is_test[perm]], perm[~is_test[perm]]
    return X[train], X[test], y[train], y[test]


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def _objective(theta: np.ndarray, A: np.ndarray, Y: np.ndarray) -> float:
    """f at theta = [W | b] (K x (d+1)); A = [X | 1], Y one-hot."""
    n, d = A.shape[0], A.shape[1] - 1
    z = A @ theta.T
    zmax = z.max(axis=1, keepdims=True)
    logsumexp = np.log(np.exp(z - zmax).sum(axis=1)) + zmax[:, 0]
    return float(np.mean(logsumexp - (z * Y).sum(axis=1)) + (theta[:, :d] ** 2).sum() / (2 * C * n))


def _gradient_hessian(theta: np.ndarray, A: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gradient (K x (d+1)) and Hessian (K(d+1) square) of f at theta = [W | b]."""
    n, d1 = A.shape
    k = Y.shape[1]
    P = _softmax(A @ theta.T)
    g = (P - Y).T @ A / n
    g[:, :-1] += theta[:, :-1] / (C * n)
    # sum_i kron(diag(p_i) - p_i p_i^T, a_i a_i^T) / n
    B = (P[:, :, None] * A[:, None, :]).reshape(n, k * d1)
    H = -(B.T @ B)
    for c in range(k):
        H[c * d1:(c + 1) * d1, c * d1:(c + 1) * d1] += (A * P[:, c:c + 1]).T @ A
    H /= n
    reg = np.zeros((k, d1))
    reg[:, :-1] = 1 / (C * n)
    return g, H + np.diag(reg.ravel())


def _flat(k: int, d1: int) -> np.ndarray:
    """Unit vector of the direction f is flat along: every intercept + c."""
    v = np.zeros((k, d1))
    v[:, -1] = 1 / np.sqrt(k)
    return v.ravel()


def fit(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float, float]:
    """The optimum of f: ``(theta, ||g||_2, mu)``, theta = [W | b] (K x (d+1)).

    Newton's method with backtracking from zero (NumPy only; 12 steps here,
    the full step from the first), until ``||g||_2 <= GRAD_TOL``; ``mu`` is
    the smallest eigenvalue of the Hessian away from the flat direction
    (module docstring).
    """
    k = int(y.max()) + 1
    A = np.hstack([X, np.ones((X.shape[0], 1))])
    Y = np.eye(k)[y]
    theta = np.zeros((k, A.shape[1]))
    # adding flat flat^T moves only the Hessian's zero eigenvalue (to 1)
    flat = _flat(k, A.shape[1])
    gauge = np.outer(flat, flat)
    for _ in range(100):
        g, H = _gradient_hessian(theta, A, Y)
        norm = float(np.linalg.norm(g))
        if norm <= GRAD_TOL:
            return theta, norm, float(np.linalg.eigvalsh(H + gauge)[0])
        step = np.linalg.solve(H + gauge, g.ravel()).reshape(theta.shape)
        f0, t = _objective(theta, A, Y), 1.0
        while _objective(theta - t * step, A, Y) > f0 and t > 1e-10:
            t /= 2
        theta = theta - t * step
    raise RuntimeError(f"Newton's method did not reach ||g|| <= {GRAD_TOL:g} (at {norm:.2e})")


def error_bound(X_test: np.ndarray, mu: float, grad_norm: float = GRAD_TOL) -> float:
    """Largest change of any test probability between a fit with gradient
    norm ``grad_norm`` and the optimum (module docstring)."""
    rows = np.sqrt((X_test**2).sum(axis=1) + 1).max()
    return 0.5 * rows * grad_norm / mu


def make_example() -> pd.DataFrame:
    """The example's table; ``.attrs["error_bound"]`` is :func:`error_bound`
    at ``GRAD_TOL``: any run's probabilities are within it of the optimum's."""
    X_train, X_test, y_train, y_test = split()
    theta, _, mu = fit(X_train, y_train)
    proba = _softmax(X_test @ theta[:, :-1].T + theta[:, -1])
    frame = pd.DataFrame(proba, columns=[f"p_{k}" for k in range(proba.shape[1])])
    frame.insert(0, "y_true", y_test.astype(np.int64))
    frame.attrs["error_bound"] = error_bound(X_test, mu)
    return frame


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    out = Path(argv[0]) if argv else DEFAULT_OUT
    frame = make_example()
    frame.to_csv(out, index=False, float_format="%.10g")
    print(f"wrote {out} (each probability within {frame.attrs['error_bound']:.1e} of the optimum's)")


if __name__ == "__main__":
    main()
