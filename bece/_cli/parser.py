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
    """A command line argparse refuses; :func:`bece._cli.main` prints it as one line, exit 2."""


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
    _add_html(parser)


def _add_html(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--html", metavar="PATH",
        help="also write one self-contained HTML file (.html): the text, every number of --json, "
        "the figure, the versions and the seed; it loads nothing from elsewhere")


def _label(text: str) -> int | str:
    """A label on the command line: an integer if it reads as one (a CSV
    column of whole numbers is read as integers), else the text."""
    try:
        return int(text)
    except ValueError:
        return text


def _labels(text: str) -> list[int | str]:
    """``--labels cat,dog,bird``: the class of each probability column, in order."""
    items = [t.strip() for t in text.split(",")]
    if not all(items):
        raise argparse.ArgumentTypeError(
            f"invalid labels {text!r}: give the class of each probability column, in order, "
            "separated by commas, e.g. setosa,versicolor,virginica"
        )
    return [_label(t) for t in items]


def _metric_names(text: str) -> list[str]:
    """``--metrics l2,brier`` (or ``all``): the names, checked."""
    from .._metrics.registry import METRIC_NAMES, check_metric_names

    if text.strip() == "all":
        return list(METRIC_NAMES)
    try:
        return check_metric_names(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _row_sum_tol(text: str) -> float:
    try:
        tol = float(text)
    except ValueError:
        tol = float("nan")
    if not 0.0 <= tol < 1.0:
        raise argparse.ArgumentTypeError(
            f"invalid tolerance {text!r}: give a number in [0, 1), e.g. 1e-3 for probabilities "
            "written with four decimals"
        )
    return tol


#: The classifier-input options, as (option, argparse dest) (refused for
#: regression forecasts).
INPUT_OPTIONS = (("--pos-label", "pos_label"), ("--labels", "labels"), ("--logits", "logits"),
                 ("--row-sum-tol", "row_sum_tol"), ("--y-true-col", "y_true_col"),
                 ("--y-prob-col", "y_prob_col"), ("--prob-prefix", "prob_prefix"),
                 ("--y-pred-col", "y_pred_col"))


def _add_input_options(parser: argparse.ArgumentParser) -> None:
    """How a classifier's file is read: column names, labels, logits, row sums."""
    group = parser.add_argument_group(
        "classifier predictions", "how the columns are named and read (defaults: 'y_true', and "
        "'y_prob' or 'p_0' ... 'p_{K-1}', optionally 'y_pred')"
    )
    group.add_argument("--y-true-col", metavar="NAME", help="true labels (default y_true)")
    group.add_argument(
        "--y-prob-col", metavar="NAME",
        help="one probability column: P(y = 1), or the confidence of --y-pred-col (default "
        "y_prob); e.g. --y-prob-col p_1 reads a binary classifier's p_0, p_1 file as P(y = 1), "
        "as scikit-learn's calibration_curve does, instead of top-label",
    )
    group.add_argument("--prob-prefix", metavar="PREFIX",
                       help="class-probability columns PREFIX0 ... PREFIX{K-1} (default p_)")
    group.add_argument("--y-pred-col", metavar="NAME",
                       help="predicted labels (default y_pred, when present)")
    group.add_argument(
        "--pos-label", metavar="LABEL", type=_label,
        help="the value of y_true that is y = 1 for P(y = 1) input (default 1 for labels 0/1 "
        "and -1/1; needed for others, e.g. --pos-label dog)",
    )
    group.add_argument(
        "--labels", metavar="L0,L1,...", type=_labels,
        help="the class of each probability column, in order (scikit-learn's classes_), for "
        "labels that are not 0 .. K-1 (text labels default to their sorted values)",
    )
    group.add_argument("--logits", action="store_const", const=True,
                       help="the probability columns hold logits: softmax (sigmoid for one "
                       "column) is applied in float64")
    group.add_argument(
        "--row-sum-tol", metavar="TOL", type=_row_sum_tol,
        help="how far rows of class probabilities may sum from 1 (default: strict, float "
        "rounding only); e.g. 1e-3 for probabilities written with four decimals. Rows are used "
        "as given, never renormalised",
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
    ``bece.__version__`` (:data:`bece._base.version.VERSION`; a source tree
    that is not installed)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("bece")
    except PackageNotFoundError:
        from .._base.version import VERSION

        return VERSION


class _Version(argparse.Action):
    """``--version``: looks the version up only when asked."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> NoReturn:
        print(f"bece {version()}")
        parser.exit(0)


def _add_regression_options(parser: argparse.ArgumentParser) -> None:
    """How a file of regression forecasts is read: column names and the levels."""
    reg = parser.add_argument_group(
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


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``bece``, ``bece report``, ``bece compare``, ``bece test`` and
    ``bece recalibrate``."""
    from .._results.verdict import MEANING as VERDICT_MEANING

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
        "or a directory of Parquet files (Spark or Dask output), or a quoted pattern of CSV or "
        "Parquet files ('logs/*.parquet'), or JSON Lines (.jsonl: a "
        "table of records, or the samples lm-evaluation-harness writes with --log_samples). "
        "Without FILE, runs on the example shipped with bece (logistic regression on "
        "scikit-learn's digits). Class probabilities (p_0 ... p_{K-1}) are read top-label for "
        "every K, K = 2 included: confidence = max_k p_k, correct = [argmax == y_true]; for a "
        "binary classifier's P(y = 1) reading of a p_0, p_1 file pass --y-prob-col p_1. "
        "Labels may be any values (--labels, --pos-label); logits are read with --logits. "
        "A file of regression forecasts (a 'y' column and either 'mean' and 'std', quantile "
        "columns 'q_0.05', 'q_0.5', ... or sample columns 's_0' ... 's_{S-1}') gets the "
        "regression report instead (Kuleshov et al. 2018): a verdict, the calibration error "
        "(posterior and plug-in) and the calibration curve with its band; the kind of file "
        "is detected from its columns. "
        "A classifier's report opens with a verdict from the calibration test ('bece test'): "
        "'consistent with calibration' when p >= 0.05 and B01 >= 1, "
        "'miscalibrated' when p < 0.05 and B01 < 1, 'inconclusive' otherwise. "
        + VERDICT_MEANING + " For P(y=1) input the table gives each bin's observed frequency "
        "of y = 1 and mean predicted P(y = 1) (a negative gap: the bin over-predicts y = 1); "
        "for class probabilities, accuracy and confidence (a negative gap: over-confident).",
    )
    rep.add_argument("file", nargs="?", metavar="FILE",
                     help="CSV, Parquet or NPZ file, a directory of Parquet files, or a "
                     "pattern such as 'logs/*.parquet' (quoted)")
    rep.add_argument(
        "--model",
        default="smooth",
        choices=["smooth", "binned", "conjugate", "literal"],
        help="smooth (default): a smooth calibration curve pooling the bins (Laplace, from "
        "statistics on a fine grid) averaged with exact calibration, honest at small n; the "
        "binned model is printed beside it as the reference. binned: the binned BECE model, "
        "per bin (its conjugate form, closed form; 'conjugate' names it too); literal: the "
        "binned model's literal form (each confidence a truncated Normal in its bin, exact "
        "sampling)",
    )
    _add_options(rep, "posterior draws", "the reliability diagram, or the calibration curve of "
                 "regression forecasts")
    rep.add_argument("--no-verdict", action="store_const", const=True,
                     help="skip the calibration test and its verdict (classifier predictions; "
                     "saves the smooth model's fit, ArviZ's import and, above 2,000 rows, a "
                     "pass over the file)")
    # classifier-only options default to None so that giving one for a
    # regression file (and the reverse) can be refused, not ignored
    rep.set_defaults(model=None, n_bins=None, binning=None)
    _add_input_options(rep)
    rep.add_argument(
        "--metrics", metavar="NAMES", type=_metric_names,
        help="also report these calibration metrics, each with its interval (the l2 ECE from the "
        "posterior draws, l2_sun's asymptotic one, the others by Poisson bootstrap, 200 "
        "replicates from --seed, as bece.metrics.metric_report) or p-value, "
        "comma-separated: l2, debiased_l2, l2_sun, smooth_ece, ece_sweep, brier, log_loss, ks, "
        "slope, citl, intercept, spiegelhalter, hosmer_lemeshow, or 'all'. l2, debiased_l2, "
        "l2_sun, brier, log_loss, citl (mean p - mean y) and spiegelhalter are computed in one "
        "pass over the file in chunks; the others (hosmer_lemeshow: its groups are cut at the "
        "deciles of the confidences) need all predictions in memory (refused above 10,000,000 "
        "rows)",
    )
    rep.add_argument(
        "--top-label", action="store_const", const=True,
        help="class probabilities: also the top-label ECE averaged over the predicted labels "
        "(Gupta & Ramdas 2022), each label's confidence calibrated on its own, the hierarchical "
        "smooth model's posterior (bece.bayesian_top_label_ece); reads the file into memory")
    rep.add_argument(
        "--classwise", action="store_const", const=True,
        help="class probabilities: also the classwise ECE (the mean over the K classes of the "
        "binned ECE of p_k against [y = k]; Kull et al. 2019), plug-in with a 90%% Poisson-"
        "bootstrap interval (200 replicates from --seed; bece.classwise_ece); reads the file "
        "into memory")
    rep.add_argument(
        "--by", metavar="COLUMN",
        help="the ECE of each group of rows, grouped by the values of COLUMN (model version, "
        "region, subgroup), as bece.bayesian_ece(..., by=): partial pooling across groups (each "
        "group's curve a shared smooth curve plus its own shift and slope change), each group's "
        "interval, the probability that it is the worst calibrated, whether its curve differs "
        "from the shared one, its own posterior beside it and a warning where pooling may hide "
        "a group; --plot draws the groups' intervals; reads the file into memory")
    rep.add_argument(
        "--pooling", choices=["partial", "none"],
        help="with --by: partial (default) pooling across groups, or none (each group's "
        "posterior from its own rows)")
    rep.add_argument(
        "--window", metavar="WIDTH",
        help="with --by a column of times: group the rows into windows of this width (datetimes: "
        "a count and a unit, 1D, 6h, 1W, 1M, 30min; numbers: a positive number), report each "
        "window's ECE over time (--plot draws it with its band) and run the drift rule: each "
        "window's per-bin calibration gaps against the reference window's, a chi-squared test "
        "with a 1%% false-alarm rate per window (bece.drift_test)")
    rep.add_argument(
        "--reference", metavar="N", type=int,
        help="with --by: the first N windows (default 1), pooled, are the drift rule's reference")
    rep.add_argument(
        "--fail-on-drift", action="store_const", const=True,
        help="with --by: exit with status 3 when the drift rule alarms on the last window (for "
        "scheduled jobs; 0 otherwise, 2 for bad input)")
    _add_regression_options(rep)
    cmp_ = sub.add_parser(
        "compare",
        help="paired comparison of two models' ECE on the same test set",
        description="Paired posterior of the ECEs of two models A and B from two prediction "
        "files of the same test set (same 'y_true' column, row for row; columns as for "
        "'bece report'). The pairing of examples is kept (--model). CSV and Parquet files "
        "of more than 2,000 rows are read side by side in chunks into joint statistics. "
        "Prints both ECEs, their difference "
        "ECE_A - ECE_B with a credible interval and P(ECE_A < ECE_B), opening with which model "
        "is better calibrated (P >= 0.95) or 'no clear winner'.",
    )
    cmp_.add_argument("file_a", metavar="A", help="predictions of model A (CSV, Parquet or NPZ)")
    cmp_.add_argument("file_b", metavar="B", help="predictions of model B, same test set")
    cmp_.add_argument(
        "--model",
        default="smooth",
        choices=["smooth", "binned"],
        help="smooth (default): both models' smooth calibration curves, drawn with shared "
        "outcome perturbations and one Bayesian bootstrap over the examples; binned: one "
        "Dirichlet over the joint (correct_A, bin_A, correct_B, bin_B) cells",
    )
    _add_options(cmp_, "joint posterior draws", "the comparison figure")
    _add_input_options(cmp_)
    _add_test_parser(sub)
    from .._calibrate.methods import RECALIBRATION_METHODS

    rec_ = sub.add_parser(
        "recalibrate",
        help="fit a recalibrator on a validation file, compare the test file before and after",
        description="Fit a recalibrator (bece.calibrate) on the predictions in VAL_FILE only, "
        "then score the test predictions in TEST_FILE before and after it: the paired posterior "
        "of the two ECEs (as 'bece compare'), their difference with a credible interval, "
        "P(ECE_after < ECE_before) and the held-out NLL. Files as for 'bece report' (class "
        "probabilities p_0 ... p_{K-1}, or y_prob = P(y = 1); logits with --logits).",
    )
    rec_.add_argument("val_file", metavar="VAL_FILE", help="validation predictions: the "
                      "calibrator is fitted on them (CSV, Parquet or NPZ)")
    rec_.add_argument("test_file", metavar="TEST_FILE", help="test predictions, scored before and "
                      "after")
    rec_.add_argument(
        "--method", default="temperature", choices=list(RECALIBRATION_METHODS),
        help="temperature, vector, matrix, dirichlet: scaling of logits or log-probabilities "
        "(vector, matrix, dirichlet: penalised towards temperature scaling, strength by "
        "cross-validation); platt, isotonic, beta: binary classifiers only (default temperature)",
    )
    rec_.add_argument("--out", metavar="FILE", help="also write the recalibrated test "
                      "probabilities (.csv, .parquet or .npz; columns y_true and p_0 ... or y_prob)")
    _add_options(rec_, "joint posterior draws", "the comparison figure (after and before)")
    _add_input_options(rec_)
    _add_cross_check_parser(sub)
    return parser


def _level(text: str) -> float:
    try:
        level = float(text)
    except ValueError:
        level = float("nan")
    if not 0.0 < level < 1.0:
        raise argparse.ArgumentTypeError(f"invalid level {text!r}: give a number in (0, 1), e.g. 0.05")
    return level


def _add_test_parser(sub: Any) -> None:
    """``bece test [FILE]``: the calibration test alone, with the verdict."""
    from .._results.verdict import MEANING

    test = sub.add_parser(
        "test",
        help="is it calibrated? the calibration test of a classifier's predictions, with a verdict",
        description="Is the classifier calibrated? Tests the predictions in FILE (columns as for "
        "'bece report'; without FILE, the example shipped with bece) two ways and reads both by "
        "one rule: 'consistent with calibration' when p >= LEVEL and B01 >= 1, "
        "'miscalibrated' when p < LEVEL and B01 < 1, 'inconclusive' otherwise. "
        + MEANING + " Class probabilities p_0 ... p_{K-1} are tested in the top-label reading: "
        "P(correct | confidence) = confidence, pooled over the predicted labels. "
        "'bece report' opens with the same verdict. Exit code 0 whatever the verdict; 2 on bad "
        "input.",
    )
    test.add_argument("file", nargs="?", metavar="FILE",
                      help="CSV, Parquet or NPZ file, a directory of Parquet files, or a "
                     "pattern such as 'logs/*.parquet' (quoted)")
    test.add_argument("--n-bins", type=int, default=15,
                      help="bins of the test statistic, the plug-in ECE (default 15)")
    test.add_argument("--binning", default="uniform", choices=["uniform", "quantile"],
                      help="equal-width or equal-mass bins (default uniform)")
    test.add_argument("--level", type=_level, default=0.05,
                      help="the p-value's threshold, the test's false-alarm rate (default 0.05)")
    test.add_argument("--resamples", type=int, default=1000,
                      help="consistency resamples; the smallest p-value is 1/(resamples + 1) "
                      "(default 1000)")
    test.add_argument("--prior-odds", type=float, default=None,
                      help="P(calibrated)/P(not) before the data, for P(calibrated) only; the "
                      "verdict reads the Bayes factor (default 0.02, as the report's)")
    test.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    test.add_argument("--json", action="store_true", help="print one JSON object")
    _add_html(test)
    _add_input_options(test)


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"invalid count {text!r}: give a positive integer")
    return value


