"""``bece compare``: the paired posterior of two models' ECEs on the same test set."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from .common import (
    BINARY_NOTE,
    PROB,
    figure,
    input_options,
    to_json,
    write_outputs,
)

__all__ = [
    "compare_dict",
    "format_compare",
    "run_compare",
]


def compare_dict(comparison: Any, sources: Sequence[str], prob: float = PROB,
                 seed: int | None = None) -> dict[str, Any]:
    """The JSON object of ``bece compare``.

    ``{"model", "input_kind", "seed", "bece_version", "n", "n_bins", "a":
    {"source", "plugin_ece", "ece": {...}}, "b": {...}, "diff": {"mean",
    "std", "prob", "interval"}, "prob_a_better"}`` where ``ece`` is as in
    :func:`~bece._cli.report_dict` and ``diff`` describes ECE_A - ECE_B; the
    smooth model adds each model's ``prob_calibrated`` and ``prior_odds``.
    """

    from .parser import version

    own = comparison.to_dict(prob)
    return {"model": own.pop("model"), "input_kind": own.pop("input_kind"), "seed": seed,
            "bece_version": version(), "n": own["n"], "n_bins": own["n_bins"],
            "a": {"source": sources[0], **own["a"]}, "b": {"source": sources[1], **own["b"]},
            "diff": own["diff"], "prob_a_better": own["prob_a_better"]}


def format_compare(
    comparison: Any, sources: Sequence[str], kind: str, binning: str, prob: float = PROB,
    n_classes: int | None = None,
) -> str:
    """``bece compare``: a header naming the files and the bins, then the
    comparison's own :meth:`~bece.Comparison.text`."""
    head = [f"bece compare: A = {sources[0]}, B = {sources[1]}; "
            f"{comparison.a.stats.n_bins} {binning} bins"]
    if kind == "top-label" and n_classes == 2:
        head.append(f"  note          {BINARY_NOTE}")
    return "\n".join([*head, comparison.text(prob)])


def run_compare(args: argparse.Namespace) -> int:
    """``bece compare A B``; returns the exit code.

    CSV and Parquet files are read side by side in chunks into joint
    statistics (:mod:`bece._io.paired`) and compared from them
    (:func:`bece.posterior_compare`); files of at most
    :data:`bece._smooth.atoms.EXACT_MAX_N` rows, and NPZ files, are read
    whole and compared from the arrays (:func:`bece.compare`: the smooth
    model's exact atoms), as ``bece report`` does.
    """
    from pathlib import Path

    columns, options = input_options(args)
    progress = not args.json and sys.stderr.isatty()
    found = None
    if all(_streamable(Path(f)) for f in (args.file_a, args.file_b)):
        found = _streamed(args, columns, options, progress)
    if found is None:
        found = _whole(args, columns, options, progress)
    comparison, kind, n_classes = found
    sources = (str(args.file_a), str(args.file_b))
    html = args.html
    d = compare_dict(comparison, sources, seed=args.seed) if args.json or html else {}
    text = (format_compare(comparison, sources, kind, args.binning, n_classes=n_classes)
            if not args.json or html else "")
    print(to_json(d) if args.json else text)
    fig = None
    if args.plot is not None or html is not None:
        from .._plots.posterior import plot_comparison

        names = (Path(args.file_a).stem, Path(args.file_b).stem)
        labels = [f"A ({names[0]})", f"B ({names[1]})"]
        fig = figure((15, 5.6))
        plot_comparison(comparison, labels=labels, fig=fig)
    write_outputs(args, fig, f"bece compare: {sources[0]} and {sources[1]}", text, d, comparison)
    return 0


def _streamable(path: Any) -> bool:
    return path.exists() and (path.is_dir() or path.suffix.lower() in (".csv", ".parquet", ".pq"))


def _streamed(args: argparse.Namespace, columns: dict[str, Any], options: dict[str, Any],
              progress: bool) -> tuple[Any, str, int | None] | None:
    """Joint statistics of the two files read in chunks and the posterior from
    them; None when the files hold at most EXACT_MAX_N rows (read whole then)."""
    from .._api import posterior_compare
    from .._io.files import read_statistics
    from .._io.paired import paired_file_statistics
    from .._smooth.atoms import EXACT_MAX_N, fine_binning
    from .._stats.binning import Binning, make_binning
    from .._stats.inputs import Inputs

    files = (args.file_a, args.file_b)
    if args.binning == "quantile":  # each model's edges: a first pass over its file
        ece = [Binning(read_statistics(f, n_bins=args.n_bins, binning="quantile", **options,
                                       **columns).stats.edges, "edges") for f in files]
    else:
        ece = [make_binning(None, args.n_bins, args.binning)] * 2
    smooth = args.model == "smooth"
    bins = [fine_binning(binning=e) for e in ece] if smooth else ece
    fs = paired_file_statistics(files[0], files[1], binning_a=bins[0], binning_b=bins[1],
                                inputs=Inputs(**options), **columns)
    if fs.stats.n <= EXACT_MAX_N:
        return None
    extra: dict[str, Any] = ({"binning": ece[0], "binning_b": ece[1]} if smooth
                             else {"progress": progress})
    comparison = posterior_compare(fs.stats, model=args.model, num_samples=args.samples,
                                   seed=args.seed, **extra)
    return comparison, fs.kind, fs.n_classes


def _whole(args: argparse.Namespace, columns: dict[str, Any], options: dict[str, Any],
           progress: bool) -> tuple[Any, str, int | None]:
    """Both files read whole, checked, and compared from the arrays."""
    from .._api import compare
    from .._io.files import read_predictions
    from .._stats.inputs import Inputs, as_outcomes, located

    a, b = read_predictions(args.file_a, **columns), read_predictions(args.file_b, **columns)
    for pred in (a, b):
        try:  # each file's own errors, named with the file and row as in report
            as_outcomes(pred.y_true, pred.y_prob, pred.y_pred, Inputs(**options))
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
        progress=progress,
        model=args.model,
        **options,
    )
    return comparison, a.kind, a.n_classes
