"""Paired comparison of two models' ECEs on the same test set: the smooth
model by default, the binned one a keyword away."""

from __future__ import annotations

from typing import Any

from numpy.typing import ArrayLike

from ..base.typing import BinningSpec, PriorParam, Seed
from ..results.comparison import Comparison
from ..stats.binning import Binning
from .options import binned_options_unused

__all__ = ["COMPARE_MODELS", "compare"]


COMPARE_MODELS = ("binned", "smooth")


def compare(
    y_true: ArrayLike,
    y_prob_a: ArrayLike,
    y_prob_b: ArrayLike,
    *,
    y_pred_a: ArrayLike | None = None,
    y_pred_b: ArrayLike | None = None,
    n_bins: int | None = None,
    binning: BinningSpec | Binning = "uniform",
    alpha: PriorParam = None,
    sigma: PriorParam = None,
    tau: PriorParam = None,
    num_samples: int = 10_000,
    seed: Seed = 0,
    progress: bool = False,
    labels: ArrayLike | None = None,
    pos_label: Any = None,
    from_logits: bool = False,
    row_sum_tol: float | None = None,
    model: str = "smooth",
) -> Comparison:
    """Paired posterior of two models' ECEs on the same test set.

    Parameters
    ----------
    y_true, y_prob_a, y_prob_b, y_pred_a, y_pred_b, n_bins, binning, num_samples, seed,
    labels, pos_label, from_logits, row_sum_tol
        As :func:`bece.binned.compare.compare`.
    alpha, sigma, tau, progress
        The binned model's prior and progress bar
        (:func:`bece.binned.compare.compare`); ``model="smooth"`` takes none
        of the prior options, and draws without a progress bar.
    model : {"smooth", "binned"}, default "smooth"
        ``"smooth"`` (the default, as :func:`bayesian_ece`'s): both models'
        smooth calibration curves, drawn with shared outcome perturbations
        and one Bayesian bootstrap over the examples
        (:mod:`bece.smooth.paired`; the documentation's validation page, "Paired comparisons", has its
        coverage). ``"binned"``: one Dirichlet over the joint (correct,
        bin) cells of both models (:mod:`bece.binned.compare`).

    Returns
    -------
    Comparison
        ``.a.model`` is ``"binned"`` or ``"smooth"``.

    Examples
    --------
    >>> import numpy as np
    >>> from bece import compare
    >>> rng = np.random.default_rng(0)
    >>> t = rng.uniform(size=1000)
    >>> y = (rng.uniform(size=1000) < t).astype(int)
    >>> c = compare(y, t, t**0.7, n_bins=10, num_samples=1000, seed=1, model="smooth")
    >>> c.a.model, bool(c.prob_a_better > 0.99)
    ('smooth', True)
    """
    if model not in COMPARE_MODELS:
        raise ValueError(f"model must be one of {COMPARE_MODELS}, got {model!r}")
    options: dict[str, Any] = {"labels": labels, "pos_label": pos_label, "from_logits": from_logits,
                               "row_sum_tol": row_sum_tol}
    if model == "smooth":
        binned_options_unused("bece.smooth.paired.smooth_compare", alpha=alpha, sigma=sigma, tau=tau)
        from ..smooth.paired import smooth_compare

        return smooth_compare(y_true, y_prob_a, y_prob_b, y_pred_a=y_pred_a, y_pred_b=y_pred_b,
                              n_bins=n_bins, binning=binning, num_samples=num_samples, seed=seed,
                              **options)
    from ..binned.compare import compare as binned_compare

    return binned_compare(y_true, y_prob_a, y_prob_b, y_pred_a=y_pred_a, y_pred_b=y_pred_b,
                          n_bins=n_bins, binning=binning, alpha=alpha, sigma=sigma, tau=tau,
                          num_samples=num_samples, seed=seed, progress=progress, **options)
