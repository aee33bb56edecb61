"""The ``bece`` command.

``bece report [FILE] [--model binned] [--n-bins 15] [--binning uniform]
[--samples 10000] [--seed 0] [--json] [--no-verdict]`` prints a verdict on
calibration (:mod:`bece._cli.calibration`; not with ``--no-verdict``), then
the Bayesian ECE of the predictions in FILE (CSV, Parquet or NPZ, or a directory of Parquet files;
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

``bece report FILE`` on a file of regression forecasts (a target ``y``
with ``mean``/``std``, quantile columns ``q_<level>`` or sample columns
``s_0 ... s_{S-1}``; :mod:`bece._io.forecast_columns`, which tells the two
kinds of file apart by their columns) prints a verdict
(:func:`bece.regression.pit_calibration_test`), Kuleshov's calibration error
(:func:`bece.regression.bayesian_calibration_error`) and the calibration
curve with its band; ``--plot`` draws the curve
(:func:`bece._plots.regression.plot_calibration_curve`). See
:mod:`bece._cli.regression`.

``bece compare A B [--n-bins 15] [--binning uniform] [--samples 10000]
[--seed 0] [--json] [--plot PATH]`` prints the paired posterior of two
models' ECEs (:func:`bece.compare`) from two prediction files of the same
test set (same ``y_true``, row for row); ``--plot`` writes both reliability
diagrams and the posterior of the difference.

``bece test [FILE] [--level 0.05] [--resamples 1000] [--prior-odds 0.02]
[--json]`` runs the calibration test alone (:mod:`bece._cli.calibration`):
its p-value and Bayes factor, read by one rule into a verdict, and
P(calibrated) at the prior odds (:func:`bece._results.verdict.verdict`), with which ``bece report``
on a classifier's predictions also opens.
``bece recalibrate --method temperature VAL_FILE TEST_FILE [--out FILE]
[--plot PATH] [--json]`` fits a recalibrator on VAL_FILE and prints the
paired posterior of the test file's ECE before and after
(:func:`bece.recalibrate`); see :mod:`bece._cli.recalibrate`.

``bece cross-check [FILE] [--model smooth] [--top-label] [--chains 4]
[--warmup 1000] [--draws 1000] [--seed 0] [--json]`` checks the posterior
``bece report`` prints for FILE: its fast path against NUTS on the same
NumPyro model, under the agreement rule (:func:`bece.cross_check`); see
:mod:`bece._cli.crosscheck`.

``bece --version`` prints ``bece <version>``.

Exit codes: 0 on success; 2 on bad usage or bad input (one line on stderr,
no traceback); 1 when memory runs out (one line: the input was valid, the
machine too small for it, so not a usage error: fewer ``--samples``, fewer
``--n-bins`` or a larger machine); 130 on Ctrl-C (one line, the shell's
code for a command ended by SIGINT); 1 when stdout is closed early
(``bece report | head``, quietly); 3 from ``bece report --by TIME --window
WIDTH --fail-on-drift`` when the drift rule alarms on the last window
(:func:`bece.drift_test`), for scheduled jobs. ``--json`` prints strict JSON: a
number that is not finite (the sd of a single draw) is ``null``.

The package: :mod:`~bece._cli.parser` (arguments), :mod:`~bece._cli.common`
(JSON, figures), :mod:`~bece._cli.report`, :mod:`~bece._cli.regression`,
:mod:`~bece._cli.compare`, :mod:`~bece._cli.calibration` and
:mod:`~bece._cli.crosscheck` (one module per report); :func:`main`
dispatches and turns errors into exit codes.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Sequence
from typing import Any

__all__ = [
    "compare_dict",
    "format_compare",
    "format_report",
    "main",
    "report_dict",
    "to_json",
    "version",
]


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: The names above, from the modules that define them: imported on first use,
#: so that importing this package (the console script's first step) loads
#: nothing that a Ctrl-C could interrupt outside :func:`main`'s handler.
_WHERE = {"compare_dict": ".compare", "format_compare": ".compare", "format_report": ".report",
          "report_dict": ".report", "to_json": ".common", "version": ".parser"}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(_WHERE[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``bece`` command; returns the exit code.

    Everything beyond this package's few lines -- NumPy, the parser, the
    reports -- is imported here, inside the handler of Ctrl-C, so an
    interrupt while they load ends as any other (one line, exit 130)."""
    try:
        from .common import cli_words, warning_line  # noqa: F401  (loaded for _main's handlers)
        from .parser import UsageError, build_parser  # noqa: F401
    except KeyboardInterrupt:
        print("bece: interrupted", file=sys.stderr)
        return 130
    with warnings.catch_warnings():
        shown = warnings.showwarning

        def one_line(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                     file: Any = None, line: str | None = None) -> None:
            # bece's warnings as one line on stderr, in the command's words, instead
            # of Python's two-line 'file:line: Category: ...' form; others as Python shows them
            if not os.path.abspath(filename).startswith(_PACKAGE + os.sep):
                shown(message, category, filename, lineno, file, line)
                return
            print(warning_line(message), file=sys.stderr)

        warnings.showwarning = one_line
        return _main(argv)


#: What to make smaller when a command runs out of memory, by command.
MEMORY_OPTIONS = {
    "report": "fewer --samples or --n-bins (or --no-verdict; --metrics needing all pairs hold "
              "every row)",
    "compare": "fewer --samples or --n-bins",
    "test": "fewer --resamples or --n-bins",
    "recalibrate": "a smaller VAL_FILE for the fit, fewer --samples, or --method temperature",
    "cross-check": "fewer --chains or --draws, or a sample of the file's rows",
}


def _main(argv: Sequence[str] | None) -> int:
    from .common import cli_words  # already loaded by main(), inside its handler
    from .parser import UsageError, build_parser

    args = None
    try:
        from .output import check_outputs

        parser = build_parser()
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help(sys.stderr)
            return 2
        check_outputs(args)  # before any work: no output over an input, none unwritable
        if args.command == "compare":
            from .compare import run_compare

            return run_compare(args)
        if args.command == "test":
            from .calibration import run_test

            return run_test(args)
        if args.command == "cross-check":
            from .crosscheck import run_cross_check

            return run_cross_check(args)
        if args.command == "recalibrate":
            from .recalibrate import run_recalibrate

            return run_recalibrate(args)
        from .report import run_report

        return run_report(args)
    except UsageError as exc:
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
        print(f"bece: error: {cli_words(str(exc))}", file=sys.stderr)
        return 2
    except MemoryError as exc:
        # valid input, too large for this machine: one line, exit 1 (not 2:
        # nothing in the command is wrong as such)
        detail = str(exc).splitlines()[0] if str(exc) else "no detail given"
        command = getattr(args, "command", None)
        smaller = MEMORY_OPTIONS.get(command or "", "a smaller input")
        print(f"bece: error: out of memory ({detail}); try {smaller}, or a machine with more "
              "memory", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        # Ctrl-C: one line instead of the traceback of whatever was running
        print("bece: interrupted", file=sys.stderr)
        return 130
