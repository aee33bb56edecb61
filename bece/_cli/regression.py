"""``bece report`` on regression forecasts: a verdict, the calibration error and curve.

The file's forecasts (:func:`bece._io.files.read_forecasts`: Gaussian
``mean``/``std``, quantile columns ``q_<level>`` or sample columns
``s_0 ... s_{S-1}``) give the PIT :math:`u_t = F_t(y_t)`
(:func:`bece.regression.pit`; randomised for sample and quantile forecasts,
whose PIT is otherwise discrete, with ``--seed``), and the PIT gives

* the verdict: :func:`bece.regression.pit_calibration_test` (:func:`verdict`);
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
shows at most about seven of them (those nearest to :data:`bece._regression.report_text.TABLE_LEVELS`)
unless ``--levels`` was given; ``--json`` has them all.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import Any

import numpy as np

from .._regression.report_text import ALPHA, regression_verdict
from .common import PROB, figure, to_json, warning_line, write_outputs

__all__ = [
    "FORMS",
    "forecast_pit",
    "format_regression",
    "grouping",
    "regression_dict",
    "regression_test",
    "report_levels",
    "run_regression",
    "verdict",
]

#: The forecasts' forms in words.
FORMS = {"gaussian": "Gaussian", "quantiles": "quantile", "samples": "sample"}


def forecast_pit(forecasts: Any, seed: int) -> np.ndarray:
    """The PIT values of the file's forecasts: exact for a Gaussian forecast,
    randomised within the step (from ``seed``) for quantiles and samples."""
    from .._regression.forecast import pit

    fc = forecasts
    if fc.form == "gaussian":
        return pit(fc.y, mean=fc.mean, std=fc.std)
    if fc.form == "quantiles":
        return pit(fc.y, quantiles=fc.quantiles, levels=fc.columns.levels, randomize=True,
                   seed=seed)
    return pit(fc.y, samples=fc.samples, randomize=True, seed=seed)


def report_levels(args: Any, forecasts: Any) -> np.ndarray | None:
    """The levels of the report: ``--levels``, else a quantile forecast's own, else
    None (the default grid)."""
    from .._regression.forecast import check_levels

    if args.levels is not None:
        return check_levels(args.levels, "--levels")
    return forecasts.columns.levels if forecasts.form == "quantiles" else None


# --------------------------------------------------------------- verdict
def grouping(forecasts: Any) -> dict[str, Any]:
    """``forecast_levels=`` / ``forecast_draws=`` for the file's forecasts: a quantile
    forecast's levels, the number S of a sample forecast's draws when S < 1000, else
    neither: with 1000 draws or more the ranks are 1/(S + 1) apart, the randomised PIT
    is close to continuous, and the ranks' binomial shares would cost seconds per
    thousand draws (:func:`bece._regression.cells.observed_cells`)."""
    from .._regression.histogram import DEFAULT_CELLS

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

    :func:`bece.regression.pit_calibration_test` on the PIT (``seed`` for its
    resampled p-value and its Bayes factor), read by the rule of classifiers
    (:func:`bece._regression.report_text.regression_verdict`; the p-value's
    false-alarm rate on a calibrated forecaster is ``alpha``, exact for the
    randomised PIT too), with the calibration error's ``prob`` interval
    from ``result``, which says how far from calibrated. ``forecast_levels`` /
    ``forecast_draws`` as given to ``result``'s
    :func:`bece.regression.bayesian_calibration_error`, so that the Bayes
    factor is fitted to the same counts.

    Returns
    -------
    dict
        :func:`~bece._regression.report_text.regression_verdict`'s: the
        verdict (``verdict``, ``calibrated``: true, false or null,
        ``p_value``, ``bayes_factor``, ``level``, ...), ``test``,
        ``prob_calibrated``, ``prior_odds`` and ``text`` (the line).
    """
    return regression_verdict(regression_test(u, seed=seed, forecast_levels=forecast_levels,
                                              forecast_draws=forecast_draws),
                              result, alpha=alpha, prob=prob)


