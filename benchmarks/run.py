"""The benchmark suite: one command, one table of ratios, the machine described.

Run:  python benchmarks/run.py [--quick] [--skip-crosscheck] [--memory]

Every row is a ratio of bece's time to a baseline measured in the same run on
the same data, because the machine this runs on is shared and its speed
drifts (other jobs, frequency, memory bandwidth). Baseline and bece are run
alternately ``repeat`` times and the best time of each is kept. The rows:

* statistics (``CalibrationStats.from_arrays``: checks, bin index, counts and
  sums) at n = 10^7 and 10^8 against one ``np.sum`` over the same float64
  confidences (target: within 5x);
* ``bayesian_ece(model="binned")`` with 10^4 posterior draws (the binned
  model's closed form; the default smooth model has its own table,
  ``benchmarks/default_speed.py``) against the plug-in ECE a user
  would write with numpy (bin index and three ``np.bincount``), at
  n = 10^5, 10^6, 10^7 (target at 10^7: within 1.2x);
* ``posterior_ece(model="literal")`` (the literal BECE model's exact fast
  path) against the conjugate closed form from the same statistics, n = 10^6;
* ``bayesian_ece(model="binned")`` against a 1,000-resample bootstrap of that plug-in ECE at
  n = 10^6 (what one would otherwise run for an interval);
* a cold ``bece report --model binned`` (fresh process: imports, reading, statistics,
  posterior) on a 10^6-row CSV and Parquet file (target: under 2 s), against
  ``python -c "import numpy"``;
* ``bece.top_label_ece`` at K = 1,000 classes, n = 10^6 (float32 softmax,
  4 GB) against one ``max`` over the same matrix;
* ``bece.cross_check`` cold at n = 10^3 and 10^7 against NumPyro NUTS on a
  31-dimensional Normal (benchmarks/bench_crosscheck.py; about 2 minutes);
* with ``--memory``: peak resident memory of ``bece report`` on a generated
  10^8-row Parquet file in the temporary directory (deleted afterwards;
  about 1.2 GB of disk), target under 1.5 GB.

``--quick`` skips n = 10^8, uses 100 bootstrap resamples (the time is
scaled to 1,000 and marked so), K = 1,000 with n = 10^5, and the
cross-check at n = 10^3 only.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bece  # noqa: E402
from bench_core import numpy_plugin_ece  # noqa: E402

M = 15


def machine() -> str:
    """CPU model, cores, load and the versions that matter."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = [f"Python {platform.python_version()}", f"numpy {np.__version__}"]
    for name in ("numba", "jax", "pyarrow", "dask"):
        try:
            mod = __import__(name)
            versions.append(f"{name} {mod.__version__}")
        except ImportError:
            versions.append(f"{name} absent")
    try:
        load = " (load average {:.1f} {:.1f} {:.1f} at start)".format(*os.getloadavg())
    except OSError:
        load = ""
    return f"{cpu}, {os.cpu_count()} cores{load}; " + ", ".join(versions)


