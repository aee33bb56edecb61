"""How close is the time a cross-check announces before NUTS starts?

``bece.cross_check`` (and ``bece cross-check`` on a terminal) prints
"NUTS: 4 chains x 1000 + 1000 draws, about N s" before its chains start
(:func:`bece._validation.nuts.run_nuts`). A run of 500 transitions per
chain or more is timed by a pilot chain (250 transitions); a shorter one
announces a first guess (:func:`bece._validation.nuts.estimate_seconds`: a
timed gradient times 31 leapfrog steps per transition, plus 6 s to
compile), shown here beside the pilot's for comparison. This script runs
each default's cross-check on the data of the agreement study
(benchmarks/crosscheck_agreement.py) and records, per case, the first
guess, the announced time and the actual time from the announcement to the
end of the first NUTS run (a repeat after
divergent transitions is not counted: it announces the first run's time
instead). Goal (the validation issue): the announced time within a factor 2
of the actual one.

Every case appends one JSON line to ``benchmarks/results/nuts_estimate.jsonl``;
``--table`` writes ``docs/tables/nuts_estimate.md`` from the last line of each.

Run:  python benchmarks/nuts_estimate.py [CASE ...]
      python benchmarks/nuts_estimate.py --table
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from crosscheck_agreement import (  # noqa: E402
    binary_data,
    load,
    multiclass_data,
    network,
    regression_pit,
)

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "nuts_estimate.jsonl"
TABLE = HERE.parent / "docs" / "tables" / "nuts_estimate.md"
WRN = "netcal_wideresnet-16-4-cifar-10"


def _cases() -> dict:
    import bece
    from bece.regression import SmoothPITModel

    def binary(n, power=1.5):
        return lambda: bece.cross_check(*binary_data(n, power, 0), progress_bar=None)

    def top(k, temperature=1.5):
        return lambda: bece.cross_check(*multiclass_data(10_000, k, temperature, 0),
                                        top_label=True, progress_bar=None)

    def pit(form, n, cell="shifted"):
        def run():
            u, grouping = regression_pit(form, n, cell, 0)
            return bece.cross_check(u, model=SmoothPITModel(**grouping), progress_bar=None)
        return run

    def real(top_label):
        return lambda: bece.cross_check(*network(WRN), top_label=top_label, progress_bar=None)

    return {
        "binned, n = 1,000": lambda: bece.cross_check(*binary_data(1000, 1.2, 0),
                                                      model="conjugate", progress_bar=None),
        "binary default, n = 1,000": binary(1000),
        "binary default, n = 10^4": binary(10_000),
        "binary default, n = 10^6": binary(1_000_000),
        "top-label default, K = 10": top(10),
        "top-label default, K = 100": top(100),
        "regression, Gaussian, n = 1,000": pit("gaussian", 1000),
        "regression, quantiles, n = 1,000": pit("quantiles", 1000),
        "regression, Gaussian, n = 10^5": pit("gaussian", 100_000),
        "CIFAR-10 WRN, binary": real(False),
        "CIFAR-10 WRN, top-label": real(True),
    }


class _Stamped:
    """stderr that remembers when the announcement was written."""

    def __init__(self, stream):
        self.stream, self.text, self.at = stream, "", None

    def write(self, s):
        if self.at is None and "draws, about" in s:
            self.at = time.perf_counter()
        self.text += s
        return self.stream.write(s)

    def flush(self):
        self.stream.flush()

    def isatty(self):
        return False


def one(name: str, run) -> dict:
    import bece._validation.nuts as nuts

    guesses, ends = [], []
    run_once = nuts._run_nuts

    def timed(model, args, kwargs, num_chains, num_warmup, num_samples, *rest, **k):
        if not guesses:  # what the first guess would say (announced for short runs only)
            guesses.append(nuts.estimate_seconds(model, args, kwargs, num_chains, num_warmup,
                                                 num_samples))
        out = run_once(model, args, kwargs, num_chains, num_warmup, num_samples, *rest, **k)
        ends.append(time.perf_counter())
        return out

    stamped, load_before = _Stamped(sys.stderr), load()
    nuts._run_nuts, sys.stderr = timed, stamped
    try:
        run()
    finally:
        nuts._run_nuts, sys.stderr = run_once, stamped.stream
    announced = float(re.search(r"draws, about (\d+) s", stamped.text).group(1))
    row = {"case": name, "first_guess": guesses[0], "announced": announced,
           "pilot": "pilot chain" in stamped.text, "actual": ends[0] - stamped.at,
           "load": load_before}
    RESULTS.parent.mkdir(exist_ok=True)
    with RESULTS.open("a") as f:
        f.write(json.dumps(row) + "\n")
    print(json.dumps(row), flush=True)
    return row


def table() -> str:
    import datetime
    import platform

    import bece

    rows = {}
    for line in RESULTS.read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            rows[row["case"]] = row
    order = [c for c in _cases() if c in rows]
    out = [f"Produced by `python benchmarks/nuts_estimate.py --table` on "
           f"{datetime.date.today()} (bece {bece.__version__}, Python {platform.python_version()}, "
           f"{os.cpu_count()} cores; the machine's load before each case beside it).",
           "",
           "| case | first guess (s) | announced (s) | timed by | actual (s) | actual / announced "
           "| within 2x | load |",
           "|---|---|---|---|---|---|---|---|"]
    ratios = []
    for c in order:
        r = rows[c]
        ratio = r["actual"] / max(r["announced"], 1.0)
        ratios.append(ratio)
        out.append(f"| {c} | {r['first_guess']:.0f} | {r['announced']:.0f} | "
                   f"{'pilot chain' if r['pilot'] else 'first guess'} | {r['actual']:.0f} | "
                   f"{ratio:.2f} | {'yes' if 0.5 <= ratio <= 2 else 'no'} | {r['load']:.1f} |")
    out += ["", f"{sum(0.5 <= x <= 2 for x in ratios)} of {len(ratios)} cases within a factor 2. "
            "Actual: from the announcement to the end of the first NUTS run (4 chains x 1,000 + "
            "1,000 draws, two chains at a time). An announced time under 1 s is read as 1 s."]
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="*", help="case names (default: all); see _cases()")
    ap.add_argument("--table", action="store_true")
    args = ap.parse_args()
    if args.table:
        text = table()
        tmp = TABLE.with_suffix(".md.tmp")  # a whole table or the old one, never half
        tmp.write_text(text)
        tmp.replace(TABLE)
        print(text)
        return
    cases = _cases()
    for name in args.cases or cases:
        one(name, cases[name])


if __name__ == "__main__":
    main()
