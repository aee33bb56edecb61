"""How far the conjugate form of the binned BECE model is from the literal one,
where confidences pile up at 0 and 1 — and which one covers the truth.

Both forms have exact fast paths (bece._binned.conjugate, bece._binned.literal),
so each replication computes both posteriors from the same statistics. For
each data source and n, over R replications: the mean gap between the forms'
posterior means (in conjugate posterior sds), the largest per-bin gap in mean
confidence, and each form's 90% coverage of the population binned ECE.

Sources (15 equal-width bins, binary input):
  uniform   p ~ U(0, 1), P(y=1 | p) = p^1.5 (the old README's measurement)
  beta      p ~ Beta(0.3, 0.3), P(y=1 | p) = p^1.5
  logistic  a logistic regression fitted on 200 examples of a 10-feature
            logistic model (coefficients of norm 6): its outputs pile at 0 and
            1 and it is over-confident; truth from the true P(y=1 | x)
  <network> the public CIFAR outputs in ../shared/data (top-label confidence,
            correct = [argmax == y]), resampled with replacement: the
            population is the 10,000 test images, truth their plug-in ECE

Population ECEs are computed on 4 * 10^6 fresh draws without outcome noise
(uniform, beta, logistic), with Monte Carlo error below 1e-4.

Usage: python benchmarks/literal_gap.py [--reps R] [--max-n N] [--quick]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import bece
from bece._stats.binning import make_binning

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
NETWORKS = ("netcal_wideresnet-16-4-cifar-10", "netcal_densenet-bc-100-cifar-100",
            "chenyaofo_cifar100_resnet20")
BINNING = make_binning(None, 15, "uniform")


def _population_ece(p: np.ndarray, prob_y1: np.ndarray) -> float:
    b = BINNING.bin_index(p) if hasattr(BINNING, "bin_index") else np.minimum((p * 15).astype(int), 14)
    acc = np.bincount(b, weights=prob_y1, minlength=15)
    conf = np.bincount(b, weights=p, minlength=15)
    return float(np.abs(acc - conf).sum() / p.size)


def _power_source(sampler):
    def simulate(n, rng):
        p = sampler(n, rng)
        return (rng.uniform(size=n) < p**1.5).astype(np.int64), p

    rng = np.random.default_rng(123)
    p = sampler(4 * 10**6, rng)
    return simulate, _population_ece(p, p**1.5)


def _logistic_source():
    rng = np.random.default_rng(7)
    d = 10
    beta = rng.normal(size=d)
    beta *= 6 / np.linalg.norm(beta)

    def draw(n, r):
        x = r.normal(size=(n, d))
        return x, 1 / (1 + np.exp(-x @ beta))

    from sklearn.linear_model import LogisticRegression

    x, pr = draw(200, rng)
    clf = LogisticRegression(C=100.0, max_iter=10_000).fit(x, rng.uniform(size=200) < pr)

    def simulate(n, r):
        x, pr = draw(n, r)
        p = clf.predict_proba(x)[:, 1]
        return (r.uniform(size=n) < pr).astype(np.int64), p

    x, pr = draw(4 * 10**6, np.random.default_rng(11))
    return simulate, _population_ece(clf.predict_proba(x)[:, 1], pr)


def _network_source(name):
    d = np.load(DATA / f"{name}.npz")
    if "probs" in d:
        probs = d["probs"].astype(np.float64)
    else:
        z = d["logits"].astype(np.float64)
        z -= z.max(axis=1, keepdims=True)
        probs = np.exp(z)
        probs /= probs.sum(axis=1, keepdims=True)
    conf = probs.max(axis=1)
    correct = (probs.argmax(axis=1) == d["y"]).astype(np.int64)

    def simulate(n, rng):
        i = rng.integers(0, conf.size, n)
        return correct[i], conf[i]

    return simulate, bece.expected_calibration_error(correct, conf)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--max-n", type=int, default=10**6)
    ap.add_argument("--draws", type=int, default=4000)
    ap.add_argument("--quick", action="store_true", help="10 replications, n <= 10^4")
    args = ap.parse_args()
    reps, max_n = (10, 10**4) if args.quick else (args.reps, args.max_n)
    sources = {
        "uniform": _power_source(lambda n, r: r.uniform(size=n)),
        "beta": _power_source(lambda n, r: r.beta(0.3, 0.3, size=n)),
        "logistic": _logistic_source(),
    }
    if DATA.exists():
        sources.update({name.split("_", 1)[1]: _network_source(name) for name in NETWORKS})
    ns = [n for n in (100, 1000, 10**4, 10**5, 10**6) if n <= max_n]
    print(f"R = {reps} replications per row ({min(reps, 20)} at n >= 10^5), "
          f"{args.draws} posterior draws; coverage of the 90% equal-tailed interval")
    print("| source | true ECE | n | plug-in | conjugate mean | literal mean | gap / sd | "
          "max conf gap | cover conjugate | cover literal |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    t0 = time.perf_counter()
    for name, (simulate, truth) in sources.items():
        for n in ns:
            rng = np.random.default_rng([n, 1])
            rows = []
            for _ in range(reps if n < 10**5 else min(reps, 20)):
                y, p = simulate(n, rng)
                stats = bece.CalibrationStats.from_arrays(y, p, binning=BINNING)
                rows.append(bece._validation.literal.form_gap(
                    stats, num_samples=args.draws, seed=int(rng.integers(2**31)), truth=truth))

            def avg(k):
                return float(np.mean([r[k] for r in rows]))

            print(f"| {name} | {truth:.4f} | {n:,} | {avg('plugin'):.4f} | "
                  f"{avg('conjugate_mean'):.4f} | {avg('literal_mean'):.4f} | {avg('gap_sd'):+.2f} | "
                  f"{avg('max_confidence_gap'):.4f} | {avg('conjugate_covers'):.2f} | "
                  f"{avg('literal_covers'):.2f} |", flush=True)
    print(f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    from doc_tables import run_main  # --markdown PATH: the tables for docs/tables/

    run_main(main, __file__)
