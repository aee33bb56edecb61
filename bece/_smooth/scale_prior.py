r"""Priors of the hierarchical top-label model's deviation scales, on grids.

The label shifts' scale :math:`\kappa` and the label tilts' scale
:math:`\omega` (:mod:`bece.models._toplabel_smooth`) each get a mixture of
two exponentials,

.. math::

    p(\kappa) = \pi_s\,\mathrm{Exp}(\kappa; \text{mean } r s)
        + (1 - \pi_s)\,\mathrm{Exp}(\kappa; \text{mean } s),
    \qquad r = 0.02,

a "shared" component (deviations of at most a few hundredths of a logit:
all labels share one curve) with prior probability :math:`\pi_s`
(``shared_prob``, default 1/2) and the penalised-complexity exponential of
mean :math:`s` (``label_scale`` or ``tilt_scale``). With ``shared_prob = 0``
it is the exponential alone.

Why: with a handful of predictions per label the data barely tell whether
the labels' curves differ (at K = 100, n = 1,000, about 10 per label, the
posterior mean of :math:`\kappa` was 0.26 when the truth was one shared map
and 0.41 when the labels' logits were shifted by N(0, 0.5²)), so the
posterior of each label's deviation is mostly its prior, and the absolute
value in every label's ECE turns that prior spread into an upward bias of
the top-label ECE. On DenseNet-BC-100's CIFAR-100 outputs with outcomes
from a temperature of 1.15 (true ECE 0.017, n = 1,000) the exponential
alone gave a bias of +0.0067 and covered 0.75; the labels sharing one curve
exactly gave +0.0015 and 0.93. A smaller exponential mean shrinks the real
deviations too, wherever the data are weak (a per-label shift-and-slope map
at n = 10^4 fell from 0.88 to 0.70 with means 0.25 and 0.1); the mixture
instead lets the data choose: the shared component keeps the answer of one
curve when the labels cannot be told apart, and the exponential's tail is
there when they can (``benchmarks/toplabel_smooth_study.py``, documentation:
validation).

Grids: each value stands for the prior's mass between its geometric
neighbours (tails included), over :math:`[10^{-2}, 10]` times the mean
:math:`s`, as the smooth model's hyper-parameter grids.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._base.laplace import exponential_grid

__all__ = ["SHARED_PROB", "SHARED_RATIO", "check_shared_prob", "scale_cdf", "scale_grid"]

#: prior probability of the "shared" component of each deviation scale
SHARED_PROB = 0.5
#: mean of the "shared" component as a fraction of the scale's mean
SHARED_RATIO = 0.02


def scale_cdf(x: np.ndarray, scale: float, shared_prob: float) -> np.ndarray:
    """The two-exponential mixture's distribution function (module docstring)
    at ``x`` (0 to inf)."""
    x = np.asarray(x, dtype=np.float64)
    return (shared_prob * -np.expm1(-x / (SHARED_RATIO * scale))
            + (1.0 - shared_prob) * -np.expm1(-x / scale))


def scale_grid(scale: float, size: int, shared_prob: float) -> tuple[np.ndarray, np.ndarray]:
    """The values of :func:`exponential_grid` and the mass of the two-exponential
    mixture (module docstring) between their geometric mid-points."""
    values, _ = exponential_grid(scale, size)
    mids = np.sqrt(values[:-1] * values[1:])
    return values, np.diff(scale_cdf(np.concatenate([[0.0], mids, [np.inf]]), scale, shared_prob))


def check_shared_prob(value: Any) -> float:
    """``shared_prob`` as a float in [0, 1), or ValueError."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"shared_prob must be a number in [0, 1), got {value!r}")
    if not 0.0 <= value < 1.0:
        raise ValueError(f"shared_prob must be a number in [0, 1), got {value!r}")
    return float(value)
