"""Paired comparison of two models' ECEs on the same test set: the smooth
model by default, the binned one a keyword away."""

from __future__ import annotations

from typing import Any

from numpy.typing import ArrayLike

from .._base.typing import BinningSpec, Seed
from .._posteriors import Model, resolve_model
from .._results.comparison import Comparison
from .._stats.binning import Binning
from .._stats.inputs import Inputs
from .._stats.paired_stats import PairedStats
from .options import refuse_sample_weight

__all__ = ["compare", "posterior_compare"]


def compare(
    y_true: ArrayLike,
    y_prob_a: ArrayLike,
    y_prob_b: ArrayLike,
    *,
    y_pred_a: ArrayLike | None = None,
    y_pred_b: ArrayLike | None = None,
    n_bins: int | None = None,
    binning: BinningSpec | Binning | None = None,
    num_samples: int = 10_000,
    seed: Seed = 0,
    progress: bool = False,
    model: str | Model = "smooth",
    labels: ArrayLike | None = None,
    pos_label: Any = None,
    from_logits: bool = False,
    row_sum_tol: float | None = None,
    **options: Any,
) -> Comparison:
    """Paired posterior of two models' ECEs on the same test set.

    Parameters
    ----------
    y_true, y_prob_a, y_prob_b, y_pred_a, y_pred_b, n_bins, binning, num_samples, seed,
    labels, pos_label, from_logits, row_sum_tol
        As :func:`bece._binned.compare.binned_compare`.
    progress : bool, default False
        The binned model's progress bar (the smooth one draws without).
    model : {"smooth", "binned"} or model object, default "smooth"
        :class:`bece.SmoothModel` or :class:`bece.BinnedModel` (conjugate
        form), or their shorthand. ``"smooth"`` (the default, as
        :func:`bayesian_ece`'s): both models' smooth calibration curves,
        drawn with shared outcome perturbations and one Bayesian bootstrap over the examples
        (:mod:`bece._smooth.paired`; the documentation's validation page, "Paired comparisons", has its
        coverage). ``"binned"``: one Dirichlet over the joint (correct,
        bin) cells of both models (:mod:`bece._binned.compare`). Neither has
        a joint NumPyro model: their intervals are validated by simulated
        coverage (documentation: validation, "Paired comparisons"), not by a
        NUTS cross-check.
    **options
        Options of the model, set on its object: ``alpha``, ``sigma``,
        ``tau`` (the binned prior); ``prior_odds`` (prior odds of each
        model's exact calibration, default
        :data:`bece._smooth.average.DEFAULT_PRIOR_ODDS`, as
        :func:`bayesian_ece`; each model's draws are averaged with the
        identity curve, so an interval can reach 0,
        :mod:`bece._smooth.paired_average`; 0: the smooth models alone) and
        ``grid``. The paired smooth comparison uses the smooth model's
        default spline and prior: other options of :class:`bece.SmoothModel`
        raise ``ValueError``.

    Returns
    -------
    Comparison
        ``.a.model`` is ``"binned"`` or ``"smooth"``. With exact calibration
        in the smooth model (``prior_odds`` > 0, the default),
        ``.interval(prob)`` holds for each model's prior odds from 0 to
        ``prior_odds``: it runs over the intervals of the four priors that
        give each model odds 0 or ``prior_odds``
        (:class:`~bece.Comparison`'s ``diff_under_priors``), because
        one prior's interval alone under-covers a difference where a model's
        ECE is small but not 0.

    Examples
    --------
    >>> import numpy as np
    >>> from bece import compare
    >>> rng = np.random.default_rng(0)
    >>> t = rng.uniform(size=1000)
    >>> y = (rng.uniform(size=1000) < t).astype(int)
    >>> c = compare(y, t, t**0.7, n_bins=10, num_samples=1000, seed=1,
    ...             model="smooth").named("calibrated", "sharpened")
    >>> c.a.model, bool(c.prob_a_better > 0.99)
    ('smooth', True)
    >>> print(c.text().splitlines()[0])  # doctest: +ELLIPSIS
      verdict       calibrated is better calibrated: P(ECE_calibrated < ECE_sharpened) ...
    """
    refuse_sample_weight(options.pop("sample_weight", None))
    obj = resolve_model(model, "paired", n_bins=n_bins, binning=binning, **options)
    inputs = Inputs(labels, pos_label, from_logits, row_sum_tol)
    return obj._compare_predictions(  # type: ignore[attr-defined]
        y_true, y_prob_a, y_prob_b, (y_pred_a, y_pred_b), inputs, num_samples=num_samples,
        seed=seed, progress=progress)


