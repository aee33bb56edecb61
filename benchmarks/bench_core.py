"""Benchmark of the core path: bayesian_ece against a numpy plug-in ECE.

Run:  python benchmarks/bench_core.py [--quick]

(The full suite, with these rows and more, is ``python benchmarks/run.py``.)

Every row is a ratio to a baseline measured in the same run on the same data
(the machine is shared and noisy): the baseline is the plug-in ECE a user
would write with numpy (bin index, then three ``np.bincount``). Times are the
best of several repeats. The cold ``bece report`` row runs the installed
command in a fresh process on a 10^6-row CSV and Parquet file and also gives
the time a bare ``python -c "import numpy"`` takes on the same machine.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import bece

M = 15


def numpy_plugin_ece(y: np.ndarray, p: np.ndarray, m: int = M) -> float:
    b = np.minimum((p * m).astype(np.int64), m - 1)
    correct = np.bincount(b, weights=y, minlength=m)
    total = np.bincount(b, weights=p, minlength=m)
    np.bincount(b, minlength=m)  # counts, as a user computing acc/conf would
    return float(np.abs(correct - total).sum() / p.size)


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, numpy {np.__version__}"


def cold_report(path: Path, repeat: int) -> float:
    exe = [sys.executable, "-m", "bece", "report", str(path), "--json", "--model", "binned"]
    return best_of(lambda: subprocess.run(exe, check=True, capture_output=True), repeat)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="n up to 10^6 only")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    sizes = [10**5, 10**6] if args.quick else [10**5, 10**6, 10**7]
    rows = []
    for n in sizes:
        p = rng.uniform(size=n)
        y = (rng.uniform(size=n) < p**1.2).astype(np.int64)
        repeat = 7 if n <= 10**6 else 3
        base = best_of(lambda: numpy_plugin_ece(y, p), repeat)
        ours = best_of(lambda: bece.bayesian_ece(y, p, num_samples=10_000, model="binned"), repeat)
        rows.append((f"bayesian_ece(model='binned'), 10^4 draws, n = 10^{int(np.log10(n))}",
                     ours / base, base, ours,
                     "<= 1.2 at 10^7"))
    with tempfile.TemporaryDirectory() as tmp:
        n = 10**6
        p = rng.uniform(size=n)
        y = (rng.uniform(size=n) < p).astype(np.int64)
        csv = Path(tmp) / "pred.csv"
        csv.write_text("y_true,y_prob\n" + "\n".join(f"{a},{b:.17g}" for a, b in zip(y.tolist(), p.tolist())))
        import pandas as pd

        pq = Path(tmp) / "pred.parquet"
        pd.DataFrame({"y_true": y, "y_prob": p}).to_parquet(pq)
        base = best_of(lambda: subprocess.run([sys.executable, "-c", "import numpy"], check=True), 3)
        for path in (csv, pq):
            t = cold_report(path, 3)
            rows.append((f"cold `bece report --model binned` {path.suffix[1:]}, n = 10^6",
                         t / base, base, t, "< 2 s"))
    print(f"machine: {machine()}")
    print()
    print("| case | ratio | baseline s | bece s | target |")
    print("|---|---:|---:|---:|---|")
    for name, ratio, b, o, target in rows:
        print(f"| {name} | {ratio:.2f} | {b:.4f} | {o:.4f} | {target} |")
    print()
    print("baseline: numpy bincount plug-in ECE on the same arrays (cold report rows: "
          "`python -c 'import numpy'`)")


if __name__ == "__main__":
    main()
