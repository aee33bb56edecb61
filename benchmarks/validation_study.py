"""Validation study: coverage and bias of ECE intervals, and the calibration test.

Run (repository root):

    python benchmarks/validation_study.py            # full: 80 replications (~25 min, 1 core)
    python benchmarks/validation_study.py --quick    # 20 replications, n <= 1000

Synthetic binary problems with a known *population* binned ECE (15 uniform
bins), following Roelofs et al. (2022): confidences p ~ Beta(a, b) and
E[y | p] = p^d, plus a step-shaped (staircase) curve and an under-confident
(temperature < 1) curve. The truth is

    ECE = sum_m | integral over bin m of (E[y | p] - p) Beta(p; a, b) dp |

by ``scipy.integrate.quad`` per bin (breakpoints at the staircase's jumps;
quad's error estimate is below 1e-10 here). For each problem, n and
replication, from one data set:

* ``default``: 90% equal-tailed interval and mean of ``bece.bayesian_ece``
  with its defaults (what a user reads first: the smooth model averaged with
  exact calibration, whose interval can reach 0);
* ``binned``: the same for ``bece.bayesian_ece(model="binned")`` (the binned
  BECE posterior, closed form);
* ``smooth``: the same for the smooth model alone
  (``bece._smooth.posterior.smooth_ece(prior_odds=0, zero_gap_prior=0)``: Laplace,
  averaged neither with exact calibration nor with a zero gap per bin);
* ``bootstrap``: the percentile interval of the plug-in ECE over
  ``--boot`` resamples of the data; its point estimate is the plug-in ECE;
* the calibration test (``bece._smooth.bayes_factor``): the consistency-resampling
  p-value (rejects at 0.05) and the Bayes factor (``prob_calibrated`` below
  0.5 counts as deciding "miscalibrated"). The Bayes factor comes from the
  same smooth fit as the interval.

Printed: per (problem, n) the true ECE, coverage of each interval (its
Monte Carlo standard error is sqrt(c(1-c)/R), 0.034 at c = 0.9 and R = 80),
mean interval width, bias of each point estimate (posterior mean; plug-in
for the bootstrap; the default's with its Monte Carlo standard error), the
goal (on the default, as in the code of ``summarise``) and the test's
rejection rates. ``--out FILE.csv`` also writes every
replication; ``--summarise FILE.csv`` prints the tables again from it.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import integrate, special, stats

import bece
from bece._smooth.atoms import DEFAULT_SUBCELLS, EXACT_MAX_N, make_atoms
from bece._smooth.bayes_factor import resampled_ece
from bece._smooth.posterior import smooth_ece
from bece._stats.binning import make_binning

N_BINS = 15
LEVEL = 0.9
METHODS = ("default", "binned", "smooth", "bootstrap")
TEST_LEVEL = 0.05


@dataclass(frozen=True)
class Problem:
    """p ~ Beta(a, b); E[y | p] = curve(p); ``breaks``: where curve jumps."""

    name: str
    a: float
    b: float
    curve: Callable[[np.ndarray], np.ndarray]
    breaks: tuple[float, ...] = ()
    description: str = ""

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        p = rng.beta(self.a, self.b, size=n)
        y = (rng.uniform(size=n) < self.curve(p)).astype(np.int64)
        return y, p

    def true_ece(self, n_bins: int = N_BINS) -> float:
        """Population binned ECE with uniform bins, by quadrature per bin."""
        dens = stats.beta(self.a, self.b).pdf
        edges = np.linspace(0.0, 1.0, n_bins + 1)
        total = 0.0
        for lo, hi in zip(edges[:-1], edges[1:]):
            pts = [t for t in self.breaks if lo < t < hi]
            val, err = integrate.quad(
                lambda t: (float(self.curve(np.array([t]))[0]) - t) * dens(t), lo, hi,
                points=pts or None, limit=200, epsabs=1e-13, epsrel=1e-11,
            )
            if err > 1e-9:  # pragma: no cover - a problem the integrator cannot do
                raise RuntimeError(f"quad error {err:.1e} in bin [{lo}, {hi}] of {self.name}")
            total += abs(val)
        return total


def _power(d: float) -> Callable[[np.ndarray], np.ndarray]:
    return lambda p: np.asarray(p, dtype=np.float64) ** d


def _staircase(p):
    # five flat steps 0.1, 0.3, ..., 0.9 on [0, .2), [.2, .4), ...
    return (np.minimum(np.floor(np.asarray(p) * 5.0), 4.0) + 0.5) / 5.0


def _underconfident(p):
    # the truth is sharper than the prediction: temperature 1/1.6
    return special.expit(1.6 * special.logit(np.clip(p, 1e-300, 1.0)))


PROBLEMS = (
    Problem("calibrated", 1.0, 1.0, _power(1.0), description="Beta(1,1), E[y|p] = p"),
    Problem("beta11-d1.25", 1.0, 1.0, _power(1.25), description="Beta(1,1), p^1.25"),
    Problem("beta51-d1.5", 5.0, 1.0, _power(1.5), description="Beta(5,1), p^1.5 (confident)"),
    Problem("beta51-d1.1", 5.0, 1.0, _power(1.1), description="Beta(5,1), p^1.1 (small ECE)"),
    Problem("beta22-d0.8", 2.0, 2.0, _power(0.8), description="Beta(2,2), p^0.8"),
    Problem("step", 1.0, 1.0, _staircase, breaks=(0.2, 0.4, 0.6, 0.8),
            description="Beta(1,1), staircase 0.1, 0.3, ..., 0.9"),
    Problem("underconfident", 2.0, 2.0, _underconfident,
            description="Beta(2,2), sigmoid(1.6 logit p)"),
)


def bootstrap_ece(y: np.ndarray, p: np.ndarray, num_boot: int, rng: np.random.Generator,
                  n_bins: int = N_BINS) -> np.ndarray:
    """Plug-in ECE of ``num_boot`` resamples (with replacement) of the data."""
    n = p.size
    b = make_binning(p, n_bins).index(p)
    out = np.empty(num_boot)
    step = max(1, 2_000_000 // n)
    for s in range(0, num_boot, step):
        e = min(num_boot, s + step)
        idx = rng.integers(0, n, size=(e - s, n))
        key = (np.arange(e - s)[:, None] * n_bins + b[idx]).ravel()
        c = np.bincount(key, weights=y[idx].ravel(), minlength=(e - s) * n_bins)
        sp = np.bincount(key, weights=p[idx].ravel(), minlength=(e - s) * n_bins)
        out[s:e] = np.abs(c - sp).reshape(e - s, n_bins).sum(axis=1) / n
    return out


def data_and_default(problem: Problem, n: int, rng: np.random.Generator, num_samples: int):
    """``(y, p, default)``: one data set and ``bece.bayesian_ece`` on it, the first to
    use ``rng`` after the data (so :func:`update_default` can redo it alone)."""
    y, p = problem.sample(n, rng)
    return y, p, bece.bayesian_ece(y, p, n_bins=N_BINS, num_samples=num_samples, seed=rng)


def replicate(problem: Problem, n: int, rng: np.random.Generator, *, num_samples: int,
              num_boot: int, num_resamples: int) -> dict:
    """One data set: intervals and point estimates of each method, and the tests."""
    y, p, default = data_and_default(problem, n, rng, num_samples)
    lo_q, hi_q = (1 - LEVEL) / 2, (1 + LEVEL) / 2
    binned = bece.bayesian_ece(y, p, n_bins=N_BINS, num_samples=num_samples, seed=rng,
                               model="binned")
    smooth = smooth_ece(y, p, n_bins=N_BINS, num_samples=num_samples, seed=rng, prior_odds=0.0,
                        zero_gap_prior=0.0)
    boot = bootstrap_ece(y, p, num_boot, rng)
    atoms = make_atoms(y, p, make_binning(p, N_BINS), None if n <= EXACT_MAX_N else DEFAULT_SUBCELLS)
    stat, resampled = resampled_ece(atoms, num_resamples, rng)
    p_value = (1 + np.count_nonzero(resampled >= stat)) / (num_resamples + 1)
    log_bf = smooth.params.log_bayes_factor
    out = {"plugin": binned.plugin, "p_value": p_value,
           "prob_calibrated": 1.0 / (1.0 + np.exp(-log_bf))}
    for name, draws, point in (("default", default.draws, default.mean),
                               ("binned", binned.draws, binned.mean),
                               ("smooth", smooth.draws, smooth.mean),
                               ("bootstrap", boot, binned.plugin)):
        lo, hi = np.quantile(draws, [lo_q, hi_q])
        out.update({f"{name}_lo": lo, f"{name}_hi": hi, f"{name}_point": point})
    return out


def run_study(problems=PROBLEMS, ns=(100, 300, 1000, 10_000), reps: int = 80, seed: int = 0,
              num_samples: int = 1000, num_boot: int = 500, num_resamples: int = 300,
              progress: bool = False):
    """Every replication of every (problem, n) as a pandas DataFrame (one row each)."""
    import pandas as pd

    rows = []
    for i, prob in enumerate(problems):
        truth = prob.true_ece()
        for n in ns:
            t0 = time.perf_counter()
            for r in range(reps):
                rng = np.random.default_rng([seed, i, n, r])
                rec = replicate(prob, n, rng, num_samples=num_samples, num_boot=num_boot,
                                num_resamples=num_resamples)
                rows.append({"problem": prob.name, "n": n, "rep": r, "truth": truth, **rec})
            if progress:
                print(f"  {prob.name:>15} n={n:>6}: {reps} reps in {time.perf_counter() - t0:.1f} s",
                      file=sys.stderr, flush=True)
    return pd.DataFrame(rows)


def update_default(records, seed: int = 0, num_samples: int = 1000, out=None):
    """``records`` with the ``default`` columns recomputed by the current
    ``bece.bayesian_ece`` on the same data sets: each replication's generator
    is rebuilt from its seed and :func:`data_and_default`, which :func:`replicate`
    calls first, run again, so the new columns are what a full run would give (the other columns, drawn after
    it, stay as they were). With ``out``, written there after each (problem, n)."""
    lo_q, hi_q = (1 - LEVEL) / 2, (1 + LEVEL) / 2
    records = records.copy()
    index = {p.name: (i, p) for i, p in enumerate(PROBLEMS)}
    for (name, n), g in records.groupby(["problem", "n"], sort=False):
        i, prob = index[name]
        t0 = time.perf_counter()
        for row, r in zip(g.index, g["rep"]):
            rng = np.random.default_rng([seed, i, int(n), int(r)])
            default = data_and_default(prob, int(n), rng, num_samples)[2]
            lo, hi = np.quantile(default.draws, [lo_q, hi_q])
            records.loc[row, ["default_lo", "default_hi", "default_point"]] = [lo, hi, default.mean]
        if out:
            records.to_csv(out, index=False)
        print(f"  {name:>15} n={n:>6}: default of {len(g)} reps in {time.perf_counter() - t0:.1f} s",
              file=sys.stderr, flush=True)
    return records


def summarise(records):
    """Coverage, width and bias per (problem, n, method); test rejection rates."""
    import pandas as pd

    out = []
    for (prob, n), g in records.groupby(["problem", "n"], sort=False):
        truth = float(g["truth"].iloc[0])
        row = {"problem": prob, "n": n, "reps": len(g), "true_ece": truth}
        for m in METHODS:
            cov = ((g[f"{m}_lo"] <= truth) & (truth <= g[f"{m}_hi"])).mean()
            row[f"cov_{m}"] = cov
            row[f"cov_se_{m}"] = np.sqrt(cov * (1 - cov) / len(g))
            row[f"width_{m}"] = (g[f"{m}_hi"] - g[f"{m}_lo"]).mean()
        for name, col in (("default", "default_point"), ("binned", "binned_point"),
                          ("smooth", "smooth_point"), ("plugin", "plugin")):
            err = g[col] - truth
            row[f"bias_{name}"] = err.mean()
            row[f"bias_se_{name}"] = err.std(ddof=1) / np.sqrt(len(g))
        row["reject_pvalue"] = (g["p_value"] <= TEST_LEVEL).mean()
        row["reject_bayes"] = (g["prob_calibrated"] < 0.5).mean()
        # the goal, judged on the default posterior: where n >= 300 and the true
        # ECE is 0 (the interval must then include 0) or at least 0.01, 90%
        # intervals cover >= 0.85 allowing two Monte Carlo standard errors,
        # and the posterior mean is no more biased than the plug-in wherever
        # the plug-in's bias is resolvable (at least 3 Monte Carlo s.e.)
        row["goal_applies"] = bool(n >= 300 and (truth == 0.0 or truth >= 0.01))
        resolvable = abs(row["bias_plugin"]) >= 3 * row["bias_se_plugin"]
        row["goal_met"] = bool(
            row["cov_default"] >= 0.85 - 2 * np.sqrt(0.85 * 0.15 / len(g))
            and (not resolvable or abs(row["bias_default"]) <= abs(row["bias_plugin"])))
        out.append(row)
    return pd.DataFrame(out)


def markdown(summary) -> str:
    """The study's two tables in markdown."""
    lines = [
        "| problem | n | true ECE | coverage default | binned | smooth | bootstrap | width default "
        "| binned | smooth | bootstrap | bias default (± MC se) | binned | smooth | plug-in | goal |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for _, r in summary.iterrows():
        goal = ("met" if r.goal_met else "**not met**") if r.goal_applies else "n/a"
        lines.append(
            f"| {r.problem} | {r.n} | {r.true_ece:.4f} | {r.cov_default:.2f} | {r.cov_binned:.2f} "
            f"| {r.cov_smooth:.2f} | {r.cov_bootstrap:.2f} | {r.width_default:.3f} "
            f"| {r.width_binned:.3f} | {r.width_smooth:.3f} | {r.width_bootstrap:.3f} "
            f"| {r.bias_default:+.4f} ± {r.bias_se_default:.4f} | {r.bias_binned:+.4f} "
            f"| {r.bias_smooth:+.4f} | {r.bias_plugin:+.4f} | {goal} |"
        )
    lines += [
        "",
        "| problem | n | true ECE | test rejects (p-value <= 0.05) | Bayes factor decides miscalibrated "
        "(P(calibrated) < 0.5) |",
        "|---|---:|---:|---:|---:|",
    ]
    for _, r in summary.iterrows():
        lines.append(f"| {r.problem} | {r.n} | {r.true_ece:.4f} | {r.reject_pvalue:.3f} "
                     f"| {r.reject_bayes:.3f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="20 replications, n in 100, 300, 1000")
    ap.add_argument("--reps", type=int, default=None, help="replications (default 80; quick 20)")
    ap.add_argument("--n", type=int, nargs="+", default=None, help="sample sizes")
    ap.add_argument("--samples", type=int, default=1000, help="posterior draws per fit")
    ap.add_argument("--boot", type=int, default=500, help="bootstrap resamples")
    ap.add_argument("--resamples", type=int, default=300, help="consistency resamples")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="write every replication to this CSV")
    ap.add_argument("--summarise", default=None, metavar="CSV",
                    help="print the tables of a CSV written by --out instead of running")
    ap.add_argument("--update-default", default=None, metavar="CSV",
                    help="recompute the default's columns of a CSV written by --out (same data "
                         "sets; written to --out) and print the tables")
    args = ap.parse_args(argv)
    if args.update_default:
        import pandas as pd

        records = update_default(pd.read_csv(args.update_default), seed=args.seed,
                                 num_samples=args.samples, out=args.out)
        print(markdown(summarise(records)))
        return 0
    if args.summarise:
        import pandas as pd

        print(markdown(summarise(pd.read_csv(args.summarise))))
        return 0
    reps = args.reps or (20 if args.quick else 80)
    ns = tuple(args.n or ((100, 300, 1000) if args.quick else (100, 300, 1000, 10_000)))
    t0 = time.perf_counter()
    records = run_study(ns=ns, reps=reps, seed=args.seed, num_samples=args.samples,
                        num_boot=args.boot, num_resamples=args.resamples, progress=True)
    if args.out:
        records.to_csv(args.out, index=False)
    print(f"Validation study: {reps} replications per (problem, n), {N_BINS} uniform bins, "
          f"{int(LEVEL * 100)}% intervals, {args.samples} posterior draws, {args.boot} bootstrap "
          f"resamples, {args.resamples} consistency resamples; {time.perf_counter() - t0:.0f} s.\n")
    print(markdown(summarise(records)))
    return 0


if __name__ == "__main__":
    from doc_tables import run_main  # --markdown PATH: the tables for docs/tables/

    sys.exit(run_main(main, __file__))
