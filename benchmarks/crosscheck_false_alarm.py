"""Measure the cross-check's realised false-alarm behaviour over many seeds.

Runs ``cross_check`` on one data set (n = 1000, 15 bins, the conjugate model,
so every disagreement is a false alarm) with different seeds and prints the
largest z-score of each run against the Bonferroni threshold.

Run:  python benchmarks/crosscheck_false_alarm.py [NUM_SEEDS]
"""

from __future__ import annotations

import sys

import numpy as np

import bece


def main() -> None:
    num = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    rng = np.random.default_rng(1000)
    p = rng.beta(5, 1, size=1000)
    y = (rng.uniform(size=1000) < p**1.2).astype(int)
    zs = []
    for seed in range(num):
        cc = bece.cross_check(y, p, seed=100 + seed)
        zs.append(cc.max_z)
        print(f"seed {100 + seed}: max_z {cc.max_z:.2f} threshold {cc.z_threshold:.2f} "
              f"agree {cc.agree} rhat {cc.rhat_max:.4f} ess {cc.ess_min:.0f} div {cc.divergences}",
              flush=True)
    zs = np.array(zs)
    print(f"runs {num}: max_z median {np.median(zs):.2f}, max {zs.max():.2f}, "
          f"false alarms {(zs > cc.z_threshold).sum()}")


if __name__ == "__main__":
    main()
