"""Cost of ``bece report --metrics`` (the one-pass metrics) against the plain
``bece report`` on the same file, as ratios measured in the same run.

Run:  python benchmarks/metrics_cost.py [--ns 131072,524288] [--repeats 3]
      [--markdown docs/tables/metrics_cost.md]

A CSV file of n binary predictions (p ~ U(0, 1), y ~ Bernoulli(p^1.5)) is
written to a temporary folder; each row times, in this process (imports and
JAX compilation warmed by a first untimed call), ``bece report FILE --json
--no-verdict`` with and without ``--metrics`` naming the metrics computed in
one pass over the file's chunks (l2, debiased_l2, l2_sun, brier, log_loss,
citl, spiegelhalter: sums per bin and, for the intervals, the same sums for
each of 200 Poisson-bootstrap replicates), alternately, best of
``--repeats``, for the binned model and the default one. CPU seconds of the
process (``time.process_time``, every thread) are the measure, because the
machine is shared and wall time drifts with its load; wall seconds are
printed beside them. The ratio is with / without.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bece._cli import main as cli  # noqa: E402
from doc_tables import add_markdown_option, write  # noqa: E402

ONE_PASS = "l2,debiased_l2,l2_sun,brier,log_loss,citl,spiegelhalter"


def run(argv: list[str]) -> tuple[float, float]:
    out = io.StringIO()
    c0, w0 = time.process_time(), time.perf_counter()
    with contextlib.redirect_stdout(out):
        code = cli(argv)
    c1, w1 = time.process_time(), time.perf_counter()
    if code != 0:
        raise SystemExit(f"bece {' '.join(argv)} exited {code}")
    return c1 - c0, w1 - w0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ns", default="131072,524288")
    ap.add_argument("--repeats", type=int, default=3)
    add_markdown_option(ap, __file__)
    args = ap.parse_args()
    rows = ["| n | model | plain report CPU s (wall) | with --metrics CPU s (wall) | "
            "ratio (CPU) |", "|---|---|---|---|---|"]
    print(rows[0])
    print(rows[1])
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(v) for v in args.ns.split(",")):
            rng = np.random.default_rng(n)
            p = rng.uniform(size=n)
            y = (rng.uniform(size=n) < p**1.5).astype(np.int64)
            path = Path(tmp) / f"pred_{n}.csv"
            with open(path, "w") as fh:
                fh.write("y_true,y_prob\n")
                np.savetxt(fh, np.column_stack([y, p]), fmt=["%d", "%.17g"], delimiter=",")
            for model in ("binned", "default"):
                base = ["report", str(path), "--json", "--no-verdict"]
                if model == "binned":
                    base += ["--model", "binned"]
                plain_argv, metric_argv = base, [*base, "--metrics", ONE_PASS]
                run(metric_argv)  # warm: imports, compilation, page cache
                plain, with_m = [], []
                for _ in range(args.repeats):
                    plain.append(run(plain_argv))
                    with_m.append(run(metric_argv))
                a, b = min(plain), min(with_m)
                line = (f"| {n:,} | {model} | {a[0]:.2f} ({a[1]:.2f}) | {b[0]:.2f} ({b[1]:.2f}) | "
                        f"{b[0] / a[0]:.2f} |")
                rows.append(line)
                print(line, flush=True)
    load = os.getloadavg()
    note = (f"machine: {os.cpu_count()} cores, load average {load[0]:.1f} at the end; best of "
            f"{args.repeats}, alternating; one-pass metrics: {ONE_PASS} (200 Poisson-bootstrap "
            "replicates).")
    print(note)
    write(args.markdown, note + "\n\n" + "\n".join(rows), __file__)


if __name__ == "__main__":
    main()
