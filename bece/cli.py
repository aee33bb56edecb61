"""The ``bece`` command.

``bece report [FILE] [--model binned] [--n-bins 15] [--binning uniform]
[--samples 10000] [--seed 0] [--json]`` prints the Bayesian ECE of the
predictions in FILE (CSV, Parquet or NPZ, or a directory of Parquet files;
columns as in :mod:`bece.io`), or
of the example shipped with bece when FILE is omitted; ``--plot PATH`` also
writes its reliability diagram (:func:`bece.plots.reliability_diagram`).
``--model smooth`` uses the smooth calibration-curve model
(:mod:`bece.smooth`): the file is read in chunks into statistics on the fine
grid of :func:`bece.smooth.fine_binning` (128 sub-cells per ECE bin) and
:func:`bece.smooth.smooth_posterior_ece` runs on them; quantile bins take
one more pass for their edges. A file of at most 2,000 predictions is then
read whole for the exact posterior (one atom per prediction, as
:func:`bece.bayesian_ece` with ``model="smooth"``). The report then adds the model's per-bin
accuracy and the grid's error bound, and the diagram's bands are the
model's (``band_prior=None``).

``bece compare A B [--n-bins 15] [--binning uniform] [--samples 10000]
[--seed 0] [--json] [--plot PATH]`` prints the paired posterior of two
models' ECEs (:func:`bece.compare`) from two prediction files of the same
test set (same ``y_true``, row for row); ``--plot`` writes both reliability
diagrams and the posterior of the difference.

``bece --version`` prints ``bece <version>``.

Exit codes: 0 on success; 2 on bad usage or bad input (one line on stderr,
no traceback); 1 when memory runs out (one line: the input was valid, the
machine too small for it, so not a usage error: fewer ``--samples``, fewer
``--n-bins`` or a larger machine); 130 on Ctrl-C (one line, the shell's
code for a command ended by SIGINT); 1 when stdout is closed early
(``bece report | head``, quietly). ``--json`` prints strict JSON: a
number that is not finite (the sd of a single draw) is ``null``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import numpy as np

__all__ = [
    "compare_dict",
    "format_compare",
    "format_report",
    "main",
    "report_dict",
    "to_json",
    "version",
]

PROB = 0.9


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2, no usage dump
        raise _UsageError(f"{self.prog}: {message} (see '{self.prog} --help')")


def _add_options(parser: argparse.ArgumentParser, draws: str, figure: str) -> None:
    """The options ``report`` and ``compare`` share."""
    parser.add_argument("--n-bins", type=int, default=15, help="number of bins (default 15)")
    parser.add_argument(
        "--binning",
        default="uniform",
        choices=["uniform", "quantile"],
        help="equal-width or equal-mass bins (default uniform)",
    )
    parser.add_argument("--samples", type=int, default=10_000, help=f"{draws} (default 10000)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--plot", metavar="PATH", help=f"also write {figure} (.png, .pdf, .svg, ...)"
    )


def version() -> str:
    """bece's version: the installed distribution's metadata, else
    ``bece.__version__`` (:data:`bece.base.version.VERSION`; a source tree
    that is not installed)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("bece")
    except PackageNotFoundError:
        from .base.version import VERSION

        return VERSION


