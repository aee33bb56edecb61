"""``bece report`` on classifier predictions: the Bayesian ECE and its per-bin table."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

from .common import (
    BINARY_NOTE,
    KINDS,
    PROB,
    check_plot_path,
    classes_line,
    edge_texts,
    figure,
    input_options,
    num,
    run_info,
    save,
    to_json,
)
from .parser import INPUT_OPTIONS

__all__ = [
    "format_report",
    "report_dict",
    "run_report",
]


def report_dict(result: Any, prob: float = PROB, seed: int | None = None) -> dict[str, Any]:
    """The JSON object of DESIGN.md §4 for a :class:`~bece.BayesianECE`, with
    ``model`` (``result.model``), ``input_kind`` (``"binary"``,
    ``"top-label"`` or ``"triples"``), ``seed`` and ``bece_version``."""
    stats = result.stats
    lo, hi = result.interval(prob)
    edges, counts = stats.edges, stats.bin_counts
    acc, conf = stats.accuracy, stats.confidence
    d = {
        **run_info(result, seed),
        "n": stats.n,
        "n_bins": stats.n_bins,
        "plugin_ece": result.plugin,
        "ece": {"mean": result.mean, "std": result.std, "prob": prob, "interval": [lo, hi]},
        "bins": [
            {
                "lo": float(edges[m]),
                "hi": float(edges[m + 1]),
                "count": int(counts[m]),
                "accuracy": num(acc[m]),
                "confidence": num(conf[m]),
            }
            for m in range(stats.n_bins)
        ],
    }
    if getattr(result, "model", "binned") == "smooth":
        # the smooth model's own per-bin accuracy (posterior mean and interval
        # of sum_j w_j sigma(f(x_j)) / sum_j w_j over the bin), and its grid
        d["model"] = "smooth"
        d["grid"] = result.params.grid
        d["grid_error"] = result.params.grid_error
        mean, (blo, bhi) = _bin_summary(result.accuracy, prob)
        for m, b in enumerate(d["bins"]):
            b["model_accuracy"] = {"mean": mean[m], "interval": [blo[m], bhi[m]]}
    return d


def _bin_summary(draws: np.ndarray, prob: float) -> tuple[list[float], tuple[list, list]]:
    """Per-column mean and equal-tailed ``prob`` interval of (S, M) draws."""
    q = np.quantile(draws, [(1 - prob) / 2, (1 + prob) / 2], axis=0)
    return draws.mean(axis=0).tolist(), (q[0].tolist(), q[1].tolist())


def format_report(result: Any, source: str, kind: str, binning: str, prob: float = PROB,
                  n_classes: int | None = None) -> str:
    """Human-readable report: headline numbers, then the per-bin table.

    ``kind`` is ``"binary"``, ``"top-label"`` or ``"triples"``
    (:attr:`bece.io.Predictions.kind`); ``n_classes`` the number of
    probability columns (K = 2 read top-label gets a note on how to read
    them as P(y = 1) instead).
    """
    d = report_dict(result, prob)
    stats = result.stats
    outcome = "P(y=1)" if kind == "binary" else "accuracy"
    overall = stats.counts[1].sum() / stats.n
    lo, hi = d["ece"]["interval"]
    pct = f"{prob:.0%}"
    smooth = d.get("model") == "smooth"
    lines = [
        f"bece report: {source}",
        f"  predictions   {stats.n:,} ({KINDS.get(kind, kind)})",
        *([f"  note          {BINARY_NOTE}"] if kind == "top-label" and n_classes == 2 else []),
        f"  bins          {stats.n_bins} {binning}, {int((stats.bin_counts == 0).sum())} empty",
        f"  {outcome:<13} {overall:.4f} overall",
    ]
    if d.get("model") == "binned-literal":
        lines.append("  model         binned BECE model, literal form (each confidence a truncated "
                     "Normal in its bin)")
    if smooth:
        atoms = ("every prediction an atom (exact)" if d["grid"] is None else
                 f"{d['grid']} sub-cells per bin, grid error <= {d['grid_error']:.1e} per ECE draw")
        lines.append(f"  model         smooth calibration curve (Laplace), {atoms}")
    lines += [
        "",
        f"  Bayesian ECE  {d['ece']['mean']:.4f}   posterior mean (sd {d['ece']['std']:.4f}, "
        f"{result.num_samples:,} draws)",
        f"  {pct} interval  [{lo:.4f}, {hi:.4f}]   equal-tailed credible interval",
        f"  plug-in ECE   {d['plugin_ece']:.4f}",
        "",
        f"  {'bin':>3}  {'range':<{2 * len(edge_texts(stats.edges)[0]) + 5}} {'count':>8}  "
        f"{'accuracy':>8}  {'confidence':>10}  {'gap':>7}"
        + (f"  model accuracy [{pct}]" if smooth else ""),
    ]

    def cell(x: float | None, width: int) -> str:
        return f"{'-':>{width}}" if x is None else f"{x:>{width}.4f}"

    edge = edge_texts(stats.edges)
    width = 2 * len(edge[0]) + 5
    for m, b in enumerate(d["bins"]):
        right = "]" if m == stats.n_bins - 1 else ")"
        span = f"[{edge[m]}, {edge[m + 1]}{right}"
        gap = "-" if b["count"] == 0 else f"{b['accuracy'] - b['confidence']:+.4f}"
        row = (
            f"  {m + 1:>3}  {span:<{width}} {b['count']:>8,}  {cell(b['accuracy'], 8)}  "
            f"{cell(b['confidence'], 10)}  {gap:>7}"
        )
        if smooth:
            ma = b["model_accuracy"]
            row += f"  {ma['mean']:.4f} [{ma['interval'][0]:.4f}, {ma['interval'][1]:.4f}]"
        lines.append(row)
    lines.append("")
    lines.append("  gap = accuracy - confidence (negative: over-confident)")
    if smooth:
        lines.append("  model accuracy: the smooth curve's accuracy over the bin (posterior mean "
                     "[interval]);")
        lines.append("  accuracy, confidence and gap are the observed ones")
    return "\n".join(lines)


#: The options of each kind of file, as (option, argparse dest); a given
#: option of the other kind is refused, never ignored.
CLASSIFIER_OPTIONS = (("--model", "model"), ("--n-bins", "n_bins"), ("--binning", "binning"),
                      *INPUT_OPTIONS, ("--metrics", "metrics"))
REGRESSION_OPTIONS = (("--y-col", "y_col"), ("--mean-col", "mean_col"), ("--std-col", "std_col"),
                      ("--quantile-prefix", "quantile_prefix"), ("--sample-prefix", "sample_prefix"),
                      ("--levels", "levels"))
_REGRESSION_DEFAULTS = {"y_col": "y", "mean_col": "mean", "std_col": "std",
                        "quantile_prefix": "q_", "sample_prefix": "s_"}


def _refuse(args: argparse.Namespace, options: tuple[tuple[str, str], ...], what: str) -> None:
    given = [flag for flag, dest in options if getattr(args, dest, None) is not None]
    if given:
        verb = "applies" if len(given) == 1 else "apply"
        raise ValueError(f"{', '.join(given)} {verb} only {what}")


def run_report(args: argparse.Namespace) -> int:
    """``bece report``: a classifier's predictions, or regression forecasts
    (detected from the file's columns); returns the exit code."""
    from ..api import posterior_ece
    from ..io.files import column_names, example_path, read_statistics
    from ..io.forecast_columns import detect_kind

    if args.plot is not None:
        check_plot_path(args.plot)
    conventions = {k: v if getattr(args, k) is None else getattr(args, k)
                   for k, v in _REGRESSION_DEFAULTS.items()}
    columns, options = input_options(args)
    if args.file is None:
        _refuse(args, REGRESSION_OPTIONS, "to regression forecasts in a FILE; the example "
                "shipped with bece holds a classifier's predictions")
        path = example_path()
    else:
        path = args.file
        if detect_kind(column_names(path), str(path), **conventions, y_true_col=columns["y_true_col"],
                       y_prob_col=columns["y_prob_col"],
                       prob_prefix=columns["prob_prefix"]) == "regression":
            from .regression import run_regression

            _refuse(args, CLASSIFIER_OPTIONS, f"to a classifier's predictions; {path} holds "
                    "regression forecasts")
            return run_regression(args, path, conventions)
        _refuse(args, REGRESSION_OPTIONS, f"to regression forecasts; {path} holds a classifier's "
                "predictions")
    args.model = "binned" if args.model is None else args.model
    args.n_bins = 15 if args.n_bins is None else args.n_bins
    args.binning = "uniform" if args.binning is None else args.binning
    # CSV and Parquet are read in chunks (bece.io.stream); a progress bar only
    # for a person watching a terminal, never in --json output
    progress = not args.json and sys.stderr.isatty()
    if args.model == "smooth":
        result, pred = _smooth_report(path, args, progress, columns, options)
    else:
        pred = read_statistics(path, n_bins=args.n_bins, binning=args.binning, progress=progress,
                               **options, **columns)
        result = posterior_ece(pred.stats, num_samples=args.samples, seed=args.seed,
                               model=args.model)
    classes = getattr(pred, "labels", None)
    metrics = (None if getattr(args, "metrics", None) is None else
               _metrics(path, args, columns, options, result))
    if args.json:
        d = report_dict(result, seed=args.seed)
        if classes is not None:
            d["classes"] = [c.item() if hasattr(c, "item") else c for c in classes]
        if metrics is not None:
            d["metrics"] = metrics
        print(to_json(d))
    else:
        source = str(path) if args.file is not None else f"{Path(path).name} (example shipped with bece)"
        text = format_report(result, source, pred.kind, args.binning, n_classes=pred.n_classes)
        if classes is not None:  # which column is which class, under the predictions line
            lines = text.split("\n")
            lines.insert(2, "  classes       " + classes_line(classes, columns["prob_prefix"],
                                                             args.labels is not None))
            text = "\n".join(lines)
        if metrics is not None:
            text += "\n" + _metrics_text(metrics)
        print(text)
    if args.plot is not None:
        from ..plots.reliability import reliability_diagram

        fig = figure((5.5, 6.2))
        # smooth: the bands are the model's pooled per-bin accuracy, which is
        # what it adds over the counts (band_prior=None)
        band: dict[str, Any] = {"band_prior": None} if args.model == "smooth" else {}
        ax = reliability_diagram(result, ax=fig.add_subplot(), **band)
        if args.model == "smooth":
            ax.set_title(f"smooth model: {ax.get_title()}", fontsize="medium")
        save(fig, args.plot, args.json)
    return 0


def _metrics(path: Any, args: argparse.Namespace, columns: dict[str, Any],
             options: dict[str, Any], result: Any) -> dict[str, Any]:
    """``--metrics``: the chosen metrics of the file's (outcome, confidence)
    pairs, the l2 ECE's interval from ``result``'s draws
    (:func:`bece.metrics.metric_report`)."""
    from ..io.files import read_predictions
    from ..metrics.registry import metric_report
    from ..stats.inputs import as_outcomes

    whole = read_predictions(path, **columns)
    z, p = as_outcomes(whole.y_true, whole.y_prob, whole.y_pred, **options)
    return metric_report(np.asarray(z, dtype=np.float64), p, args.metrics, posterior=result,
                         prob=PROB, seed=args.seed)


def _metrics_text(metrics: dict[str, Any]) -> str:
    lines = [f"  metrics ({PROB:.0%} intervals; of the (correct, confidence) pairs)"]
    for m in metrics.values():
        if "error" in m:
            lines.append(f"    {m['label']:<42} not computed: {m['error']}")
        elif "p_value" in m:
            lines.append(f"    {m['label']:<42} statistic {m['statistic']:.4f}, "
                         f"p-value {m['p_value']:.4g}")
        else:
            lo, hi = m["interval"]
            lines.append(f"    {m['label']:<42} {m['value']:.4f} [{lo:.4f}, {hi:.4f}] "
                         f"{m['interval_method']}")
    return "\n".join(lines)


def _smooth_report(path: Any, args: argparse.Namespace, progress: bool, columns: dict[str, Any],
                   options: dict[str, Any]) -> tuple[Any, Any]:
    """Fine statistics of the file (chunked) and the smooth posterior on them;
    a file of at most EXACT_MAX_N rows is small enough to read whole and
    gets the exact posterior (one atom per prediction), as
    ``bece.bayesian_ece(..., model="smooth")`` gives."""
    from ..api import bayesian_ece, posterior_ece
    from ..io.files import read_predictions, read_statistics
    from ..smooth.atoms import EXACT_MAX_N, fine_binning

    n_bins: int | None = args.n_bins
    binning: Any = args.binning
    if binning == "quantile":
        # the quantile edges need all confidences: a first pass (two for CSV
        # and Parquet, see bece.io.stream), then the fine statistics in those bins
        binning = read_statistics(path, n_bins=n_bins, binning="quantile", progress=progress,
                                  **options, **columns).stats.edges
        n_bins = None
    fine = fine_binning(n_bins, binning)
    pred = read_statistics(path, binning=fine, progress=progress, **options, **columns)
    if pred.stats.n <= EXACT_MAX_N:
        whole = read_predictions(path, **columns)
        result = bayesian_ece(whole.y_true, whole.y_prob, y_pred=whole.y_pred, n_bins=n_bins,
                              binning=binning, num_samples=args.samples, seed=args.seed,
                              model="smooth", **options)
    else:
        result = posterior_ece(pred.stats, n_bins=n_bins, binning=binning, model="smooth",
                               num_samples=args.samples, seed=args.seed)
    return result, pred
