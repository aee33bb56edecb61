"""One cross-check for every model: NUTS on its NumPyro model against its fast path."""

from __future__ import annotations

from typing import Any

from numpy.typing import ArrayLike

from .._base.typing import BinningSpec
from .._metrics.multiclass import top_label_data
from .._regression.histogram import PITHistogram
from .._results.ece import BayesianECE, BayesianTopLabelECE, SmoothBayesianECE
from .._stats.binning import Binning
from .._stats.calibration_stats import CalibrationStats
from .._stats.inputs import Inputs, as_outcomes
from .._stats.label_stats import LabelStats
from .._validation.agreement import CrossCheck
from .._validation.settings import MCMCSettings
from .base import Model
from .binned import BinnedModel
from .resolve import resolve_model

__all__ = ["cross_check"]


def cross_check(
    y_true: ArrayLike | CalibrationStats | LabelStats,
    y_prob: ArrayLike | None = None,
    *,
    y_pred: ArrayLike | None = None,
    model: str | Model | None = None,
    top_label: bool = False,
    average: str = "label",
    n_bins: int | None = None,
    binning: BinningSpec | Binning | None = None,
    mcmc: MCMCSettings | None = None,
    closed_form: BayesianECE | None = None,
    **options: Any,
) -> CrossCheck:
    """Cross-check a model's fast path with NUTS on its NumPyro model.

    The same call for every model: the fast path's draws and NUTS's are
    compared under one agreement rule (:mod:`bece._validation.agreement`:
    NUTS converged, and the 5, 50 and 95% quantiles within
    max(z·MCSE, 0.25 sd)); what each model compares is its ``compares``.

    Parameters
    ----------
    y_true, y_prob, y_pred
        A result in place of ``y_true`` (``bece.cross_check(result)``): NUTS
        on the model behind it, with its prior and its data (the binned
        model's statistics, against the result's own draws; the smooth
        model's atoms, against its fast path, the result's own draws being
        averaged with exact calibration). Or the predictions, as for
        :func:`bece.bayesian_ece` (or, with ``top_label=True``,
        :func:`bece.bayesian_top_label_ece`). Or the model's statistics in
        place of ``y_true``, e.g. summed over chunks: a
        :class:`bece.CalibrationStats` (:meth:`bece.SmoothModel.statistics`
        for the smooth model), or a :class:`bece.LabelStats` for the binned
        top-label ECE; the hierarchical top-label model's check runs on the
        predictions. For a regression model
        (:class:`bece.regression.SmoothPITModel`,
        :class:`bece.regression.DirichletPITModel`): PIT values or their
        :class:`~bece.regression.PITHistogram` in place of ``y_true``.
    model : str or model object, optional
        What to check; by default the default model of
        :func:`bece.bayesian_ece` and
        :func:`bece.bayesian_top_label_ece` (so the check validates the
        posterior users read), a shorthand (``"binned"``, ``"conjugate"``,
        ``"literal"``) or a model object (:class:`bece.BinnedModel`,
        :class:`bece.SmoothModel`, :class:`bece.SmoothTopLabelModel`, the
        regression ones).
    top_label : bool, default False
        Check the top-label posterior (``y_prob`` of shape (n, K)).
    average : {"label", "sample"}, default "label"
        The top-label average.
    n_bins, binning : optional
        The ECE bins, set on the model (as for :func:`bece.bayesian_ece`).
    mcmc : MCMCSettings, optional
        NUTS settings.
    closed_form : BayesianECE, optional
        Compare NUTS against these draws instead of the model's fast path
        (e.g. another form's, to measure the gap between them).
    **options
        Fields of :class:`MCMCSettings` (``num_chains=2``, ``seed=1``,
        ``progress_bar=False``, ...), which replace those of ``mcmc``;
        options of the model (``alpha=...``, ``prior_odds=...``), as for
        :func:`bece.bayesian_ece`; and how predictions are read,
        ``labels``, ``pos_label``, ``from_logits`` and ``row_sum_tol``, as
        for :func:`bece.bayesian_ece` (with ``top_label=True``, as for
        :func:`bece.bayesian_top_label_ece`; predictions only: statistics
        and results were read already).

    Returns
    -------
    CrossCheck
        ``agree``, ``reasons``, the comparison ``table``, the NUTS and
        fast-path results and ArviZ's ``inference_data``.

    Examples
    --------
    >>> import numpy as np
    >>> from bece import cross_check, BinnedModel
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=1000)
    >>> y = rng.uniform(size=1000) < p
    >>> cc = cross_check(y, p, model=BinnedModel(n_bins=5), progress_bar=False)
    >>> cc.agree, cc.model, cc.nuts.draws.shape      # 4 chains of 1,000 NUTS draws
    (True, 'conjugate', (4000,))
    >>> bool(abs(cc.ece_gap["mean"]) < 0.005)      # NUTS minus closed form
    True
    """
    fields = set(MCMCSettings.__dataclass_fields__)
    mcmc = MCMCSettings.resolve(mcmc, **{k: v for k, v in options.items() if k in fields})
    options = {k: v for k, v in options.items() if k not in fields}
    inputs = Inputs(**{k: options.pop(k) for k in _READING if k in options})
    if not inputs.plain and (y_prob is None or not _is_array_like(y_true)):
        raise ValueError("labels, pos_label, from_logits and row_sum_tol say how predictions are "
                         "read: pass them with y_true and y_prob, not with statistics, PIT "
                         "values or a result")
    if isinstance(y_true, BayesianECE):  # a result: its own model, statistics and draws
        if y_prob is not None or y_pred is not None or options or n_bins is not None \
                or binning is not None or closed_form is not None or model is not None:
            raise ValueError("a result is cross-checked as it is: pass it alone (with mcmc= or "
                             "MCMC settings as keywords)")
        return _check_result(y_true, mcmc)
    if isinstance(y_true, PITHistogram) or (isinstance(model, Model) and "regression" in model.tasks):
        if y_prob is not None or y_pred is not None:
            raise ValueError("a regression model's cross-check takes PIT values (or their "
                             "histogram) alone: y_prob and y_pred do not apply")
        if n_bins is not None or binning is not None:
            raise ValueError("n_bins and binning do not apply to a regression model (its levels do)")
        obj = resolve_model(model, "regression", **options)
        return obj.cross_check(y_true, mcmc=mcmc, closed_form=closed_form)  # type: ignore[attr-defined]
    if isinstance(y_true, (CalibrationStats, LabelStats)):
        if y_prob is not None or y_pred is not None:
            raise ValueError("y_prob and y_pred do not apply when statistics are given")
        task = "top-label" if isinstance(y_true, LabelStats) or top_label else "binary"
        obj = resolve_model(model, task, n_bins=n_bins, binning=binning, **options)
        return obj.cross_check(y_true, mcmc=mcmc, closed_form=closed_form,  # type: ignore[attr-defined]
                               average=average)
    if y_prob is None:
        raise ValueError("y_prob is required with y_true (or pass statistics alone; for PIT "
                         "values, model=bece.regression.SmoothPITModel())")
    task = "top-label" if top_label else "binary"
    obj = resolve_model(model, task, n_bins=n_bins, binning=binning, **options)
    # read the predictions as bayesian_ece (or bayesian_top_label_ece) reads them:
    # (outcome, confidence) pairs, or (true label, confidence, predicted label)
    if top_label:
        d = top_label_data(y_true, y_prob, y_pred, inputs)
        y_true, y_prob, y_pred = d.y, d.conf, d.pred
    else:
        y_true, y_prob = as_outcomes(y_true, y_prob, y_pred, inputs)
        y_pred = None
    return obj._cross_check_predictions(y_true, y_prob, y_pred, mcmc=mcmc, closed_form=closed_form,
                                        average=average, top_label=top_label)


