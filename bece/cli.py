"""The ``bece`` command.

``bece report [FILE] [--n-bins 15] [--binning uniform] [--samples 10000]
[--seed 0] [--json]`` prints the Bayesian ECE of the predictions in FILE
(CSV, Parquet or NPZ; columns as in :mod:`bece.io`), or of the example
shipped with bece when FILE is omitted.

Exit codes: 0 on success, 2 on bad usage or bad input (one line on stderr,
no traceback).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any, Sequence

import numpy as np

__all__ = ["main", "report_dict", "format_report"]

PROB = 0.9


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, no usage dump
        raise _UsageError(f"{self.prog}: {message} (see '{self.prog} --help')")


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="bece",
        description="Bayesian assessment of calibration: a posterior over the "
        "expected calibration error (ECE) of a classifier's predictions.",
    )
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    rep = sub.add_parser(
        "report",
        help="posterior ECE, plug-in ECE and per-bin table of a predictions file",
        description="Posterior over the ECE of the predictions in FILE. FILE is CSV, "
        "Parquet or NPZ with a 'y_true' column and either 'y_prob' (P(y=1) of a binary "
        "classifier) or 'p_0' ... 'p_{K-1}' (class probabilities), optionally 'y_pred'. "
        "Without FILE, runs on the example shipped with bece (logistic regression on "
        "scikit-learn's digits).",
    )
    rep.add_argument("file", nargs="?", metavar="FILE", help="CSV, Parquet or NPZ file")
    rep.add_argument("--n-bins", type=int, default=15, help="number of bins (default 15)")
    rep.add_argument(
        "--binning",
        default="uniform",
        choices=["uniform", "quantile"],
        help="equal-width or equal-mass bins (default uniform)",
    )
    rep.add_argument(
        "--samples", type=int, default=10_000, help="posterior draws (default 10000)"
    )
    rep.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    rep.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def _num(x: float) -> float | None:
    return None if math.isnan(x) else float(x)


def report_dict(result: Any, prob: float = PROB) -> dict[str, Any]:
    """The JSON object of DESIGN.md §4 for a :class:`~bece.BayesianECE`."""
    stats = result.stats
    lo, hi = result.interval(prob)
    edges, counts = stats.edges, stats.bin_counts
    acc, conf = stats.accuracy, stats.confidence
    return {
        "n": stats.n,
        "n_bins": stats.n_bins,
        "plugin_ece": result.plugin,
        "ece": {"mean": result.mean, "std": result.std, "prob": prob, "interval": [lo, hi]},
        "bins": [
            {
                "lo": float(edges[m]),
                "hi": float(edges[m + 1]),
                "count": int(counts[m]),
                "accuracy": _num(acc[m]),
                "confidence": _num(conf[m]),
            }
            for m in range(stats.n_bins)
        ],
    }


_KINDS = {
    "binary": "binary: y_prob = P(y=1) against y_true",
    "top-label": "top-label: confidence = max p_k, correct = [argmax == y_true]",
    "triples": "triples: confidence of y_pred, correct = [y_pred == y_true]",
}


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
    lines = [
        f"bece report: {source}",
        f"  predictions   {stats.n:,} ({_KINDS.get(kind, kind)})",
        f"  bins          {stats.n_bins} {binning}, {int((stats.bin_counts == 0).sum())} empty",
        f"  {outcome:<13} {overall:.4f} overall",
        "",
        f"  Bayesian ECE  {d['ece']['mean']:.4f}   posterior mean (sd {d['ece']['std']:.4f}, "
        f"{result.num_samples:,} draws)",
        f"  {pct} interval  [{lo:.4f}, {hi:.4f}]   equal-tailed credible interval",
        f"  plug-in ECE   {d['plugin_ece']:.4f}",
        "",
        f"  {'bin':>3}  {'range':<15} {'count':>8}  {'accuracy':>8}  {'confidence':>10}  {'gap':>7}",
    ]

    def cell(x: float | None, width: int) -> str:
        return f"{'-':>{width}}" if x is None else f"{x:>{width}.4f}"

    for m, b in enumerate(d["bins"]):
        right = "]" if m == stats.n_bins - 1 else ")"
        span = f"[{b['lo']:.3f}, {b['hi']:.3f}{right}"
        gap = "-" if b["count"] == 0 else f"{b['accuracy'] - b['confidence']:+.4f}"
        lines.append(
            f"  {m + 1:>3}  {span:<15} {b['count']:>8,}  {cell(b['accuracy'], 8)}  "
            f"{cell(b['confidence'], 10)}  {gap:>7}"
        )
    lines.append("")
    lines.append("  gap = accuracy - confidence (negative: over-confident)")
    return "\n".join(lines)


def _report(args: argparse.Namespace) -> int:
    from .io import example_path, read_statistics
    from .posterior import posterior_ece

    path = args.file if args.file is not None else example_path()
    # CSV and Parquet are read in chunks (bece.stream); a progress bar only
    # for a person watching a terminal, never in --json output
    pred = read_statistics(
        path,
        n_bins=args.n_bins,
        binning=args.binning,
        progress=not args.json and sys.stderr.isatty(),
    )
    result = posterior_ece(pred.stats, num_samples=args.samples, seed=args.seed)
    if args.json:
        print(json.dumps(report_dict(result)))
    else:
        source = str(path) if args.file is not None else f"{path.name} (example shipped with bece)"
        print(format_report(result, source, pred.kind, args.binning))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``bece`` command; returns the exit code."""
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help(sys.stderr)
            return 2
        return _report(args)
    except _UsageError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except (ValueError, OSError) as exc:
        print(f"bece: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
