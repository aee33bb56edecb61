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

A third table (``--sun R``): the asymptotic interval of Sun, Chaudhari,
Barnett & Dobriban (2024; bece.metrics.l2_ece_interval) beside the percentile
bootstrap of the same debiased estimate (200 resamples) and bece's
posteriors (binned model; the default smooth model on fewer data sets,
``--sun-smooth R``), all on the same bins, on the authors' simulation design
(github.com/sylydya/CI-ECE, experiments/data.py, settings 1 and 2: two
classes, n = 1000, 50 uniform bins, top-1 confidence; P(class 0) = Z0 with Z0
~ U(0, 1) (setting 1) or the top probability ~ Beta(5, 0.5) on a random
class (setting 2); the outcome's probability sigmoid(beta * logit Z0), so
beta = 1 is calibrated) and on p ~ U(0, 1), y ~ Bernoulli(p^k), 15 bins.
Their data.py adds an intercept beta0 = 1 while their truth (plot.ipynb)
uses beta0 = 0; beta0 = 0 is used here, the only one under which beta = 1
is calibrated. The truth is the binned l2 ECE of the population on those
bins (numerical integration), which every interval here estimates (the
paper's figures use the unbinned l2 ECE). Written to
docs/tables/l2_coverage.md (``--markdown``).

Usage: python benchmarks/l2_coverage.py [--reps-binned 300] [--reps-smooth 60]
       [--ns 300,1000,5000] [--powers 1.5,3] [--bootstrap 0]
       python benchmarks/l2_coverage.py --sun 200 [--sun-smooth 40] [--markdown PATH]
"""

from __future__ import annotations

import argparse
import datetime
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy import integrate, stats

import bece
from bece._metrics.l2_interval import l2_interval_from_sums
from bece.metrics import bootstrap_interval, l2_calibration_error, l2_ece_draws, l2_ece_interval

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
    ap.add_argument("--sun", type=int, default=0, help="data sets per row of the Sun et al. table")
    ap.add_argument("--sun-smooth", type=int, default=40,
                    help="data sets per row for the default (smooth) posterior")
    ap.add_argument("--default-only", type=int, default=0, metavar="R",
                    help="recompute only the default posterior column of the table in --markdown "
                    "on the first R data sets of each of its rows (the same data sets as the other "
                    "columns), row by row, keeping the other columns")
    ap.add_argument("--designs", default="simu1,simu2,power")
    ap.add_argument("--pars", default=None,
                    help="beta (simu1, simu2) or k (power) values of the Sun et al. table")
    ap.add_argument("--markdown", default=str(Path(__file__).resolve().parent.parent / "docs"
                                              / "tables" / "l2_coverage.md"))
    args = ap.parse_args()
    if args.default_only:
        default_only(args.default_only, Path(args.markdown))
        return
    if args.sun:
        pars = None if args.pars is None else [float(v) for v in args.pars.split(",")]
        sun_table(args.sun, args.sun_smooth, args.designs.split(","), Path(args.markdown), pars,
                  [int(v) for v in args.ns.split(",")])
        return
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


# --- the Sun et al. (2024) table ------------------------------------------


def _sigmoid_q(c: np.ndarray, beta: float) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-beta * np.log(c / (1.0 - c))))


def _sun_density(design: str) -> Callable[[float], float]:
    """Density of the top-1 confidence on [1/2, 1] of the authors' settings."""
    if design == "simu1":
        return lambda c: 2.0
    return lambda c: stats.beta.pdf(c, 5, 0.5) + stats.beta.pdf(1 - c, 5, 0.5)


def sun_truth(design: str, beta: float, m: int) -> float:
    """Binned l2 ECE of the authors' setting 1 or 2 (accuracy at confidence
    c is sigmoid(beta * logit c): symmetric in the two classes when beta0 = 0)
    on m uniform bins, by quadrature."""
    f = _sun_density(design)
    e = np.linspace(0, 1, m + 1)
    total = 0.0
    for lo, hi in zip(e[:-1], e[1:]):
        lo, hi = max(lo, 0.5), min(hi, 1.0 - 1e-15)
        if hi <= lo:
            continue
        w = integrate.quad(f, lo, hi, limit=200)[0]
        g = integrate.quad(lambda c: (_sigmoid_q(c, beta) - c) * f(c), lo, hi, limit=200)[0]
        total += g * g / w
    return float(np.sqrt(total))


def sun_data(design: str, par: float, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(correct, confidence) of one data set."""
    if design == "power":
        p = rng.uniform(size=n)
        return (rng.uniform(size=n) < p**par).astype(np.int64), p
    if design == "simu1":
        z0 = rng.uniform(size=n)
    else:
        top = rng.beta(5, 0.5, size=n)
        z0 = np.where(rng.integers(0, 2, size=n) == 0, top, 1.0 - top)
    z0 = np.clip(z0, 1e-12, 1 - 1e-12)
    class0 = rng.uniform(size=n) < _sigmoid_q(z0, par)
    conf = np.maximum(z0, 1.0 - z0)
    correct = np.where(z0 >= 0.5, class0, ~class0).astype(np.int64)
    return correct, conf


def _bootstrap_sun(z: np.ndarray, p: np.ndarray, m: int, prob: float, n_boot: int,
                   rng: np.random.Generator) -> tuple[float, float]:
    """Percentile bootstrap of sqrt(max(T, 0)) (the same interval as
    bece.metrics.bootstrap_interval(l2_ece_interval...), vectorised)."""
    n = p.size
    b = np.minimum((p * m).astype(np.int64), m - 1)
    u = z - p
    idx = rng.integers(0, n, size=(n_boot, n))
    flat = (np.arange(n_boot)[:, None] * m + b[idx]).ravel()
    uu = u[idx].ravel()
    cnt = np.bincount(flat, minlength=n_boot * m).reshape(n_boot, m)
    s1 = np.bincount(flat, weights=uu, minlength=n_boot * m).reshape(n_boot, m)
    s2 = np.bincount(flat, weights=uu * uu, minlength=n_boot * m).reshape(n_boot, m)
    est = np.array([l2_interval_from_sums(cnt[r], s1[r], s2[r], prob=prob).estimate
                    for r in range(n_boot)])
    lo, hi = np.quantile(est, [(1 - prob) / 2, (1 + prob) / 2])
    return float(lo), float(hi)


def sun_table(reps: int, reps_smooth: int, designs: list[str], out: Path,
              pars: list[float] | None = None, ns: tuple[int, ...] | list[int] = (300, 1000, 5000),
              ) -> None:
    prob = 0.9
    rows: list[tuple[str, float, int, int, float]] = []
    for d in designs:
        if d in ("simu1", "simu2"):
            # calibrated (beta = 1): exactly 0, not quadrature's rounding
            rows += [(d, beta, 1000, 50, sun_truth(d, beta, 50) if beta != 1 else 0.0)
                     for beta in (pars or (0.0, 0.5, 0.8, 0.9, 0.95, 1.0))]
        elif d == "power":
            rows += [(d, k, n, 15, truth(k)[1] if k != 1 else 0.0)
                     for k in (pars or (1.5, 1.0)) for n in ns]
        else:
            raise SystemExit(f"unknown design {d!r}")
    head = ("| design | beta / k | n | bins | true l2 ECE | Sun et al. cover | width | "
            "bootstrap cover | width | binned posterior cover | width | "
            f"default posterior cover (R = {reps_smooth}) | width |")
    lines = [head, "|" + "---|" * 13]
    print(head, flush=True)
    for d, par, n, m, t2 in rows:
        rng = np.random.default_rng([designs.index(d), int(1000 * par), n])
        cover = np.zeros(4)
        width = np.zeros(4)
        start = time.time()
        for r in range(reps):
            z, p = sun_data(d, par, n, rng)
            iv = l2_ece_interval(z, p, n_bins=m, prob=prob)
            ends = [(iv.low, iv.high), _bootstrap_sun(z, p, m, prob, 200, rng)]
            post = bece.bayesian_ece(z, p, model="binned", n_bins=m, num_samples=2000, seed=r)
            ends.append(tuple(np.quantile(l2_ece_draws(post), [(1 - prob) / 2, (1 + prob) / 2])))
            if r < reps_smooth:
                post = bece.bayesian_ece(z, p, n_bins=m, num_samples=2000, seed=r)
                ends.append(tuple(np.quantile(l2_ece_draws(post),
                                              [(1 - prob) / 2, (1 + prob) / 2])))
            for j, (lo, hi) in enumerate(ends):
                cover[j] += lo <= t2 <= hi
                width[j] += hi - lo
        count = np.array([reps, reps, reps, min(reps, reps_smooth)], dtype=float)
        c, w = cover / count, width / count
        line = (f"| {d} | {par:g} | {n} | {m} | {t2:.4f} | "
                + " | ".join(f"{c[j]:.3f} | {w[j]:.4f}" for j in range(4)) + " |")
        lines.append(line)
        print(line, f"({time.time() - start:.0f} s)", flush=True)
        _write(out, lines, reps, reps_smooth, prob)  # after every row: a stopped run keeps its rows
    print(f"written to {out}")


def default_only(reps: int, out: Path) -> None:
    """The default posterior column of an existing table, on R data sets per row.

    Each row's data sets are drawn as :func:`sun_table` drew them in a run of
    one design (its generator seeded ``[0, 1000 * par, n]``; each data set
    followed by the bootstrap's 200 x n resample indices, drawn here and not
    used), so the column covers the first R data sets of the other columns.
    The table is rewritten after every row; a stopped run keeps its rows.
    """
    prob = 0.9
    text = out.read_text().split("\n")
    rows = [i for i, line in enumerate(text) if re.match(r"\| (simu1|simu2|power) \|", line)]
    for i in rows:
        cells = [c.strip() for c in text[i].strip().strip("|").split("|")]
        d, par, n, m, t2 = cells[0], float(cells[1]), int(cells[2]), int(cells[3]), float(cells[4])
        if d in ("simu1", "simu2"):
            t2 = sun_truth(d, par, m) if par != 1 else 0.0
        else:
            t2 = truth(par)[1] if par != 1 else 0.0
        rng = np.random.default_rng([0, int(1000 * par), n])
        cover = width = 0.0
        start = time.time()
        for r in range(reps):
            z, p = sun_data(d, par, n, rng)
            rng.integers(0, n, size=(200, n))  # the bootstrap's draws in sun_table
            post = bece.bayesian_ece(z, p, n_bins=m, num_samples=2000, seed=r)
            lo, hi = np.quantile(l2_ece_draws(post), [(1 - prob) / 2, (1 + prob) / 2])
            cover += lo <= t2 <= hi
            width += hi - lo
        cells[11:14] = [f"{cover / reps:.3f}", f"{width / reps:.4f}", str(reps)]
        text[i] = "| " + " | ".join(cells) + " |"
        print(text[i], f"({time.time() - start:.0f} s)", flush=True)
        cmd = "python benchmarks/l2_coverage.py " + " ".join(sys.argv[1:])
        done = rows.index(i) + 1
        text[0] = re.sub(r" The default posterior column: .*$", "", text[0]) + (
            f" The default posterior column: `{cmd}` on {datetime.date.today().isoformat()}"
            f" (R = {reps} in its first {done} of {len(rows)} rows).")
        text[2] = default_caption(text[2], [int(text[j].strip().strip("|").split("|")[13])
                                            for j in rows])
        out.write_text("\n".join(text))


def default_caption(line: str, reps: list[int]) -> str:
    """The caption's words on the default posterior column, for its R values."""
    se = ", ".join(f"{np.sqrt(0.09 / r):.2f} at {r}" for r in sorted(set(reps), reverse=True))
    return re.sub(r"except the default posterior column \(R default data sets[^;]*;",
                  f"except the default posterior column (R default data sets, the last column: "
                  f"s.e. {se};", line)


def _write(out: Path, lines: list[str], reps: int, reps_smooth: int, prob: float) -> None:
    se = np.sqrt(prob * (1 - prob) / reps)
    se_s = np.sqrt(prob * (1 - prob) / max(1, min(reps, reps_smooth)))
    cmd = "python benchmarks/l2_coverage.py " + " ".join(sys.argv[1:])
    text = "\n".join([
        f"Produced by `{cmd}` on {datetime.date.today().isoformat()}.",
        "",
        f"Coverage of 90% intervals for the binned l2 ECE ({reps} data sets per row; Monte Carlo "
        f"s.e. of a coverage near 0.9: {se:.3f}, default posterior column {se_s:.3f}); widths on "
        "the ECE scale. simu1/simu2: the simulation settings 1 and 2 of Sun, Chaudhari, Barnett & "
        "Dobriban (2024) with beta0 = 0 (beta = 1 calibrated); power: p ~ U(0, 1), "
        "y ~ Bernoulli(p^k) (k = 1 calibrated). Sun et al.: bece.metrics.l2_ece_interval; "
        "bootstrap: percentile, 200 resamples of the same debiased estimate; binned posterior: "
        "bece.bayesian_ece(model='binned') and bece.metrics.l2_ece_draws; default posterior: "
        "bece.bayesian_ece() (the smooth model averaged with exact calibration). A true value "
        "of 0 is covered when the interval reaches 0.",
        "",
        *lines,
        "",
    ])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)


if __name__ == "__main__":
    main()
