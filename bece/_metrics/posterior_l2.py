"""Posterior of the binned l2 ECE and Brier reliability, from the draws of a
Bayesian ECE.

A posterior over the (l1) ECE from :func:`bece.bayesian_ece` (either model,
binned or smooth) carries per-bin draws of the weight :math:`\\pi_m`, the
accuracy (observed frequency) :math:`a_m` and the mean confidence
:math:`c_m`, of which its ECE draws are :math:`\\sum_m \\pi_m |a_m - c_m|`.
The same draws give the population l2 ECE and the reliability term of the
binned Brier decomposition (its square),

.. math::

    \\mathrm{ECE}_2 = \\Big(\\sum_m \\pi_m (a_m - c_m)^2\\Big)^{1/2}, \\qquad
    \\mathrm{REL} = \\mathrm{ECE}_2^2,

so the l1 and l2 posteriors are draw-for-draw of the same population and
their intervals are consistent. The interval's coverage is measured by
``benchmarks/l2_coverage.py`` (table in the documentation's validation page).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "l2_ece_draws",
]


def l2_ece_draws(posterior: Any) -> np.ndarray:
    """Posterior draws of the binned l2 ECE from the per-bin draws of a
    Bayesian ECE.

    Parameters
    ----------
    posterior : BayesianECE or SmoothBayesianECE
        The result of :func:`bece.bayesian_ece` or :func:`bece.posterior_ece`
        (anything with ``weight``, ``accuracy`` and ``confidence`` arrays of
        shape (S, M)).

    Returns
    -------
    ndarray of shape (S,)
        :math:`(\\sum_m \\pi_m (a_m - c_m)^2)^{1/2}` for each draw; its square
        is the posterior of the Brier reliability on the same bins.

    Examples
    --------
    >>> import numpy as np, bece
    >>> from bece.metrics import l2_ece_draws
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 2).astype(int)
    >>> post = bece.bayesian_ece(y, p, model="binned", num_samples=2000)
    >>> l2 = l2_ece_draws(post)
    >>> bool(np.all(l2 >= post.draws))
    True
    """
    try:
        w = np.asarray(posterior.weight, dtype=np.float64)
        a = np.asarray(posterior.accuracy, dtype=np.float64)
        c = np.asarray(posterior.confidence, dtype=np.float64)
    except AttributeError:
        raise ValueError(
            "posterior must be a Bayesian ECE result with per-bin draws (weight, accuracy, "
            f"confidence), e.g. bece.bayesian_ece(...); got {type(posterior).__name__}"
        ) from None
    if not (w.ndim == 2 and w.shape == a.shape == c.shape):
        raise ValueError(
            "posterior's weight, accuracy and confidence must be draws of shape (S, M), got "
            f"{w.shape}, {a.shape}, {c.shape}"
        )
    gap = np.where(w > 0, a - c, 0.0)  # an empty bin's accuracy is undefined (NaN)
    return np.asarray(np.sqrt(np.sum(w * gap * gap, axis=1)), dtype=np.float64)
