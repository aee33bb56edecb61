"""Percentile-bootstrap intervals for any plug-in metric.

Where bece's models give no posterior for a metric (smooth ECE, ECE_sweep,
log loss, the calibration slope, ...), the documented frequentist interval
is the percentile bootstrap over prediction rows (Efron & Tibshirani 1993):
``n_boot`` resamples of the n rows with replacement (weights travel with
their rows), the metric on each, and the ``(1 - prob)/2`` and
``(1 + prob)/2`` quantiles of those values. Its coverage is not guaranteed:
for a biased estimator (the plug-in l2 ECE at small n) it inherits the bias;
``benchmarks/l2_coverage.py`` measures it for the l2 ECE (table in the
documentation's validation page).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ..base.checks import check_prob, positive_int
from ..base.random import as_generator
from ..base.typing import Seed
from ..stats.inputs import as_array

__all__ = [
    "BootstrapInterval",
    "bootstrap_interval",
]


class BootstrapInterval(NamedTuple):
    """A metric, its percentile-bootstrap interval and the bootstrap values."""

    estimate: float
    low: float
    high: float
    prob: float
    draws: np.ndarray  # (n_boot,)


def bootstrap_interval(
    metric: Callable[..., Any], y_true: ArrayLike, y_prob: ArrayLike, *,
    y_pred: ArrayLike | None = None, sample_weight: ArrayLike | None = None,
    prob: float = 0.9, n_boot: int = 1000, seed: Seed = 0, **metric_kwargs: Any,
) -> BootstrapInterval:
    """Percentile-bootstrap interval of a plug-in metric.

    Parameters
    ----------
    metric : callable
        ``metric(y_true, y_prob, **kw) -> float``, e.g.
        :func:`bece.metrics.smooth_calibration_error`; ``y_pred`` and
        ``sample_weight`` are passed on when given.
    y_true, y_prob, y_pred, sample_weight
        The data; rows are resampled together.
    prob : float, default 0.9
        Probability of the interval.
    n_boot : int, default 1000
    seed : int or numpy Generator, default 0
    **metric_kwargs
        Further options of ``metric`` (``n_bins=``, ``debiased=`` ...).

    Examples
    --------
    >>> import numpy as np
    >>> from bece.metrics import bootstrap_interval, brier_score
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=400)
    >>> y = (rng.uniform(size=400) < p).astype(int)
    >>> iv = bootstrap_interval(brier_score, y, p, n_boot=200)
    >>> bool(iv.low < iv.estimate < iv.high)
    True
    """
    if not callable(metric):
        raise ValueError(f"metric must be a callable metric(y_true, y_prob, ...), got {metric!r}")
    prob = check_prob(prob)
    n_boot = positive_int(n_boot, "n_boot")
    rng = as_generator(seed)
    yt = as_array(y_true, "y_true")
    yp = as_array(y_prob, "y_prob")
    n = yp.shape[0] if yp.ndim else 0
    extra: dict[str, np.ndarray] = {}
    for name, given in (("y_pred", y_pred), ("sample_weight", sample_weight)):
        if given is not None:
            extra[name] = as_array(given, name)
    for name, arr in (("y_true", yt), *extra.items()):
        if arr.ndim != 1 or arr.shape[0] != n:
            raise ValueError(f"{name} must have shape ({n},), one entry per row of y_prob, "
                             f"got shape {arr.shape}")

    def evaluate(idx: np.ndarray | None) -> float:
        if idx is None:
            out = metric(yt, yp, **extra, **metric_kwargs)
        else:
            out = metric(yt[idx], yp[idx], **{k: v[idx] for k, v in extra.items()},
                         **metric_kwargs)
        try:
            return float(out)
        except (TypeError, ValueError):
            raise ValueError(f"metric must return a number, got {type(out).__name__}; wrap it, "
                             "e.g. lambda *a, **k: f(*a, **k).statistic") from None

    estimate = evaluate(None)
    draws = np.array([evaluate(rng.integers(0, n, size=n)) for _ in range(n_boot)])
    lo, hi = np.quantile(draws, [(1 - prob) / 2, (1 + prob) / 2])
    draws.setflags(write=False)
    return BootstrapInterval(estimate, float(lo), float(hi), prob, draws)
