"""Reliability diagrams: per-bin posterior bands against confidence, with the
plug-in points and a strip of bin counts."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..base.checks import check_prob
from ..results.ece import BayesianECE
from ..stats.calibration_stats import CalibrationStats
from .common import BAND_COLOR, EMPTY_COLOR, ece_title, label_plugin, pyplot

__all__ = [
    "reliability_diagram",
]

COUNTS_LABEL = "bece counts"


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
) -> Any:
    """Draw one reliability diagram on ``ax``; returns the count Axes or None.

    ``accuracy`` (S, M) draws are needed for ``band_prior=None`` only; without
    ``confidence`` draws the dot sits at the plug-in confidence.
    """
    edges = np.asarray(stats.edges, dtype=np.float64)
    lower, upper = edges[:-1], edges[1:]
    counts = np.asarray(stats.bin_counts)
    empty = counts == 0
    if band_prior is None:
        acc_med, acc_lo, acc_hi = _quantiles(np.asarray(accuracy, dtype=np.float64), prob)
        band_label = f"{prob:.0%} credible band (model posterior)"
    else:
        acc_med, acc_lo, acc_hi = _beta_band(stats, prob, band_prior)
        what = "Jeffreys" if band_prior == 0.5 else f"Beta({band_prior:g}, {band_prior:g}) prior"
        band_label = f"{prob:.0%} credible band ({what})"
    if confidence is None:  # per-bin draws not kept: place the dot at the plug-in confidence
        conf_med = np.asarray(stats.confidence, dtype=np.float64)
    else:
        conf_med = _quantiles(np.asarray(confidence, dtype=np.float64), prob)[0]

    ax.plot([0, 1], [0, 1], ls="--", color="0.4", lw=1, label="perfect calibration", zorder=1)
    first_band, first_empty = True, True
    for m in range(edges.size - 1):
        lo_m = 0.0 if np.isnan(acc_lo[m]) else acc_lo[m]
        hi_m = 1.0 if np.isnan(acc_hi[m]) else acc_hi[m]
        if empty[m]:
            kw = dict(facecolor="none", edgecolor=EMPTY_COLOR, hatch="///", lw=0.0, zorder=0)
            label = "empty bin: no data" if first_empty else "_nolegend_"
            first_empty = False
        else:
            kw = dict(color=BAND_COLOR, alpha=0.3, lw=0.0, zorder=2)
            label = band_label if first_band else "_nolegend_"
            first_band = False
        if upper[m] > lower[m]:
            ax.fill_between([lower[m], upper[m]], [lo_m, lo_m], [hi_m, hi_m], label=label, **kw)
        else:  # zero-width (tied quantile) bin: a vertical bar at its edge
            ax.vlines(lower[m], lo_m, hi_m, color=kw.get("color", EMPTY_COLOR), lw=3, label=label)
    full = ~empty
    ax.plot(conf_med[full], acc_med[full], "o", color=BAND_COLOR, ms=5, label="posterior median accuracy",
            zorder=4)
    if show_plugin and full.any():
        ax.plot(stats.confidence[full], stats.accuracy[full], "x", color="k", ms=6, mew=1.5,
                label="plug-in (observed)", zorder=5)
    ax.set_xlim(min(0.0, edges[0]), max(1.0, edges[-1]))
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
    size = "x-small" if counts.size <= 20 else 5
    for m in range(counts.size):
        cax.text(lower[m] + widths[m] / 2, counts[m] + top * 0.05, _short_count(int(counts[m])),
                 ha="center", va="bottom", fontsize=size, color="0.55" if empty[m] else "0.2",
                 rotation=90 if counts.size > 20 else 0)
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
        Per-bin :math:`\\mathrm{Beta}(a, a)` prior of the band, ``a =
        band_prior``: 0.5 gives the Jeffreys band, honest on sparse and empty
        bins; ``None`` the model's own per-bin posterior (``result.accuracy``
        draws), which under the default Dirichlet prior is nearly as narrow
        as a bootstrap band on bins with one or two labels (module
        docstring).
    show_plugin : bool, default True
        Mark each non-empty bin's observed (accuracy, mean confidence).
    show_counts : bool, default True
        Add a strip of bin counts under the diagram.
    per_label : bool, default False
        One panel per predicted label (needs a top-label result with
        ``labels``, ``label_accuracy``, ``label_confidence``,
        ``label_stats``, ``label_draws``); returns the Figure.

    Returns
    -------
    matplotlib Axes (or Figure with ``per_label=True``)

    Notes
    -----
    For bin m the band spans :math:`[l_m, u_m)` between the
    :math:`(1\\mp\\mathrm{prob})/2` quantiles of the bin's accuracy
    :math:`a_m`, distributed as :math:`\\mathrm{Beta}(a + c_{1,m}, a +
    c_{0,m})` (ends set to 0 / 1 when :math:`c_{1,m} = 0` / :math:`c_{0,m} =
    0`), or with ``band_prior=None`` as the model's draws
    :math:`q^{(s)}_{1,m}/(q^{(s)}_{0,m} + q^{(s)}_{1,m})`; the dot is at
    (posterior median of :math:`\\mu_m`, median of :math:`a_m`) for non-empty
    bins; the cross at the plug-in :math:`(S_m/n_m, c_{1,m}/n_m)`; the strip
    shows :math:`n_m`. Empty bins are hatched. The title gives the model's
    ECE posterior (mean, ``prob`` interval) and the plug-in ECE.

    Examples
    --------
    >>> import numpy as np, bece
    >>> from bece.plots import reliability_diagram
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500); y = rng.uniform(size=500) < p
    >>> ax = reliability_diagram(bece.bayesian_ece(y, p, n_bins=10, num_samples=1000))
    >>> ax.get_ylabel(), ax.figure.axes[-1].get_xlabel()   # P(y = 1) input: its own words
    ('observed frequency of y = 1', 'predicted P(y = 1)')
    >>> import matplotlib.pyplot as plt; plt.close("all")
    """
    prob = check_prob(prob)
    band_prior = _check_band_prior(band_prior)
    for name, value in (("show_plugin", show_plugin), ("show_counts", show_counts),
                        ("per_label", per_label)):
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{name} must be True or False, got {value!r}")
    for name in ("accuracy", "confidence", "draws", "stats", "plugin"):
        if not hasattr(result, name):
            raise ValueError(
                f"result must be a BayesianECE (from bece.bayesian_ece and friends); "
                f"{type(result).__name__} has no '{name}'"
            )
    if per_label:
        return _per_label(result, ax=ax, prob=prob, band_prior=band_prior,
                          show_plugin=show_plugin, show_counts=show_counts)
    if ax is None:
        _, ax = pyplot().subplots(figsize=(5.5, 6.2))
    _draw_reliability(ax, result.accuracy, result.confidence, result.stats, prob=prob,
                      band_prior=band_prior, show_plugin=show_plugin, show_counts=show_counts,
                      legend=True)
    ax.set_title(ece_title("", result.draws, result.plugin, prob), fontsize="medium")
    return ax


