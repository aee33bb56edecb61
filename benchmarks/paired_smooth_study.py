"""Paired smooth comparison: coverage of the true ECE difference and the width
of the paired interval against two independent posteriors.

For each problem (a pair of known calibration maps) and n, each replication
draws a test set, fits both models' smooth curve posteriors once
(:class:`bece._smooth.paired.PairedSide`) and draws the difference twice from
the same fits: paired (:func:`bece._smooth.paired.paired_draws`, the
construction of ``bece.compare(..., model="smooth")``) and independent
(``coupled=False``: each model's own perturbations, hyper-parameter points and
bootstrap weights, i.e. two independent posteriors). Printed per row: the true
difference ECE_A - ECE_B (population binned ECE, 15 uniform bins), the
coverage of the paired 90% equal-tailed interval (Monte Carlo SE
sqrt(0.09 / reps) = 0.021 at 200 replications), that of the independent one,
the mean paired width and the median ratio paired / independent width, the
bias of the posterior mean of the difference and of the plug-in difference.
The averaged columns apply each model's posterior probability of exact
calibration (prior odds ``--odds``, default that of ``bece.bayesian_ece``) to
the same paired draws (:mod:`bece._smooth.paired_average`): "avg shared" draws
both models' indicators from one uniform, "avg indep" from two; "robust" (the
interval of ``bece.compare``) runs from the lowest to the highest end of the
intervals under four priors, each model's prior odds 0 or ``--odds``, from
the "avg indep" indicators (:func:`bece._results.comparison.differences_under_priors`);
"0 in" is the
fraction of replications whose 90% interval contains 0 (the honest answer
where the true difference is 0).

Problems. Binary: s ~ Beta(2, 2) is the true P(y = 1); A and B predict
expit(k logit s + c). Top-label (K = 10): true logits l ~ N(0, 2^2 I),
y ~ softmax(l); A predicts softmax(l / T_A), B softmax((l + xi) / T_B) with
xi ~ N(0, s_xi^2 I) its own noise (s_xi > 0: the two models sometimes
predict different labels). Calibrated rows: A = s itself (k = 1, c = 0:
ECE_A = 0); "both-calibrated" has B predict E[s | s in its tenth of [0, 1]]
(10 levels, each exactly calibrated: ECE_B = 0, true difference 0); top-label
T = 1 without noise is calibrated. Truth: binary by quadrature over s (200,000
mid-points), top-label by Monte Carlo over 2 * 10^6 examples (standard error
of the truth below 2e-4).

Usage: nice -n 5 python benchmarks/paired_smooth_study.py [--reps 200] [--ns 300,1000,10000]
       [--draws 1000] [--problems a,b] [--jobs 1]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from bece._binned.compare import binned_compare as compare
from bece._results.comparison import differences_under_priors
from bece._smooth.atoms import check_grid
from bece._smooth.average import DEFAULT_PRIOR_ODDS, prob_calibrated
from bece._smooth.paired import PairedSide, paired_draws
from bece._smooth.paired_average import DEFAULT_COUPLING, calibrated_picks
from bece._stats.binning import make_binning

try:
    import doc_tables
except ImportError:  # imported as benchmarks.paired_smooth_study
    from benchmarks import doc_tables

N_BINS = 15
K = 10


@dataclass(frozen=True)
class Problem:
    name: str
    kind: str  # "binary" or "top-label"
    a: tuple[float, float]  # binary: (k, c); top-label: (T, s_xi)
    b: tuple[float, float]
    b_levels: int = 0  # > 0: B predicts E[s | level] on this many equal-width levels of s


PROBLEMS = {
    p.name: p for p in [
        Problem("similar-temps", "binary", (1.4, 0.0), (1.25, 0.0)),
        Problem("shift-vs-temp", "binary", (1.6, 0.0), (0.9, 0.2)),
        Problem("under-vs-over", "binary", (0.7, 0.0), (1.5, 0.0)),
        Problem("tl-similar-temps", "top-label", (0.7, 0.0), (0.8, 0.0)),
        Problem("tl-own-noise", "top-label", (0.7, 0.0), (1.0, 1.0)),
        Problem("both-calibrated", "binary", (1.0, 0.0), (1.0, 0.0), b_levels=10),
        Problem("calibrated-vs-temp", "binary", (1.0, 0.0), (1.25, 0.0)),
        Problem("tl-calibrated-vs-temp", "top-label", (1.0, 0.0), (0.8, 0.0)),
        # designs the study was not tuned on: over- against under-confident
        # (A expit(1.3 logit s + 0.1), B expit(0.85 logit s)), and curves that
        # cross (an over-confident A against a shifted, under-confident B)
        Problem("over-vs-under", "binary", (1.3, 0.1), (0.85, 0.0)),
        Problem("crossing", "binary", (1.5, 0.0), (0.75, -0.3)),
    ]
}


def _ece(gap: np.ndarray, p: np.ndarray, w: np.ndarray) -> float:
    b = np.minimum((p * N_BINS).astype(np.int64), N_BINS - 1)
    return float(np.abs(np.bincount(b, weights=w * gap, minlength=N_BINS)).sum() / w.sum())


def _binary_predict(s: np.ndarray, kc: tuple[float, float], levels: int = 0) -> np.ndarray:
    if levels:  # E[s | s in [j/L, (j+1)/L)] under Beta(2, 2): exactly calibrated
        e = np.arange(levels + 1) / levels
        mass, first = 3 * e**2 - 2 * e**3, 2 * e**3 - 1.5 * e**4
        mean = np.diff(first) / np.diff(mass)
        return mean[np.minimum((s * levels).astype(np.int64), levels - 1)]
    return special.expit(kc[0] * special.logit(s) + kc[1])


def _top_label_predict(logits: np.ndarray, tx: tuple[float, float],
                       rng: np.random.Generator) -> np.ndarray:
    t, sx = tx
    noisy = logits + sx * rng.standard_normal(logits.shape) if sx > 0 else logits
    return special.softmax(noisy / t, axis=1)


def truth(problem: Problem) -> tuple[float, float]:
    """ECE_A and ECE_B of the population (quadrature or Monte Carlo, module docstring)."""
    if problem.kind == "binary":
        s = (np.arange(200_000) + 0.5) / 200_000
        w = stats.beta.pdf(s, 2, 2)
        # calibrated by construction (A = s; B's levels at their conditional means):
        # exactly 0, not the quadrature's rounding of it
        e = [0.0 if lv or m == (1.0, 0.0) else
             _ece(s - _binary_predict(s, m, lv), _binary_predict(s, m, lv), w)
             for m, lv in ((problem.a, 0), (problem.b, problem.b_levels))]
        return e[0], e[1]
    if problem.a == (1.0, 0.0) and problem.b == (1.0, 0.0):
        return 0.0, 0.0
    rng = np.random.default_rng(12345)
    gaps = {"a": [], "b": []}
    for _ in range(8):
        lg = 2.0 * rng.standard_normal((250_000, K))
        pi = special.softmax(lg, axis=1)
        for tag, m in (("a", problem.a), ("b", problem.b)):
            q = _top_label_predict(lg, m, rng)
            pred = q.argmax(axis=1)
            conf = q.max(axis=1)
            b = np.minimum((conf * N_BINS).astype(np.int64), N_BINS - 1)
            gaps[tag].append(np.bincount(b, weights=pi[np.arange(pred.size), pred] - conf,
                                         minlength=N_BINS))
    e = [float(np.abs(np.sum(gaps[t], axis=0)).sum() / 2e6) for t in ("a", "b")]
    # softmax(l) itself (T = 1, no noise) is calibrated: exactly 0, not Monte Carlo noise
    e = [0.0 if m == (1.0, 0.0) else v for m, v in zip((problem.a, problem.b), e)]
    return e[0], e[1]


def simulate(problem: Problem, n: int, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """Outcomes and confidences of both models, and whether they predict the same label."""
    if problem.kind == "binary":
        s = rng.beta(2, 2, size=n)
        y = (rng.uniform(size=n) < s).astype(np.int64)
        return (y, _binary_predict(s, problem.a), y, _binary_predict(s, problem.b, problem.b_levels),
                np.ones(n, bool))
    lg = 2.0 * rng.standard_normal((n, K))
    pi = special.softmax(lg, axis=1)
    y = (rng.uniform(size=(n, 1)) > np.cumsum(pi, axis=1)).sum(axis=1)
    y = np.minimum(y, K - 1)
    qa, qb = _top_label_predict(lg, problem.a, rng), _top_label_predict(lg, problem.b, rng)
    pa, pb = qa.argmax(axis=1), qb.argmax(axis=1)
    return ((pa == y).astype(np.int64), qa.max(axis=1), (pb == y).astype(np.int64), qb.max(axis=1),
            pa == pb)


def one_rep(args: tuple[str, int, int, int, float, bool, tuple[float, ...]]) -> tuple[float, ...]:
    name, n, rep, draws, odds, lean, more = args
    problem = PROBLEMS[name]
    rng = np.random.default_rng([n, rep, sum(map(ord, name))])
    za, pa, zb, pb, same = simulate(problem, n, rng)
    grid = check_grid("auto", n)
    a = PairedSide.fit(za, pa, make_binning(pa, N_BINS, "uniform"), grid)
    b = PairedSide.fit(zb, pb, make_binning(pb, N_BINS, "uniform"), grid)
    out = []
    for coupled in (True, False):
        if lean and not coupled:  # no independent posteriors: NaN columns
            out += [np.nan] * 3
            continue
        d = paired_draws(a, b, same, draws, rng, coupled=coupled)
        diff = d["ece_a"] - d["ece_b"]
        lo, hi = np.quantile(diff, [0.05, 0.95])
        out += [lo, hi, diff.mean()]
        if coupled:
            out += [d["ece_a"].mean(), d["ece_b"].mean()]
            pi_a = prob_calibrated(a.post.log_bayes_factor, odds)
            pi_b = prob_calibrated(b.post.log_bayes_factor, odds)
            for coupling in ("shared", "independent"):
                ia, ib = calibrated_picks(pi_a, pi_b, draws, rng, coupling)
                avg_a, avg_b = np.where(ia, 0.0, d["ece_a"]), np.where(ib, 0.0, d["ece_b"])
                out += list(np.quantile(avg_a - avg_b, [0.05, 0.95]))
            # the interval of bece.compare: over the four priors (odds 0 or O for each
            # model), from the independent indicators just drawn
            q = np.quantile(differences_under_priors(d["ece_a"], d["ece_b"], avg_a, avg_b),
                            [0.05, 0.95], axis=1)
            extra = [pi_a, pi_b, q[0].min(), q[1].max()]
            for o in more:  # other prior odds, the default coupling
                ia, ib = calibrated_picks(prob_calibrated(a.post.log_bayes_factor, o),
                                          prob_calibrated(b.post.log_bayes_factor, o), draws, rng)
                avg = np.where(ia, 0.0, d["ece_a"]) - np.where(ib, 0.0, d["ece_b"])
                extra += list(np.quantile(avg, [0.05, 0.95]))
    plug = _ece(za - pa, pa, np.ones(n)) - _ece(zb - pb, pb, np.ones(n))
    # the binned paired compare on the same data (correct/confidence pairs as binary input)
    if lean:
        return (*out, plug, np.nan, np.nan, *extra)
    if problem.kind == "binary":
        c = compare(za, pa, pb, n_bins=N_BINS, num_samples=draws, seed=rng)
    else:  # labels with [y_pred_a == y] = z_a, [y_pred_b == y] = z_b
        y = np.where(za == 1, 0, np.where(zb == 1, 1, 2))
        c = compare(y, pa, pb, y_pred_a=np.zeros(n, int), y_pred_b=np.where(same, 0, 1),
                    n_bins=N_BINS, num_samples=draws, seed=rng)
    blo, bhi = c.interval(0.9)
    return (*out, plug, blo, bhi, *extra)


def _write_table(args: argparse.Namespace, argv: list[str] | None, cols: list[str],
                 rows: list[list[str]]) -> None:
    table = "\n".join(["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols),
                       *("| " + " | ".join(r) + " |" for r in rows)])
    doc_tables.write(args.markdown, table + "\n\n" + (
        f"{args.reps} replications per row, {args.draws} joint draws; coverage of the true "
        f"difference ECE_A - ECE_B by the 90% equal-tailed interval (Monte Carlo SE "
        f"{np.sqrt(0.09 / args.reps):.3f} at 0.9); 'avg' columns: each model averaged with "
        f"exact calibration at prior odds {args.odds:g} (shared or independent indicators), "
        f"'robust': the interval of bece.compare, from the lowest to the highest end of the "
        f"intervals under the four priors that give each model prior odds 0 or {args.odds:g} "
        f"(independent indicators); "
        f"'O=': at other prior odds ({DEFAULT_COUPLING} indicators); 'mean pi': mean posterior "
        f"probability of exact "
        f"calibration at {args.odds:g}; "
        "'0 in': fraction of intervals containing 0; 'ratio': median width paired / "
        "independent posteriors."), __file__, argv)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--ns", default="300,1000,10000")
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--problems", default=",".join(PROBLEMS))
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--lean", action="store_true",
                    help="skip the independent posteriors and the binned compare (their columns: nan)")
    ap.add_argument("--odds", type=float, default=DEFAULT_PRIOR_ODDS,
                    help="prior odds of exact calibration for the averaged columns")
    ap.add_argument("--more-odds", default="0.1,0.5",
                    help="other prior odds, the default coupling (comma-separated; '' for none)")
    doc_tables.add_markdown_option(ap, __file__)
    args = ap.parse_args(argv)
    ns = [int(v) for v in args.ns.split(",")]
    names = args.problems.split(",")
    print(f"paired smooth compare: {args.reps} replications per row, {args.draws} joint draws, "
          f"90% equal-tailed intervals (coverage MC SE {np.sqrt(0.09 / args.reps):.3f}), "
          f"prior odds {args.odds:g} for the averaged columns")
    cols = ["problem", "n", "true diff", "cov paired", "0 in paired", "cov avg shared",
            "0 in avg shared", "w avg shared", "cov avg indep", "0 in avg indep", "w avg indep",
            "cov robust", "0 in robust", "w robust",
            "cov indep", "width", "ratio", "bias post", "bias plug", "bias A", "bias B",
            "cov binned", "w binned", "s/rep", "mean pi A", "mean pi B"]
    more = tuple(float(v) for v in args.more_odds.split(",") if v)
    for o in more:
        cols += [f"cov O={o:g}", f"0 in O={o:g}", f"w O={o:g}"]
    print(" | ".join(cols), flush=True)
    rows: list[list[str]] = []
    mapper: Callable[..., object]
    pool = ProcessPoolExecutor(args.jobs) if args.jobs > 1 else None
    mapper = pool.map if pool is not None else map
    try:
        for name in names:
            true_a, true_b = truth(PROBLEMS[name])
            true = true_a - true_b
            for n in ns:
                t0 = time.perf_counter()
                jobs = [(name, n, r, args.draws, args.odds, args.lean, more) for r in range(args.reps)]
                res = np.array(list(mapper(one_rep, jobs)))
                sec = (time.perf_counter() - t0) / args.reps
                lo, hi, mean, ea, eb, slo, shi, dlo, dhi, ilo, ihi, _, plug, blo, bhi = res.T[:15]
                pis, (rlo, rhi), others = res.T[15:17], res.T[17:19], res.T[19:]

                def cover(a: np.ndarray, b: np.ndarray, x: float) -> str:
                    if np.isnan(a).all():  # --lean: not computed
                        return "-"
                    return f"{np.mean((a <= x) & (x <= b)):.3f}"

                row = [name, f"{n}", f"{true:+.4f}", cover(lo, hi, true), cover(lo, hi, 0.0),
                       cover(slo, shi, true), cover(slo, shi, 0.0), f"{np.mean(shi - slo):.4f}",
                       cover(dlo, dhi, true), cover(dlo, dhi, 0.0), f"{np.mean(dhi - dlo):.4f}",
                       cover(rlo, rhi, true), cover(rlo, rhi, 0.0), f"{np.mean(rhi - rlo):.4f}",
                       cover(ilo, ihi, true), f"{np.mean(hi - lo):.4f}",
                       f"{np.median((hi - lo) / (ihi - ilo)):.2f}", f"{np.mean(mean) - true:+.4f}",
                       f"{np.mean(plug) - true:+.4f}", f"{np.mean(ea) - true_a:+.4f}",
                       f"{np.mean(eb) - true_b:+.4f}", cover(blo, bhi, true),
                       f"{np.mean(bhi - blo):.4f}", f"{sec:.2f}", f"{pis[0].mean():.3f}",
                       f"{pis[1].mean():.3f}"]
                for olo, ohi in zip(others[::2], others[1::2]):
                    row += [cover(olo, ohi, true), cover(olo, ohi, 0.0), f"{np.mean(ohi - olo):.4f}"]
                rows.append(row)
                print(" | ".join(row), flush=True)
                _write_table(args, argv, cols, rows)  # after every row: a cut run keeps its rows
    finally:
        if pool is not None:
            pool.shutdown()


if __name__ == "__main__":
    main()
