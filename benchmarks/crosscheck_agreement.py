"""The agreement rule at the sizes users have: its false-alarm rate, and the default's verdicts.

Every run appends one JSON line to ``benchmarks/results/crosscheck_agreement.jsonl``
(so a study can be extended seed by seed, and interrupted); ``--table``
writes ``docs/tables/crosscheck_agreement.md`` from every line there.

Parts:

* ``false-alarm``: ``bece.cross_check(model="conjugate")`` on fresh data for
  each seed (n = 1,000, 15 bins, p ~ Beta(5, 1), P(y = 1 | p) = p^1.2). The
  closed form is exact there, so every disagreement is a false alarm of the
  rule (convergence included). Goal: observed rate <= 0.05 + 2 s.e.
* ``default``: ``bece.cross_check(y, p)`` (the smooth default, with the
  probability of exact calibration by bridge sampling) at each n of
  ``--sizes`` on calibrated data (P(y = 1 | p) = p) and miscalibrated data
  (p^1.5), p ~ U(0, 1). Goal: in each cell at most as many disagreements
  as the false-alarm rate allows (the 97.5% point of Binomial(judged runs,
  0.05): 3 of 20), a run whose NUTS did not converge being not judged
  (:func:`cell_verdict`).
* ``top-label``: the top-label default (hierarchical smooth model), K =
  ``--classes`` (10 or 100), n = 10^4, softmax of N(0, 3^2) logits, labels
  at temperature 1 (calibrated) and 1.5.
* ``regression``: the regression default (the smooth PIT model) on the PIT
  values of each forecast form, as ``bece cross-check`` computes them:
  Gaussian forecasts (exact PIT), 19 quantiles (levels 0.05 ... 0.95) and 100
  sample draws (randomised PIT, grouped as the report groups them), y ~
  N(mu, 1), mu ~ N(0, 1), forecast N(mu, 1) (calibrated) or N(mu + 0.2,
  0.8^2) (shifted, over-confident), n = ``--sizes`` (default 1,000 and 10^5).
* ``real``: the public CIFAR outputs in ``../shared/data`` (10^4 test images
  each): the binary default on the top-label (correct, confidence) pairs and
  the top-label default (label-averaged), ``--seeds`` being NUTS seeds.
* ``sklearn``: scikit-learn's bundled data sets (no download), each model
  fitted on one half (stratified split, seed 0) and checked on the other:
  breast cancer (binary, logistic regression on standardised features) and
  digits (K = 10; logistic regression, and Gaussian naive Bayes, a
  classifier known to be over-confident), the binary default on each
  (label, probability) or top-label pair, and the top-label default on
  digits; ``--seeds`` being NUTS seeds.

Each run records its time, the machine's load and the time NUTS's estimate
announced before its first run (:func:`bece._validation.nuts.run_nuts`, read
from what it prints: a pilot chain's timing since 2026-12-06, a first guess
before).

Run:  python benchmarks/crosscheck_agreement.py PART [--seeds 0:20] [--sizes 1000,2000]
          [--forms gaussian,quantiles,samples] [--top-label-only]
      python benchmarks/crosscheck_agreement.py --table
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DATA = HERE.parent.parent / "shared" / "data"
RESULTS = HERE / "results" / "crosscheck_agreement.jsonl"
TABLE = HERE.parent / "docs" / "tables" / "crosscheck_agreement.md"
SIZES = (1000, 2000, 2001, 10_000, 100_000, 1_000_000)
#: The binary default's NUTS strategy, recorded with each of its runs: the
#: partial centering of the spline and bin coefficients chosen from the
#: Laplace fit (bece._validation.smooth.nuts_centering) first, the
#: non-centred model when that run does not converge ("nuts" records the
#: run kept).
STRATEGY = "centred, then non-centred"
#: The fast path's grid of scale hyper-parameters and its reading of
#: P(tau > 0.3), recorded with each run of the binary default
#: (bece._smooth.fit.GRID_LOW; bece._smooth.zero_gaps.rough_probability):
#: runs of an earlier fast path (a grid from 0.01 times the prior mean, rows
#: without the field; "from 1e-3": whole grid cells counted above 0.3) or
#: NUTS strategy are reported apart.
GRID = "from 1e-3, tau interpolated"
#: The top-label fast path's grid of the label scales, recorded with each
#: top-label run (bece._smooth.toplabel_fit.N_OMEGA, REFINE_WEIGHT): runs of
#: the earlier grids (8 values of omega, rows without the field; 16 values
#: without the refinement of the heaviest cells, "omega 16") are reported apart.
LABEL_GRID = "omega 16, heavy cells refined"
#: The top-label default's NUTS strategy (bece._validation.smooth_toplabel.
#: cross_check_smooth_top_label), recorded with each top-label run: the
#: coefficients scaled by the data's information and the label scales
#: sampled by their prior's probit first, the model as written when that run
#: does not converge. Runs on the model as written only (rows without the
#: field) are reported apart.
LABEL_STRATEGY = "scaled with probit scales, then non-centred"
#: The regression default's NUTS strategy (bece._validation.regression.
#: cross_check_smooth_pit), recorded with each of its runs: the tilt scaled
#: by the data's information first, the model as written when that run does
#: not converge. Runs of the earlier strategy (the model as written only,
#: rows without the field) are reported apart.
PIT_STRATEGY = "scaled, then non-centred"
POWERS = {"calibrated": 1.0, "miscalibrated": 1.5}
REGRESSION_SIZES = (1000, 100_000)
#: forecast (shift of the mean, standard deviation) of each regression cell
FORECASTS = {"calibrated": (0.0, 1.0), "shifted": (0.2, 0.8)}
FORMS = ("gaussian", "quantiles", "samples")
LEVELS = tuple(round(0.05 * j, 2) for j in range(1, 20))
NETWORKS = ("netcal_wideresnet-16-4-cifar-10", "netcal_densenet-bc-100-cifar-100",
            "chenyaofo_cifar100_resnet20")


def binary_data(n: int, power: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng([seed, n])
    p = rng.uniform(size=n)
    return (rng.uniform(size=n) < p**power).astype(np.int64), p


def multiclass_data(n: int, k: int, temperature: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng([seed, n, k])
    logits = rng.normal(scale=3.0, size=(n, k))
    prob = np.exp(logits - logits.max(axis=1, keepdims=True))
    prob /= prob.sum(axis=1, keepdims=True)
    truth = np.exp(logits / temperature - (logits / temperature).max(axis=1, keepdims=True))
    truth /= truth.sum(axis=1, keepdims=True)
    y = (rng.uniform(size=(n, 1)) > truth.cumsum(axis=1)).sum(axis=1)
    return np.minimum(y, k - 1), prob


def regression_pit(form: str, n: int, cell: str, seed: int) -> tuple[np.ndarray, dict]:
    """PIT values of one regression data set in ``form`` and the smooth PIT
    model's grouping options for them (as ``bece cross-check`` sets them)."""
    from scipy import stats

    import bece.regression as br

    rng = np.random.default_rng([seed, n, FORMS.index(form), list(FORECASTS).index(cell)])
    mu = rng.normal(size=n)
    y = mu + rng.normal(size=n)
    shift, sd = FORECASTS[cell]
    mean, std = mu + shift, np.full(n, sd)
    if form == "gaussian":
        return br.pit(y, mean=mean, std=std), {}
    if form == "quantiles":
        q = mean[:, None] + std[:, None] * stats.norm.ppf(np.array(LEVELS))[None, :]
        return (br.pit(y, quantiles=q, levels=LEVELS, randomize=True, seed=seed),
                {"forecast_levels": LEVELS})
    draws = mean[:, None] + std[:, None] * rng.normal(size=(n, 100))
    return br.pit(y, samples=draws, randomize=True, seed=seed), {"forecast_draws": 100}


