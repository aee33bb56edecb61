"""Reliability diagrams: per-bin posterior bands against confidence, with the
plug-in points and a strip of bin counts."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._base.checks import check_prob
from .._results.ece import BayesianECE
from .._stats.calibration_stats import CalibrationStats
from .common import BAND_COLOR, ece_title, label_plugin, pyplot

__all__ = [
    "reliability_diagram",
]

COUNTS_LABEL = "bece counts"
CURVE_LABEL = "posterior median curve"
PLUGIN_LABEL = "observed (plug-in)"
DOTS_LABEL = "bin median (size ~ count)"


def _short_count(c: int) -> str:
    """A bin count short enough to sit over its bar: 950, 9,500, 95k, 1.2M, 3.4G.

    >>> [_short_count(c) for c in (950, 9_500, 12_821, 100_050, 1_234_567, 3_400_000_000)]
    ['950', '9,500', '13k', '100k', '1.2M', '3.4G']
    """
    if c < 10_000:
        return f"{c:,}"
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if c >= div:
            v = c / div
            return f"{v:.1f}{unit}" if v < 10 else f"{v:.0f}{unit}"
    return str(c)  # pragma: no cover


def _quantiles(draws: np.ndarray, prob: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Median and equal-tailed band of (S, M) draws along axis 0, ignoring NaN
    (a draw whose bin mass underflowed to 0 has no accuracy)."""
    qs = [0.5, (1 - prob) / 2, (1 + prob) / 2]
    with np.errstate(invalid="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN column
            med, lo, hi = np.nanquantile(draws, qs, axis=0)
    return med, lo, hi


def _beta_band(stats: CalibrationStats, prob: float, a: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Median and modified equal-tailed interval of Beta(a + c1, a + c0) per bin."""
    from scipy import stats as sps

    c0 = np.asarray(stats.counts[0], dtype=np.float64)
    c1 = np.asarray(stats.counts[1], dtype=np.float64)
    dist = sps.beta(a + c1, a + c0)
    lo = dist.ppf((1 - prob) / 2)
    hi = dist.ppf((1 + prob) / 2)
    nonempty = (c0 + c1) > 0
    lo = np.where(nonempty & (c1 == 0), 0.0, lo)
    hi = np.where(nonempty & (c0 == 0), 1.0, hi)
    return dist.median(), lo, hi


def _check_band_prior(band_prior: Any) -> float | None:
    if band_prior is None:
        return None
    if (isinstance(band_prior, (bool, np.bool_)) or not isinstance(band_prior, (int, float, np.floating,
                                                                                np.integer))
            or not (math.isfinite(band_prior) and band_prior > 0)):
        raise ValueError(f"band_prior must be a positive number or None, got {band_prior!r}")
    return float(band_prior)


def _x_range(stats: CalibrationStats) -> tuple[float, float]:
    """The x-range of a diagram: [0, 1] for P(y = 1) input; for confidences
    (top-label, triples) from the lower edge of the lowest bin holding a
    prediction, so that the region below 1/K, where no top-label confidence
    can lie, and empty low bins do not fill the picture (starts at 0 when
    that edge is at most 0.1)."""
    edges = np.asarray(stats.edges, dtype=np.float64)
    lo, hi = min(0.0, edges[0]), max(1.0, edges[-1])
    full = np.flatnonzero(np.asarray(stats.bin_counts) > 0)
    if getattr(stats, "kind", None) in ("top-label", "triples") and full.size:
        first = edges[full[0]]
        if first > 0.1:
            lo = first - 0.02 * (hi - first)
    return lo, hi


def _curve_quantiles(result: Any, prob: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Grid, median and equal-tailed band of the (S, G) curve draws."""
    grid = np.asarray(result.curve_grid, dtype=np.float64)
    curve = np.asarray(result.curve, dtype=np.float64)
    if curve.ndim != 2 or grid.ndim != 1 or curve.shape[1] != grid.shape[0]:
        raise ValueError(f"result.curve must have shape (S, G) with G = len(curve_grid) = "
                         f"{grid.shape}, got {curve.shape}")
    lo, med, hi = np.quantile(curve, [(1 - prob) / 2, 0.5, (1 + prob) / 2], axis=0)
    return grid, med, lo, hi


def _draw_reliability(
    ax: Any,
    accuracy: np.ndarray | None,
    confidence: np.ndarray | None,
    stats: CalibrationStats,
    *,
    prob: float,
    band_prior: float | None,
    show_plugin: bool,
    show_counts: bool,
    legend: bool,
    curve: Any = None,
    x_range: tuple[float, float] | None = None,
) -> Any:
    """Draw one reliability diagram on ``ax``; returns the count Axes or None.

    ``accuracy`` (S, M) draws are needed for ``band_prior=None`` and with a
    ``curve`` (a result with ``curve_grid`` and ``curve`` draws); without
    ``confidence`` draws the model's dot sits at the plug-in confidence.
    """
    edges = np.asarray(stats.edges, dtype=np.float64)
    lower, upper = edges[:-1], edges[1:]
    counts = np.asarray(stats.bin_counts)
    full = counts > 0
    observed_conf = np.asarray(stats.confidence, dtype=np.float64)
    if curve is not None or band_prior is None:  # band and dots: the model's posterior draws
        acc_med, acc_lo, acc_hi = _quantiles(np.asarray(accuracy, dtype=np.float64), prob)
        conf_med = (observed_conf if confidence is None
                    else _quantiles(np.asarray(confidence, dtype=np.float64), prob)[0])
        source = "model posterior"
    else:  # band and dots: the Beta posterior of each bin's counts, at the observed confidence
        acc_med, acc_lo, acc_hi = _beta_band(stats, prob, band_prior)
        conf_med = observed_conf
        source = "Jeffreys" if band_prior == 0.5 else f"Beta({band_prior:g}, {band_prior:g}) prior"
    band_label = f"{prob:.0%} band ({source})"

    ax.plot([0, 1], [0, 1], ls="--", color="0.4", lw=1, label="perfect calibration", zorder=1)
    if curve is not None:
        grid, c_med, c_lo, c_hi = _curve_quantiles(curve, prob)
        ax.fill_between(grid, c_lo, c_hi, color=BAND_COLOR, alpha=0.25, lw=0.0, label=band_label,
                        zorder=2)
        ax.plot(grid, c_med, color=BAND_COLOR, lw=1.8, label=CURVE_LABEL, zorder=3)
    else:
        first = True
        for m in np.flatnonzero(full):  # empty bins: no band (the count strip shows their 0)
            lo_m = 0.0 if np.isnan(acc_lo[m]) else acc_lo[m]
            hi_m = 1.0 if np.isnan(acc_hi[m]) else acc_hi[m]
            label = band_label if first else "_nolegend_"
            first = False
            if upper[m] > lower[m]:
                ax.fill_between([lower[m], upper[m]], [lo_m, lo_m], [hi_m, hi_m], color=BAND_COLOR,
                                alpha=0.3, lw=0.0, label=label, zorder=2)
            else:  # zero-width (tied quantile) bin: a vertical bar at its edge
                ax.vlines(lower[m], lo_m, hi_m, color=BAND_COLOR, alpha=0.5, lw=3, label=label)
    # dot area grows with the bin's count (14 + 110 n_m / max n): where the predictions are
    sizes = 14.0 + 110.0 * counts[full] / max(int(counts.max()), 1)
    ax.scatter(conf_med[full], acc_med[full], s=sizes, color=BAND_COLOR, edgecolors="white",
               linewidths=0.5, label=DOTS_LABEL, zorder=4, clip_on=False)
    if show_plugin and full.any():
        ax.plot(observed_conf[full], stats.accuracy[full], "x", color="k", ms=5, mew=1.2,
                label=PLUGIN_LABEL, zorder=5)
    ax.set_xlim(*(x_range if x_range is not None else _x_range(stats)))
    ax.set_ylim(-0.02, 1.02)
    # P(y = 1) input has a frequency of y = 1 against the predicted P(y = 1);
    # (correct, confidence) input an accuracy against a confidence
    binary = getattr(stats, "kind", None) == "binary"
    xlabel = "predicted P(y = 1)" if binary else "confidence"
    ax.set_ylabel("observed frequency of y = 1" if binary else "accuracy")

    if not show_counts:
        ax.set_xlabel(xlabel)
        if legend:
            _legend_below(ax, ax)
        return None
    from mpl_toolkits.axes_grid1 import make_axes_locatable

    cax = make_axes_locatable(ax).append_axes("bottom", size="22%", pad=0.08, sharex=ax)
    cax.set_label(COUNTS_LABEL)
    widths = np.maximum(upper - lower, 1e-3)
    cax.bar(lower, counts, width=widths, align="edge", color="0.6", edgecolor="white", lw=0.5,
            label="bin count")
    top = max(int(counts.max()), 1)
    cax.set_ylim(0, top * 1.45)
    shown = (upper > cax.get_xlim()[0]) if counts.size else np.zeros(0, bool)
    size = "x-small" if shown.sum() <= 20 else 5
    for m in np.flatnonzero(shown):
        cax.text(lower[m] + widths[m] / 2, counts[m] + top * 0.05, _short_count(int(counts[m])),
                 ha="center", va="bottom", fontsize=size, color="0.55" if counts[m] == 0 else "0.2",
                 rotation=90 if shown.sum() > 20 else 0, clip_on=True)
    cax.set_yticks([])
    cax.set_ylabel("count", fontsize="small")
    cax.set_xlabel(xlabel)
    ax.tick_params(labelbottom=False)
    if legend:
        _legend_below(ax, cax)
    return cax


def _legend_below(ax: Any, bottom: Any) -> None:
    """The legend of ``ax`` under the Axes ``bottom`` (below its x label),
    outside the data so that it never hides a band."""
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, 0.0), bbox_transform=bottom.transAxes,
              borderaxespad=4.0, ncols=2, fontsize="small", frameon=False)


