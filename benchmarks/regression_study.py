"""Validation study of regression calibration: coverage of the cal score's
intervals, and the calibration test's false-alarm rate and power.

Run (repository root):

    python benchmarks/regression_study.py                 # full (about 2 h on 1 core)
    python benchmarks/regression_study.py --quick         # 30 replications, n <= 1000

Forecasters of a heteroscedastic target (x ~ U(-2, 2), y ~ N(2 sin x,
(0.5 + 0.5|x|)^2)): the forecast for each target is N(mu + d sd, (k sd)^2)
with mu, sd the truth's, i.e. calibrated (k = 1, d = 0), predictive sd x 0.5,
x 0.7, x 1.5, and mean shifted by d = 0.3 sd. Three forecast forms:

* ``gaussian``: the PIT Phi((y - mean) / std);
* ``sample``: S = 100 draws of the forecast, randomised PIT;
* ``quantile``: the forecast's quantiles at the 99 levels 0.01..0.99,
  randomised PIT (uniform tails).

The population calibration curve C(p) = P(PIT <= p) at the 99 levels
0.01..0.99 (bece's default) and its cal score sum_j (p_j - C(p_j))^2 are
exact: for the Gaussian and quantile forms C(p) = Phi(k Phi^-1(p) + d) (at
the quantile forecast's own levels its PIT is <= p exactly when y is below
the p-quantile); for the sample form the rank R of y among the S draws has
P(R = r) = E[Binom(r; S, F(y))], F(y) = Phi((y - d) / k) for a standard
normal y, by the trapezoid rule on a fine grid, and the randomised PIT
(R + V)/(S + 1) has C(p) = sum_r P(R = r) clip(p (S + 1) - r, 0, 1).

Coverage table, per (forecaster, form, n), over R replications: the true
cal score, the coverage of the 90% equal-tailed interval of
``bayesian_calibration_error`` (default: the smooth model), the rate at
which that interval includes 0, its mean width, the bias of the posterior
mean and of the plug-in, the mean posterior probability of calibration, and
the coverage of ``model="dirichlet"`` (the previous default) for reference.
Its Monte Carlo standard error is sqrt(c(1-c)/R): 0.021 at c = 0.9 and R =
200. The goal: coverage >= 0.85 - 2 sqrt(0.85 * 0.15 / R) for the
miscalibrated rows, includes-0 rate at least the same for the calibrated
ones. n = 10^5 goes through the statistics path: PIT histograms of chunks
of 20,000 forecasts, added.

Test table (``calibration_test`` and its alternatives): the fraction of
replications rejected at level 0.05 by the Anderson--Darling test on the grid
(the default; its p-value from 10,000 null histograms per n, shared by the
replications), scipy's Cramer--von Mises and
Kolmogorov--Smirnov tests, the fraction whose Bayes factor favours
miscalibration (B01 < 1) and the fraction with posterior probability of
calibration below 0.5 (default prior odds 0.1, i.e. B01 < 10), at n = 100
and 1000. For the calibrated forecaster
this is the false-alarm rate (>= 1000 replications; goal <= 0.05 + 2 MC se).
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from bece.regression import (
    DEFAULT_LEVELS,
    PITHistogram,
    bayesian_calibration_error,
    calibration_test,
    pit,
)
from bece.regression.calibration_test import anderson_darling_grid, resampled_statistic

LEVEL = 0.9
TEST_LEVEL = 0.05
N_SAMPLES = 100  # draws of a sample forecast
CHUNK = 20_000  # rows per chunk on the statistics path
STATS_PATH_N = 100_000  # from this n on, PIT histograms of chunks
NULL_RESAMPLES = 10_000  # null histograms per n for the Anderson-Darling p-values


@dataclass(frozen=True)
class Forecaster:
    name: str
    scale: float  # predictive sd / true sd
    shift: float  # (forecast mean - true mean) / true sd


FORECASTERS = (
    Forecaster("calibrated", 1.0, 0.0),
    Forecaster("std x0.5", 0.5, 0.0),
    Forecaster("std x0.7", 0.7, 0.0),
    Forecaster("std x1.5", 1.5, 0.0),
    Forecaster("mean +0.3sd", 1.0, 0.3),
)
FORMS = ("gaussian", "sample", "quantile")


# -------------------------------------------------------------------- truth
def rank_probabilities(f: Forecaster, size: int = N_SAMPLES, nodes: int = 4001) -> np.ndarray:
    """P(R = r), r = 0..S: R the number of the S forecast draws below y.

    The trapezoid rule over y in [-12, 12] (``nodes`` points) for a standard
    normal y: the integrand is smooth and its tails beyond 12 hold 4e-33,
    so the rule is exact to rounding (changing ``nodes`` to 2001 moves no
    probability by 1e-15)."""
    x = np.linspace(-12.0, 12.0, nodes)
    w = stats.norm.pdf(x) * (x[1] - x[0])
    u = special.ndtr((x - f.shift) / f.scale)  # the forecast's CDF at y = x (truth N(0, 1), standardised)
    pmf = stats.binom.pmf(np.arange(size + 1)[:, None], size, u[None, :])
    return pmf @ w


def population_curve(f: Forecaster, form: str, levels: np.ndarray = DEFAULT_LEVELS) -> np.ndarray:
    """C(p) = P(PIT <= p) at ``levels`` for the forecaster and form (module docstring)."""
    if f.scale == 1.0 and f.shift == 0.0:
        return levels.copy()  # calibrated: C(p) = p exactly (the formulas below give it up to rounding)
    if form in ("gaussian", "quantile"):
        return special.ndtr(f.scale * special.ndtri(levels) + f.shift)
    prob = rank_probabilities(f)
    r = np.arange(N_SAMPLES + 1)
    return np.clip(levels[:, None] * (N_SAMPLES + 1) - r[None, :], 0.0, 1.0) @ prob


def population_cal(f: Forecaster, form: str, levels: np.ndarray = DEFAULT_LEVELS) -> float:
    return float(np.sum((levels - population_curve(f, form, levels)) ** 2))


# --------------------------------------------------------------- simulation
def _chunk_pit(f: Forecaster, form: str, n: int, rng: np.random.Generator) -> np.ndarray:
    x = rng.uniform(-2, 2, n)
    mu, sd = 2 * np.sin(x), 0.5 + 0.5 * np.abs(x)
    y = mu + sd * rng.normal(size=n)
    mean, std = mu + f.shift * sd, f.scale * sd
    if form == "gaussian":
        return pit(y, mean=mean, std=std)
    if form == "sample":
        draws = mean[:, None] + std[:, None] * rng.normal(size=(n, N_SAMPLES))
        return pit(y, samples=draws, randomize=True, seed=rng)
    tau = DEFAULT_LEVELS
    q = mean[:, None] + std[:, None] * special.ndtri(tau)[None, :]
    return pit(y, quantiles=q, levels=tau, randomize=True, seed=rng)


def simulate(f: Forecaster, form: str, n: int, rng: np.random.Generator) -> np.ndarray | PITHistogram:
    """PIT values, or from STATS_PATH_N on the sum of the chunks' PIT histograms."""
    if n < STATS_PATH_N:
        return _chunk_pit(f, form, n, rng)
    return sum(
        (PITHistogram.from_pit(_chunk_pit(f, form, min(CHUNK, n - a), rng)) for a in range(0, n, CHUNK)),
        PITHistogram(np.zeros(1000, dtype=np.int64)),
    )


