"""Coverage of the l2 ECE posterior (bece.metrics.l2_ece_draws) beside the l1's,
and the bias of the plug-in and debiased l2 estimators.

Population: p ~ U(0, 1), P(y = 1 | p) = p**k; 15 uniform bins. Its binned
errors are known in closed form: each bin has weight 1/M, mean confidence at
its centre and observed frequency M (u**(k+1) - l**(k+1)) / (k + 1), so

    ECE_1 = sum_m |a_m - c_m| / M,    ECE_2 = (sum_m (a_m - c_m)**2 / M) ** 0.5.

For each model (binned, smooth), k and n, R data sets: the equal-tailed 90%
interval of the posterior draws of ECE_1 (result.draws) and of ECE_2 (the
same draws, l2_ece_draws) is checked against the truth. Printed: truth,
coverage of each interval (with its Monte Carlo standard error), mean width,
and the mean of the plug-in and debiased (Kumar) l2 estimates less the truth.

A second table (``--bootstrap R``): the percentile-bootstrap 90% interval
(bece.metrics.bootstrap_interval, 200 resamples) of the plug-in and of the
debiased l2 ECE, over R data sets.

Usage: python benchmarks/l2_coverage.py [--reps-binned 300] [--reps-smooth 60]
       [--ns 300,1000,5000] [--powers 1.5,3] [--bootstrap 0]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import bece
from bece.metrics import bootstrap_interval, l2_calibration_error, l2_ece_draws

M = 15


def truth(k: float) -> tuple[float, float]:
    e = np.linspace(0, 1, M + 1)
    acc = M * (e[1:] ** (k + 1) - e[:-1] ** (k + 1)) / (k + 1)
    gap = acc - (e[1:] + e[:-1]) / 2
    return float(np.abs(gap).mean()), float(np.sqrt(np.mean(gap**2)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps-binned", type=int, default=300)
    ap.add_argument("--reps-smooth", type=int, default=60)
    ap.add_argument("--ns", default="300,1000,5000")
    ap.add_argument("--powers", default="1.5,3")
    ap.add_argument("--bootstrap", type=int, default=0)
    args = ap.parse_args()
    ns = [int(v) for v in args.ns.split(",")]
    powers = [float(v) for v in args.powers.split(",")]
    if args.bootstrap:
        bootstrap_table(args.bootstrap, ns, powers)
        return
    print(f"{'model':7s} {'k':>4s} {'n':>6s} {'R':>4s} {'ECE1':>7s} {'cov1':>11s} {'ECE2':>7s} "
          f"{'cov2':>11s} {'width2':>7s} {'plugin-l2 bias':>15s} {'debiased bias':>14s} {'s':>5s}")
    for model, reps in (("binned", args.reps_binned), ("smooth", args.reps_smooth)):
        for k in powers:
            t1, t2 = truth(k)
            for n in ns:
                rng = np.random.default_rng(1000 * n + int(10 * k))
                hit1 = hit2 = 0
                width = bias_p = bias_d = 0.0
                start = time.time()
                for r in range(reps):
                    p = rng.uniform(size=n)
                    y = (rng.uniform(size=n) < p**k).astype(np.int64)
                    post = bece.bayesian_ece(y, p, model=model, num_samples=2000, seed=r)
                    lo1, hi1 = np.quantile(post.draws, [0.05, 0.95])
                    d2 = l2_ece_draws(post)
                    lo2, hi2 = np.quantile(d2, [0.05, 0.95])
                    hit1 += lo1 <= t1 <= hi1
                    hit2 += lo2 <= t2 <= hi2
                    width += (hi2 - lo2) / reps
                    bias_p += (l2_calibration_error(y, p) - t2) / reps
                    bias_d += (l2_calibration_error(y, p, debiased=True) - t2) / reps
                c1, c2 = hit1 / reps, hit2 / reps
                se = np.sqrt(0.09 / reps)
                print(f"{model:7s} {k:4.1f} {n:6d} {reps:4d} {t1:7.4f} {c1:6.3f}±{se:.3f} "
                      f"{t2:7.4f} {c2:6.3f}±{se:.3f} {width:7.4f} {bias_p:15.4f} {bias_d:14.4f} "
                      f"{time.time() - start:5.0f}", flush=True)


def bootstrap_table(reps: int, ns: list[int], powers: list[float]) -> None:
    print(f"{'k':>4s} {'n':>6s} {'R':>4s} {'ECE2':>7s} {'cov plug-in':>12s} {'width':>7s} "
          f"{'cov debiased':>13s} {'width':>7s}")
    for k in powers:
        _, t2 = truth(k)
        for n in ns:
            rng = np.random.default_rng(7 + 1000 * n + int(10 * k))
            hits = [0, 0]
            widths = [0.0, 0.0]
            for r in range(reps):
                p = rng.uniform(size=n)
                y = (rng.uniform(size=n) < p**k).astype(np.int64)
                for j, deb in enumerate((False, True)):
                    iv = bootstrap_interval(l2_calibration_error, y, p, n_boot=200, seed=r,
                                            debiased=deb)
                    hits[j] += iv.low <= t2 <= iv.high
                    widths[j] += (iv.high - iv.low) / reps
            se = np.sqrt(0.09 / reps)
            print(f"{k:4.1f} {n:6d} {reps:4d} {t2:7.4f} {hits[0] / reps:6.3f}±{se:.3f} "
                  f"{widths[0]:7.4f} {hits[1] / reps:7.3f}±{se:.3f} {widths[1]:7.4f}", flush=True)


if __name__ == "__main__":
    main()
