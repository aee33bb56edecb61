"""Coverage of the intervals that bece.metrics.metric_report (and
``bece report --metrics``) gives the plug-in metrics whose population value
is known, and the rejection rates of its tests of calibration.

Population: p ~ U(0, 1), P(y = 1 | p) = p**k. Truths (by closed form or
quadrature): Brier score 1/3 - 2/(k+2) + 1/(k+1); log loss
E[-p^k log p - (1 - p^k) log(1 - p)]; calibration-in-the-large
E p - E p^k = 1/2 - 1/(k+1); the binned l2 ECE on 15 uniform bins (which the
plug-in and Kumar's debiased estimators estimate; see l2_coverage.py);
KS calibration error max_t |t^(k+1)/(k+1) - t^2/2|; the true (l1)
calibration error E|p^k - p| = 1/2 - 1/(k+1), which ECE_sweep and the
smooth ECE estimate (the smooth ECE only approximately: it smooths with its
own bandwidth); the calibration slope of the population logistic fit of y
on logit(p) and the logistic intercept with the slope fixed at 1 (their
score equations solved by quadrature).

Every interval is metric_report's: the percentile Poisson bootstrap (the
same replicates for every metric of a data set, bootstrap seed = data set
number), the one bece report --metrics gives. Printed per metric, k and n
(Markdown): truth, mean estimate less truth, coverage of the 90% interval
(with its Monte Carlo standard error), mean width. Then the tests
(Spiegelhalter's Z, Hosmer-Lemeshow): the share of data sets with p-value
below 0.1, at k = 1 (calibrated: should be 0.1) and at the other powers.

Usage: python benchmarks/metric_coverage.py [--reps 100] [--boot 100]
       [--ns 300,1000,5000] [--powers 1.5,3] [--metrics NAMES]
       [--markdown docs/tables/metric_coverage.md]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from scipy import integrate, optimize
from scipy.special import expit, logit

from bece.metrics import metric_report
from doc_tables import add_markdown_option, write

M = 15
ESTIMATES = ["brier", "log_loss", "citl", "l2", "debiased_l2", "ks", "ece_sweep", "smooth_ece",
             "slope", "intercept"]
TESTS = ["spiegelhalter", "hosmer_lemeshow"]


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

    def score0(a: float) -> float:
        return integrate.quad(lambda p: p**k - expit(a + logit(p)), 0, 1, limit=200)[0]

    a0 = float(optimize.brentq(score0, -5, 5, xtol=1e-13))
    e = np.linspace(0, 1, M + 1)
    gap = M * (e[1:] ** (k + 1) - e[:-1] ** (k + 1)) / (k + 1) - (e[1:] + e[:-1]) / 2
    l2 = float(np.sqrt(np.mean(gap**2)))
    tce = 0.5 - 1 / (k + 1)
    return {"brier": 1 / 3 - 2 / (k + 2) + 1 / (k + 1), "log_loss": ll, "ks": ks,
            "ece_sweep": tce, "smooth_ece": tce, "slope": slope, "intercept": a0,
            "citl": tce, "l2": l2, "debiased_l2": l2}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--boot", type=int, default=100)
    ap.add_argument("--ns", default="300,1000,5000")
    ap.add_argument("--powers", default="1.5,3", help="k of the miscalibrated populations")
    ap.add_argument("--metrics", default=",".join(ESTIMATES + TESTS))
    ap.add_argument("--keep", action="store_true",
                    help="keep the rows of the --markdown file that this run does not recompute "
                    "(a run in parts; the caption names the earlier commands)")
    add_markdown_option(ap, __file__)
    args = ap.parse_args()
    ns = [int(v) for v in args.ns.split(",")]
    powers = [float(v) for v in args.powers.split(",")]
    names = args.metrics.split(",")
    est = [m for m in names if m in ESTIMATES]
    tests = [m for m in names if m in TESTS]
    se = np.sqrt(0.09 / args.reps)
    head = ["| metric | k | n | R | truth | mean estimate - truth | coverage of 90% | width |",
            "|---|---|---|---|---|---|---|---|"]
    thead = ["| test | k | n | R | share with p < 0.1 |", "|---|---|---|---|---|"]
    rows: dict[tuple[str, float, int], str] = {}
    trows: dict[tuple[str, float, int], str] = {}
    earlier = ""
    if args.keep and Path(args.markdown).is_file():
        text = Path(args.markdown).read_text().splitlines()
        earlier = text[0].removeprefix("Produced by ").split(" on ")[0]
        earlier = earlier.split("; rows of an earlier run: ")[0]
        for line in text:
            cells = [c.strip() for c in line.strip("|").split("|")]
            if line.startswith("| ") and cells[0] in ESTIMATES + TESTS:
                key = (cells[0], float(cells[1]), int(cells[2]))
                (rows if len(cells) > 5 else trows)[key] = line
    for k in ([1.0] if tests else []) + powers:
        tr = truths(k)
        for n in ns:
            rng = np.random.default_rng(99 + 1000 * n + int(10 * k))
            hit = {m: 0 for m in est}
            bias = {m: 0.0 for m in est}
            width = {m: 0.0 for m in est}
            rej = {m: 0 for m in tests}
            start = time.time()
            for r in range(args.reps):
                p = rng.uniform(size=n)
                y = (rng.uniform(size=n) < p**k).astype(np.int64)
                want = (est if k != 1.0 else []) + tests
                d = metric_report(y, p, want, n_boot=args.boot, seed=r)
                for m in want:
                    if "error" in d[m]:
                        raise SystemExit(f"{m} failed on data set {r} (k={k}, n={n}): {d[m]['error']}")
                    if m in tests:
                        rej[m] += d[m]["p_value"] < 0.1
                        continue
                    lo, hi = d[m]["interval"]
                    hit[m] += lo <= tr[m] <= hi
                    bias[m] += (d[m]["value"] - tr[m]) / args.reps
                    width[m] += (hi - lo) / args.reps
            for m in tests:
                trows[(m, k, n)] = f"| {m} | {k:g} | {n} | {args.reps} | {rej[m] / args.reps:.3f} |"
            if k != 1.0:
                for m in est:
                    rows[(m, k, n)] = (f"| {m} | {k:g} | {n} | {args.reps} | {tr[m]:.4f} | "
                                       f"{bias[m]:+.4f} | {hit[m] / args.reps:.3f} ± {se:.3f} | "
                                       f"{width[m]:.4f} |")
            print(f"k={k:g} n={n}: {time.time() - start:.0f} s", flush=True)
            for line in [*(rows[key] for key in rows if key[1:] == (k, n)),
                         *(trows[key] for key in trows if key[1:] == (k, n))]:
                print(line, flush=True)
            body = [f"Rows of an earlier run kept: {earlier}.", ""] if earlier else []
            if rows:
                body += [f"Coverage of the 90% intervals of bece.metrics.metric_report (Poisson "
                         f"bootstrap, {args.boot} replicates; Monte Carlo s.e. of a coverage "
                         f"near 0.9: {se:.3f}); p ~ U(0, 1), y ~ Bernoulli(p^k).", "",
                         *head, *(rows[key] for key in sorted(rows, key=_order))]
            if trows:
                body += ["", "Tests of calibration: share of data sets with p-value below 0.1 "
                         "(k = 1: calibrated, the false-alarm rate, should be 0.1 ± "
                         f"{se:.3f}; k > 1: power).", "", *thead,
                         *(trows[key] for key in sorted(trows, key=_order))]
            # after every (k, n): a stopped run keeps its rows
            write(args.markdown, "\n".join(body), __file__)


def _order(key: tuple[str, float, int]) -> tuple[int, float, int]:
    m, k, n = key
    return ((ESTIMATES + TESTS).index(m), k, n)


if __name__ == "__main__":
    main()
