"""Entry points that choose the model.

bayesian_ece and posterior_ece dispatch between the binned and the smooth
posterior; bayesian_top_label_ece and posterior_top_label_ece between the
binned top-label posterior and the hierarchical smooth one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .base.typing import BinningSpec, PriorParam, Seed
from .binned.literal import FORMS
from .binned.posterior import binned_posterior_ece
from .binned.toplabel import bayesian_top_label_ece as binned_top_label_ece
from .binned.toplabel import posterior_top_label_ece as binned_posterior_top_label_ece
from .results.ece import BayesianECE, BayesianTopLabelECE
from .results.recalibration import Recalibration
from .stats.binning import Binning
from .stats.calibration_stats import CalibrationStats

__all__ = [
    "bayesian_ece",
    "bayesian_top_label_ece",
    "posterior_ece",
    "posterior_top_label_ece",
    "recalibrate",
]


MODELS = ("binned", *FORMS, "smooth")


def _check_model(model: str) -> None:
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}, got {model!r}")


def _binned_options_unused(where: str = "bece.smooth.smooth_ece and bece.smooth.smooth_posterior_ece",
                           **options: Any) -> None:
    given = [k for k, v in options.items() if v is not None]
    if given:
        raise ValueError(
            f"{', '.join(given)} belong(s) to the binned model; model='smooth' takes its "
            f"options through {where}"
        )


_TOP_LABEL_SMOOTH = ("bece.smooth.toplabel.smooth_top_label_ece and "
                     "bece.smooth.toplabel.smooth_posterior_top_label_ece")


def posterior_ece(
    stats: CalibrationStats,
    *,
    alpha: PriorParam = None,
    sigma: PriorParam = None,
    tau: PriorParam = None,
    preset: str | None = None,
    num_samples: int = 10_000,
    seed: Seed = 0,
    model: str = "binned",
    n_bins: int | None = None,
    binning: BinningSpec | Binning | None = None,
) -> BayesianECE:
    """Posterior over the ECE from statistics, by the closed form.

    Parameters
    ----------
    stats : CalibrationStats
        Statistics of the test set (possibly summed over chunks).
    alpha, sigma, tau, preset
        Prior; see :func:`conjugate_posterior`.
    num_samples : int, default 10_000
        Number of independent posterior draws S.
    seed : int or numpy.random.Generator, default 0
        Randomness; the same int gives identical draws.
    model : {"binned", "conjugate", "literal", "smooth"}, default "binned"
        ``"conjugate"``: the closed form in the bins of ``stats``, exact for
        the conjugate model. ``"literal"``: the literal BECE model (each
        confidence a truncated Normal in its bin), by exact one-dimensional
        sampling (:mod:`bece.binned.literal`). ``"binned"``: the reference
        binned model, the conjugate form (README, "Which binned model").
        ``"smooth"``: the smooth calibration-curve model by Laplace
        (:func:`bece.smooth.smooth_posterior_ece`), from statistics in fine
        bins that refine the ECE bins (``binning=bece.smooth.fine_binning(
        n_bins)``); ``alpha``, ``sigma``, ``tau`` and ``preset`` do not
        apply to it.
    n_bins, binning : optional
        ``model="smooth"`` only: the ECE bins (default 15 uniform) that the
        bins of ``stats`` refine. The binned model uses the bins of
        ``stats`` and refuses them.

    Returns
    -------
    BayesianECE
        (:class:`bece.smooth.SmoothBayesianECE` for ``model="smooth"``.)
    """
    if not isinstance(stats, CalibrationStats):
        raise ValueError(f"stats must be a CalibrationStats, got {type(stats).__name__}")
    if model == "smooth":
        _binned_options_unused(alpha=alpha, sigma=sigma, tau=tau, preset=preset)
        from .smooth.posterior import smooth_posterior_ece

        result = smooth_posterior_ece(stats, n_bins=n_bins,
                                      binning="uniform" if binning is None else binning,
                                      num_samples=num_samples, seed=seed)
        return replace(result, stats=result.stats.with_kind(stats.kind))
    _check_model(model)
    given = [k for k, v in (("n_bins", n_bins), ("binning", binning)) if v is not None]
    if given:
        raise ValueError(
            f"{' and '.join(given)} belong(s) to model='smooth' (the ECE bins that its fine "
            f"statistics refine); model={model!r} uses the bins of stats"
        )
    return binned_posterior_ece(
        stats, alpha=alpha, sigma=sigma, tau=tau, preset=preset, num_samples=num_samples, seed=seed,
        model=model,
    )


def bayesian_ece(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    y_pred: ArrayLike | None = None,
    n_bins: int | None = None,
    binning: BinningSpec | Binning = "uniform",
    alpha: PriorParam = None,
    sigma: PriorParam = None,
    tau: PriorParam = None,
    preset: str | None = None,
    num_samples: int = 10_000,
    seed: Seed = 0,
    model: str = "binned",
    labels: ArrayLike | None = None,
    pos_label: Any = None,
    from_logits: bool = False,
    row_sum_tol: float | None = None,
) -> BayesianECE:
    """Posterior over a classifier's expected calibration error (BECE).

    Parameters
    ----------
    y_true : array_like of shape (n,)
        True labels: 0/1 or -1/1 (or any two values with ``pos_label``)
        for a 1-D ``y_prob`` without ``y_pred``; class labels otherwise
        (``0 .. K-1``, text, or any values with ``labels``).
    y_prob : array_like of shape (n,) or (n, K)
        ``P(y=1)`` of a binary classifier; or class probabilities, whose row
        maximum is the confidence and ``z = [argmax == y_true]`` (top-label,
        for every K: scikit-learn's binary ``predict_proba(X)`` of shape
        (n, 2) is read top-label too; pass ``predict_proba(X)[:, 1]`` for
        the P(y = 1) reading of scikit-learn's ``calibration_curve``); or
        with ``y_pred`` the confidence of ``y_pred``.
    y_pred : array_like of shape (n,), optional
        Predicted labels: triples (y_pred, y_true, confidence of y_pred).
    n_bins : int, default 15
        Number of bins M.
    binning : {"uniform", "quantile"} or array_like, default "uniform"
        See :mod:`bece.stats.binning`.
    alpha : float or array, default 1/(2M)
        Dirichlet concentration per (outcome, bin) cell.
    sigma, tau : float or array of shape (M,), default w_m / sqrt(12)
        Spread of confidences within a bin, and prior spread of the bin's
        mean confidence around its centre.
    preset : {"uncertainty-metrics"}, optional
        Reproduce google/uncertainty-metrics (see :mod:`bece.binned.conjugate` for
        what it changes and why it is not the default).
    num_samples : int, default 10_000
        Posterior draws.
    seed : int or numpy.random.Generator, default 0
    model : {"binned", "conjugate", "literal", "smooth"}, default "binned"
        ``"binned"``: the reference binned BECE model, its conjugate form
        (closed form above). ``"conjugate"``: the same, by name.
        ``"literal"``: the literal BECE model (each confidence a truncated
        Normal within its bin), by exact one-dimensional sampling of each
        bin's mean (:mod:`bece.binned.literal`); ``preset`` does not apply.
        ``"smooth"``: a smooth calibration curve (natural cubic spline in
        logit(p) with a learned smoothness scale) and a Bayesian bootstrap
        over the confidences, by Laplace (:func:`bece.smooth.smooth_ece`,
        which takes its options). It pools information across bins, so its
        intervals stay honest at small n where the binned posterior's do
        not; ``alpha``, ``sigma``, ``tau`` and ``preset`` do not apply to it.
        Same result type, with ``method="laplace"`` and the posterior curve
        (``.curve`` on ``.curve_grid``; in ``to_inference_data()``).
    labels : array_like, optional
        The class of each column of ``y_prob`` in order (``clf.classes_``)
        when the labels are not ``0 .. K-1``; for a 1-D ``y_prob`` its two
        classes, negative then positive (:mod:`bece.stats.labels`).
    pos_label : optional
        The value of ``y_true`` that is ``y = 1`` for a 1-D ``y_prob``
        (default 1 for labels 0/1 and -1/1, as scikit-learn; required for
        other values, e.g. ``pos_label="dog"``).
    from_logits : bool, default False
        ``y_prob`` holds logits: sigmoid (shape (n,)) or softmax over the
        columns (shape (n, K)), in float64 and block by block (10^6 x 1,000
        float32 logits need no float64 copy).
    row_sum_tol : float, optional
        Tolerance of the row sums of an (n, K) ``y_prob`` instead of the
        strict default (:func:`bece.stats.inputs.row_sum_tolerance`), e.g.
        ``1e-3`` for probabilities written with four decimals; accepted rows
        are used as given, never renormalised.

    Returns
    -------
    BayesianECE
        ``.draws``, ``.mean``, ``.interval(0.9)``, ``.hdi(0.9)``,
        ``.plugin``, ``.to_inference_data()``, ``.summary()``.

    Notes
    -----
    The posterior is the closed form of :func:`conjugate_posterior`; each
    draw's ECE is :math:`\\sum_m |q_{1,m} - (q_{0,m}+q_{1,m})\\mu_m|`.

    Examples
    --------
    >>> import numpy as np
    >>> from bece import bayesian_ece
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = rng.uniform(size=2000) < p          # calibrated by construction
    >>> r = bayesian_ece(y, p, n_bins=10, seed=1)
    >>> bool(r.interval(0.9)[0] < r.plugin < r.interval(0.9)[1])
    True
    """
    options: dict[str, Any] = {"labels": labels, "pos_label": pos_label, "from_logits": from_logits,
               "row_sum_tol": row_sum_tol}
    if model == "smooth":
        _binned_options_unused(alpha=alpha, sigma=sigma, tau=tau, preset=preset)
        from .smooth.posterior import smooth_ece
        from .stats.inputs import as_outcomes, input_kind

        # the smooth model reads (outcome, confidence) pairs: read them here
        # with the options, and record how they were read on its statistics
        z, p = as_outcomes(y_true, y_prob, y_pred, **options)
        result = smooth_ece(z, p, n_bins=n_bins, binning=binning, num_samples=num_samples,
                            seed=seed)
        return replace(result, stats=result.stats.with_kind(input_kind(y_prob, y_pred)))
    _check_model(model)
    stats = CalibrationStats.from_arrays(y_true, y_prob, y_pred=y_pred, n_bins=n_bins,
                                         binning=binning, **options)
    return posterior_ece(
        stats, alpha=alpha, sigma=sigma, tau=tau, preset=preset, num_samples=num_samples, seed=seed,
        model=model,
    )


def posterior_top_label_ece(
    stats: Sequence[CalibrationStats],
    labels: ArrayLike | None = None,
    *,
    average: str = "label",
    alpha: PriorParam = None,
    sigma: PriorParam = None,
    tau: PriorParam = None,
    num_samples: int | None = None,
    seed: Seed = 0,
    keep_bins: bool | str = "auto",
    model: str = "binned",
    n_bins: int | None = None,
    binning: BinningSpec | Binning | None = None,
) -> BayesianTopLabelECE:
    """Posterior over the top-label ECE from per-label statistics.

    Parameters
    ----------
    stats : sequence of L CalibrationStats
        One per predicted label, sharing bins (e.g. from
        :func:`bece.binned.toplabel.top_label_statistics`, possibly summed over chunks).
    labels : array_like of shape (L,), optional
        The labels' names; default ``0 .. L-1``.
    average : {"label", "sample"}, default "label"
    alpha, sigma, tau
        Prior of the binned model (:func:`bece.binned.toplabel.top_label_posterior`).
    num_samples : int, optional
        Posterior draws; default 10,000, fewer (at least 1,000) when L·M is
        large (:func:`bece.binned.toplabel.default_num_samples`).
    seed : int or numpy.random.Generator, default 0
    keep_bins : {"auto", True, False}, default "auto"
        Keep the (S, L, M) per-(label, bin) draws ("auto": when
        ``S * L * M <= 10**7``).
    model : {"binned", "conjugate", "literal", "smooth"}, default "binned"
        ``"binned"``, ``"conjugate"``, ``"literal"``: the binned model in each
        (label, bin) cell (:func:`bece.binned.posterior_top_label_ece`).
        ``"smooth"``: the hierarchical smooth model, a shared calibration
        curve plus a per-label shift and tilt of learned scale
        (:func:`bece.smooth.toplabel.smooth_posterior_top_label_ece`), from
        statistics in fine bins that refine the ECE bins; ``alpha``,
        ``sigma`` and ``tau`` do not apply to it.
    n_bins, binning : optional
        ``model="smooth"`` only: the ECE bins (default 15 uniform) that the
        bins of ``stats`` refine.

    Returns
    -------
    BayesianTopLabelECE
    """
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}, got {model!r}")
    if model == "smooth":
        _binned_options_unused(_TOP_LABEL_SMOOTH, alpha=alpha, sigma=sigma, tau=tau)
        from .smooth.toplabel import smooth_posterior_top_label_ece

        return smooth_posterior_top_label_ece(
            stats, labels, n_bins=n_bins, binning="uniform" if binning is None else binning,
            average=average, num_samples=num_samples, seed=seed, keep_bins=keep_bins,
        )
    given = [k for k, v in (("n_bins", n_bins), ("binning", binning)) if v is not None]
    if given:
        raise ValueError(
            f"{' and '.join(given)} belong(s) to model='smooth' (the ECE bins that its fine "
            f"statistics refine); model={model!r} uses the bins of stats"
        )
    return binned_posterior_top_label_ece(
        stats, labels, average=average, alpha=alpha, sigma=sigma, tau=tau, num_samples=num_samples,
        seed=seed, keep_bins=keep_bins, model=model,
    )


def bayesian_top_label_ece(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    y_pred: ArrayLike | None = None,
    n_bins: int | None = None,
    binning: BinningSpec | Binning = "uniform",
    average: str = "label",
    alpha: PriorParam = None,
    sigma: PriorParam = None,
    tau: PriorParam = None,
    num_samples: int | None = None,
    seed: Seed = 0,
    keep_bins: bool | str = "auto",
    model: str = "binned",
    labels: ArrayLike | None = None,
    from_logits: bool = False,
    row_sum_tol: float | None = None,
) -> BayesianTopLabelECE:
    """Posterior over a multiclass classifier's top-label ECE.

    Parameters
    ----------
    y_true : array_like of shape (n,)
        Labels in ``0 .. K-1``, or any labels with ``labels`` (text labels
        without it: their sorted values are the columns, as scikit-learn's
        ``classes_``).
    y_prob : array_like of shape (n, K) or (n,)
        Class probabilities (rows sum to 1; float32 is read as it is), or
        with ``y_pred`` the confidence of each prediction.
    y_pred : array_like of shape (n,), optional
        Predicted labels (e.g. after :class:`bece.calibrate.TopLabelCalibrator`).
    n_bins : int, default 15
    binning : {"uniform"} or array_like of edges, default "uniform"
    average : {"label", "sample"}, default "label"
        Unweighted mean over predicted labels (Gupta & Ramdas' and MAPIE's
        top-label ECE) or weighted by how often each label is predicted.
    alpha, sigma, tau
        Prior of the binned model (:mod:`bece.binned.toplabel`).
    num_samples : int, optional
        Posterior draws; default 10,000, fewer (at least 1,000) for many
        labels (:func:`bece.binned.toplabel.default_num_samples`).
    seed : int or numpy.random.Generator, default 0
    keep_bins : {"auto", True, False}, default "auto"
        Keep the per-(label, bin) draws (when ``S * L * M <= 10**7``).
    model : {"binned", "conjugate", "literal", "smooth"}, default "binned"
        ``"binned"`` (the reference form), ``"conjugate"``, ``"literal"``:
        the binned model in every (label, bin) cell, each estimated on its
        own (:func:`bece.binned.bayesian_top_label_ece`). ``"smooth"``: the
        hierarchical smooth model (:mod:`bece.smooth.toplabel`): each label's
        curve is a shared smooth calibration curve plus a shift and tilt of
        learned scale, so labels with few predictions borrow from the others;
        ``alpha``, ``sigma``, ``tau`` do not apply to it
        (``bece.smooth.toplabel.smooth_top_label_ece`` takes its options).
        Same result type, ``model="smooth-top-label"``, ``method="laplace"``.
    labels : array_like, optional
        The class of each column of ``y_prob`` in order (``clf.classes_``);
        the result's ``labels`` are then these classes.
    from_logits : bool, default False
        ``y_prob`` holds logits: the top softmax probability of each row,
        in float64 block by block (10^6 x 1,000 float32 logits need no
        float64 copy).
    row_sum_tol : float, optional
        Row-sum tolerance instead of the strict default; rows used as given.

    Returns
    -------
    BayesianTopLabelECE
        A :class:`~bece.results.ece.BayesianECE` (``draws``, ``interval``,
        ``hdi``, ``plugin``, pooled per-bin ``accuracy``/``confidence``/
        ``weight``) with per-label ``label_draws`` (S, L), ``labels``,
        ``label_stats`` and, when kept, ``label_accuracy``,
        ``label_confidence``, ``label_weight`` (S, L, M);
        ``to_inference_data()`` has a ``label`` coordinate.

    Examples
    --------
    >>> import numpy as np
    >>> from bece import bayesian_top_label_ece, top_label_ece
    >>> rng = np.random.default_rng(0)
    >>> prob = rng.dirichlet(np.ones(3), size=3000)
    >>> y = np.array([rng.choice(3, p=row) for row in prob])  # calibrated
    >>> r = bayesian_top_label_ece(y, prob, n_bins=10, seed=1)
    >>> r.label_draws.shape, bool(abs(r.plugin - top_label_ece(y, prob, n_bins=10)) < 1e-12)
    ((10000, 3), True)
    >>> s = bayesian_top_label_ece(y, prob, n_bins=10, seed=1, model="smooth", num_samples=2000)
    >>> s.model, bool(s.plugin == r.plugin)
    ('smooth-top-label', True)
    """
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}, got {model!r}")
    options: dict[str, Any] = {"labels": labels, "from_logits": from_logits, "row_sum_tol": row_sum_tol}
    if model == "smooth":
        _binned_options_unused(_TOP_LABEL_SMOOTH, alpha=alpha, sigma=sigma, tau=tau)
        from .metrics.multiclass import top_label_data
        from .smooth.toplabel import smooth_top_label_ece
        from .stats.inputs import input_kind

        # read the labels and probabilities here (the model takes the
        # predicted and true class indices and the confidences), then name
        # the labels and record how the predictions were read
        d = top_label_data(y_true, y_prob, y_pred, **options)
        result = smooth_top_label_ece(d.y, d.conf, y_pred=d.pred, n_bins=n_bins, binning=binning,
                                      average=average, num_samples=num_samples, seed=seed,
                                      keep_bins=keep_bins)
        named = result.labels if d.classes is None else d.classes[result.labels]
        return replace(result, labels=named,
                       stats=result.stats.with_kind(input_kind(y_prob, y_pred)))
    return binned_top_label_ece(
        y_true, y_prob, y_pred=y_pred, n_bins=n_bins, binning=binning, average=average, alpha=alpha,
        sigma=sigma, tau=tau, num_samples=num_samples, seed=seed, keep_bins=keep_bins, model=model,
        **options,
    )


#: ``method`` of :func:`recalibrate` (and ``bece recalibrate --method``): the
#: calibrator class of :mod:`bece.calibrate` each name fits.
RECALIBRATION_METHODS = {
    "temperature": "TemperatureScaling",
    "vector": "VectorScaling",
    "matrix": "MatrixScaling",
    "dirichlet": "DirichletCalibration",
    "platt": "PlattScaling",
    "isotonic": "IsotonicCalibration",
    "beta": "BetaCalibration",
}


def _nll(logp: np.ndarray, y: np.ndarray) -> float:
    return float(-np.mean(logp[np.arange(y.size), y]))


def recalibrate(
    y_val: ArrayLike,
    scores_val: ArrayLike,
    y_test: ArrayLike,
    scores_test: ArrayLike,
    *,
    method: Any = "temperature",
    input: str = "auto",
    labels: ArrayLike | None = None,
    pos_label: Any = None,
    n_bins: int | None = None,
    binning: BinningSpec | Binning = "uniform",
    num_samples: int = 10_000,
    seed: Seed = 0,
    progress: bool = False,
) -> Recalibration:
    """Fit a recalibrator on a validation set and score the test set before and after.

    The workflow of every calibration study in one call: the calibrator is
    fitted on ``(scores_val, y_val)`` only; the test set's probabilities
    before (the scores as given: softmax of logits, or the probabilities)
    and after (``calibrator.predict_proba(scores_test)``) go through
    :func:`bece.compare`, the paired posterior of the two ECEs on the same
    examples, with after as A and before as B.

    Parameters
    ----------
    y_val, scores_val : array_like of shape (n_val,) and (n_val, K) or (n_val,)
        Validation labels and the classifier's scores: logits or
        probabilities (``input``), (n, K), or (n,) for a binary classifier's
        log-odds or :math:`P(y = 1)`.
    y_test, scores_test : array_like
        Test labels and scores of the same form.
    method : str or estimator, default "temperature"
        ``"temperature"``, ``"vector"``, ``"matrix"``, ``"dirichlet"``,
        ``"platt"``, ``"isotonic"`` or ``"beta"`` (:data:`RECALIBRATION_METHODS`:
        the calibrator of :mod:`bece.calibrate` with its defaults and
        ``input``), or an unfitted scikit-learn calibrator (cloned, then
        fitted), e.g. ``MatrixScaling(reg_lambda=0.01, reg_mu=0.01)``.
        The binary methods need two classes.
    input : {"auto", "logits", "probabilities"}, default "auto"
        What the scores hold (:mod:`bece.calibrate.scores`); a calibrator
        passed as an object uses its own.
    labels : array_like, optional
        The class of each column of the scores, in order (``clf.classes_``),
        when the labels are not ``0 .. K-1``; for 1-D scores the negative
        then the positive class.
    pos_label : optional
        For 1-D scores, the value of ``y`` that is ``y = 1`` (default 1
        for 0/1 and -1/1 labels).
    n_bins, binning, num_samples, seed, progress
        As :func:`bece.compare` (15 uniform bins, 10,000 joint draws).

    Returns
    -------
    Recalibration
        ``before``, ``after`` (each a :class:`~bece.BayesianECE`),
        ``mean``/``interval()``/``hdi()`` of after - before,
        ``prob_better`` = :math:`P(\\mathrm{ECE}_\\text{after} < \\mathrm{ECE}_\\text{before})`,
        ``nll_before``/``nll_after``, the fitted ``calibrator`` and the
        recalibrated test probabilities ``y_prob``; ``str()`` prints them.

    Notes
    -----
    This is question (a) of :mod:`bece.calibrate.bayes_temperature`: the
    calibrator as fitted, judged on the test set (test-set uncertainty
    only). What to expect from temperature scaling fitted on a validation
    split of this size is :func:`bece.calibrate.temperature_scaled_ece`.

    Examples
    --------
    >>> import numpy as np
    >>> import bece
    >>> rng = np.random.default_rng(0)
    >>> logits = rng.normal(scale=3.0, size=(4000, 5))
    >>> p = np.exp(logits / 2) / np.exp(logits / 2).sum(axis=1, keepdims=True)
    >>> y = (rng.uniform(size=(4000, 1)) > p.cumsum(axis=1)).sum(axis=1)  # T = 2
    >>> r = bece.recalibrate(y[:2000], logits[:2000], y[2000:], logits[2000:], input="logits")
    >>> bool(r.after.mean < r.before.mean), bool(r.prob_better > 0.99)
    (True, True)
    """
    from sklearn.base import clone

    from . import calibrate
    from .binned.compare import compare
    from .calibrate.scores import as_scores, log_softmax, softmax
    from .stats.labels import binary_outcome, class_indices

    if isinstance(method, str):
        if method not in RECALIBRATION_METHODS:
            raise ValueError(f"method must be one of {tuple(RECALIBRATION_METHODS)} or a "
                             f"calibrator, got {method!r}")
        name = method
        cal = getattr(calibrate, RECALIBRATION_METHODS[method])(input=input)
    elif hasattr(method, "fit") and hasattr(method, "predict_proba") and hasattr(method, "get_params"):
        name = type(method).__name__
        cal = clone(method)
    else:
        raise ValueError(f"method must be one of {tuple(RECALIBRATION_METHODS)} or an unfitted "
                         f"calibrator of bece.calibrate, got {method!r}")
    kind = getattr(cal, "input", input)
    val = as_scores(scores_val, kind, "scores_val")
    test = as_scores(scores_test, val.kind, "scores_test")
    if test.binary != val.binary or test.k != val.k:
        raise ValueError(f"scores_test has shape {test.data.shape} but scores_val has shape "
                         f"{val.data.shape}; they must hold the same classes")
    def read(y: ArrayLike, n: int, name: str) -> tuple[np.ndarray, np.ndarray | None]:
        try:
            if val.binary:
                return binary_outcome(y, n, pos_label=pos_label, labels=labels), None
            index, _, names = class_indices(y, None, n, val.k, labels=labels)
            return index, names
        except ValueError as exc:  # the library says y_true: say which one
            raise ValueError(str(exc).replace("y_true", name)) from None

    yv, classes = read(y_val, val.n, "y_val")
    yt, classes_t = read(y_test, test.n, "y_test")
    if not val.binary:
        if not (classes is None and classes_t is None) and (
                classes is None or classes_t is None or not np.array_equal(classes, classes_t)):
            raise ValueError("y_test's classes differ from y_val's; pass labels= with the class "
                             "of each column in order")
    cal.fit(val.data, yv)
    after = np.asarray(cal.predict_proba(test.data), dtype=np.float64)
    logp = np.empty((test.n, test.k))
    before = np.empty((test.n, test.k)) if val.kind == "logits" else None
    for start, stop, block in test.blocks():
        logp[start:stop] = log_softmax(block)
        if before is not None:
            before[start:stop] = softmax(block)
    if before is None:  # probabilities as given
        before = test.data if not test.binary else np.column_stack([1 - test.data, test.data])
    nll_before = _nll(logp, yt)
    nll_after = _nll(np.log(np.maximum(after, np.finfo(np.float64).tiny)), yt)
    if test.binary:  # P(y = 1) against the outcome
        prob_after, prob_before = after[:, 1], np.asarray(before)[:, 1]
    else:
        prob_after, prob_before = after, before
    comparison = compare(yt, prob_after, prob_before, n_bins=n_bins, binning=binning,
                         num_samples=num_samples, seed=seed, progress=progress)
    return Recalibration(method=name, calibrator=cal, comparison=comparison, y_prob=after,
                         nll_before=nll_before, nll_after=nll_after, input=val.kind, n_val=val.n,
                         classes=classes)
