"""The smooth calibration-curve models as objects: the binary one and the hierarchical top-label one.

Each holds its options; its NumPyro model (:mod:`bece.models._smooth`,
:mod:`bece.models._toplabel_smooth`); its statistics, counts and confidence
sums in fine bins that refine the ECE bins (mergeable with ``+``); its fast
path (Laplace over the curve, Bayesian bootstrap over the confidences,
averaged with exact calibration); and its cross-check (NUTS on the NumPyro
model, which runs on the predictions).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from .._base.typing import BinningSpec, Seed
from .._results.comparison import Comparison
from .._results.ece import BayesianTopLabelECE, SmoothBayesianECE
from .._smooth.atoms import DEFAULT_SUBCELLS, atoms_and_ece_stats, check_grid, fine_binning
from .._smooth.average import DEFAULT_PRIOR_ODDS
from .._smooth.basis import DEFAULT_N_KNOTS
from .._smooth.bayes_factor import CalibrationTest
from .._smooth.posterior import check_prior_odds, smooth_ece, smooth_posterior_ece
from .._smooth.scale_prior import SHARED_PROB
from .._smooth.zero_gaps import DEFAULT_ZERO_GAP_PRIOR, check_zero_gap_prior
from .._stats.binning import Binning, check_n_bins
from .._stats.calibration_stats import CalibrationStats, statistics_of
from .._stats.inputs import Inputs
from .._stats.label_stats import LabelStats
from .._stats.paired_stats import PairedStats
from .._validation.agreement import CrossCheck
from .._validation.settings import MCMCSettings
from .base import Model, NumPyroModel

__all__ = ["SmoothModel", "SmoothTopLabelModel"]


def _needs_predictions(model: Model) -> ValueError:
    return ValueError(f"{type(model).__name__}'s cross-check runs NUTS on the predictions: pass "
                      "y_true and y_prob, not statistics")


@dataclass(frozen=True)
class SmoothModel(Model):
    """The smooth calibration-curve model, averaged with exact calibration (the default).

    :math:`P(z = 1 \\mid p)` is a natural cubic spline in logit(p) with a
    learned smoothness scale (and per-bin deviations of learned scale), the
    confidences a Bayesian bootstrap; its posterior is averaged with the
    identity curve (ECE exactly 0) by their posterior probabilities, so the
    interval can reach 0 (:mod:`bece.smooth`).

    Parameters
    ----------
    n_bins : int, optional
        ECE bins M (default 15).
    binning : {"uniform", "quantile"}, array_like of edges or Binning, default "uniform"
    n_knots, intercept_scale, slope_scale, smoothness_scale, bin_scale
        The spline and its prior (:func:`bece._smooth.fit.fit_smooth`).
    grid : "auto", None or int, default "auto"
        Atoms: one per prediction (None), or ``grid`` sub-cells per ECE bin;
        "auto": exact up to 2,000 predictions, 128 sub-cells above (and for
        statistics).
    prior_odds : float, default :data:`bece._smooth.average.DEFAULT_PRIOR_ODDS`
        Prior odds of exact calibration; 0 gives the smooth model alone.
    zero_gap_prior : float, default :data:`bece._smooth.zero_gaps.DEFAULT_ZERO_GAP_PRIOR`
        Prior probability of each ECE bin's gap being exactly 0.

    Examples
    --------
    >>> import numpy as np
    >>> from bece import SmoothModel
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=3000)
    >>> y = rng.uniform(size=3000) < p
    >>> model = SmoothModel(n_bins=10)
    >>> stats = model.statistics(y[:1000], p[:1000]) + model.statistics(y[1000:], p[1000:])
    >>> stats.n_bins > 10 * 128                        # 10 ECE bins x 128 sub-cells, ends cut finer
    True
    >>> r = model.posterior(stats, num_samples=2000, seed=1)
    >>> r.model, r.stats.n_bins, bool(r.interval(0.9)[0] == 0.0)
    ('smooth', 10, True)
    """

    n_bins: int | None = None
    binning: BinningSpec | Binning = "uniform"
    n_knots: int = DEFAULT_N_KNOTS
    intercept_scale: float = 1.0
    slope_scale: float = 0.5
    smoothness_scale: float = 0.5
    bin_scale: float | None = 0.25
    grid: str | int | None = "auto"
    prior_odds: float = DEFAULT_PRIOR_ODDS
    zero_gap_prior: float = DEFAULT_ZERO_GAP_PRIOR

    shorthand: ClassVar[str] = "smooth"
    tasks: ClassVar[tuple[str, ...]] = ("binary", "paired", "test")
    compares: ClassVar[str] = (
        "the ECE, each bin's accuracy and the curve at 9 confidences at their 5, 50 and 95% "
        "quantiles; P(exactly calibrated) by bridge sampling; P(tau > 0.3)")

    def __post_init__(self) -> None:
        if self.n_bins is not None:
            check_n_bins(self.n_bins)
        check_grid(self.grid, 1)
        check_prior_odds(self.prior_odds)
        check_zero_gap_prior(self.zero_gap_prior)
        self._check_spline(("intercept_scale", "slope_scale", "smoothness_scale", "bin_scale"))

    name = "smooth"

    @property
    def _laplace_options(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("n_knots", "intercept_scale", "slope_scale",
                                               "smoothness_scale", "bin_scale")}

    def fine_binning(self) -> Binning:
        """The bins its statistics are collected in (:func:`bece.smooth.fine_binning`)."""
        if self.grid is None:
            raise ValueError("grid=None uses one atom per prediction: statistics need "
                             "grid='auto' or a number of sub-cells")
        return fine_binning(self.n_bins, self.binning,
                            grid=DEFAULT_SUBCELLS if self.grid == "auto" else int(self.grid))

    def statistics(self, y_true: ArrayLike, y_prob: ArrayLike, *, y_pred: ArrayLike | None = None,
                   labels: ArrayLike | None = None, pos_label: Any = None,
                   from_logits: bool = False, row_sum_tol: float | None = None) -> CalibrationStats:
        """Counts and confidence sums in :meth:`fine_binning` (add chunks with
        ``+``; input keywords as :meth:`bece.CalibrationStats.from_arrays`)."""
        return statistics_of(y_true, y_prob, y_pred, None, self.fine_binning(),
                             Inputs(labels, pos_label, from_logits, row_sum_tol))

    def posterior(self, stats: CalibrationStats, *, num_samples: int | None = None,
                  seed: Seed = 0) -> SmoothBayesianECE:
        """The fast path from fine statistics (:func:`bece.smooth.smooth_posterior_ece`)."""
        if not isinstance(stats, CalibrationStats):
            raise ValueError(f"stats must be a CalibrationStats in fine bins "
                             f"(SmoothModel.statistics), got {type(stats).__name__}")
        result = smooth_posterior_ece(
            stats, n_bins=self.n_bins, binning=self.binning, **self._laplace_options,
            num_samples=10_000 if num_samples is None else num_samples, seed=seed,
            prior_odds=self.prior_odds, zero_gap_prior=self.zero_gap_prior)
        return replace(result, stats=result.stats.with_kind(stats.kind))

    def _from_predictions(self, y_true: ArrayLike, y_prob: ArrayLike, y_pred: ArrayLike | None,
                          inputs: Inputs, *, num_samples: int | None = None,
                          seed: Seed = 0) -> SmoothBayesianECE:
        from .._stats.inputs import as_outcomes, input_kind

        # the model reads (outcome, confidence) pairs: read them with the
        # inputs, and record how they were read on its statistics
        z, p = as_outcomes(y_true, y_prob, y_pred, inputs)
        result = smooth_ece(z, p, n_bins=self.n_bins, binning=self.binning, grid=self.grid,
                            **self._laplace_options, prior_odds=self.prior_odds,
                            zero_gap_prior=self.zero_gap_prior, seed=seed,
                            num_samples=10_000 if num_samples is None else num_samples)
        return replace(result, stats=result.stats.with_kind(input_kind(y_prob, y_pred)))

    # ------------------------------------------------------------ test
    TEST_OPTIONS: ClassVar[tuple[str, ...]] = (
        "n_bins", "binning", "n_knots", "intercept_scale", "slope_scale", "smoothness_scale",
        "bin_scale", "grid")

    def calibration_test(self, stats: CalibrationStats, *, num_resamples: int = 1000,
                         prior_odds: float | None = None, num_samples: int = 2000,
                         seed: Seed = 0) -> CalibrationTest:
        """Is it calibrated? :func:`bece.calibration_test` from fine statistics.

        The statistics (:meth:`statistics`, possibly summed over chunks)
        give the atoms that :func:`bece.calibration_test` builds with
        ``grid=128`` on the same predictions: with the same seed, the same
        p-value and Bayes factor. ``prior_odds`` sets the test's
        ``prob_calibrated`` (default: the model's ``prior_odds``, so that the
        test and the model's posterior report one probability of exact
        calibration); the verdict reads the Bayes factor alone.

        Examples
        --------
        >>> import numpy as np
        >>> from bece import SmoothModel, calibration_test
        >>> rng = np.random.default_rng(0)
        >>> p = rng.uniform(size=6000); y = rng.uniform(size=6000) < p
        >>> model = SmoothModel()
        >>> stats = sum(model.statistics(y[i:i + 2000], p[i:i + 2000]) for i in range(0, 6000, 2000))
        >>> t = model.calibration_test(stats, seed=1)
        >>> u = calibration_test(y, p, grid=128, seed=1)
        >>> t.p_value == u.p_value, bool(abs(t.log_bayes_factor - u.log_bayes_factor) < 1e-9)
        (True, True)
        """
        from .._smooth.atoms import atoms_and_ece_stats
        from .._smooth.bayes_factor import calibration_test_of_atoms

        self._uses_only("calibration test", self.TEST_OPTIONS)
        if not isinstance(stats, CalibrationStats):
            raise ValueError(f"stats must be a CalibrationStats in fine bins "
                             f"(SmoothModel.statistics), got {type(stats).__name__}")
        atoms, coarse = atoms_and_ece_stats(stats, self.n_bins, self.binning)
        return calibration_test_of_atoms(
            atoms, coarse.n_bins, stats.kind, num_resamples=num_resamples,
            prior_odds=self.prior_odds if prior_odds is None else prior_odds,
            num_samples=num_samples, spline=self._laplace_options, seed=seed)

    def _test_predictions(self, y_true: ArrayLike, y_prob: ArrayLike, y_pred: ArrayLike | None,
                          inputs: Inputs, **settings: Any) -> CalibrationTest:
        from .._smooth.atoms import check_grid, make_atoms
        from .._smooth.bayes_factor import calibration_test_of_atoms
        from .._stats.binning import make_binning
        from .._stats.inputs import as_outcomes, input_kind

        self._uses_only("calibration test", self.TEST_OPTIONS)
        z, p = as_outcomes(y_true, y_prob, y_pred, inputs)
        bins = make_binning(p, self.n_bins, self.binning)
        atoms = make_atoms(z, p, bins, check_grid(self.grid, p.size))
        return calibration_test_of_atoms(atoms, bins.n_bins, input_kind(y_prob, y_pred),
                                         spline=self._laplace_options, **settings)

    # ---------------------------------------------------------- paired
    PAIRED_OPTIONS: ClassVar[tuple[str, ...]] = ("n_bins", "binning", "grid", "prior_odds")

    def paired_statistics(self, y_true: ArrayLike, y_prob_a: ArrayLike, y_prob_b: ArrayLike, *,
                          y_pred_a: ArrayLike | None = None, y_pred_b: ArrayLike | None = None,
                          labels: ArrayLike | None = None, pos_label: Any = None,
                          from_logits: bool = False, row_sum_tol: float | None = None) -> PairedStats:
        """Joint statistics of two models' predictions in :meth:`fine_binning`
        (add chunks with ``+``; input keywords as :meth:`bece.PairedStats.from_arrays`)."""
        return PairedStats.from_arrays(y_true, y_prob_a, y_prob_b, y_pred_a=y_pred_a,
                                       y_pred_b=y_pred_b, binning=self.fine_binning(),
                                       labels=labels, pos_label=pos_label,
                                       from_logits=from_logits, row_sum_tol=row_sum_tol)

    def paired_posterior(self, stats: PairedStats, *, num_samples: int | None = None,
                         seed: Seed = 0, progress: bool = False,
                         binning_b: BinningSpec | Binning | None = None) -> Comparison:
        """Both models' smooth curves from joint fine statistics
        (:func:`bece._smooth.paired.smooth_compare_from_stats`, which
        draws without a progress bar); ``binning_b``: B's ECE bins when they
        differ from A's."""
        from .._smooth.paired import smooth_compare_from_stats

        self._uses_only("paired comparison", self.PAIRED_OPTIONS)
        return smooth_compare_from_stats(
            stats, n_bins=self.n_bins, binning=self.binning, binning_b=binning_b,
            num_samples=10_000 if num_samples is None else num_samples, seed=seed,
            prior_odds=self.prior_odds)

    def _compare_predictions(self, y_true: ArrayLike, y_prob_a: ArrayLike, y_prob_b: ArrayLike,
                             y_preds: tuple[Any, Any], inputs: Inputs, *,
                             num_samples: int | None, seed: Seed, progress: bool) -> Comparison:
        from .._smooth.paired import smooth_compare

        self._uses_only("paired comparison", self.PAIRED_OPTIONS)
        return smooth_compare(y_true, y_prob_a, y_prob_b, y_pred_a=y_preds[0], y_pred_b=y_preds[1],
                              n_bins=self.n_bins, binning=self.binning, grid=self.grid,
                              num_samples=10_000 if num_samples is None else num_samples, seed=seed,
                              prior_odds=self.prior_odds, inputs=inputs)

    def numpyro(self, stats: CalibrationStats) -> NumPyroModel:
        """:func:`bece.models.smooth_model` with its arguments for fine statistics.

        The knots and the prior's scales come from the data's confidences (as
        the fast path sets them); ``z`` and ``trials`` are the data.
        """
        from .._base.laplace import single_threaded_blas
        from .._smooth.fit import fit_smooth
        from .._validation.smooth import smooth_model_kwargs
        from ..models import smooth_model

        atoms, _ = atoms_and_ece_stats(stats, self.n_bins, self.binning)
        with single_threaded_blas():
            post = fit_smooth(atoms, **self._laplace_options)
        return NumPyroModel(smooth_model, (post.basis.knots, post.basis.transform),
                            smooth_model_kwargs(atoms, post), ("z",))

    def cross_check(self, stats: CalibrationStats, *, mcmc: MCMCSettings | None = None,
                    closed_form: SmoothBayesianECE | None = None,
                    average: str = "label") -> CrossCheck:
        """NUTS on :meth:`numpyro` against the fast path, from fine statistics.

        ``stats``: :meth:`statistics` (possibly summed over chunks), whose
        fine cells are the model's atoms, as the fast path reads them above
        2,000 predictions; :func:`bece.cross_check` on the predictions
        themselves uses one atom per prediction up to 2,000 of them. The
        agreement rule of :mod:`bece._validation.agreement` judges the ECE,
        each bin's accuracy, the curve at 9 confidences and the probability
        of exact calibration (``average`` is the top-label models').
        """
        from .._smooth.atoms import atoms_and_ece_stats
        from .._smooth.draws import curve_grid
        from .._validation.smooth import cross_check_smooth_atoms

        if not isinstance(stats, CalibrationStats):
            raise ValueError(f"stats must be a CalibrationStats in fine bins "
                             f"(SmoothModel.statistics), got {type(stats).__name__}")
        mcmc = MCMCSettings() if mcmc is None else mcmc
        atoms, coarse = atoms_and_ece_stats(stats, self.n_bins, self.binning)
        return cross_check_smooth_atoms(atoms, coarse.with_kind(stats.kind), curve_grid(atoms.p),
                                        **self._laplace_options, prior_odds=self.prior_odds,
                                        closed_form=closed_form, **mcmc.as_kwargs())

    def _cross_check_predictions(self, y_true: ArrayLike, y_prob: ArrayLike,
                                 y_pred: ArrayLike | None, *, mcmc: MCMCSettings,
                                 closed_form: Any, average: str, top_label: bool) -> CrossCheck:
        from .._validation.smooth import cross_check_smooth

        return cross_check_smooth(y_true, y_prob, y_pred=y_pred, n_bins=self.n_bins,
                                  binning=self.binning, grid=self.grid, **self._laplace_options,
                                  prior_odds=self.prior_odds, closed_form=closed_form,
                                  **mcmc.as_kwargs())


