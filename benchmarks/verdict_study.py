"""How often each verdict comes out: calibrated and miscalibrated binary models, by n.

For each case (P(y = 1 | p) = p ** power with p ~ U(0, 1): power 1 is
calibrated) and each n, ``--reps`` simulated test sets get
``bece.calibration_test`` (15 bins, 1,000 resamples) and its verdict
(:func:`bece._results.verdict.verdict`: the p-value and the Bayes factor
B01); the table gives the share of each verdict, of p < 0.05 and of
B01 < 1 (the Bayes factor's answer "miscalibrated"), and the mean true ECE
of the case (by quadrature on the 15 bins).

    PYTHONPATH=. python benchmarks/verdict_study.py [--reps 20] [--seed 0]

The share's Monte Carlo standard error is at most 0.5 / sqrt(reps).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import integrate

import bece

CASES = (("calibrated", 1.0), ("slight", 1.1), ("clear", 1.5))
SIZES = (300, 3000, 30000)


def true_ece(power: float, n_bins: int = 15) -> float:
    """Population binned ECE of P(y = 1 | p) = p ** power with p ~ U(0, 1)."""
    total = 0.0
    for m in range(n_bins):
        lo, hi = m / n_bins, (m + 1) / n_bins
        freq = integrate.quad(lambda x: x**power, lo, hi)[0]
        mean = integrate.quad(lambda x: x, lo, hi)[0]
        total += abs(freq - mean)
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print("| case | true ECE | n | consistent | inconclusive | miscalibrated | p < 0.05 "
          "| B01 < 1 | s / test |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, power in CASES:
        ece = true_ece(power)
        for n in SIZES:
            labels, rejects, against = [], 0, 0
            start = time.perf_counter()
            for _ in range(args.reps):
                p = rng.uniform(size=n)
                y = rng.uniform(size=n) < p**power
                t = bece.calibration_test(y, p, seed=rng)
                v = t.verdict()
                labels.append(v.label)
                rejects += t.p_value < 0.05
                against += t.bayes_factor < 1.0
            took = (time.perf_counter() - start) / args.reps
            share = {k: labels.count(k) / args.reps for k in
                     ("consistent with calibration", "inconclusive", "miscalibrated")}
            print(f"| {name} | {ece:.4f} | {n:,} | {share['consistent with calibration']:.2f} "
                  f"| {share['inconclusive']:.2f} | {share['miscalibrated']:.2f} "
                  f"| {rejects / args.reps:.2f} | {against / args.reps:.2f} | {took:.2f} |",
                  flush=True)


if __name__ == "__main__":
    from doc_tables import run_main  # --markdown PATH: the tables for docs/tables/

    run_main(main, __file__)
