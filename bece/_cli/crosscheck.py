"""``bece cross-check``: the posterior a report prints, checked by NUTS on its NumPyro model.

:func:`bece.cross_check` on a file (the example shipped with bece without
FILE): the fast path of the model ``bece report`` uses on that file against
NUTS on the same model, judged by the agreement rule
(:mod:`bece._validation.agreement`). The result's own text and
:meth:`~bece.CrossCheck.to_dict` are printed, after one line naming the
file and the model.

What is checked, by file:

* a classifier's predictions: the smooth model averaged with exact
  calibration, on (outcome, confidence) pairs read as the report reads them
  (``--model`` picks another: ``binned``, ``conjugate``, ``literal``); with
  ``--top-label``, the hierarchical top-label model of ``bece report
  --top-label`` (class probabilities only);
* regression forecasts: the smooth PIT model of the report's calibration
  error (``--model dirichlet``: the Dirichlet over the PIT histogram), on
  the PIT values the report computes (randomised for quantile and sample
  forecasts, from ``--seed``).

The predictions are read into memory (NUTS needs the model's data, whose
size does not grow with n above 2,000 rows: the fine grid). NUTS prints its
expected time on stderr before it starts (timed by a short pilot chain), and
a progress bar for long runs, when stderr is a terminal. Exit code 0
whatever the rule says (``"agree"`` in the JSON); 2 on bad input.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from typing import Any

from .common import input_options, source_words, to_json

__all__ = ["run_cross_check"]

#: The models of each kind of file (the first is the default).
MODELS = {"classifier": ("smooth", "binned", "conjugate", "literal"),
          "regression": ("smooth", "dirichlet")}


def run_cross_check(args: argparse.Namespace) -> int:
    """``bece cross-check [FILE]``; returns the exit code."""
    from .._io.files import example_path
    from .._posteriors.resolve import resolve_model
    from .parser import version
    from .report import CLASSIFIER_OPTIONS, REGRESSION_OPTIONS, conventions_of, file_kind, refuse

    conventions = conventions_of(args)
    columns, _ = input_options(args)
    path = example_path() if args.file is None else args.file
    kind = "classifier" if args.file is None else file_kind(args, path, conventions, columns)
    words = {"classifier": "a classifier's predictions", "regression": "regression forecasts"}
    where = "the example shipped with bece" if args.file is None else str(path)
    if kind == "classifier":
        refuse(args, REGRESSION_OPTIONS, f"to regression forecasts; {where} holds {words[kind]}")
    else:
        refuse(args, tuple(o for o in CLASSIFIER_OPTIONS if o[1] not in ("model", "n_bins", "binning"))
                + (("--n-bins", "n_bins"), ("--binning", "binning")),
                f"to a classifier's predictions; {where} holds {words[kind]} (--levels sets "
                "the levels)")
    model = MODELS[kind][0] if args.model is None else args.model
    try:  # before any work: the name is read where every model name is
        resolve_model(model, "binary" if kind == "classifier" else "regression")
    except ValueError:
        raise ValueError(f"--model {model} is not a model of {words[kind]}; choose one of "
                         f"{', '.join(MODELS[kind])}") from None
    mcmc = {"num_chains": args.chains, "num_warmup": args.warmup, "num_samples": args.draws,
            "seed": args.seed, "progress_bar": None if sys.stderr.isatty() else False}
    if kind == "regression":
        cc, n, what = _regression(args, path, conventions, model, mcmc)
    else:
        cc, n, what = _classifier(args, path, columns, model, mcmc)
    source = source_words(args, path)
    if args.json:
        print(to_json({"file": str(path), "n": n, "input_kind": what, **cc.to_dict(),
                       "mcmc": {k: mcmc[k] for k in ("num_chains", "num_warmup", "num_samples")},
                       "seed": args.seed, "bece_version": version()}))
    else:
        print(f"bece cross-check: {source}\n  {n:,} {what}; {args.chains} chains x "
              f"{args.warmup} + {args.draws} NUTS draws (seed {args.seed})\n{cc.text()}")
    return 0


def _classifier(args: argparse.Namespace, path: Any, columns: dict[str, Any], model: str,
                mcmc: dict[str, Any]) -> tuple[Any, int, str]:
    from .._io.files import read_predictions
    from .._posteriors import cross_check
    from .._results.text import INPUT_WORDS

    _, options = input_options(args)
    pred = read_predictions(path, **columns)
    top_label = bool(args.top_label)
    if top_label and pred.n_classes is None:
        raise ValueError("--top-label needs class probabilities (p_0 ... p_{K-1}); "
                         f"{path} holds one probability column")
    if top_label:
        options.pop("pos_label")
        what = "predictions, top-label per predicted label (hierarchical model)"
    else:
        what = f"predictions ({INPUT_WORDS[pred.kind]})"
    cc = cross_check(pred.y_true, pred.y_prob, y_pred=pred.y_pred, model=model,
                     top_label=top_label, n_bins=15 if args.n_bins is None else args.n_bins,
                     binning="uniform" if args.binning is None else args.binning,
                     **options, **mcmc)
    return cc, int(pred.y_true.shape[0]), what


def _regression(args: argparse.Namespace, path: Any, conventions: dict[str, str], model: str,
                mcmc: dict[str, Any]) -> tuple[Any, int, str]:
    from .._io.files import read_forecasts
    from .._posteriors import cross_check
    from .._posteriors.regression import SmoothPITModel
    from .._posteriors.resolve import resolve_model
    from .regression import FORMS, forecast_pit, grouping, report_levels

    fc = read_forecasts(path, **conventions)
    levels = report_levels(args, fc)
    u = forecast_pit(fc, args.seed)
    obj = resolve_model(model, "regression",
                        levels=None if levels is None else tuple(float(x) for x in levels))
    if isinstance(obj, SmoothPITModel):  # the randomised PIT's grouping, as the report's
        obj = replace(obj, **grouping(fc))
    cc = cross_check(u, model=obj, **mcmc)
    return cc, int(u.size), f"{FORMS[fc.form]} forecasts (PIT values)"
