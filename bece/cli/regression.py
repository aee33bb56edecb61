"""``bece report`` on regression forecasts: a verdict, the calibration error and curve.

The file's forecasts (:func:`bece.io.files.read_forecasts`: Gaussian
``mean``/``std``, quantile columns ``q_<level>`` or sample columns
``s_0 ... s_{S-1}``) give the PIT :math:`u_t = F_t(y_t)`
(:func:`bece.regression.pit`; randomised for sample and quantile forecasts,
whose PIT is otherwise discrete, with ``--seed``), and the PIT gives

* the verdict: :func:`bece.regression.calibration_test` (:func:`verdict`);
* Kuleshov's calibration error
  :math:`\\mathrm{cal} = \\sum_j (p_j - \\hat p_j)^2` over the levels
  :math:`p_j`: its posterior (:func:`bece.regression.bayesian_calibration_error`,
  ``--samples`` draws, ``--seed``) and plug-in value; for quantile and
  sample forecasts the smooth model is fitted to the counts between the
  forecast's levels (:func:`grouping`): ``forecast_levels=`` the quantile
  levels, where the randomised PIT is uniform, or ``forecast_draws=S`` for
  S < 1000 draws, the model of the ranks of y among the draws; the
  verdict's Bayes factor is fitted the same way;
* the calibration curve: observed :math:`\\hat p_j = |\\{t: u_t \\le p_j\\}|/T`
  against :math:`p_j`, with the posterior's pointwise band.

Levels: ``--levels``, else the forecast's own levels for a quantile forecast
(where :math:`\\{u_t \\le \\tau_k\\} = \\{y_t \\le q_{t,k}\\}` exactly, with
no interpolation between quantiles), else 0.01, ..., 0.99. The text table
shows at most about seven of them (those nearest to :data:`TABLE_LEVELS`)
unless ``--levels`` was given; ``--json`` has them all.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import Any

import numpy as np

from .common import PROB, figure, save, to_json

__all__ = [
    "ALPHA",
    "TABLE_LEVELS",
    "format_regression",
    "regression_dict",
    "run_regression",
    "table_rows",
    "verdict",
]

#: Levels the text table shows (the nearest of the result's levels to each).
TABLE_LEVELS = (0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95)
#: Size of the test behind the verdict: "miscalibrated" when p < ALPHA.
ALPHA = 0.05

_FORMS = {"gaussian": "Gaussian", "quantiles": "quantile", "samples": "sample"}
_TESTS = {"anderson-darling": "Anderson-Darling", "cramer-von-mises": "Cramér-von Mises",
          "kolmogorov-smirnov": "Kolmogorov-Smirnov"}


# --------------------------------------------------------------- verdict
def grouping(forecasts: Any) -> dict[str, Any]:
    """``forecast_levels=`` / ``forecast_draws=`` for the file's forecasts: a quantile
    forecast's levels, the number S of a sample forecast's draws when S < 1000, else
    neither: with 1000 draws or more the ranks are 1/(S + 1) apart, the randomised PIT
    is close to continuous, and the ranks' binomial shares would cost seconds per
    thousand draws (:func:`bece.regression.cells.observed_cells`)."""
    from ..regression.histogram import DEFAULT_CELLS

    if forecasts.form == "quantiles":
        return {"forecast_levels": forecasts.columns.levels}
    draws = forecasts.samples
    if forecasts.form == "samples" and draws is not None and draws.shape[1] < DEFAULT_CELLS:
        return {"forecast_draws": int(draws.shape[1])}
    return {}


def verdict(
    u: np.ndarray, result: Any, *, seed: int, alpha: float = ALPHA, prob: float = PROB,
    forecast_levels: Any = None, forecast_draws: int | None = None,
) -> dict[str, Any]:
    """The one-line verdict on calibration and the numbers behind it.

    :func:`bece.regression.calibration_test` on the PIT (``seed`` for its
    resampled p-value and its Bayes factor): "miscalibrated" when its
    p-value rejects a uniform PIT at ``alpha`` (its false-alarm rate on a
    calibrated forecaster, exact for the randomised PIT too), else "no
    evidence of miscalibration"; with the posterior probability of
    calibration (prior odds 1) and the calibration error's ``prob``
    interval from ``result``, which say how sure. ``forecast_levels`` /
    ``forecast_draws`` as given to ``result``'s
    :func:`bece.regression.bayesian_calibration_error`, so that the Bayes
    factor is fitted to the same counts.

    Returns
    -------
    dict
        ``calibrated`` (bool: not rejected at ``alpha``), ``test`` (the
        p-value's method), ``p_value``, ``alpha``, ``bayes_factor`` (for
        calibration, against the smooth model), ``prob_calibrated`` and
        ``text`` (the line).
    """
    from ..regression.calibration_test import calibration_test

    t = calibration_test(u, seed=seed, forecast_levels=forecast_levels, forecast_draws=forecast_draws)
    calibrated = not t.reject(alpha)
    lo, hi = result.interval(prob)
    floor = t.resampled is not None and t.p_value <= 1.0 / (t.resampled.size + 1) * (1 + 1e-12)
    shown = f"p <= {t.p_value:.2g}" if floor else f"p = {t.p_value:.2g}"
    pc = t.prob_calibrated
    pc_text = (f"= {pc:.3f}" if 0.001 <= pc <= 0.999 else "> 0.999" if pc > 0.999
               else f"= {pc:.1e}")
    test = f"{_TESTS.get(t.method, t.method)} {shown}, P(calibrated | data) {pc_text}"
    error = f"calibration error {result.mean:.2g} [{lo:.2g}, {hi:.2g}]"
    head = "no evidence of miscalibration" if calibrated else "miscalibrated"
    return {"calibrated": calibrated, "test": t.method, "p_value": t.p_value, "alpha": alpha,
            "bayes_factor": t.bayes_factor, "prob_calibrated": t.prob_calibrated,
            "text": f"{head} ({test}), {error}"}


# ------------------------------------------------------------- the report
def table_rows(levels: np.ndarray, every: bool = False) -> np.ndarray:
    """Indices of the levels the text table shows: all of them when
    ``every`` or when there are at most 11, else the nearest to each of
    :data:`TABLE_LEVELS`."""
    if every or levels.size <= 11:
        return np.arange(levels.size)
    return np.unique([int(np.argmin(np.abs(levels - t))) for t in TABLE_LEVELS])


def regression_dict(
    result: Any, u: np.ndarray, forecasts: Any, *, randomized: bool, seed: int, prob: float = PROB
) -> dict[str, Any]:
    """The JSON object of ``bece report`` on regression forecasts.

    ``{"kind": "regression", "source", "forecast", "n", "columns": {"y",
    "forecast"}, "pit": {"randomized", "seed"}, "verdict": {...},
    "calibration_error": {"mean", "std", "prob", "interval", "plugin",
    "levels"}, "curve": [{"level", "observed", "interval"}, ...]}``; the
    curve has every level of the result, ``verdict`` is :func:`verdict`'s.
    """
    own = result.to_dict(prob)
    cols = forecasts.columns
    return {
        "kind": "regression",
        "source": forecasts.source,
        "forecast": cols.form,
        "n": int(u.size),
        "columns": {"y": cols.y, "forecast": cols.forecast},
        "pit": {"randomized": randomized, "seed": seed if randomized else None},
        "verdict": verdict(u, result, seed=seed, prob=prob, **grouping(forecasts)),
        "calibration_error": own["calibration_error"],
        "curve": own["curve"],
    }


def _levels_text(levels: list[float]) -> str:
    if len(levels) <= 6:
        return f"{len(levels)} level(s) " + ", ".join(f"{p:g}" for p in levels)
    return f"{len(levels)} levels {levels[0]:g} ... {levels[-1]:g}"


def format_regression(d: dict[str, Any], num_samples: int, every: bool = False) -> str:
    """Human-readable report from :func:`regression_dict`'s object: the
    verdict, the calibration error, the curve table, the forecasts."""
    e = d["calibration_error"]
    pct = f"{e['prob']:.0%}"
    lo, hi = e["interval"]
    sd = "-" if e["std"] is None or not np.isfinite(e["std"]) else f"{e['std']:.2g}"
    lines = [
        f"bece report: {d['source']} (regression forecasts)",
        f"  verdict            {d['verdict']['text']}",
        "",
        f"  calibration error  {e['mean']:.3g}   posterior mean (sd {sd}, {num_samples:,} draws)",
        f"  {pct} interval       [{lo:.3g}, {hi:.3g}]   equal-tailed credible interval",
        f"  plug-in            {e['plugin']:.3g}",
        f"  (Kuleshov's cal = sum over {_levels_text(e['levels'])} of (level - observed)^2)",
        "",
        f"  {'level':>7}  {'observed':>8}  {'gap':>7}  {pct} band",
    ]
    curve = d["curve"]
    for j in table_rows(np.array([c["level"] for c in curve]), every):
        c = curve[j]
        b = c["interval"]
        lines.append(f"  {c['level']:>7g}  {c['observed']:>8.4f}  {c['observed'] - c['level']:>+7.4f}  "
                     f"[{b[0]:.4f}, {b[1]:.4f}]")
    cols = d["columns"]
    used = cols["forecast"]
    shown = ", ".join(used[:4]) + (f", ... ({len(used)} columns)" if len(used) > 4 else "")
    if d["pit"]["randomized"]:
        pit = f"randomised (ties and the forecast's discreteness broken at random; seed {d['pit']['seed']})"
    else:
        pit = "continuous (the forecast's CDF at y)"
    v = d["verdict"]
    lines += [
        "",
        "  observed = fraction of targets at or below the forecast's level-quantile (PIT <= level);",
        "  gap = observed - level (< 0: the quantile is too low); band: the posterior's pointwise",
        f"  {pct} credible band for the population's fraction",
    ]
    if any(c["interval"][0] == c["interval"][1] == c["level"] for c in curve):
        # both ends at the level: P(curve < level) and P(curve > level) are each
        # at most (1 - prob)/2, so at least prob of the posterior sits on the level
        lines.append(f"  (a band [level, level]: at least {e['prob']:.0%} of the posterior is on the "
                     "calibrated curve there)")
    lines += [
        f"  verdict: {_TESTS.get(v['test'], v['test'])} test of a uniform PIT at level {v['alpha']:g}; "
        "P(calibrated | data):",
        "  its Bayes factor against a smooth miscalibrated PIT distribution, prior odds 1",
        "",
        f"  forecasts          {d['n']:,} {_FORMS[d['forecast']]} (target {cols['y']}; forecast {shown})",
        f"  PIT                {pit}",
    ]
    return "\n".join(lines)


def run_regression(args: argparse.Namespace, path: Any, conventions: dict[str, str]) -> int:
    """``bece report FILE`` on a file of regression forecasts; returns the exit code."""
    from ..api.regression import bayesian_calibration_error
    from ..io.files import read_forecasts
    from ..regression.forecast import check_levels, pit
    fc = read_forecasts(path, **conventions)
    levels: np.ndarray | None = None
    if args.levels is not None:
        levels = check_levels(args.levels, "--levels")
    elif fc.form == "quantiles":
        levels = fc.columns.levels
    randomized = fc.form != "gaussian"
    # warnings of the computation (e.g. autocorrelated draws) as one line
    # each on stderr, not Python's two-line 'file:line: Warning' form
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if fc.form == "gaussian":
            u = pit(fc.y, mean=fc.mean, std=fc.std)
        elif fc.form == "quantiles":
            u = pit(fc.y, quantiles=fc.quantiles, levels=fc.columns.levels, randomize=True,
                    seed=args.seed)
        else:
            u = pit(fc.y, samples=fc.samples, randomize=True, seed=args.seed)
        # only the counts between the forecast's levels (quantiles) or the ranks among
        # its draws (samples) carry information: the smooth model is fitted to them
        result = bayesian_calibration_error(u, levels, num_samples=args.samples, seed=args.seed,
                                            **grouping(fc))
        d = regression_dict(result, u, fc, randomized=randomized, seed=args.seed)
    for message in dict.fromkeys(" ".join(str(w.message).split()) for w in caught):
        print(f"bece: warning: {message}", file=sys.stderr)
    if args.json:
        print(to_json(d))
    else:
        print(format_regression(d, result.num_samples, every=args.levels is not None))
    if args.plot is not None:
        from pathlib import Path

        from ..plots.regression import plot_calibration_curve

        fig = figure((5.5, 5.5))
        ax = plot_calibration_curve(result, ax=fig.add_subplot())
        ax.set_title(f"{Path(fc.source).name} ({_FORMS[fc.form]} forecasts, n = {u.size:,})\n"
                     f"{ax.get_title()}", fontsize="medium")
        save(fig, args.plot, args.json)
    return 0
