"""Write notebooks/validation.ipynb: coverage and bias of ECE intervals, and the calibration test.

The notebook runs the validation study of ``benchmarks/validation_study.py``
(it imports that file from the repository next to the installed ``bece``),
small under BECE_NOTEBOOK_SMALL=1 (the test suite executes it that way, in
under 90 s), full otherwise (about half an hour on one core). It writes
nothing to disk.

Run from the repository root:  python scripts/make_validation_notebook.py
"""

from __future__ import annotations

from nbformat.v4 import new_code_cell, new_markdown_cell

CELLS = [
    new_markdown_cell(
        "# Validating the Bayesian ECE: coverage, bias and a calibration test\n\n"
        "How often does a 90% interval for the ECE contain the truth, and how biased are the "
        "point estimates? On synthetic binary problems with a known *population* binned ECE "
        "(15 bins) we compare\n\n"
        "* **default** — what `bece.bayesian_ece` returns with its defaults: the smooth model "
        "averaged with exact calibration by its posterior probability (prior odds 0.02), so "
        "that its interval can reach 0,\n"
        "* **binned** — the binned BECE posterior (`bece.bayesian_ece(model=\"binned\")`, "
        "closed form),\n"
        "* **smooth** — the smooth calibration-curve posterior alone "
        "(`bece.SmoothModel(prior_odds=0, zero_gap_prior=0)`: a spline in logit(p) plus per-bin deviations, "
        "Bayesian bootstrap over the confidences, Laplace with an importance-sampling "
        "correction),\n"
        "* **bootstrap** — the percentile bootstrap of the plug-in ECE,\n\n"
        "and measure the false-alarm rate and power of `bece.calibration_test`. "
        "Problems follow Roelofs et al. (2022): p ~ Beta(a, b), E[y | p] = p^d, plus a staircase "
        "and an under-confident (temperature < 1) curve; the truth is integrated with "
        "`scipy.integrate.quad` bin by bin.\n\n"
        "`BECE_NOTEBOOK_SMALL=1` runs a few replications of four problems (what the test suite "
        "does); unset, it runs the full study of the documentation's validation page "
        "(`benchmarks/validation_study.py`).\n\n"
        "*Running time: the full study takes over 6 minutes on a 2-core machine (it fits "
        "several hundred posteriors); with `BECE_NOTEBOOK_SMALL=1` it takes well under a "
        "minute.*"
    ),
    new_code_cell(
        "import importlib.util\n"
        "import os\n"
        "import sys\n"
        "import warnings\n"
        "from pathlib import Path\n\n"
        "import matplotlib.pyplot as plt\n"
        "import numpy as np\n\n"
        "import bece\n"
        "from bece import calibration_test\n"
        "\n"
        "warnings.filterwarnings('ignore', category=FutureWarning)\n"
        "SMALL = os.environ.get('BECE_NOTEBOOK_SMALL') == '1'\n"
        "# the study lives in the repository's benchmarks/, next to the bece package\n"
        "STUDY = Path(bece.__file__).resolve().parents[1] / 'benchmarks' / 'validation_study.py'\n"
        "spec = importlib.util.spec_from_file_location('validation_study', STUDY)\n"
        "vs = importlib.util.module_from_spec(spec)\n"
        "sys.modules['validation_study'] = vs  # its dataclasses look themselves up there\n"
        "spec.loader.exec_module(vs)\n"
        "[(p.name, p.description, round(p.true_ece(), 4)) for p in vs.PROBLEMS]"
    ),
    new_markdown_cell(
        "## 1. One data set: a staircase curve at n = 1000\n\n"
        "The true curve has five flat steps; five of the 15 bins have no miscalibration at all. "
        "Left: the smooth model's posterior curve (median and 90% band; the per-bin deviations "
        "let it jump at bin edges) with the binned posterior's per-bin accuracy intervals and "
        "the truth. Right: the ECE distributions and the true ECE (the default's draws are "
        "the smooth model's with a fraction, the posterior probability of calibration, set "
        "to 0)."
    ),
    new_code_cell(
        "step = next(p for p in vs.PROBLEMS if p.name == 'step')\n"
        "rng = np.random.default_rng(1)\n"
        "y, p = step.sample(1000, rng)\n"
        "default = bece.bayesian_ece(y, p, num_samples=2000, seed=1)\n"
        "alone = bece.SmoothModel(prior_odds=0.0, zero_gap_prior=0.0)  # the smooth model, not averaged\n"
        "smooth = bece.bayesian_ece(y, p, model=alone, num_samples=2000, seed=1)\n"
        "binned = bece.bayesian_ece(y, p, num_samples=2000, seed=1, model='binned')\n"
        "boot = vs.bootstrap_ece(y, p, 1000, rng)\n"
        "truth = step.true_ece()\n"
        "fig, ax = plt.subplots(1, 2, figsize=(11, 4))\n"
        "lo, med, hi = np.quantile(smooth.curve, [0.05, 0.5, 0.95], axis=0)\n"
        "ax[0].fill_between(smooth.curve_grid, lo, hi, color='C1', alpha=0.3, label='smooth 90% band')\n"
        "ax[0].plot(smooth.curve_grid, med, color='C1')\n"
        "t = np.linspace(0, 1, 500)\n"
        "ax[0].plot(t, step.curve(t), 'k', lw=1, label='true E[y | p]')\n"
        "ax[0].plot([0, 1], [0, 1], ':', color='grey')\n"
        "centre = 0.5 * (binned.stats.edges[:-1] + binned.stats.edges[1:])\n"
        "blo, bhi = np.nanquantile(binned.accuracy, [0.05, 0.95], axis=0)\n"
        "ax[0].vlines(centre, blo, bhi, color='C0', lw=3, alpha=0.6, label='binned 90% per bin')\n"
        "ax[0].set(xlabel='confidence p', ylabel='P(y = 1 | p)', title='calibration curve'); ax[0].legend(fontsize=8)\n"
        "for draws, name, c in ((default.draws, 'default', 'C3'), (binned.draws, 'binned', 'C0'),\n"
        "                       (smooth.draws, 'smooth', 'C1'), (boot, 'bootstrap', 'C2')):\n"
        "    ax[1].hist(draws, bins=50, density=True, histtype='step', color=c, lw=1.5, label=name)\n"
        "ax[1].axvline(truth, color='k', ls='--', label='true ECE')\n"
        "ax[1].axvline(binned.plugin, color='grey', ls=':', label='plug-in')\n"
        "ax[1].set(xlabel='ECE', title='ECE: posteriors and bootstrap'); ax[1].legend(fontsize=8)\n"
        "fig.tight_layout()"
    ),
    new_markdown_cell(
        "## 2. Coverage and bias over replications\n\n"
        "Each replication draws a new data set and computes the four intervals (90%, equal "
        "tails) and point estimates (posterior means; the plug-in ECE for the bootstrap). The "
        "goal, judged on the default posterior, where n >= 300 and the true ECE is 0 or at "
        "least 0.01: coverage >= 0.85 allowing two Monte Carlo standard errors (for a "
        "calibrated model: the interval includes 0), and a posterior mean no more biased than "
        "the plug-in wherever the plug-in's bias is resolvable (3 Monte Carlo standard errors)."
    ),
    new_code_cell(
        "if SMALL:\n"
        "    names = ('calibrated', 'beta11-d1.25', 'step', 'underconfident')\n"
        "    problems = [p for p in vs.PROBLEMS if p.name in names]\n"
        "    settings = dict(ns=(300, 1000), reps=6, num_samples=500, num_boot=200, num_resamples=100)\n"
        "else:\n"
        "    problems = vs.PROBLEMS\n"
        "    settings = dict(ns=(100, 300, 1000, 10_000), reps=80)\n"
        "records = vs.run_study(problems, **settings)\n"
        "summary = vs.summarise(records)\n"
        "summary[['problem', 'n', 'reps', 'true_ece', 'cov_default', 'cov_binned', 'cov_smooth',\n"
        "         'cov_bootstrap', 'bias_default', 'bias_binned', 'bias_smooth', 'bias_plugin',\n"
        "         'goal_applies', 'goal_met']].round(4)"
    ),
    new_code_cell(
        "fig, axes = plt.subplots(2, len(problems), figsize=(3.2 * len(problems), 6), sharex=True)\n"
        "methods = (('default', 'C3'), ('binned', 'C0'), ('smooth', 'C1'), ('bootstrap', 'C2'))\n"
        "for j, prob in enumerate(problems):\n"
        "    s = summary[summary.problem == prob.name]\n"
        "    for m, c in methods:\n"
        "        axes[0, j].errorbar(s.n, s[f'cov_{m}'], yerr=2 * s[f'cov_se_{m}'], fmt='o-', color=c, label=m, capsize=2)\n"
        "    axes[0, j].axhline(0.9, color='k', ls='--', lw=0.8); axes[0, j].axhline(0.85, color='grey', ls=':', lw=0.8)\n"
        "    axes[0, j].set(title=f'{prob.name}\\ntrue ECE {s.true_ece.iloc[0]:.3f}', ylim=(-0.02, 1.02), xscale='log')\n"
        "    for col, c, lab in (('bias_default', 'C3', 'default mean'), ('bias_binned', 'C0', 'binned mean'),\n"
        "                        ('bias_smooth', 'C1', 'smooth mean'), ('bias_plugin', 'C2', 'plug-in')):\n"
        "        axes[1, j].plot(s.n, s[col], 'o-', color=c, label=lab)\n"
        "    axes[1, j].axhline(0, color='k', lw=0.8); axes[1, j].set(xlabel='n', xscale='log')\n"
        "    for ax in axes[:, j]:\n"
        "        ax.set_xticks(list(s.n)); ax.set_xticklabels([str(v) for v in s.n]); ax.minorticks_off()\n"
        "axes[0, 0].set_ylabel('coverage of 90% interval'); axes[1, 0].set_ylabel('bias of point estimate')\n"
        "axes[0, 0].legend(fontsize=8); axes[1, 0].legend(fontsize=8)\n"
        "fig.tight_layout()"
    ),
    new_markdown_cell(
        "## 3. Is it calibrated? The calibration test\n\n"
        "For a calibrated classifier the ECE is 0: no interval of the binned or the smooth "
        "model alone can cover it (a continuous posterior of a non-negative quantity), which is "
        "why the default averages the smooth model with exact calibration (see the `calibrated` "
        "coverage above). `calibration_test` answers the question directly: a consistency-resampling p-value (valid: false alarms at most the level) and "
        "the posterior probability of perfect calibration from a Bayes factor against the smooth "
        "model. Below: the p-values on calibrated data should be (at least) uniform; the "
        "rejection rates are false alarms on `calibrated` and power elsewhere."
    ),
    new_code_cell(
        "cal = records[records.problem == 'calibrated']\n"
        "fig, ax = plt.subplots(1, 2, figsize=(10, 3.5))\n"
        "ax[0].hist(cal.p_value, bins=10, range=(0, 1), color='C0', edgecolor='w')\n"
        "ax[0].axhline(len(cal) / 10, color='k', ls='--')\n"
        "ax[0].set(xlabel='p-value', title='p-values on calibrated data')\n"
        "ax[1].hist(cal.prob_calibrated, bins=20, range=(0, 1), color='C1', edgecolor='w')\n"
        "ax[1].set(xlabel='P(calibrated | data)', title='Bayes factor on calibrated data')\n"
        "fig.tight_layout()\n"
        "summary[['problem', 'n', 'true_ece', 'reject_pvalue', 'reject_bayes']].round(3)"
    ),
    new_code_cell(
        "# the test on one example: the staircase data set of section 1\n"
        "calibration_test(y, p, seed=0)"
    ),
    new_markdown_cell(
        "## 4. What the full studies found\n\n"
        "The tables are on the documentation's validation page (`benchmarks/validation_study.py`, "
        "150 replications, for the binned, smooth and bootstrap intervals; "
        "`benchmarks/averaged_study.py`, 100 replications, for the default).\n\n"
        "* **The default** (smooth averaged with exact calibration): a calibrated model's "
        "interval includes 0 in 0.95 (n = 300) to 1.00 (n = 10^4) of replications; on the "
        "miscalibrated problems coverage 0.85–0.95 at n = 300 and 1000, including the small "
        "true ECE of 0.014 (0.92, 0.95), and 0.87–0.95 at n = 10^4 except the small ECE (0.78) "
        "and the staircase (0.71).\n"
        "* **The smooth model alone, goal met at n = 300 and 1000** on all five problems with true ECE >= 0.02: smooth "
        "coverage 0.88–0.99 (binned 0–0.91, bootstrap 0–0.94) and posterior-mean bias well "
        "under half the plug-in's (e.g. staircase at n = 300: +0.010 against +0.042; the binned "
        "posterior +0.065).\n"
        "* **n = 10^4**: coverage 0.88–0.93 except the staircase (0.75; binned 0.46, "
        "bootstrap 0.45). The bias criterion fails there, for two reasons. On three problems "
        "every bias is within one or two Monte Carlo standard errors (±0.0004) of 0, so the "
        "ratio is noise. On the staircase and the under-confident curve it is real and shared by "
        "all methods: bins whose true gap is 0 (the middle bin of each step; the bin where the "
        "curve crosses the diagonal) add E|noise| > 0 to any estimate of an absolute value, and "
        "the per-bin deviations, which make the smooth model consistent for any curve, also "
        "let that noise through once n is large.\n"
        "* **Small true ECE** (0.014, below the goal's range): the smooth posterior covers 0.54 "
        "at n = 300 and 0.91 at 10^4 — better than binned and bootstrap (0 until 10^4) but still "
        "pushed up by the absolute value.\n"
        "* **Calibration test**: p-value false alarms 0.037–0.050 at level 0.05 (valid by "
        "construction), Bayes-factor false alarms 0–0.05; power 0.71–1.0 at n = 1000 for "
        "ECE >= 0.044, and low at n <= 300 for the smaller effects."
    ),
]


if __name__ == "__main__":
    from make_notebooks import write  # the same writer (scripts/ is on sys.path when run)

    write("validation.ipynb", CELLS)