@dataclass(frozen=True)
class SmoothTopLabelModel(Model):
    """The hierarchical smooth top-label model, averaged with exact calibration (the default).

    Each label's curve is a shared smooth calibration curve plus a logit
    shift and slope change, each of learned scale, so labels with few
    predictions borrow from the others (:mod:`bece._smooth.toplabel`).

    Parameters
    ----------
    n_bins, binning
        The ECE bins (default 15 uniform; "quantile" is refused: the labels
        need common bins).
    n_knots, intercept_scale, slope_scale, smoothness_scale, bin_scale, label_scale, tilt_scale,
    shared_prob
        The shared curve, the labels' deviations and their prior
        (:func:`bece._smooth.toplabel.smooth_top_label_ece`).
    grid : "auto", None or int, default "auto"
    prior_odds : float, default :data:`bece._smooth.average.DEFAULT_PRIOR_ODDS`
        Prior odds that every label is exactly calibrated.

    Examples
    --------
    >>> import numpy as np
    >>> from bece import SmoothTopLabelModel
    >>> rng = np.random.default_rng(0)
    >>> prob = rng.dirichlet(np.ones(3), size=3000)
    >>> y = (rng.uniform(size=(3000, 1)) > prob.cumsum(axis=1)).sum(axis=1)
    >>> model = SmoothTopLabelModel(n_bins=10)
    >>> stats = model.label_statistics(y[:1500], prob[:1500]) + model.label_statistics(y[1500:], prob[1500:])
    >>> r = model.posterior(stats, num_samples=2000, seed=1)
    >>> r.model, r.labels.tolist(), bool(r.interval(0.9)[1] < 0.1)
    ('smooth-top-label', [0, 1, 2], True)
    """

    n_bins: int | None = None
    binning: BinningSpec | Binning = "uniform"
    n_knots: int = DEFAULT_N_KNOTS
    intercept_scale: float = 1.0
    slope_scale: float = 0.5
    smoothness_scale: float = 0.5
    bin_scale: float | None = None
    label_scale: float = 0.5
    tilt_scale: float = 0.25
    shared_prob: float = SHARED_PROB
    grid: str | int | None = "auto"
    prior_odds: float = DEFAULT_PRIOR_ODDS

    shorthand: ClassVar[str] = "smooth"
    tasks: ClassVar[tuple[str, ...]] = ("top-label",)
    compares: ClassVar[str] = (
        "the top-label ECE, each label's ECE and each label's curve at 5 confidences at their "
        "5, 50 and 95% quantiles; P(every label exactly calibrated) by bridge sampling")

    def __post_init__(self) -> None:
        from .._smooth.toplabel_atoms import check_label_grid

        if self.n_bins is not None:
            check_n_bins(self.n_bins)
        check_label_grid(self.grid)
        check_prior_odds(self.prior_odds)
        self._check_spline(("intercept_scale", "slope_scale", "smoothness_scale", "bin_scale",
                            "label_scale", "tilt_scale"))

    name = "smooth-top-label"

    @property
    def _laplace_options(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in (
            "n_knots", "intercept_scale", "slope_scale", "smoothness_scale", "bin_scale",
            "label_scale", "tilt_scale", "shared_prob")}

    def label_statistics(self, y_true: ArrayLike, y_prob: ArrayLike, *,
                         y_pred: ArrayLike | None = None, n_labels: int | None = None,
                         labels: ArrayLike | None = None, from_logits: bool = False,
                         row_sum_tol: float | None = None) -> LabelStats:
        """Per predicted label, counts and sums in the fine bins of
        :func:`bece._smooth.toplabel_atoms.top_label_fine_binning` for
        ``n_labels`` labels (default: the columns of ``y_prob``; pass the
        number of classes when ``y_pred`` is given). Add chunks with ``+``.
        Input keywords as :meth:`bece.BinnedModel.label_statistics`."""
        from .._binned.toplabel import top_label_statistics
        from .._smooth.toplabel_atoms import top_label_fine_binning

        if self.grid is None:
            raise ValueError("grid=None uses one atom per prediction: statistics need "
                             "grid='auto' or a number of sub-cells")
        if n_labels is None:
            shape = np.shape(y_prob)
            if len(shape) != 2 or y_pred is not None:
                raise ValueError("n_labels (the number of classes) is needed unless y_prob is "
                                 "an (n, K) matrix")
            n_labels = shape[1]
        fine = top_label_fine_binning(n_labels, self.n_bins, self.binning, grid=self.grid)
        classes, stats = top_label_statistics(y_true, y_prob, y_pred=y_pred, binning=fine,
                                              inputs=Inputs(labels, None, from_logits, row_sum_tol))
        return LabelStats(classes, stats)

    def posterior(self, stats: LabelStats, *, num_samples: int | None = None, seed: Seed = 0,
                  average: str = "label", keep_bins: bool | str = "auto") -> BayesianTopLabelECE:
        """The fast path from per-label fine statistics
        (:func:`bece._smooth.toplabel.smooth_posterior_top_label_ece`)."""
        from .._smooth.toplabel import smooth_posterior_top_label_ece

        if not isinstance(stats, LabelStats):
            raise ValueError(f"stats must be a LabelStats (SmoothTopLabelModel.label_statistics), "
                             f"got {type(stats).__name__}")
        return smooth_posterior_top_label_ece(
            stats.stats, stats.labels, n_bins=self.n_bins, binning=self.binning,
            grid="auto" if self.grid is None else self.grid, average=average,
            **self._laplace_options, num_samples=num_samples, seed=seed, keep_bins=keep_bins,
            prior_odds=self.prior_odds)

    def _top_label_from_predictions(self, y_true: ArrayLike, y_prob: ArrayLike,
                                    y_pred: ArrayLike | None, inputs: Inputs,
                                    **draws: Any) -> BayesianTopLabelECE:
        from .._metrics.multiclass import top_label_data
        from .._smooth.toplabel import smooth_top_label_ece
        from .._stats.inputs import input_kind

        # read the labels and probabilities here (the model takes the
        # predicted and true class indices and the confidences), then name
        # the labels and record how the predictions were read
        d = top_label_data(y_true, y_prob, y_pred, inputs)
        result = smooth_top_label_ece(
            d.y, d.conf, y_pred=d.pred, n_bins=self.n_bins, binning=self.binning, grid=self.grid,
            **self._laplace_options, prior_odds=self.prior_odds, **draws)
        named = result.labels if d.classes is None else d.classes[result.labels]
        return replace(result, labels=named, stats=result.stats.with_kind(input_kind(y_prob, y_pred)))

    def numpyro(self, stats: LabelStats) -> NumPyroModel:
        """:func:`bece.models.top_label_smooth_model` with its arguments for per-label fine statistics."""
        from .._base.laplace import single_threaded_blas
        from .._smooth.toplabel_atoms import (
            exact_or_grid,
            label_atoms_from_cells,
            label_cells_from_stats,
        )
        from .._smooth.toplabel_fit import fit_top_label_smooth
        from .._validation.smooth_toplabel import top_label_model_kwargs
        from ..models import top_label_smooth_model

        if not isinstance(stats, LabelStats):
            raise ValueError(f"stats must be a LabelStats, got {type(stats).__name__}")
        counts, sp, _, fine, cell_bin, coarse = label_cells_from_stats(stats.stats, self.n_bins,
                                                                       self.binning)
        grid = "auto" if self.grid is None else self.grid
        r = exact_or_grid(grid, 1 << 62, counts.shape[0], coarse.n_bins)
        assert r is not None
        atoms = label_atoms_from_cells(counts, sp, fine, cell_bin, coarse, r)
        with single_threaded_blas():
            post = fit_top_label_smooth(atoms, **self._laplace_options)
        return NumPyroModel(top_label_smooth_model, (post.basis.knots, post.basis.transform),
                            top_label_model_kwargs(atoms, post), ("z",))

    def cross_check(self, stats: LabelStats, *, mcmc: MCMCSettings | None = None,
                    closed_form: BayesianTopLabelECE | None = None,
                    average: str = "label") -> CrossCheck:
        """Refused: the check runs on the predictions (``bece.cross_check(y_true, y_prob,
        top_label=True)``)."""
        raise _needs_predictions(self)

    def _cross_check_predictions(self, y_true: ArrayLike, y_prob: ArrayLike,
                                 y_pred: ArrayLike | None, *, mcmc: MCMCSettings,
                                 closed_form: Any, average: str, top_label: bool) -> CrossCheck:
        from .._validation.smooth_toplabel import cross_check_smooth_top_label

        return cross_check_smooth_top_label(
            y_true, y_prob, y_pred=y_pred, n_bins=self.n_bins, binning=self.binning, average=average,
            grid=self.grid, **self._laplace_options, prior_odds=self.prior_odds,
            closed_form=closed_form, **mcmc.as_kwargs())