# -------------------------------------------------------------------- rows
@dataclass
class CoverageRow:
    forecaster: str
    form: str
    n: int
    truth: float
    reps: int
    cover: float
    includes0: float
    width: float
    bias_mean: float
    bias_plugin: float
    prob_calibrated: float
    cover_dirichlet: float
    seconds: float


def coverage_row(f: Forecaster, form: str, n: int, reps: int, seed: int, num_samples: int) -> CoverageRow:
    truth = population_cal(f, form)
    rows = []
    t0 = time.perf_counter()
    for r in range(reps):
        rng = np.random.default_rng([seed, n, r])
        data = simulate(f, form, n, rng)
        res = bayesian_calibration_error(data, num_samples=num_samples, seed=rng)
        lo, hi = res.interval(LEVEL)
        dlo, dhi = bayesian_calibration_error(data, model="dirichlet", num_samples=num_samples,
                                              seed=rng).interval(LEVEL)
        rows.append((lo <= truth <= hi, lo <= 0.0, hi - lo, res.mean - truth, res.plugin - truth,
                     res.prob_calibrated, dlo <= truth <= dhi))
    a = np.array(rows, dtype=np.float64)
    return CoverageRow(f.name, form, n, truth, reps, *a.mean(axis=0), time.perf_counter() - t0)


@dataclass
class RejectionRow:
    forecaster: str
    form: str
    n: int
    reps: int
    ad: float
    cvm: float
    ks: float
    bf: float
    bayes: float


@functools.cache
def null_statistics(n: int, num: int = NULL_RESAMPLES) -> np.ndarray:
    """The grid Anderson--Darling statistic of ``num`` histograms drawn under
    calibration, shared by every replication with this n."""
    return resampled_statistic(n, 1000, num, np.random.default_rng([7, n]))


