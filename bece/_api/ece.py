"""Posteriors of the ECE and the top-label ECE: the smooth models by default,
the binned BECE model one keyword away, from predictions or statistics.

Each entry point turns ``model=`` (a string or a model object) into a model
object in one place (:func:`bece._posteriors.resolve_model`) and calls it:
the model holds its options, its statistics and its fast path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, overload

import numpy as np
from numpy.typing import ArrayLike

from .._base.typing import BinningSpec, Seed
from .._posteriors import Model, resolve_model
from .._results.ece import BayesianECE, BayesianTopLabelECE
from .._results.groups import GroupECE
from .._stats.binning import Binning
from .._stats.calibration_stats import CalibrationStats
from .._stats.groups import GroupStats
from .._stats.inputs import Inputs
from .._stats.label_stats import LabelStats
from .options import refuse_sample_weight

__all__ = [
    "bayesian_ece",
    "bayesian_top_label_ece",
    "posterior_ece",
    "posterior_top_label_ece",
]


@overload
def posterior_ece(stats: CalibrationStats, *, model: str | Model = ..., num_samples: int = ...,
                  seed: Seed = ..., n_bins: int | None = ...,
                  binning: BinningSpec | Binning | None = ..., **options: Any) -> BayesianECE: ...
@overload
def posterior_ece(stats: GroupStats, *, model: str | Model = ..., num_samples: int = ...,
                  seed: Seed = ..., n_bins: int | None = ...,
                  binning: BinningSpec | Binning | None = ..., **options: Any) -> GroupECE: ...
def posterior_ece(
    stats: CalibrationStats | GroupStats,
    *,
    model: str | Model | None = None,
    num_samples: int = 10_000,
    seed: Seed = 0,
    n_bins: int | None = None,
    binning: BinningSpec | Binning | None = None,
    **options: Any,
) -> BayesianECE | GroupECE:
    """Posterior over the ECE from statistics, by the closed form.

    Parameters
    ----------
    stats : CalibrationStats or GroupStats
        Statistics of the test set (possibly summed over chunks); a
        :class:`bece.GroupStats` (:meth:`bece.SmoothGroupModel.group_statistics`)
        gives each group's posterior (a :class:`bece.GroupECE`, by
        :class:`bece.SmoothGroupModel`: ``model="smooth"``, the default for
        groups; ``pooling="none"`` among the options).
    num_samples : int, default 10_000
        Number of independent posterior draws S.
    seed : int or numpy.random.Generator, default 0
        Randomness; the same int gives identical draws.
    model : {"binned", "conjugate", "literal", "smooth"} or model object, optional
        Default "binned" for a CalibrationStats, "smooth" for a GroupStats.
        A model object (:class:`bece.BinnedModel`, :class:`bece.SmoothModel`)
        or its shorthand. ``"conjugate"``: the closed form in the bins of ``stats``, exact for
        the conjugate model. ``"literal"``: the literal BECE model (each
        confidence a truncated Normal in its bin), by exact one-dimensional
        sampling (:mod:`bece._binned.literal`). ``"binned"``: the reference
        binned model, the conjugate form (documentation: "Which binned model").
        ``"smooth"``: the smooth calibration-curve model by Laplace
        (:func:`bece.smooth.smooth_posterior_ece`), from statistics in fine
        bins that refine the ECE bins (``binning=bece.smooth.fine_binning(
        n_bins)``); ``alpha``, ``sigma``, ``tau`` and ``preset`` do not
        apply to it. The default stays ``"binned"`` here, unlike
        :func:`bayesian_ece`: statistics come in the bins they were
        collected in, and only fine ones suit the smooth model.
    n_bins, binning : optional
        ``model="smooth"`` only: the ECE bins (default 15 uniform) that the
        bins of ``stats`` refine. The binned model uses the bins of
        ``stats`` (an ``n_bins`` that differs raises ``ValueError``).
    **options
        Options of the model, set on its object: ``alpha``, ``sigma``,
        ``tau``, ``preset`` (the binned model's prior, see
        :func:`bece._binned.conjugate.conjugate_posterior`); ``prior_odds``,
        ``zero_gap_prior``, ... (the smooth model's, :class:`bece.SmoothModel`).
        An option the model does not have raises ``ValueError``.

    Returns
    -------
    BayesianECE
        (:class:`bece.smooth.SmoothBayesianECE` for ``model="smooth"``.)

    Examples
    --------
    Statistics of a test set read in chunks, summed, then the posterior:

    >>> import numpy as np
    >>> from bece import CalibrationStats, posterior_ece
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=3000)
    >>> y = rng.uniform(size=3000) < p                   # calibrated by construction
    >>> chunks = np.array_split(np.arange(3000), 3)
    >>> stats = sum(CalibrationStats.from_arrays(y[i], p[i], n_bins=10) for i in chunks)
    >>> stats
    CalibrationStats(n=3000, n_bins=10, rule='uniform', empty_bins=0, kind='binary')
    >>> r = posterior_ece(stats, num_samples=2000, seed=1)
    >>> r.model, r.draws.shape, bool(r.interval(0.9)[1] < 0.05)
    ('binned', (2000,), True)

    The smooth model needs statistics in fine bins that refine the ECE bins:

    >>> from bece.smooth import fine_binning
    >>> fine = CalibrationStats.from_arrays(y, p, binning=fine_binning(10))
    >>> s = posterior_ece(fine, model="smooth", n_bins=10, num_samples=2000, seed=1)
    >>> s.model, s.stats.n_bins, bool(s.interval(0.9)[0] == 0.0)   # can reach 0
    ('smooth', 10, True)
    """
    if isinstance(stats, GroupStats):  # the groups' model: SmoothGroupModel
        group_model = resolve_model(model, "groups", n_bins=n_bins, binning=binning, **options)
        return group_model.posterior(stats, num_samples=num_samples,  # type: ignore[attr-defined]
                                     seed=seed)
    if not isinstance(stats, CalibrationStats):
        raise ValueError(f"stats must be a CalibrationStats or GroupStats, got "
                         f"{type(stats).__name__}")
    obj = resolve_model("binned" if model is None else model, "binary", n_bins=n_bins,
                        binning=binning, **options)
    return obj.posterior(stats, num_samples=num_samples, seed=seed)  # type: ignore[attr-defined]


@overload
def bayesian_ece(y_true: ArrayLike, y_prob: ArrayLike, *, by: None = None,
                 y_pred: ArrayLike | None = ..., n_bins: int | None = ...,
                 binning: BinningSpec | Binning | None = ..., num_samples: int = ...,
                 seed: Seed = ..., model: str | Model = ..., labels: ArrayLike | None = ...,
                 pos_label: Any = ..., from_logits: bool = ..., row_sum_tol: float | None = ...,
                 **options: Any) -> BayesianECE: ...
@overload
def bayesian_ece(y_true: ArrayLike, y_prob: ArrayLike, *, by: ArrayLike,
                 y_pred: ArrayLike | None = ..., n_bins: int | None = ...,
                 binning: BinningSpec | Binning | None = ..., num_samples: int = ...,
                 seed: Seed = ..., model: str | Model = ..., labels: ArrayLike | None = ...,
                 pos_label: Any = ..., from_logits: bool = ..., row_sum_tol: float | None = ...,
                 **options: Any) -> GroupECE: ...
def bayesian_ece(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    by: ArrayLike | None = None,
    y_pred: ArrayLike | None = None,
    n_bins: int | None = None,
    binning: BinningSpec | Binning | None = None,
    num_samples: int = 10_000,
    seed: Seed = 0,
    model: str | Model = "smooth",
    labels: ArrayLike | None = None,
    pos_label: Any = None,
    from_logits: bool = False,
    row_sum_tol: float | None = None,
    **options: Any,
) -> BayesianECE | GroupECE:
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
    by : array_like of shape (n,), optional
        Each prediction's group (model version, region, subgroup: any values
        of one type, none missing): the posterior of each group's ECE, with
        partial pooling across groups by default (:class:`bece.SmoothGroupModel`;
        ``pooling="none"`` for independent posteriors), as a
        :class:`bece.GroupECE`: each group's interval, the probability that
        it is the worst calibrated, whether its curve differs from the
        shared one, and a warning where pooling may hide a group.
    y_pred : array_like of shape (n,), optional
        Predicted labels: triples (y_pred, y_true, confidence of y_pred).
    n_bins : int, default 15
        Number of bins M.
    binning : {"uniform", "quantile"} or array_like, default "uniform"
        See :mod:`bece._stats.binning`.
    num_samples : int, default 10_000
        Posterior draws.
    seed : int or numpy.random.Generator, default 0
    model : {"smooth", "binned", "conjugate", "literal"} or model object, default "smooth"
        A model object (:class:`bece.SmoothModel`, :class:`bece.BinnedModel`),
        which holds the model's options, or its shorthand.
        ``"smooth"`` (the default, :class:`bece.SmoothModel`): a smooth calibration curve (natural
        cubic spline in logit(p) with a learned smoothness scale) and a
        Bayesian bootstrap over the confidences, by Laplace
        (:func:`bece._smooth.posterior.smooth_ece`), averaged
        with exact calibration by its posterior probability
        (:mod:`bece._smooth.average`), so the interval can reach 0. It pools
        information across bins, so its intervals stay honest at small n
        where the binned posterior's do not (documentation: validation,
        "The smooth model against the binned one"). Its result is a
        :class:`bece.smooth.SmoothBayesianECE`, with ``method="laplace"``, the posterior curve (``.curve`` on
        ``.curve_grid``) and ``prob_calibrated``.
        ``"binned"`` (:class:`bece.BinnedModel`): the reference binned BECE
        model, its conjugate form (closed form below). ``"conjugate"``: the
        same, by name.
        ``"literal"``: the literal BECE model (each confidence a truncated
        Normal within its bin), by exact one-dimensional sampling of each
        bin's mean (:mod:`bece._binned.literal`); ``BinnedModel(form="literal")``.
    labels : array_like, optional
        The class of each column of ``y_prob`` in order (``clf.classes_``)
        when the labels are not ``0 .. K-1``; for a 1-D ``y_prob`` its two
        classes, negative then positive (:mod:`bece._stats.labels`).
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
        strict default (:func:`bece._stats.inputs.row_sum_tolerance`), e.g.
        ``1e-3`` for probabilities written with four decimals; accepted rows
        are used as given, never renormalised.
    **options
        Options of the model, set on its object (an option the model does not
        have raises ``ValueError`` naming the models that have it): for the
        binned model ``alpha`` (Dirichlet concentration per (outcome, bin)
        cell, default 1/(2M)), ``sigma`` and ``tau`` (spread of confidences
        within a bin and prior spread of the bin's mean, default
        w_m/sqrt(12)), ``preset="uncertainty-metrics"`` (reproduce
        google/uncertainty-metrics, :mod:`bece._binned.conjugate`); for the
        smooth model ``prior_odds`` (prior odds of exact calibration,
        default :data:`bece._smooth.average.DEFAULT_PRIOR_ODDS` = 0.02,
        chosen by the validation study; 0 gives the smooth model alone) and
        the others of :class:`bece.SmoothModel`. ``sample_weight`` is not
        supported: the models count predictions, so a weight raises
        ``ValueError`` (the plug-in metrics of :mod:`bece.metrics` take it).

    Returns
    -------
    BayesianECE
        ``.draws``, ``.mean``, ``.interval(0.9)``, ``.hdi(0.9)``,
        ``.plugin``, ``.to_inference_data()``, ``.summary()``.

    Notes
    -----
    The binned posterior is the closed form of :func:`conjugate_posterior`; each
    draw's ECE is :math:`\\sum_m |q_{1,m} - (q_{0,m}+q_{1,m})\\mu_m|`.

    Examples
    --------
    >>> import numpy as np
    >>> from bece import bayesian_ece
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = rng.uniform(size=2000) < p          # calibrated by construction
    >>> r = bayesian_ece(y, p, n_bins=10, seed=1)     # the smooth model, averaged
    >>> bool(r.interval(0.9)[0] == 0.0), bool(r.prob_calibrated > 0.5)
    (True, True)
    >>> b = bayesian_ece(y, p, n_bins=10, seed=1, model="binned")   # the reference
    >>> bool(b.interval(0.9)[0] > 0.0)                 # its interval cannot reach 0
    True
    """
    refuse_sample_weight(options.pop("sample_weight", None))
    inputs = Inputs(labels, pos_label, from_logits, row_sum_tol)
    if by is not None:  # the groups' model: SmoothGroupModel
        group_model = resolve_model(model, "groups", n_bins=n_bins, binning=binning, **options)
        return group_model._groups_from_predictions(  # type: ignore[attr-defined]
            y_true, y_prob, y_pred, by, inputs, num_samples=num_samples, seed=seed)
    if "pooling" in options:
        raise ValueError("pooling applies to groups: pass by= (each prediction's group)")
    obj = resolve_model(model, "binary", n_bins=n_bins, binning=binning, **options)
    return obj._from_predictions(y_true, y_prob, y_pred, inputs,  # type: ignore[attr-defined]
                                 num_samples=num_samples, seed=seed)