def posterior_compare(
    stats: PairedStats,
    *,
    model: str | Model = "binned",
    n_bins: int | None = None,
    binning: BinningSpec | Binning | None = None,
    binning_b: BinningSpec | Binning | None = None,
    num_samples: int = 10_000,
    seed: Seed = 0,
    progress: bool = False,
    **options: Any,
) -> Comparison:
    """Paired posterior of two models' ECEs from joint statistics.

    The statistics counterpart of :func:`compare`, as :func:`posterior_ece`
    is of :func:`bayesian_ece`: :class:`~bece.PairedStats` built chunk by
    chunk (files read in batches, data too large for memory) and added with
    ``+`` give the posterior that :func:`compare` gives on the whole arrays.

    Parameters
    ----------
    stats : PairedStats
        Joint statistics of both models (possibly summed over chunks).
    model : {"binned", "smooth"} or model object, default "binned"
        ``"binned"``: the joint Dirichlet in the bins of ``stats``
        (:func:`bece._binned.compare.compare_from_stats`; equal to
        ``compare(..., model="binned")`` on the same predictions to the last
        bit: joint counts and sums are exact).
        ``"smooth"``: the paired smooth curves
        (:func:`bece._smooth.paired.smooth_compare_from_stats`) from
        statistics in fine bins that refine the ECE bins
        (``binning=bece.smooth.fine_binning(n_bins)``); equal to
        ``compare(..., model="smooth")`` above 2,000 predictions (its fine
        grid) to the last bit. The default stays ``"binned"`` here, as in
        :func:`posterior_ece`: statistics come in the bins they were collected
        in, and only fine ones suit the smooth model.
    n_bins, binning, binning_b : optional
        ``model="smooth"`` only: the ECE bins (default 15 uniform) of A, and
        of B unless ``binning_b``, which the bins of ``stats`` refine.
    num_samples : int, default 10_000
    seed : int or numpy.random.Generator, default 0
    progress : bool, default False
        The binned model's progress bar.
    **options
        Options of the model, as in :func:`compare`.

    Returns
    -------
    Comparison

    Examples
    --------
    >>> import numpy as np
    >>> from bece import PairedStats, posterior_compare
    >>> from bece.smooth import fine_binning
    >>> rng = np.random.default_rng(0)
    >>> t = rng.uniform(size=4000)
    >>> y = (rng.uniform(size=4000) < t).astype(int)
    >>> chunks = np.array_split(np.arange(4000), 4)
    >>> stats = sum(PairedStats.from_arrays(y[i], t[i], t[i] ** 0.7, binning=fine_binning(10))
    ...             for i in chunks)
    >>> c = posterior_compare(stats, model="smooth", n_bins=10, num_samples=1000, seed=1)
    >>> c.a.model, bool(c.interval(0.9)[1] < 0)     # t is calibrated, t**0.7 is not
    ('smooth', True)
    >>> coarse = sum(PairedStats.from_arrays(y[i], t[i], t[i] ** 0.7, n_bins=10) for i in chunks)
    >>> posterior_compare(coarse, num_samples=1000, seed=1).a.model
    'binned'
    """
    if not isinstance(stats, PairedStats):
        raise ValueError(f"stats must be a PairedStats, got {type(stats).__name__}")
    obj = resolve_model(model, "paired", n_bins=n_bins, binning=binning, **options)
    return obj.paired_posterior(stats, num_samples=num_samples, seed=seed,  # type: ignore[attr-defined]
                                progress=progress, binning_b=binning_b)