def reliability_diagram(
    result: BayesianECE,
    *,
    ax: Any = None,  # a matplotlib Axes
    prob: float = 0.9,
    band_prior: float | None = 0.5,
    show_plugin: bool = True,
    show_counts: bool = True,
    per_label: bool = False,
    curve: bool | None = None,
    max_labels: int | None = 12,
) -> Any:  # a matplotlib Axes, or Figure with per_label=True
    """Reliability diagram with posterior credible bands.

    Parameters
    ----------
    result : BayesianECE
        From :func:`bece.bayesian_ece`, :func:`bece.posterior_ece`,
        :func:`bece.compare` (``.a``, ``.b``) or, with ``per_label=True``,
        :func:`bece.bayesian_top_label_ece`.
    ax : matplotlib Axes, optional
        Where to draw; a new figure if omitted. The count strip is carved
        out of the bottom of ``ax``.
    prob : float, default 0.9
        Mass of the equal-tailed credible band.
    band_prior : float or None, default 0.5
        Per-bin bands (drawn when there is no curve):
        :math:`\\mathrm{Beta}(a, a)` prior of each bin's accuracy, ``a =
        band_prior``: 0.5 gives the Jeffreys band, honest on sparse bins;
        ``None`` the model's own per-bin posterior (``result.accuracy``
        draws), which under the default Dirichlet prior of the binned model
        is nearly as narrow as a bootstrap band on bins with one or two
        labels (module docstring). Not used when the curve is drawn.
    show_plugin : bool, default True
        Mark each non-empty bin's observed (accuracy, mean confidence).
    show_counts : bool, default True
        Add a strip of bin counts under the diagram.
    per_label : bool, default False
        One panel per predicted label (needs a top-label result with
        ``labels``, ``label_accuracy``, ``label_confidence``,
        ``label_stats``, ``label_draws``); returns the Figure.
    curve : bool or None, default None
        Draw the posterior calibration curve (the pointwise median of
        ``result.curve`` over ``result.curve_grid``) and its ``prob`` band
        instead of per-bin bands. None: when the result has a curve (the
        smooth model, :class:`~bece._results.ece.SmoothBayesianECE`, the
        default of :func:`bece.bayesian_ece`).
    max_labels : int or None, default 12
        With ``per_label=True``, draw the ``max_labels`` most-predicted
        labels (ties: in label order) and say so in the title, so that the
        figure stays readable at any number of classes (at most 4 x 3
        panels of 3.4 x 3.6 inches); None draws every label.

    Returns
    -------
    matplotlib Axes (or Figure with ``per_label=True``)

    Notes
    -----
    Band and dots always come from one posterior, named in the legend:

    * with the curve: the model's draws. The band is the pointwise
      :math:`(1\\mp\\mathrm{prob})/2` quantiles of the curve draws
      :math:`P(z = 1 \\mid p)`, the line their median; bin m's dot is at
      (median of :math:`\\mu_m`, median of :math:`a_m`) from the same draws
      (``result.confidence``, ``result.accuracy``).
    * per-bin bands, ``band_prior=a``: bin m's band spans
      :math:`[l_m, u_m)` between the quantiles of
      :math:`\\mathrm{Beta}(a + c_{1,m}, a + c_{0,m})` (ends set to 0 / 1
      when :math:`c_{1,m} = 0` / :math:`c_{0,m} = 0`) and the dot is at its
      median, at the observed mean confidence :math:`S_m/n_m`.
    * per-bin bands, ``band_prior=None``: band and dot from the model's
      draws :math:`q^{(s)}_{1,m}/(q^{(s)}_{0,m} + q^{(s)}_{1,m})` and
      :math:`\\mu_m^{(s)}`.

    A dot's area grows with its bin's count, :math:`14 + 110\\, n_m / \\max_k n_k` points²; the cross
    is the plug-in :math:`(S_m/n_m, c_{1,m}/n_m)`; the strip shows
    :math:`n_m`. Empty bins get no band (their count, 0, is in the strip).
    For confidences (top-label and triples input) the x-axis starts at the
    lowest bin holding a prediction when that is above 0.1, so that the
    region below 1/K, where no top-label confidence lies, does not fill the
    picture. The title gives the ECE posterior (mean, ``prob`` interval)
    and the plug-in ECE.

    Examples
    --------
    >>> import numpy as np, bece
    >>> from bece.plots import reliability_diagram
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500); y = rng.uniform(size=500) < p
    >>> ax = reliability_diagram(bece.bayesian_ece(y, p, n_bins=10, num_samples=1000))
    >>> ax.get_ylabel(), ax.figure.axes[-1].get_xlabel()   # P(y = 1) input: its own words
    ('observed frequency of y = 1', 'predicted P(y = 1)')
    >>> [ln.get_label() for ln in ax.get_lines()]          # the smooth model's curve
    ['perfect calibration', 'posterior median curve', 'observed (plug-in)']
    >>> import matplotlib.pyplot as plt; plt.close("all")
    """
    prob = check_prob(prob)
    band_prior = _check_band_prior(band_prior)
    for name, value in (("show_plugin", show_plugin), ("show_counts", show_counts),
                        ("per_label", per_label)):
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{name} must be True or False, got {value!r}")
    if curve is not None and not isinstance(curve, (bool, np.bool_)):
        raise ValueError(f"curve must be True, False or None, got {curve!r}")
    if max_labels is not None and (isinstance(max_labels, (bool, np.bool_))
                                   or not isinstance(max_labels, (int, np.integer)) or max_labels < 1):
        raise ValueError(f"max_labels must be a positive integer or None, got {max_labels!r}")
    for name in ("accuracy", "confidence", "draws", "stats", "plugin"):
        if not hasattr(result, name):
            raise ValueError(
                f"result must be a BayesianECE (from bece.bayesian_ece and friends); "
                f"{type(result).__name__} has no '{name}'"
            )
    has_curve = hasattr(result, "curve") and hasattr(result, "curve_grid")
    if curve and not has_curve:
        raise ValueError(
            f"curve=True needs a result with a calibration curve (model='smooth'); "
            f"{type(result).__name__} has no curve"
        )
    if per_label:
        if curve:
            raise ValueError("curve=True cannot be combined with per_label=True: the per-label "
                             "panels have per-bin bands")
        return _per_label(result, ax=ax, prob=prob, band_prior=band_prior,
                          show_plugin=show_plugin, show_counts=show_counts, max_labels=max_labels)
    if ax is None:
        _, ax = pyplot().subplots(figsize=(5.5, 6.3))
        ax.figure.subplots_adjust(left=0.14, right=0.95, top=0.93, bottom=0.2)
    draw_curve = has_curve if curve is None else curve
    _draw_reliability(ax, result.accuracy, result.confidence, result.stats, prob=prob,
                      band_prior=band_prior, show_plugin=show_plugin, show_counts=show_counts,
                      legend=True, curve=result if draw_curve else None)
    ax.set_title(ece_title("", result.draws, result.plugin, prob), fontsize="medium")
    return ax


