"""Percentile-bootstrap intervals for any plug-in metric.

Where bece's models give no posterior for a metric (smooth ECE, ECE_sweep,
log loss, the calibration slope, ...), the documented frequentist interval
is the percentile bootstrap over prediction rows (Efron & Tibshirani 1993):
``n_boot`` resamples of the rows (sample weights travel with their rows), the
metric on each, and the ``(1 - prob)/2`` and ``(1 + prob)/2`` quantiles of
those values.

bece draws its resamples one way everywhere, the Poisson bootstrap (Hanley &
MacGibbon 2006; Chamandy et al. 2012; ``method="poisson"``, the default):
replicate r holds row i ``w[i, r]`` times, the ``w[i, r]`` independent
Poisson(1) counts that depend only on ``seed`` and the row number i
(:func:`poisson_weights`, drawn per block of :data:`BLOCK` rows). It is the
multinomial bootstrap with a random number of rows (mean n), the same to
first order, and it is the one bootstrap that one pass over chunks of a
file can draw (:mod:`bece._metrics.streaming`): so the same data and seed
give the same interval from arrays (:func:`bootstrap_interval`,
:func:`bece.metrics.metric_report`), from chunks and from
``bece report --metrics``. ``method="multinomial"`` gives the classic n rows
drawn with replacement. The coverage is not guaranteed:
for a biased estimator (the plug-in l2 ECE at small n) it inherits the bias;
``benchmarks/l2_coverage.py`` measures it for the l2 ECE (table in the
documentation's validation page).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from .._base.checks import check_prob, positive_int
from .._base.random import as_generator
from .._base.typing import Seed
from .._stats.inputs import as_array

__all__ = [
    "BLOCK",
    "BootstrapInterval",
    "bootstrap_interval",
    "poisson_weights",
]

#: Rows per block of Poisson-bootstrap counts (they depend on the row number only).
BLOCK = 4096

# CDF of Poisson(1) at 0 .. 19 (the mass above 19 is 2e-19): the counts by
# inverse CDF of uniforms, 1.6x faster than Generator.poisson
_POISSON_CDF = np.cumsum(np.exp(-1.0) / np.cumprod(np.concatenate([[1.0], np.arange(1.0, 20.0)])))

# the same counts by table look-up: u's cell of a 2^16 grid gives its count,
# except in the few cells that hold a CDF value, where searchsorted decides
_GRID = 1 << 16
_CELL_LOW = np.searchsorted(_POISSON_CDF, np.arange(_GRID) / _GRID, side="right")
_CELL_HIGH = np.searchsorted(_POISSON_CDF, np.nextafter(np.arange(1, _GRID + 1) / _GRID, 0.0),
                             side="right")
_TABLE = _CELL_LOW.astype(np.uint8)
_SPLIT = _CELL_LOW != _CELL_HIGH


def _counts(u: np.ndarray) -> np.ndarray:
    """Poisson(1) inverse CDF of uniforms in [0, 1):
    ``searchsorted(_POISSON_CDF, u, side="right")``, twice as fast."""
    cell = (u * _GRID).astype(np.intp)
    w = _TABLE[cell]
    split = _SPLIT[cell]
    if split.any():
        w[split] = np.searchsorted(_POISSON_CDF, u[split], side="right")
    return w


# memory of one group of replicates' counts in bootstrap_interval (bytes)
_GROUP_BYTES = 1 << 25


def poisson_weights(start: int, size: int, n_boot: int, seed: int,
                    replicates: slice = slice(None)) -> np.ndarray:
    """Poisson(1) bootstrap counts of rows ``start .. start + size - 1``.

    Row i's ``n_boot`` counts are a function of ``(seed, i)`` only: the
    uniforms of block ``i // BLOCK`` come from ``numpy.random.default_rng([seed,
    block])``, so any cut of the rows into chunks gives every row the same
    counts.

    Parameters
    ----------
    start, size : int
        First row number and number of rows.
    n_boot : int
        Replicates (columns).
    seed : int
    replicates : slice, optional
        Only these replicates' columns (the same values as the full array's).

    Returns
    -------
    ndarray of shape (size, number of replicates), float64
        Whole numbers 0, 1, 2, ...

    Examples
    --------
    >>> from bece._metrics.bootstrap import poisson_weights
    >>> w = poisson_weights(0, 10_000, 3, seed=0)
    >>> w.shape
    (10000, 3)
    >>> bool((poisson_weights(5_000, 5_000, 3, seed=0) == w[5_000:]).all())
    True
    >>> bool(abs(w.mean() - 1) < 0.05)
    True
    """
    cols = range(n_boot)[replicates]
    out = np.empty((size, len(cols)))
    if size <= 0:
        return out
    first, last = start // BLOCK, (start + size - 1) // BLOCK
    for block in range(first, last + 1):
        u = np.random.default_rng([seed, block]).random((BLOCK, n_boot))[:, replicates]
        lo = max(start, block * BLOCK)
        hi = min(start + size, (block + 1) * BLOCK)
        out[lo - start:hi - start] = _counts(u[lo - block * BLOCK:hi - block * BLOCK])
    return out


class BootstrapInterval(NamedTuple):
    """A metric, its percentile-bootstrap interval and the bootstrap values.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # over-confident
    >>> from bece.metrics import bootstrap_interval, brier_score
    >>> b = bootstrap_interval(brier_score, y, p, n_boot=200, seed=1)
    >>> type(b).__name__, b.draws.shape, bool(b.low <= b.estimate <= b.high)
    ('BootstrapInterval', (200,), True)
    """

    estimate: float
    low: float
    high: float
    prob: float
    draws: np.ndarray  # (n_boot,)


def bootstrap_interval(
    metric: Callable[..., Any], y_true: ArrayLike, y_prob: ArrayLike, *,
    y_pred: ArrayLike | None = None, sample_weight: ArrayLike | None = None,
    prob: float = 0.9, n_boot: int = 1000, seed: Seed = 0, method: str = "poisson",
    **metric_kwargs: Any,
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
        With ``method="poisson"`` an int (the counts of row i depend on
        ``(seed, i)`` only; see :func:`poisson_weights`).
    method : {"poisson", "multinomial"}, default "poisson"
        ``"poisson"``: replicate r holds row i ``w[i, r]`` times, Poisson(1)
        counts (a replicate with no row is left out), the bootstrap of
        :func:`bece.metrics.metric_report`, :mod:`bece._metrics.streaming`
        and ``bece report --metrics``; ``"multinomial"``: n rows drawn with
        replacement by ``numpy.random.default_rng(seed).integers``.
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
    if method not in ("poisson", "multinomial"):
        raise ValueError(f"method must be 'poisson' or 'multinomial', got {method!r}")
    poisson_seed = -1
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        poisson_seed = int(seed)
    if method == "poisson" and poisson_seed < 0:
        raise ValueError("seed must be a non-negative int with method='poisson' (each row's "
                         f"counts depend on (seed, row number)), got {seed!r}")
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
    if method == "multinomial":
        rng = as_generator(seed)
        draws = np.array([evaluate(rng.integers(0, n, size=n)) for _ in range(n_boot)])
    else:
        rows = np.arange(n)
        group = max(1, min(n_boot, _GROUP_BYTES // max(1, 8 * n)))
        values: list[float] = []
        for r0 in range(0, n_boot, group):
            w = poisson_weights(0, n, n_boot, poisson_seed, slice(r0, min(r0 + group, n_boot)))
            counts = w.astype(np.int64)
            for r in range(counts.shape[1]):
                if counts[:, r].any():  # a replicate with no row has no value
                    values.append(evaluate(np.repeat(rows, counts[:, r])))
        if not values:
            raise ValueError(f"no bootstrap replicate holds a row (n = {n}); "
                             "increase n_boot or use method='multinomial'")
        draws = np.array(values)
    lo, hi = np.quantile(draws, [(1 - prob) / 2, (1 + prob) / 2])
    draws.setflags(write=False)
    return BootstrapInterval(estimate, float(lo), float(hi), prob, draws)
