"""Model averaging of the smooth model with exact calibration: coverage, width,
the rate of intervals that include 0, and how much the prior odds matter.

The smooth posterior of the ECE is continuous, so none of its intervals
contains 0 and a calibrated classifier never gets an answer consistent with
"calibrated". Averaging it with the identity curve (binned ECE exactly 0),
weighted by the posterior probability of calibration,

    P(H0 | data) = B01 O / (1 + B01 O),   B01 = p(data | identity) / p(data | smooth),

(the Bayes factor of bece._smooth.bayes_factor, from the same fit) puts a
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
       [--out FILE.npz] [--odds 0,0.0625,0.25,1]
       python benchmarks/averaged_study.py --summarise FILE.npz --odds 0,0.01,0.03,0.1

``--out`` keeps, per replication, log B01 and the smooth draws' quantiles on a
grid of 1,001 probabilities, so that any prior odds can be summarised again
without refitting (``--summarise``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bece._smooth.posterior import smooth_ece  # noqa: E402
from validation_study import N_BINS, PROBLEMS  # noqa: E402

ODDS = (0.0, 1 / 16, 0.25, 1.0)


def averaged_interval(draws: np.ndarray, pi0: float, prob: float = 0.9) -> tuple[float, float]:
    """Equal-tailed interval of the mixture pi0 * delta_0 + (1 - pi0) * draws."""
    lo_p, hi_p = (1 - prob) / 2, (1 + prob) / 2
    lo = 0.0 if pi0 >= lo_p else float(np.quantile(draws, (lo_p - pi0) / (1 - pi0)))
    hi = 0.0 if pi0 >= hi_p else float(np.quantile(draws, (hi_p - pi0) / (1 - pi0)))
    return lo, hi


PROBS = np.linspace(0.0, 1.0, 1001)


def _interval_from_quantiles(q: np.ndarray, pi0: float, prob: float = 0.9) -> tuple[float, float]:
    lo_p, hi_p = (1 - prob) / 2, (1 + prob) / 2
    lo = 0.0 if pi0 >= lo_p else float(np.interp((lo_p - pi0) / (1 - pi0), PROBS, q))
    hi = 0.0 if pi0 >= hi_p else float(np.interp((hi_p - pi0) / (1 - pi0), PROBS, q))
    return lo, hi


def summarise(path: str, odds: list[float]) -> None:
    d = np.load(path, allow_pickle=False)
    print(f"from {path}: {d['names'].size} rows; 90% equal-tailed intervals")
    cols = " | ".join(f"cover O={o:g} | width | incl. 0" for o in odds)
    print(f"| problem | n | truth | R | {cols} |")
    print("|---|---:|---:|---:|" + "---:|" * (3 * len(odds)))
    for name, n, truth, lbf, q in zip(d["names"], d["ns"], d["truths"], d["log_bf"], d["quantiles"],
                                      strict=True):
        cells = []
        for o in odds:
            res = []
            for lb, qq in zip(lbf, q, strict=True):
                pi0 = 0.0 if o == 0 else 1.0 / (1.0 + np.exp(-(lb + np.log(o))))
                lo, hi = _interval_from_quantiles(qq, pi0)
                res.append((lo <= truth <= hi, hi - lo, lo == 0.0))
            a = np.array(res, dtype=float)
            cells.append(f"{a[:, 0].mean():.2f} | {a[:, 1].mean():.4f} | {a[:, 2].mean():.2f}")
        print(f"| {name} | {int(n):,} | {truth:.4f} | {len(lbf)} | {' | '.join(cells)} |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--ns", default="300,1000,10000")
    ap.add_argument("--problems", default="")
    ap.add_argument("--draws", type=int, default=2000)
    ap.add_argument("--out", default="")
    ap.add_argument("--odds", default="")
    ap.add_argument("--summarise", default="")
    args = ap.parse_args()
    if args.summarise:
        summarise(args.summarise, [float(v) for v in (args.odds or "0,0.0625,0.25,1").split(",")])
        return
    saved: dict[str, list] = {"names": [], "ns": [], "truths": [], "log_bf": [], "quantiles": []}
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
            lbfs, qs = [], []
            for r in range(args.reps):
                rng = np.random.default_rng([7, i, n, r])
                y, p = prob.sample(n, rng)
                res = smooth_ece(y, p, n_bins=N_BINS, num_samples=args.draws, seed=rng, prior_odds=0,
                                 zero_gap_prior=0)
                log_bf = res.params.log_bayes_factor
                lbfs.append(log_bf)
                qs.append(np.quantile(res.draws, PROBS))
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
            if args.out:
                for k, v in (("names", prob.name), ("ns", n), ("truths", truth), ("log_bf", lbfs),
                             ("quantiles", qs)):
                    saved[k].append(v)
                np.savez(args.out, names=np.array(saved["names"]), ns=np.array(saved["ns"]),
                         truths=np.array(saved["truths"]), log_bf=np.array(saved["log_bf"]),
                         quantiles=np.array(saved["quantiles"]))
    print(f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    from doc_tables import run_main  # --markdown PATH: the tables for docs/tables/

    run_main(main, __file__)