def regression_test(u: np.ndarray, *, seed: int, forecast_levels: Any = None,
                    forecast_draws: int | None = None) -> Any:
    """:func:`bece.regression.pit_calibration_test` of the PIT values behind the verdict."""
    from .._regression.pit_bayes_factor import pit_calibration_test

    return pit_calibration_test(u, seed=seed, forecast_levels=forecast_levels,
                            forecast_draws=forecast_draws)


# ------------------------------------------------------------- the report
def regression_dict(
    result: Any, u: np.ndarray, forecasts: Any, *, randomized: bool, seed: int, prob: float = PROB,
    test: Any = None,
) -> dict[str, Any]:
    """The JSON object of ``bece report`` on regression forecasts.

    ``{"kind": "regression", "source", "forecast", "n", "columns": {"y",
    "forecast"}, "pit": {"randomized", "seed"}, "verdict": {...},
    "calibration_error": {"mean", "std", "prob", "interval", "plugin",
    "levels"}, "curve": [{"level", "observed", "interval"}, ...]}``; the
    curve has every level of the result, ``verdict`` is :func:`verdict`'s
    (from ``test`` when given, the calibration test of the same PIT values).
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
        "verdict": (verdict(u, result, seed=seed, prob=prob, **grouping(forecasts)) if test is None
                    else regression_verdict(test, result, alpha=ALPHA, prob=prob)),
        "calibration_error": own["calibration_error"],
        "curve": own["curve"],
    }


def format_regression(result: Any, test: Any, forecasts: Any, u: np.ndarray, *, randomized: bool,
                      seed: int, every: bool = False) -> str:
    """``bece report`` on regression forecasts: a header naming the file, its
    forecasts and how their PIT was computed, then the result's own
    :meth:`~bece.regression.BayesianCalibrationError.text` with the test's verdict."""
    cols = forecasts.columns
    used = cols.forecast
    shown = ", ".join(used[:4]) + (f", ... ({len(used)} columns)" if len(used) > 4 else "")
    pit = f"randomised PIT, seed {seed}" if randomized else "continuous PIT"
    head = (f"bece report: {forecasts.source} ({u.size:,} {FORMS[forecasts.form]} regression "
            f"forecasts of {cols.y} by {shown}; {pit})")
    return "\n".join([head, result.text(PROB, test=test, alpha=ALPHA, every=every)])


def run_regression(args: argparse.Namespace, path: Any, conventions: dict[str, str]) -> int:
    """``bece report FILE`` on a file of regression forecasts; returns the exit code."""
    from .._api.regression import bayesian_calibration_error
    from .._io.files import read_forecasts
    fc = read_forecasts(path, **conventions)
    levels = report_levels(args, fc)
    randomized = fc.form != "gaussian"
    # warnings of the computation (e.g. autocorrelated draws) as one line
    # each on stderr, not Python's two-line 'file:line: Warning' form
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        u = forecast_pit(fc, args.seed)
        # only the counts between the forecast's levels (quantiles) or the ranks among
        # its draws (samples) carry information: the smooth model is fitted to them
        result = bayesian_calibration_error(u, levels, num_samples=args.samples, seed=args.seed,
                                            **grouping(fc))
        test = regression_test(u, seed=args.seed, **grouping(fc))
        d = regression_dict(result, u, fc, randomized=randomized, seed=args.seed, test=test)
    for line in dict.fromkeys(warning_line(w.message) for w in caught):
        print(line, file=sys.stderr)
    html = args.html
    text = format_regression(result, test, fc, u, randomized=randomized, seed=args.seed,
                             every=args.levels is not None)
    print(to_json(d) if args.json else text)
    fig = None
    if args.plot is not None or html is not None:
        from pathlib import Path

        from .._plots.regression import plot_calibration_curve

        fig = figure((5.5, 5.5))
        ax = plot_calibration_curve(result, ax=fig.add_subplot())
        ax.set_title(f"{Path(fc.source).name} ({FORMS[fc.form]} forecasts, n = {u.size:,})\n"
                     f"{ax.get_title()}", fontsize="medium")
    write_outputs(args, fig, f"bece report: {fc.source}", text, d, result)
    return 0
