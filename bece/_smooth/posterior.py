"""The smooth model's posterior over the ECE: from arrays (:func:`smooth_ece`)
or from fine-grid statistics (:func:`smooth_posterior_ece`)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._base.checks import positive_int
from .._base.laplace import single_threaded_blas
from .._base.memory import check_allocation
from .._base.random import as_generator
from .._base.typing import BinningSpec, Seed
from .._results.ece import SmoothBayesianECE
from .._stats.binning import Binning, make_binning
from .._stats.calibration_stats import CalibrationStats
from .._stats.inputs import as_outcomes
from .atoms import Atoms, atoms_and_ece_stats, check_grid, make_atoms
from .average import DEFAULT_PRIOR_ODDS, average_with_calibrated
from .basis import DEFAULT_N_KNOTS
from .bootstrap import BinMoments
from .draws import CURVE_POINTS, curve_grid, curve_values, ece_draws, importance_draws_with_sums
from .fit import SmoothPosterior, fit_smooth
from .zero_gaps import DEFAULT_ZERO_GAP_PRIOR, average_bins_with_zero_gap, check_zero_gap_prior

__all__ = [
    "check_smooth_draws",
    "prepare_atoms",
    "smooth_ece",
    "smooth_posterior_ece",
    "smooth_result",
]


# ------------------------------------------------------------------ result

def check_smooth_draws(num_samples: int, n_knots: int, n_bins: int = 15) -> None:
    """Refuse ``num_samples`` draws of the smooth model that would not fit in
    memory: per draw the result keeps the ECE, 3 per-bin values, the curve
    at CURVE_POINTS confidences and the coefficients (about n_knots + n_bins),
    and the importance sampler as many again."""
    per_draw = 1 + 3 * n_bins + CURVE_POINTS + 3 * (n_knots + n_bins)
    check_allocation(
        8.0 * 2 * num_samples * per_draw,
        what=f"the smooth model's posterior draws (num_samples x about {2 * per_draw} float64)",
        argument=f"num_samples={num_samples}",
        advice="pass fewer num_samples",
    )



def smooth_result(
    atoms: Atoms, stats: CalibrationStats, post: SmoothPosterior, beta: np.ndarray, lam: np.ndarray,
    tau: np.ndarray, rng: np.random.Generator, method: str, grid_points: np.ndarray,
    sums: np.ndarray | None = None,
) -> SmoothBayesianECE:
    from .._metrics.binned import plugin_ece

    ece, acc, conf, wt, bound = ece_draws(atoms, post.basis, beta, rng, sums=sums)
    post = replace(post, grid_error=float(bound.max()) if bound.size else 0.0)
    return SmoothBayesianECE(
        draws=ece, accuracy=acc, confidence=conf, weight=wt, plugin=plugin_ece(stats),
        stats=stats, model="smooth", method=method, preset=None, params=post,
        curve_grid=grid_points, curve=curve_values(post.basis, atoms.binning, grid_points, beta),
        coefficients=beta, smoothness=lam, bin_sd=tau, atoms=atoms,
    )


def prepare_atoms(
    y_true: ArrayLike, y_prob: ArrayLike, y_pred: ArrayLike | None, n_bins: int | None,
    binning: BinningSpec | Binning, grid: str | int | None,
) -> tuple[Atoms, CalibrationStats, np.ndarray]:
    z, p = as_outcomes(y_true, y_prob, y_pred)
    bins = make_binning(p, n_bins, binning)
    stats = CalibrationStats.from_outcomes(z, p, bins)
    atoms = make_atoms(z, p, bins, check_grid(grid, p.size))
    # the curve over the atoms' range: the same whether the fine grid came
    # from the predictions or from their statistics
    return atoms, stats, curve_grid(p if atoms.exact else atoms.p)


def check_prior_odds(prior_odds: Any) -> float:
    """``prior_odds`` as a float in [0, inf), or ``ValueError`` naming it."""
    if isinstance(prior_odds, bool) or not isinstance(prior_odds, (int, float, np.integer, np.floating)):
        raise ValueError(f"prior_odds must be a number >= 0, got {prior_odds!r}")
    value = float(prior_odds)
    if not (np.isfinite(value) and value >= 0):
        raise ValueError(f"prior_odds must be a finite number >= 0, got {prior_odds!r}")
    return value


def _laplace(
    atoms: Atoms, stats: CalibrationStats, grid_points: np.ndarray, rng: np.random.Generator,
    num_samples: int, prior_odds: float, zero_gap_prior: float, **model: Any,
) -> SmoothBayesianECE:
    with single_threaded_blas():
        post = fit_smooth(atoms, **model)
        # the pass that weighs the proposals also sums their curves for the
        # crowded bins' bootstrap (bece._smooth.bootstrap)
        beta, lam, tau, post, sums = importance_draws_with_sums(
            atoms, post, num_samples, rng, sums=BinMoments.from_atoms(atoms).any_normal)
        result = smooth_result(atoms, stats, post, beta, lam, tau, rng, "laplace", grid_points, sums)
        result = average_bins_with_zero_gap(result, atoms, zero_gap_prior, rng)
    return average_with_calibrated(result, prior_odds, rng)


def smooth_ece(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    y_pred: ArrayLike | None = None,
    n_bins: int | None = None,
    binning: BinningSpec | Binning = "uniform",
    n_knots: int = DEFAULT_N_KNOTS,
    intercept_scale: float = 1.0,
    slope_scale: float = 0.5,
    smoothness_scale: float = 0.5,
    bin_scale: float | None = 0.25,
    grid: str | int | None = "auto",
    num_samples: int = 10_000,
    seed: Seed = 0,
    prior_odds: float = DEFAULT_PRIOR_ODDS,
    zero_gap_prior: float = DEFAULT_ZERO_GAP_PRIOR,
) -> SmoothBayesianECE:
    """Posterior over the ECE under the smooth calibration-curve model (Laplace).

    ``bece.bayesian_ece(..., model="smooth")`` calls this with the defaults.

    Parameters
    ----------
    y_true, y_prob, y_pred, n_bins, binning
        As :func:`bece.bayesian_ece`: binary ``P(y=1)``, class probabilities
        (top-label) or (y_pred, y_true, confidence) triples; the ECE bins.
    n_knots, intercept_scale, slope_scale, smoothness_scale, bin_scale
        The model and prior; see :func:`fit_smooth`.
    grid : "auto", None or int, default "auto"
        None: one atom per prediction (exact); an int r: r sub-cells per bin
        (module docstring, with the error bound); "auto": exact up to
        2,000 predictions, 128 sub-cells above.
    num_samples : int, default 10_000
    seed : int or numpy.random.Generator, default 0
    prior_odds : float, default :data:`bece._smooth.average.DEFAULT_PRIOR_ODDS`
        Prior odds of exact calibration: the draws average the smooth model
        with the identity curve (ECE exactly 0) by their posterior
        probabilities (:mod:`bece._smooth.average`), so the interval can
        reach 0. 0 leaves exact calibration out.
    zero_gap_prior : float, default :data:`bece._smooth.zero_gaps.DEFAULT_ZERO_GAP_PRIOR`
        Prior probability that each ECE bin's gap is exactly 0, times the
        posterior probability that the curve is rough at the bin scale
        (:mod:`bece._smooth.zero_gaps`): a bin whose gap the data cannot
        tell from 0 then stops adding a positive :math:`|\\text{gap}|` to
        every draw. 0 leaves it out: with ``prior_odds=0`` too, the smooth
        model alone.

    Returns
    -------
    SmoothBayesianECE
        ``model="smooth"``, ``method="laplace"``; ``params`` is the
        :class:`SmoothPosterior`; ``prob_calibrated`` the posterior
        probability of exact calibration.

    Examples
    --------
    >>> import numpy as np
    >>> from bece._smooth.posterior import smooth_ece
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = rng.uniform(size=500) < p ** 2          # over-confident on class 1
    >>> r = smooth_ece(y, p, seed=1)
    >>> r.draws.shape, r.accuracy.shape, r.curve.shape
    ((10000,), (10000, 15), (10000, 101))
    >>> lo, hi = r.interval(0.9)
    >>> bool(lo < 1 / 6 < hi)                       # the population ECE is about 1/6
    True
    """
    num_samples = positive_int(num_samples, "num_samples")
    rng = as_generator(seed)
    atoms, stats, grid_points = prepare_atoms(y_true, y_prob, y_pred, n_bins, binning, grid)
    check_smooth_draws(num_samples, n_knots, atoms.binning.n_bins)
    prior_odds = check_prior_odds(prior_odds)
    zero_gap_prior = check_zero_gap_prior(zero_gap_prior)
    return _laplace(atoms, stats, grid_points, rng, num_samples, prior_odds, zero_gap_prior,
                    n_knots=n_knots,
                    intercept_scale=intercept_scale, slope_scale=slope_scale,
                    smoothness_scale=smoothness_scale, bin_scale=bin_scale)


def smooth_posterior_ece(
    stats: CalibrationStats,
    *,
    n_bins: int | None = None,
    binning: BinningSpec | Binning = "uniform",
    n_knots: int = DEFAULT_N_KNOTS,
    intercept_scale: float = 1.0,
    slope_scale: float = 0.5,
    smoothness_scale: float = 0.5,
    bin_scale: float | None = 0.25,
    num_samples: int = 10_000,
    seed: Seed = 0,
    prior_odds: float = DEFAULT_PRIOR_ODDS,
    zero_gap_prior: float = DEFAULT_ZERO_GAP_PRIOR,
) -> SmoothBayesianECE:
    """Posterior over the ECE under the smooth model, from fine statistics.

    The smooth model's counterpart of :func:`bece.posterior_ece`
    (``bece.posterior_ece(stats, model="smooth")`` calls this). ``stats``
    holds the predictions' counts and confidence sums in bins that refine
    the ECE bins -- collect them with ``binning=fine_binning(n_bins)`` from
    arrays, files read in chunks, Dask or JAX arrays, and add chunks with
    ``+``. Each non-empty fine bin is one atom of the fine grid
    (:func:`atoms_from_stats`; module docstring, "Large n", for the error
    bound, reported as ``params.grid_error``). With the same seed the draws
    are those of :func:`smooth_ece` with ``grid=grid`` on the predictions
    themselves, however the statistics were split into chunks and added
    (their sums are exact, :mod:`bece._stats.exact`).

    Parameters
    ----------
    stats : CalibrationStats
        Statistics in fine bins (:func:`fine_binning`).
    n_bins, binning
        The ECE bins (default 15 uniform), which the bins of ``stats`` must
        refine. ``"quantile"`` raises ``ValueError``: pass the edges (from a
        first pass) here and to :func:`fine_binning`.
    n_knots, intercept_scale, slope_scale, smoothness_scale, bin_scale
        The model and prior; see :func:`fit_smooth`.
    num_samples : int, default 10_000
    seed : int or numpy.random.Generator, default 0
    prior_odds : float, default :data:`bece._smooth.average.DEFAULT_PRIOR_ODDS`
        As :func:`smooth_ece`.
    zero_gap_prior : float, default :data:`bece._smooth.zero_gaps.DEFAULT_ZERO_GAP_PRIOR`
        As :func:`smooth_ece`.

    Returns
    -------
    SmoothBayesianECE
        As :func:`smooth_ece`; ``.stats`` holds the statistics added up to
        the ECE bins (for the plug-in ECE and per-bin tables), the curve is
        drawn over the range of the fine bins' mean confidences.

    Raises
    ------
    ValueError
        ``stats`` not a CalibrationStats or empty; its bins do not refine the
        ECE bins (e.g. 100 uniform bins for 15 ECE bins); a bad option.

    Examples
    --------
    >>> import numpy as np
    >>> from bece import CalibrationStats
    >>> from bece.smooth import fine_binning, smooth_posterior_ece
    >>> from bece._smooth.posterior import smooth_ece
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=20_000)
    >>> y = rng.uniform(size=20_000) < p ** 2
    >>> fine = fine_binning(15)                      # 15 ECE bins x 128 sub-cells
    >>> parts = [CalibrationStats.from_arrays(y[i:i + 5000], p[i:i + 5000], binning=fine)
    ...          for i in range(0, 20_000, 5000)]
    >>> r = smooth_posterior_ece(sum(parts), n_bins=15, num_samples=2000, seed=1)
    >>> s = smooth_ece(y, p, n_bins=15, grid=128, num_samples=2000, seed=1)
    >>> bool(np.allclose(r.draws, s.draws, rtol=1e-9, atol=0))
    True
    """
    num_samples = positive_int(num_samples, "num_samples")
    rng = as_generator(seed)
    atoms, coarse = atoms_and_ece_stats(stats, n_bins, binning)
    check_smooth_draws(num_samples, n_knots, atoms.binning.n_bins)
    prior_odds = check_prior_odds(prior_odds)
    zero_gap_prior = check_zero_gap_prior(zero_gap_prior)
    return _laplace(atoms, coarse, curve_grid(atoms.p), rng, num_samples, prior_odds,
                    zero_gap_prior, n_knots=n_knots,
                    intercept_scale=intercept_scale, slope_scale=slope_scale,
                    smoothness_scale=smoothness_scale, bin_scale=bin_scale)


