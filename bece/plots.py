"""Pictures of calibration posteriors (matplotlib, imported when called).

* :func:`reliability_diagram` -- per bin, the posterior median accuracy and
  an equal-tailed credible band against confidence, the diagonal, the
  plug-in points and a strip of bin counts; one panel per predicted label
  for top-label results.
* :func:`plot_ece_posterior` -- the ECE posteriors of several models side by
  side (forest or density).
* :func:`plot_comparison` -- a paired :class:`~bece.compare.Comparison`:
  both reliability diagrams and the posterior of the difference.
* :func:`plot_calibration_curve` -- the regression calibration curve
  (observed :math:`P(\\mathrm{PIT} \\le p_j)` against :math:`p_j`) with its band.

What the band of a bin is, and why. Bootstrap bands collapse to zero width
on a bin holding one label (every resample has the same accuracy). The
model's own per-bin posterior does nearly the same on sparse bins: its
Dirichlet prior spreads a total weight of one observation over all cells
(:math:`\\alpha = 1/(2M)` per cell, :math:`1/(2LM)` for top-label), so a
priori each bin's accuracy is :math:`\\mathrm{Beta}(\\alpha, \\alpha)`, piled
up at 0 and 1, and one correct label gives a 90% band of [0.80, 1] with 15
bins and [1.00, 1] with 10 labels x 15 bins. That prior is harmless for the
ECE (sparse bins weigh little) but misleading in a picture of per-bin
accuracies. By default (``band_prior=0.5``) the band of bin m is therefore
the equal-tailed ``prob`` interval of

.. math::

    \\mathrm{Beta}(\\tfrac12 + c_{1,m},\\ \\tfrac12 + c_{0,m}),

the Jeffreys interval for a binomial proportion, with its lower end set to 0
when :math:`c_{1,m} = 0` and its upper end to 1 when :math:`c_{0,m} = 0`
(Brown, Cai & DasGupta 2001, whose coverage is close to nominal for any
number of labels): one correct label gives [0.23, 1], an empty bin
[0.006, 0.994], drawn hatched and labelled "empty bin: no data" so it is
not mistaken for evidence. Where bins hold many labels this band and the
model's coincide. ``band_prior=None`` draws the model's own band instead:
the quantiles of the posterior draws ``result.accuracy`` of
:math:`q_{1,m}/(q_{0,m}+q_{1,m})`.

References
----------
Brown, Cai & DasGupta (2001), "Interval estimation for a binomial
proportion", Statistical Science 16(2).

Every function returns the matplotlib object it drew on (an ``Axes``, or a
``Figure`` for multi-panel pictures); pass ``ax=`` to draw into your own
figure. Artists carry labels (``Artist.get_label()``) and the count strip is
the Axes labelled ``"bece counts"`` so that tests and users can find them.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from .result import _check_prob

__all__ = [
    "reliability_diagram",
    "plot_ece_posterior",
    "plot_comparison",
    "plot_calibration_curve",
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
_BAND = "C0"
_EMPTY = "0.55"


def _pyplot():
    import matplotlib.pyplot as plt

    return plt


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


def _beta_band(stats: Any, prob: float, a: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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


def _fmt_interval(draws: np.ndarray, prob: float) -> str:
    lo, hi = np.quantile(draws, [(1 - prob) / 2, (1 + prob) / 2])
    return f"{np.mean(draws):.3f} [{lo:.3f}, {hi:.3f}]"


def _draw_reliability(
    ax: Any,
    accuracy: np.ndarray,
    confidence: np.ndarray,
    stats: Any,
    *,
    prob: float,
    band_prior: float | None,
    show_plugin: bool,
    show_counts: bool,
    legend: bool,
) -> Any:
    """Draw one reliability diagram on ``ax``; returns the count Axes or None."""
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
            kw = dict(facecolor="none", edgecolor=_EMPTY, hatch="///", lw=0.0, zorder=0)
            label = "empty bin: no data" if first_empty else "_nolegend_"
            first_empty = False
        else:
            kw = dict(color=_BAND, alpha=0.3, lw=0.0, zorder=2)
            label = band_label if first_band else "_nolegend_"
            first_band = False
        if upper[m] > lower[m]:
            ax.fill_between([lower[m], upper[m]], [lo_m, lo_m], [hi_m, hi_m], label=label, **kw)
        else:  # zero-width (tied quantile) bin: a vertical bar at its edge
            ax.vlines(lower[m], lo_m, hi_m, color=kw.get("color", _EMPTY), lw=3, label=label)
    full = ~empty
    ax.plot(conf_med[full], acc_med[full], "o", color=_BAND, ms=5, label="posterior median accuracy",
            zorder=4)
    if show_plugin and full.any():
        ax.plot(stats.confidence[full], stats.accuracy[full], "x", color="k", ms=6, mew=1.5,
                label="plug-in (observed)", zorder=5)
    ax.set_xlim(min(0.0, edges[0]), max(1.0, edges[-1]))
    ax.set_ylim(-0.02, 1.02)
    ax.set_ylabel("accuracy")

    if not show_counts:
        ax.set_xlabel("confidence")
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
    cax.set_xlabel("confidence")
    ax.tick_params(labelbottom=False)
    if legend:
        _legend_below(ax, cax)
    return cax


def _legend_below(ax: Any, bottom: Any) -> None:
    """The legend of ``ax`` under the Axes ``bottom`` (below its x label),
    outside the data so that it never hides a band."""
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, 0.0), bbox_transform=bottom.transAxes,
              borderaxespad=4.0, ncols=2, fontsize="small", frameon=False)


def _title(prefix: str, draws: np.ndarray, plugin: float, prob: float) -> str:
    return f"{prefix}ECE {_fmt_interval(draws, prob)} ({prob:.0%}), plug-in {plugin:.3f}"


def reliability_diagram(
    result: Any,
    *,
    ax: Any = None,
    prob: float = 0.9,
    band_prior: float | None = 0.5,
    show_plugin: bool = True,
    show_counts: bool = True,
    per_label: bool = False,
):
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
    >>> ax.get_ylabel()
    'accuracy'
    >>> import matplotlib.pyplot as plt; plt.close("all")
    """
    prob = _check_prob(prob)
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
        _, ax = _pyplot().subplots(figsize=(5.5, 6.2))
    _draw_reliability(ax, result.accuracy, result.confidence, result.stats, prob=prob,
                      band_prior=band_prior, show_plugin=show_plugin, show_counts=show_counts,
                      legend=True)
    ax.set_title(_title("", result.draws, result.plugin, prob), fontsize="medium")
    return ax