def network(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Labels and class probabilities of one public network (softmax of logits)."""
    d = np.load(DATA / f"{name}.npz")
    if "probs" in d:
        return d["y"], np.asarray(d["probs"], dtype=np.float64)
    z = np.asarray(d["logits"], dtype=np.float64)
    prob = np.exp(z - z.max(axis=1, keepdims=True))
    return d["y"], prob / prob.sum(axis=1, keepdims=True)


def sklearn_outputs(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Test-half labels and class probabilities of one scikit-learn model on
    a bundled data set: ``"breast cancer, logistic"``, ``"digits, logistic"``
    or ``"digits, naive Bayes"``."""
    from sklearn.datasets import load_breast_cancer, load_digits
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.naive_bayes import GaussianNB
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    data, model = name.split(", ")
    x, y = (load_breast_cancer if data == "breast cancer" else load_digits)(return_X_y=True)
    xtr, xte, ytr, yte = train_test_split(x, y, test_size=0.5, stratify=y, random_state=0)
    clf = (GaussianNB() if model == "naive Bayes"
           else make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000)))
    return yte, clf.fit(xtr, ytr).predict_proba(xte)


SKLEARN = ("breast cancer, logistic", "digits, logistic", "digits, naive Bayes")


def load() -> float:
    return os.getloadavg()[0]


