"""Posteriors of the ECE side by side (forest or density), and a paired comparison:
both reliability diagrams and the posterior of the difference."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._base.checks import check_prob
from .._results.comparison import Comparison
from .._results.ece import BayesianECE
from .._results.verdict import prob_text
from .common import ece_title, pyplot, readable_ticks
from .reliability import reliability_diagram

__all__ = [
    "plot_comparison",
    "plot_ece_posterior",
]


def _expand(
    results: Sequence[BayesianECE | Comparison], labels: Sequence[str] | None
) -> tuple[list[Any], list[str]]:
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
    *results: BayesianECE | Comparison,
    labels: Sequence[str] | None = None,
    ax: Any = None,  # a matplotlib Axes
    kind: str = "forest",
    prob: float = 0.9,
) -> Any:  # the matplotlib Axes
    """ECE posteriors of several models side by side.

    Parameters
    ----------
    *results : BayesianECE or Comparison
        One or more results; a :class:`~bece.Comparison` adds its
        ``a`` and ``b``.
    labels : sequence of str, optional
        One name per posterior (default "model 1", ... or "A", "B").
    ax : matplotlib Axes, optional
    kind : {"forest", "density"}, default "forest"
        ``"forest"`` (as ``arviz.plot_forest``): per model a dot at the
        median, a thick line over the 50% and a thin line over the ``prob``
        equal-tailed interval, a cross at the plug-in ECE. ``"density"`` (as
        ``arviz.plot_posterior``): a kernel density estimate of each model's
        draws (ArviZ's ``kde`` with boundary correction) with its ``prob``
        interval shaded and the plug-in ECE as a dashed line.
    prob : float, default 0.9

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")                      # no window: a script or a test
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> import bece
    >>> from bece.plots import plot_ece_posterior
    >>> rng = np.random.default_rng(0)
    >>> t = rng.uniform(size=1000)
    >>> y = rng.uniform(size=1000) < t             # t is calibrated, t ** 0.7 is not
    >>> a = bece.bayesian_ece(y, t, n_bins=10, model="binned", num_samples=1000)
    >>> b = bece.bayesian_ece(y, t ** 0.7, n_bins=10, model="binned", num_samples=1000)
    >>> ax = plot_ece_posterior(a, b, labels=["t", "t ** 0.7"])
    >>> ax.get_xlabel(), [label.get_text() for label in ax.get_yticklabels()]
    ('expected calibration error (ECE)', ['t', 't ** 0.7'])
    >>> plt.close(ax.figure)
    """
    prob = check_prob(prob)
    if kind not in ("forest", "density"):
        raise ValueError(f"kind must be 'forest' or 'density', got {kind!r}")
    items, names = _expand(results, labels)
    if ax is None:
        height = 1.2 + 0.5 * len(items) if kind == "forest" else 4.0
        _, ax = pyplot().subplots(figsize=(6.0, height))
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
        from .._base.arviz import kde

        for i, (r, name) in enumerate(zip(items, names)):
            grid, pdf = kde(r.draws)
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


def plot_comparison(
    comparison: Comparison,
    *,
    labels: Sequence[str] | None = None,
    prob: float = 0.9,
    fig: Any = None,  # a matplotlib Figure
    b_first: bool = False,
) -> Any:  # the matplotlib Figure
    """A paired comparison: both reliability diagrams and the difference.

    Parameters
    ----------
    comparison : Comparison
        From :func:`bece.compare`.
    labels : pair of str, optional
        Names of the two models; default the comparison's own
        (:meth:`bece.Comparison.named`; A and B unless named).
    prob : float, default 0.9
    fig : matplotlib Figure, optional
        Figure to draw into (e.g. ``matplotlib.figure.Figure()`` for a file
        without pyplot); a new pyplot figure if omitted.
    b_first : bool, default False
        Draw B's reliability diagram first, e.g. "before" left of "after"
        for a recalibration (whose A is after); the difference stays
        :math:`\\mathrm{ECE}_A - \\mathrm{ECE}_B`.

    Returns
    -------
    matplotlib Figure
        Three panels: reliability diagram of A, of B, and the posterior
        density of :math:`\\mathrm{ECE}_A - \\mathrm{ECE}_B` (Gaussian kernel
        density estimate of ``diff_draws``, ``scipy.stats.gaussian_kde``) with its
        ``prob`` interval shaded, a line at 0 and
        :math:`P(\\mathrm{ECE}_A < \\mathrm{ECE}_B)` in the title. Tick
        labels are thinned until none overlap.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")                      # no window: a script or a test
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> import bece
    >>> from bece.plots import plot_comparison
    >>> rng = np.random.default_rng(0)
    >>> t = rng.uniform(size=1000)
    >>> y = rng.uniform(size=1000) < t             # t is calibrated, t ** 0.7 is not
    >>> c = bece.compare(y, t, t ** 0.7, n_bins=10, num_samples=1000, model="binned")
    >>> fig = plot_comparison(c, labels=("t", "t ** 0.7"))
    >>> print(fig.axes[2].get_title())             # the third panel: ECE(A) - ECE(B)
    paired difference, n = 1,000
    P(ECE(t) < ECE(t ** 0.7)) > 0.999
    >>> plt.close(fig)
    """
    prob = check_prob(prob)
    if not hasattr(comparison, "diff_draws"):
        raise ValueError(
            f"comparison must be a Comparison from bece.compare, got {type(comparison).__name__}"
        )
    labels = [str(s) for s in (getattr(comparison, "names", ("A", "B")) if labels is None
                               else labels)]
    if len(labels) != 2:
        raise ValueError(f"labels must name the two models, got {len(labels)} names")
    if fig is None:
        fig = pyplot().figure(figsize=(15, 5.6))
    axes = fig.subplots(1, 3, gridspec_kw={"width_ratios": [1, 1, 1.1]})
    sides = [(comparison.a, labels[0]), (comparison.b, labels[1])]
    for ax, (r, name) in zip(axes[:2], sides[::-1] if b_first else sides):
        reliability_diagram(r, ax=ax, prob=prob)
        ax.set_title(f"{name}\n" + ece_title("", r.draws, r.plugin, prob), fontsize="medium")
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
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(nbins=5))  # labels such as "-0.175" are wide
    ax.set_xlabel(f"ECE({labels[0]}) - ECE({labels[1]})")
    ax.set_ylabel("posterior density")
    ax.set_title(
        f"paired difference, n = {comparison.a.stats.n:,}\n"
        f"P(ECE({labels[0]}) < ECE({labels[1]})){prob_text(comparison.prob_a_better, d.size)}",
        fontsize="medium",
    )
    ax.legend(loc="upper left", fontsize="small")
    fig.tight_layout()
    readable_ticks(fig)
    return fig
