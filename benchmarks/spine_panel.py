"""The same calls before and after a change of structure: every number must stay.

A fixed panel -- the shipped example (``bece report`` as text and JSON, the
posteriors, a comparison, a cross-check), the public CIFAR outputs of the
shared data folder (a study: the top-label posteriors of seven networks) and
the regression example of docs/examples/plot_regression_calibration.py --
runs once in a git worktree of an earlier commit and once here, each in its
own process; then every printed line is compared as text, and every number
of the JSON outputs and of the posteriors' summaries to 1e-9 relative.

    python benchmarks/spine_panel.py --before 072f2e9

writes docs/tables/spine_panel.md: what was compared, and each difference
with its reason (``REASONS`` below; a difference without one fails the run).
Each run uses its own NumPyro models: the installed package maps
``bece.models`` to this checkout's models/, so the earlier tree gets a link
``bece/models -> ../models``, which its ``PYTHONPATH`` finds first.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TABLE = ROOT / "docs" / "tables" / "spine_panel.md"
DATA = ROOT.parent / "shared" / "data"
REL = 1e-9
NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?")

#: differences the change makes on purpose: (case, what differs) -> why
REASONS = {
    ("python:compare", "text"): (
        "str(Comparison) is now the text bece compare prints under its header (verdict, input, "
        "the table, the model and 'validated by simulated coverage': the paired comparison "
        "has no NUTS cross-check); the numbers are those of before"),
    ("cli:report", "text"): (
        "the input is described in the library's words, one wording for Python and the command "
        "line ('confidence = max_k p_k', 'P(y = 1)'), and the reference line names model='binned'; "
        "its numbers identical, in order"),
}
_POSTERIOR_TEXT = ("str() of the posterior is now the text bece report prints under its header "
                   "(the ECE, its interval, the plug-in, the input, bins and the per-bin table); "
                   "the numbers of before are in it")
REASONS[("python:regression example", "text")] = (
    "str() of the PIT test (bece.regression.pit_calibration_test, before calibration_test) is "
    "now its text (the answer, p-value, Bayes factor, P(calibrated), statistic) instead of its "
    "repr; the calibration error line is unchanged")
REASONS.update({(case, "text"): _POSTERIOR_TEXT for case in (
    "python:bayesian_ece", "python:bayesian_ece binned alpha", "python:bayesian_top_label_ece",
    "python:bayesian_top_label_ece binned")})


# ----------------------------------------------------------------- the panel
def _summary(r) -> dict:
    lo, hi = r.interval(0.9)
    out = {"mean": float(r.mean), "std": float(r.std), "lo": float(lo), "hi": float(hi),
           "plugin": float(r.plugin)}
    pc = getattr(r, "prob_calibrated", None)
    if pc is not None:
        out["prob_calibrated"] = float(pc)
    return out


def _cli(*args: str) -> str:
    import importlib.util

    # the command's module: `python -m bece` since the house moved into private packages
    module = "bece" if importlib.util.find_spec("bece.__main__") else "bece.cli"
    out = subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True,
                         env={**os.environ, "COLUMNS": "100"}, check=True)
    return out.stdout


def run_panel() -> dict:
    """Every case's printed text and numbers, in this process's bece."""
    import numpy as np

    import bece
    from bece.io import example_path, read_predictions
    from bece.regression import bayesian_calibration_error, pit

    try:  # the test of the PIT, named for it since the spine
        from bece.regression import pit_calibration_test
    except ImportError:
        from bece.regression import calibration_test as pit_calibration_test

    cases: dict[str, dict] = {}
    cases["cli:report"] = {"text": _cli("report")}
    cases["cli:report --json"] = {"json": json.loads(_cli("report", "--json"))}
    cases["cli:report --model binned --json"] = {"json": json.loads(_cli("report", "--model", "binned",
                                                                         "--json"))}
    pred = read_predictions(example_path())
    y, prob = pred.y_true, pred.y_prob
    r = bece.bayesian_ece(y, prob, seed=0)
    cases["python:bayesian_ece"] = {"text": str(r), "json": _summary(r)}
    b = bece.bayesian_ece(y, prob, model="binned", n_bins=10, alpha=0.1, seed=0)
    cases["python:bayesian_ece binned alpha"] = {"text": str(b), "json": _summary(b)}
    stats = bece.CalibrationStats.from_arrays(y, prob)
    cases["python:posterior_ece"] = {"json": _summary(bece.posterior_ece(stats, seed=1))}
    t = bece.bayesian_top_label_ece(y, prob, seed=0, num_samples=4000)
    cases["python:bayesian_top_label_ece"] = {"text": str(t), "json": _summary(t)}
    tb = bece.bayesian_top_label_ece(y, prob, model="binned", seed=0)
    cases["python:bayesian_top_label_ece binned"] = {"text": str(tb), "json": _summary(tb)}
    sharper = prob ** 2 / (prob ** 2).sum(axis=1, keepdims=True)
    c = bece.compare(y, prob, sharper, seed=0, num_samples=4000)
    cases["python:compare"] = {"text": str(c), "json": {
        "mean": float(c.mean), "prob_a_better": float(c.prob_a_better),
        "lo": float(c.interval(0.9)[0]), "hi": float(c.interval(0.9)[1])}}
    cc = bece.cross_check(y, prob, model="conjugate", n_bins=5, num_chains=2, num_warmup=300,
                          num_samples=500, seed=0, progress_bar=False)
    cases["python:cross_check conjugate"] = {"json": {
        "nuts_mean": float(cc.nuts.mean), "fast_mean": float(cc.closed_form.mean),
        "max_ratio": float(cc.max_ratio), "rhat_max": float(cc.rhat_max)}}
    # the regression example of the documentation
    rng = np.random.default_rng(0)
    mu = rng.normal(size=1000)
    u = pit(mu + rng.normal(size=1000), mean=mu, std=0.8)
    rr = bayesian_calibration_error(u, seed=0)
    cases["python:regression example"] = {
        "text": f"calibration error {rr.mean:.3f}, 90% interval [{rr.interval(0.9)[0]:.3f}, "
                f"{rr.interval(0.9)[1]:.3f}]\n{pit_calibration_test(u, seed=0)}",
        "json": _summary(rr)}
    # the public CIFAR outputs (a study: absent from a clone)
    for path in sorted(DATA.glob("*.npz")):
        d = np.load(path)
        logits = "logits" in d
        x = d["logits"] if logits else d["probs"]
        for model in ("smooth", "binned"):
            tr = bece.bayesian_top_label_ece(d["y"], x, from_logits=logits, model=model, seed=0,
                                             num_samples=2000)
            cases[f"cifar:{path.stem} {model}"] = {"json": _summary(tr)}
    return {"bece": bece.__version__, "cases": cases}


# --------------------------------------------------------------- comparison
def _numbers(obj, prefix=""):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _numbers(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _numbers(v, f"{prefix}[{i}]")
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        yield prefix, float(obj)
    else:
        yield prefix, obj


def compare(before: dict, after: dict) -> list[dict]:
    """One row per case: what was compared and what differs."""
    rows = []
    for case in before["cases"]:
        a, b = before["cases"][case], after["cases"].get(case)
        row = {"case": case, "text": "-", "numbers": 0, "differ": []}
        if b is None:
            row["differ"].append("missing after")
            rows.append(row)
            continue
        if "text" in a:
            same = a["text"] == b.get("text")
            row["text"] = f"{len(a['text'].splitlines())} lines " + ("identical" if same else "differ")
            if not same:
                row["differ"].append("text")
                # the numbers printed, in order: the words may change, the numbers not
                na, nb = NUMBER.findall(a["text"]), NUMBER.findall(b.get("text", ""))
                row["text"] += ("; its numbers identical" if na == nb else
                                f"; numbers {len(na)} before, {len(nb)} after")
        if "json" in a:
            na, nb = dict(_numbers(a["json"])), dict(_numbers(b.get("json", {})))
            row["numbers"] = len(na)
            for key in sorted(set(na) | set(nb)):
                x, y = na.get(key), nb.get(key)
                if isinstance(x, float) and isinstance(y, float):
                    if not (x == y or abs(x - y) <= REL * max(abs(x), abs(y))):
                        row["differ"].append(f"{key}: {x!r} -> {y!r}")
                elif x != y and key not in ("bece_version",):
                    row["differ"].append(f"{key}: {x!r} -> {y!r}")
        rows.append(row)
    return rows


def write_table(rows: list[dict], before: str, after: str) -> bool:
    unexplained = []
    lines = [
        f"Produced by `python benchmarks/spine_panel.py --before {before}` on "
        f"{datetime.date.today():%Y-%m-%d} ({after} against {before}; Python "
        f"{platform.python_version()}). Text compared line by line, numbers to {REL:g} relative.",
        "",
        "| case | printed text | numbers | differences |",
        "|---|---|---|---|",
    ]
    for row in rows:
        notes = []
        for what in row["differ"]:
            key = (row["case"], "text" if what == "text" else what.split(":")[0])
            reason = REASONS.get(key)
            if reason is None:
                unexplained.append(f"{row['case']}: {what}")
                notes.append(f"**{what}** (no reason given)")
            else:
                notes.append(f"{what}: {reason}")
        lines.append(f"| {row['case']} | {row['text']} | {row['numbers']} | "
                     f"{'; '.join(notes) if notes else 'none'} |")
    TABLE.write_text("\n".join(lines) + "\n")
    for u in unexplained:
        print("UNEXPLAINED:", u)
    return not unexplained


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", help="the earlier commit (a git worktree of it is made in /tmp)")
    ap.add_argument("--run", metavar="OUT", help=argparse.SUPPRESS)  # one panel, in this process
    args = ap.parse_args(argv)
    if args.run:
        Path(args.run).write_text(json.dumps(run_panel()))
        return 0
    if not args.before:
        ap.error("--before COMMIT is required")
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "before"
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), args.before], cwd=ROOT,
                       check=True, capture_output=True)
        (tree / "bece" / "models").symlink_to(Path("..") / "models")
        try:
            outs = {}
            for name, where in (("before", tree), ("after", ROOT)):
                out = Path(tmp) / f"{name}.json"
                env = {**os.environ, "PYTHONPATH": str(where)}
                subprocess.run([sys.executable, str(HERE / "spine_panel.py"), "--run", str(out)],
                               cwd=where, env=env, check=True)
                outs[name] = json.loads(out.read_text())
                print(f"{name}: {len(outs[name]['cases'])} cases", flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT,
                           capture_output=True)
    after = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                           text=True).stdout.strip()
    ok = write_table(compare(outs["before"], outs["after"]), args.before, after)
    print(TABLE.read_text())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
