"""Statistics of a folder of Parquet files by each engine: bece's streaming
reader, DuckDB and Spark, in one run.

Run:  python benchmarks/engines.py [--rows 100000000] [--files 20]
      [--engines streaming,duckdb,spark] [--python PATH] [--data DIR]
      [--markdown docs/tables/engines.md]

A folder of ``--files`` Parquet files holding ``--rows`` binary predictions
(``y_true`` int8, ``y_prob`` float64 uniform on [0, 1]) is written once (or
``--data DIR`` reuses one). Each engine then computes the statistics of the
folder in 15 uniform bins in a fresh child process:

* ``streaming``: ``bece.io.read_statistics(folder)``, pyarrow batches of
  2^20 rows through the fused statistics pass;
* ``duckdb``: ``bece.io.sql_statistics(duckdb.connect(), "read_parquet(...)")``,
  the aggregation query run by DuckDB on 2 threads;
* ``spark``: ``bece.io.spark_statistics(spark.read.parquet(folder))`` on
  ``local[2]`` (the session's start-up is timed apart).

Printed per engine: wall seconds (best of ``--repeats`` inside the child),
rows per second, the peak resident memory of the child and everything it
started (the JVM for Spark), polled every 50 ms, and whether its statistics
equal the streaming reader's to the last bit (they must: the sums are
exact). ``--python`` is the interpreter for DuckDB and Spark (one that has
them, e.g. CI's extras environment); the streaming reader runs under this one.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from doc_tables import add_markdown_option, write  # noqa: E402

ENGINES = ("streaming", "duckdb", "spark")


def make_data(folder: Path, rows: int, files: int) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    for i, part in enumerate(np.array_split(np.arange(rows, dtype=np.int64), files)):
        p = rng.uniform(size=part.size)
        y = (rng.uniform(size=part.size) < p ** 1.2).astype(np.int8)
        pq.write_table(pa.table({"y_true": y, "y_prob": p}), folder / f"part-{i:05d}.parquet",
                       row_group_size=1 << 20)


def child(engine: str, folder: str, repeats: int) -> None:
    """Compute the statistics ``repeats`` times; print one JSON line."""
    extra: dict[str, float] = {}
    if engine == "streaming":
        from bece.io import read_statistics

        def run():
            return read_statistics(folder, n_bins=15)
    elif engine == "duckdb":
        import duckdb

        from bece.io import sql_statistics

        db = duckdb.connect()
        db.execute("SET threads TO 2")

        def run():
            return sql_statistics(db, f"read_parquet('{folder}/*.parquet')", n_bins=15)
    else:
        from pyspark.sql import SparkSession

        from bece.io import spark_statistics

        t = time.perf_counter()
        spark = (SparkSession.builder.master("local[2]").appName("bece-engines")
                 .config("spark.ui.enabled", "false").getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
        extra["startup_s"] = time.perf_counter() - t

        def run():
            return spark_statistics(spark.read.parquet(folder), n_bins=15)
    best, stats = float("inf"), None
    for _ in range(repeats):
        t = time.perf_counter()
        out = run()
        best = min(best, time.perf_counter() - t)
        stats = getattr(out, "stats", out)
    print(json.dumps({"seconds": best, "n": stats.n, "exact": stats._exact.tolist(),
                      "counts": stats.counts.tolist(), **extra}))


def peak_of(cmd: list[str]) -> tuple[dict, float]:
    """Run ``cmd``; its JSON output and the peak resident memory (MiB) of its
    process tree, polled every 50 ms."""
    import psutil

    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    root = psutil.Process(proc.pid)
    peak = 0
    while proc.poll() is None:
        try:
            tree = [root, *root.children(recursive=True)]
            peak = max(peak, sum(p.memory_info().rss for p in tree if p.is_running()))
        except psutil.Error:
            pass
        time.sleep(0.05)
    out = proc.stdout.read() if proc.stdout else ""
    if proc.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode})")
    return json.loads(out.strip().splitlines()[-1]), peak / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10**8)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--python", default=sys.executable,
                        help="interpreter with duckdb and pyspark (default: this one)")
    parser.add_argument("--data", default="", help="a folder written by an earlier run")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--child", choices=ENGINES, help=argparse.SUPPRESS)
    add_markdown_option(parser, __file__)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.data, args.repeats)
        return
    engines = [e for e in args.engines.split(",") if e]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.data) if args.data else Path(tmp) / "logs"
        if not args.data:
            t = time.perf_counter()
            make_data(folder, args.rows, args.files)
            print(f"wrote {args.rows:,} rows in {args.files} files in "
                  f"{time.perf_counter() - t:.0f} s", file=sys.stderr)
        size = sum(f.stat().st_size for f in folder.glob("*.parquet")) / 2**20
        rows, ref = [], None
        for engine in engines:
            python = sys.executable if engine == "streaming" else args.python
            cmd = [python, __file__, "--child", engine, "--data", str(folder),
                   "--repeats", str(args.repeats), "--markdown", ""]
            out, peak = peak_of(cmd)
            ref = ref or (out["counts"], out["exact"])
            same = (out["counts"], out["exact"]) == ref
            start = f" (+{out['startup_s']:.0f} s start-up)" if "startup_s" in out else ""
            rows.append(f"| {engine} | {out['n']:,} | {out['seconds']:.1f}{start} | "
                        f"{out['n'] / out['seconds'] / 1e6:.1f} | {peak:,.0f} | "
                        f"{'yes' if same else 'NO'} |")
            print(rows[-1], file=sys.stderr)
    load = os.getloadavg()[0]
    body = "\n".join([
        f"machine: {os.cpu_count()} cores, load average {load:.1f} at the end; a folder of "
        f"{args.files} Parquet files, {size:,.0f} MiB; best of {args.repeats}; 15 uniform bins.",
        "",
        "| engine | rows | seconds | million rows / s | peak memory (MiB) | same statistics |",
        "|---|---|---|---|---|---|",
        *rows,
    ])
    print(body)
    write(args.markdown, body, __file__)


if __name__ == "__main__":
    main()
