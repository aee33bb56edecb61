"""The ``bece`` command's argument parser: one-line usage errors, ``--version``."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, NoReturn

__all__ = [
    "Parser",
    "UsageError",
    "build_parser",
    "version",
]


class UsageError(Exception):
    """A command line argparse refuses; :func:`bece.cli.main` prints it as one line, exit 2."""


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (no usage dump)."""

    def error(self, message: str) -> NoReturn:  # one line, exit 2, no usage dump
        raise UsageError(f"{self.prog}: {message} (see '{self.prog} --help')")


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


def _levels(text: str) -> list[float]:
    """``--levels 0.1,0.5,0.9``: numbers in (0, 1), strictly increasing."""
    try:
        levels = [float(t) for t in text.split(",")]
    except ValueError:
        levels = []
    if not levels or not all(0.0 < p < 1.0 for p in levels):  # NaN fails too
        raise argparse.ArgumentTypeError(
            f"invalid levels {text!r}: give numbers in (0, 1) separated by commas, e.g. 0.1,0.5,0.9"
        )
    for a, b in zip(levels, levels[1:]):
        if not a < b:
            raise argparse.ArgumentTypeError(
                f"invalid levels {text!r}: they must be strictly increasing ({a:g} is followed by {b:g})"
            )
    return levels


def version() -> str:
    """bece's version: the installed distribution's metadata, else
    ``bece.__version__`` (:data:`bece.base.version.VERSION`; a source tree
    that is not installed)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("bece")
    except PackageNotFoundError:
        from ..base.version import VERSION

        return VERSION


class _Version(argparse.Action):
    """``--version``: looks the version up only when asked."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> NoReturn:
        print(f"bece {version()}")
        parser.exit(0)


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``bece``, ``bece report`` and ``bece compare``."""
    parser = Parser(
        prog="bece",
        description="Bayesian assessment of calibration: a posterior over the "
        "expected calibration error (ECE) of a classifier's predictions.",
    )
    parser.add_argument("--version", action=_Version, help="print bece's version and exit")
    sub = parser.add_subparsers(dest="command", parser_class=Parser)
    rep = sub.add_parser(
        "report",
        help="calibration report of a classifier's predictions or a regression forecaster's "
        "forecasts",
        description="Posterior over the ECE of the predictions in FILE. FILE is CSV, "
        "Parquet or NPZ with a 'y_true' column and either 'y_prob' (P(y=1) of a binary "
        "classifier) or 'p_0' ... 'p_{K-1}' (class probabilities), optionally 'y_pred', "
        "or a directory of Parquet files (Spark or Dask output). "
        "Without FILE, runs on the example shipped with bece (logistic regression on "
        "scikit-learn's digits). "
        "A file of regression forecasts (a 'y' column and either 'mean' and 'std', quantile "
        "columns 'q_0.05', 'q_0.5', ... or sample columns 's_0' ... 's_{S-1}') gets the "
        "regression report instead (Kuleshov et al. 2018): a verdict, the calibration error "
        "(posterior and plug-in) and the calibration curve with its band; the kind of file "
        "is detected from its columns.",
    )
    rep.add_argument("file", nargs="?", metavar="FILE",
                     help="CSV, Parquet or NPZ file, or a directory of Parquet files")
    rep.add_argument(
        "--model",
        default="binned",
        choices=["binned", "conjugate", "literal", "smooth"],
        help="binned: the binned BECE model, per bin (its conjugate form, closed form; "
        "'conjugate' names it too); literal: the binned model's literal form (each confidence a "
        "truncated Normal in its bin, exact sampling); smooth: a smooth calibration "
        "curve pooling the bins (Laplace, from statistics on a fine grid), honest at small "
        "n (default binned)",
    )
    _add_options(rep, "posterior draws", "the reliability diagram, or the calibration curve of "
                 "regression forecasts")
    # classifier-only options default to None so that giving one for a
    # regression file (and the reverse) can be refused, not ignored
    rep.set_defaults(model=None, n_bins=None, binning=None)
    reg = rep.add_argument_group(
        "regression forecasts", "column names (a regression file is recognised by them)"
    )
    reg.add_argument("--y-col", metavar="NAME", help="target column (default y)")
    reg.add_argument("--mean-col", metavar="NAME", help="Gaussian forecast mean (default mean)")
    reg.add_argument("--std-col", metavar="NAME",
                     help="Gaussian forecast standard deviation (default std)")
    reg.add_argument("--quantile-prefix", metavar="PREFIX",
                     help="quantile columns PREFIX<level>, e.g. q_0.05 (default q_)")
    reg.add_argument("--sample-prefix", metavar="PREFIX",
                     help="sample columns PREFIX0 ... PREFIX{S-1} (default s_)")
    reg.add_argument(
        "--levels", metavar="P1,P2,...", type=_levels,
        help="levels of the calibration error and curve, comma-separated in (0, 1) (default "
        "0.01, 0.02, ..., 0.99; for a quantile forecast, its own levels)",
    )
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