class _Version(argparse.Action):
    """``--version``: looks the version up only when asked."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> NoReturn:
        print(f"bece {version()}")
        parser.exit(0)


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="bece",
        description="Bayesian assessment of calibration: a posterior over the "
        "expected calibration error (ECE) of a classifier's predictions.",
    )
    parser.add_argument("--version", action=_Version, help="print bece's version and exit")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    rep = sub.add_parser(
        "report",
        help="posterior ECE, plug-in ECE and per-bin table of a predictions file",
        description="Posterior over the ECE of the predictions in FILE. FILE is CSV, "
        "Parquet or NPZ with a 'y_true' column and either 'y_prob' (P(y=1) of a binary "
        "classifier) or 'p_0' ... 'p_{K-1}' (class probabilities), optionally 'y_pred', "
        "or a directory of Parquet files (Spark or Dask output). "
        "Without FILE, runs on the example shipped with bece (logistic regression on "
        "scikit-learn's digits).",
    )
    rep.add_argument("file", nargs="?", metavar="FILE",
                     help="CSV, Parquet or NPZ file, or a directory of Parquet files")
    rep.add_argument(
        "--model",
        default="binned",
        choices=["binned", "smooth"],
        help="binned: the seed's per-bin model (closed form); smooth: a smooth calibration "
        "curve pooling the bins (Laplace, from statistics on a fine grid), honest at small "
        "n (default binned)",
    )
    _add_options(rep, "posterior draws", "the reliability diagram")
    cmp_ = sub.add_parser(
        "compare",
        help="paired comparison of two models' ECE on the same test set",
        description="Paired posterior of the ECEs of two models A and B from two prediction "
        "files of the same test set (same 'y_true' column, row for row; columns as for "
        "'bece report'). One Dirichlet over the joint (correct_A, bin_A, correct_B, bin_B) "
        "cells keeps the pairing of examples. Prints both ECEs, their difference "
        "ECE_A - ECE_B with a credible interval and P(ECE_A < ECE_B).",
    )
    cmp_.add_argument("file_a", metavar="A", help="predictions of model A (CSV, Parquet or NPZ)")
    cmp_.add_argument("file_b", metavar="B", help="predictions of model B, same test set")
    _add_options(cmp_, "joint posterior draws", "the comparison figure")
    return parser


def _num(x: float) -> float | None:
    return None if math.isnan(x) else float(x)


def _finite(obj: Any) -> Any:
    """``obj`` with every number that is not finite (NaN, +-inf) as None and
    NumPy scalars as Python numbers."""
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(obj) else None
    if isinstance(obj, np.integer):
        return int(obj)
    return obj


def to_json(obj: Any) -> str:
    """Strict JSON (RFC 8259): non-finite numbers as null, never NaN or
    Infinity; ``allow_nan=False`` makes any that slip through an error."""
    return json.dumps(_finite(obj), allow_nan=False)


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
                "accuracy": _num(acc[m]),
                "confidence": _num(conf[m]),
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
    smooth = d.get("model") == "smooth"
    lines = [
        f"bece report: {source}",
        f"  predictions   {stats.n:,} ({_KINDS.get(kind, kind)})",
        f"  bins          {stats.n_bins} {binning}, {int((stats.bin_counts == 0).sum())} empty",
        f"  {outcome:<13} {overall:.4f} overall",
    ]
    if smooth:
        atoms = ("every prediction an atom (exact)" if d["grid"] is None else
                 f"{d['grid']} sub-cells per bin, grid error <= {d['grid_error']:.1e}")
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


def _report(args: argparse.Namespace) -> int:
    from .api import posterior_ece
    from .io.files import example_path, read_statistics

    if args.plot is not None:
        _check_plot_path(args.plot)
    path = args.file if args.file is not None else example_path()
    # CSV and Parquet are read in chunks (bece.io.stream); a progress bar only
    # for a person watching a terminal, never in --json output
    progress = not args.json and sys.stderr.isatty()
    if args.model == "smooth":
        result, pred = _smooth_report(path, args, progress)
    else:
        pred = read_statistics(path, n_bins=args.n_bins, binning=args.binning, progress=progress)
        result = posterior_ece(pred.stats, num_samples=args.samples, seed=args.seed)
    if args.json:
        print(to_json(report_dict(result)))
    else:
        source = str(path) if args.file is not None else f"{path.name} (example shipped with bece)"
        print(format_report(result, source, pred.kind, args.binning))
    if args.plot is not None:
        from .plots.reliability import reliability_diagram

        fig = _figure((5.5, 6.2))
        # smooth: the bands are the model's pooled per-bin accuracy, which is
        # what it adds over the counts (band_prior=None)
        band: dict[str, Any] = {"band_prior": None} if args.model == "smooth" else {}
        ax = reliability_diagram(result, ax=fig.add_subplot(), **band)
        if args.model == "smooth":
            ax.set_title(f"smooth model: {ax.get_title()}", fontsize="medium")
        _save(fig, args.plot, args.json)
    return 0


def _smooth_report(path: Any, args: argparse.Namespace, progress: bool) -> tuple[Any, Any]:
    """Fine statistics of the file (chunked) and the smooth posterior on them;
    a file of at most EXACT_MAX_N rows is small enough to read whole and
    gets the exact posterior (one atom per prediction), as
    ``bece.bayesian_ece(..., model="smooth")`` gives."""
    from .io.files import read_predictions, read_statistics
    from .smooth.atoms import EXACT_MAX_N, fine_binning
    from .smooth.posterior import smooth_ece, smooth_posterior_ece

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


# --------------------------------------------------------------- figures
def _check_plot_path(path: str) -> None:
    """Fail before any work if --plot PATH cannot be written."""
    from pathlib import Path

    from matplotlib.figure import Figure

    target = Path(path)
    fmt = target.suffix.lower().lstrip(".")
    supported = Figure().canvas.get_supported_filetypes()
    if fmt not in supported:
        raise ValueError(
            f"--plot {path}: unknown image type '{target.suffix or '(none)'}'; use one of "
            + ", ".join(f".{k}" for k in sorted(supported))
        )
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise ValueError(f"--plot {path}: directory '{parent}' does not exist")


def _figure(size: tuple[float, float]) -> Any:
    # a Figure without pyplot: no GUI backend, nothing global touched
    from matplotlib.figure import Figure

    return Figure(figsize=size)


def _save(fig: Any, path: str, quiet: bool) -> None:
    fig.savefig(path, dpi=150, bbox_inches="tight")
    if not quiet:
        print(f"\n  figure written to {path}")


# --------------------------------------------------------------- compare
def compare_dict(comparison: Any, sources: Sequence[str], prob: float = PROB) -> dict[str, Any]:
    """The JSON object of ``bece compare``.

    ``{"n", "n_bins", "a": {"source", "plugin_ece", "ece": {...}}, "b": {...},
    "diff": {"mean", "std", "prob", "interval"}, "prob_a_better"}`` where
    ``ece`` is as in :func:`report_dict` and ``diff`` describes
    ECE_A - ECE_B.
    """

    def one(result: Any, source: str) -> dict[str, Any]:
        lo, hi = result.interval(prob)
        return {
            "source": source,
            "plugin_ece": result.plugin,
            "ece": {"mean": result.mean, "std": result.std, "prob": prob, "interval": [lo, hi]},
        }

    lo, hi = comparison.interval(prob)
    return {
        "n": comparison.a.stats.n,
        "n_bins": comparison.a.stats.n_bins,
        "a": one(comparison.a, sources[0]),
        "b": one(comparison.b, sources[1]),
        "diff": {"mean": comparison.mean, "std": comparison.std, "prob": prob, "interval": [lo, hi]},
        "prob_a_better": comparison.prob_a_better,
    }


def format_compare(
    comparison: Any, sources: Sequence[str], kind: str, binning: str, prob: float = PROB
) -> str:
    """Human-readable paired comparison: both ECEs, the difference, P(A better)."""
    d = compare_dict(comparison, sources, prob)
    pct = f"{prob:.0%}"
    head = f"{pct} interval"
    lines = [
        "bece compare: paired posterior of two models' ECE on the same test set",
        f"  A             {sources[0]}",
        f"  B             {sources[1]}",
        f"  predictions   {d['n']:,} ({_KINDS.get(kind, kind)})",
        f"  bins          {d['n_bins']} {binning}",
        "",
        f"  {'':<8} {'Bayesian ECE':>12}  {head:<20}  {'plug-in ECE':>11}",
    ]
    for tag in ("a", "b"):
        e = d[tag]["ece"]
        lo, hi = e["interval"]
        lines.append(
            f"  {tag.upper():<8} {e['mean']:>12.4f}  {f'[{lo:.4f}, {hi:.4f}]':<20}  "
            f"{d[tag]['plugin_ece']:>11.4f}"
        )
    lo, hi = d["diff"]["interval"]
    plug = d["a"]["plugin_ece"] - d["b"]["plugin_ece"]
    lines += [
        f"  {'A - B':<8} {d['diff']['mean']:>+12.4f}  {f'[{lo:+.4f}, {hi:+.4f}]':<20}  {plug:>+11.4f}",
        "",
        f"  P(ECE_A < ECE_B) = {d['prob_a_better']:.3f}   "
        f"({comparison.num_samples:,} joint draws; paired: one Dirichlet over the",
        "  joint (correct_A, bin_A, correct_B, bin_B) cells of the same examples)",
    ]
    return "\n".join(lines)


def _compare(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .binned.compare import compare
    from .io.files import read_predictions
    from .stats.inputs import as_outcomes, located

    if args.plot is not None:
        _check_plot_path(args.plot)
    a, b = read_predictions(args.file_a), read_predictions(args.file_b)
    for pred in (a, b):
        try:  # each file's own errors, named with the file and row as in report
            as_outcomes(pred.y_true, pred.y_prob, pred.y_pred)
        except ValueError as exc:
            raise located(exc, pred.source, 0) from None
    if a.kind != b.kind:
        raise ValueError(
            f"{a.source} holds {a.kind} predictions but {b.source} holds {b.kind}; "
            "compare needs both of the same kind"
        )
    if a.y_true.shape != b.y_true.shape:
        what = (f"{a.y_true.shape[0]} rows", f"{b.y_true.shape[0]}")
        if a.y_true.shape[0] == b.y_true.shape[0]:
            what = (f"y_true of shape {a.y_true.shape}", f"shape {b.y_true.shape}")
        raise ValueError(
            f"{a.source} has {what[0]} but {b.source} has {what[1]}; "
            "compare needs both models' predictions on the same test set, row for row"
        )
    differ = np.flatnonzero(np.asarray(a.y_true) != np.asarray(b.y_true))
    if differ.size:
        raise ValueError(
            f"{a.source} and {b.source} are not the same test set: y_true differs in "
            f"{differ.size} of {a.y_true.shape[0]} rows (first at row {differ[0]})"
        )
    comparison = compare(
        a.y_true,
        a.y_prob,
        b.y_prob,
        y_pred_a=a.y_pred,
        y_pred_b=b.y_pred,
        n_bins=args.n_bins,
        binning=args.binning,
        num_samples=args.samples,
        seed=args.seed,
        progress=not args.json and sys.stderr.isatty(),
    )
    sources = (str(args.file_a), str(args.file_b))
    if args.json:
        print(to_json(compare_dict(comparison, sources)))
    else:
        print(format_compare(comparison, sources, a.kind, args.binning))
    if args.plot is not None:
        from .plots.posterior import plot_comparison

        names = (Path(args.file_a).stem, Path(args.file_b).stem)
        labels = [f"A ({names[0]})", f"B ({names[1]})"]
        fig = _figure((15, 5.6))
        plot_comparison(comparison, labels=labels, fig=fig)
        _save(fig, args.plot, args.json)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``bece`` command; returns the exit code."""
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help(sys.stderr)
            return 2
        if args.command == "compare":
            return _compare(args)
        return _report(args)
    except _UsageError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except SystemExit as exc:  # --help and --version: argparse exits after printing
        return exc.code if isinstance(exc.code, int) else 0
    except BrokenPipeError:
        # the reader went away (``bece report | head``): stop quietly, and keep
        # Python from reporting the same error again when it flushes stdout at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (ValueError, OSError) as exc:
        print(f"bece: error: {exc}", file=sys.stderr)
        return 2
    except MemoryError as exc:
        # valid input, too large for this machine: one line, exit 1 (not 2:
        # nothing in the command is wrong as such)
        detail = str(exc).splitlines()[0] if str(exc) else "no detail given"
        print(f"bece: error: out of memory ({detail}); try fewer --samples or --n-bins, "
              "or a machine with more memory", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        # Ctrl-C: one line instead of the traceback of whatever was running
        print("bece: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
