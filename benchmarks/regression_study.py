"""Validation study of regression calibration: coverage of the cal score's
intervals, and the calibration test's false-alarm rate and power.

Run (repository root):

    python benchmarks/regression_study.py                 # everything (about 4 core-hours)
    python benchmarks/regression_study.py --quick         # 30 replications, n <= 1000
    python benchmarks/regression_study.py --rows 'sd0.5/quantile' --n 100000 --reps 200
    python benchmarks/regression_study.py --jobs 16       # rows in parallel processes

Rows are chosen by ``--rows`` (patterns ``FORECASTER/FORM`` with shell
wildcards, forecasters ``calibrated``, ``sd0.5``, ``sd0.7``, ``sd1.5``,
``shift0.3``; forms ``gaussian``, ``sample``, ``quantile``; ``test/...``
patterns choose rows of the test table), ``--n`` and ``--reps``. Each
finished row is appended to ``--results`` (JSON lines, default
``benchmarks/results/regression_study.jsonl``); a row already there with
the same replications, seed and number of draws is not run again, so an
interrupted run resumes where it stopped and runs of different row subsets
add up. After each row the Markdown table of every row in the results file
is written to ``--markdown`` (default ``docs/tables/regression_study.md``),
with the rows of the full design not run yet listed. ``--max-seconds``
stops starting rows after that long.

Cost (profiled): one replication is one smooth fit (16 Newton solves, about
half the time) and 2000 importance-weighted draws (a third), plus the
simulation (10^7 normal variates for sample forecasts at n = 10^5); about
1 s on an idle core, so a 200-replication row takes 2-5 min.

Forecasters of a heteroscedastic target (x ~ U(-2, 2), y ~ N(2 sin x,
(0.5 + 0.5|x|)^2)): the forecast for each target is N(mu + d sd, (k sd)^2)
with mu, sd the truth's, i.e. calibrated (k = 1, d = 0), predictive sd x 0.5,
x 0.7, x 1.5, and mean shifted by d = 0.3 sd. Three forecast forms:

* ``gaussian``: the PIT Phi((y - mean) / std);
* ``sample``: S = 100 draws of the forecast, randomised PIT;
* ``quantile``: the forecast's quantiles at the 99 levels 0.01..0.99,
  randomised PIT (uniform tails).

The randomised PIT of the quantile form is uniform within the cells between
the forecast's levels 0.01..0.99, so ``bayesian_calibration_error`` is given
``forecast_levels=`` those levels (:mod:`bece._regression.cells`). The sample
form is fitted with the ranks' model, ``forecast_draws=100``: the rank of y
among the draws is Binomial(100, u) given the continuous PIT u, on a fine grid
with probit-spaced cells below 0.01 and above 0.99; on the statistics path
its histograms have 10,100 cells (the levels k/100 and k/101 on the grid).
Rows of earlier models stay in the results file under their own variant and
are listed apart, not as the design's rows: sample rows fitted to the counts
between the ranks as if uniform cells (``forecast_levels=k/101``; variant
"uniform-cells", sd x 0.5 at n = 10^4 covered 0.790), sample rows of the
ranks' model on 1000 equal cells (variant "binomial-equal-grid"), and test
rows of the sample and quantile forms whose Bayes factor was fitted to the
1000-cell histogram (variant "bf-fine-cells"; their p-value columns are
unchanged).

The population calibration curve C(p) = P(PIT <= p) at the 99 levels
0.01..0.99 (bece's default) and Kuleshov et al.'s cal score
sum_j (p_j - C(p_j))^2 (``weights="sum"``, 99 times the library's default
mean; coverage and P(calibrated) do not depend on the scale) are exact:
for the Gaussian and quantile forms C(p) = Phi(k Phi^-1(p) + d) (at
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
ones; and for the posterior mean, a bias no larger than the plug-in's
where the difference is resolved (the difference of the two absolute
biases beyond 3 of its Monte Carlo standard errors, from the paired
replications). n = 10^5 goes through the statistics path: PIT histograms
of chunks of 20,000 forecasts, added.

Test table (``pit_calibration_test`` and its alternatives): the fraction of
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
import datetime
import fnmatch
import functools
import json
import os
import shlex
import sys
import time
import warnings
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
from scipy import special, stats

from bece._regression.metrics import DEFAULT_LEVELS
from bece._regression.pit_bayes_factor import anderson_darling_grid, resampled_statistic
from bece.regression import PITHistogram, bayesian_calibration_error, pit, pit_calibration_test

LEVEL = 0.9
TEST_LEVEL = 0.05
N_SAMPLES = 100  # draws of a sample forecast
CHUNK = 20_000  # rows per chunk on the statistics path
STATS_PATH_N = 100_000  # from this n on, PIT histograms of chunks
NULL_RESAMPLES = 10_000  # null histograms per n for the Anderson-Darling p-values
SAMPLE_CELLS = 100 * (N_SAMPLES + 1)  # sample forecasts, statistics path: levels k/100 and k/101 on the grid
ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "regression_study.jsonl"
MARKDOWN = ROOT / "docs" / "tables" / "regression_study.md"


@dataclass(frozen=True)
class Forecaster:
    name: str
    key: str  # for --rows
    scale: float  # predictive sd / true sd
    shift: float  # (forecast mean - true mean) / true sd


FORECASTERS = (
    Forecaster("calibrated", "calibrated", 1.0, 0.0),
    Forecaster("std x0.5", "sd0.5", 0.5, 0.0),
    Forecaster("std x0.7", "sd0.7", 0.7, 0.0),
    Forecaster("std x1.5", "sd1.5", 1.5, 0.0),
    Forecaster("mean +0.3sd", "shift0.3", 1.0, 0.3),
)
FORECASTER = {f.key: f for f in FORECASTERS}
FORMS = ("gaussian", "sample", "quantile")
DESIGN_N = (100, 1000, 10_000, 100_000)


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


def forecast_levels(form: str) -> np.ndarray | None:
    """The quantile form's levels, between which its randomised PIT is uniform
    (``forecast_levels=``), else None."""
    return DEFAULT_LEVELS.copy() if form == "quantile" else None


def forecast_draws(form: str) -> int | None:
    """S for the sample form (``forecast_draws=``: the ranks' model), else None."""
    return N_SAMPLES if form == "sample" else None


def simulate(f: Forecaster, form: str, n: int, rng: np.random.Generator) -> np.ndarray | PITHistogram:
    """PIT values, or from STATS_PATH_N on the sum of the chunks' PIT histograms."""
    if n < STATS_PATH_N:
        return _chunk_pit(f, form, n, rng)
    cells = SAMPLE_CELLS if form == "sample" else 1000
    return sum(
        (PITHistogram.from_pit(_chunk_pit(f, form, min(CHUNK, n - a), rng), n_cells=cells)
         for a in range(0, n, CHUNK)),
        PITHistogram(np.zeros(cells, dtype=np.int64)),
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
    se_bias_mean: float = float("nan")  # MC s.e. of bias_mean
    excess_bias: float = float("nan")  # mean of |post. mean - truth| - |plug-in - truth|
    se_excess_bias: float = float("nan")


def coverage_block(f: Forecaster, form: str, n: int, start: int, stop: int, seed: int,
                   num_samples: int) -> list[list[float]]:
    """Replications start..stop-1 of a coverage row: per replication (covers, includes 0,
    width, posterior mean - truth, plug-in - truth, P(calibrated), Dirichlet covers)."""
    truth = population_cal(f, form)
    rows = []
    for r in range(start, stop):
        rng = np.random.default_rng([seed, n, r])
        data = simulate(f, form, n, rng)
        res = bayesian_calibration_error(data, num_samples=num_samples, seed=rng, weights="sum",
                                         forecast_levels=forecast_levels(form),
                                         forecast_draws=forecast_draws(form))
        lo, hi = res.interval(LEVEL)
        dlo, dhi = bayesian_calibration_error(data, model="dirichlet", num_samples=num_samples,
                                              seed=rng, weights="sum").interval(LEVEL)
        rows.append([float(lo <= truth <= hi), float(lo <= 0.0), hi - lo, res.mean - truth,
                     res.plugin - truth, res.prob_calibrated, float(dlo <= truth <= dhi)])
    return rows


def coverage_row(f: Forecaster, form: str, n: int, per_rep: np.ndarray, seconds: float) -> CoverageRow:
    """The row's summary from its replications' values (:func:`coverage_block`)."""
    a = np.asarray(per_rep, dtype=np.float64)
    reps = a.shape[0]
    # absolute biases are compared on the replications' means: the excess of
    # |mean bias of the posterior mean| over |mean bias of the plug-in|, with the
    # standard error of the paired differences (signs fixed at the means' signs)
    d_mean, d_plug = a[:, 3], a[:, 4]
    paired = np.sign(d_mean.mean()) * d_mean - np.sign(d_plug.mean()) * d_plug

    def se(x: np.ndarray) -> float:
        return float(np.std(x, ddof=1) / np.sqrt(reps)) if reps > 1 else float("nan")

    return CoverageRow(f.name, form, n, population_cal(f, form), reps, *a.mean(axis=0), seconds,
                       se_bias_mean=se(d_mean), excess_bias=float(paired.mean()), se_excess_bias=se(paired))


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


def rejection_block(f: Forecaster, form: str, n: int, start: int, stop: int, seed: int) -> list[list[float]]:
    """Replications start..stop-1 of a test row: per replication, rejected by
    (Anderson--Darling on the grid, Cramer--von Mises, Kolmogorov--Smirnov,
    B01 < 1, P(calibrated) < 0.5). The Anderson--Darling p-value is
    pit_calibration_test's, (1 + #{null >= A2}) / (B + 1), with one set of B = 10,000
    null histograms per n shared by the replications (each p-value is still
    valid; drawing 1000 per replication, as pit_calibration_test does, tripled the
    study's time); the Bayes factor is pit_calibration_test's (500 importance samples), with
    the form's ``forecast_levels`` / ``forecast_draws``."""
    null = null_statistics(n)
    out = []
    for r in range(start, stop):
        rng = np.random.default_rng([seed, n, r, 1])
        u = _chunk_pit(f, form, n, rng)
        t = pit_calibration_test(u, method="cramer-von-mises", num_samples=500, seed=rng,
                             forecast_levels=forecast_levels(form), forecast_draws=forecast_draws(form))
        stat = anderson_darling_grid(PITHistogram.from_pit(u).counts)
        p_ad = (1 + np.count_nonzero(null >= stat)) / (null.size + 1)
        ks = stats.kstest(u, "uniform").pvalue
        out.append([float(p_ad <= TEST_LEVEL), float(t.p_value <= TEST_LEVEL), float(ks <= TEST_LEVEL),
                    float(t.bayes_factor < 1.0), float(t.prob_calibrated < 0.5)])
    return out


def rejection_row(f: Forecaster, form: str, n: int, per_rep: np.ndarray) -> RejectionRow:
    a = np.asarray(per_rep, dtype=np.float64)
    return RejectionRow(f.name, form, n, a.shape[0], *a.mean(axis=0))


def coverage(f: Forecaster, form: str, n: int, reps: int, seed: int, num_samples: int) -> CoverageRow:
    """One coverage row, all replications in this process."""
    t0 = time.perf_counter()
    per_rep = coverage_block(f, form, n, 0, reps, seed, num_samples)
    return coverage_row(f, form, n, np.array(per_rep), time.perf_counter() - t0)


def rejection(f: Forecaster, form: str, n: int, reps: int, seed: int) -> RejectionRow:
    """One test row, all replications in this process."""
    return rejection_row(f, form, n, np.array(rejection_block(f, form, n, 0, reps, seed)))


# ------------------------------------------------------------------- print
def goal(reps: int, target: float = 0.85) -> float:
    return target - 2 * np.sqrt(target * (1 - target) / reps)


COVERAGE_HEADER = (
    "| forecaster | form | n | reps | true cal | coverage | includes 0 | mean width | bias post. mean "
    "| bias plug-in | mean P(calibrated) | coverage dirichlet | interval goal | bias goal |\n"
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"
)
TEST_HEADER = (
    "| forecaster | form | n | reps | AD (grid, default) | Cramer-von Mises | Kolmogorov-Smirnov "
    "| Bayes factor < 1 | P(calibrated) < 0.5 | goal |\n"
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"
)


def n_text(n: int) -> str:
    return f"10^{int(np.log10(n))}" if n >= 10_000 and 10 ** int(np.log10(n)) == n else str(n)


def coverage_line(r: CoverageRow) -> str:
    if r.truth == 0.0:  # calibrated: the goal is on the includes-0 rate
        ok = "met" if r.includes0 >= goal(r.reps) else "**not met**"
    else:
        ok = "met" if r.cover >= goal(r.reps) else "**not met**"
    if not np.isfinite(r.excess_bias):
        bias_ok = "-"
    elif r.excess_bias > 3 * r.se_excess_bias:
        bias_ok = f"**not met** (+{r.excess_bias:.4f} ± {r.se_excess_bias:.4f})"
    else:
        bias_ok = "met"
    return (f"| {r.forecaster} | {r.form} | {n_text(r.n)} | {r.reps} | {r.truth:.4f} | {r.cover:.3f} | "
            f"{r.includes0:.3f} | {r.width:.4f} | {r.bias_mean:+.4f} | {r.bias_plugin:+.4f} | "
            f"{r.prob_calibrated:.3f} | {r.cover_dirichlet:.3f} | {ok} | {bias_ok} |")


def test_line(r: RejectionRow) -> str:
    if r.forecaster == "calibrated":
        limit = TEST_LEVEL + 2 * np.sqrt(TEST_LEVEL * (1 - TEST_LEVEL) / r.reps)
        ok = f"{'met' if r.ad <= limit else '**not met**'} (false alarms <= {limit:.3f})"
    else:
        ok = "power"
    return (f"| {r.forecaster} | {r.form} | {r.n} | {r.reps} | {r.ad:.3f} | {r.cvm:.3f} | {r.ks:.3f} | "
            f"{r.bf:.3f} | {r.bayes:.3f} | {ok} |")


# ------------------------------------------------------------ rows and runs
@dataclass(frozen=True)
class Task:
    kind: str  # "coverage" | "test"
    key: str  # forecaster key
    form: str
    n: int
    reps: int
    seed: int
    num_samples: int
    start: int = 0  # the block of replications start..stop-1
    stop: int = 0
    variant: str = ""  # "": the current models; else rows of an earlier model (STALE), not re-run

    @property
    def row(self) -> tuple:
        """What a replication's result depends on besides its index (not ``reps``: a
        run with more replications extends one with fewer)."""
        return (self.kind, self.key, self.form, self.n, self.seed, self.num_samples, self.variant)

    @property
    def ident(self) -> tuple:
        return (*self.row, self.start, self.stop)


def design(args: argparse.Namespace) -> list[Task]:
    """Every row of the full design for these settings (one Task per row, start = stop = 0)."""
    tasks = []
    for i, f in enumerate(FORECASTERS):
        for j, form in enumerate(FORMS):
            for n in args.n:
                tasks.append(Task("coverage", f.key, form, n, args.reps, args.seed + 100 * i + 10 * j,
                                  args.num_samples))
    for i, f in enumerate(FORECASTERS):
        reps = args.null_reps if f.key == "calibrated" else args.power_reps
        for j, form in enumerate(FORMS):
            for n in [m for m in args.n if m <= 1000]:
                tasks.append(Task("test", f.key, form, n, reps, args.seed + 1000 + 100 * i + 10 * j, 0))
    return tasks


def blocks(task: Task, size: int, first: int = 0) -> list[Task]:
    return [replace(task, start=a, stop=min(a + size, task.reps)) for a in range(first, task.reps, size)]


def gather(records: list[dict], task: Task) -> tuple[int, list, float]:
    """Replications 0..covered-1 of the task's row found in ``records`` (blocks of any
    size, contiguous from 0), their values and seconds."""
    parts = {}
    for r in records:
        t = Task(**r["task"])
        if t.row == task.row:
            parts[(t.start, t.stop)] = r
    covered, per_rep, seconds = 0, [], 0.0
    for (a, b), r in sorted(parts.items()):
        if a <= covered < b:
            per_rep += r["per_rep"][covered - a:]
            seconds += r["seconds"] * (b - covered) / (b - a)
            covered = b
    return covered, per_rep, seconds


def complete_rows(records: list[dict], full: list[Task]) -> tuple[list, list[Task]]:
    """Rows whose replications are all in ``records`` (summaries, in the design's order),
    and the rows of ``full`` that are not complete."""
    rows, missing = [], []
    for t in full:
        covered, per_rep, seconds = gather(records, t)
        if covered < t.reps:
            missing.append(t)
            continue
        f = FORECASTER[t.key]
        per_rep = per_rep[:t.reps]
        if t.kind == "coverage":
            rows.append(coverage_row(f, t.form, t.n, np.array(per_rep), seconds))
        else:
            rows.append(rejection_row(f, t.form, t.n, np.array(per_rep)))
    return rows, missing


def chosen(task: Task, patterns: list[str] | None) -> bool:
    if not patterns:
        return True
    name = f"{task.key}/{task.form}" if task.kind == "coverage" else f"test/{task.key}/{task.form}"
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def run_task(task: Task) -> dict:
    warnings.simplefilter("error")  # a warning in the study is a failure of the study
    f = FORECASTER[task.key]
    t0 = time.perf_counter()
    if task.kind == "coverage":
        per_rep = coverage_block(f, task.form, task.n, task.start, task.stop, task.seed, task.num_samples)
    else:
        per_rep = rejection_block(f, task.form, task.n, task.start, task.stop, task.seed)
    return {"task": asdict(task), "per_rep": per_rep, "seconds": time.perf_counter() - t0}


#: Records written before the ranks' model (no "model" key) whose rows that change made stale:
#: (kind, form, variant) -> the variant they are listed under
STALE = {
    ("coverage", "sample", ""): "uniform-cells",
    ("coverage", "sample", "binomial"): "binomial-equal-grid",
    ("test", "sample", ""): "bf-fine-cells",
    ("test", "quantile", ""): "bf-fine-cells",
}
MODEL_VERSION = 2


def load(path: Path) -> list[dict]:
    """The records, those of earlier models relabelled with their variant (:data:`STALE`)."""
    if not path.exists():
        return []
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for r in records:
        t = r["task"]
        if r.get("model", 1) < MODEL_VERSION:
            t["variant"] = STALE.get((t["kind"], t["form"], t.get("variant", "")), t.get("variant", ""))
    return records


def superseded_rows(records: list[dict]) -> list:
    """Summaries of the rows of earlier models (variant not ""), each over the
    replications recorded, the variant shown with the form."""
    seen = {}
    for r in records:
        t = Task(**r["task"])
        if t.variant:
            seen.setdefault(t.row, replace(t, start=0, stop=0))
    out = []
    order = {f.key: i for i, f in enumerate(FORECASTERS)}
    for t in sorted(seen.values(), key=lambda t: (t.kind, t.variant, t.form, order[t.key], t.n)):
        covered, per_rep, seconds = gather(records, t)
        if covered == 0:
            continue
        f = FORECASTER[t.key]
        form = f"{t.form} ({t.variant})"
        a = np.array(per_rep[:covered])
        out.append(coverage_row(f, t.form, t.n, a, seconds) if t.kind == "coverage"
                   else rejection_row(f, t.form, t.n, a))
        out[-1].form = form
    return out


def write_markdown(path: Path, records: list[dict], full: list[Task], command: str, results: str) -> None:
    rows, missing = complete_rows(records, full)
    commands = sorted({r.get("command", "?") for r in records} - {command})
    earlier = f", with rows from earlier runs of {', '.join(f'`{c}`' for c in commands)}" if commands else ""
    lines = [f"Generated by `{command}` on {datetime.date.today().isoformat()}{earlier} "
             f"(replications read from {results}).", ""]
    lines += ["**Coverage of 90% intervals of Kuleshov et al.'s cal score (the sum over 99 "
              "levels, `weights=\"sum\"`: 99 times the default mean); "
              "interval goal >= 0.85 - 2 MC s.e.**", "", COVERAGE_HEADER]
    lines += [coverage_line(r) for r in rows if isinstance(r, CoverageRow)]
    lines += ["", f"**Rejection rates of pit_calibration_test at level {TEST_LEVEL} "
              "(calibrated rows: false alarms)**", "", TEST_HEADER]
    lines += [test_line(r) for r in rows if isinstance(r, RejectionRow)]
    earlier_rows = superseded_rows(records)
    if earlier_rows:
        lines += ["", "**Rows of earlier models, superseded (kept in the results file; variant in the "
                  "form column)**", "", COVERAGE_HEADER]
        lines += [coverage_line(r) for r in earlier_rows if isinstance(r, CoverageRow)]
        lines += ["", TEST_HEADER]
        lines += [test_line(r) for r in earlier_rows if isinstance(r, RejectionRow)]
    lines += ["", "**Rows of the design not run**", ""]
    if missing:
        for t in missing:
            covered = gather(records, t)[0]
            part = f"; {covered} of them done" if covered else ""
            lines.append(f"- {t.kind} {FORECASTER[t.key].name} / {t.form} / n = {n_text(t.n)} "
                         f"({t.reps} replications{part})")
    else:
        lines += ["None."]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200, help="replications per coverage row")
    ap.add_argument("--null-reps", type=int, default=1000, help="replications per false-alarm row")
    ap.add_argument("--power-reps", type=int, default=400, help="replications per power row")
    ap.add_argument("--n", type=int, nargs="+", default=list(DESIGN_N))
    ap.add_argument("--num-samples", type=int, default=2000, help="posterior draws per fit")
    ap.add_argument("--rows", nargs="+", help="FORECASTER/FORM patterns (test/FORECASTER/FORM for the test "
                    "table), e.g. 'sd0.5/*' 'test/calibrated/*'; default: every row")
    ap.add_argument("--quick", action="store_true", help="30 replications, n = 100 and 1000")
    ap.add_argument("--skip-coverage", action="store_true")
    ap.add_argument("--skip-tests", action="store_true")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--jobs", type=int, default=1, help="blocks run in parallel processes")
    ap.add_argument("--block", type=int, default=25, help="replications per block (the unit of work)")
    ap.add_argument("--max-seconds", type=float, default=float("inf"), help="start no row after this long")
    ap.add_argument("--results", type=Path, default=RESULTS, help="JSON lines of finished rows (appended)")
    ap.add_argument("--markdown", type=Path, default=MARKDOWN, help="Markdown table of every finished row")
    ap.add_argument("--table-only", action="store_true", help="write the table from --results, run nothing")
    args = ap.parse_args(argv)
    if args.quick:
        args.reps, args.null_reps, args.power_reps, args.n = 30, 100, 30, [100, 1000]
    command = "python benchmarks/regression_study.py " + shlex.join(sys.argv[1:] if argv is None else argv)
    # the table shows every row of the full design (all n) with these replications,
    # whichever subset this run computes
    full = design(argparse.Namespace(**{**vars(args), "n": sorted(set(args.n) | set(DESIGN_N))}))
    shown = os.path.relpath(args.results, ROOT) if args.results.is_absolute() else str(args.results)
    records = load(args.results)
    done = {Task(**r["task"]).ident for r in records}
    skip = {"coverage": args.skip_coverage, "test": args.skip_tests}
    todo = [b for t in full if t.n in args.n and chosen(t, args.rows) and not skip[t.kind]
            for b in blocks(t, args.block, gather(records, t)[0])]
    if args.table_only:
        todo = []
    print(f"{len(todo)} blocks to run ({len(done)} already in {args.results})", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    args.results.parent.mkdir(parents=True, exist_ok=True)

    def record(rec: dict) -> None:
        rec["command"] = command
        rec["model"] = MODEL_VERSION
        with open(args.results, "a") as fh:
            fh.write(json.dumps(rec) + "\n")
        records.append(rec)
        write_markdown(args.markdown, records, full, command, shown)
        t = Task(**rec["task"])
        print(f"# {t.kind} {t.key} {t.form} n={t.n} reps {t.start}..{t.stop - 1}: {rec['seconds']:.0f} s",
              file=sys.stderr, flush=True)

    if args.jobs <= 1:
        for t in todo:
            if time.perf_counter() - t0 > args.max_seconds:
                break
            record(run_task(t))
    else:
        # longest rows first, at most `jobs` in flight; no new row after max_seconds
        todo.sort(key=lambda t: -((t.stop - t.start) * np.log10(t.n) * (3 if t.form == "sample" else 1)))
        with ProcessPoolExecutor(args.jobs) as pool:
            pending = {}
            it = iter(todo)
            for t in it:
                pending[pool.submit(run_task, t)] = t
                if len(pending) >= args.jobs:
                    break

            while pending:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    pending.pop(fut)
                    record(fut.result())
                    if time.perf_counter() - t0 <= args.max_seconds:
                        nxt = next(it, None)
                        if nxt is not None:
                            pending[pool.submit(run_task, nxt)] = nxt
    write_markdown(args.markdown, records, full, command, shown)


if __name__ == "__main__":
    main()
