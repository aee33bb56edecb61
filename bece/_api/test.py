"""Is the classifier calibrated? The test of exact calibration, against the
alternative that ``model=`` names (:mod:`bece._smooth.bayes_factor`); and
has its calibration drifted from a reference window (:func:`drift_test`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._base.typing import BinningSpec, Seed
from .._metrics.drift import DEFAULT_ALPHA, MIN_COUNT
from .._posteriors import Model, resolve_model
from .._results.drift import Drift
from .._results.groups import GroupECE
from .._smooth.average import DEFAULT_PRIOR_ODDS
from .._smooth.bayes_factor import CalibrationTest
from .._stats.binning import Binning
from .._stats.groups import GroupStats
from .._stats.inputs import Inputs

__all__ = ["calibration_test", "drift_test"]


def calibration_test(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    y_pred: ArrayLike | None = None,
    model: str | Model = "smooth",
    num_resamples: int = 1000,
    prior_odds: float = DEFAULT_PRIOR_ODDS,
    num_samples: int = 2000,
    seed: Seed = 0,
    labels: ArrayLike | None = None,
    pos_label: Any = None,
    from_logits: bool = False,
    row_sum_tol: float | None = None,
    **options: Any,
) -> CalibrationTest:
    """Test whether a classifier is perfectly calibrated.

    Two answers from one call: a consistency-resampling p-value of the
    plug-in ECE, and the Bayes factor of the identity curve against the
    smooth calibration-curve model (:mod:`bece._smooth.bayes_factor`).

    Parameters
    ----------
    y_true, y_prob, y_pred
        As :func:`bece.bayesian_ece` (binary, top-label or (y_pred, y_true,
        confidence) triples).
    model : "smooth" or SmoothModel, default "smooth"
        The alternative: :class:`bece.SmoothModel`, whose ``n_bins`` and
        ``binning`` are the bins of the statistic, ``grid`` its atoms (exact
        up to 2,000 predictions) and ``n_knots`` and the ``*_scale`` options
        its spline and prior (:func:`bece._smooth.fit.fit_smooth`).
    num_resamples : int, default 1000
        Consistency resamples B; the smallest attainable p-value is 1/(B+1).
    prior_odds : float, default 0.02
        :math:`P(\\text{calibrated})/P(\\text{not})` before seeing the data,
        for ``prob_calibrated``: the same default as the averaging of
        :func:`bece.bayesian_ece`, so that both report one posterior
        probability of exact calibration. The verdict reads the Bayes factor,
        which needs no prior odds.
    num_samples : int, default 2000
        Importance samples for the smooth model's marginal likelihood
        (:func:`bece._smooth.draws.importance_draws`; the Laplace value is used if
        their Pareto :math:`\\hat k` is 0.7 or more).
    seed : int or numpy.random.Generator, default 0
    labels, pos_label, from_logits, row_sum_tol
        How ``y_true`` and ``y_prob`` are read, as in :func:`bece.bayesian_ece`
        (:mod:`bece._stats.labels`).
    **options
        Options of the model, set on its object: ``n_bins``, ``binning``,
        ``grid``, ``n_knots``, ``intercept_scale``, ``slope_scale``,
        ``smoothness_scale``, ``bin_scale``.

    Returns
    -------
    CalibrationTest
        ``.p_value``, ``.bayes_factor``, ``.prob_calibrated`` (at
        ``prior_odds``), ``.statistic``, ``.verdict()``.

    See Also
    --------
    bece.SmoothModel.calibration_test : the same test from statistics summed over chunks.

    Examples
    --------
    >>> import numpy as np
    >>> from bece import calibration_test
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> t = calibration_test(rng.uniform(size=2000) < p, p, seed=1)   # calibrated
    >>> bool(t.p_value > 0.05), bool(t.prob_calibrated > 0.5)
    (True, True)
    >>> t = calibration_test(rng.uniform(size=2000) < p**1.5, p, seed=1)
    >>> bool(t.p_value < 0.01), bool(t.prob_calibrated < 0.01)
    (True, True)
    """
    obj = resolve_model(model, "test", **options)
    return obj._test_predictions(  # type: ignore[attr-defined]
        y_true, y_prob, y_pred, Inputs(labels, pos_label, from_logits, row_sum_tol),
        num_resamples=num_resamples, prior_odds=prior_odds, num_samples=num_samples, seed=seed)


def drift_test(
    stats: GroupStats | GroupECE,
    *,
    reference: int | Sequence[Any] = 1,
    alpha: float = DEFAULT_ALPHA,
    min_count: int = MIN_COUNT,
    n_bins: int | None = None,
    binning: BinningSpec | Binning = "uniform",
) -> Drift:
    """Has calibration drifted from a reference window? One test per window.

    Each window after the reference is compared with it bin by bin: its
    calibration gaps (observed frequency minus mean confidence) against the
    reference's, by a chi-squared statistic whose false-alarm rate per window
    is ``alpha`` (:mod:`bece._metrics.drift`; the validation page, "Drift",
    gives the measured rate, the run length to a false alarm and the delay
    to detect a drift).

    Parameters
    ----------
    stats : GroupStats or GroupECE
        Statistics per window (:meth:`bece.SmoothGroupModel.group_statistics`
        with ``by=`` each prediction's window, e.g. from
        ``bece.io.window_starts``), or the result of ``bece.bayesian_ece(...,
        by=windows)``; windows are taken in sorted order.
    reference : int or sequence, default 1
        The first ``reference`` windows, pooled, or the names of the windows
        to pool.
    alpha : float, default 0.01
        False-alarm rate per window.
    min_count : int, default 10
        Predictions a bin needs in both the window and the reference to count.
    n_bins, binning
        The ECE bins the windows are compared in (default 15 uniform), which
        the bins of ``stats`` refine (fine statistics are added up to them).

    Returns
    -------
    Drift
        ``alarm``, ``p_value``, ``first_alarm``, ``drifted`` (the last window
        alarms), ``text()``, ``to_dict()``.

    Examples
    --------
    >>> import numpy as np
    >>> import bece
    >>> rng = np.random.default_rng(1)
    >>> week = np.repeat(np.arange(6), 3000)
    >>> p = rng.uniform(size=week.size)
    >>> y = rng.uniform(size=week.size) < p                 # stationary, calibrated
    >>> d = bece.drift_test(bece.SmoothGroupModel().group_statistics(y, p, by=week))
    >>> d.windows.tolist(), d.drifted
    ([1, 2, 3, 4, 5], False)
    """
    from .._base.checks import check_prob, positive_int
    from .._metrics.drift import drift_statistic

    if isinstance(stats, GroupECE):
        stats = stats.stats
    if not isinstance(stats, GroupStats):
        raise ValueError(f"stats must be a GroupStats (one per window) or a GroupECE, got "
                         f"{type(stats).__name__}")
    alpha = check_prob(alpha)
    min_count = positive_int(min_count, "min_count")
    from .._smooth.toplabel_atoms import coarse_label_stats, label_cells_from_stats

    *_, cell_bin, coarse = label_cells_from_stats(stats.stats, n_bins, binning)
    stats = GroupStats(stats.groups, coarse_label_stats(stats.stats, cell_bin, coarse))
    names = stats.groups
    if isinstance(reference, (int, np.integer)) and not isinstance(reference, bool):
        r = int(reference)
        if not 1 <= r < names.size:
            raise ValueError(f"reference must be between 1 and {names.size - 1} windows (there "
                             f"are {names.size}), got {reference}")
        ref_idx = list(range(r))
    else:
        wanted = list(reference)  # type: ignore[arg-type]
        where = {w: j for j, w in enumerate(names.tolist())}
        missing = [w for w in wanted if w not in where]
        if missing or not wanted:
            raise ValueError(f"reference names no window {missing[:1] or wanted!r}; the windows "
                             f"are {names.tolist()[:10]}")
        ref_idx = sorted(where[w] for w in wanted)
        if len(ref_idx) == names.size:
            raise ValueError("reference holds every window: none is left to test")
    pooled = sum((stats.stats[j] for j in ref_idx[1:]), stats.stats[ref_idx[0]])
    in_reference = set(ref_idx)
    rest = [j for j in range(names.size) if j not in in_reference]
    rows = [drift_statistic(stats.stats[j], pooled, min_count) for j in rest]
    return Drift(windows=names[rest], reference=names[ref_idx],
                 statistic=np.array([t for t, _, _ in rows]),
                 df=np.array([k for _, k, _ in rows], dtype=np.int64),
                 p_value=np.array([p for _, _, p in rows]),
                 n=np.array([stats.stats[j].n for j in rest], dtype=np.int64),
                 alpha=alpha, min_count=min_count)