def alternate(base: Callable[[], object], ours: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Best times of baseline and bece, run alternately ``repeat`` times."""
    tb, to = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        base()
        tb.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        ours()
        to.append(time.perf_counter() - t0)
    return min(tb), min(to)


class Table:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, float, float, str, str]] = []

    def add(self, case: str, baseline: str, b: float, o: float, target: str = "",
            met: bool | None = None) -> None:
        verdict = "" if met is None else ("yes" if met else "**no**")
        self.rows.append((case, baseline, b, o, target, verdict))
        print(f"  {case}: {o / b:.2f}x ({o:.4f} s vs {b:.4f} s)", file=sys.stderr, flush=True)

    def markdown(self) -> str:
        out = ["| case | baseline | ratio | baseline s | bece s | target | met |",
               "|---|---|---:|---:|---:|---|---|"]
        for case, baseline, b, o, target, met in self.rows:
            r = o / b
            ratio = f"{r:.2f}" if r >= 0.01 else f"1/{b / o:,.0f}"
            out.append(f"| {case} | {baseline} | {ratio} | {b:.4f} | {o:.4f} | {target} | {met} |")
        return "\n".join(out)


def simulate(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p**1.2).astype(np.int64)
    return y, p


def bench_statistics(table: Table, sizes: list[int], rng: np.random.Generator) -> None:
    for n in sizes:
        y, p = simulate(n, rng)
        bece.CalibrationStats.from_arrays(y[:1000], p[:1000])  # compile / load the loop
        bece.CalibrationStats.from_arrays(y, p)
        repeat = 15 if n <= 10**7 else 5
        # The lambdas run inside alternate(), before the `del` below (ruff's F821 there is a false positive).
        b, o = alternate(lambda: np.sum(p), lambda: bece.CalibrationStats.from_arrays(y, p), repeat)  # noqa: F821
        table.add(f"statistics, n = 10^{round(np.log10(n))}", "one `np.sum(p)`", b, o, "<= 5", o / b <= 5)
        del y, p
        gc.collect()


def bench_posterior(table: Table, sizes: list[int], rng: np.random.Generator) -> None:
    for n in sizes:
        y, p = simulate(n, rng)
        bece.bayesian_ece(y, p, num_samples=10_000, model="binned")
        repeat = 7 if n <= 10**6 else 5
        b, o = alternate(lambda: numpy_plugin_ece(y, p),
                         lambda: bece.bayesian_ece(y, p, num_samples=10_000, model="binned"), repeat)
        target, met = ("<= 1.2", o / b <= 1.2) if n == 10**7 else ("", None)
        table.add(f"bayesian_ece(model='binned'), 10^4 draws, n = 10^{round(np.log10(n))}",
                  "numpy bincount plug-in ECE", b, o, target, met)


def bootstrap_ece(y: np.ndarray, p: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """The bootstrap a user would write: resample rows, plug-in ECE each time."""
    n = p.size
    b = np.minimum((p * M).astype(np.int64), M - 1)
    out = np.empty(resamples)
    for r in range(resamples):
        idx = rng.integers(0, n, n)
        bi = b[idx]
        correct = np.bincount(bi, weights=y[idx], minlength=M)
        total = np.bincount(bi, weights=p[idx], minlength=M)
        out[r] = np.abs(correct - total).sum() / n
    return out


def bench_bootstrap(table: Table, resamples: int, rng: np.random.Generator) -> None:
    n = 10**6
    y, p = simulate(n, rng)
    t0 = time.perf_counter()
    bootstrap_ece(y, p, resamples, np.random.default_rng(1))
    base = (time.perf_counter() - t0) * (1000 / resamples)
    _, ours = alternate(lambda: None, lambda: bece.bayesian_ece(y, p, num_samples=10_000, model="binned"), 5)
    note = "" if resamples == 1000 else f" (timed {resamples}, scaled to 1,000)"
    table.add("bayesian_ece(model='binned') vs bootstrap, n = 10^6",
              f"1,000-resample bootstrap of the plug-in ECE{note}", base, ours)


def write_files(n: int, rng: np.random.Generator, folder: Path) -> list[Path]:
    import pandas as pd

    y, p = simulate(n, rng)
    frame = pd.DataFrame({"y_true": y, "y_prob": p})
    csv, pq = folder / "pred.csv", folder / "pred.parquet"
    frame.to_csv(csv, index=False, float_format="%.17g")
    frame.to_parquet(pq)
    return [csv, pq]


def bench_cold_report(table: Table, rng: np.random.Generator) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        files = write_files(10**6, rng, Path(tmp))
        numpy_only = [sys.executable, "-c", "import numpy"]
        for path in files:
            cmd = [sys.executable, "-m", "bece", "report", str(path), "--json", "--model", "binned"]
            subprocess.run(cmd, check=True, capture_output=True)  # numba/pyc caches warm, as for a user
            b, o = alternate(lambda: subprocess.run(numpy_only, check=True),
                             lambda: subprocess.run(cmd, check=True, capture_output=True), 3)
            table.add(f"cold `bece report --model binned` {path.suffix[1:]}, n = 10^6",
                      "`python -c 'import numpy'`", b, o, "< 2 s", o < 2.0)


def bench_literal(table: Table, n: int, rng: np.random.Generator) -> None:
    """The literal model's exact fast path against the conjugate closed form,
    both from the same statistics (confidences piled at 0 and 1)."""
    p = rng.beta(0.3, 0.3, size=n)
    y = (rng.uniform(size=n) < p**1.5).astype(np.int64)
    stats = bece.CalibrationStats.from_arrays(y, p)
    bece.posterior_ece(stats, model="literal")
    b, o = alternate(lambda: bece.posterior_ece(stats, model="conjugate"),
                     lambda: bece.posterior_ece(stats, model="literal"), 9)
    table.add(f"posterior_ece(model='literal'), 10^4 draws, n = 10^{round(np.log10(n))}",
              "the conjugate closed form, same statistics", b, o, "<= 3", o / b <= 3)


def bench_top_label(table: Table, n: int, rng: np.random.Generator) -> None:
    k = 1000
    prob = rng.standard_normal((n, k), dtype=np.float32)
    np.exp(prob, out=prob)
    prob /= prob.sum(axis=1, keepdims=True)
    y = rng.integers(0, k, n)
    bece.top_label_ece(y[:1000], prob[:1000])
    # The lambdas run inside alternate(), before the `del` below (ruff's F821 there is a false positive).
    b, o = alternate(lambda: prob.max(axis=1), lambda: bece.top_label_ece(y, prob), 3)  # noqa: F821
    table.add(f"top_label_ece, K = 1,000, n = 10^{round(np.log10(n))}", "one `prob.max(axis=1)` (float32)",
              b, o)
    del prob
    gc.collect()


def bench_crosscheck(table: Table, sizes: list[int]) -> None:
    from bench_crosscheck import BASELINE, CROSS, run

    base = run(BASELINE)
    for n in sizes:
        t = run(CROSS.format(n=n))
        table.add(f"cross_check (cold), n = 10^{round(np.log10(n))}",
                  "NumPyro NUTS, 31-dim Normal, same settings (cold)", base, t, "< 15 s", t < 15)


def bench_memory(rng: np.random.Generator) -> str:
    """Peak RSS of `bece report` on a 10^8-row Parquet file (written in pieces)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n, piece = 10**8, 10**7
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.parquet"
        schema = pa.schema([("y_true", pa.int64()), ("y_prob", pa.float64())])
        with pq.ParquetWriter(path, schema) as writer:
            for _ in range(n // piece):
                y, p = simulate(piece, rng)
                writer.write_table(pa.table({"y_true": y, "y_prob": p}, schema=schema))
        size = path.stat().st_size
        cmd = [sys.executable, "-m", "bece", "report", str(path), "--json"]
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        seconds = time.perf_counter() - t0
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # KiB on Linux
        if peak <= before * 1024:
            print("  (peak RSS not attributable: an earlier child used more)", file=sys.stderr)
        return (f"| peak RSS of `bece report` on 10^8 rows (Parquet, {size / 2**30:.2f} GiB) | "
                f"{peak / 2**30:.2f} GiB ({seconds:.0f} s) | < 1.5 GB | "
                f"{'yes' if peak < 1.5e9 else '**no**'} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes; about 1 minute")
    parser.add_argument("--skip-crosscheck", action="store_true", help="skip the 2-minute cross_check rows")
    parser.add_argument("--memory", action="store_true", help="peak memory on a 10^8-row file")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    desc = machine()
    table = Table()
    t0 = time.perf_counter()
    memory = bench_memory(rng) if args.memory else None  # first: no earlier child sets the peak
    bench_statistics(table, [10**7] if args.quick else [10**7, 10**8], rng)
    bench_posterior(table, [10**5, 10**6, 10**7], rng)
    bench_literal(table, 10**6, rng)
    bench_bootstrap(table, 100 if args.quick else 1000, rng)
    bench_cold_report(table, rng)
    bench_top_label(table, 10**5 if args.quick else 10**6, rng)
    if not args.skip_crosscheck:
        bench_crosscheck(table, [10**3] if args.quick else [10**3, 10**7])
    print(f"machine: {desc}")
    print(f"engine: {bece._stats.fused.available_engine()}; suite took {time.perf_counter() - t0:.0f} s")
    print()
    print(table.markdown())
    print()
    print("ratio = bece time / baseline time, both measured alternately in this run "
          "(best of several); the machine is shared, so ratios vary between runs.")
    if memory:
        print()
        print("| measurement | value | target | met |")
        print("|---|---|---|---|")
        print(memory)


if __name__ == "__main__":
    from doc_tables import run_main  # --markdown PATH: the tables for docs/tables/

    run_main(main, __file__)
