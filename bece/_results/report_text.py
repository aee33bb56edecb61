"""The text of a posterior of the ECE: what ``bece report`` prints under its header.

:meth:`bece.BayesianECE.text` writes it: the verdict of the calibration
test when one is given, the ECE's posterior mean and interval (with the
binned model's beside it when given as the reference), the predictions and
bins, and the per-bin table in the words of the input kind (DESIGN.md 3a).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .text import TOP_LABEL_SCOPE, format_prob, input_words

__all__ = ["WORDS", "edge_texts", "report_lines", "table_words", "verdict_lines"]


#: The words of each input kind's per-bin table (DESIGN.md 3a): P(y = 1)
#: input has an observed frequency of y = 1 and a mean predicted P(y = 1),
#: and a bin over- or under-predicts; (correct, confidence) input has
#: accuracy and confidence, and a bin is over- or under-confident.
WORDS = {
    "binary": {"observed": "freq y=1", "predicted": "mean P(y=1)", "overall": "freq y=1",
               "overall_text": "overall (mean predicted P(y = 1) {:.4f})",
               "model": "model freq y=1",
               "legend": ["freq y=1 = observed frequency of y = 1 in the bin; mean P(y=1) = mean "
                          "predicted P(y = 1)",
                          "gap = freq y=1 - mean P(y=1) (negative: the bin over-predicts y = 1; "
                          "positive: under-predicts)"],
               "model_legend": "model freq y=1: the smooth curve's frequency of y = 1 over the bin "
                               "(posterior mean [interval]);",
               "observed_note": "freq y=1, mean P(y=1) and gap are the observed ones"},
    "top-label": {"observed": "accuracy", "predicted": "confidence", "overall": "accuracy",
                  "overall_text": "overall (mean confidence {:.4f})",
                  "model": "model accuracy",
                  "legend": ["gap = accuracy - confidence (negative: over-confident; positive: "
                             "under-confident)"],
                  "model_legend": "model accuracy: the smooth curve's accuracy over the bin "
                                  "(posterior mean [interval]);",
                  "observed_note": "accuracy, confidence and gap are the observed ones"},
}


def table_words(kind: str | None) -> dict[str, Any]:
    """The table's words for ``kind`` (``"triples"`` and unknown kinds read as top-label)."""
    return WORDS["binary"] if kind == "binary" else WORDS["top-label"]


def edge_texts(edges: Any, least: int = 3, most: int = 10) -> list[str]:
    """Bin edges as text with the fewest decimals (from ``least`` to
    ``most``) that tell every two different edges apart (quantile bins
    of confidences piled near 1 need more than three)."""
    e = np.asarray(edges, dtype=np.float64)
    distinct = np.unique(e).size
    digits = least
    while digits < most and np.unique(np.round(e, digits)).size < distinct:
        digits += 1
    return [f"{x:.{digits}f}" for x in e]


def verdict_lines(test: Any, level: float = 0.05) -> list[str]:
    """The opening line(s) of a test's text: the verdict, and for top-label
    input what it covers."""
    v = test.verdict(level)
    lines = [f"  verdict       {v.headline}"]
    if v.calibrated is None:  # inconclusive: how the two answers disagree
        lines.append(f"                ({v.reason})")
    if test.kind == "top-label":
        lines.append(f"                ({TOP_LABEL_SCOPE})")
    return lines


#: The "if not 0" line is printed from this probability of exact calibration
#: on (below it the ECE given it is not 0 is the ECE's own posterior to the
#: digits shown; the JSON has it always).
SHOW_IF_MISCALIBRATED = 0.01


def _if_miscalibrated_line(m: dict[str, Any], pct: str) -> list[str]:
    """The ECE given it is not 0: mean, interval and bound of the model alone."""
    lo, hi = m["interval"]
    return [f"  if not 0      {m['mean']:.4f} [{lo:.4f}, {hi:.4f}], {pct} bound {m['upper_bound']:.4f}   "
            "the ECE given it is not exactly 0"]


#: What the studies found for the binned model's intervals, printed wherever
#: the binned model is shown beside the default (validation page).
BINNED_COVERAGE = ("its 90% intervals under-cover: 0.00-0.65 at n = 300 in the binary studies, "
                   "0.00 at K = 100 labels")


def _plugin_lines(d: dict[str, Any], pct: str) -> list[str]:
    """Why the plug-in lies outside the interval, when it does: its expected
    bias for the data at hand (:meth:`bece.BayesianECE.plugin_bias`)."""
    lo, hi = d["ece"]["interval"]
    plugin, bias = d["plugin_ece"], d["plugin_bias"]
    if lo <= plugin <= hi:
        return []
    side = "above" if plugin > hi else "below"
    return [f"                {side} the {pct} interval: the plug-in's expected bias on these "
            f"predictions is {bias:+.4f}",
            "                (its mean with outcomes redrawn from the posterior, minus the "
            "posterior mean)"]


def _importance_lines(params: Any) -> list[str]:
    """A warning where the smooth posterior's importance weights cannot be
    trusted (Pareto k at least :data:`bece._base.psis.PARETO_K_MAX`): the
    draws are then the Laplace mixture itself (top-label) or resampled with
    unreliable weights. (In the top-label study's miscalibrated K = 100 rows
    such replications covered 0.62 (5 of 8) to 0.95, the others 0.75 to
    0.94; and 0.96 where every replication had them: K = 1,000, per-label
    map; docs: validation.)"""
    from .._base.psis import PARETO_K_MAX

    k = float(getattr(params, "pareto_k", np.nan))
    if not k >= PARETO_K_MAX:  # NaN (no importance step) or reliable
        return []
    kept = not getattr(params, "resampled", True)
    what = ("the draws are the Laplace mixture, uncorrected" if kept else
            "the draws were resampled with weights that cannot be trusted")
    return [f"  importance    weights unreliable (Pareto k {k:.2f} >= {PARETO_K_MAX}): {what};",
            "                the fast path's error is not measured here; bece.cross_check "
            "compares it with NUTS"]


