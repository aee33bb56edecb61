"""``bece test``: is the classifier calibrated? The calibration test alone, and the verdict.

:func:`bece.calibration_test` on a file (the example shipped with bece
without FILE): its p-value (consistency resampling of the plug-in ECE), its
Bayes factor B01 for the identity curve against the smooth calibration-curve
model, read by one rule (:func:`bece._results.verdict.verdict`):
"consistent with calibration" when p >= 0.05 and B01 >= 1,
"miscalibrated" when p < 0.05 and B01 < 1, "inconclusive" otherwise; and
the posterior probability of calibration P(calibrated) at ``--prior-odds``
(default 0.02, as ``bece report``'s P(calibrated)). ``bece report`` opens with
the same verdict (:func:`file_test`).

A file of at most 2,000 predictions is read whole (one atom per
prediction, as :func:`bece.calibration_test` gives); a larger one is read
in chunks into statistics on the fine grid of
:func:`bece.smooth.fine_binning` (:meth:`bece.SmoothModel.calibration_test`,
the same atoms as ``calibration_test(..., grid=128)``).

For class probabilities (n, K) the test is of the top-label reading the
report uses: P(correct | confidence = c) = c with confidence = max_k p_k,
pooled over the predicted labels (not label by label).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .._results.text import TOP_LABEL_SCOPE
from .common import input_options, source_words, to_json, write_html

__all__ = [
    "TOP_LABEL_SCOPE",
    "file_test",
    "format_test",
    "run_test",
    "test_dict",
]

def file_test(path: Any, args: argparse.Namespace, *, n: int | None = None, edges: Any = None,
              fine_stats: Any = None, progress: bool = False) -> Any:
    """:func:`bece.calibration_test` of the predictions in ``path``.

    ``args`` gives the bins (``n_bins``, ``binning``), ``seed``, the input
    options and, when present, ``resamples`` and ``prior_odds``. ``n``
    (the number of predictions, when known) skips a pass for small files;
    ``edges`` are the ECE bins' edges (needed for quantile bins, which
    would otherwise take a pass); ``fine_stats`` are statistics of the
    file on :func:`bece.smooth.fine_binning` of those bins, when already
    read (``bece report --model smooth``).
    """
    from .._api import calibration_test
    from .._io.files import read_predictions, read_statistics
    from .._posteriors import SmoothModel
    from .._smooth.atoms import EXACT_MAX_N, fine_binning

    columns, options = input_options(args)
    resamples, odds = getattr(args, "resamples", None), getattr(args, "prior_odds", None)
    test_options = {"num_resamples": 1000 if resamples is None else resamples, "seed": args.seed}
    if odds is not None:  # else the test's default, the model's prior odds
        test_options["prior_odds"] = odds
    if n is not None and n <= EXACT_MAX_N:
        whole = read_predictions(path, **columns)
        return calibration_test(whole.y_true, whole.y_prob, y_pred=whole.y_pred, n_bins=args.n_bins,
                                binning=args.binning, **test_options, **options)
    n_bins: int | None = args.n_bins
    binning: Any = args.binning
    if binning == "quantile":  # the test's bins need every confidence: a first pass
        if edges is None:
            edges = read_statistics(path, n_bins=n_bins, binning="quantile", progress=progress,
                                    **options, **columns).stats.edges
        binning, n_bins = edges, None
    if fine_stats is None:
        fine_stats = read_statistics(path, binning=fine_binning(n_bins, binning), progress=progress,
                                     **options, **columns).stats
    if fine_stats.n <= EXACT_MAX_N:
        return file_test(path, args, n=fine_stats.n)
    return SmoothModel(n_bins=n_bins, binning=binning).calibration_test(fine_stats, **test_options)


def test_dict(test: Any, level: float = 0.05) -> dict[str, Any]:
    """The ``verdict`` and ``calibration_test`` objects of the JSON: the test's
    own :meth:`~bece.CalibrationTest.to_dict`."""
    return dict(test.to_dict(level))


def format_test(test: Any, source: str, level: float = 0.05) -> str:
    """``bece test``: a header naming the file, then the test's own text."""
    return f"bece test: {source}\n{test.text(level)}"


def run_test(args: argparse.Namespace) -> int:
    """``bece test [FILE]``; returns the exit code."""
    from .._io.files import example_path
    from .parser import version

    path = example_path() if args.file is None else args.file
    if args.file is not None:
        from .._io.files import column_names
        from .._io.forecast_columns import detect_kind

        columns, _ = input_options(args)
        if detect_kind(column_names(path), str(path), y_col="y", mean_col="mean", std_col="std",
                       quantile_prefix="q_", sample_prefix="s_", y_true_col=columns["y_true_col"],
                       y_prob_col=columns["y_prob_col"],
                       prob_prefix=columns["prob_prefix"]) == "regression":
            raise ValueError(f"{path} holds regression forecasts; 'bece test' is for a classifier's "
                             f"predictions: 'bece report {path}' gives the forecasts' verdict")
    progress = not args.json and sys.stderr.isatty()
    test = file_test(path, args, progress=progress)
    source = source_words(args, path)
    info = {"model": "calibration-test", "input_kind": test.kind, "seed": args.seed,
            "bece_version": version()}
    d = {**info, "source": str(path), "n": test.n, "n_bins": test.n_bins,
         **test_dict(test, args.level)}
    text = format_test(test, source, args.level)
    print(to_json(d) if args.json else text)
    if args.html is not None:
        write_html(args, f"bece test: {source}", text, d, test)
    return 0
