"""The drift rule (bece.drift_test): false alarms on stationary streams, delay after a drift.

Streams of W = 50 windows of n binary predictions each (P(y = 1) drawn from
Beta(2, 2); outcomes from the true curve logit P(y = 1 | p) = s logit p + a),
the first window (the default) or the first five pooled as the reference,
alpha = 0.01, 15 uniform bins:

- *stationary*: every window calibrated (s = 1, a = 0). Printed: the
  false-alarm rate per window (all windows of all streams), the share of
  streams with any false alarm, and the mean run length to the
  first false alarm, by the censored-exponential estimate (windows watched
  until the first alarm or the end, divided by the number of first alarms);
- *drift*: calibrated up to window 25, then the curve (s, a) from window 25
  on. Printed: the share of streams that alarm within 1 and within 5 windows
  of the change, and the mean delay (first alarm at or after window 25, minus
  25; streams with no alarm by window 49 count as 25) — for the drift sizes
  in ``DRIFTS``, each with its true ECE.

Usage: python benchmarks/drift_study.py [--streams 200] [--sizes 300,1000,3000]
       writes docs/tables/drift_study.md
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from scipy import special, stats

import bece
from bece._stats.binning import make_binning

TABLE = Path(__file__).resolve().parent.parent / "docs" / "tables" / "drift_study.md"
W, CHANGE, ALPHA, N_BINS = 50, 25, 0.01, 15
#: reference windows pooled: the default (the first) and the first five
REFERENCES = (1, 5)
#: (name, slope, shift) of the curve after the change
DRIFTS = [("over-confident, s = 0.8", 0.8, 0.0), ("over-confident, s = 0.6", 0.6, 0.0),
          ("shifted, a = +0.2", 1.0, 0.2), ("shifted, a = +0.4", 1.0, 0.4)]


def true_ece(slope: float, shift: float, grid: int = 200_000) -> float:
    p = (np.arange(grid) + 0.5) / grid
    w = stats.beta.pdf(p, 2, 2) / grid
    gap = (special.expit(slope * special.logit(p) + shift) - p) * w
    b = np.minimum((p * N_BINS).astype(int), N_BINS - 1)
    return float(np.abs(np.bincount(b, weights=gap, minlength=N_BINS)).sum())


def stream(rng: np.random.Generator, n: int, slope: float, shift: float,
           reference: int = 1) -> bece.Drift:
    window = np.repeat(np.arange(W), n)
    p = rng.beta(2, 2, size=window.size)
    after = window >= CHANGE
    truth = special.expit(np.where(after, slope, 1.0) * special.logit(p) + np.where(after, shift, 0.0))
    y = (rng.uniform(size=p.size) < truth).astype(np.int64)
    g = bece.GroupStats.from_arrays(make_binning(None, N_BINS), window, y, p, "binary")
    return bece.drift_test(g, alpha=ALPHA, reference=reference)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--streams", type=int, default=200)
    ap.add_argument("--sizes", default="300,1000,3000")
    args = ap.parse_args()
    t0 = time.perf_counter()
    sizes = [int(s) for s in args.sizes.split(",")]
    lines = [
        f"Made by `python benchmarks/drift_study.py --streams {args.streams} --sizes "
        f"{args.sizes}` on {time.strftime('%Y-%m-%d')}.",
        "",
        "Stationary streams (calibrated in every window):",
        "",
        "| n per window | reference windows | streams | false alarms per window "
        "| streams with any | mean run length (windows) |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for n in sizes:
        for ref in REFERENCES:
            rng = np.random.default_rng([n, 0, ref])
            alarms = np.array([stream(rng, n, 1.0, 0.0, ref).alarm for _ in range(args.streams)])
            first = np.array([np.argmax(a) + 1 if a.any() else a.size for a in alarms])
            hits = alarms.any(axis=1)
            arl = first.sum() / hits.sum() if hits.any() else float("inf")
            se = np.sqrt(alarms.mean() * (1 - alarms.mean()) / alarms.size)
            lines.append(f"| {n:,} | {ref} | {args.streams} | {alarms.mean():.4f} ± {se:.4f} | "
                         f"{hits.mean():.3f} | {arl:.0f} |")
    lines += [
        "",
        f"Drift from window {CHANGE} on (delay: first alarm at or after it, minus {CHANGE}; "
        f"none by window {W - 1} counts as {W - CHANGE}):",
        "",
        "| n per window | reference windows | drift | true ECE after | alarm in the first "
        "drifted window | within 5 | mean delay (windows) |",
        "|---:|---:|---|---:|---:|---:|---:|",
    ]
    for n in sizes:
        for ref in REFERENCES:
            for j, (name, s, a) in enumerate(DRIFTS):
                rng = np.random.default_rng([n, j + 1, ref])
                delays = []
                for _ in range(args.streams):
                    drift = stream(rng, n, s, a, ref)
                    alarm = drift.alarm[drift.windows >= CHANGE]  # windows 25 .. 49
                    delays.append(int(np.argmax(alarm)) if alarm.any() else W - CHANGE)
                d = np.array(delays)
                lines.append(f"| {n:,} | {ref} | {name} | {true_ece(s, a):.4f} | "
                             f"{np.mean(d < 1):.3f} | {np.mean(d < 5):.3f} | {d.mean():.2f} |")
    lines += ["", f"{W} windows per stream, alpha = {ALPHA}, {N_BINS} bins; "
              f"{time.perf_counter() - t0:.0f} s on this machine."]
    text = "\n".join(lines) + "\n"
    TABLE.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