def record(row: dict) -> None:
    RESULTS.parent.mkdir(exist_ok=True)
    with RESULTS.open("a") as f:
        f.write(json.dumps(row) + "\n")
    print(json.dumps(row), flush=True)


def _current(row: dict) -> bool:
    """Whether a run used today's cross-check (the default's: today's
    :data:`STRATEGY` and :data:`GRID`; the top-label default's, recorded
    with its K: today's :data:`LABEL_GRID`)."""
    if row["part"] == "default":
        return row.get("strategy") == STRATEGY and row.get("grid") == GRID
    if row["part"] == "regression":
        return row.get("strategy") == PIT_STRATEGY
    return not _top_label(row) or (row.get("label_grid") == LABEL_GRID
                                   and row.get("strategy") == LABEL_STRATEGY)


def _top_label(row: dict) -> bool:
    """A run of the top-label default: the top-label part (K = 10 recorded
    without ``k``) or a run recorded with its K."""
    return row["part"] == "top-label" or row.get("k") is not None


def _rows(current: bool = True) -> list[dict]:
    """Every recorded run of today's cross-check (``current``) or of an earlier
    one, the last of each (part, cell, n, seed) kept."""
    if not RESULTS.exists():
        return []
    last = {}
    for line in RESULTS.read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            if _current(row) == current:
                last[_key(row)] = row
    return list(last.values())


def _key(row: dict) -> tuple:
    return row["part"], row["cell"], row["n"], row["seed"], row.get("k")


def one(part: str, cell: str, n: int, seed: int, run, k: int | None = None) -> None:
    if any(_key(r) == (part, cell, n, seed, k) for r in _rows()):
        return  # already recorded: the study resumes where it stopped
    load_before, t = load(), time.perf_counter()
    said = io.StringIO()
    with contextlib.redirect_stderr(said):  # NUTS announces its estimate there
        cc = run()
    estimates = [float(x) for x in re.findall(r"draws, about (\d+) s", said.getvalue())]
    row = {"part": part, "cell": cell, "n": n, "seed": seed, "agree": cc.agree,
           "converged": cc.converged, "max_ratio": cc.max_ratio, "rhat": cc.rhat_max,
           "ess": cc.ess_min, "divergences": cc.divergences,
           "target_accept_prob": cc.target_accept_prob, "reasons": cc.reasons,
           "seconds": time.perf_counter() - t, "load": load_before}
    if k is not None:
        row["k"] = k
    if _top_label(row):
        row["label_grid"], row["strategy"] = LABEL_GRID, LABEL_STRATEGY
    try:  # leapfrog steps per transition after warm-up (what the estimate assumes: 31)
        row["steps"] = float(np.asarray(cc.inference_data["sample_stats"]["n_steps"]).mean())
    except (KeyError, TypeError, AttributeError):
        pass
    if estimates:
        row["estimate"] = estimates[0]
        row["nuts_runs"] = len(estimates) + said.getvalue().count("once more at")
    if cc.parameterisation:
        row["nuts"] = cc.parameterisation
    if part == "default":
        row["strategy"], row["grid"] = STRATEGY, GRID
    if part == "regression":
        row["strategy"] = PIT_STRATEGY
    if cc.evidence:
        row["log_bf_fast"], row["log_bf_nuts"], row["log_bf_se"] = (
            cc.evidence["fast"], cc.evidence["nuts"], cc.evidence["se"])
    record(row)


