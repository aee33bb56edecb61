"""Result object of a Bayesian ECE: draws and their summaries.

The same type comes from every path that produces ECE draws (the binned
closed form, the smooth model's Laplace path, NUTS in the cross-checks), so
results compare directly. The ArviZ layer
(:meth:`BayesianECE.to_inference_data`, :meth:`~BayesianECE.summary`,
:meth:`~BayesianECE.hdi`) imports ArviZ only when called.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._base.arviz import from_dict
from .._base.checks import check_prob
from .._metrics.predictive import label_cells, label_expected_plugin, predictive_draws
from .._stats.calibration_stats import CalibrationStats
from .html import HTMLDisplay, histogram_svg
from .summaries import DrawSummaries

__all__ = [
    "BayesianECE",
    "BayesianTopLabelECE",
    "SmoothBayesianECE",
    "expected_label_plugin",
]


@dataclass(frozen=True, repr=False, eq=False)
class BayesianECE(DrawSummaries, HTMLDisplay):
    """Posterior draws of the expected calibration error.

    Attributes
    ----------
    draws : ndarray of shape (S,)
        ECE of each posterior draw.
    accuracy : ndarray of shape (S, M)
        Posterior draws of each bin's :math:`q_{1,m}/\\pi_m`: its accuracy
        for top-label and triples input, its frequency of y = 1 for
        P(y = 1) input (:attr:`kind` ``"binary"``; the JSON of ``bece
        report`` calls both ``observed``).
    confidence : ndarray of shape (S, M)
        Posterior draws of each bin's mean :math:`\\mu_m` of ``y_prob``: its
        mean confidence, or its mean predicted P(y = 1) for P(y = 1) input
        (``predicted`` in the JSON).
    weight : ndarray of shape (S, M)
        Posterior draws of each bin's probability mass :math:`\\pi_m`.
    plugin : float
        The plug-in ECE of the same data and bins.
    stats : CalibrationStats
        The statistics the posterior was computed from.
    model : str
        ``"binned"`` (the binned BECE model, conjugate form), ``"binned-literal"``
        (its literal form), ``"smooth"``, or the top-label variants.
    method : str
        ``"conjugate"`` for the closed form.
    preset : str or None
    params : object
        The posterior's parameters (e.g. :class:`~bece._binned.conjugate.ConjugatePosterior`).
    prob_calibrated : float or None
        Posterior probability of exact calibration :math:`\\pi_0` when the
        draws average the smooth model with it (:mod:`bece._smooth.average`;
        a fraction :math:`\\pi_0` of the draws are then exactly 0); None
        otherwise (the binned models, the smooth model alone).
    prior_odds : float or None
        The prior odds of calibration used for ``prob_calibrated``.
    miscalibrated_draws : ndarray of shape (S,) or None
        Where the draws average a model with exact calibration: that model's
        own ECE draws, the posterior of the ECE given that it is not exactly
        0 (:meth:`if_miscalibrated`); None otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> from bece import bayesian_ece
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=1000)
    >>> y = rng.uniform(size=1000) < p ** 1.5      # over-confident: P(y = 1 | p) = p^1.5
    >>> r = bayesian_ece(y, p, n_bins=10, model="binned", num_samples=2000, seed=1)
    >>> r  # doctest: +ELLIPSIS
    BayesianECE(mean=0.0..., n=1000, n_bins=10, num_samples=2000, model='binned', ...kind='binary')
    >>> r.draws.shape, r.accuracy.shape, r.weight.shape
    ((2000,), (2000, 10), (2000, 10))
    >>> lo, hi = r.interval(0.9)                     # 90% equal-tailed credible interval
    >>> bool(0.05 < lo < r.mean < hi < 0.15)
    True
    >>> r.to_inference_data().posterior["ece"].shape   # one chain of independent draws
    (1, 2000)
    """

    draws: np.ndarray
    accuracy: np.ndarray
    confidence: np.ndarray
    weight: np.ndarray
    plugin: float
    stats: CalibrationStats
    model: str = "binned"
    method: str = "conjugate"
    preset: str | None = None
    params: Any = field(default=None)
    prob_calibrated: float | None = None
    prior_odds: float | None = None
    miscalibrated_draws: np.ndarray | None = field(default=None, repr=False)

    _summary_vars = ["ece"]

    def if_miscalibrated(self, prob: float = 0.9) -> dict[str, Any] | None:
        """The ECE given that it is not exactly 0: the averaged model's own
        posterior (:attr:`miscalibrated_draws`), which says how large a
        miscalibration the data allow when the averaged interval is [0, 0].
        ``mean``, ``std``, ``prob``, equal-tailed ``interval`` and one-sided
        ``upper_bound`` at ``prob``; None when the draws do not average with
        exact calibration.

        Examples
        --------
        >>> import numpy as np
        >>> from bece import bayesian_ece
        >>> rng = np.random.default_rng(0)
        >>> p = rng.uniform(size=5000)
        >>> r = bayesian_ece(rng.uniform(size=5000) < p, p, seed=1)   # calibrated
        >>> r.interval(0.9), r.upper_bound(0.9)
        ((0.0, 0.0), 0.0)
        >>> m = r.if_miscalibrated(0.9)
        >>> bool(0 < m["interval"][0] < m["upper_bound"] < m["interval"][1] < 0.02)
        True
        """
        if self.miscalibrated_draws is None:
            return None
        prob = check_prob(prob)
        x = self.miscalibrated_draws
        lo, hi, up = np.quantile(x, [(1 - prob) / 2, (1 + prob) / 2, prob])
        return {"mean": float(x.mean()), "std": float(x.std(ddof=1)) if x.size > 1 else 0.0,
                "prob": prob, "interval": [float(lo), float(hi)], "upper_bound": float(up)}

    def expected_plugin(self) -> float:
        """The plug-in ECE these predictions are expected to give when their
        outcomes are redrawn from the posterior: for each posterior draw,
        each bin's count correct is Binomial(count, the draw's accuracy of
        the bin) and :math:`E|C - S|` is exact
        (:mod:`bece._metrics.predictive`); averaged over the first
        draws (up to 1,000).

        Examples
        --------
        >>> import numpy as np
        >>> from bece import bayesian_ece
        >>> rng = np.random.default_rng(0)
        >>> p = rng.uniform(size=300)
        >>> r = bayesian_ece(rng.uniform(size=300) < p, p, model="binned", seed=1)  # calibrated
        >>> bool(r.mean < r.expected_plugin())   # 20 predictions per bin: the plug-in is biased up
        True
        >>> bool(r.plugin_bias() == r.expected_plugin() - r.mean)
        True
        """
        return float(np.mean(self._expected_plugin_draws()))

    def plugin_bias(self) -> float:
        """The plug-in's expected bias for the data at hand:
        :meth:`expected_plugin` minus the posterior mean ECE. It says why a
        plug-in ECE can lie above the credible interval: noise in few
        predictions per bin (per label and bin for the top-label ECE) never
        cancels inside :math:`|C - S|`."""
        return self.expected_plugin() - self.mean

    def _expected_plugin_draws(self) -> np.ndarray:
        """Each of the first draws' expected plug-in ECE, shape (S',)."""
        st = self.stats
        full = np.flatnonzero(st.bin_counts > 0)
        k = predictive_draws(self.num_samples, full.size)
        x = label_expected_plugin(self.accuracy[:k, full], st.bin_counts[full], st.sum_p[full],
                                  np.zeros(full.size, dtype=np.int64), 1)
        return x[:, 0]

    @property
    def kind(self) -> str | None:
        """How the predictions were read: ``"binary"`` (:math:`P(y = 1)`),
        ``"top-label"`` or ``"triples"`` (:attr:`bece.CalibrationStats.kind`;
        None when unknown)."""
        return self.stats.kind

    # --------------------------------------------------------------- ArviZ
    def to_inference_data(self) -> Any:  # arviz.InferenceData (0.2x) or xarray.DataTree (1.x)
        """The draws in ArviZ's format on the installed ArviZ.

        ``arviz.InferenceData`` on ArviZ 0.2x, ``xarray.DataTree`` on ArviZ
        1.x (which replaced InferenceData by DataTree under the same schema):
        whatever the installed ArviZ's functions take, so
        ``az.summary(r.to_inference_data())`` or ``az.plot_posterior(...)``
        work on either line. Both give a group as ``.posterior`` or
        ``["posterior"]`` and a variable as ``.posterior["ece"]``; on 0.2x
        ``InferenceData.to_datatree()`` converts to a DataTree.

        ``posterior`` holds ``ece`` (chain, draw) and ``accuracy``,
        ``confidence``, ``weight`` (chain, draw, bin); ``constant_data``
        holds ``count_incorrect``, ``count_correct``, ``sum_p``, ``sum_p2``
        (bin) and ``edges`` (edge). Independent draws are stored as one chain.
        For P(y = 1) input (attribute ``input_kind`` ``"binary"``),
        ``accuracy`` is the frequency of y = 1, ``confidence`` the mean
        predicted P(y = 1), and ``count_correct`` / ``count_incorrect``
        count y = 1 / y = 0.
        """
        return from_dict(**self._arviz_groups())

    def _arviz_groups(self) -> dict[str, Any]:
        """:func:`~bece._base.arviz.from_dict`'s arguments for
        :meth:`to_inference_data` (subclasses add their variables)."""
        m = self.stats.n_bins
        posterior = {
            "ece": self.draws[None, :],
            "accuracy": self.accuracy[None],
            "confidence": self.confidence[None],
            "weight": self.weight[None],
        }
        constant = {
            "count_incorrect": self.stats.counts[0],
            "count_correct": self.stats.counts[1],
            "sum_p": self.stats.sum_p,
            "sum_p2": self.stats.sum_p2,
            "edges": self.stats.edges,
        }
        dims = {
            "accuracy": ["bin"],
            "confidence": ["bin"],
            "weight": ["bin"],
            "count_incorrect": ["bin"],
            "count_correct": ["bin"],
            "sum_p": ["bin"],
            "sum_p2": ["bin"],
            "edges": ["edge"],
        }
        coords: dict[str, Any] = {"bin": np.arange(m), "edge": np.arange(m + 1)}
        attrs: dict[str, Any] = {
            "model": self.model,
            "method": self.method,
            "preset": str(self.preset),
            "plugin_ece": self.plugin,
            "n": self.stats.n,
            "input_kind": str(self.kind),
        }
        if self.prob_calibrated is not None:
            attrs["prob_calibrated"] = self.prob_calibrated
            attrs["prior_odds"] = self.prior_odds
        return {
            "groups": {"posterior": posterior, "constant_data": constant},
            "coords": coords,
            "dims": dims,
            "attrs": {"posterior": attrs},
        }

    def _repr_fields(self) -> str:
        lo, hi = self.interval(0.9)
        return (
            f"mean={self.mean:.4f}, interval90=[{lo:.4f}, {hi:.4f}], plugin={self.plugin:.4f}, "
            f"n={self.stats.n}, n_bins={self.stats.n_bins}, num_samples={self.num_samples}, "
            f"model={self.model!r}, method={self.method!r}, kind={self.kind!r}"
            + ("" if self.prob_calibrated is None else
               f", prob_calibrated={self.prob_calibrated:.4f}, prior_odds={self.prior_odds:g}")
        )

    def __repr__(self) -> str:
        """One bounded line: the numbers and the options, never the arrays."""
        return f"{type(self).__name__}({self._repr_fields()})"

    def text(self, prob: float = 0.9, *, test: Any = None, reference: Any = None) -> str:
        """The lines a person reads, as ``bece report`` prints them under its header.

        The ECE's posterior mean, ``prob`` interval, one-sided ``prob``
        bound and plug-in value (and, where the model averages with exact
        calibration, the probability of exact calibration and the ECE given
        it is not 0: :meth:`if_miscalibrated`), the predictions and bins, and the per-bin table in the
        words of the input (observed frequency of y = 1 and mean predicted
        P(y = 1) for binary input; accuracy and confidence otherwise). With
        ``test`` (a :class:`~bece.CalibrationTest` of the same predictions)
        its verdict opens the text; with ``reference`` (the binned model's
        posterior on the same bins) its mean and interval follow the ECE's.
        """
        from .report_text import report_lines

        return "\n".join(report_lines(self, prob, test=test, reference=reference))

    def __str__(self) -> str:
        """:meth:`text` at 90%: what ``bece report`` prints under its header."""
        return self.text()

    def _html_diagram(self) -> str | None:
        return histogram_svg(self.draws, label="posterior of the ECE, 90% interval shaded",
                             interval=self.interval(0.9), marks={"plug-in": self.plugin})

    def to_dict(self, prob: float = 0.9) -> dict[str, Any]:
        """Plain Python (JSON): the numbers ``bece report --json`` prints.

        ``model``, ``input_kind``, ``n``, ``n_bins``, ``plugin_ece``,
        ``plugin_bias`` (:meth:`plugin_bias`), ``ece``
        (``mean``, ``std``, ``prob``, equal-tailed ``interval``, one-sided
        ``upper_bound``) and
        ``bins``: per bin ``lo``, ``hi``, ``count``, ``observed`` (the
        observed frequency of y = 1 for binary input, the accuracy
        otherwise; None for an empty bin) and ``predicted`` (mean predicted
        P(y = 1), or mean confidence), with ``accuracy`` and ``confidence``
        (and ``model_accuracy``) as their names for class probabilities and
        triples; P(y = 1) input has no accuracy or confidence, and its bins
        only the neutral names. A posterior averaged with exact calibration adds
        ``prob_calibrated``, ``prior_odds`` and ``if_miscalibrated``
        (:meth:`if_miscalibrated`); the smooth model its
        ``grid``, ``grid_error`` and each bin's ``model_observed`` (posterior
        mean and ``prob`` interval of the curve's accuracy in the bin).
        """
        prob = check_prob(prob)
        stats = self.stats
        lo, hi = self.interval(prob)
        edges, counts = stats.edges, stats.bin_counts
        acc, conf = stats.accuracy, stats.confidence
        d: dict[str, Any] = {
            "model": self.model,
            "input_kind": stats.kind,
            "n": stats.n,
            "n_bins": stats.n_bins,
            "plugin_ece": self.plugin,
            "ece": {"mean": self.mean, "std": self.std, "prob": prob, "interval": [lo, hi],
                    "upper_bound": self.upper_bound(prob)},
            "bins": [
                {
                    "lo": float(edges[m]),
                    "hi": float(edges[m + 1]),
                    "count": int(counts[m]),
                    "observed": _num(acc[m]),
                    "predicted": _num(conf[m]),
                }
                for m in range(stats.n_bins)
            ],
        }
        # accuracy and confidence: the classifier's words, which P(y = 1) input
        # does not have (its frequency of y = 1 and mean predicted P(y = 1))
        words = stats.kind != "binary"
        if words:
            for b in d["bins"]:
                b["accuracy"], b["confidence"] = b["observed"], b["predicted"]
        smooth = self.model == "smooth"
        if smooth:
            d["grid"] = self.params.grid
            d["grid_error"] = self.params.grid_error
        d["plugin_bias"] = self.plugin_bias()
        if self.prob_calibrated is not None:
            d["prob_calibrated"] = self.prob_calibrated
            d["prior_odds"] = self.prior_odds
            if self.miscalibrated_draws is not None:
                d["if_miscalibrated"] = self.if_miscalibrated(prob)
        if smooth:
            # the smooth model's own per-bin accuracy (posterior mean and interval
            # of sum_j w_j sigma(f(x_j)) / sum_j w_j over the bin)
            q = np.quantile(self.accuracy, [(1 - prob) / 2, (1 + prob) / 2], axis=0)
            mean = self.accuracy.mean(axis=0)
            for m, b in enumerate(d["bins"]):
                b["model_observed"] = {"mean": float(mean[m]),
                                       "interval": [float(q[0, m]), float(q[1, m])]}
                if words:
                    b["model_accuracy"] = b["model_observed"]
        return d


def _num(x: float) -> float | None:
    """A float for JSON: None for NaN (an empty bin's accuracy)."""
    return None if np.isnan(x) else float(x)


# kw_only: this class's own fields, some required, follow BayesianECE's defaulted ones
@dataclass(frozen=True, repr=False, eq=False, kw_only=True)
class BayesianTopLabelECE(BayesianECE):
    """Posterior draws of the top-label ECE (:func:`bece.bayesian_top_label_ece`).

    A :class:`BayesianECE` whose ``draws`` are the top-label ECE (averaged
    as ``average`` says) and whose per-bin ``accuracy``, ``confidence`` and
    ``weight`` pool the labels bin by bin; ``stats`` pools the labels'
    statistics and ``plugin`` is :func:`bece.top_label_ece` on the same bins.

    Attributes
    ----------
    labels : ndarray of shape (L,)
        The predicted labels, in the order of the label axis.
    average : {"label", "sample"}
    label_draws : ndarray of shape (S, L)
        Each label's ECE, conditional on predicting that label.
    label_plugin : ndarray of shape (L,)
        Each label's plug-in ECE.
    label_stats : tuple of L CalibrationStats
    label_accuracy, label_confidence, label_weight : ndarray of shape (S, L, M) or None
        Per (label, bin) draws; None when not kept (large ``S * L * M``).
    label_expected_plugin : ndarray of shape (S', L) or None
        Each label's plug-in ECE expected under the posterior predictive
        (:func:`expected_label_plugin`), for the first S' <= 1,000 draws:
        what :meth:`plugin_bias` reads.

    Examples
    --------
    >>> import numpy as np
    >>> from bece import bayesian_top_label_ece
    >>> rng = np.random.default_rng(0)
    >>> prob = rng.dirichlet(np.ones(3), size=2000)
    >>> y = (rng.uniform(size=(2000, 1)) > prob.cumsum(axis=1)).sum(axis=1)   # calibrated
    >>> r = bayesian_top_label_ece(y, prob, n_bins=10, model="binned", num_samples=2000, seed=1)
    >>> r.n_labels, r.labels, r.label_draws.shape, r.average
    (3, array([0, 1, 2]), (2000, 3), 'label')
    >>> lo, hi = r.label_interval(0.9)               # each predicted label's ECE
    >>> bool(np.all(hi < 0.15)), bool(np.all(lo < r.label_plugin))
    (True, True)
    """

    labels: np.ndarray
    average: str = "label"
    label_draws: np.ndarray
    label_plugin: np.ndarray
    label_stats: tuple[CalibrationStats, ...] = ()
    label_accuracy: np.ndarray | None = None
    label_confidence: np.ndarray | None = None
    label_weight: np.ndarray | None = None
    label_expected_plugin: np.ndarray | None = field(default=None, repr=False)

    @property
    def n_labels(self) -> int:
        return int(self.labels.shape[0])

    def _expected_plugin_draws(self) -> np.ndarray:
        """Each draw's expected plug-in top-label ECE under :attr:`average`,
        from :attr:`label_expected_plugin` (or the kept per-(label, bin)
        accuracies)."""
        n_l = np.array([s.n for s in self.label_stats], dtype=np.float64)
        x = self.label_expected_plugin
        if x is None:
            if self.label_accuracy is None:
                raise ValueError("this result keeps neither label_expected_plugin nor "
                                 "label_accuracy: the plug-in's expectation needs one")
            x = expected_label_plugin(self.label_accuracy, self.label_stats)
        return x.mean(axis=1) if self.average == "label" else x @ n_l / n_l.sum()

    def label_interval(self, prob: float = 0.9) -> tuple[np.ndarray, np.ndarray]:
        """Equal-tailed credible interval of each label's ECE: two arrays of shape (L,)."""
        prob = check_prob(prob)
        lo, hi = np.quantile(self.label_draws, [(1 - prob) / 2, (1 + prob) / 2], axis=0)
        return lo, hi

    def to_inference_data(self) -> Any:  # arviz.InferenceData (0.2x) or xarray.DataTree (1.x)
        """As :meth:`BayesianECE.to_inference_data`, plus a ``label`` coordinate.

        ``posterior`` adds ``label_ece`` (chain, draw, label) and, when kept,
        ``label_accuracy``, ``label_confidence``, ``label_weight`` (chain,
        draw, label, bin); ``constant_data`` adds ``label_count_incorrect``,
        ``label_count_correct`` and ``label_sum_p`` (label, bin).
        """
        return super().to_inference_data()

    def _arviz_groups(self) -> dict[str, Any]:
        spec = super()._arviz_groups()
        post, const = spec["groups"]["posterior"], spec["groups"]["constant_data"]
        dims = spec["dims"]
        post["label_ece"] = self.label_draws[None]
        dims["label_ece"] = ["label"]
        for name in ("label_accuracy", "label_confidence", "label_weight"):
            value = getattr(self, name)
            if value is not None:
                post[name] = value[None]
                dims[name] = ["label", "bin"]
        counts = np.stack([s.counts for s in self.label_stats])
        const["label_count_incorrect"] = counts[:, 0]
        const["label_count_correct"] = counts[:, 1]
        const["label_sum_p"] = np.stack([s.sum_p for s in self.label_stats])
        for name in ("label_count_incorrect", "label_count_correct", "label_sum_p"):
            dims[name] = ["label", "bin"]
        spec["coords"]["label"] = self.labels
        spec["attrs"]["posterior"].update({"average": self.average, "n_labels": self.n_labels})
        return spec

    def _repr_fields(self) -> str:
        return f"{super()._repr_fields()}, average={self.average!r}, n_labels={self.n_labels}"


# kw_only: this class's own fields, some required, follow BayesianECE's defaulted ones
@dataclass(frozen=True, repr=False, eq=False, kw_only=True)
class SmoothBayesianECE(BayesianECE):
    """:class:`~bece._results.ece.BayesianECE` of the smooth model, with the curve.

    It has every attribute of :class:`BayesianECE`, and these below;
    ``prob_calibrated`` and ``prior_odds`` are set when the draws average the
    smooth model with exact calibration.

    Attributes
    ----------
    curve_grid : ndarray of shape (G,)
        Confidences (over the observed range) where the curve is drawn.
    curve : ndarray of shape (S, G)
        Posterior draws of :math:`P(z = 1 \\mid p)` at ``curve_grid``
        (bin deviations included, so it may jump at bin edges).
    coefficients : ndarray of shape (S, P)
        :math:`(a, b, \\lambda u, \\tau v)` of each draw.
    smoothness, bin_sd : ndarray of shape (S,)
        :math:`\\lambda` and :math:`\\tau` of each draw.
    atoms : bece._smooth.atoms.Atoms or None
        The data the model was fitted to (one atom per prediction, or the
        fine grid's cells), so that :func:`bece.cross_check` can check the
        result without the predictions; None for a paired comparison's sides.

    Examples
    --------
    >>> import numpy as np
    >>> from bece import bayesian_ece
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=1000)
    >>> y = rng.uniform(size=1000) < p ** 1.5      # over-confident: P(y = 1 | p) = p^1.5
    >>> r = bayesian_ece(y, p, n_bins=10, num_samples=2000, seed=1)   # the default model
    >>> type(r).__name__, r.model, r.method
    ('SmoothBayesianECE', 'smooth', 'laplace')
    >>> r.curve.shape == (r.num_samples, r.curve_grid.size)
    True
    >>> median_curve = np.median(r.curve, axis=0)  # posterior median of P(y = 1 | p)
    >>> bool(np.max(np.abs(median_curve - r.curve_grid ** 1.5)) < 0.1)
    True
    >>> bool(r.prob_calibrated < 0.01)             # miscalibration this large is found
    True
    """

    curve_grid: np.ndarray
    curve: np.ndarray
    coefficients: np.ndarray
    smoothness: np.ndarray
    bin_sd: np.ndarray
    atoms: Any = field(default=None, repr=False)

    def to_inference_data(self) -> Any:  # arviz.InferenceData (0.2x) or xarray.DataTree (1.x)
        """As :meth:`BayesianECE.to_inference_data`, plus in ``posterior``:
        ``curve`` (chain, draw, curve_confidence — the confidences of
        ``curve_grid``), ``intercept`` (:math:`a`), ``slope`` (:math:`1 + b`),
        ``smoothness`` (:math:`\\lambda`), ``bin_sd`` (:math:`\\tau`), and the
        attributes ``log_bayes_factor_calibrated``, ``grid_error`` and (when
        averaged with exact calibration) ``prob_calibrated`` and ``prior_odds``."""
        return super().to_inference_data()

    def _arviz_groups(self) -> dict[str, Any]:
        spec = super()._arviz_groups()
        post = spec["groups"]["posterior"]
        post["curve"] = self.curve[None]
        spec["dims"]["curve"] = ["curve_confidence"]
        spec["coords"]["curve_confidence"] = self.curve_grid
        post["intercept"] = self.coefficients[None, :, 0]
        post["slope"] = 1.0 + self.coefficients[None, :, 1]
        post["smoothness"] = self.smoothness[None]
        post["bin_sd"] = self.bin_sd[None]
        if hasattr(self.params, "log_bayes_factor") and hasattr(self.params, "grid_error"):
            spec["attrs"]["posterior"]["log_bayes_factor_calibrated"] = self.params.log_bayes_factor
            spec["attrs"]["posterior"]["grid_error"] = self.params.grid_error
        return spec


def expected_label_plugin(label_accuracy: np.ndarray,
                          label_stats: tuple[CalibrationStats, ...]) -> np.ndarray:
    """Each label's expected plug-in ECE (:func:`bece._metrics.predictive.label_expected_plugin`)
    for the first draws of the per-(label, bin) accuracies ``label_accuracy``
    (S, L, M), with the cells of ``label_stats``: shape (S', L)."""
    lab, bins, n_cell, s_cell = label_cells(label_stats)
    k = predictive_draws(label_accuracy.shape[0], lab.size)
    return label_expected_plugin(label_accuracy[:k, lab, bins], n_cell, s_cell, lab,
                                 len(label_stats))