def posterior_top_label_ece(
    stats: LabelStats | Sequence[CalibrationStats],
    labels: ArrayLike | None = None,
    *,
    average: str = "label",
    num_samples: int | None = None,
    seed: Seed = 0,
    keep_bins: bool | str = "auto",
    model: str | Model = "binned",
    n_bins: int | None = None,
    binning: BinningSpec | Binning | None = None,
    **options: Any,
) -> BayesianTopLabelECE:
    """Posterior over the top-label ECE from per-label statistics.

    Parameters
    ----------
    stats : LabelStats or sequence of L CalibrationStats
        One per predicted label, sharing bins (e.g. from
        ``BinnedModel().label_statistics(y, prob)``, possibly summed over
        chunks).
    labels : array_like of shape (L,), optional
        The labels' names with a sequence of statistics; default ``0 .. L-1``.
    average : {"label", "sample"}, default "label"
    num_samples : int, optional
        Posterior draws; default 10,000, fewer (at least 1,000) when L·M is
        large (:func:`bece._binned.toplabel.default_num_samples`).
    seed : int or numpy.random.Generator, default 0
    keep_bins : {"auto", True, False}, default "auto"
        Keep the (S, L, M) per-(label, bin) draws ("auto": when
        ``S * L * M <= 10**7``).
    model : {"binned", "conjugate", "literal", "smooth"} or model object, default "binned"
        ``"binned"``, ``"conjugate"``, ``"literal"`` (:class:`bece.BinnedModel`):
        the binned model in each (label, bin) cell
        (:func:`bece._binned.binned_posterior_top_label_ece`).
        ``"smooth"``: the hierarchical smooth model, a shared calibration
        curve plus a per-label logit shift and slope change, each of learned
        scale (:func:`bece._smooth.toplabel.smooth_posterior_top_label_ece`), from
        statistics in fine bins that refine the ECE bins
        (:class:`bece.SmoothTopLabelModel`).
    n_bins, binning : optional
        ``model="smooth"`` only: the ECE bins (default 15 uniform) that the
        bins of ``stats`` refine.
    **options
        Options of the model, set on its object: ``alpha``, ``sigma``,
        ``tau`` for the binned model
        (:func:`bece._binned.toplabel.top_label_posterior`), ``prior_odds``
        and the others of :class:`bece.SmoothTopLabelModel`.

    Returns
    -------
    BayesianTopLabelECE

    Examples
    --------
    Per-label statistics of two chunks, summed label by label:

    >>> import numpy as np
    >>> from bece import posterior_top_label_ece
    >>> from bece._binned.toplabel import top_label_statistics
    >>> rng = np.random.default_rng(0)
    >>> prob = rng.dirichlet(np.ones(3), size=2000)
    >>> y = (rng.uniform(size=(2000, 1)) > prob.cumsum(axis=1)).sum(axis=1)   # calibrated
    >>> labels, first = top_label_statistics(y[:1000], prob[:1000], n_bins=10)
    >>> _, rest = top_label_statistics(y[1000:], prob[1000:], n_bins=10)
    >>> stats = [a + b for a, b in zip(first, rest)]
    >>> [s.n for s in stats]                           # how often each label is predicted
    [662, 645, 693]
    >>> r = posterior_top_label_ece(stats, labels, num_samples=2000, seed=1)
    >>> r.model, r.n_labels, r.label_draws.shape, bool(r.interval(0.9)[1] < 0.1)
    ('binned-top-label', 3, (2000, 3), True)
    """
    if not isinstance(stats, LabelStats):
        if isinstance(stats, CalibrationStats) or not isinstance(stats, Sequence):
            raise ValueError("stats must be a LabelStats or a sequence of CalibrationStats, one "
                             f"per label, got {type(stats).__name__}")
        stats = LabelStats(np.arange(len(stats)) if labels is None else labels, stats)
    elif labels is not None:
        raise ValueError("labels do not apply to a LabelStats, which holds its labels")
    obj = resolve_model(model, "top-label", n_bins=n_bins, binning=binning, **options)
    return obj.posterior(stats, num_samples=num_samples, seed=seed,  # type: ignore[attr-defined]
                         average=average, keep_bins=keep_bins)