def outputs(part: str, name: str, y: np.ndarray, prob: np.ndarray, seed: int,
            top_label_only: bool = False) -> None:
    """One model's outputs: the binary default on (label, P(class 1)) for two
    classes, else on the top-label pairs (unless ``top_label_only``), and
    then the top-label default."""
    import bece

    binary = prob[:, 1] if prob.shape[1] == 2 else prob
    if not top_label_only:
        one(part, f"{name}, binary", y.size, seed,
            lambda: bece.cross_check(y, binary, seed=seed, progress_bar=None))
    if prob.shape[1] > 2:
        one(part, f"{name}, top-label", y.size, seed,
            lambda: bece.cross_check(y, prob, top_label=True, seed=seed, progress_bar=None),
            k=prob.shape[1])


def run_part(part: str, seeds: range, sizes: tuple[int, ...], classes: int = 10,
             networks: tuple[str, ...] = NETWORKS, forms: tuple[str, ...] = FORMS,
             top_label_only: bool = False) -> None:
    import bece

    # progress_bar=None: NUTS announces its time estimate (recorded by one())
    for seed in seeds:
        if part == "false-alarm":
            rng = np.random.default_rng([seed, 7])
            p = rng.beta(5, 1, size=1000)
            y = (rng.uniform(size=1000) < p**1.2).astype(int)
            one(part, "conjugate", 1000, seed,
                lambda: bece.cross_check(y, p, model="conjugate", seed=seed, progress_bar=None))
            continue
        if part in ("sklearn", "real"):
            for name in SKLEARN if part == "sklearn" else networks:
                outputs(part, name, *(sklearn_outputs(name) if part == "sklearn"
                                      else network(name)), seed, top_label_only)
            continue
        for n in sizes:
            if part == "default":
                for cell, power in POWERS.items():
                    y, p = binary_data(n, power, seed)
                    one(part, cell, n, seed,
                        lambda: bece.cross_check(y, p, seed=seed, progress_bar=None))
            elif part == "regression":
                from bece.regression import SmoothPITModel

                for form in forms:
                    for cell in FORECASTS:
                        u, grouping = regression_pit(form, n, cell, seed)
                        one(part, f"{form}, {cell}", n, seed,
                            lambda: bece.cross_check(u, model=SmoothPITModel(**grouping),
                                                     seed=seed, progress_bar=None))
            else:  # top-label
                for cell, temp in (("calibrated", 1.0), ("over-confident", 1.5)):
                    y, prob = multiclass_data(n, classes, temp, seed)
                    one(part, cell, n, seed,
                        lambda: bece.cross_check(y, prob, top_label=True, seed=seed,
                                                 progress_bar=None),
                        k=None if classes == 10 else classes)


def _estimate_text(rs: list[dict]) -> str:
    ratios = [r["seconds"] / (r["estimate"] * r.get("nuts_runs", 1)) for r in rs if r.get("estimate")]
    if not ratios:
        return "—"
    if len(ratios) == 1:
        return f"{ratios[0]:.1f}"
    return f"{np.median(ratios):.1f} ({min(ratios):.1f}–{max(ratios):.1f})"


