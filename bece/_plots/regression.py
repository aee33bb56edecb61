"""The regression calibration curve (observed P(PIT <= p_j) against p_j) with its band."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._base.checks import check_prob
from .._regression.bayesian import BayesianCalibrationError
from .common import BAND_COLOR, pyplot

__all__ = [
    "plot_calibration_curve",
]


def plot_calibration_curve(
    result: BayesianCalibrationError, *, ax: Any = None, prob: float = 0.9
) -> Any:  # the matplotlib Axes
    """Regression calibration curve with the band its observed points should lie in.

    Parameters
    ----------
    result : bece.regression.BayesianCalibrationError
        With ``levels`` (J,), ``curve`` (S, J) draws of the observed
        :math:`P(\\mathrm{PIT} \\le p_j)`, ``observed`` (J,) empirical
        frequencies, and ``predictive_interval(prob)`` (else the draws'
        quantiles).
    ax : matplotlib Axes, optional
    prob : float, default 0.9
        Mass of the band: ``result.predictive_interval(prob)``, where the
        observed curve of n PIT values lies under the fitted model
        (posterior predictive: an honest forecaster's points fall inside it
        at about the nominal rate).

    Returns
    -------
    matplotlib Axes
        The diagonal, the band (``fill_between`` over the levels), the
        posterior median of the population's curve and the observed points
        :math:`(p_j, \\hat p_j)` (Kuleshov et al. 2018).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")                      # no window: a script or a test
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> from bece.plots import plot_calibration_curve
    >>> from bece.regression import bayesian_calibration_error, pit
    >>> y = np.random.default_rng(0).normal(size=1000)
    >>> r = bayesian_calibration_error(pit(y, mean=0.0, std=0.7), num_samples=1000)
    >>> ax = plot_calibration_curve(r)
    >>> [line.get_label() for line in ax.get_lines()]
    ['perfect calibration', 'posterior median', 'observed (empirical)']
    >>> plt.close(ax.figure)
    """
    prob = check_prob(prob)
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
    if hasattr(result, "predictive_interval"):
        lo, hi = (np.asarray(a, dtype=np.float64) for a in result.predictive_interval(prob))
    else:
        lo, hi = np.quantile(curve, [(1 - prob) / 2, (1 + prob) / 2], axis=0)
    med = np.median(curve, axis=0)
    if ax is None:
        _, ax = pyplot().subplots(figsize=(5.5, 5.5))
    ax.plot([0, 1], [0, 1], ls="--", color="0.4", lw=1, label="perfect calibration", zorder=1)
    ax.fill_between(levels, lo, hi, color=BAND_COLOR, alpha=0.3, lw=0,
                    label=f"{prob:.0%} band of the observed curve (posterior predictive)", zorder=2)
    ax.plot(levels, med, color=BAND_COLOR, lw=1.5, label="posterior median", zorder=3)
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