def _per_label(result: Any, *, ax: Any, prob: float, band_prior: float | None, show_plugin: bool,
               show_counts: bool):
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
    plt = _pyplot()
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
                  is not None else _label_plugin(result.label_stats[i]))
        panel.set_title(_title(f"label {labels[i]}: ", label_draws[:, i], plugin, prob),
                        fontsize="small")
    fig.suptitle(_title("top-label ", result.draws, result.plugin, prob))
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


def _label_plugin(stats: Any) -> float:
    from .metrics import plugin_ece

    return plugin_ece(stats) if stats.n > 0 else float("nan")


def _expand(results: Sequence[Any], labels: Sequence[str] | None) -> tuple[list[Any], list[str]]:
    items: list[Any] = []
    names: list[str] = []
    for i, r in enumerate(results):
        if hasattr(r, "diff_draws") and hasattr(r, "a") and hasattr(r, "b"):  # a Comparison
            items += [r.a, r.b]
            names += ["A", "B"]
        elif hasattr(r, "draws"):
            items.append(r)
            names.append(f"model {i + 1}" if len(results) > 1 else "ECE")
        else:
            raise ValueError(
                f"results must be BayesianECE or Comparison objects; argument {i} is a "
                f"{type(r).__name__}"
            )
    if not items:
        raise ValueError("plot_ece_posterior needs at least one result")
    if labels is not None:
        labels = [str(s) for s in labels]
        if len(labels) != len(items):
            raise ValueError(
                f"labels has {len(labels)} entries but there are {len(items)} posteriors to draw "
                "(a Comparison counts as two)"
            )
        names = labels
    return items, names


