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
        help="binned: the binned BECE model, per bin (closed form); smooth: a smooth calibration "
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
