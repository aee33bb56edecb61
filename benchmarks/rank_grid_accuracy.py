"""Accuracy of the ranks' model's fine grid (:func:`bece._regression.cells.rank_grid_edges`).

The ranks' model of a sample forecast of S draws describes the latent PIT u
on a fine grid (1000 equal cells in [0.01, 0.99], probit-spaced cells toward
0 and 1) and takes u uniform within each fine cell; the rank R of y among
the draws is Binomial(S, u) given u. For Gaussian forecasts whose predictive
sd is k times the target's (u = Phi(y / k), y ~ N(0, 1)) this script puts
the exact latent distribution on the grid, computes the model's rank
probabilities ``share @ latent`` and compares them with an independent
P(R = r): the trapezoid rule over t = probit(u) ~ N(0, 1/k^2), step 0.0025,
of Binom(r; S, Phi(t)) (the binomial kernel's sd in t is at least 0.0126 at
S = 10^4). Printed per (S, k): the largest relative error over the ranks
with P(R = r) > 1e-6, the largest error in binomial standard errors at
n = 10^5 predictions, n times the Kullback-Leibler divergence of the model
from the truth at n = 10^5 (the expected log-likelihood-ratio cost), and the
time to build the binomial shares.

Usage: python benchmarks/rank_grid_accuracy.py [--draws 100 1000 10000] [--markdown PATH]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy import special, stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
import doc_tables  # noqa: E402
from bece._regression.cells import observed_cells  # noqa: E402
from bece.regression import PITHistogram  # noqa: E402


def truth(size: int, k: float) -> np.ndarray:
    t = np.linspace(-14, 14, 11201)
    w = stats.norm.pdf(t, scale=1.0 / k) * (t[1] - t[0])
    u = special.ndtr(t)
    out = np.empty(size + 1)
    for a in range(0, size + 1, 250):
        r = np.arange(a, min(a + 250, size + 1))[:, None]
        out[a:a + r.size] = stats.binom.pmf(r, size, u[None, :]) @ w
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, nargs="+", default=[100, 1000, 10000])
    ap.add_argument("--sd", type=float, nargs="+", default=[0.5, 0.7, 1.5])
    ap.add_argument("--n", type=float, default=1e5, help="predictions for the standard errors")
    doc_tables.add_markdown_option(ap, __file__)
    args = ap.parse_args(argv)
    with doc_tables.printed_tables(args.markdown, __file__, argv):
        print(f"| S draws | predictive sd x | fine cells | max relative error | max error (binomial s.e., "
              f"n = {args.n:.0e}) | n KL(truth, model) | share build (s) |")
        print("|---:|---:|---:|---:|---:|---:|---:|")
        for size in args.draws:
            t0 = time.perf_counter()
            cells = observed_cells(np.arange(1, size + 1) / (size + 1),
                                   PITHistogram(np.ones(1000, dtype=np.int64)), np.array([0.5]), draws=size)
            build = time.perf_counter() - t0
            for k in args.sd:
                # P(u <= e) = P(y <= k probit(e)) for u = Phi(y / k)
                latent = np.diff(special.ndtr(k * special.ndtri(cells.fine_edges)))
                model = cells.share @ latent
                tr = truth(size, k)
                keep = tr > 1e-6
                rel = np.max(np.abs(model[keep] / tr[keep] - 1))
                z = np.max(np.abs(model - tr) / np.sqrt(tr * (1 - tr) / args.n))
                kl = args.n * float(np.sum(tr[keep] * np.log(tr[keep] / model[keep])))
                print(f"| {size:,} | {k:g} | {cells.n_cells:,} | {rel:.1e} | {z:.2f} | {kl:.3f} "
                      f"| {build:.1f} |", flush=True)


if __name__ == "__main__":
    main()