def rejection_row(f: Forecaster, form: str, n: int, reps: int, seed: int) -> RejectionRow:
    """Rejection rates over ``reps`` data sets. The Anderson--Darling p-value is
    calibration_test's, (1 + #{null >= A2}) / (B + 1), with one set of B = 10,000
    null histograms per n shared by the replications (each p-value is still
    valid; drawing 1000 per replication, as calibration_test does, tripled the
    study's time); the Bayes factor is calibration_test's (500 importance samples)."""
    null = null_statistics(n)
    out = []
    for r in range(reps):
        rng = np.random.default_rng([seed, n, r, 1])
        u = _chunk_pit(f, form, n, rng)
        t = calibration_test(u, method="cramer-von-mises", num_samples=500, seed=rng)
        stat = anderson_darling_grid(PITHistogram.from_pit(u).counts)
        p_ad = (1 + np.count_nonzero(null >= stat)) / (null.size + 1)
        ks = stats.kstest(u, "uniform").pvalue
        out.append((p_ad <= TEST_LEVEL, t.p_value <= TEST_LEVEL, ks <= TEST_LEVEL, t.bayes_factor < 1.0,
                    t.prob_calibrated < 0.5))
    a = np.array(out, dtype=np.float64).mean(axis=0)
    return RejectionRow(f.name, form, n, reps, *a)


# ------------------------------------------------------------------- print
def goal(reps: int, target: float = 0.85) -> float:
    return target - 2 * np.sqrt(target * (1 - target) / reps)


COVERAGE_HEADER = (
    "| forecaster | form | n | true cal | coverage | includes 0 | mean width | bias post. mean "
    "| bias plug-in | mean P(calibrated) | coverage dirichlet | goal |\n"
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
)
TEST_HEADER = (
    "| forecaster | form | n | reps | AD (grid, default) | Cramer-von Mises | Kolmogorov-Smirnov "
    "| Bayes factor < 1 | P(calibrated) < 0.5 |\n"
    "|---|---|---:|---:|---:|---:|---:|---:|---:|"
)


def coverage_line(r: CoverageRow) -> str:
    if r.truth == 0.0:  # calibrated: the goal is on the includes-0 rate
        ok = "met" if r.includes0 >= goal(r.reps) else "**not met**"
    else:
        ok = "met" if r.cover >= goal(r.reps) else "**not met**"
    n = f"10^{int(np.log10(r.n))}" if r.n >= 10_000 else str(r.n)
    return (f"| {r.forecaster} | {r.form} | {n} | {r.truth:.4f} | {r.cover:.3f} | {r.includes0:.3f} | "
            f"{r.width:.4f} | {r.bias_mean:+.4f} | {r.bias_plugin:+.4f} | {r.prob_calibrated:.3f} | "
            f"{r.cover_dirichlet:.3f} | {ok} |")


def test_line(r: RejectionRow) -> str:
    return (f"| {r.forecaster} | {r.form} | {r.n} | {r.reps} | {r.ad:.3f} | {r.cvm:.3f} | {r.ks:.3f} | "
            f"{r.bf:.3f} | {r.bayes:.3f} |")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200, help="replications per coverage row")
    ap.add_argument("--null-reps", type=int, default=1000, help="replications per false-alarm row")
    ap.add_argument("--power-reps", type=int, default=400, help="replications per power row")
    ap.add_argument("--n", type=int, nargs="+", default=[100, 1000, 10_000, 100_000])
    ap.add_argument("--num-samples", type=int, default=2000, help="posterior draws per fit")
    ap.add_argument("--quick", action="store_true", help="30 replications, n = 100 and 1000")
    ap.add_argument("--skip-coverage", action="store_true")
    ap.add_argument("--skip-tests", action="store_true")
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args(argv)
    if args.quick:
        args.reps, args.null_reps, args.power_reps, args.n = 30, 100, 30, [100, 1000]
    warnings.simplefilter("error")  # a warning in the study is a failure of the study
    # each row is printed when it is done (a long run can be read as it goes)
    if not args.skip_coverage:
        print(f"\nCoverage of 90% intervals of the cal score (99 levels), {args.reps} replications per row\n")
        print(COVERAGE_HEADER, flush=True)
        for i, f in enumerate(FORECASTERS):
            for j, form in enumerate(FORMS):
                for n in args.n:
                    row = coverage_row(f, form, n, args.reps, args.seed + 100 * i + 10 * j, args.num_samples)
                    print(coverage_line(row), flush=True)
                    print(f"# {f.name} {form} n={n}: {row.seconds:.0f} s", file=sys.stderr, flush=True)
    if not args.skip_tests:
        print(f"\nRejection rates at level {TEST_LEVEL} (calibrated: false alarms)\n")
        print(TEST_HEADER, flush=True)
        for i, f in enumerate(FORECASTERS):
            reps = args.null_reps if f.scale == 1.0 and f.shift == 0.0 else args.power_reps
            for j, form in enumerate(FORMS):
                for n in [m for m in args.n if m <= 1000]:
                    row_t = rejection_row(f, form, n, reps, args.seed + 1000 + 100 * i + 10 * j)
                    print(test_line(row_t), flush=True)


if __name__ == "__main__":
    main()
