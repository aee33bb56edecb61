"""``bece recalibrate``: fit a recalibrator on a validation file, score a test file before and after.

``bece recalibrate --method temperature VAL_FILE TEST_FILE`` reads both files
as ``bece report`` does (CSV, Parquet or NPZ; ``y_true`` and ``p_0 ...
p_{K-1}`` or ``y_prob``; ``--logits`` for logits), fits the calibrator of
:mod:`bece.calibrate` named by ``--method`` on the validation file only, and
prints the paired posterior (:func:`bece.recalibrate`, :func:`bece.compare`)
of the test set's ECE before and after, their difference with its credible
interval, P(after better) and the held-out NLL. ``--out FILE`` writes the
recalibrated test probabilities (same format as the inputs, chosen by the
suffix: ``.csv``, ``.parquet``, ``.npz``), ``--plot PATH`` both reliability
diagrams and the posterior of the difference, ``--json`` one object.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

from .common import BINARY_NOTE, PROB, figure, input_options, to_json, write_outputs
from .output import atomic_output

__all__ = [
    "recalibrate_dict",
    "run_recalibrate",
    "write_predictions",
]

def write_predictions(path: str, y_true: Any, y_prob: np.ndarray) -> list[str]:
    """Write ``y_true`` and the probabilities in the column conventions of
    :mod:`bece.io` (``y_prob`` for a 1-D array, else ``p_0 ... p_{K-1}``),
    as CSV, Parquet or NPZ by the suffix, whole or not at all
    (:func:`~bece._cli.output.atomic_output`); returns the column names.

    Floats are written in full (float64, shortest round-trip text in CSV),
    so the file reads back to the same numbers.
    """
    names = ["y_prob"] if y_prob.ndim == 1 else [f"p_{k}" for k in range(y_prob.shape[1])]
    cols = [y_prob] if y_prob.ndim == 1 else [y_prob[:, k] for k in range(y_prob.shape[1])]
    y = np.asarray(y_true)
    suffix = Path(path).suffix.lower()
    with atomic_output(path) as tmp:
        if suffix == ".npz":
            arrays: dict[str, Any] = {"y_true": y, **dict(zip(names, cols))}
            np.savez(tmp, **arrays)
            return ["y_true", *names]
        import pyarrow as pa

        table = pa.table({"y_true": pa.array(y), **{n: pa.array(c) for n, c in zip(names, cols)}})
        if suffix == ".parquet":
            import pyarrow.parquet as pq

            pq.write_table(table, tmp)
        else:
            import pyarrow.csv as pcsv

            pcsv.write_csv(table, tmp)
    return ["y_true", *names]


def recalibrate_dict(result: Any, sources: tuple[str, str], prob: float = PROB,
                     seed: int | None = None) -> dict[str, Any]:
    """The JSON object of ``bece recalibrate``.

    ``{"model", "input_kind", "seed", "bece_version", "method", "calibrator":
    {"name", "params"}, "val": {"source", "n"}, "test": {"source", "n",
    "n_bins"}, "before": {"plugin_ece", "nll", "ece": {...}}, "after": {...},
    "diff": {"mean", "std", "prob", "interval"}, "prob_after_better"}`` with
    ``ece`` as in :func:`~bece._cli.report_dict` and ``diff`` the posterior
    of ECE_after - ECE_before.
    """
    from .parser import version

    own = result.to_dict(prob)
    return {"model": own.pop("model"), "input_kind": own.pop("input_kind"), "seed": seed,
            "bece_version": version(), "method": own["method"], "calibrator": own["calibrator"],
            "val": {"source": sources[0], **own["val"]}, "test": {"source": sources[1], **own["test"]},
            "before": own["before"], "after": own["after"], "diff": own["diff"],
            "prob_after_better": own["prob_after_better"]}


def format_recalibrate(result: Any, sources: tuple[str, str], binning: str, kind: str,
                       n_classes: int | None, prob: float = PROB) -> str:
    """``bece recalibrate``: a header naming the method, the files and the
    bins, then the result's own :meth:`~bece.Recalibration.text`."""
    head = [f"bece recalibrate: fitted on {sources[0]}, scored on {sources[1]}; "
            f"{result.before.stats.n_bins} {binning} bins"]
    if kind == "top-label" and n_classes == 2:
        head.append(f"  note          {BINARY_NOTE}")
    return "\n".join([*head, result.text(prob)])


#: Methods for a binary classifier only.
BINARY_METHODS = ("platt", "isotonic", "beta")


