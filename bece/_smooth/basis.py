"""The spline basis of the smooth calibration curve."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

__all__ = [
    "logit_confidence",
    "natural_cubic_basis",
    "natural_cubic_derivatives",
    "phi_basis",
    "roughness_penalty",
    "SmoothBasis",
]

LOGIT_CLIP = 1e-6


DEFAULT_N_KNOTS = 10


def logit_confidence(p: np.ndarray) -> np.ndarray:
    """:math:`\\operatorname{logit}(\\operatorname{clip}(p, 10^{-6}, 1 - 10^{-6}))`, float64.

    The clip applies to the curve's argument only (a confidence of exactly 1
    would have an infinite logit); the ECE uses the confidences as given.
    """
    return special.logit(np.clip(np.asarray(p, dtype=np.float64), LOGIT_CLIP, 1.0 - LOGIT_CLIP))


def natural_cubic_basis(x: np.ndarray, knots: np.ndarray) -> np.ndarray:
    """Non-linear natural cubic spline functions (numpy twin of
    :func:`bece.models._smooth.natural_cubic_basis`).

    Parameters
    ----------
    x : ndarray of shape (n,)
    knots : ndarray of shape (K,), strictly increasing

    Returns
    -------
    ndarray of shape (n, K - 2)
        :math:`N_{k+2}(x) = d_k(x) - d_{K-1}(x)`,
        :math:`d_k(x) = ((x-\\xi_k)_+^3 - (x-\\xi_K)_+^3)/(\\xi_K - \\xi_k)`;
        linear beyond :math:`\\xi_K`, 0 below :math:`\\xi_1`.
    """
    x = np.asarray(x, dtype=np.float64)
    knots = np.asarray(knots, dtype=np.float64)
    last = knots[-1]
    span = last - knots[:-1]
    xc = np.minimum(x, last)[:, None]
    d = (np.maximum(xc - knots[:-1], 0.0) ** 3 - np.maximum(xc - last, 0.0) ** 3) / span
    d += np.maximum(x - last, 0.0)[:, None] * (3.0 * span)  # tangent continuation
    return d[:, :-1] - d[:, -1:]


def natural_cubic_derivatives(x: np.ndarray, knots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """First and second derivatives of :func:`natural_cubic_basis`, each of shape (n, K - 2).

    With :math:`d_k' = 3(x-\\xi_k)_+^2/(\\xi_K - \\xi_k)` and
    :math:`d_k'' = 6(x-\\xi_k)_+/(\\xi_K - \\xi_k)` up to :math:`\\xi_K`, and
    :math:`d_k' = 3(\\xi_K - \\xi_k)`, :math:`d_k'' = 0` beyond (the tangent
    continuation). :math:`N''` is continuous and piecewise linear with breaks
    at the knots (0 below :math:`\\xi_1` and from :math:`\\xi_K` on), so its
    extremes over an interval lie at the interval's ends or at knots inside it.
    """
    x = np.asarray(x, dtype=np.float64)
    knots = np.asarray(knots, dtype=np.float64)
    last = knots[-1]
    span = last - knots[:-1]
    inside = (x <= last)[:, None]
    r = np.maximum(np.minimum(x, last)[:, None] - knots[:-1], 0.0)
    d1 = np.where(inside, 3.0 * r**2 / span, 3.0 * span)
    d2 = np.where(inside, 6.0 * r / span, 0.0)
    return d1[:, :-1] - d1[:, -1:], d2[:, :-1] - d2[:, -1:]


def roughness_penalty(knots: np.ndarray) -> np.ndarray:
    """:math:`\\Omega_{jk} = \\int N_j''(x) N_k''(x)\\,dx`, shape (K - 2, K - 2).

    The second derivatives are piecewise linear between knots (0 outside
    :math:`[\\xi_1, \\xi_K]`), so Simpson's rule on each knot interval is exact.
    """
    knots = np.asarray(knots, dtype=np.float64)
    last = knots[-1]

    def second(t: np.ndarray) -> np.ndarray:
        t = np.asarray(t, dtype=np.float64)[:, None]
        d2 = 6.0 * (np.maximum(t - knots[:-1], 0.0) - np.maximum(t - last, 0.0)) / (last - knots[:-1])
        return d2[:, :-1] - d2[:, -1:]

    lo, hi = knots[:-1], knots[1:]
    a, m, b = second(lo), second(0.5 * (lo + hi)), second(hi)
    h = (hi - lo)[:, None, None]
    outer = lambda u: u[:, :, None] * u[:, None, :]  # noqa: E731
    return np.sum(h / 6.0 * (outer(a) + 4.0 * outer(m) + outer(b)), axis=0)


@dataclass(frozen=True)
class SmoothBasis:
    """Design of the curve: :math:`[1, x, \\phi(x), e_{m(x)}]`.

    Attributes
    ----------
    knots : ndarray of shape (K,)
        On the logit scale (empty when fewer than 3 distinct confidences:
        the smooth part is then linear in x).
    transform : ndarray of shape (K, K - 2)
        :math:`\\phi(x) = [1, x, N(x)]\\,T`: the Demmler–Reinsch functions
        :math:`N(x) U D^{-1/2}` (:math:`\\Omega = U D U^\\top`) less their
        least-squares linear part over the observed confidences, divided by
        their RMS :math:`c` there. Removing the linear part changes no
        second derivative, so the prior is still the smoothing-spline prior
        :math:`\\propto \\exp(-\\int g''^2 c^2/(2\\lambda^2))`; it leaves the
        linear trend to :math:`a, b` alone, which removes a ridge between
        them and :math:`\\lambda u` that NUTS diverged on.
    n_bins : int
        M when the curve has a deviation per ECE bin (one-hot columns
        :math:`e_{m(x)}`), else 0.
    """

    knots: np.ndarray
    transform: np.ndarray
    n_bins: int = 0

    @property
    def n_spline(self) -> int:
        return int(self.transform.shape[1])

    @property
    def n_coef(self) -> int:
        return 2 + self.n_spline + self.n_bins

    @property
    def n_smooth(self) -> int:
        """Columns of the smooth part, ``2 + K - 2``."""
        return 2 + self.n_spline

    def logits(self, x: np.ndarray, bins: np.ndarray | None, beta: np.ndarray) -> np.ndarray:
        """:math:`f(x) = x + [1, x, \\phi(x), e_{m(x)}]\\beta` for each row of ``beta``.

        ``x`` and ``bins`` have shape (n,), ``beta`` (S, P); returns (S, n).
        Same as ``x + beta @ design(x, bins).T`` without forming the one-hot
        columns.
        """
        x = np.asarray(x, dtype=np.float64)
        k = self.n_smooth
        f = x + beta[:, :k] @ self.design(x).T
        if self.n_bins:
            f += beta[:, k:][:, np.asarray(bins)]
        return f

    def derivatives(self, x: np.ndarray, beta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:math:`f'(x)` and :math:`f''(x)` for each row of ``beta``, each of shape (S, n).

        The per-bin deviations are constant within a bin and do not enter;
        :math:`f' = 1 + b + \\phi'(x)^\\top\\lambda u`,
        :math:`f'' = \\phi''(x)^\\top\\lambda u` (:func:`natural_cubic_derivatives`).
        """
        x = np.asarray(x, dtype=np.float64)
        f1 = np.broadcast_to(1.0 + beta[:, 1:2], (beta.shape[0], x.size))
        if not self.n_spline:
            return f1.copy(), np.zeros((beta.shape[0], x.size))
        d1, d2 = natural_cubic_derivatives(x, self.knots)
        coef = beta[:, 2:self.n_smooth]
        slope = self.transform[1] + d1 @ self.transform[2:]  # (n, K - 2)
        return f1 + coef @ slope.T, coef @ (d2 @ self.transform[2:]).T

    def design(self, x: np.ndarray, bins: np.ndarray | None = None) -> np.ndarray:
        """Columns ``[1, x, N(x) T, onehot(bins)]``, shape (n, 2 + (K - 2) + M);
        without ``bins`` the smooth part only, shape (n, K)."""
        x = np.asarray(x, dtype=np.float64)
        cols = [np.ones_like(x)[:, None], x[:, None]]
        if self.n_spline:
            cols.append(phi_basis(x, self.knots, self.transform))
        if self.n_bins and bins is not None:
            onehot = np.zeros((x.size, self.n_bins))
            onehot[np.arange(x.size), np.asarray(bins)] = 1.0
            cols.append(onehot)
        return np.concatenate(cols, axis=1)

    @classmethod
    def from_logits(cls, x: np.ndarray, counts: np.ndarray, n_knots: int,
                    n_bins: int = 0, *, knots: np.ndarray | None = None) -> SmoothBasis:
        """Knots at ``n_knots`` equally spaced quantiles of the distinct logits
        (fewer if there are fewer distinct values), scaled over ``x``
        weighted by ``counts``.

        ``knots`` (increasing, logit scale) replaces the quantiles of ``x``:
        the fine grid passes the quantiles of the predictions' logits that
        its cells tell (:func:`bece._smooth.atoms.cell_knots`), since the
        distinct cell means are not the distinct predictions. Fewer than 3
        knots leave the curve linear.
        """
        if knots is None:
            ux = np.unique(x)
            k = min(n_knots, ux.size)
            knots = np.quantile(ux, np.linspace(0.0, 1.0, k)) if k >= 3 else np.empty(0)
        knots = np.asarray(knots, dtype=np.float64)
        if knots.size < 3:
            return cls(np.empty(0), np.empty((0, 0)), n_bins)
        omega = roughness_penalty(knots)
        evals, evecs = np.linalg.eigh(omega)
        t0 = evecs / np.sqrt(evals)
        phi = natural_cubic_basis(x, knots) @ t0
        lin = np.column_stack([np.ones_like(x), x])
        sw = np.sqrt(counts)[:, None]
        coef, *_ = np.linalg.lstsq(lin * sw, phi * sw, rcond=None)  # (2, K - 2)
        phi -= lin @ coef
        c = np.sqrt(np.sum(counts[:, None] * phi**2) / counts.sum())
        if not np.isfinite(c) or c <= 0:  # pragma: no cover - degenerate confidences
            c = 1.0
        return cls(knots, np.vstack([-coef, t0]) / c, n_bins)


def phi_basis(x: np.ndarray, knots: np.ndarray, transform: np.ndarray) -> np.ndarray:
    """:math:`[1, x, N(x)]\\,T`, shape (n, K - 2)."""
    return transform[0] + x[:, None] * transform[1] + natural_cubic_basis(x, knots) @ transform[2:]