def bayesian_top_label_ece(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    y_pred: ArrayLike | None = None,
    n_bins: int | None = None,
    binning: BinningSpec | Binning | None = None,
    average: str = "label",
    num_samples: int | None = None,
    seed: Seed = 0,
    keep_bins: bool | str = "auto",
    model: str | Model = "smooth",
    labels: ArrayLike | None = None,
    from_logits: bool = False,
    row_sum_tol: float | None = None,
    **options: Any,
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
    num_samples : int, optional
        Posterior draws; default 10,000, fewer (at least 1,000) for many
        labels (:func:`bece._binned.toplabel.default_num_samples`).
    seed : int or numpy.random.Generator, default 0
    keep_bins : {"auto", True, False}, default "auto"
        Keep the per-(label, bin) draws (when ``S * L * M <= 10**7``).
    model : {"smooth", "binned", "conjugate", "literal"} or model object, default "smooth"
        A model object (:class:`bece.SmoothTopLabelModel`,
        :class:`bece.BinnedModel`) or its shorthand.
        ``"smooth"`` (the default): the hierarchical smooth model
        (:mod:`bece._smooth.toplabel`): each label's curve is a shared smooth
        calibration curve plus a logit shift and slope change, each of
        learned scale, so labels with few predictions borrow from the
        others, averaged with exact
        calibration of every label by its posterior probability
        (``prob_calibrated``).
        Same result type, ``model="smooth-top-label"``, ``method="laplace"``.
        ``"binned"`` (the reference form), ``"conjugate"``, ``"literal"``:
        the binned model in every (label, bin) cell, each estimated on its
        own; with many labels
        its cells hold a handful of predictions each and its intervals lie
        above the truth (documentation: validation, "Top-label").
    labels : array_like, optional
        The class of each column of ``y_prob`` in order (``clf.classes_``);
        the result's ``labels`` are then these classes.
    from_logits : bool, default False
        ``y_prob`` holds logits: the top softmax probability of each row,
        in float64 block by block (10^6 x 1,000 float32 logits need no
        float64 copy).
    row_sum_tol : float, optional
        Row-sum tolerance instead of the strict default; rows used as given.
    **options
        Options of the model, set on its object: ``alpha``, ``sigma``,
        ``tau`` (the binned model's prior, :mod:`bece._binned.toplabel`);
        ``prior_odds`` (prior odds that every label is exactly calibrated,
        default :data:`bece._smooth.average.DEFAULT_PRIOR_ODDS`; 0: the
        hierarchical model alone) and the others of
        :class:`bece.SmoothTopLabelModel`. ``sample_weight`` is not
        supported (``ValueError``), as in :func:`bayesian_ece`.

    Returns
    -------
    BayesianTopLabelECE
        A :class:`~bece._results.ece.BayesianECE` (``draws``, ``interval``,
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
    >>> r = bayesian_top_label_ece(y, prob, n_bins=10, seed=1, num_samples=2000)
    >>> r.model, r.label_draws.shape, bool(abs(r.plugin - top_label_ece(y, prob, n_bins=10)) < 1e-12)
    ('smooth-top-label', (2000, 3), True)
    >>> b = bayesian_top_label_ece(y, prob, n_bins=10, seed=1, model="binned")
    >>> b.model, bool(b.plugin == r.plugin)
    ('binned-top-label', True)
    """
    refuse_sample_weight(options.pop("sample_weight", None))
    obj = resolve_model(model, "top-label", n_bins=n_bins, binning=binning, **options)
    inputs = Inputs(labels, None, from_logits, row_sum_tol)
    return obj._top_label_from_predictions(  # type: ignore[attr-defined]
        y_true, y_prob, y_pred, inputs, average=average, num_samples=num_samples, seed=seed,
        keep_bins=keep_bins)
