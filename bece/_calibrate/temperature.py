r"""Temperature scaling (Guo et al. 2017): one temperature T for every logit.

.. math::

    \hat p_i = \operatorname{softmax}(z_i / T), \qquad
    \hat T = \arg\min_{T > 0} \mathrm{NLL}(T), \qquad
    \mathrm{NLL}(T) = \sum_{i=1}^n \Big[\log \sum_k e^{z_{ik}/T} - z_{i y_i}/T\Big].

With :math:`\beta = 1/T`, NLL is convex in :math:`\beta` (a log-sum-exp of
functions linear in :math:`\beta` less a linear term), with

.. math::

    \frac{d\,\mathrm{NLL}}{d\beta} = \sum_i \big(\mathrm E_{\hat p_i}[z_i] - z_{i y_i}\big),
    \qquad
    \frac{d^2\mathrm{NLL}}{d\beta^2} = \sum_i \operatorname{Var}_{\hat p_i}(z_i) \ge 0,

so the gradient is increasing and its root is the unique minimiser. It is
found by :func:`scipy.optimize.brentq` on the gradient in :math:`\log T`
within ``bounds`` (default :math:`10^{-2} \le T \le 10^2`), to
:math:`|\Delta \log T| \le 10^{-10}` (T to a relative :math:`10^{-10}`, well
inside the :math:`10^{-8}` promised). If the gradient does not change sign
inside the bounds the minimum lies beyond one of them (for instance every
label is its row's argmax, and the NLL falls all the way to T = 0), and
:meth:`TemperatureScaling.fit` raises ``ValueError`` saying which bound.

Each evaluation of the gradient is one pass over the logits (a softmax),
computed in float64 block by block (:mod:`bece._calibrate.scores`); a fit
takes two passes for the bracket, about ten for Brent's method and one for
the final NLL (``n_passes_``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import brentq

from .base import ScoreCalibrator
from .scores import Scores, softmax
from .stored import Field

__all__ = [
    "PassCounter",
    "TemperatureScaling",
    "check_bounds",
    "fit_temperature",
    "temperature_terms",
]

#: Brent's tolerance on log T
LOG_T_TOL = 1e-10


@dataclass
class PassCounter:
    """Number of passes over the data (one softmax each)."""

    count: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def temperature_terms(scores: Scores, y: np.ndarray, beta: float, *, second: bool = False,
                      counter: PassCounter | None = None) -> tuple[float, float, float]:
    r"""``(NLL, dNLL/dbeta, d2NLL/dbeta2)`` at :math:`\beta = 1/T`, summed over rows.

    One pass over the logits in float64 blocks; the second derivative
    (:math:`\sum_i \mathrm{Var}_{\hat p_i}(z_i)`, centred before squaring)
    only with ``second``, else NaN.
    """
    nll = grad = hess = 0.0
    for start, stop, z in scores.blocks():
        rows = np.arange(stop - start)
        zy = z[rows, y[start:stop]]
        s = beta * z
        m = s.max(axis=1)
        e = np.exp(s - m[:, None])
        total = e.sum(axis=1)
        nll += float(np.sum(m + np.log(total) - beta * zy))
        ez = np.einsum("ij,ij->i", e, z) / total
        grad += float(np.sum(ez - zy))
        if second:
            d = z - ez[:, None]
            hess += float(np.sum(np.einsum("ij,ij->i", e, d * d) / total))
    if counter is not None:
        counter.count += 1
    return nll, grad, (hess if second else float("nan"))


def check_bounds(bounds: Any, name: str = "bounds") -> tuple[float, float]:
    """``bounds`` as ``(lo, hi)`` floats with ``0 < lo < hi < inf``, else ValueError."""
    try:
        lo, hi = (float(b) for b in bounds)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair (lo, hi) of temperatures, got {bounds!r}") from None
    if not (0 < lo < hi < np.inf):
        raise ValueError(f"{name} must satisfy 0 < lo < hi < inf, got {bounds!r}")
    return lo, hi


def fit_temperature(scores: Scores, y: np.ndarray, bounds: tuple[float, float] = (1e-2, 1e2),
                    counter: PassCounter | None = None) -> float:
    """The maximum-likelihood temperature (module docstring); ValueError when
    the minimum lies at or beyond a bound, or the logits carry no information
    on T (every row constant)."""
    counter = counter if counter is not None else PassCounter()
    lo, hi = bounds

    def grad_log_beta(v: float) -> float:  # d NLL / d log(beta), increasing in v
        beta = np.exp(v)
        return beta * temperature_terms(scores, y, beta, counter=counter)[1]

    v_lo, v_hi = -np.log(hi), -np.log(lo)  # log(beta) at T = hi and T = lo
    g_lo, g_hi = grad_log_beta(v_lo), grad_log_beta(v_hi)
    if g_lo == 0.0 and g_hi == 0.0:
        raise ValueError(
            "X carries no information on the temperature: the NLL is flat (every row's logits "
            "are equal, or every label's logit equals its row's softmax mean at both bounds)"
        )
    if g_lo >= 0:
        raise ValueError(
            f"the temperature reached the upper bound of the search (T = {hi:g}, bounds="
            f"{bounds}): the NLL still decreases beyond it (scores nearly uninformative of y?); "
            "widen bounds if a larger T is plausible"
        )
    if g_hi <= 0:
        raise ValueError(
            f"the temperature reached the lower bound of the search (T = {lo:g}, bounds="
            f"{bounds}): the NLL still decreases towards T = 0 (is every label its row's "
            "argmax?); widen bounds if a smaller T is plausible"
        )
    v = brentq(grad_log_beta, v_lo, v_hi, xtol=LOG_T_TOL, rtol=4 * np.finfo(float).eps, maxiter=200)
    return float(np.exp(-v))


class TemperatureScaling(ScoreCalibrator):
    r"""Temperature scaling: :math:`\operatorname{softmax}(z / T)` with T by maximum likelihood.

    Parameters
    ----------
    input : {"auto", "logits", "probabilities"}, default "auto"
        What ``X`` holds (:mod:`bece._calibrate.scores`); for probabilities
        their logarithm serves as logits, which changes nothing
        (the softmax ignores a per-row shift).
    bounds : (float, float), default (0.01, 100)
        Search interval of T; a fit whose minimum lies beyond it raises
        ``ValueError`` (module docstring).

    Attributes
    ----------
    temperature_ : float
        :math:`\hat T`.
    nll_ : float
        Mean negative log-likelihood of the calibration set at :math:`\hat T`.
    n_passes_ : int
        Passes over the calibration scores that the fit took.
    classes_, n_classes_, input_, binary_input_
        See :class:`~bece._calibrate.base.ScoreCalibrator`.

    Examples
    --------
    >>> import numpy as np
    >>> from bece.calibrate import TemperatureScaling
    >>> rng = np.random.default_rng(0)
    >>> logits = rng.normal(scale=3.0, size=(5000, 4))
    >>> u = rng.uniform(size=(5000, 1))
    >>> p_true = np.exp(logits / 2) / np.exp(logits / 2).sum(axis=1, keepdims=True)
    >>> y = (u > p_true.cumsum(axis=1)).sum(axis=1)      # drawn with T = 2
    >>> ts = TemperatureScaling(input="logits").fit(logits, y)
    >>> bool(abs(ts.temperature_ - 2) < 0.15)
    True
    """

    _contract = {"temperature_": Field("float", low=0.0, low_open=True),
                 "nll_": Field("float", low=0.0), "n_passes_": Field("int", low=0)}

    def __init__(self, *, input: str = "auto", bounds: tuple[float, float] = (1e-2, 1e2)) -> None:
        self.input = input
        self.bounds = bounds

    def _check_params(self) -> None:
        check_bounds(self.bounds)

    def _fit(self, scores: Scores, y: np.ndarray) -> None:
        counter = PassCounter()
        t = fit_temperature(scores, y, check_bounds(self.bounds), counter)
        nll = temperature_terms(scores, y, 1.0 / t, counter=counter)[0]
        self.temperature_ = t
        self.nll_ = nll / scores.n
        self.n_passes_ = counter.count

    def _proba_block(self, block: np.ndarray) -> np.ndarray:
        return softmax(block / self.temperature_)