def file_error(text: str, val_source: str, test_source: str, kind: str) -> ValueError:
    """A library error about ``y_val``/``scores_val`` (or test) as an error
    about the file, in the command line's words (``located``: rows, not indices)."""
    from .._stats.inputs import located

    source = None
    for tag, src in (("_val", val_source), ("_test", test_source)):
        if text.startswith(("y" + tag, "scores" + tag)):
            source = src
            text = text.replace("y" + tag, "y_true").replace("scores" + tag, "the scores")
    if kind == "probabilities" and "must lie in [0, 1]" in text:
        text += "; if the columns hold logits, pass --logits"
    text = text.replace("input='logits'", "--logits")
    # remedies in the API's words that the command has no option for
    text = re.sub(r"Normalise the rows.*row_sum_tol=\S+",
                  "Write rows that sum to one (the calibrators need them), or the logits with "
                  "--logits", text)
    if "cross-validation" in text and "needs at least cv=" in text:
        source = val_source
        text = (f"{text.split('; pass')[0]}: the regularisation is chosen by 5-fold "
                "cross-validation on VAL_FILE, which needs at least 5 rows; use a larger "
                "VAL_FILE, or --method temperature (one parameter, no cross-validation)")
    return located(ValueError(text), source, 0) if source else ValueError(text)


def run_recalibrate(args: argparse.Namespace) -> int:
    """``bece recalibrate VAL_FILE TEST_FILE``; returns the exit code."""
    from .._api import recalibrate
    from .._io.files import read_predictions

    if getattr(args, "row_sum_tol", None) is not None:
        raise ValueError("--row-sum-tol does not apply to recalibrate: the calibrators read "
                         "probabilities whose rows sum to one (normalise them, or give logits "
                         "with --logits)")
    columns, options = input_options(args)
    val = read_predictions(args.val_file, **columns)
    test = read_predictions(args.test_file, **columns)
    for pred in (val, test):
        if pred.y_pred is not None:
            raise ValueError(
                f"{pred.source}: has a predicted-label column ('{columns['y_pred_col'] or 'y_pred'}'); "
                "recalibrate needs the class scores of every class (p_0 ... p_{K-1}, or y_prob "
                "for a binary classifier), not one confidence per prediction: drop that column"
            )
    if val.y_prob.ndim != test.y_prob.ndim or val.y_prob.shape[1:] != test.y_prob.shape[1:]:
        what = lambda p: "y_prob" if p.ndim == 1 else f"{p.shape[1]} class columns"  # noqa: E731
        raise ValueError(f"{val.source} has {what(val.y_prob)} but {test.source} has "
                         f"{what(test.y_prob)}; both files need the same classes")
    kind = "logits" if options["from_logits"] else "probabilities"
    k = test.n_classes
    if args.method in BINARY_METHODS and k is not None and k > 2:
        raise ValueError(
            f"--method {args.method} recalibrates a binary classifier (y_prob, or p_0 and p_1), "
            f"but the files have K = {k} class columns: use --method temperature, vector, matrix "
            "or dirichlet"
        )
    try:
        result = recalibrate(val.y_true, val.y_prob, test.y_true, test.y_prob, method=args.method,
                             input=kind, labels=options["labels"], pos_label=options["pos_label"],
                             n_bins=args.n_bins, binning=args.binning, num_samples=args.samples,
                             seed=args.seed, progress=not args.json and sys.stderr.isatty())
    except ValueError as exc:
        raise file_error(str(exc), val.source, test.source, kind) from None
    sources = (str(args.val_file), str(args.test_file))
    pred_kind = "binary" if test.y_prob.ndim == 1 else "top-label"
    html = args.html
    d = recalibrate_dict(result, sources, seed=args.seed) if args.json or html else {}
    text = (format_recalibrate(result, sources, args.binning, pred_kind, test.n_classes)
            if not args.json or html else "")
    print(to_json(d) if args.json else text)
    if args.out is not None:
        probs = result.y_prob[:, 1] if test.y_prob.ndim == 1 else result.y_prob
        names = write_predictions(args.out, test.y_true, probs)
        if not args.json:
            shown = ", ".join(names[:4]) + (f", ... {names[-1]}" if len(names) > 4 else "")
            print(f"\n  recalibrated test probabilities written to {args.out} ({shown}; "
                  f"'bece report {args.out}' reads it)")
    fig = None
    if args.plot is not None or html is not None:
        from .._plots.posterior import plot_comparison

        fig = figure((15, 5.6))
        plot_comparison(result.comparison, labels=[f"after ({args.method})", "before"], fig=fig,
                        b_first=True)
    write_outputs(args, fig, f"bece recalibrate: {sources[1]} ({args.method}, fitted on "
                  f"{sources[0]})", text, d, result)
    return 0