def _add_cross_check_parser(sub: Any) -> None:
    """``bece cross-check [FILE]``: the report's posterior against NUTS on its NumPyro model."""
    cc = sub.add_parser(
        "cross-check",
        help="check the posterior a report prints: its fast path against NUTS on the same "
        "NumPyro model",
        description="Runs NUTS on the NumPyro model behind the posterior 'bece report' prints "
        "for FILE (columns as for 'bece report'; without FILE, the example shipped with bece) "
        "and compares it with the fast path the report uses, by one rule: NUTS converged "
        "(R-hat, ESS, no divergence) and the 5, 50 and 95% quantiles of every quantity agree "
        "within max(z MCSE, 0.25 posterior sd), z for a family-wise false-alarm rate of 0.05. "
        "A classifier's predictions: the smooth model averaged with exact calibration, or "
        "--model; with --top-label the hierarchical top-label model. Regression forecasts: the "
        "smooth PIT model (or --model dirichlet). The predictions are read into memory; NUTS "
        "prints its expected time first when stderr is a terminal. Exit code 0 whatever the "
        "rule says ('agree' in --json); 2 on bad input.",
    )
    cc.add_argument("file", nargs="?", metavar="FILE",
                    help="CSV, Parquet or NPZ file, a directory of Parquet files, or a "
                     "pattern such as 'logs/*.parquet' (quoted)")
    cc.add_argument("--model", default=None,
                    choices=["smooth", "binned", "conjugate", "literal", "dirichlet"],
                    help="the model to check (default smooth): for a classifier also binned "
                    "(its conjugate form; 'conjugate' names it too) or literal; for regression "
                    "forecasts also dirichlet")
    cc.add_argument("--n-bins", type=int, default=None, help="number of ECE bins (default 15)")
    cc.add_argument("--binning", default=None, choices=["uniform", "quantile"],
                    help="equal-width or equal-mass bins (default uniform)")
    cc.add_argument("--top-label", action="store_const", const=True,
                    help="class probabilities: check the hierarchical top-label model of "
                    "'bece report --top-label' instead of the pooled one")
    cc.add_argument("--chains", type=_count, default=4, help="NUTS chains (default 4)")
    cc.add_argument("--warmup", type=_count, default=1000, help="warm-up draws per chain "
                    "(default 1000)")
    cc.add_argument("--draws", type=_count, default=1000, help="draws per chain (default 1000)")
    cc.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    cc.add_argument("--json", action="store_true", help="print one JSON object")
    _add_input_options(cc)
    _add_regression_options(cc)