def cell_verdict(rs: list[dict]) -> tuple[int, int, int, str]:
    """A cell's verdict under the rule, from its runs: (runs whose NUTS did not
    converge, disagreements among the others, disagreements allowed, verdict).

    A run whose NUTS run did not converge says nothing about the fast path, so
    it is not judged. Among the judged runs the rule's false-alarm rate (0.05
    at most) allows the 97.5% point of Binomial(judged, 0.05) disagreements;
    one judged run that disagrees is a disagreement, not an allowance."""
    from scipy.stats import binom

    stuck = sum(not r["converged"] for r in rs)
    judged = len(rs) - stuck
    bad = sum(r["converged"] and not r["agree"] for r in rs)
    allowed = int(binom.ppf(0.975, judged, 0.05)) if judged else 0
    if not judged:
        return stuck, bad, allowed, "not judged"
    agree = bad <= allowed and bad < judged
    return stuck, bad, allowed, "agree" if agree else "**do not agree**"


def _earlier_runs(title: str, runs: list[dict], what: str, line) -> list[str]:
    """A paragraph on the runs of an earlier cross-check: how many, how many
    did not agree (``what``), and one ``line(run)`` for each of those."""
    if not runs:
        return []
    worst = [r for r in runs if not r["agree"]]
    return [f"{title}: {len(runs)} runs, {len(worst)} {what}:", "", *map(line, worst), ""]