#: How predictions are read (:class:`bece._stats.inputs.Inputs`), among ``**options``.
_READING = ("labels", "pos_label", "from_logits", "row_sum_tol")


def _is_array_like(x: Any) -> bool:
    return not isinstance(x, (BayesianECE, PITHistogram, CalibrationStats, LabelStats))


def _check_smooth_result(result: SmoothBayesianECE, mcmc: MCMCSettings) -> CrossCheck:
    """NUTS on the smooth model behind ``result`` (its atoms, its prior) against
    a fresh fast path of the same model: the result's own draws are averaged
    with exact calibration, which the check judges as a probability."""
    from .._validation.smooth import cross_check_smooth_atoms

    if result.atoms is None:
        raise ValueError("this smooth result holds no atoms (a paired comparison's side): "
                         "cross-check the model on the predictions, "
                         "bece.cross_check(y_true, y_prob, model=...)")
    post = result.params  # the fit: its knots and prior scales are the model's options
    return cross_check_smooth_atoms(
        result.atoms, result.stats, result.curve_grid, n_knots=int(post.basis.knots.size),
        intercept_scale=float(post.prior_scales[0]), slope_scale=float(post.prior_scales[1]),
        smoothness_scale=float(post.smoothness_scale),
        bin_scale=float(post.bin_scale) if post.basis.n_bins else None,
        prior_odds=result.prior_odds or 0.0, **mcmc.as_kwargs())


def _check_result(result: BayesianECE, mcmc: MCMCSettings) -> CrossCheck:
    """NUTS on the model behind ``result`` (its prior, its statistics or
    atoms) against that result's own draws (binned) or its model's fast
    path (smooth)."""
    if isinstance(result, SmoothBayesianECE) and result.model == "smooth":
        return _check_smooth_result(result, mcmc)
    forms = {"binned": "conjugate", "binned-literal": "literal",
             "binned-top-label": "conjugate", "binned-top-label-literal": "literal"}
    if result.model not in forms or result.method not in ("conjugate", "exact"):
        raise ValueError(
            f"cross_check of a {result.model!r} result ({result.method}) needs the predictions: "
            "its statistics do not hold them. Pass them with the model: "
            "bece.cross_check(y_true, y_prob, model=...)")
    if result.preset is not None:
        raise ValueError(f"a result of preset={result.preset!r} has no NumPyro model to check")
    post = result.params
    if isinstance(result, BayesianTopLabelECE):
        if result.label_accuracy is None:
            raise ValueError("this top-label result dropped its per-bin draws (keep_bins): "
                             "recompute it with keep_bins=True to cross-check it")
        n_labels, m = result.n_labels, result.stats.n_bins
        model = BinnedModel(form=forms[result.model],
                            alpha=post.alpha.reshape(2, n_labels, m).transpose(1, 0, 2),
                            sigma=post.sigma.reshape(n_labels, m), tau=post.tau.reshape(n_labels, m))
        stats: CalibrationStats | LabelStats = LabelStats(result.labels, result.label_stats)
        return model.cross_check(stats, mcmc=mcmc, closed_form=result, average=result.average)
    model = BinnedModel(form=forms[result.model], alpha=post.alpha, sigma=post.sigma, tau=post.tau)
    return model.cross_check(result.stats, mcmc=mcmc, closed_form=result)