def _per_label(result: Any, *, ax: Any, prob: float, band_prior: float | None, show_plugin: bool,
               show_counts: bool, max_labels: int | None) -> Any:
    need = ("labels", "label_accuracy", "label_confidence", "label_stats", "label_draws")
    missing = [k for k in need if not hasattr(result, k)]
    if missing:
        raise ValueError(
            "per_label=True needs a top-label result (bece.bayesian_top_label_ece); "
            f"{type(result).__name__} has no {', '.join(missing)}"
        )
    if band_prior is None and result.label_accuracy is None:
        raise ValueError(
            "per_label=True with band_prior=None needs the per-(label, bin) draws, which this "
            "result did not keep (label_accuracy is None); rerun bayesian_top_label_ece with "
            "keep_bins=True or use the default band_prior"
        )
    if ax is not None:
        raise ValueError("ax cannot be given with per_label=True: the figure gets one panel per label")
    labels = np.asarray(result.labels)
    n_labels = labels.size
    if n_labels == 0:
        raise ValueError("per_label=True: the result has no predicted labels to draw")
    # the most-predicted labels first (stable: ties in label order)
    n_pred = np.array([int(s.n) for s in result.label_stats], dtype=np.int64)
    order = np.argsort(-n_pred, kind="stable")
    shown = order if max_labels is None else order[:max_labels]
    ncols = min(shown.size, 4)
    nrows = math.ceil(shown.size / ncols)
    plt = pyplot()
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.4 * ncols + 0.6, 3.6 * nrows + 2.1),
                             squeeze=False)
    label_draws = np.asarray(result.label_draws)
    x_range = _x_range(result.stats)
    for k, panel in enumerate(axes.flat):
        if k >= shown.size:
            panel.set_visible(False)
            continue
        i = int(shown[k])
        acc = None if result.label_accuracy is None else np.asarray(result.label_accuracy)[:, i]
        conf = (None if result.label_confidence is None
                else np.asarray(result.label_confidence)[:, i])
        _draw_reliability(panel, acc, conf, result.label_stats[i],
                          prob=prob, band_prior=band_prior, show_plugin=show_plugin,
                          show_counts=show_counts, legend=False, x_range=x_range)
        plugin = (float(np.asarray(result.label_plugin)[i]) if getattr(result, "label_plugin", None)
                  is not None else label_plugin(result.label_stats[i]))
        lo, hi = np.quantile(label_draws[:, i], [(1 - prob) / 2, (1 + prob) / 2])
        panel.set_title(f"label {labels[i]} (n = {n_pred[i]:,})\nECE {np.mean(label_draws[:, i]):.3f} "
                        f"[{lo:.3f}, {hi:.3f}], plug-in {plugin:.3f}", fontsize="small")
        panel.tick_params(labelsize="small")
        panel.yaxis.label.set_size("small")
    title = ece_title("top-label ", result.draws, result.plugin, prob)
    if shown.size < n_labels:
        title += (f"\nthe {shown.size} most-predicted of {n_labels:,} labels "
                  f"({int(n_pred[shown].sum()):,} of {int(n_pred.sum()):,} predictions; "
                  "max_labels=None draws all)")
    fig.suptitle(title, fontsize="medium")
    handles, names = _legend_entries(axes.flat)
    fig.legend(handles, names, loc="lower center", ncols=min(len(names), 2), fontsize="small",
               frameon=False)
    # fixed margins in inches (tight_layout over many panels with count
    # strips costs seconds): suptitle on top, legend at the bottom
    height, width = fig.get_figheight(), fig.get_figwidth()
    fig.subplots_adjust(left=0.6 / width, right=1 - 0.15 / width,
                        top=1 - (1.3 if shown.size < n_labels else 1.0) / height,
                        bottom=1.0 / height, wspace=0.35, hspace=0.55)
    return fig


def _legend_entries(axes: Any) -> tuple[list[Any], list[str]]:
    """One legend entry per label over several panels (an empty bin may show
    up only in a later panel)."""
    seen: dict[str, Any] = {}
    for panel in axes:
        for h, name in zip(*panel.get_legend_handles_labels()):
            seen.setdefault(name, h)
    return list(seen.values()), list(seen.keys())
