"""Smooth ECE of Blasiok & Nakkiran (2023), the number relplot's ``smECE`` gives.

For pairs :math:`(z_i, p_i)` (:mod:`bece._metrics.pairs`; (n, K) input is read
top-label) and a bandwidth :math:`\\sigma`, the residuals :math:`r_i = p_i - z_i`
are kernel-smoothed over :math:`[0, 1]` with a Gaussian kernel reflected at
0 and 1, :math:`K_\\sigma`:

.. math::

    \\hat r(t) = \\frac{\\sum_i w_i r_i K_\\sigma(t, p_i)}{\\delta(t)}, \\quad
    \\delta(t) = \\sum_i w_i K_\\sigma(t, p_i) + \\epsilon, \\qquad
    \\mathrm{smECE}_\\sigma = \\frac{\\int |\\hat r(t)|\\,\\delta(t)\\,dt}{\\int \\delta(t)\\,dt},

and smECE is :math:`\\mathrm{smECE}_{\\sigma^*}` at the fixed point
:math:`\\sigma^* = \\mathrm{smECE}_{\\sigma^*}`, found by bisection on
:math:`[0, 1]`.

The computation is relplot's (``relplot.metrics.smECE``, version 1.0.3),
step for step, so that the numbers agree to float64 rounding: the points
are spread linearly onto a grid of :math:`\\max(2000, 20/\\sigma)/2 + 1`
nodes, the grid is convolved with the kernel sampled on the same spacing
(values reflected at both ends), the result is interpolated linearly at
:math:`\\max(200, 10/\\sigma)` evaluation points whose sums replace the
integrals; :math:`\\epsilon = 10^{-4}` (per unit weight); the bisection
starts at :math:`\\sigma = 1` and halves the bracket 10 times, returning its
upper end (the smallest tried :math:`\\sigma` with
:math:`\\sigma \\ge \\mathrm{smECE}_\\sigma`), or stops at :math:`\\sigma <`
``tol`` (0.001). The grid discretisation is relplot's approximation of the
integrals; the benchmark ``benchmarks/peer_ece.py`` compares with relplot.
Sample weights are normalised to mean 1, so that unit weights give relplot's
number exactly.

References
----------
Blasiok & Nakkiran (2023), "Smooth ECE: principled reliability diagrams via
kernel smoothing", arXiv:2309.12236; ``apple/ml-calibration`` (relplot).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._stats.inputs import Inputs
from .pairs import weighted_pairs

__all__ = [
    "smooth_calibration_error",
    "smooth_calibration_error_at",
]

_DENSITY_EPS = 1e-4


def _to_grid(f: np.ndarray, y: np.ndarray, nodes: int) -> np.ndarray:
    """Spread ``y`` at positions ``f`` linearly onto ``nodes`` grid nodes on [0, 1]."""
    values = np.zeros(nodes)
    b = np.clip((f * (nodes - 1)).astype(np.int64), 0, nodes - 2)
    frac = f * (nodes - 1) - b
    np.add.at(values, b, (1.0 - frac) * y)
    np.add.at(values, b + 1, frac * y)
    return values


def _interpolate(t: np.ndarray, y: np.ndarray) -> np.ndarray:
    m = len(y)
    size = 1.0 / (m - 1)
    i = np.clip((t * (m - 1)).astype(np.int64), 0, m - 2)
    frac = (t - i * size) / size
    return y[i] * (1.0 - frac) + y[i + 1] * frac


def _apply(f: np.ndarray, y: np.ndarray, t: np.ndarray, sigma: float) -> np.ndarray:
    """Reflected-Gaussian smoothing of values ``y`` at ``f``, evaluated at ``t``."""
    nodes = max(2000, round(20 / sigma)) // 2 + 1
    values = _to_grid(f, y, nodes)
    s = np.linspace(0.0, 1.0, nodes)
    ker = np.exp(-(s - 0.5) * (s - 0.5) / (2 * sigma**2)) / (np.sqrt(2 * np.pi) * sigma)
    ext = np.concatenate([np.flip(values)[:-1], values, np.flip(values)[1:]])
    smoothed = np.convolve(ext, ker, "valid")[nodes // 2: nodes // 2 + nodes]
    return _interpolate(t, smoothed)


def _smece_at(p: np.ndarray, r: np.ndarray, w: np.ndarray, sigma: float) -> float:
    t = np.linspace(0.0, 1.0, max(round(10 / sigma), 200))
    dens = _apply(p, w, t, sigma) + _DENSITY_EPS
    rs = _apply(p, w * r, t, sigma) / dens
    return float(np.sum(np.abs(rs) * dens) / np.sum(dens))


def _prepared(y_true: ArrayLike, y_prob: ArrayLike, kw: dict[str, Any]) -> tuple[np.ndarray, ...]:
    z, p, w = weighted_pairs(y_true, y_prob, **kw)
    return p, p - z, w * (w.size / w.sum())


def smooth_calibration_error_at(
    y_true: ArrayLike, y_prob: ArrayLike, bandwidth: float, *, y_pred: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None, labels: ArrayLike | None = None,
    pos_label: Any = None, from_logits: bool = False,
) -> float:
    """Smooth ECE at a fixed bandwidth (relplot's ``smECE_sigma``).

    Parameters
    ----------
    y_true, y_prob, y_pred, labels, pos_label, from_logits
        As :func:`bece.expected_calibration_error`.
    bandwidth : float
        The kernel's standard deviation :math:`\\sigma`, in (0, 1].
    sample_weight : array_like of shape (n,), optional

    Examples
    --------
    >>> import numpy as np
    >>> from bece.metrics import smooth_calibration_error, smooth_calibration_error_at
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = rng.uniform(size=2000) < p ** 2           # true miscalibration: E|p - p^2| = 1/6
    >>> value, sigma = smooth_calibration_error(y, p, return_bandwidth=True)
    >>> bool(abs(smooth_calibration_error_at(y, p, sigma) - value) < 1e-9)   # at its fixed point
    True
    >>> [round(smooth_calibration_error_at(y, p, s), 2) for s in (0.01, 0.05, 0.2)]
    [0.17, 0.17, 0.17]
    """
    if isinstance(bandwidth, bool) or not isinstance(bandwidth, (int, float, np.floating)) \
            or not 0.0 < float(bandwidth) <= 1.0:
        raise ValueError(f"bandwidth must be a number in (0, 1], got {bandwidth!r}")
    p, r, w = _prepared(y_true, y_prob, dict(y_pred=y_pred, sample_weight=sample_weight,
                                             inputs=Inputs(labels, pos_label, from_logits)))
    return _smece_at(p, r, w, float(bandwidth))


def smooth_calibration_error(
    y_true: ArrayLike, y_prob: ArrayLike, *, y_pred: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None, tol: float = 0.001, return_bandwidth: bool = False,
    labels: ArrayLike | None = None, pos_label: Any = None, from_logits: bool = False,
) -> float | tuple[float, float]:
    """Smooth ECE (smECE) with the bandwidth at its fixed point.

    Parameters
    ----------
    y_true, y_prob, y_pred, labels, pos_label, from_logits
        As :func:`bece.expected_calibration_error`; (n, K) ``y_prob`` is read
        top-label (confidence against correctness).
    sample_weight : array_like of shape (n,), optional
    tol : float, default 0.001
        Bandwidths below it end the search (relplot's ``eps``).
    return_bandwidth : bool, default False
        Also return the bandwidth used.

    Examples
    --------
    >>> import numpy as np
    >>> from bece.metrics import smooth_calibration_error
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = rng.uniform(size=2000) < p ** 2
    >>> value, sigma = smooth_calibration_error(y.astype(int), p, return_bandwidth=True)
    >>> round(value, 4), round(sigma, 4)
    (0.1682, 0.1689)
    """
    if isinstance(tol, bool) or not isinstance(tol, (int, float, np.floating)) \
            or not 0.0 < float(tol) < 1.0:
        raise ValueError(f"tol must be a number in (0, 1), got {tol!r}")
    p, r, w = _prepared(y_true, y_prob, dict(y_pred=y_pred, sample_weight=sample_weight,
                                             inputs=Inputs(labels, pos_label, from_logits)))

    def too_small(alpha: float) -> bool:
        return alpha < tol or alpha < _smece_at(p, r, w, alpha)

    sigma = 1.0
    if not too_small(1.0):
        start, end = 1.0, 0.0
        for _ in range(10):
            mid = (start + end) / 2
            if too_small(mid):
                end = mid
            else:
                start = mid
        sigma = start
    value = _smece_at(p, r, w, sigma)
    return (value, sigma) if return_bandwidth else value
