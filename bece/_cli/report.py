"""``bece report`` on classifier predictions: the Bayesian ECE and its per-bin table."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from functools import cache, partial
from pathlib import Path
from typing import Any

import numpy as np

from .calibration import file_test
from .common import (
    BINARY_NOTE,
    PROB,
    classes_line,
    figure,
    input_options,
    source_words,
    to_json,
    write_outputs,
)
from .parser import INPUT_OPTIONS

__all__ = [
    "CLASSIFIER_OPTIONS",
    "REGRESSION_OPTIONS",
    "conventions_of",
    "file_kind",
    "format_report",
    "refuse",
    "report_dict",
    "run_report",
]


def report_dict(result: Any, prob: float = PROB, seed: int | None = None,
                test: Any = None, reference: Any = None) -> dict[str, Any]:
    """The JSON object of ``bece report``: the result's own
    :meth:`~bece.BayesianECE.to_dict` (``model``, ``input_kind``: ``"binary"``,
    ``"top-label"`` or ``"triples"``, ...) with ``seed`` and ``bece_version``.

    Each bin has ``observed`` (the observed frequency of y = 1 for binary
    input, the accuracy for top-label and triples) and ``predicted`` (the
    mean predicted P(y = 1), or the mean confidence), names true for both
    kinds; for class probabilities and triples ``accuracy`` and
    ``confidence`` repeat them in the classifier's words (likewise the
    smooth model's ``model_observed`` and ``model_accuracy``). With ``test`` (a
    :class:`~bece.CalibrationTest`), ``verdict`` and ``calibration_test``
    as :func:`bece._cli.calibration.test_dict` gives them. The smooth model
    adds its ``prob_calibrated`` and ``prior_odds``; with ``reference`` (the
    binned model's posterior on the same bins), ``reference``:
    ``{"model", "ece": {...}}``.
    """
    from .parser import version

    own = result.to_dict(prob)
    d = {"model": own.pop("model"), "input_kind": own.pop("input_kind"), "seed": seed,
         "bece_version": version(), **own}
    if test is not None:
        from .calibration import test_dict

        d.update(test_dict(test))
    if reference is not None:
        rlo, rhi = reference.interval(prob)
        d["reference"] = {"model": reference.model, "ece": {
            "mean": reference.mean, "std": reference.std, "prob": prob, "interval": [rlo, rhi]}}
    return d


def format_report(result: Any, source: str, kind: str, binning: str, prob: float = PROB,
                  n_classes: int | None = None, test: Any = None, reference: Any = None,
                  classes: str | None = None) -> str:
    """``bece report``: a header naming the file and how it was read (the
    bins, the classes of the columns, how a K = 2 matrix was read), then the
    result's own :meth:`~bece.BayesianECE.text` with the test's verdict and
    the binned model as reference."""
    head = [f"bece report: {source}" + ("" if binning == "uniform" else f"; {binning} bins")]
    if classes is not None:
        head.append(f"  classes       {classes}")
    if kind == "top-label" and n_classes == 2:
        head.append(f"  note          {BINARY_NOTE}")
    return "\n".join([*head, result.text(prob, test=test, reference=reference)])


#: The options of each kind of file, as (option, argparse dest); a given
#: option of the other kind is refused, never ignored.
CLASSIFIER_OPTIONS = (("--model", "model"), ("--n-bins", "n_bins"), ("--binning", "binning"),
                      ("--no-verdict", "no_verdict"), *INPUT_OPTIONS, ("--metrics", "metrics"),
                      ("--top-label", "top_label"), ("--classwise", "classwise"), ("--by", "by"),
                      ("--pooling", "pooling"), ("--window", "window"), ("--reference", "reference"),
                      ("--fail-on-drift", "fail_on_drift"))
REGRESSION_OPTIONS = (("--y-col", "y_col"), ("--mean-col", "mean_col"), ("--std-col", "std_col"),
                      ("--quantile-prefix", "quantile_prefix"), ("--sample-prefix", "sample_prefix"),
                      ("--levels", "levels"))
_REGRESSION_DEFAULTS = {"y_col": "y", "mean_col": "mean", "std_col": "std",
                        "quantile_prefix": "q_", "sample_prefix": "s_"}


def conventions_of(args: argparse.Namespace) -> dict[str, str]:
    """The regression file's column names: the options given, else the defaults."""
    return {k: v if getattr(args, k, None) is None else getattr(args, k)
            for k, v in _REGRESSION_DEFAULTS.items()}


def refuse(args: argparse.Namespace, options: tuple[tuple[str, str], ...], what: str) -> None:
    given = [flag for flag, dest in options if getattr(args, dest, None) is not None]
    if given:
        verb = "applies" if len(given) == 1 else "apply"
        raise ValueError(f"{', '.join(given)} {verb} only {what}")


def file_kind(args: argparse.Namespace, path: Any, conventions: dict[str, Any],
               columns: dict[str, Any]) -> str:
    """A classifier's predictions or regression forecasts: by the file's
    columns (:func:`~bece._io.forecast_columns.detect_kind`, with the column
    options given); where the columns leave it open (a network's NPZ of
    ``y`` and ``logits``: a target ``y`` without forecast columns, class
    scores without ``y_true``), by the options that name columns or say how
    to read them, when they are of one kind only (``--logits``,
    ``--prob-prefix``, ...; ``--y-col``, ...)."""
    from .._io.files import column_names
    from .._io.forecast_columns import detect_kind

    try:
        return detect_kind(column_names(path), str(path), **conventions,
                           y_true_col=columns["y_true_col"], y_prob_col=columns["y_prob_col"],
                           prob_prefix=columns["prob_prefix"])
    except ValueError:
        classifier = any(getattr(args, d, None) is not None for _, d in INPUT_OPTIONS)
        regression = any(getattr(args, d, None) is not None for _, d in REGRESSION_OPTIONS
                         if d != "levels")
        if classifier == regression:
            raise
        return "classifier" if classifier else "regression"


def run_report(args: argparse.Namespace) -> int:
    """``bece report``: a classifier's predictions, or regression forecasts
    (detected from the file's columns); returns the exit code."""
    from .._api import posterior_ece
    from .._io.files import example_path, read_predictions, read_statistics
    from .._io.jsonl import lm_eval_file, lm_eval_words

    conventions = conventions_of(args)
    columns, options = input_options(args)
    if args.file is None:
        refuse(args, REGRESSION_OPTIONS, "to regression forecasts in a FILE; the example "
                "shipped with bece holds a classifier's predictions")
        path = example_path()
    else:
        path = args.file
        if file_kind(args, path, conventions, columns) == "regression":
            from .regression import run_regression

            refuse(args, CLASSIFIER_OPTIONS, f"to a classifier's predictions; {path} holds "
                    "regression forecasts")
            return run_regression(args, path, conventions)
        refuse(args, REGRESSION_OPTIONS, f"to regression forecasts; {path} holds a classifier's "
                "predictions")
    if getattr(args, "by", None) is not None:
        return _group_report(path, args, columns, options)
    given = [flag for flag, dest in (("--pooling", "pooling"), ("--window", "window"),
                                     ("--reference", "reference"),
                                     ("--fail-on-drift", "fail_on_drift"))
             if getattr(args, dest, None) is not None]
    if given:
        raise ValueError(f"{given[0]} applies only with --by COLUMN (the groups, or the times "
                         "to cut into windows)")
    args.model = "smooth" if args.model is None else args.model
    args.n_bins = 15 if args.n_bins is None else args.n_bins
    args.binning = "uniform" if args.binning is None else args.binning
    # CSV and Parquet are read in chunks (bece._io.stream); a progress bar only
    # for a person watching a terminal, never in --json output
    progress = not args.json and sys.stderr.isatty()
    reference = None
    if args.model == "smooth":
        result, pred = _smooth_report(path, args, progress, columns, options)
        # the binned model beside it, on the same ECE bins (closed form: cheap)
        reference = posterior_ece(result.stats, num_samples=args.samples, seed=args.seed,
                                  model="binned")
    elif args.no_verdict or args.binning == "quantile":
        pred = read_statistics(path, n_bins=args.n_bins, binning=args.binning, progress=progress,
                               **options, **columns)
        result = posterior_ece(pred.stats, num_samples=args.samples, seed=args.seed,
                               model=args.model)
    else:  # one pass: the verdict's fine statistics, added up into the ECE bins
        from .._smooth.atoms import ece_statistics, fine_binning

        pred = read_statistics(path, binning=fine_binning(args.n_bins, args.binning),
                               progress=progress, **options, **columns)
        result = posterior_ece(ece_statistics(pred.stats, args.n_bins, args.binning),
                               num_samples=args.samples, seed=args.seed, model=args.model)
    classes = getattr(pred, "labels", None)
    # the verdict: the calibration test of the same predictions and bins
    # (bece._cli.calibration), on the fine statistics when they were read
    fine = pred.stats if pred.stats.binning != result.stats.binning else None
    test = None if args.no_verdict else file_test(
        path, args, n=result.stats.n, edges=result.stats.edges, fine_stats=fine,
        progress=progress)
    # every prediction in memory, read once for the parts that need it
    whole = cache(partial(read_predictions, path, **columns))
    metrics = (None if getattr(args, "metrics", None) is None else
               _metrics(path, args, columns, options, result, whole))
    per_class = (_per_class(path, args, options, result.stats.n, whole)
                 if getattr(args, "top_label", None) or getattr(args, "classwise", None) else {})
    html = args.html
    source = source_words(args, path)
    if args.file is not None and lm_eval_file(path):  # say which probabilities are read
        source += f" ({lm_eval_words(columns['y_prob_col'])})"
    d: dict[str, Any] = {}
    text = ""
    if args.json or html is not None:
        d = report_dict(result, seed=args.seed, test=test, reference=reference)
        if classes is not None:
            d["classes"] = [c.item() if hasattr(c, "item") else c for c in classes]
        if metrics is not None:
            d["metrics"] = metrics
        d.update(per_class)
    if not args.json or html is not None:
        which = (None if classes is None else  # which column is which class
                 classes_line(classes, columns["prob_prefix"], args.labels is not None))
        text = format_report(result, source, pred.kind, args.binning, n_classes=pred.n_classes,
                             test=test, reference=reference, classes=which)
        if metrics is not None:
            text += "\n" + _metrics_text(metrics, result.stats.kind)
        if per_class:
            text += "\n" + _per_class_text(per_class)
    print(to_json(d) if args.json else text)
    fig = None
    if args.plot is not None or html is not None:
        from .._plots.reliability import reliability_diagram

        fig = figure((5.5, 6.2))
        # smooth: the bands are the model's pooled per-bin accuracy, which is
        # what it adds over the counts (band_prior=None)
        band: dict[str, Any] = {"band_prior": None} if args.model == "smooth" else {}
        ax = reliability_diagram(result, ax=fig.add_subplot(), **band)
        if args.model == "smooth":
            ax.set_title(f"smooth model: {ax.get_title()}", fontsize="medium")
    write_outputs(args, fig, f"bece report: {source}", text, d, result)
    return 0


#: Above this many rows the metrics that need every pair in memory are
#: refused (the one-pass metrics are computed for any size).
WHOLE_DATA_MAX_ROWS = 10_000_000


def _metrics(path: Any, args: argparse.Namespace, columns: dict[str, Any],
             options: dict[str, Any], result: Any, whole: Callable[[], Any]) -> dict[str, Any]:
    """``--metrics``: the chosen metrics of the file's (outcome, confidence)
    pairs on the report's bins. Those of :data:`bece._metrics.streaming.MERGEABLE`
    from one pass over chunks (intervals: the l2 ECE's from ``result``'s
    draws, Sun et al.'s asymptotic one, the Poisson bootstrap otherwise);
    those of ``WHOLE_DATA`` from the pairs in memory (only the prediction
    columns are read, by ``whole()``), refused above :data:`WHOLE_DATA_MAX_ROWS` rows."""
    from .._io.stream import iter_outcomes
    from .._metrics.posterior_l2 import l2_ece_draws
    from .._metrics.registry import METRIC_LABELS, metric_report
    from .._metrics.streaming import MERGEABLE, WHOLE_DATA, metric_sums, streamed_metrics
    from .._stats.inputs import Inputs, as_outcomes

    names = list(args.metrics)
    bins = result.stats.binning
    streamed = Path(path).is_dir() or Path(path).suffix.lower() in (".csv", ".parquet", ".pq")
    sums = None
    if streamed:
        for start, z, p in iter_outcomes(path, inputs=Inputs(**options), **columns):
            part = metric_sums(z, p, bins, start=start, seed=args.seed)
            sums = part if sums is None else sums + part
    else:  # NPZ: in memory anyway
        data = whole()
        z, p = as_outcomes(data.y_true, data.y_prob, data.y_pred, Inputs(**options))
        sums = metric_sums(np.asarray(z, dtype=np.float64), p, bins, seed=args.seed)
    if sums is None:
        raise ValueError(f"{path}: no predictions (0 rows)")
    out = streamed_metrics(sums, names, prob=PROB, posterior_l2=l2_ece_draws(result))
    for entry in out.values():
        entry["one_pass"] = True
    need = [n for n in names if n not in MERGEABLE]
    if need and sums.n > WHOLE_DATA_MAX_ROWS:
        for n in need:
            out[n] = {"label": METRIC_LABELS[n], "one_pass": False,
                      "needs_all_pairs": WHOLE_DATA[n],
                      "error": f"needs all {sums.n} pairs in memory ({WHOLE_DATA[n]}); "
                      f"refused above {WHOLE_DATA_MAX_ROWS:,} rows"}
    elif need:
        data = whole()
        z, p = as_outcomes(data.y_true, data.y_prob, data.y_pred, Inputs(**options))
        rest = metric_report(np.asarray(z, dtype=np.float64), p, need, posterior=result,
                             prob=PROB, seed=args.seed)
        for n, entry in rest.items():
            out[n] = {**entry, "one_pass": False, "needs_all_pairs": WHOLE_DATA[n]}
    if result.stats.kind != "binary":  # scores of the pairs, named for what they are
        for n, what in TOP_LABEL_SCORES.items():
            if n in out:
                out[n]["label"] = f"{out[n]['label']} {what}"
    return {n: out[n] for n in names}


#: The scores of class-probability input that users know under another
#: meaning: bece scores the top-label (correct, confidence) pairs, not the
#: network's multiclass NLL or Brier score over all K classes.
TOP_LABEL_SCORES = {"log_loss": "of correct vs confidence (not the multiclass NLL)",
                    "brier": "of correct vs confidence (not the K-class Brier)"}


def _per_class(path: Any, args: argparse.Namespace, options: dict[str, Any], n: int,
               whole: Callable[[], Any]) -> dict[str, Any]:
    """``--top-label`` and ``--classwise``: the label-averaged top-label ECE's
    posterior (:func:`bece.bayesian_top_label_ece`, its default model) and the
    classwise ECE with its Poisson-bootstrap interval, from the class
    probabilities read into memory (refused above :data:`WHOLE_DATA_MAX_ROWS`
    rows and for a binary classifier's P(y = 1))."""
    from .._api import bayesian_top_label_ece
    from .._metrics.bootstrap import bootstrap_interval
    from .._metrics.multiclass import classwise_ece

    flags = [f for f, d in (("--top-label", "top_label"), ("--classwise", "classwise"))
             if getattr(args, d, None)]
    if n > WHOLE_DATA_MAX_ROWS:
        raise ValueError(f"{' and '.join(flags)} {'reads' if len(flags) == 1 else 'read'} every "
                         f"prediction into memory: refused "
                         f"above {WHOLE_DATA_MAX_ROWS:,} rows ({path} has {n:,})")
    data = whole()
    prob = np.asarray(data.y_prob)
    if prob.ndim != 2 or data.y_pred is not None:
        raise ValueError(f"{' and '.join(flags)} {'needs' if len(flags) == 1 else 'need'} class "
                         f"probabilities p_0 ... p_(K-1); {path} holds P(y = 1) (write columns "
                         f"p_0, p_1 for a binary classifier's top-label and classwise readings)")
    inputs = {k: v for k, v in options.items() if k != "pos_label"}  # (n, K): no positive class
    out: dict[str, Any] = {}
    if getattr(args, "top_label", None):
        r = bayesian_top_label_ece(data.y_true, prob, n_bins=args.n_bins, binning=args.binning,
                                   num_samples=args.samples, seed=args.seed, **inputs)
        e = r.to_dict(PROB)["ece"]
        out["top_label"] = {"model": r.model, "average": r.average, "n_labels": r.n_labels,
                            "plugin_ece": r.plugin, "ece": e,
                            "prob_calibrated": r.prob_calibrated, "prior_odds": r.prior_odds}
    if getattr(args, "classwise", None):
        iv = bootstrap_interval(classwise_ece, data.y_true, prob, prob=PROB, n_boot=200,
                                seed=args.seed, n_bins=args.n_bins, binning=args.binning, **inputs)
        out["classwise"] = {"value": iv.estimate, "interval": [iv.low, iv.high],
                            "interval_method": "Poisson bootstrap (200 replicates)",
                            "n_classes": int(prob.shape[1])}
    return out


def _per_class_text(d: dict[str, Any]) -> str:
    from .._results.text import format_prob

    lines = []
    if "top_label" in d:
        t = d["top_label"]
        lo, hi = t["ece"]["interval"]
        how = "unweighted mean" if t["average"] == "label" else "mean weighted by predictions"
        pc = "" if t["prob_calibrated"] is None else (
            f", P(calibrated) {format_prob(t['prob_calibrated'])}")
        lines += [f"  top-label ECE ({how} over the {t['n_labels']:,} predicted labels, each "
                  f"label's own curve; the {'hierarchical smooth' if 'smooth' in t['model'] else 'binned'} "
                  "model)",
                  f"    Bayesian ECE  {t['ece']['mean']:.4f} [{lo:.4f}, {hi:.4f}] ({PROB:.0%}), "
                  f"bound {t['ece']['upper_bound']:.4f}, plug-in {t['plugin_ece']:.4f}{pc}"]
    if "classwise" in d:
        c = d["classwise"]
        lo, hi = c["interval"]
        lines += [f"  classwise ECE (mean over the {c['n_classes']:,} classes of each class's "
                  "binned ECE)",
                  f"    plug-in       {c['value']:.4f} [{lo:.4f}, {hi:.4f}] ({PROB:.0%}), "
                  f"{c['interval_method']}"]
    return "\n".join(lines)


def _metrics_text(metrics: dict[str, Any], kind: str | None = None) -> str:
    pairs = "(y, P(y = 1))" if kind == "binary" else "(correct, confidence)"
    lines = [f"  metrics ({PROB:.0%} intervals; of the {pairs} pairs)"]
    w = max(42, *(len(m["label"]) for m in metrics.values()))
    for m in metrics.values():
        if "error" in m:
            lines.append(f"    {m['label']:<{w}} not computed: {m['error']}")
        elif "p_value" in m:
            lines.append(f"    {m['label']:<{w}} statistic {m['statistic']:.4f}, "
                         f"p-value {m['p_value']:.4g}")
        elif "interval" not in m:  # an infinite log loss: why
            why = f"   ({m['reason']})" if "reason" in m else ""
            lines.append(f"    {m['label']:<{w}} {m['value']:.4f}{why}")
        else:
            lo, hi = m["interval"]
            lines.append(f"    {m['label']:<{w}} {m['value']:.4f} [{lo:.4f}, {hi:.4f}] "
                         f"{m['interval_method']}")
    whole = [f"{m['label']} ({m['needs_all_pairs']})" for m in metrics.values()
             if not m.get("one_pass", True)]
    if whole:
        lines.append("    one pass over the file in chunks: the others; all pairs in memory: "
                     + "; ".join(whole))
    return "\n".join(lines)


def _smooth_report(path: Any, args: argparse.Namespace, progress: bool, columns: dict[str, Any],
                   options: dict[str, Any]) -> tuple[Any, Any]:
    """Fine statistics of the file (chunked) and the smooth posterior on them;
    a file of at most EXACT_MAX_N rows is small enough to read whole and
    gets the exact posterior (one atom per prediction), as
    ``bece.bayesian_ece(..., model="smooth")`` gives."""
    from .._api import bayesian_ece, posterior_ece
    from .._io.files import read_predictions, read_statistics
    from .._smooth.atoms import EXACT_MAX_N, fine_binning

    n_bins: int | None = args.n_bins
    binning: Any = args.binning
    if binning == "quantile":
        # the quantile edges need all confidences: a first pass (two for CSV
        # and Parquet, see bece._io.stream), then the fine statistics in those bins
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


def _group_report(path: Any, args: argparse.Namespace, columns: dict[str, Any],
                  options: dict[str, Any]) -> int:
    """``bece report FILE --by COLUMN``: each group's ECE (:class:`bece.GroupECE`)."""
    from .._api import bayesian_ece
    from .._io.files import read_predictions
    from .._results.groups import GroupECE
    from .parser import version

    if args.model not in (None, "smooth"):
        raise ValueError(f"--by takes the smooth model (partial pooling across groups); "
                         f"--model {args.model} has no pooling")
    refuse(args, (("--metrics", "metrics"), ("--top-label", "top_label"),
                  ("--classwise", "classwise")), "without --by (one report of all rows)")
    if args.binning == "quantile":
        raise ValueError("--binning quantile does not apply with --by: the groups need common "
                         "bins; use uniform bins")
    pred = read_predictions(path, **columns, by_col=args.by)
    groups = pred.by
    assert groups is not None  # read with by_col
    if args.window is not None:
        from .._stats.windows import window_starts

        width: Any = args.window
        try:
            width = float(width)
        except ValueError:
            pass
        groups = window_starts(groups, width, name=f"column {args.by}")
    result = bayesian_ece(pred.y_true, pred.y_prob, y_pred=pred.y_pred, by=groups,
                          n_bins=15 if args.n_bins is None else args.n_bins,
                          num_samples=args.samples, seed=args.seed,
                          pooling=args.pooling or "partial", **options)
    assert isinstance(result, GroupECE)
    drift = None
    if args.window is not None or args.reference is not None or args.fail_on_drift:
        from .._api import drift_test

        if result.n_groups < 2:
            raise ValueError(f"the drift rule needs at least two windows; column {args.by} "
                             f"gives {result.n_groups}")
        drift = drift_test(result, reference=1 if args.reference is None else args.reference)
    source = source_words(args, path)
    d: dict[str, Any] = {}
    text = ""
    if args.json or args.html is not None:
        own = result.to_dict(PROB)
        d = {"model": own.pop("model"), "input_kind": own.pop("input_kind"), "by": args.by,
             "window": args.window, "seed": args.seed, "bece_version": version(), **own}
        if drift is not None:
            d["drift"] = drift.to_dict()
    if not args.json or args.html is not None:
        per = "" if args.window is None else f" in windows of {args.window}"
        text = f"bece report: {source}, by {args.by}{per}\n" + result.text(PROB)
        if drift is not None:
            text += "\n\n" + drift.text()
    print(to_json(d) if args.json else text)
    fig = None
    if args.plot is not None or args.html is not None:
        from .._plots.groups import plot_groups, plot_over_time

        if args.window is not None:
            fig = figure((7.5, 3.8))
            plot_over_time(result, drift=drift, ax=fig.add_subplot(), prob=PROB)
        else:
            fig = figure((6.5, 1.6 + 0.45 * result.n_groups))
            plot_groups(result, ax=fig.add_subplot(), prob=PROB)
    write_outputs(args, fig, f"bece report: {source}, by {args.by}", text, d, result)
    if drift is not None and args.fail_on_drift and drift.drifted:
        from .._results.drift import DRIFT_EXIT_STATUS

        return DRIFT_EXIT_STATUS
    return 0
