"""The calibration test from fine-grid statistics (files read in chunks, Dask, sums of chunks).

:func:`calibration_test_from_stats` is :func:`bece.calibration_test` on
statistics collected in the bins of :func:`bece.smooth.fine_binning`
instead of arrays: the atoms are those that :func:`bece.calibration_test`
builds on the same predictions with ``grid=128`` (identical from one pass,
equal to float64 rounding when chunks are added), so with the same seed the
p-value and the Bayes factor are the same. ``bece report`` and ``bece test``
use it for files of more than 2,000 predictions.
"""

from __future__ import annotations

import numpy as np

from ..base.checks import positive_int
from ..base.random import as_generator
from ..base.typing import BinningSpec, Seed
from ..stats.binning import Binning
from ..stats.calibration_stats import CalibrationStats
from .atoms import atoms_and_ece_stats
from .basis import DEFAULT_N_KNOTS
from .calibration_test import CalibrationTest, resampled_ece
from .draws import importance_draws
from .fit import check_scale, fit_smooth, single_threaded_blas
from .posterior import check_smooth_draws

__all__ = [
    "calibration_test_from_stats",
]


def calibration_test_from_stats(
    stats: CalibrationStats,
    *,
    n_bins: int | None = None,
    binning: BinningSpec | Binning = "uniform",
    num_resamples: int = 1000,
    prior_odds: float = 1.0,
    num_samples: int = 2000,
    n_knots: int = DEFAULT_N_KNOTS,
    intercept_scale: float = 1.0,
    slope_scale: float = 0.5,
    smoothness_scale: float = 0.5,
    bin_scale: float | None = 0.25,
    seed: Seed = 0,
) -> CalibrationTest:
    """Test whether a classifier is perfectly calibrated, from fine statistics.

    Parameters
    ----------
    stats : CalibrationStats
        Statistics in bins that refine the ECE bins, e.g.
        ``binning=fine_binning(n_bins)``; possibly summed over chunks.
    n_bins, binning
        The ECE bins of the test statistic (default 15 uniform), which the
        bins of ``stats`` must refine; ``"quantile"`` raises (pass its edges).
    num_resamples, prior_odds, num_samples, seed
        As :func:`bece.calibration_test`.
    n_knots, intercept_scale, slope_scale, smoothness_scale, bin_scale
        As :func:`bece.calibration_test`.

    Returns
    -------
    CalibrationTest
        As :func:`bece.calibration_test` with ``grid=128`` on the same
        predictions; ``kind`` is ``stats.kind``.

    Examples
    --------
    >>> import numpy as np
    >>> from bece import CalibrationStats, calibration_test
    >>> from bece.smooth import fine_binning
    >>> from bece.smooth.calibration_test_stats import calibration_test_from_stats
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=6000); y = rng.uniform(size=6000) < p
    >>> parts = [CalibrationStats.from_arrays(y[i:i + 2000], p[i:i + 2000], binning=fine_binning(15))
    ...          for i in range(0, 6000, 2000)]
    >>> t = calibration_test_from_stats(sum(parts), n_bins=15, seed=1)
    >>> u = calibration_test(y, p, n_bins=15, grid=128, seed=1)
    >>> float(t.p_value) == u.p_value, bool(abs(t.log_bayes_factor - u.log_bayes_factor) < 1e-9)
    (True, True)
    """
    num_resamples = positive_int(num_resamples, "num_resamples")
    num_samples = positive_int(num_samples, "num_samples")
    prior_odds = check_scale(prior_odds, "prior_odds")
    rng = as_generator(seed)
    atoms, coarse = atoms_and_ece_stats(stats, n_bins, binning)
    check_smooth_draws(num_samples, n_knots, atoms.binning.n_bins)
    with single_threaded_blas():
        post = fit_smooth(atoms, n_knots=n_knots, intercept_scale=intercept_scale,
                          slope_scale=slope_scale, smoothness_scale=smoothness_scale,
                          bin_scale=bin_scale)
        *_, post = importance_draws(atoms, post, num_samples, rng)
    statistic, resampled = resampled_ece(atoms, num_resamples, rng)
    p_value = (1.0 + np.count_nonzero(resampled >= statistic)) / (num_resamples + 1.0)
    return CalibrationTest(
        statistic=statistic, p_value=float(p_value), resampled=resampled,
        log_bayes_factor=post.log_bayes_factor, prior_odds=prior_odds, n=atoms.n,
        n_bins=coarse.n_bins, posterior=post, kind=stats.kind,
    )