def plot_ece_posterior(
    *results: Any,
    labels: Sequence[str] | None = None,
    ax: Any = None,
    kind: str = "forest",
    prob: float = 0.9,
):
    """ECE posteriors of several models side by side.

    Parameters
    ----------
    *results : BayesianECE or Comparison
        One or more results; a :class:`~bece.compare.Comparison` adds its
        ``a`` and ``b``.
    labels : sequence of str, optional
        One name per posterior (default "model 1", ... or "A", "B").
    ax : matplotlib Axes, optional
    kind : {"forest", "density"}, default "forest"
        ``"forest"`` (as ``arviz.plot_forest``): per model a dot at the
        median, a thick line over the 50% and a thin line over the ``prob``
        equal-tailed interval, a cross at the plug-in ECE. ``"density"`` (as
        ``arviz.plot_posterior``): a kernel density estimate of each model's
        draws (``arviz.kde`` with boundary correction) with its ``prob``
        interval shaded and the plug-in ECE as a dashed line.
    prob : float, default 0.9

    Returns
    -------
    matplotlib Axes
    """
    prob = _check_prob(prob)
    if kind not in ("forest", "density"):
        raise ValueError(f"kind must be 'forest' or 'density', got {kind!r}")
    items, names = _expand(results, labels)
    if ax is None:
        height = 1.2 + 0.5 * len(items) if kind == "forest" else 4.0
        _, ax = _pyplot().subplots(figsize=(6.0, height))
    qs = [(1 - prob) / 2, 0.25, 0.5, 0.75, (1 + prob) / 2]
    if kind == "forest":
        k = len(items)
        for i, (r, name) in enumerate(zip(items, names)):
            y = k - 1 - i
            lo, q1, med, q3, hi = np.quantile(r.draws, qs)
            ax.hlines(y, lo, hi, color=f"C{i}", lw=1.5, label=f"{name}: {prob:.0%} interval")
            ax.hlines(y, q1, q3, color=f"C{i}", lw=5, label=f"{name}: 50% interval")
            ax.plot(med, y, "o", color="white", mec=f"C{i}", mew=1.5, ms=7, label=f"{name}: median",
                    zorder=3)
            ax.plot(r.plugin, y, "x", color="k", ms=7, mew=1.5, label=f"{name}: plug-in ECE",
                    zorder=4)
        ax.set_yticks(range(k - 1, -1, -1), names)
        ax.set_ylim(-0.7, k + 0.5)
        from matplotlib.lines import Line2D

        key = [
            Line2D([], [], color="0.3", lw=1.5, label=f"{prob:.0%} interval"),
            Line2D([], [], color="0.3", lw=5, label="50% interval"),
            Line2D([], [], ls="", marker="o", color="white", mec="0.3", mew=1.5, ms=7, label="median"),
            Line2D([], [], ls="", marker="x", color="k", mew=1.5, ms=7, label="plug-in ECE"),
        ]
        ax.legend(handles=key, loc="upper center", fontsize="small", ncols=4, frameon=False)
    else:
        az = _arviz()
        for i, (r, name) in enumerate(zip(items, names)):
            grid, pdf = az.kde(np.asarray(r.draws, dtype=np.float64), bound_correction=True)
            lo, _, med, _, hi = np.quantile(r.draws, qs)
            line, = ax.plot(grid, pdf, color=f"C{i}", lw=1.5,
                            label=f"{name}: mean {np.mean(r.draws):.3f}, {prob:.0%} [{lo:.3f}, {hi:.3f}]")
            inside = (grid >= lo) & (grid <= hi)
            ax.fill_between(grid[inside], 0, pdf[inside], color=f"C{i}", alpha=0.25, lw=0,
                            label="_nolegend_")
            ax.axvline(r.plugin, color=f"C{i}", ls=":", lw=1.2,
                       label=f"{name}: plug-in {r.plugin:.3f}")
        ax.set_ylim(0, ax.get_ylim()[1] * (1.15 + 0.12 * len(items)))
        ax.set_ylabel("posterior density")
        ax.legend(loc="upper center", fontsize="small", ncols=2 if len(items) > 2 else 1)
    ax.set_xlabel("expected calibration error (ECE)")
    ax.set_title(f"ECE posterior ({prob:.0%} equal-tailed intervals)", fontsize="medium")
    return ax


def _arviz():
    from .result import _arviz as load

    return load()


def plot_comparison(
    comparison: Any,
    *,
    labels: Sequence[str] = ("A", "B"),
    prob: float = 0.9,
    fig: Any = None,
):
    """A paired comparison: both reliability diagrams and the difference.

    Parameters
    ----------
    comparison : Comparison
        From :func:`bece.compare`.
    labels : pair of str, default ("A", "B")
        Names of the two models.
    prob : float, default 0.9
    fig : matplotlib Figure, optional
        Figure to draw into (e.g. ``matplotlib.figure.Figure()`` for a file
        without pyplot); a new pyplot figure if omitted.

    Returns
    -------
    matplotlib Figure
        Three panels: reliability diagram of A, of B, and the posterior
        density of :math:`\\mathrm{ECE}_A - \\mathrm{ECE}_B` (Gaussian kernel
        density estimate of ``diff_draws``, ``scipy.stats.gaussian_kde``) with its
        ``prob`` interval shaded, a line at 0 and
        :math:`P(\\mathrm{ECE}_A < \\mathrm{ECE}_B)` in the title.
    """
    prob = _check_prob(prob)
    if not hasattr(comparison, "diff_draws"):
        raise ValueError(
            f"comparison must be a Comparison from bece.compare, got {type(comparison).__name__}"
        )
    labels = [str(s) for s in labels]
    if len(labels) != 2:
        raise ValueError(f"labels must name the two models, got {len(labels)} names")
    if fig is None:
        fig = _pyplot().figure(figsize=(15, 5.6))
    axes = fig.subplots(1, 3, gridspec_kw={"width_ratios": [1, 1, 1.1]})
    for ax, r, name in zip(axes[:2], (comparison.a, comparison.b), labels):
        reliability_diagram(r, ax=ax, prob=prob)
        ax.set_title(f"{name}\n" + _title("", r.draws, r.plugin, prob), fontsize="medium")
    ax = axes[2]
    from scipy.stats import gaussian_kde

    d = np.asarray(comparison.diff_draws, dtype=np.float64)
    pad = 0.1 * (d.max() - d.min()) + 1e-12
    grid = np.linspace(d.min() - pad, d.max() + pad, 400)
    pdf = gaussian_kde(d)(grid) if np.ptp(d) > 0 else np.zeros_like(grid)
    lo, hi = comparison.interval(prob)
    ax.plot(grid, pdf, color="C3", lw=1.5, label="posterior of the difference")
    inside = (grid >= lo) & (grid <= hi)
    ax.fill_between(grid[inside], 0, pdf[inside], color="C3", alpha=0.25, lw=0,
                    label=f"{prob:.0%} interval [{lo:+.3f}, {hi:+.3f}]")
    ax.axvline(0.0, color="k", lw=1, ls="--", label="no difference")
    ax.set_ylim(0, ax.get_ylim()[1] * 1.3)
    ax.set_xlabel(f"ECE({labels[0]}) - ECE({labels[1]})")
    ax.set_ylabel("posterior density")
    ax.set_title(
        f"paired difference, n = {comparison.a.stats.n:,}\n"
        f"P(ECE({labels[0]}) < ECE({labels[1]})) = {comparison.prob_a_better:.3f}",
        fontsize="medium",
    )
    ax.legend(loc="upper left", fontsize="small")
    fig.tight_layout()
    return fig


