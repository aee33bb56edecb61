"""Start-up: ``import bece`` and a cold ``bece report``, as ratios to a baseline of the same run.

Run:  python benchmarks/startup.py [--repeats 9] [--markdown docs/tables/startup.md]

Each row times two commands in fresh processes, alternately (the machine is
shared and its speed drifts), and reports the median of each and their ratio:

* ``import bece`` against ``import numpy, scipy.special``: bece's own
  start-up on top of the numerical libraries it always needs (goal: within
  1.5x);
* ``import bece; bece.bayesian_ece`` against the same baseline: the first
  use of the main entry point, which imports what it needs;
* a cold ``bece report FILE --model binned`` (and with ``--no-verdict``) on a
  10^6-row Parquet file against a fresh process that reads the same file
  with pyarrow and computes the plug-in ECE of 15 uniform bins in numpy
  (goal: within 1.5x, both; the verdict's calibration test is a smooth-model
  fit, work the baseline does not do).

bece's bytecode is compiled first, as an installed copy has it. The table
goes to ``--markdown`` (default ``docs/tables/startup.md``), its
first line the command that produced it and the date.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
TABLE = HERE.parent / "docs" / "tables" / "startup.md"

BASELINE_IMPORT = "import numpy, scipy.special"
PLUGIN = (
    "import sys, numpy as np, pyarrow.parquet as pq; t = pq.read_table(sys.argv[1]); "
    "y = t['y_true'].to_numpy(); p = t['y_prob'].to_numpy(); "
    "b = np.minimum((p * 15).astype(np.int64), 14); "
    "print(np.abs(np.bincount(b, y - p, 15)).sum() / p.size)"
)


def _seconds(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def timed_pair(a: list[str], b: list[str], repeats: int) -> tuple[float, float]:
    """Medians of ``a`` and ``b``, run alternately ``repeats`` times each
    after one warm-up run of each (the files in the OS cache)."""
    _seconds(a), _seconds(b)
    ta, tb = [], []
    for _ in range(repeats):
        ta.append(_seconds(a))
        tb.append(_seconds(b))
    return statistics.median(ta), statistics.median(tb)


def compile_bytecode() -> None:
    """Write bece's bytecode, as ``pip install`` does for an installed package.

    A checkout run with ``PYTHONDONTWRITEBYTECODE`` set (or an editable
    install in a read-only folder) would otherwise compile every module of
    bece in every timed process, which no installed copy does, while numpy,
    scipy and pyarrow come with theirs."""
    import compileall

    import bece

    compileall.compile_dir(Path(bece.__file__).parent, quiet=1)


def write_parquet(path: Path, n: int = 1_000_000) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p ** 1.2).astype(np.int64)
    pq.write_table(pa.table({"y_true": y, "y_prob": p}), path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--markdown", type=Path, default=TABLE)
    args = ap.parse_args()
    py = sys.executable
    compile_bytecode()
    load = os.getloadavg()[0]
    bece_cli = [py, "-m", "bece"]
    rows = []
    base = [py, "-c", BASELINE_IMPORT]
    for label, code in (("import bece", "import bece"),
                        ("import bece; bece.bayesian_ece", "import bece; bece.bayesian_ece")):
        t_bece, t_base = timed_pair([py, "-c", code], base, args.repeats)
        rows.append((label, f"`{BASELINE_IMPORT}`", t_bece, t_base, 1.5 if code == "import bece" else None))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "preds.parquet"
        write_parquet(path)
        plugin = [py, "-c", PLUGIN, str(path)]
        for label, extra, goal in (("bece report --model binned --no-verdict", ["--no-verdict"], 1.5),
                                   ("bece report --model binned", [], 1.5)):
            t_bece, t_base = timed_pair([*bece_cli, "report", str(path), "--model", "binned", *extra],
                                        plugin, args.repeats)
            rows.append((f"{label} (10^6 rows)", "pyarrow read + numpy plug-in", t_bece, t_base, goal))
    cmd = "python benchmarks/startup.py" + ("" if args.repeats == 9 else f" --repeats {args.repeats}")
    lines = [
        f"Produced by `{cmd}` on {datetime.date.today().isoformat()} (Python "
        f"{sys.version.split()[0]}, {platform.machine()}, {os.cpu_count()} cores, load average "
        f"{load:.1f} at the start; medians of {args.repeats} fresh processes each, run "
        "alternately with the baseline).",
        "",
        "| command | baseline | bece (s) | baseline (s) | ratio | goal |",
        "|---|---|---|---|---|---|",
    ]
    for label, baseline, t_bece, t_base, goal in rows:
        ratio = t_bece / t_base
        verdict = "-" if goal is None else f"<= {goal}x: {'met' if ratio <= goal else 'not met'}"
        lines.append(f"| `{label}` | {baseline} | {t_bece:.3f} | {t_base:.3f} | {ratio:.2f}x | {verdict} |")
    text = "\n".join(lines) + "\n"
    print(text)
    from bece._base.files import atomic_output

    with atomic_output(args.markdown) as tmp:  # renamed when whole: never half a table
        tmp.write_text(text)
    print(f"wrote {args.markdown}  ({shlex.join(sys.argv)})")


if __name__ == "__main__":
    main()
