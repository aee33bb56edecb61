"""Write the notebooks in notebooks/ from the cell sources below.

The notebooks are kept without outputs; the test suite executes them
(tests/test_notebooks.py) with BECE_NOTEBOOK_SMALL=1, which shrinks every
simulation so that they run in CI.

Run from the repository root:  python scripts/make_notebooks.py
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parents[1]

MODEL_CHECKING = [
    new_markdown_cell(
        "# Model checking for the Bayesian ECE\n\n"
        "The closed-form (\"conjugate\") posterior of `bece.bayesian_ece` is exact for the "
        "*conjugate* form of the binned BECE model — truncation on the prior of each bin's mean "
        "confidence; `model=\"literal\"` samples the *literal* form exactly, where each "
        "confidence is a truncated Normal within its bin. This notebook\n\n"
        "1. draws from the prior predictive of the NumPyro model,\n"
        "2. compares the closed form with NUTS on the same model (forest plot, histograms and ArviZ summaries),\n"
        "3. checks the literal fast path against NUTS and measures its gap to the conjugate form as n grows,\n"
        "4. runs simulation-based calibration (SBC) and shows rank histograms,\n"
        "5. walks through the checks of the defaults a report uses (binary, top-label, "
        "regression): prior predictive, fast path against NUTS, and what to do when they "
        "disagree.\n\n"
        "Set `BECE_NOTEBOOK_SMALL=1` for a quick run (the test suite does)."
    ),
    new_code_cell(
        "import os\n"
        "import warnings\n\n"
        "# tqdm (NumPyro's progress bars) warns when ipywidgets is absent; its text bars work\n"
        "warnings.filterwarnings('ignore', message='IProgress not found')\n\n"
        "import jax\n"
        "import matplotlib.pyplot as plt\n"
        "import numpy as np\n"
        "import pandas as pd\n"
        "from numpyro.infer import Predictive\n\n"
        "import bece\n"
        "from bece.io import example_path, read_predictions\n"
        "from bece.models import literal_model\n"
        "from bece._binned.conjugate import conjugate_posterior\n"
        "from bece.plots import plot_ece_posterior\n"
        "from bece.validation import literal_gap, sbc\n\n"
        "warnings.filterwarnings('ignore', category=FutureWarning)\n"
        "SMALL = os.environ.get('BECE_NOTEBOOK_SMALL') == '1'\n"
        "NUTS = dict(num_warmup=500, num_samples=1000) if SMALL else dict(num_warmup=1000, num_samples=1000)\n"
        "pred = read_predictions(example_path())\n"
        "stats = bece.CalibrationStats.from_arrays(pred.y_true, pred.y_prob)\n"
        "stats"
    ),
    new_markdown_cell(
        "## 1. Prior predictive\n\n"
        "Simulate data sets of the example's size from the literal model under the default "
        "prior (alpha = 1/(2M) per cell, sigma = tau = w/sqrt(12)) and look at the ECE the "
        "prior implies and at the plug-in ECE of the simulated data. The prior is vague about "
        "calibration: it spreads the ECE over about 0.1 to 0.9, so the data, not the prior, "
        "decide; the example's plug-in ECE (dashed line) is far below what the prior expects, "
        "which the posterior has to (and does) overcome."
    ),
    new_code_cell(
        "M = stats.n_bins\n"
        "prior = conjugate_posterior(bece.CalibrationStats(stats.binning, np.zeros((2, M)), np.zeros(M), np.zeros(M)))\n"
        "sims = Predictive(literal_model, num_samples=200 if SMALL else 1000)(\n"
        "    jax.random.PRNGKey(0), stats.edges, prior.alpha, prior.sigma, prior.tau, n=stats.n)\n"
        "cell = np.asarray(sims['cell']); p_sim = np.asarray(sims['p'], dtype=float)\n"
        "plugin = [bece.expected_calibration_error(c // M, p) for c, p in zip(cell, p_sim)]\n"
        "fig, ax = plt.subplots(1, 2, figsize=(10, 3.5))\n"
        "ax[0].hist(np.asarray(sims['ece']), bins=40, color='C0')\n"
        "ax[0].set(title='ECE under the prior', xlabel='population binned ECE')\n"
        "ax[1].hist(plugin, bins=40, color='C1')\n"
        "ax[1].axvline(bece.expected_calibration_error(pred.y_true, pred.y_prob), color='k', ls='--', label='example data')\n"
        "ax[1].set(title=f'plug-in ECE of simulated data (n = {stats.n})', xlabel='plug-in ECE'); ax[1].legend()\n"
        "fig.tight_layout()"
    ),
    new_markdown_cell(
        "## 2. Closed form vs NUTS on the conjugate model\n\n"
        "`bece.cross_check(..., model='conjugate')` runs NUTS (4 chains) on the collapsed "
        "conjugate model and compares the 5%, 50% and 95% quantiles of the ECE, each bin's "
        "accuracy and each bin's mean confidence with the closed form. The agreement rule is the "
        "same for every model: NUTS converged (R-hat <= 1.01, ESS >= 400, no divergent "
        "transition), and each quantile within max(z MCSE, 0.25 posterior sd); `ratio` is the "
        "difference over that tolerance (agreement at <= 1), and `reasons` says what failed."
    ),
    new_code_cell(
        "cc = bece.cross_check(pred.y_true, pred.y_prob, model='conjugate', seed=0, progress_bar=False, **NUTS)\n"
        "print(cc)\n"
        "cc.table.sort_values('ratio', ascending=False).head(8)"
    ),
    new_markdown_cell(
        "### The default: the smooth model and the probability of exact calibration\n\n"
        "With no `model=`, `cross_check` checks what `bayesian_ece` returns by default: NUTS on "
        "the smooth calibration-curve model against its Laplace path (the ECE, each bin's "
        "accuracy, the curve at nine probe points), and the probability that the model is "
        "exactly calibrated, from the fast path's Bayes factor and from bridge sampling on the "
        "NUTS draws of the same NumPyro model. If they disagree, `cc.reasons` names the "
        "quantity: trust NUTS, report the disagreement, and try `model='binned'` beside it."
    ),
    new_code_cell(
        "cc_default = bece.cross_check(pred.y_true, pred.y_prob, seed=0, progress_bar=False, **NUTS)\n"
        "print(cc_default)\n"
        "cc_default.table[cc_default.table['quantile'].isna()]   # the probabilities compared"
    ),
    new_code_cell(
        "both = {'closed form': cc.closed_form, 'NUTS': cc.nuts}\n"
        "plot_ece_posterior(*both.values(), labels=list(both), kind='forest', prob=0.9)\n"
        "fig, ax = plt.subplots(figsize=(6, 3))\n"
        "ax.hist(cc.closed_form.draws, bins=60, density=True, alpha=0.5, label='closed form')\n"
        "ax.hist(cc.nuts.draws, bins=60, density=True, alpha=0.5, label='NUTS')\n"
        "ax.set(xlabel='ECE', title='posterior of the ECE'); ax.legend()\n"
        "# ArviZ's summary of each result's to_inference_data() (InferenceData on ArviZ 0.2x, DataTree on 1.x)\n"
        "pd.concat({name: r.summary(var_names=['ece'], kind='stats') for name, r in both.items()})"
    ),
    new_markdown_cell(
        "## 3. The literal model: its exact fast path against NUTS, and its gap to the conjugate form\n\n"
        "Under the literal BECE model each confidence is a Normal truncated to its bin, so a bin's "
        "mean confidence is a truncated-Normal mean and the truncation normaliser depends on mu. "
        "Each bin mean's posterior is one-dimensional and log-concave, and "
        "`bayesian_ece(..., model='literal')` samples it exactly; `cross_check(model='literal')` "
        "runs NUTS on the literal model against that fast path."
    ),
    new_code_cell(
        "cc_lit = bece.cross_check(pred.y_true, pred.y_prob, model='literal', seed=0, progress_bar=False, **NUTS)\n"
        "print(cc_lit)\n"
        "cc_lit.table.sort_values('ratio', ascending=False).head(5)"
    ),
    new_markdown_cell(
        "How far apart are the two forms? Both fast paths are exact for their model, so "
        "`literal_gap` compares them directly at any n. With confidences piled at 0 and 1 "
        "(Beta(0.3, 0.3), as a confident network's), the literal model cannot put a bin's mean "
        "confidence closer to the bin's edge than about 0.8 sigma, so where the data's mean lies "
        "closer its ECE stays off as n grows; the conjugate form follows the data."
    ),
    new_code_cell(
        "def piled(n, rng):\n"
        "    p = rng.beta(0.3, 0.3, size=n)\n"
        "    return (rng.uniform(size=n) < p ** 1.5).astype(int), p\n\n"
        "ns = [100, 1000, 10_000] if SMALL else [100, 1000, 10_000, 100_000, 1_000_000]\n"
        "gaps = pd.concat({'U(0, 1)': literal_gap(ns, seed=2), 'Beta(0.3, 0.3)': literal_gap(ns, simulate=piled, seed=2)},\n"
        "                 names=['confidences'])\n"
        "gaps[['n', 'plugin', 'conjugate_mean', 'literal_mean', 'conjugate_sd', 'gap_sd', 'max_confidence_gap']]"
    ),
    new_code_cell(
        "fig, ax = plt.subplots(figsize=(6, 3.5))\n"
        "for name, grp in gaps.groupby(level='confidences'):\n"
        "    ax.plot(grp['n'], grp['gap_sd'].abs(), 'o-', label=name)\n"
        "ax.set(xscale='log', xlabel='n', ylabel='|literal - conjugate| / posterior sd',\n"
        "       title='gap between the forms, in posterior sds'); ax.legend();"
    ),
    new_markdown_cell(
        "## 4. Simulation-based calibration\n\n"
        "Draw the truth from the prior, data from the model, rank the truth among posterior "
        "draws. Each fast path gives uniform ranks on its own model; the conjugate closed form "
        "on the literal model with a wide sigma puts the bins' mean confidences visibly off."
    ),
    new_code_cell(
        "runs = {\n"
        "    'closed form on conjugate model': sbc(n=30, num_simulations=200 if SMALL else 1000, seed=3),\n"
        "    'closed form on literal model, sigma = 0.2': sbc(n=30, num_simulations=200 if SMALL else 1000,\n"
        "                                                   model=bece.BinnedModel(form='literal', n_bins=4, sigma=0.2), seed=3),\n"
        "    'literal fast path on literal model, sigma = 0.2': sbc(n=30, num_simulations=200 if SMALL else 1000,\n"
        "                                                   model=bece.BinnedModel(form='literal', n_bins=4, sigma=0.2),\n"
        "                                                   method='literal', seed=3),\n"
        "}\n"
        "fig, axes = plt.subplots(3, 3, figsize=(11, 7.5), sharey='row')\n"
        "for row, (title, r) in zip(axes, runs.items()):\n"
        "    for ax, name in zip(row, ['q[1,2]', 'confidence[0]', 'ece']):\n"
        "        ax.bar(range(r.num_hist_bins), r.histogram(name), color='C0')\n"
        "        ax.axhline(r.num_simulations / r.num_hist_bins, color='k', ls='--')\n"
        "        ax.set_title(f'{name}\\np = {r.pvalues[name]:.2g}', fontsize=9)\n"
        "        ax.set_xlabel('rank (10 groups)', fontsize=8)\n"
        "    row[0].set_ylabel(title, fontsize=8)\n"
        "fig.tight_layout()\n"
        "{k: (v.uniform, v.adjusted_pvalue) for k, v in runs.items()}"
    ),
    new_markdown_cell(
        "## 5. The defaults a report uses: binary, top-label and regression\n\n"
        "Every default has a NumPyro model (`model.numpyro(stats)`) and a fast path, and "
        "`bece.cross_check` runs NUTS on the one against the other under the rule of section 2. "
        "Start where a check starts, with the prior predictive: the smooth default's "
        "`prior_predictive()` redraws the example's outcomes from curves drawn from the prior; "
        "the plug-in ECE of those data sets should cover the example's."
    ),
    new_code_cell(
        "smooth = bece.SmoothModel()\n"
        "fine = smooth.statistics(pred.y_true, pred.y_prob)    # the fine cells the fast path reads\n"
        "m = smooth.numpyro(fine)\n"
        "z = m.prior_predictive(200 if SMALL else 1000, seed=0)['z']   # (draws, cells): correct per cell\n"
        "full = fine.bin_counts > 0\n"
        "ece_bin = np.minimum((fine.edges[:-1][full] * 15).astype(int), 14)  # each cell's ECE bin\n"
        "gaps = np.stack([np.bincount(ece_bin, g, 15) for g in z - fine.sum_p[full]])\n"
        "prior_plugin = np.abs(gaps).sum(axis=1) / fine.n\n"
        "fig, ax = plt.subplots(figsize=(6, 3))\n"
        "ax.hist(prior_plugin, bins=40, color='C2')\n"
        "ax.axvline(bece.expected_calibration_error(pred.y_true, pred.y_prob), color='k', ls='--')\n"
        "ax.set(title='plug-in ECE under the smooth prior', xlabel='plug-in ECE');\n"
        "float(np.mean(prior_plugin >= bece.expected_calibration_error(pred.y_true, pred.y_prob)))"
    ),
    new_markdown_cell(
        "The binary default's check ran in section 2 (`cc_default`). The top-label default, "
        "`bayesian_top_label_ece`'s hierarchical smooth model (a shared curve plus each label's "
        "logit shift and slope change, with learned spreads), is checked with "
        "`top_label=True`; a regression forecaster's default, the smooth model of its PIT "
        "values, by passing the PIT values and the model. Here a shifted, over-confident "
        "Gaussian forecaster (mean off by 0.2 sd, spread 0.8 of the truth's):"
    ),
    new_code_cell(
        "cc_top = bece.cross_check(pred.y_true, pred.y_prob, top_label=True, seed=0,\n"
        "                          progress_bar=False, **NUTS)\n"
        "print(cc_top)\n"
        "from bece.regression import SmoothPITModel, pit\n"
        "rng = np.random.default_rng(4)\n"
        "mu = rng.normal(size=1000)\n"
        "u = pit(mu + rng.normal(size=1000), mean=mu + 0.2, std=np.full(1000, 0.8))\n"
        "cc_pit = bece.cross_check(u, model=SmoothPITModel(), seed=0, progress_bar=False, **NUTS)\n"
        "print(cc_pit)\n"
        "pd.DataFrame({name: {'agree': c.agree, 'worst ratio': c.max_ratio, 'R-hat': c.rhat_max,\n"
        "                     'ESS': c.ess_min, 'divergences': c.divergences,\n"
        "                     'parameterisation': c.parameterisation}\n"
        "              for name, c in [('binary', cc_default), ('top-label', cc_top),\n"
        "                              ('regression (PIT)', cc_pit)]}).T"
    ),
    new_markdown_cell(
        "### When they disagree\n\n"
        "`cc.reasons` names what failed, and the answer depends on which it is.\n\n"
        "* **NUTS did not converge** (R-hat above 1.01, ESS below 400, divergent transitions "
        "left after the repeat at a higher `target_accept_prob`): the check could not judge "
        "the fast path. Each default's check first runs NUTS in the parameterisation its "
        "Laplace fit suggests (its coefficients scaled or centred by what the data say about "
        "them, so that NUTS sees no funnel) and, when that run does not converge, the model "
        "as written; `cc.parameterisation` says which run was kept. When neither converged, "
        "run it again with more draws (`num_warmup=2000, num_samples=2000`) or another "
        "`seed`. The agreement study on the validation page lists every such case.\n"
        "* **A quantile is off** (its ratio above 1): NUTS samples the model exactly and the "
        "fast path approximates it, so believe NUTS: report `cc.nuts` (a result like any "
        "other: `cc.nuts.interval(0.9)`, `cc.nuts.summary()`), and say that the fast path "
        "disagreed. Check the grid's own error (`r.params.grid_error`), which the check does "
        "not see: it compares both on the same gridded data.\n"
        "* **P(calibrated) differs** (bridge sampling on the NUTS draws against the fast "
        "path's Bayes factor): both estimate one marginal likelihood; with the log Bayes "
        "factors within a few standard errors (`cc.evidence`) the difference is Monte Carlo "
        "error, beyond that trust bridge sampling.\n\n"
        "A disagreement is a finding about the fast path, not about the classifier. On the "
        "public CIFAR network outputs and at every size from 10^3 to 10^6 the agreement study "
        "(`benchmarks/crosscheck_agreement.py`, table on the validation page) runs these same "
        "calls: on such outputs, "
        "`bece.cross_check(y, prob, top_label=True)` with `y` the labels and `prob` the "
        "softmax rows is the whole check."
    ),
]


def write(name: str, cells: list) -> None:
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = ROOT / "notebooks" / name
    nbformat.write(nb, path)
    print(f"wrote {path}")


if __name__ == "__main__":
    write("model_checking.ipynb", MODEL_CHECKING)
