"""The binned BECE model as an object: its options, NumPyro model, statistics and closed form."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from .._base.checks import positive_array
from .._base.typing import BinningSpec, PriorParam, Seed
from .._binned.conjugate import PRESETS, conjugate_posterior
from .._binned.literal import FORMS, REFERENCE_FORM
from .._binned.posterior import binned_posterior_ece
from .._binned.toplabel import binned_posterior_top_label_ece, top_label_posterior, top_label_statistics
from .._results.comparison import Comparison
from .._results.ece import BayesianECE, BayesianTopLabelECE
from .._stats.binning import Binning, check_n_bins
from .._stats.calibration_stats import CalibrationStats, statistics_of
from .._stats.inputs import Inputs
from .._stats.label_stats import LabelStats
from .._stats.paired_stats import PairedStats
from .._validation.agreement import CrossCheck
from .._validation.settings import MCMCSettings
from .base import Model, NumPyroModel

__all__ = ["BinnedModel"]

@dataclass(frozen=True)
class BinnedModel(Model):
    """The binned Bayesian ECE model (BECE): a Dirichlet over (outcome, bin) cells.

    The model behind google/uncertainty-metrics'
    ``bayesian_expected_calibration_error``: the (outcome, bin) cells are
    Categorical with Dirichlet(``alpha``) probabilities, and each bin's
    confidences are Normal around a bin mean with a truncated-Normal prior
    (:mod:`bece.models._binned`). For the top-label ECE the same model runs in
    every (label, bin) cell.

    Parameters
    ----------
    n_bins : int, optional
        Number of bins M (default 15); with statistics, their bins are used.
    binning : {"uniform", "quantile"}, array_like of edges or Binning, default "uniform"
    alpha : float or array, default 1/(2M)
        Dirichlet concentration per (outcome, bin) cell.
    sigma, tau : float or array of shape (M,), default w_m / sqrt(12)
        Spread of the confidences within a bin, and of the bin mean's prior.
    preset : {"uncertainty-metrics"}, optional
        Reproduce google/uncertainty-metrics (conjugate form only).
    form : {"conjugate", "literal"}, default "conjugate"
        ``"conjugate"``: the bin mean's truncation on its prior, posterior
        in closed form. ``"literal"``: each confidence a truncated Normal in
        its bin, sampled exactly in one dimension per bin
        (:mod:`bece._binned.literal`).

    Examples
    --------
    >>> import numpy as np
    >>> from bece import BinnedModel, bayesian_ece
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = rng.uniform(size=2000) < p
    >>> model = BinnedModel(n_bins=10)
    >>> stats = model.statistics(y[:1000], p[:1000]) + model.statistics(y[1000:], p[1000:])
    >>> r = model.posterior(stats, num_samples=2000, seed=1)
    >>> s = bayesian_ece(y, p, model=model, num_samples=2000, seed=1)
    >>> bool(np.allclose(r.draws, s.draws, rtol=1e-12))
    True
    >>> model.numpyro(stats)
    NumPyroModel(fn=bece.models.conjugate_collapsed, data=counts, mean_p, ss_p)
    """

    n_bins: int | None = None
    binning: BinningSpec | Binning = "uniform"
    alpha: PriorParam = None
    sigma: PriorParam = None
    tau: PriorParam = None
    preset: str | None = None
    form: str = REFERENCE_FORM

    shorthand: ClassVar[str] = "binned"
    tasks: ClassVar[tuple[str, ...]] = ("binary", "top-label", "paired")
    compares: ClassVar[str] = ("the ECE and each bin's accuracy and mean confidence (each "
                               "label's ECE too, top-label) at their 5, 50 and 95% quantiles")

    def __post_init__(self) -> None:
        if self.n_bins is not None:
            check_n_bins(self.n_bins)
        if self.form not in FORMS:
            raise ValueError(f"form must be one of {FORMS}, got {self.form!r}")
        if self.preset is not None and self.preset not in PRESETS:
            raise ValueError(f"preset must be one of {(None, *PRESETS)}, got {self.preset!r}")
        for name in ("alpha", "sigma", "tau"):  # their shapes are checked against the bins
            value = getattr(self, name)
            if value is not None:
                positive_array(value, name, np.shape(value))
        if self.form == "literal" and self.preset is not None:
            raise ValueError(f"preset={self.preset!r} reproduces the reference implementation, "
                             "which is the conjugate form: it does not apply to form='literal'")

    @property
    def name(self) -> str:
        """``"binned"`` (conjugate form) or ``"binned-literal"``, as results name it."""
        return "binned" if self.form == "conjugate" else "binned-literal"

    # -------------------------------------------------------- statistics
    def statistics(self, y_true: ArrayLike, y_prob: ArrayLike, *, y_pred: ArrayLike | None = None,
                   labels: ArrayLike | None = None, pos_label: Any = None,
                   from_logits: bool = False, row_sum_tol: float | None = None) -> CalibrationStats:
        """The model's sufficient statistics: per-bin counts and confidence sums
        (:meth:`bece.CalibrationStats.from_arrays`, whose input keywords these are)."""
        return self._statistics(y_true, y_prob, y_pred,
                                Inputs(labels, pos_label, from_logits, row_sum_tol))

    def _statistics(self, y_true: ArrayLike, y_prob: ArrayLike, y_pred: ArrayLike | None,
                    inputs: Inputs) -> CalibrationStats:
        return statistics_of(y_true, y_prob, y_pred, self.n_bins, self.binning, inputs)

    def label_statistics(self, y_true: ArrayLike, y_prob: ArrayLike, *,
                         y_pred: ArrayLike | None = None, labels: ArrayLike | None = None,
                         from_logits: bool = False, row_sum_tol: float | None = None) -> LabelStats:
        """Per predicted label, the statistics of its top-label confidences
        (input keywords as :meth:`statistics`)."""
        return self._label_statistics(y_true, y_prob, y_pred,
                                      Inputs(labels, None, from_logits, row_sum_tol))

    def _label_statistics(self, y_true: ArrayLike, y_prob: ArrayLike, y_pred: ArrayLike | None,
                          inputs: Inputs) -> LabelStats:
        classes, stats = top_label_statistics(y_true, y_prob, y_pred=y_pred, n_bins=self.n_bins,
                                              binning=self.binning, inputs=inputs)
        return LabelStats(classes, stats)

    def _check_bins(self, stats: CalibrationStats | LabelStats) -> None:
        if self.n_bins is not None and stats.binning.n_bins != self.n_bins:
            raise ValueError(f"the statistics have {stats.binning.n_bins} bins and the model "
                             f"n_bins={self.n_bins}: the binned model uses the statistics' bins")

    # --------------------------------------------------------- fast path
    def posterior(self, stats: CalibrationStats | LabelStats, *, num_samples: int | None = None,
                  seed: Seed = 0, average: str = "label",
                  keep_bins: bool | str = "auto") -> BayesianECE:
        """The closed-form posterior from statistics (summed chunks give the whole data's).

        ``stats``: a :class:`bece.CalibrationStats` (the ECE) or a
        :class:`bece.LabelStats` (the top-label ECE, ``average`` and
        ``keep_bins`` as :func:`bece.bayesian_top_label_ece`).
        """
        if isinstance(stats, LabelStats):
            self._check_bins(stats)
            return binned_posterior_top_label_ece(
                stats.stats, stats.labels, average=average, alpha=self.alpha, sigma=self.sigma,
                tau=self.tau, num_samples=num_samples, seed=seed, keep_bins=keep_bins,
                model=self.form)
        if not isinstance(stats, CalibrationStats):
            raise ValueError(f"stats must be a CalibrationStats or LabelStats, got "
                             f"{type(stats).__name__}")
        self._check_bins(stats)
        return binned_posterior_ece(stats, alpha=self.alpha, sigma=self.sigma, tau=self.tau,
                                    preset=self.preset, seed=seed, model=self.form,
                                    num_samples=10_000 if num_samples is None else num_samples)

    def _from_predictions(self, y_true: ArrayLike, y_prob: ArrayLike, y_pred: ArrayLike | None,
                          inputs: Inputs, **draws: Any) -> BayesianECE:
        return self.posterior(self._statistics(y_true, y_prob, y_pred, inputs), **draws)

    def _top_label_from_predictions(self, y_true: ArrayLike, y_prob: ArrayLike,
                                    y_pred: ArrayLike | None, inputs: Inputs,
                                    **draws: Any) -> BayesianTopLabelECE:
        result = self.posterior(self._label_statistics(y_true, y_prob, y_pred, inputs), **draws)
        assert isinstance(result, BayesianTopLabelECE)
        return result

    # ---------------------------------------------------------- paired
    def paired_statistics(self, y_true: ArrayLike, y_prob_a: ArrayLike, y_prob_b: ArrayLike, *,
                          y_pred_a: ArrayLike | None = None, y_pred_b: ArrayLike | None = None,
                          labels: ArrayLike | None = None, pos_label: Any = None,
                          from_logits: bool = False, row_sum_tol: float | None = None) -> PairedStats:
        """Joint statistics of two models' predictions on the same examples
        (:meth:`bece.PairedStats.from_arrays`, whose input keywords these
        are; add chunks with ``+``)."""
        return PairedStats.from_arrays(y_true, y_prob_a, y_prob_b, y_pred_a=y_pred_a,
                                       y_pred_b=y_pred_b, n_bins=self.n_bins, binning=self.binning,
                                       labels=labels, pos_label=pos_label,
                                       from_logits=from_logits, row_sum_tol=row_sum_tol)

    def paired_posterior(self, stats: PairedStats, *, num_samples: int | None = None,
                         seed: Seed = 0, progress: bool = False,
                         binning_b: BinningSpec | Binning | None = None) -> Comparison:
        """The joint Dirichlet over both models' (outcome, bin) cells
        (:func:`bece._binned.compare.compare_from_stats`), in the bins of
        ``stats`` (``binning_b`` belongs to the smooth model)."""
        from .._binned.compare import compare_from_stats

        self._uses_only("paired comparison", ("n_bins", "binning", "alpha", "sigma", "tau"))
        if not isinstance(stats, PairedStats):
            raise ValueError(f"stats must be a PairedStats, got {type(stats).__name__}")
        if binning_b is not None:
            raise ValueError("binning_b applies to the smooth model (B's ECE bins, which its fine "
                             "statistics refine); the binned model uses the bins of stats")
        self._check_bins(stats.stats_a)
        return compare_from_stats(stats, alpha=self.alpha, sigma=self.sigma, tau=self.tau,
                                  num_samples=10_000 if num_samples is None else num_samples,
                                  seed=seed, progress=progress)

    def _compare_predictions(self, y_true: ArrayLike, y_prob_a: ArrayLike, y_prob_b: ArrayLike,
                             y_preds: tuple[Any, Any], inputs: Inputs, *,
                             num_samples: int | None, seed: Seed, progress: bool) -> Comparison:
        from .._binned.compare import binned_compare

        self._uses_only("paired comparison", ("n_bins", "binning", "alpha", "sigma", "tau"))
        return binned_compare(y_true, y_prob_a, y_prob_b, y_pred_a=y_preds[0], y_pred_b=y_preds[1],
                       n_bins=self.n_bins, binning=self.binning, alpha=self.alpha,
                       sigma=self.sigma, tau=self.tau, seed=seed, progress=progress,
                       num_samples=10_000 if num_samples is None else num_samples, inputs=inputs)

    # ------------------------------------------------------ NumPyro model
    def numpyro(self, stats: CalibrationStats | LabelStats) -> NumPyroModel:
        """The collapsed NumPyro model (:mod:`bece.models._binned`) with its arguments.

        Its posterior is that of the per-prediction model (it takes the
        sufficient statistics: O(M) per evaluation); NUTS runs it in
        :meth:`cross_check`. Without the data (``prior_predictive``) it
        samples the prior.
        """
        from .._validation.crosscheck import collapsed_data
        from ..models import conjugate_collapsed, literal_collapsed, top_label_collapsed

        self._check_bins(stats)
        observed = ("counts", "mean_p", "ss_p")
        if isinstance(stats, LabelStats):
            post = top_label_posterior(stats.stats, alpha=self.alpha, sigma=self.sigma,
                                       tau=self.tau)
            data = [collapsed_data(s) for s in stats.stats]
            n_labels, m = stats.n_labels, stats.binning.n_bins
            fn = functools.update_wrapper(
                functools.partial(top_label_collapsed, n_labels=n_labels,
                                  literal=self.form == "literal"), top_label_collapsed)
            args = (stats.binning.edges, post.alpha.reshape(2, n_labels, m).transpose(1, 0, 2),
                    post.sigma.reshape(n_labels, m), post.tau.reshape(n_labels, m))
            return NumPyroModel(fn, args, {k: np.stack([d[k] for d in data]) for k in observed},
                                observed)
        post = conjugate_posterior(stats, alpha=self.alpha, sigma=self.sigma, tau=self.tau,
                                   preset=self.preset)
        collapsed = conjugate_collapsed if self.form == "conjugate" else literal_collapsed
        return NumPyroModel(collapsed, (stats.edges, post.alpha, post.sigma, post.tau),
                            collapsed_data(stats), observed)

    # -------------------------------------------------------- cross-check
    def cross_check(self, stats: CalibrationStats | LabelStats, *, mcmc: MCMCSettings | None = None,
                    closed_form: BayesianECE | None = None, average: str = "label") -> CrossCheck:
        """NUTS on :meth:`numpyro` against :meth:`posterior`, under the agreement rule."""
        from .._validation.crosscheck import cross_check_label_stats, cross_check_stats

        self._check_bins(stats)
        settings = MCMCSettings.resolve(mcmc).as_kwargs()
        if isinstance(stats, LabelStats):
            return cross_check_label_stats(stats.stats, stats.labels, average=average,
                                           alpha=self.alpha, sigma=self.sigma, tau=self.tau,
                                           model=self.form, closed_form=closed_form, **settings)
        if self.preset is not None:
            raise ValueError("cross_check takes the model's prior as alpha, sigma and tau; "
                             "preset is not checked by NUTS")
        return cross_check_stats(stats, alpha=self.alpha, sigma=self.sigma, tau=self.tau,
                                 model=self.form, closed_form=closed_form, **settings)