def _per_label(result: Any, *, ax: Any, prob: float, band_prior: float | None, show_plugin: bool,
               show_counts: bool) -> Any:
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
    ncols = min(n_labels, 4)
    nrows = math.ceil(n_labels / ncols)
    plt = pyplot()
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 4.8 * nrows), squeeze=False)
    label_draws = np.asarray(result.label_draws)
    for i, panel in enumerate(axes.flat):
        if i >= n_labels:
            panel.set_visible(False)
            continue
        acc = None if result.label_accuracy is None else np.asarray(result.label_accuracy)[:, i]
        conf = (None if result.label_confidence is None
                else np.asarray(result.label_confidence)[:, i])
        _draw_reliability(panel, acc, conf, result.label_stats[i],
                          prob=prob, band_prior=band_prior, show_plugin=show_plugin,
                          show_counts=show_counts, legend=False)
        plugin = (float(np.asarray(result.label_plugin)[i]) if getattr(result, "label_plugin", None)
                  is not None else label_plugin(result.label_stats[i]))
        panel.set_title(ece_title(f"label {labels[i]}: ", label_draws[:, i], plugin, prob),
                        fontsize="small")
    fig.suptitle(ece_title("top-label ", result.draws, result.plugin, prob))
    handles, names = _legend_entries(axes.flat)
    fig.legend(handles, names, loc="lower center", ncols=min(len(names), 5), fontsize="small",
               frameon=False)
    # fixed margins in inches (tight_layout over many panels with count
    # strips costs seconds): suptitle on top, legend at the bottom
    height, width = fig.get_figheight(), fig.get_figwidth()
    fig.subplots_adjust(left=0.7 / width, right=1 - 0.2 / width, top=1 - 0.75 / height,
                        bottom=1.1 / height, wspace=0.3, hspace=0.42)
    return fig


def _legend_entries(axes: Any) -> tuple[list[Any], list[str]]:
    """One legend entry per label over several panels (an empty bin may show
    up only in a later panel)."""
    seen: dict[str, Any] = {}
    for panel in axes:
        for h, name in zip(*panel.get_legend_handles_labels()):
            seen.setdefault(name, h)
    return list(seen.values()), list(seen.keys())