def plot_calibration_curve(result: Any, *, ax: Any = None, prob: float = 0.9):
    """Regression calibration curve with its posterior band.

    Parameters
    ----------
    result : bece.regression.BayesianCalibrationError
        With ``levels`` (J,), ``curve`` (S, J) draws of the observed
        :math:`P(\\mathrm{PIT} \\le p_j)`, ``observed`` (J,) empirical
        frequencies, and ``curve_interval(prob)``.
    ax : matplotlib Axes, optional
    prob : float, default 0.9
        Mass of the band: ``result.curve_interval(prob)``.

    Returns
    -------
    matplotlib Axes
        The diagonal, the band (``fill_between`` over the levels), the
        posterior median curve and the observed points
        :math:`(p_j, \\hat p_j)` (Kuleshov et al. 2018).
    """
    prob = _check_prob(prob)
    for name in ("levels", "curve", "observed"):
        if not hasattr(result, name):
            raise ValueError(
                "result must be a regression calibration result "
                f"(bece.regression.bayesian_calibration_error); {type(result).__name__} has no '{name}'"
            )
    levels = np.asarray(result.levels, dtype=np.float64)
    curve = np.asarray(result.curve, dtype=np.float64)
    observed = np.asarray(result.observed, dtype=np.float64)
    if curve.ndim != 2 or curve.shape[1] != levels.size or observed.shape != levels.shape:
        raise ValueError(
            f"result has levels of shape {levels.shape}, curve {curve.shape} and observed "
            f"{observed.shape}; expected (J,), (S, J) and (J,)"
        )
    if hasattr(result, "curve_interval"):
        lo, hi = (np.asarray(a, dtype=np.float64) for a in result.curve_interval(prob))
    else:
        lo, hi = np.quantile(curve, [(1 - prob) / 2, (1 + prob) / 2], axis=0)
    med = np.median(curve, axis=0)
    if ax is None:
        _, ax = _pyplot().subplots(figsize=(5.5, 5.5))
    ax.plot([0, 1], [0, 1], ls="--", color="0.4", lw=1, label="perfect calibration", zorder=1)
    ax.fill_between(levels, lo, hi, color=_BAND, alpha=0.3, lw=0,
                    label=f"{prob:.0%} credible band (posterior)", zorder=2)
    ax.plot(levels, med, color=_BAND, lw=1.5, label="posterior median", zorder=3)
    ax.plot(levels, observed, "x" if levels.size <= 30 else "-", color="k", ms=5, lw=0.8,
            label="observed (empirical)", zorder=4)
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("expected level $p_j$")
    ax.set_ylabel(r"observed frequency of PIT $\leq p_j$")
    title = "calibration curve"
    draws = getattr(result, "draws", None)
    if draws is not None and np.ndim(draws) == 1 and np.size(draws) > 1:
        d = np.asarray(draws, dtype=np.float64)
        lo_d, hi_d = np.quantile(d, [(1 - prob) / 2, (1 + prob) / 2])
        title = f"calibration error {d.mean():.3g} [{lo_d:.3g}, {hi_d:.3g}] ({prob:.0%})"
        plugin = getattr(result, "plugin", None)
        if plugin is not None:
            title += f", plug-in {float(plugin):.3g}"
    ax.set_title(title, fontsize="medium")
    ax.legend(loc="upper left", fontsize="small")
    return ax
