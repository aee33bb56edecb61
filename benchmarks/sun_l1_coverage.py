"""The default's l1 ECE intervals on Sun et al.'s designs: standing rows for binary data.

Sun, Chaudhari, Barnett & Dobriban (2024), simulation settings 1 and 2 (their
code, github.com/sylydya/CI-ECE, experiments/data.py; generated here by
``l2_coverage.sun_data``): two classes, n = 1000, 50 uniform bins on the
top-1 confidence, the outcome's probability sigmoid(beta * logit Z0) with
beta0 = 0, so beta = 1 is calibrated. The truth is the population's binned
l1 ECE on those bins by quadrature,

    ECE = sum_m | integral over bin m of (sigmoid(beta logit c) - c) f(c) dc |,

f the density of the top-1 confidence on [1/2, 1]. For each row, R data
sets: the equal-tailed 90% interval of ``bece.bayesian_ece`` (the default)
and of ``model="binned"`` on the same bins. The rule for every row: the
observed coverage c of the default satisfies c + 2 sqrt(c (1 - c) / R) >=
0.85. A true ECE of 0 is covered when the interval reaches 0.

Run:  python benchmarks/sun_l1_coverage.py [--reps 200] [--markdown PATH]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import integrate

import bece

try:
    import doc_tables
    from l2_coverage import _sigmoid_q, _sun_density, sun_data
except ImportError:  # imported as benchmarks.sun_l1_coverage
    from benchmarks import doc_tables
    from benchmarks.l2_coverage import _sigmoid_q, _sun_density, sun_data

ROWS = (("simu1", 0.0), ("simu1", 0.5), ("simu1", 0.9), ("simu1", 1.0),
        ("simu2", 0.5), ("simu2", 1.0))
N, BINS, PROB = 1000, 50, 0.9


def l1_truth(design: str, beta: float, m: int = BINS) -> float:
    """Binned l1 ECE of the population (module docstring); exactly 0 at beta = 1."""
    if beta == 1.0:
        return 0.0
    f = _sun_density(design)
    total = 0.0
    for lo, hi in zip(np.linspace(0, 1, m + 1)[:-1], np.linspace(0, 1, m + 1)[1:]):
        lo, hi = max(lo, 0.5), min(hi, 1.0 - 1e-15)
        if hi > lo:
            total += abs(integrate.quad(lambda c: (_sigmoid_q(c, beta) - c) * f(c), lo, hi,
                                        limit=200)[0])
    return float(total)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200)
    doc_tables.add_markdown_option(ap, __file__)
    args = ap.parse_args(argv)
    cols = ["design", "beta", "true l1 ECE", "R", "default cover", "default width", "rule",
            "binned cover", "binned width", "s/rep"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    print(lines[0], flush=True)
    for design, beta in ROWS:
        truth = l1_truth(design, beta)
        rng = np.random.default_rng([ROWS.index((design, beta)), 2024])
        cover, width = np.zeros(2), np.zeros(2)
        start = time.perf_counter()
        for r in range(args.reps):
            z, p = sun_data(design, beta, N, rng)
            for j, model in enumerate((None, "binned")):
                lo, hi = bece.bayesian_ece(z, p, n_bins=BINS, model=model, num_samples=2000,
                                           seed=r).interval(PROB)
                cover[j] += lo <= truth <= hi
                width[j] += hi - lo
        c, w = cover / args.reps, width / args.reps
        rule = "met" if doc_tables.meets_coverage_rule(c[0], args.reps) else "not met"
        line = (f"| {design} | {beta:g} | {truth:.4f} | {args.reps} | {c[0]:.3f} | {w[0]:.4f} | "
                f"{rule} | {c[1]:.3f} | {w[1]:.4f} | "
                f"{(time.perf_counter() - start) / args.reps:.2f} |")
        lines.append(line)
        print(line, flush=True)
        doc_tables.write(args.markdown, "\n".join(lines) + "\n\n" + (
            f"Coverage of the true binned l1 ECE by 90% equal-tailed intervals, {args.reps} data "
            "sets per row (Monte Carlo s.e. of a coverage near 0.9: "
            f"{np.sqrt(0.09 / args.reps):.3f}); Sun et al.'s settings 1 and 2 (n = 1,000, 50 "
            "uniform bins, beta0 = 0, beta = 1 calibrated). Rule: c + 2 sqrt(c (1 - c) / R) >= "
            "0.85 for the default. A true ECE of 0 counts as covered when the interval reaches "
            "0."), __file__, argv)


if __name__ == "__main__":
    main()
