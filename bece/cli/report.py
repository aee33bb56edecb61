"""``bece report`` on classifier predictions: the Bayesian ECE and its per-bin table."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

from .common import KINDS, PROB, check_plot_path, figure, num, save, to_json

__all__ = [
    "format_report",
    "report_dict",
    "run_report",
]


def report_dict(result: Any, prob: float = PROB) -> dict[str, Any]:
    """The JSON object of DESIGN.md §4 for a :class:`~bece.BayesianECE`."""
    stats = result.stats
    lo, hi = result.interval(prob)
    edges, counts = stats.edges, stats.bin_counts
    acc, conf = stats.accuracy, stats.confidence
    d = {
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
    if getattr(result, "model", "binned") == "binned-literal":
        d["model"] = "binned-literal"
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


def format_report(result: Any, source: str, kind: str, binning: str, prob: float = PROB) -> str:
    """Human-readable report: headline numbers, then the per-bin table.

    ``kind`` is ``"binary"``, ``"top-label"`` or ``"triples"``
    (:attr:`bece.io.Predictions.kind`).
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
        f"  {'bin':>3}  {'range':<15} {'count':>8}  {'accuracy':>8}  {'confidence':>10}  {'gap':>7}"
        + (f"  model accuracy [{pct}]" if smooth else ""),
    ]

    def cell(x: float | None, width: int) -> str:
        return f"{'-':>{width}}" if x is None else f"{x:>{width}.4f}"

    for m, b in enumerate(d["bins"]):
        right = "]" if m == stats.n_bins - 1 else ")"
        span = f"[{b['lo']:.3f}, {b['hi']:.3f}{right}"
        gap = "-" if b["count"] == 0 else f"{b['accuracy'] - b['confidence']:+.4f}"
        row = (
            f"  {m + 1:>3}  {span:<15} {b['count']:>8,}  {cell(b['accuracy'], 8)}  "
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
CLASSIFIER_OPTIONS = (("--model", "model"), ("--n-bins", "n_bins"), ("--binning", "binning"))
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
    if args.file is None:
        _refuse(args, REGRESSION_OPTIONS, "to regression forecasts in a FILE; the example "
                "shipped with bece holds a classifier's predictions")
        path = example_path()
    else:
        path = args.file
        if detect_kind(column_names(path), str(path), **conventions) == "regression":
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
        result, pred = _smooth_report(path, args, progress)
    else:
        pred = read_statistics(path, n_bins=args.n_bins, binning=args.binning, progress=progress)
        result = posterior_ece(pred.stats, num_samples=args.samples, seed=args.seed,
                               model=args.model)
    if args.json:
        print(to_json(report_dict(result)))
    else:
        source = str(path) if args.file is not None else f"{Path(path).name} (example shipped with bece)"
        print(format_report(result, source, pred.kind, args.binning))
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


def _smooth_report(path: Any, args: argparse.Namespace, progress: bool) -> tuple[Any, Any]:
    """Fine statistics of the file (chunked) and the smooth posterior on them;
    a file of at most EXACT_MAX_N rows is small enough to read whole and
    gets the exact posterior (one atom per prediction), as
    ``bece.bayesian_ece(..., model="smooth")`` gives."""
    from ..io.files import read_predictions, read_statistics
    from ..smooth.atoms import EXACT_MAX_N, fine_binning
    from ..smooth.posterior import smooth_ece, smooth_posterior_ece

    n_bins: int | None = args.n_bins
    binning: Any = args.binning
    if binning == "quantile":
        # the quantile edges need all confidences: a first pass (two for CSV
        # and Parquet, see bece.io.stream), then the fine statistics in those bins
        binning = read_statistics(path, n_bins=n_bins, binning="quantile",
                                  progress=progress).stats.edges
        n_bins = None
    fine = fine_binning(n_bins, binning)
    pred = read_statistics(path, binning=fine, progress=progress)
    if pred.stats.n <= EXACT_MAX_N:
        whole = read_predictions(path)
        result = smooth_ece(whole.y_true, whole.y_prob, y_pred=whole.y_pred, n_bins=n_bins,
                            binning=binning, num_samples=args.samples, seed=args.seed)
    else:
        result = smooth_posterior_ece(pred.stats, n_bins=n_bins, binning=binning,
                                      num_samples=args.samples, seed=args.seed)
    return result, pred
