"""What the ``bece`` subcommands share: strict JSON, figures and their paths."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from .._results.report_text import edge_texts
from .._results.text import BINARY_NOTE, INPUT_WORDS

__all__ = [
    "BINARY_NOTE",
    "KINDS",
    "PROB",
    "classes_line",
    "cli_words",
    "edge_texts",
    "figure",
    "input_options",
    "num",
    "run_info",
    "save",
    "to_json",
]

#: Mass of every credible interval the command prints.
PROB = 0.9

#: How each kind of classifier predictions is read (:attr:`bece.io.Predictions.kind`):
#: the results' words (:mod:`bece._results.text`).
KINDS = INPUT_WORDS


def input_options(args: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The column options and the reading options of the command line, as
    keyword arguments of :func:`bece.io.read_statistics`."""
    columns: dict[str, Any] = {"y_true_col": getattr(args, "y_true_col", None) or "y_true",
               "y_prob_col": getattr(args, "y_prob_col", None),
               "prob_prefix": getattr(args, "prob_prefix", None) or "p_",
               "y_pred_col": getattr(args, "y_pred_col", None)}
    options: dict[str, Any] = {"labels": getattr(args, "labels", None),
               "pos_label": getattr(args, "pos_label", None),
               "from_logits": bool(getattr(args, "logits", None)),
               "row_sum_tol": getattr(args, "row_sum_tol", None)}
    return columns, options


def classes_line(labels: Any, prefix: str = "p_", given: bool = False, shown: int = 6) -> str:
    """Which class each probability column holds, for the report's header:
    ``p_0 = cat, p_1 = dog`` (the first ``shown`` of them) and why."""
    items = [f"{prefix}{k} = {v}" for k, v in enumerate(list(labels)[:shown])]
    more = f", ... ({len(labels)} classes)" if len(labels) > shown else ""
    why = ("--labels" if given else
           "text labels in sorted order, as scikit-learn's classes_; --labels sets them")
    return f"{', '.join(items)}{more} ({why})"


def run_info(result: Any, seed: int | None) -> dict[str, Any]:
    """What the JSON says about how it was made: the model, how the
    predictions were read, the random seed and bece's version."""
    from .parser import version

    return {"model": result.model, "input_kind": result.stats.kind, "seed": seed,
            "bece_version": version()}


#: Library words in error messages and their command-line options.
_CLI_WORDS = (("pass from_logits=True", "pass --logits"), ("from_logits=True", "--logits"),
              ("row_sum_tol=", "--row-sum-tol "), ("pos_label=", "--pos-label"),
              ("labels=clf.classes_", "--labels L0,L1,..."),
              ("labels=", "--labels"), ("y_prob[:, 1]", "--y-prob-col p_1"),
              ("(num_chains x num_samples)", "(--chains x --draws)"),
              ("Pass input='logits' to choose the log-odds yourself.",
               "Pass log-odds with --logits to choose them yourself."))


def cli_words(message: str) -> str:
    """An error message of the library with its options named as the
    command line's (``from_logits=True`` is ``--logits``, ...)."""
    for lib, cli in _CLI_WORDS:
        message = message.replace(lib, cli)
    return message


def warning_line(message: Warning | str) -> str:
    """A warning of the library as the command prints it: one line on
    stderr, ``bece: warning: ...``, in the command's words."""
    return f"bece: warning: {cli_words(' '.join(str(message).split()))}"


def num(x: float) -> float | None:
    """``x`` as a float, None for NaN."""
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


# --------------------------------------------------------------- figures
def figure(size: tuple[float, float]) -> Any:
    """A matplotlib Figure without pyplot: no GUI backend, nothing global touched."""
    from matplotlib.figure import Figure

    return Figure(figsize=size)


def save(fig: Any, path: str, quiet: bool) -> None:
    """Write ``fig`` to ``path`` (whole or not at all: :func:`~bece._cli.output.atomic_output`);
    say so unless ``quiet`` (``--json``)."""
    from .output import atomic_output

    with atomic_output(path) as tmp:
        fig.savefig(tmp, dpi=150, bbox_inches="tight")
    if not quiet:
        print(f"\n  figure written to {path}")


def source_words(args: Any, path: Any) -> str:
    """How the header names the input: FILE as given, or the shipped example
    and what it holds (no FILE)."""
    from pathlib import Path

    from .._io.files import EXAMPLE_WORDS

    return str(path) if args.file is not None else f"{Path(path).name} ({EXAMPLE_WORDS})"


def write_outputs(args: Any, fig: Any, title: str, text: str, data: dict[str, Any],
                  result: Any) -> None:
    """After the text: ``--plot`` (``fig``) and ``--html`` (:func:`write_html`), where given."""
    if args.plot is not None:
        save(fig, args.plot, args.json)
    if args.html is not None:
        write_html(args, title, text, data, result, fig)


def write_html(args: Any, title: str, text: str, data: dict[str, Any], result: Any,
               fig: Any = None) -> None:
    """``--html PATH``: one self-contained page (:func:`bece.plots.html_report`'s
    parts) with the command's ``text``, every number of its ``--json`` object
    ``data``, the result's histogram and ``fig``, and the versions and seed; written
    whole or not at all. Says so unless ``--json``."""
    from .._base.files import atomic_output
    from .._results.html import html_page, result_html

    diagram = getattr(result, "_html_diagram", lambda: None)()
    block = result_html(title.split(":")[0], text, _finite(data), diagram)
    page = html_page(title, block, fig=fig, about={"seed": str(args.seed)})
    with atomic_output(args.html) as tmp:
        tmp.write_text(page, encoding="utf-8")
    if not args.json:
        print(f"\n  HTML report written to {args.html}")