def table() -> str:
    import datetime
    import platform

    rows = _rows()
    import bece

    out = [f"Produced by `python benchmarks/crosscheck_agreement.py --table` on "
           f"{datetime.date.today().isoformat()} from the {len(rows)} runs in "
           f"benchmarks/results/crosscheck_agreement.jsonl (bece {bece.__version__}, Python "
           f"{platform.python_version()}, {os.cpu_count()} cores; each run's time and load below).",
           ""]
    fa = [r for r in rows if r["part"] == "false-alarm"]
    if fa:
        k = len(fa)
        rate = sum(not r["agree"] for r in fa) / k
        ratios = np.array([r["max_ratio"] for r in fa])
        se = np.sqrt(max(rate * (1 - rate), 1 / k) / k)
        out += ["**False-alarm rate of the rule** (conjugate binned model, exact closed form; "
                "n = 1,000, M = 15, fresh data per seed):", "",
                f"{k} seeds, {sum(not r['agree'] for r in fa)} disagreements: rate {rate:.3f} "
                f"(s.e. {se:.3f}; goal <= 0.05 + 2 s.e. = {0.05 + 2 * se:.3f}: "
                f"{'met' if rate <= 0.05 + 2 * se else 'missed'}). Worst ratio per run (agreement "
                f"at <= 1): median {np.median(ratios):.2f}, 99th percentile "
                f"{np.quantile(ratios, 0.99):.2f}, largest {ratios.max():.2f}; "
                f"{sum(r['target_accept_prob'] > 0.9 for r in fa)} runs repeated at a higher "
                f"target_accept_prob after divergent transitions; median time "
                f"{np.median([r['seconds'] for r in fa]):.0f} s.", ""]
    sections = (
        ("default", None, "The binary default (smooth model averaged with exact calibration)"),
        ("top-label", None, "The top-label default (hierarchical smooth model), K = 10"),
        ("top-label", 100, "The top-label default, K = 100"),
        ("regression", None, "The regression default (smooth PIT model) by forecast form"),
        ("real", None, "Public CIFAR network outputs (10^4 test images; the binary default on "
                       "the top-label pairs, and the top-label default)"),
        ("sklearn", None, "scikit-learn's bundled data sets (test halves; the binary default "
                          "on the labels or top-label pairs, and the top-label default)"),
    )
    for part, k, title in sections:
        sel = [r for r in rows if r["part"] == part and r.get("k") == k
               or part in ("real", "sklearn") and r["part"] == part]
        if not sel:
            continue
        note = {"default": ["Second parameterisation: runs whose centred NUTS run did not "
                            "converge, judged on the non-centred run.", ""],
                "regression": ["Second parameterisation: runs whose NUTS run with the tilt "
                               "scaled did not converge, judged on the run of the model as "
                               "written (non-centred).", ""],
                "top-label": ["Second parameterisation: runs whose NUTS run on the model with "
                              "its coefficients scaled and its label scales sampled by their "
                              "probit did not converge, judged on the run of the model as "
                              "written (non-centred).", ""]}.get(part, [])
        out += [f"**{title}**:", "", *note,
                "| data | n | seeds | NUTS not converged | disagree | allowed | verdict | "
                "worst ratio (median) | log B01 fast − NUTS (median, in se) | second parameterisation | "
                "median time (s) | time / estimate | load |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        cells = sorted({(r["cell"], r["n"]) for r in sel}, key=lambda c: (c[1], c[0]))
        for cell, n in cells:
            rs = [r for r in sel if r["cell"] == cell and r["n"] == n]
            stuck, bad, allowed, verdict = cell_verdict(rs)
            bf = [(r["log_bf_fast"] - r["log_bf_nuts"]) / r["log_bf_se"] for r in rs if "log_bf_se" in r]
            bf_text = f"{np.median(bf):+.2f}" if bf else "—"
            second = (sum(r.get("nuts") == "non-centred" for r in rs)
                      if any("nuts" in r for r in rs) else "—")
            out.append(f"| {cell} | {n:,} | {len(rs)} | {stuck} | {bad} | {allowed} | {verdict} | "
                       f"{np.median([r['max_ratio'] for r in rs]):.2f} | {bf_text} | {second} | "
                       f"{np.median([r['seconds'] for r in rs]):.0f} | {_estimate_text(rs)} | "
                       f"{np.median([r['load'] for r in rs]):.1f} |")
        out.append("")
    out += ["NUTS not converged: runs whose NUTS run (after its repeats) did not meet the "
            "convergence checks, which judge nothing about the fast path. Disagree: the other "
            "runs where a quantity differs by more than its tolerance. Allowed: the 97.5% point "
            "of Binomial(judged runs, 0.05), 3 of 20. Verdict: 'agree' when the disagreements are "
            "within that allowance and fewer than the judged runs; 'not judged' when no NUTS run "
            "converged.", "",
            "Time / estimate: the run's whole time (fast path, NUTS and its repeats, bridge "
            "sampling) over the time NUTS announced before its first run times the NUTS runs "
            "made; the median, and the range when several. — where no estimate was recorded "
            "(earlier runs). Runs recorded before 2026-12-06 announced a first guess (31 "
            "leapfrog steps per transition), later ones a pilot chain's timing, checked against "
            "NUTS's own time in the table that follows.", ""]
    bad = [r for r in rows if not r["agree"]]
    if bad:
        out += ["**Every run that did not agree** (NUTS not converged, or a quantity beyond "
                "its tolerance), with its reasons:", ""]
        for r in bad:
            out.append(f"- {r['part']}, {r['cell']}, n = {r['n']:,}, seed {r['seed']}: "
                       + "; ".join(r["reasons"][:3]) + (" ..." if len(r["reasons"]) > 3 else ""))
        out.append("")
    earlier = _rows(current=False)

    def reasons(r: dict, k: int) -> str:
        return "; ".join(r["reasons"][:k]) + (" ..." if len(r["reasons"]) > k else "")

    binary = [r for r in earlier if r["part"] == "default"]
    out += _earlier_runs(
        "**Earlier runs of the binary default** (one NUTS parameterisation only, the fast path's "
        "grid of scales from 0.01 times their prior means, or P(tau > 0.3) read as whole grid "
        "cells; not in the table above)", binary, "disagreements",
        lambda r: f"- {r['cell']}, n = {r['n']:,}, seed {r['seed']}: {reasons(r, 3)}")
    pit = [r for r in earlier if r["part"] == "regression"]
    if pit:
        quantity = sum(r["converged"] and not r["agree"] for r in pit)
        steps = np.median([r["steps"] for r in pit if r.get("steps")])
        out += _earlier_runs(
            "**Earlier runs of the regression default** (NUTS on the model as written only; not "
            "in the table above)", pit,
            f"not converged or not agreeing, {quantity} of them where NUTS converged; median "
            f"{steps:.0f} leapfrog steps per transition",
            lambda r: f"- {r['cell']}, n = {r['n']:,}, seed {r['seed']}: {reasons(r, 2)}")
    labels = [r for r in earlier if r["part"] not in ("default", "regression")]

    def label_line(r: dict) -> str:
        return (f"- {r['part']}, {r['cell']}, K = {r.get('k') or 10}, n = {r['n']:,}, seed "
                f"{r['seed']}: {reasons(r, 2)}")

    unrefined = [r for r in labels if r.get("label_grid") == "omega 16"]
    for title, runs in (
            ("**Earlier runs of the top-label default** (the fast path's grid of 8 tilt scales "
             "omega, a ratio of 2.68 between neighbours; NUTS on the model as written; not in the "
             "tables above)", [r for r in labels if r.get("label_grid") is None]),
            ("**Earlier runs of the top-label default with 16 values of each label scale** (NUTS "
             "on the model as written only; not in the tables above)",
             [r for r in unrefined if r.get("strategy") != LABEL_STRATEGY]),
            ("**Earlier runs of the top-label default with 16 values of each label scale, before "
             "the heaviest cells were refined** (today's NUTS strategy; not in the tables above)",
             [r for r in unrefined if r.get("strategy") == LABEL_STRATEGY])):
        stuck = sum(not r["converged"] for r in runs)
        steps = [r["steps"] for r in runs if r.get("steps")]
        out += _earlier_runs(
            title, runs, f"not converged or not agreeing, {stuck} of them where NUTS did not "
            f"converge" + (f"; median {np.median(steps):.0f} leapfrog steps per transition"
                           if steps else ""), label_line)
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("part", nargs="?",
                    choices=("false-alarm", "default", "top-label", "regression", "real",
                             "sklearn"))
    ap.add_argument("--seeds", default="0:20", help="START:STOP (default 0:20)")
    ap.add_argument("--sizes", default=None, help="sizes n (default: 1,000 to 10^6 for the "
                    "binary default, 1,000 and 10^5 for regression)")
    ap.add_argument("--classes", type=int, default=10, help="K of the top-label part")
    ap.add_argument("--networks", default=",".join(NETWORKS), help="the real part's networks")
    ap.add_argument("--forms", default=",".join(FORMS), help="the regression part's forecast forms")
    ap.add_argument("--top-label-only", action="store_true",
                    help="the real and sklearn parts: the top-label default only")
    ap.add_argument("--table", action="store_true", help=f"write {TABLE.name} from the results")
    args = ap.parse_args()
    if args.part:
        start, stop = map(int, args.seeds.split(":"))
        sizes = {"default": SIZES, "regression": REGRESSION_SIZES}.get(args.part, (10_000,))
        if args.sizes is not None:
            sizes = tuple(int(s) for s in args.sizes.split(","))
        forms = tuple(args.forms.split(","))
        unknown = sorted(set(forms) - set(FORMS))
        if unknown:
            ap.error(f"--forms: unknown form(s) {', '.join(unknown)}; the forms are {', '.join(FORMS)}")
        run_part(args.part, range(start, stop), sizes, args.classes,
                 tuple(args.networks.split(",")), forms, args.top_label_only)
    if args.table:
        text = table()
        tmp = TABLE.with_suffix(".md.tmp")
        tmp.write_text(text + "\n")
        tmp.replace(TABLE)
        print(text)


if __name__ == "__main__":
    main()
