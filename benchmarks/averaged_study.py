"""Model averaging of the smooth model with exact calibration: coverage, width,
the rate of intervals that include 0, and how much the prior odds matter.

The smooth posterior of the ECE is continuous, so none of its intervals
contains 0 and a calibrated classifier never gets an answer consistent with
"calibrated". Averaging it with the identity curve (binned ECE exactly 0),
weighted by the posterior probability of calibration,

    P(H0 | data) = B01 O / (1 + B01 O),   B01 = p(data | identity) / p(data | smooth),

(the Bayes factor of bece.smooth.calibration_test, from the same fit) puts a
point mass on 0. For each replication one smooth fit gives the averaged
posterior at every prior odds O: its equal-tailed 90% interval is
[0, Q((0.95 - pi0) / (1 - pi0))] when pi0 >= 0.05, and otherwise
[Q((0.05 - pi0) / (1 - pi0)), Q((0.95 - pi0) / (1 - pi0))] with Q the smooth
draws' quantile function (upper end 0 when pi0 >= 0.95).

Problems: those of benchmarks/validation_study.py (true population binned
ECE by quadrature). Printed per (problem, n): truth, coverage and mean width
of the 90% interval, rate of intervals with lower end 0, for O = 0 (the
smooth model alone), 1/4, 1 and 4, and the mean of P(H0 | data) at O = 1.

Usage: python benchmarks/averaged_study.py [--reps R] [--ns 300,1000,10000] [--problems a,b]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bece.smooth.posterior import smooth_ece  # noqa: E402
from validation_study import N_BINS, PROBLEMS  # noqa: E402

ODDS = (0.0, 1 / 16, 0.25, 1.0)


def averaged_interval(draws: np.ndarray, pi0: float, prob: float = 0.9) -> tuple[float, float]:
    """Equal-tailed interval of the mixture pi0 * delta_0 + (1 - pi0) * draws."""
    lo_p, hi_p = (1 - prob) / 2, (1 + prob) / 2
    lo = 0.0 if pi0 >= lo_p else float(np.quantile(draws, (lo_p - pi0) / (1 - pi0)))
    hi = 0.0 if pi0 >= hi_p else float(np.quantile(draws, (hi_p - pi0) / (1 - pi0)))
    return lo, hi


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--ns", default="300,1000,10000")
    ap.add_argument("--problems", default="")
    ap.add_argument("--draws", type=int, default=2000)
    args = ap.parse_args()
    ns = [int(v) for v in args.ns.split(",")]
    problems = [p for p in PROBLEMS if not args.problems or p.name in args.problems.split(",")]
    print(f"R = {args.reps} replications per row, {args.draws} draws; 90% equal-tailed intervals; "
          f"O = prior odds of calibration (0: the smooth model alone)")
    cols = " | ".join(f"cover O={o:g} | width | incl. 0" for o in ODDS)
    print(f"| problem | n | truth | {cols} | mean P(H0) at O=1 |")
    print("|---|---:|---:|" + "---:|" * (3 * len(ODDS)) + "---:|")
    t0 = time.perf_counter()
    for i, prob in enumerate(problems):
        truth = prob.true_ece()
        for n in ns:
            stats = {o: [] for o in ODDS}
            p0s = []
            for r in range(args.reps):
                rng = np.random.default_rng([7, i, n, r])
                y, p = prob.sample(n, rng)
                res = smooth_ece(y, p, n_bins=N_BINS, num_samples=args.draws, seed=rng)
                log_bf = res.params.log_bayes_factor
                for o in ODDS:
                    pi0 = 0.0 if o == 0 else 1.0 / (1.0 + np.exp(-(log_bf + np.log(o))))
                    lo, hi = averaged_interval(res.draws, pi0)
                    stats[o].append((lo <= truth <= hi, hi - lo, lo == 0.0))
                    if o == 1.0:
                        p0s.append(pi0)
            cells = []
            for o in ODDS:
                a = np.array(stats[o], dtype=float)
                cells.append(f"{a[:, 0].mean():.2f} | {a[:, 1].mean():.4f} | {a[:, 2].mean():.2f}")
            print(f"| {prob.name} | {n:,} | {truth:.4f} | {' | '.join(cells)} | {np.mean(p0s):.2f} |",
                  flush=True)
    print(f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
