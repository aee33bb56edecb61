"""Calibration by group: coverage of each group's 90% interval, pooled and alone.

Three scenarios of binary predictions (P(y = 1) drawn from Beta(2, 2) in
every group; group g's true curve logit P(y = 1 | p) = s_g logit p + a_g):

- ``identical``: 5 groups of 1,000, all with s = 0.7 (over-predicting the
  extremes);
- ``small-outlier``: 4 calibrated groups of 3,000 and one group of 100
  with s = 2.5 (strongly under-predicting the extremes), where pooling can
  hide the small group;
- ``heterogeneous``: 5 groups of 300, 1,000, 3,000, 1,000 and 300 with
  (s, a) = (0.6, 0.3), (0.85, 0), (1, 0), (1.2, -0.2), (1.5, 0.4).

Each replication draws the predictions and outcomes, builds the groups'
statistics and calls ``SmoothGroupModel().posterior`` (partial pooling, the
default), which also holds each group's own posterior (``pooling="none"``).
The truth is each group's population binned ECE (15 uniform bins) by
quadrature on a grid of 200,000 points. Printed per (scenario, group):
n, true ECE, coverage of the pooled and of the own 90% interval, the
validation rule (c + 2 sqrt(c (1 - c) / R) >= 0.85) for the pooled one, their
mean widths (the pooling's gain), how often the warning "pooling may hide"
names the group, and how often the pooled interval covers or the warning
appears.

Usage: python benchmarks/groups_study.py [--reps 200] [--scenarios a,b] [--out FILE.jsonl]
       python benchmarks/groups_study.py --table [--out FILE.jsonl]

Results are appended to ``--out`` (default benchmarks/results/groups_study.jsonl),
one line per replication, and a run resumes where it stopped; ``--table``
writes docs/tables/groups_study.md from them.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from scipy import special, stats

from bece import SmoothGroupModel

try:
    from doc_tables import meets_coverage_rule
except ImportError:  # imported as benchmarks.groups_study
    from benchmarks.doc_tables import meets_coverage_rule

ROOT = Path(__file__).resolve().parent
OUT = ROOT / "results" / "groups_study.jsonl"
TABLE = ROOT.parent / "docs" / "tables" / "groups_study.md"
N_BINS = 15
NUM_SAMPLES = 2000
PROB = 0.9

#: scenario -> list of (group, n, slope, shift)
SCENARIOS = {
    "identical": [(f"g{j}", 1000, 0.7, 0.0) for j in range(5)],
    "small-outlier": [(f"g{j}", 3000, 1.0, 0.0) for j in range(4)] + [("small", 100, 2.5, 0.0)],
    "heterogeneous": [("a", 300, 0.6, 0.3), ("b", 1000, 0.85, 0.0), ("c", 3000, 1.0, 0.0),
                      ("d", 1000, 1.2, -0.2), ("e", 300, 1.5, 0.4)],
}


def curve(p: np.ndarray, slope: float, shift: float) -> np.ndarray:
    return special.expit(slope * special.logit(p) + shift)


def true_ece(slope: float, shift: float, grid: int = 200_000) -> float:
    """Population binned ECE of the curve under Beta(2, 2) confidences (midpoint
    rule); exactly 0 for the identity (the rule would leave rounding noise)."""
    if slope == 1.0 and shift == 0.0:
        return 0.0
    p = (np.arange(grid) + 0.5) / grid
    w = stats.beta.pdf(p, 2, 2) / grid
    gap = (curve(p, slope, shift) - p) * w
    b = np.minimum((p * N_BINS).astype(int), N_BINS - 1)
    return float(np.abs(np.bincount(b, weights=gap, minlength=N_BINS)).sum())


def replicate(scenario: str, rep: int) -> dict:
    rng = np.random.default_rng([rep, list(SCENARIOS).index(scenario)])
    spec = SCENARIOS[scenario]
    names = np.concatenate([np.full(n, g) for g, n, _, _ in spec])
    p = rng.beta(2, 2, size=names.size)
    truth_p = np.concatenate([curve(p[names == g], s, a) for g, _, s, a in spec])
    # rows are in group order, so the curve of each group lines up with p
    y = rng.uniform(size=p.size) < truth_p
    model = SmoothGroupModel(n_bins=N_BINS)
    t0 = time.perf_counter()
    r = model.posterior(model.group_statistics(y, p, by=names), num_samples=NUM_SAMPLES, seed=rep)
    seconds = time.perf_counter() - t0
    lo, hi = r.interval(PROB)
    own_lo, own_hi = r.independent_interval(PROB)
    hidden = r.hidden(PROB)
    out = {"scenario": scenario, "rep": rep, "seconds": seconds, "groups": []}
    for j, g in enumerate(r.groups.tolist()):
        out["groups"].append({
            "group": g, "n": int(r.n[j]), "lo": float(lo[j]), "hi": float(hi[j]),
            "mean": float(r.mean[j]), "own_lo": float(own_lo[j]), "own_hi": float(own_hi[j]),
            "own_mean": float(r.independent_draws[:, j].mean()), "hidden": bool(hidden[j]),
            "plugin": float(r.plugin[j])})
    return out


def table(path: Path) -> str:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    lines = [
        f"Made by `python benchmarks/groups_study.py --table` on {time.strftime('%Y-%m-%d')} from "
        f"{len(rows)} replications.",
        "",
        "| scenario | group | n | true ECE | R | coverage, pooled | rule | coverage, own | "
        "width, pooled | width, own | gain | warned | covered or warned |",
        "|---|---|---:|---:|---:|---:|:---:|---:|---:|---:|---:|---:|---:|",
    ]
    for scenario, spec in SCENARIOS.items():
        runs = [r for r in rows if r["scenario"] == scenario]
        if not runs:
            continue
        for g, n, s, a in spec:
            truth = true_ece(s, a)
            cells = [next(x for x in r["groups"] if x["group"] == g) for r in runs]
            big_r = len(cells)
            cov = np.mean([c["lo"] <= truth <= c["hi"] for c in cells])
            own = np.mean([c["own_lo"] <= truth <= c["own_hi"] for c in cells])
            rule = meets_coverage_rule(cov, big_r)
            warned = np.mean([c["hidden"] for c in cells])
            either = np.mean([c["hidden"] or c["lo"] <= truth <= c["hi"] for c in cells])
            width = np.mean([c["hi"] - c["lo"] for c in cells])
            own_width = np.mean([c["own_hi"] - c["own_lo"] for c in cells])
            gain = 1 - width / own_width if own_width > 0 else float("nan")
            lines.append(
                f"| {scenario} | {g} | {n:,} | {truth:.4f} | {big_r} | {cov:.3f} | "
                f"{'met' if rule else 'not met'} | {own:.3f} | {width:.4f} | {own_width:.4f} | "
                f"{gain:+.0%} | {warned:.3f} | {either:.3f} |")
    secs = [r["seconds"] for r in rows]
    lines += ["", f"90% intervals, {NUM_SAMPLES:,} draws per group, {N_BINS} bins; median time per "
              f"replication {np.median(secs):.1f} s (both posteriors; the 2-core machine was "
              f"shared with other runs, the fastest took {np.min(secs):.1f} s). Rule: "
              "c + 2 sqrt(c (1 - c) / R) >= 0.85 for the pooled interval. 'gain': how much "
              "narrower the pooled interval is than the group's own, on average. 'warned': how "
              "often the result names the group as one that pooling may hide; 'covered or "
              "warned': how often the pooled interval covers the truth or the warning names "
              "the group."]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--first", type=int, default=0, help="first replication (to split a run)")
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--table", action="store_true")
    args = ap.parse_args()
    if args.table:
        text = table(args.out)
        TABLE.write_text(text)
        print(text)
        return
    done = set()
    if args.out.exists():
        for line in args.out.read_text().splitlines():
            if line.strip():
                d = json.loads(line)
                done.add((d["scenario"], d["rep"]))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for scenario in args.scenarios.split(","):
        for rep in range(args.first, args.reps):
            if (scenario, rep) in done:
                continue
            d = replicate(scenario, rep)
            with args.out.open("a") as f:
                f.write(json.dumps(d) + "\n")
            print(scenario, rep, f"{d['seconds']:.1f}s", flush=True)


if __name__ == "__main__":
    main()