def report_lines(result: Any, prob: float = 0.9, *, test: Any = None,
                 reference: Any = None) -> list[str]:
    """The lines of :meth:`bece.BayesianECE.text` (see there)."""
    d = result.to_dict(prob)
    stats = result.stats
    kind = stats.kind
    words = table_words(kind)
    overall = stats.counts[1].sum() / stats.n
    mean_pred = float(stats.sum_p.sum()) / stats.n
    lo, hi = d["ece"]["interval"]
    pct = f"{prob:.0%}"
    smooth = d["model"] == "smooth"
    rule = "uniform" if stats.binning.rule == "uniform" else "by edges"
    lines = [
        *(verdict_lines(test) if test is not None else []),
        f"  Bayesian ECE  {d['ece']['mean']:.4f}   posterior mean (sd {d['ece']['std']:.4f}, "
        f"{result.num_samples:,} draws)",
        f"  {pct} interval  [{lo:.4f}, {hi:.4f}]   equal-tailed credible interval",
        f"  {pct} bound     {d['ece']['upper_bound']:.4f}   ECE at most this with probability {prob:g}",
        *([f"  P(calibrated) {format_prob(d['prob_calibrated'])}   posterior probability of exact "
           f"calibration, ECE 0 (prior odds {d['prior_odds']:g})"] if "prob_calibrated" in d else []),
        *(_if_miscalibrated_line(d["if_miscalibrated"], pct)
          if "if_miscalibrated" in d and d["prob_calibrated"] >= SHOW_IF_MISCALIBRATED else []),
        f"  plug-in ECE   {d['plugin_ece']:.4f}",
        *_plugin_lines(d, pct),
    ]
    if getattr(result, "labels", None) is not None:  # the top-label ECE: how labels are averaged
        how = ("unweighted mean over" if result.average == "label" else
               "mean weighted by how often each is predicted, over")
        labels = f"{result.n_labels:,} predicted label" + ("" if result.n_labels == 1 else "s")
        lines.append(f"  top-label     {how} the {labels} "
                     f"(average={result.average!r}); the table pools the labels")
    if reference is not None:
        rlo, rhi = reference.interval(prob)
        lines.append(f"  binned model  {reference.mean:.4f} [{rlo:.4f}, {rhi:.4f}]   reference: the "
                     "binned BECE model (model='binned'), biased up at small n;")
        lines.append(f"                {BINNED_COVERAGE}")
    lines += [
        "",
        f"  predictions   {stats.n:,} ({input_words(kind)})",
        f"  bins          {stats.n_bins} {rule}, {int((stats.bin_counts == 0).sum())} empty",
        f"  {words['overall']:<13} {overall:.4f} {words['overall_text'].format(mean_pred)}",
    ]
    if d["model"] == "binned-literal":
        lines.append("  model         binned BECE model, literal form (each confidence a truncated "
                     "Normal in its bin)")
    if smooth:
        atoms = ("every prediction an atom (exact)" if d["grid"] is None else
                 f"{d['grid']} sub-cells per bin, grid error <= {d['grid_error']:.1e} per ECE draw")
        lines.append(f"  model         smooth calibration curve (Laplace), {atoms}")
    lines += _importance_lines(getattr(result, "params", None))
    obs, pred = words["observed"], words["predicted"]
    edge = edge_texts(stats.edges)
    width = 2 * len(edge[0]) + 5
    lines += [
        "",
        f"  {'bin':>3}  {'range':<{width}} {'count':>8}  {obs:>8}  {pred:>11}  {'gap':>7}"
        + (f"  {words['model']} [{pct}]" if smooth else ""),
    ]

    def cell(x: float | None, w: int) -> str:
        return f"{'-':>{w}}" if x is None else f"{x:>{w}.4f}"

    for m, b in enumerate(d["bins"]):
        right = "]" if m == stats.n_bins - 1 else ")"
        span = f"[{edge[m]}, {edge[m + 1]}{right}"
        gap = "-" if b["count"] == 0 else f"{b['observed'] - b['predicted']:+.4f}"
        row = (
            f"  {m + 1:>3}  {span:<{width}} {b['count']:>8,}  {cell(b['observed'], max(8, len(obs)))}  "
            f"{cell(b['predicted'], 11)}  {gap:>7}"
        )
        if smooth:
            ma = b["model_observed"]
            row += f"  {ma['mean']:.4f} [{ma['interval'][0]:.4f}, {ma['interval'][1]:.4f}]"
        lines.append(row)
    lines.append("")
    lines += [f"  {text}" for text in words["legend"]]
    if smooth:
        lines.append(f"  {words['model_legend']}")
        lines.append(f"  {words['observed_note']}")
    if test is not None:
        lines.append("  verdict: consistent with calibration when p >= 0.05 and B01 >= 1, "
                     "miscalibrated when p < 0.05")
        lines.append("  and B01 < 1, else inconclusive; B01 = Bayes factor of exact calibration "
                     "(bece test says more)")
    return lines
