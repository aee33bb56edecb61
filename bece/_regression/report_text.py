"""The text of a regression calibration posterior: what ``bece report`` prints
for regression forecasts under its header.

:meth:`bece.regression.BayesianCalibrationError.text` writes it: the verdict
of the calibration test when one is given, the calibration error with its
interval and plug-in value, the calibration curve's table with its band, and
what the columns mean.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["ALPHA", "TABLE_LEVELS", "TEST_WORDS", "regression_verdict", "report_lines", "table_rows"]

#: Levels the text table shows when there are many (the nearest of each).
TABLE_LEVELS = (0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95)
#: Size of the test behind the verdict: "miscalibrated" when p < ALPHA.
ALPHA = 0.05
#: The tests' names.
TEST_WORDS = {"anderson-darling": "Anderson-Darling", "cramer-von-mises": "Cramér-von Mises",
              "kolmogorov-smirnov": "Kolmogorov-Smirnov"}


def table_rows(levels: np.ndarray, every: bool = False) -> np.ndarray:
    """Indices of the levels the text table shows: all of them when
    ``every`` or when there are at most 11, else the nearest to each of
    :data:`TABLE_LEVELS`."""
    if every or levels.size <= 11:
        return np.arange(levels.size)
    return np.unique([int(np.argmin(np.abs(levels - t))) for t in TABLE_LEVELS])


def regression_verdict(test: Any, result: Any, *, alpha: float = ALPHA,
                       prob: float = 0.9) -> dict[str, Any]:
    """The one-line verdict on calibration and the numbers behind it.

    ``test`` (a :class:`~bece.regression.RegressionCalibrationTest` of the
    same PIT values) read by the rule of classifiers
    (:meth:`~bece.regression.RegressionCalibrationTest.verdict`: its p-value
    at ``alpha`` and its Bayes factor), with ``result``'s ``prob`` interval
    of the calibration error, which says how far from calibrated. Keys: the
    verdict's (:meth:`bece._results.verdict.Verdict.to_dict`: ``verdict``,
    ``calibrated``, ``p_value``, ``bayes_factor``, ``level`` (``alpha``),
    ...), ``test`` (the p-value's method), ``prob_calibrated`` and
    ``prior_odds``, and ``text`` (the line, with the test's name).
    """
    v = test.verdict(alpha)
    lo, hi = result.interval(prob)
    error = f"calibration error {result.mean:.2g} [{lo:.2g}, {hi:.2g}]"
    name = TEST_WORDS.get(test.method, test.method)
    text = (f"{v.label} ({name} {v.numbers}), {error}"
            + (f": {v.reason}" if v.calibrated is None else ""))
    return {**v.to_dict(), "test": test.method, "prob_calibrated": test.prob_calibrated,
            "prior_odds": test.prior_odds, "text": text}


#: How the calibration error weighs its levels (``weights``), in words, and
#: where it stands to Kuleshov et al. (2018)'s cal.
WEIGHT_WORDS = {"mean": ("mean over", "; Kuleshov et al.'s cal is the sum"),
                "sum": ("sum over", ": Kuleshov et al.'s cal"),
                "count": ("mean, weighted by the targets below each level, over", ""),
                "array": ("weighted sum over", "")}


def _levels_text(levels: list[float]) -> str:
    if len(levels) <= 6:
        return f"{len(levels)} level(s) " + ", ".join(f"{p:g}" for p in levels)
    return f"{len(levels)} levels {levels[0]:g} ... {levels[-1]:g}"


def report_lines(result: Any, prob: float = 0.9, *, test: Any = None, alpha: float = ALPHA,
                 every: bool = False) -> list[str]:
    """The lines of :meth:`bece.regression.BayesianCalibrationError.text` (see there)."""
    d = result.to_dict(prob)
    e = d["calibration_error"]
    pct = f"{e['prob']:.0%}"
    lo, hi = e["interval"]
    sd = "-" if e["std"] is None or not np.isfinite(e["std"]) else f"{e['std']:.2g}"
    v = None if test is None else regression_verdict(test, result, alpha=alpha, prob=prob)
    lines = [
        *([f"  verdict            {v['text']}", ""] if v is not None else []),
        f"  calibration error  {e['mean']:.3g}   posterior mean (sd {sd}, "
        f"{result.num_samples:,} draws)",
        f"  {pct} interval       [{lo:.3g}, {hi:.3g}]   equal-tailed credible interval",
        f"  plug-in            {e['plugin']:.3g}",
        f"  ({WEIGHT_WORDS[e.get('weights', 'mean')][0]} {_levels_text(e['levels'])} of "
        f"(level - observed)^2{WEIGHT_WORDS[e.get('weights', 'mean')][1]})",
        "",
        f"  {'level':>7}  {'observed':>8}  {'gap':>7}  {pct} band",
    ]
    curve = d["curve"]
    for j in table_rows(np.array([c["level"] for c in curve]), every):
        c = curve[j]
        b = c["interval"]
        lines.append(f"  {c['level']:>7g}  {c['observed']:>8.4f}  {c['observed'] - c['level']:>+7.4f}  "
                     f"[{b[0]:.4f}, {b[1]:.4f}]")
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
    if v is not None:
        lines += [
            f"  verdict: consistent with calibration when p >= {v['level']:g} and B01 >= 1, "
            f"miscalibrated when p < {v['level']:g}",
            f"  and B01 < 1, else inconclusive; p from the {TEST_WORDS.get(v['test'], v['test'])} "
            "test of a uniform PIT, B01 the Bayes",
            "  factor of calibration against a smooth miscalibrated PIT distribution",
        ]
    return lines
