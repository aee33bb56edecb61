"""Coverage of the percentile-bootstrap intervals (bece.metrics.bootstrap_interval)
of the plug-in metrics whose population value is known.

Population: p ~ U(0, 1), P(y = 1 | p) = p**k. Truths (by closed form or
quadrature): Brier score 1/3 - 2/(k+2) + 1/(k+1); log loss
E[-p^k log p - (1 - p^k) log(1 - p)]; KS calibration error
max_t |t^(k+1)/(k+1) - t^2/2|; the true (l1) calibration error
E|p^k - p| = 1/2 - 1/(k+1), which ECE_sweep and the smooth ECE estimate
(the smooth ECE only approximately: it smooths with its own bandwidth); the
calibration slope of the population logistic fit of y on logit(p) (its
score equations solved by quadrature).

Printed per metric, k and n: truth, mean estimate less truth, coverage of
the 90% interval (± one Monte Carlo standard error), mean width.

Usage: python benchmarks/metric_coverage.py [--reps 100] [--boot 100]
       [--ns 300,1000,5000] [--powers 1.5,3]
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy import integrate, optimize
from scipy.special import expit, logit

from bece.metrics import (
    bootstrap_interval,
    brier_score,
    calibration_slope,
    ece_sweep,
    ks_calibration_error,
    log_loss,
    smooth_calibration_error,
)


def truths(k: float) -> dict[str, float]:
    ll = integrate.quad(lambda p: -(p**k) * np.log(p) - (1 - p**k) * np.log1p(-p), 0, 1)[0]
    t = np.linspace(0, 1, 200_001)
    ks = float(np.max(np.abs(t ** (k + 1) / (k + 1) - t**2 / 2)))

    def score(beta: np.ndarray) -> list[float]:
        def g(p: float, j: int) -> float:
            x = logit(p)
            return (p**k - expit(beta[0] + beta[1] * x)) * (1.0 if j == 0 else x)
        return [integrate.quad(g, 0, 1, args=(j,), limit=200)[0] for j in (0, 1)]

    slope = float(optimize.fsolve(score, [0.0, 1.0], xtol=1e-12)[1])
    tce = 0.5 - 1 / (k + 1)
    return {"brier": 1 / 3 - 2 / (k + 2) + 1 / (k + 1), "log_loss": ll, "ks": ks,
            "ece_sweep": tce, "smooth_ece": tce, "slope": slope}


METRICS = {
    "brier": brier_score,
    "log_loss": log_loss,
    "ks": ks_calibration_error,
    "ece_sweep": ece_sweep,
    "smooth_ece": smooth_calibration_error,
    "slope": lambda *a, **kw: calibration_slope(*a, **kw).slope,
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--boot", type=int, default=100)
    ap.add_argument("--ns", default="300,1000,5000")
    ap.add_argument("--powers", default="1.5,3")
    ap.add_argument("--metrics", default=",".join(METRICS))
    args = ap.parse_args()
    ns = [int(v) for v in args.ns.split(",")]
    powers = [float(v) for v in args.powers.split(",")]
    names = args.metrics.split(",")
    se = np.sqrt(0.09 / args.reps)
    print(f"{'metric':11s} {'k':>4s} {'n':>6s} {'R':>4s} {'truth':>8s} {'bias':>8s} "
          f"{'coverage':>12s} {'width':>7s}")
    for k in powers:
        tr = truths(k)
        for n in ns:
            rng = np.random.default_rng(99 + 1000 * n + int(10 * k))
            data = []
            for _ in range(args.reps):
                p = rng.uniform(size=n)
                data.append(((rng.uniform(size=n) < p**k).astype(np.int64), p))
            for name in names:
                hit, bias, width = 0, 0.0, 0.0
                for r, (y, p) in enumerate(data):
                    iv = bootstrap_interval(METRICS[name], y, p, n_boot=args.boot, seed=r)
                    hit += iv.low <= tr[name] <= iv.high
                    bias += (iv.estimate - tr[name]) / args.reps
                    width += (iv.high - iv.low) / args.reps
                print(f"{name:11s} {k:4.1f} {n:6d} {args.reps:4d} {tr[name]:8.4f} {bias:8.4f} "
                      f"{hit / args.reps:6.3f}±{se:.3f} {width:7.4f}", flush=True)


if __name__ == "__main__":
    main()
