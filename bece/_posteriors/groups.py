"""Calibration by group as a model object: options, statistics, fast path, NumPyro model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from numpy.typing import ArrayLike

from .._base.typing import BinningSpec, Seed
from .._results.groups import GroupECE
from .._smooth.atoms import DEFAULT_SUBCELLS, fine_binning
from .._smooth.average import DEFAULT_PRIOR_ODDS
from .._smooth.basis import DEFAULT_N_KNOTS
from .._smooth.posterior import check_prior_odds
from .._smooth.scale_prior import SHARED_PROB
from .._stats.binning import Binning, check_n_bins
from .._stats.groups import GroupStats
from .._stats.inputs import Inputs
from .base import Model, NumPyroModel

__all__ = ["SmoothGroupModel"]


@dataclass(frozen=True)
class SmoothGroupModel(Model):
    """Each group's ECE, with partial pooling across groups (``by=``).

    Groups (model versions, regions, subgroups) take the place of the labels
    of the hierarchical top-label model: each group's calibration curve is a
    shared smooth curve plus the group's own logit shift and slope change,
    each of learned spread; each group's draws are averaged with its exact
    calibration, weighed on its own data (:mod:`bece._smooth.groups`). ``pooling="none"`` gives each group the
    binary smooth model on its own data (what :func:`bece.bayesian_ece`
    gives for that group).

    Parameters
    ----------
    n_bins, binning
        The ECE bins (default 15 uniform; "quantile" is refused: the groups
        need common bins).
    pooling : {"partial", "none"}, default "partial"
    n_knots, intercept_scale, slope_scale, smoothness_scale
        The curve and its prior (:class:`bece.SmoothModel`).
    group_scale, tilt_scale, shared_prob
        The prior of the groups' shifts and slope changes
        (:class:`bece.SmoothTopLabelModel`'s ``label_scale``, ``tilt_scale``,
        ``shared_prob``).
    prior_odds : float, default :data:`bece._smooth.average.DEFAULT_PRIOR_ODDS`
        Prior odds that a group is exactly calibrated (each group's own
        data weigh it: :mod:`bece._smooth.groups`).

    Examples
    --------
    >>> import numpy as np
    >>> from bece import SmoothGroupModel
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> version = np.repeat(["v1", "v2"], 1000)
    >>> y = rng.uniform(size=2000) < p
    >>> model = SmoothGroupModel(n_bins=10)
    >>> stats = model.group_statistics(y, p, by=version)
    >>> r = model.posterior(stats, num_samples=2000, seed=1)
    >>> r.groups.tolist(), r.pooling, bool(r.interval(0.9)[0].max() == 0.0)
    (['v1', 'v2'], 'partial', True)
    """

    n_bins: int | None = None
    binning: BinningSpec | Binning = "uniform"
    pooling: str = "partial"
    n_knots: int = DEFAULT_N_KNOTS
    intercept_scale: float = 1.0
    slope_scale: float = 0.5
    smoothness_scale: float = 0.5
    group_scale: float = 0.5
    tilt_scale: float = 0.25
    shared_prob: float = SHARED_PROB
    prior_odds: float = DEFAULT_PRIOR_ODDS

    shorthand: ClassVar[str] = "smooth"
    tasks: ClassVar[tuple[str, ...]] = ("groups",)
    compares: ClassVar[str] = (
        "each group's ECE and curve (the hierarchical top-label model with groups as labels)")

    name = "smooth-groups"

    def __post_init__(self) -> None:
        from .._smooth.groups import POOLINGS

        if self.n_bins is not None:
            check_n_bins(self.n_bins)
        if isinstance(self.binning, str) and self.binning in ("quantile", "equal-mass"):
            raise ValueError("binning='quantile' is not supported by group: the groups need "
                             "common bins; use 'uniform' or explicit edges")
        if self.pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {POOLINGS}, got {self.pooling!r}")
        if not 0 <= self.shared_prob < 1:
            raise ValueError(f"shared_prob must be in [0, 1), got {self.shared_prob!r}")
        check_prior_odds(self.prior_odds)
        self._check_spline(("intercept_scale", "slope_scale", "smoothness_scale", "group_scale",
                            "tilt_scale"))

    def fine_binning(self) -> Binning:
        """The bins its statistics are collected in (:func:`bece.smooth.fine_binning`)."""
        return fine_binning(self.n_bins, self.binning, grid=DEFAULT_SUBCELLS)

    def group_statistics(self, y_true: ArrayLike, y_prob: ArrayLike, *, by: ArrayLike,
                         y_pred: ArrayLike | None = None, labels: ArrayLike | None = None,
                         pos_label: Any = None, from_logits: bool = False,
                         row_sum_tol: float | None = None) -> GroupStats:
        """Each group's counts and confidence sums in :meth:`fine_binning`
        (add days, files or chunks with ``+``). ``by`` holds each
        prediction's group; the predictions are read once, for all groups
        (input keywords as :meth:`bece.CalibrationStats.from_arrays`)."""
        from .._stats.inputs import as_outcomes, input_kind

        z, p = as_outcomes(y_true, y_prob, y_pred, Inputs(labels, pos_label, from_logits,
                                                          row_sum_tol))
        return GroupStats.from_arrays(self.fine_binning(), by, z, p, input_kind(y_prob, y_pred))

    def posterior(self, stats: GroupStats, *, num_samples: int | None = None,
                  seed: Seed = 0) -> GroupECE:
        """The fast path from per-group fine statistics (:func:`bece._smooth.groups.group_posterior`)."""
        from .._smooth.groups import group_posterior

        if not isinstance(stats, GroupStats):
            raise ValueError(f"stats must be a GroupStats (SmoothGroupModel.group_statistics), "
                             f"got {type(stats).__name__}")
        return group_posterior(
            stats, pooling=self.pooling, n_bins=self.n_bins, binning=self.binning,
            num_samples=num_samples, seed=seed, prior_odds=self.prior_odds,
            curve={k: getattr(self, k) for k in ("n_knots", "intercept_scale", "slope_scale",
                                                  "smoothness_scale")},
            pooled={"label_scale": self.group_scale, "tilt_scale": self.tilt_scale,
                    "shared_prob": self.shared_prob})

    def _groups_from_predictions(self, y_true: ArrayLike, y_prob: ArrayLike,
                                 y_pred: ArrayLike | None, by: ArrayLike, inputs: Inputs, *,
                                 num_samples: int | None = None, seed: Seed = 0) -> GroupECE:
        stats = self.group_statistics(y_true, y_prob, by=by, y_pred=y_pred, labels=inputs.labels,
                                      pos_label=inputs.pos_label, from_logits=inputs.from_logits,
                                      row_sum_tol=inputs.row_sum_tol)
        return self.posterior(stats, num_samples=num_samples, seed=seed)

    def numpyro(self, stats: GroupStats) -> NumPyroModel:
        """:func:`bece.models.top_label_smooth_model` with the groups as its
        labels, and its arguments for per-group fine statistics (partial pooling)."""
        from .._posteriors.smooth import SmoothTopLabelModel

        if self.pooling != "partial":
            raise ValueError("pooling='none' fits the binary smooth model to each group: use "
                             "SmoothModel().numpyro(stats.stats[j]) for group j")
        model = SmoothTopLabelModel(
            n_bins=self.n_bins, binning=self.binning, n_knots=self.n_knots,
            intercept_scale=self.intercept_scale, slope_scale=self.slope_scale,
            smoothness_scale=self.smoothness_scale, label_scale=self.group_scale,
            tilt_scale=self.tilt_scale, shared_prob=self.shared_prob, prior_odds=self.prior_odds)
        return model.numpyro(stats)

    def cross_check(self, stats: GroupStats, **kwargs: Any) -> Any:
        """Refused, with where the check lives: the partial-pooling fit is the
        hierarchical top-label model's fast path, which
        ``bece.cross_check(y_true, y_prob, top_label=True)`` checks by NUTS."""
        raise ValueError(
            "SmoothGroupModel has no cross-check of its own: its partial-pooling posterior is the "
            "hierarchical top-label model's fast path with the groups as labels, checked by NUTS "
            "through bece.cross_check(..., top_label=True); pooling='none' is the binary smooth "
            "model's (bece.cross_check(y_true, y_prob) on a group's predictions)")
