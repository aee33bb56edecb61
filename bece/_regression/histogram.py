r"""The PIT histogram on a fine grid: mergeable statistics of regression calibration.

The grid cuts [0, 1] into G equal cells :math:`[0, 1/G], (1/G, 2/G], \dots,
((G-1)/G, 1]` (default G = 1000); a :class:`PITHistogram` holds the int64
count of PIT values in each. Counts add, so the histogram of a test set
split into chunks (files read in batches, Dask partitions, a stream of
forecasts) is the sum of the chunks' histograms, exactly.

What the grid keeps and loses. At a level p on the grid (a multiple of
1/G: with G = 1000 every level with three decimals, so the default levels
0.01, ..., 0.99) the number of PIT values :math:`\le p` is a sum of cells,
so the calibration curve, the cal score and the Anderson--Darling statistic
of :func:`~bece.regression.pit_calibration_test` at those levels are exact. The
smooth model of :func:`~bece.regression.bayesian_calibration_error` is
fitted to the cell counts (a multinomial likelihood: its posterior is exact
given the histogram); what the histogram loses is where each value lies
inside its cell of width 1/G. That matters where many values share a cell,
i.e. for forecasts that put much PIT mass within 1/G of 0 or 1: for a
Gaussian forecast with sd x 0.5 (12% of the PIT values in the two end
cells) the posterior mean and interval ends of the cal score moved by up
to 0.3 posterior sd, in either direction, against a grid 100 times finer
(n = 10^3, 10^4 and 10^5, two data sets each; the posterior sd changed by
under 2%). The coverage of intervals from the 1000-cell histogram is what
``benchmarks/regression_study.py`` measures.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._base.random import as_generator
from .._base.typing import Seed
from .._stats.inputs import describe_bad
from .forecast import check_levels, check_pit, pit

__all__ = [
    "as_histogram",
    "cell_index",
    "check_continuous",
    "DEFAULT_CELLS",
    "DiscretePITWarning",
    "grid_edges",
    "on_grid",
    "PITHistogram",
]

#: Default number of cells G of the PIT grid: 1000 (every level with three
#: decimals is on the grid).
DEFAULT_CELLS = 1000

#: Largest number of PIT values :func:`check_continuous` looks at per call
TIE_CHECK_MAX = 1 << 20


class DiscretePITWarning(UserWarning):
    """The PIT values look discrete (many ties); the message says what to do.

    Examples
    --------
    The PIT of a forecast given by 20 draws takes the values k/20 only:

    >>> import warnings
    >>> import numpy as np
    >>> from bece.regression import DiscretePITWarning, pit_calibration_test, pit
    >>> rng = np.random.default_rng(0)
    >>> y, draws = rng.normal(size=2000), rng.normal(size=(2000, 20))
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     t = pit_calibration_test(pit(y, samples=draws))
    >>> [w.category.__name__ for w in caught]
    ['DiscretePITWarning']
    >>> u = pit(y, samples=draws, randomize=True, seed=0)       # what the message advises
    >>> np.unique(u).size
    2000
    """


def check_cells(n_cells: Any) -> int:
    if isinstance(n_cells, (bool, np.bool_)) or not isinstance(n_cells, (int, np.integer)) or n_cells < 10:
        raise ValueError(f"n_cells must be an integer >= 10, got {n_cells!r}")
    if n_cells > 10**6:
        raise ValueError(
            f"n_cells must be at most 1,000,000, got {n_cells}: the smooth model evaluates every cell "
            "for every posterior draw, and cells finer than 1e-6 hold no more information"
        )
    return int(n_cells)


def grid_edges(n_cells: int) -> np.ndarray:
    """The G + 1 cell edges ``k / G``, k = 0..G, float64."""
    return np.arange(n_cells + 1, dtype=np.float64) / n_cells


def cell_index(u: np.ndarray, n_cells: int) -> np.ndarray:
    """Cell of each PIT value: k with :math:`k/G < u \\le (k+1)/G` (0 for u = 0), int64."""
    idx = np.searchsorted(grid_edges(n_cells), u, side="left") - 1
    return np.maximum(idx, 0).astype(np.int64)


def on_grid(levels: np.ndarray, n_cells: int) -> np.ndarray:
    """Index k of each level on the grid (``levels == k / G`` exactly), or -1 when off it."""
    k = np.rint(levels * n_cells).astype(np.int64)
    return np.where(k / n_cells == levels, k, -1)


def check_continuous(u: np.ndarray, name: str = "pit", *, stacklevel: int = 3) -> None:
    """Warn (:class:`DiscretePITWarning`) when PIT values look discrete.

    A continuous PIT has no ties. The PIT of a sample forecast (the
    empirical CDF of S draws takes the values k/S) or the tails of a quantile
    forecast (0 below the lowest forecast quantile, 1 above the highest) are
    discrete, and then neither the calibration test nor the smooth model
    (both assume a continuous uniform PIT under calibration) apply: a
    calibrated forecaster is reported miscalibrated once n is large. Warns
    when at least half of the values repeat another one, or one value holds
    at least 1% of them (and 5 or more); looks at the first
    :data:`TIE_CHECK_MAX` values.
    """
    v = np.sort(u[:TIE_CHECK_MAX])
    n = v.size
    if n < 5:
        return
    new = np.concatenate([[True], v[1:] != v[:-1]])
    starts = np.flatnonzero(new)
    runs = np.diff(np.append(starts, n))
    ties = n - starts.size
    top = int(runs.max())
    if ties * 2 < n and (top < 5 or top < 0.01 * n):
        return
    value = float(v[starts[int(np.argmax(runs))]])
    at_ends = int(np.count_nonzero((v == 0.0) | (v == 1.0)))
    ends = f"; {at_ends} are exactly 0 or 1" if at_ends else ""
    warnings.warn(
        f"{name} looks discrete: {ties} of {n} values repeat another one ({starts.size} distinct; "
        f"{value!r} occurs {top} times{ends}). The PIT of a sample forecast (k/S) or of a quantile "
        "forecast's tails (0 or 1) is discrete, and calibration methods that assume a continuous "
        "uniform PIT then report a calibrated forecaster as miscalibrated once n is large. Compute "
        "the randomised PIT instead: bece.regression.pit(y, ..., randomize=True, seed=0)",
        DiscretePITWarning,
        stacklevel=stacklevel,
    )


def _check_counts(counts: Any) -> np.ndarray:
    arr = np.asarray(counts)
    if arr.dtype.kind not in "iu":
        raise ValueError(f"counts must be integers (int64 cell counts), got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"counts must have shape (n_cells,), got shape {arr.shape}")
    check_cells(arr.size)
    if arr.dtype.kind == "u" and arr.size and arr.max() > np.iinfo(np.int64).max:
        raise ValueError("counts exceed the int64 range")
    out = arr.astype(np.int64)
    neg = out < 0
    if neg.any():
        raise ValueError(f"counts must be >= 0; {describe_bad(out, neg)} are negative")
    if float(out.sum(dtype=np.float64)) >= 2.0**63:
        raise ValueError("the total of counts exceeds the int64 range")
    out.setflags(write=False)
    return out


@dataclass(frozen=True, eq=False, repr=False)
class PITHistogram:
    """Counts of PIT values in the G cells of a uniform grid on [0, 1].

    Cell k is :math:`(k/G, (k+1)/G]` (cell 0 also holds u = 0), so the number
    of values :math:`\\le k/G` is ``counts[:k].sum()``. Build one with
    :meth:`from_pit` or :meth:`from_forecast`; add histograms of chunks with
    ``+`` (or ``sum``); pass one wherever PIT values are accepted
    (:func:`~bece.regression.bayesian_calibration_error`,
    :func:`~bece.regression.pit_calibration_test`). See the module docstring for
    what the grid keeps.

    Parameters
    ----------
    counts : array_like of int, shape (G,)
        Non-negative counts, G >= 10.

    Examples
    --------
    >>> import numpy as np
    >>> from bece.regression import PITHistogram
    >>> u = np.random.default_rng(0).uniform(size=10_000)
    >>> whole = PITHistogram.from_pit(u)
    >>> parts = sum(PITHistogram.from_pit(u[i:i + 2500]) for i in range(0, 10_000, 2500))
    >>> bool(np.array_equal(parts.counts, whole.counts)), parts
    (True, PITHistogram(n=10000, n_cells=1000))
    >>> whole.observed([0.25, 0.5])            # fraction of PIT values <= each level
    array([0.2524, 0.499 ])
    """

    counts: np.ndarray

    def __post_init__(self) -> None:
        object.__setattr__(self, "counts", _check_counts(self.counts))

    @property
    def n_cells(self) -> int:
        """Number of cells G."""
        return int(self.counts.size)

    @property
    def n(self) -> int:
        """Number of PIT values."""
        return int(self.counts.sum())

    @property
    def edges(self) -> np.ndarray:
        """The G + 1 cell edges ``k / G``."""
        return grid_edges(self.n_cells)

    @classmethod
    def from_pit(cls, pit: ArrayLike, *, n_cells: int = DEFAULT_CELLS) -> PITHistogram:
        """Histogram of PIT values.

        Parameters
        ----------
        pit : array_like of shape (n,)
            PIT values in [0, 1] (:func:`~bece.regression.pit`); an empty
            array gives an empty histogram (a chunk with no rows).
        n_cells : int, default 1000
            G, between 10 and 10^6.

        Warns
        -----
        DiscretePITWarning
            When the values look discrete (:func:`check_continuous`).
        """
        n_cells = check_cells(n_cells)
        arr = np.asarray(pit) if not isinstance(pit, PITHistogram) else None
        if arr is not None and arr.ndim == 1 and arr.size == 0:
            return cls(np.zeros(n_cells, dtype=np.int64))
        u = check_pit(pit)
        check_continuous(u)
        return cls(np.bincount(cell_index(u, n_cells), minlength=n_cells).astype(np.int64))

    @classmethod
    def from_forecast(
        cls,
        y: ArrayLike,
        *,
        mean: ArrayLike | None = None,
        std: ArrayLike | None = None,
        dist: Any = None,  # a frozen scipy.stats distribution
        samples: ArrayLike | None = None,
        quantiles: ArrayLike | None = None,
        levels: ArrayLike | None = None,
        randomize: bool = False,
        seed: Seed | None = None,
        n_cells: int = DEFAULT_CELLS,
    ) -> PITHistogram:
        """Histogram of the PIT of forecasts: ``from_pit(pit(y, ...))``.

        The forecast arguments are those of :func:`~bece.regression.pit`
        (give ``randomize=True`` and a ``seed`` for sample and quantile
        forecasts). For chunks of one test set, pass one
        ``numpy.random.Generator`` to every chunk (or a different int seed
        to each): the same int seed for every chunk would reuse the same
        uniform variates.
        """
        rng = None if seed is None else as_generator(seed)
        u = pit(y, mean=mean, std=std, dist=dist, samples=samples, quantiles=quantiles,
                levels=levels, randomize=randomize, seed=rng)
        return cls.from_pit(u, n_cells=n_cells)

    def cumulative(self, levels: ArrayLike) -> np.ndarray:
        """Number of PIT values :math:`\\le p_j` at levels on the grid, int64 (J,).

        Raises
        ------
        ValueError
            If a level is not a multiple of 1/G (the histogram does not say
            how many values lie below it).
        """
        p = check_levels(levels)
        k = on_grid(p, self.n_cells)
        off = k < 0
        if off.any():
            raise ValueError(
                f"levels must lie on the histogram's grid (multiples of 1/{self.n_cells}) to count the "
                f"PIT values below them; {describe_bad(p, off)} do not. Use levels on the grid, or a "
                "histogram with n_cells that is a multiple of their denominators"
            )
        cum = np.concatenate([[0], np.cumsum(self.counts)])
        return cum[k].astype(np.int64)

    def observed(self, levels: ArrayLike) -> np.ndarray:
        """Observed calibration curve :math:`\\hat p_j = |\\{t: u_t \\le p_j\\}| / T` (levels on the grid)."""
        if self.n == 0:
            raise ValueError("the histogram is empty (n = 0): there is no observed frequency")
        return self.cumulative(levels) / self.n

    def __add__(self, other: Any) -> PITHistogram:
        if not isinstance(other, PITHistogram):
            return NotImplemented
        if other.n_cells != self.n_cells:
            raise ValueError(
                f"cannot add PIT histograms on different grids ({self.n_cells} and {other.n_cells} "
                "cells); build both with the same n_cells"
            )
        if float(self.n) + float(other.n) >= 2.0**63:
            raise ValueError("the total of the two histograms exceeds the int64 range")
        return PITHistogram(self.counts + other.counts)

    def __radd__(self, other: Any) -> PITHistogram:
        if isinstance(other, (int, np.integer)) and not isinstance(other, bool) and other == 0:
            return self  # sum() starts from 0
        return NotImplemented

    def __repr__(self) -> str:
        return f"PITHistogram(n={self.n}, n_cells={self.n_cells})"


def as_histogram(
    pit: Any, n_cells: int | None, *, stacklevel: int = 4
) -> tuple[PITHistogram, np.ndarray | None]:
    """``pit`` (PIT values or a :class:`PITHistogram`) as a histogram, and the
    checked values (None for a histogram). PIT values are checked for ties
    (:func:`check_continuous`); ``n_cells`` (default 1000) must match a
    histogram's own when given."""
    if isinstance(pit, PITHistogram):
        if n_cells is not None and check_cells(n_cells) != pit.n_cells:
            raise ValueError(
                f"n_cells={n_cells} but the PIT histogram has {pit.n_cells} cells; leave n_cells out "
                "for a histogram (its own grid is used)"
            )
        if pit.n == 0:
            raise ValueError("pit is an empty PIT histogram (n = 0)")
        return pit, None
    cells = DEFAULT_CELLS if n_cells is None else check_cells(n_cells)
    u = check_pit(pit)
    check_continuous(u, stacklevel=stacklevel)
    return PITHistogram(np.bincount(cell_index(u, cells), minlength=cells).astype(np.int64)), u
