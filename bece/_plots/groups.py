"""Each group's ECE with its interval, and each window's ECE over time with the drift alarms."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._base.checks import check_prob
from .._results.drift import Drift
from .._results.groups import GroupECE
from .common import pyplot

__all__ = ["plot_groups", "plot_over_time"]


def plot_groups(result: GroupECE, *, ax: Any = None, prob: float = 0.9) -> Any:  # an Axes
    """Each group's ECE posterior, one row per group (a forest plot).

    Per group: a dot at the posterior mean and a thick line over the
    ``prob`` equal-tailed interval; with partial pooling, a thin grey line
    over the group's own interval (its data alone) just below it; a cross at
    the plug-in ECE. The labels give the group, its number of predictions
    and the probability that it is the worst calibrated; a group that
    pooling may hide (:meth:`bece.GroupECE.hidden`) is marked "!" in red.

    Parameters
    ----------
    result : GroupECE
        From :func:`bece.bayesian_ece` with ``by=``.
    ax : matplotlib Axes, optional
    prob : float, default 0.9

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> import bece
    >>> from bece.plots import plot_groups
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> region = np.repeat(["north", "south"], 1000)
    >>> y = rng.uniform(size=2000) < np.where(region == "south", p ** 2, p)
    >>> r = bece.bayesian_ece(y, p, by=region, num_samples=1000, seed=1)
    >>> ax = plot_groups(r)
    >>> [t.get_text().split()[0] for t in ax.get_yticklabels()]
    ['north', 'south']
    >>> plt.close(ax.figure)
    """
    if not isinstance(result, GroupECE):
        raise ValueError(f"result must be a GroupECE (bece.bayesian_ece with by=), got "
                         f"{type(result).__name__}")
    prob = check_prob(prob)
    g = result.n_groups
    if ax is None:
        _, ax = pyplot().subplots(figsize=(6.5, 1.4 + 0.45 * g))
    lo, hi = result.interval(prob)
    own = result.independent_interval(prob)
    hidden = result.hidden(prob)
    worst = result.prob_worst
    rows = np.arange(g)[::-1]
    pooled = "pooled" if result.pooling == "partial" else "own"
    ax.hlines(rows, lo, hi, color="C0", lw=4, label=f"{pooled} {prob:.0%} interval")
    ax.plot(result.mean, rows, "o", color="white", mec="C0", mew=1.5, ms=7,
            label=f"{pooled} posterior mean", zorder=3)
    if own is not None:
        ax.hlines(rows - 0.25, own[0], own[1], color="0.55", lw=1.5,
                  label=f"group's own {prob:.0%} interval (no pooling)")
    ax.plot(result.plugin, rows, "x", color="k", ms=7, mew=1.5, label="plug-in ECE", zorder=4)
    names = []
    for j, name in enumerate(result.groups.tolist()):
        mark = " !" if hidden is not None and hidden[j] else ""
        names.append(f"{name}{mark}\nn = {result.n[j]:,}, P(worst) {worst[j]:.2f}")
    ax.set_yticks(rows, names, fontsize="small")
    if hidden is not None:
        for tick, flag in zip(ax.get_yticklabels(), hidden):
            if flag:
                tick.set_color("C3")
    ax.set_ylim(-0.8, g - 0.3 + 0.35 * (g > 0) + 0.6)
    ax.set_xlim(left=0.0)
    ax.set_xlabel("expected calibration error (ECE)")
    words = ("partial pooling across groups" if result.pooling == "partial" else
             "each group on its own")
    ax.set_title(f"ECE by group ({words})", fontsize="medium")
    ax.legend(loc="upper right", fontsize="x-small", frameon=False,
              ncols=2 if own is not None else 3)
    if hidden is not None and hidden.any():
        ax.annotate("! pooling may hide this group's miscalibration: read its own interval",
                    xy=(0.0, -0.13 - 0.1 / max(g, 1)), xycoords="axes fraction", fontsize="x-small",
                    color="C3", annotation_clip=False, va="top")
    return ax


def plot_over_time(result: GroupECE, *, drift: Drift | None = None, ax: Any = None,
                   prob: float = 0.9) -> Any:  # an Axes
    """Each window's ECE over time with its band, and the drift rule's alarms.

    A line through the windows' posterior means with the ``prob`` band
    shaded, the plug-in ECE as dots; with ``drift``
    (:func:`bece.drift_test`) the reference windows shaded grey and the
    windows that alarm marked with red triangles.

    Parameters
    ----------
    result : GroupECE
        From :func:`bece.bayesian_ece` with ``by=`` the windows (e.g.
        :func:`bece.io.window_starts`): datetimes or numbers, in order.
    drift : Drift, optional
    ax : matplotlib Axes, optional
    prob : float, default 0.9

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> import bece
    >>> from bece.plots import plot_over_time
    >>> rng = np.random.default_rng(0)
    >>> day = np.repeat(np.arange(8), 1000)
    >>> p = rng.uniform(size=day.size)
    >>> y = rng.uniform(size=day.size) < np.where(day >= 5, p ** 1.5, p)
    >>> r = bece.bayesian_ece(y, p, by=day, num_samples=1000)
    >>> ax = plot_over_time(r, drift=bece.drift_test(r))
    >>> [t.get_text() for t in ax.get_legend().get_texts()]
    ['90% band', 'posterior mean ECE', 'plug-in ECE', 'reference', 'drift alarm (p < 0.01)']
    >>> plt.close(ax.figure)
    """
    if not isinstance(result, GroupECE):
        raise ValueError(f"result must be a GroupECE (bece.bayesian_ece with by= the windows), "
                         f"got {type(result).__name__}")
    if result.groups.dtype.kind not in "iufM":
        raise ValueError(f"the groups must be windows of time (datetimes or numbers), got "
                         f"{result.groups.dtype}: use plot_groups")
    prob = check_prob(prob)
    if ax is None:
        _, ax = pyplot().subplots(figsize=(7.5, 3.8))
    x = result.groups
    lo, hi = result.interval(prob)
    ax.fill_between(x, lo, hi, color="C0", alpha=0.25, lw=0, label=f"{prob:.0%} band",
                    step=None)
    ax.plot(x, result.mean, "-", color="C0", lw=1.5, label="posterior mean ECE")
    ax.plot(x, result.plugin, "o", color="k", ms=3.5, label="plug-in ECE")
    if drift is not None:
        # each reference window shaded from its start to the next window's
        ends = np.append(x[1:], x[-1] + (x[-1] - x[-2] if x.size > 1 else 1))
        for j in np.flatnonzero(np.isin(x, drift.reference)):
            ax.axvspan(x[j], ends[j], color="0.6", alpha=0.3, lw=0, zorder=0,
                       label="reference" if j == 0 else "_nolegend_")
        hits = drift.windows[drift.alarm]
        if hits.size:
            at = np.isin(x, hits)
            ax.plot(x[at], hi[at], "v", color="C3", ms=8,
                    label=f"drift alarm (p < {drift.alpha:g})", zorder=4)
    ax.set_ylim(bottom=0.0)
    ax.set_ylabel("expected calibration error (ECE)")
    ax.set_xlabel("window")
    words = "partial pooling across windows" if result.pooling == "partial" else "each window alone"
    ax.set_title(f"ECE over time ({words})", fontsize="medium")
    ax.legend(loc="upper left", fontsize="x-small", frameon=False, ncols=2)
    if x.dtype.kind == "M":
        ax.figure.autofmt_xdate()
    return ax
