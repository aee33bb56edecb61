"""Speed of the default (smooth) model against the binned model, as ratios.

Run:  python benchmarks/default_speed.py [--quick]

The default model of ``bayesian_ece``, ``bayesian_top_label_ece`` and
``bece report`` is the smooth calibration-curve model averaged with exact
calibration; the binned BECE model is one keyword away. Each row times the
default against the binned model on the same data in the same run
(alternately, best of several), because the machine is shared and its speed
drifts:

* a cold ``bece report`` (fresh process: imports, reading, statistics,
  posterior) on a 10^6-row Parquet file, default against ``--model binned``
  (target: within 3x);
* ``bayesian_ece`` at n = 10^6 with 10^4 draws, default against
  ``model="binned"`` (target: within 30x);
* ``bayesian_top_label_ece`` at K = 1,000, n = 10^6 (float32 softmax rows),
  the default with its full default draws against the binned top-label
  posterior with 1,333 draws (its default at K = 1,000) (target: within 2x).

``--quick``: n = 10^5 for the top-label row (K = 1,000), fewer repeats.
``--markdown PATH`` (default ``docs/tables/default_speed.md``): where the
table goes, its first line the command that produced it and the date.
"""

from __future__ import annotations

import argparse
import datetime
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bece  # noqa: E402
from run import Table, alternate, machine, simulate  # noqa: E402


def bench_cold_report(table: Table, rng: np.random.Generator, repeat: int) -> None:
    import pandas as pd

    y, p = simulate(10**6, rng)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "pred.parquet"
        pd.DataFrame({"y_true": y, "y_prob": p}).to_parquet(path)
        cmd = [sys.executable, "-m", "bece", "report", str(path), "--json"]
        for extra in ([], ["--model", "binned"]):  # pyc caches warm, as for a user
            subprocess.run(cmd + extra, check=True, capture_output=True)
        b, o = alternate(lambda: subprocess.run(cmd + ["--model", "binned"], check=True, capture_output=True),
                         lambda: subprocess.run(cmd, check=True, capture_output=True), repeat)
        table.add("cold `bece report` (default model), Parquet, n = 10^6",
                  "cold `bece report --model binned`, same file", b, o, "<= 3", o / b <= 3)


def bench_posterior(table: Table, rng: np.random.Generator, repeat: int) -> None:
    y, p = simulate(10**6, rng)
    bece.bayesian_ece(y, p)  # imports, caches
    b, o = alternate(lambda: bece.bayesian_ece(y, p, model="binned"), lambda: bece.bayesian_ece(y, p), repeat)
    table.add("bayesian_ece (default model), 10^4 draws, n = 10^6",
              "bayesian_ece(model='binned'), same data", b, o, "<= 30", o / b <= 30)


def bench_top_label(table: Table, n: int, rng: np.random.Generator, repeat: int) -> None:
    k = 1000
    prob = rng.standard_normal((n, k), dtype=np.float32)
    prob *= 3.0
    np.exp(prob, out=prob)
    prob /= prob.sum(axis=1, keepdims=True)
    # outcomes drawn from a tempered version of the predictions: miscalibrated
    conf = prob.max(axis=1).astype(np.float64)
    pred = prob.argmax(axis=1)
    correct = rng.uniform(size=n) < conf**1.3
    y = np.where(correct, pred, (pred + 1 + rng.integers(0, k - 1, n)) % k)
    bece.bayesian_top_label_ece(y[:20_000], prob[:20_000])
    b, o = alternate(lambda: bece.bayesian_top_label_ece(y, prob, model="binned", num_samples=1333),
                     lambda: bece.bayesian_top_label_ece(y, prob), repeat)
    r = bece.bayesian_top_label_ece(y, prob)
    table.add(f"bayesian_top_label_ece (default model, {r.num_samples:,} draws), K = 1,000, "
              f"n = 10^{round(np.log10(n))}",
              "binned top-label posterior, 1,333 draws, same data", b, o, "<= 2", o / b <= 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 10^5 for the top-label row, fewer repeats")
    tables = Path(__file__).resolve().parent.parent / "docs" / "tables"
    parser.add_argument("--markdown", type=Path, default=tables / "default_speed.md",
                        help="write the table here (default: docs/tables/default_speed.md)")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    repeat = 2 if args.quick else 3
    table = Table()
    t0 = time.perf_counter()
    bench_cold_report(table, rng, repeat)
    bench_posterior(table, rng, repeat + 2)
    bench_top_label(table, 10**5 if args.quick else 10**6, rng, repeat)
    print(f"machine: {machine()}")
    print(f"took {time.perf_counter() - t0:.0f} s")
    print()
    print(table.markdown())
    print()
    note = ("ratio = default-model time / binned-model time, both measured alternately in this run "
            "(best of several); the machine is shared, so ratios vary between runs.")
    print(note)
    command = " ".join(["python", "benchmarks/default_speed.py", *map(shlex.quote, sys.argv[1:])])
    args.markdown.parent.mkdir(parents=True, exist_ok=True)
    args.markdown.write_text(
        f"Produced by `{command}` on {datetime.date.today().isoformat()}; machine: {machine()}.\n\n"
        f"{table.markdown()}\n\n{note}\n")


if __name__ == "__main__":
    from doc_tables import run_main  # --markdown PATH: the tables for docs/tables/

    run_main(main, __file__)
