"""Write notebooks/quickstart.ipynb from the cell sources below.

The notebook is kept without outputs; the test suite executes it
(tests/test_notebooks.py) with BECE_NOTEBOOK_SMALL=1, which lowers the
number of posterior draws and trees so that it runs in seconds. It writes
no files: figures are shown inline.

Run from the repository root:  python scripts/make_quickstart_notebook.py
"""

from __future__ import annotations

from nbformat.v4 import new_code_cell, new_markdown_cell

QUICKSTART = [
    new_markdown_cell(
        "# bece quick start: how calibrated are two classifiers, and how sure are we?\n\n"
        "Two scikit-learn classifiers on the digits data shipped with scikit-learn. For each we "
        "compute a **posterior over the expected calibration error** (ECE) from a finite test "
        "set, look at **reliability diagrams with credible bands**, compare the two models "
        "**paired on the same test examples**, and finally **recalibrate** one of them and check "
        "whether that helped.\n\n"
        "Set `BECE_NOTEBOOK_SMALL=1` for a quick run (the test suite does)."
    ),
    new_code_cell(
        "import os\n"
        "import warnings\n\n"
        "import matplotlib.pyplot as plt\n"
        "import numpy as np\n"
        "from sklearn.datasets import load_digits\n"
        "from sklearn.ensemble import RandomForestClassifier\n"
        "from sklearn.linear_model import LogisticRegression\n"
        "from sklearn.model_selection import train_test_split\n"
        "from sklearn.pipeline import make_pipeline\n"
        "from sklearn.preprocessing import StandardScaler\n\n"
        "import bece\n"
        "from bece import compare\n"
        "from bece.plots import plot_comparison, plot_ece_posterior, reliability_diagram\n\n"
        "warnings.filterwarnings('ignore', category=FutureWarning)\n"
        "SMALL = os.environ.get('BECE_NOTEBOOK_SMALL') == '1'\n"
        "S = 2_000 if SMALL else 10_000          # posterior draws\n\n"
        "X, y = load_digits(return_X_y=True)\n"
        "# train / calibration (used only for recalibration at the end) / test\n"
        "X_train, X_rest, y_train, y_rest = train_test_split(X, y, test_size=0.5, random_state=0, stratify=y)\n"
        "X_cal, X_test, y_cal, y_test = train_test_split(X_rest, y_rest, test_size=0.6, random_state=0, stratify=y_rest)\n"
        "models = {\n"
        "    'logistic regression': make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)),\n"
        "    'random forest': RandomForestClassifier(n_estimators=100 if SMALL else 300, random_state=0),\n"
        "}\n"
        "prob = {name: m.fit(X_train, y_train).predict_proba(X_test) for name, m in models.items()}\n"
        "{name: f'accuracy {np.mean(p.argmax(1) == y_test):.3f}' for name, p in prob.items()} | {'test set': len(y_test)}"
    ),
    new_markdown_cell(
        "## 1. The ECE posterior of each model\n\n"
        "`bece.bayesian_ece(y_true, y_prob)` takes class probabilities of shape (n, K): the "
        "confidence is the row maximum and a prediction is correct when its argmax is the label. "
        "It returns posterior draws of the (binned, 15 bins) ECE; the plug-in ECE, the number "
        "most papers report, sits beside it. The forest plot shows the median, the 50% and 90% "
        "intervals and the plug-in value (cross)."
    ),
    new_code_cell(
        "results = {name: bece.bayesian_ece(y_test, p, num_samples=S, seed=0) for name, p in prob.items()}\n"
        "for name, r in results.items():\n"
        "    lo, hi = r.interval(0.9)\n"
        "    print(f'{name:20s} ECE {r.mean:.3f}  90% interval [{lo:.3f}, {hi:.3f}]  plug-in {r.plugin:.3f}')\n"
        "plot_ece_posterior(*results.values(), labels=list(results));"
    ),
    new_markdown_cell(
        "## 2. Reliability diagrams with credible bands\n\n"
        "Per bin of confidence: a shaded 90% band for the bin's accuracy, the posterior median "
        "(dot), the observed plug-in accuracy (cross) and, underneath, how many test predictions "
        "fell in the bin. Bands are Jeffreys intervals per bin, so a bin with a single prediction "
        "gets a wide band instead of the zero-width band a bootstrap gives; bins without any "
        "prediction are hatched (no data). The logistic regression puts almost everything in "
        "the top bin; the random forest spreads its confidence out and is *under*-confident: "
        "its accuracy is above the diagonal."
    ),
    new_code_cell(
        "fig, axes = plt.subplots(1, 2, figsize=(12, 6.5))\n"
        "for ax, (name, r) in zip(axes, results.items()):\n"
        "    reliability_diagram(r, ax=ax)\n"
        "    ax.set_title(f'{name}\\n' + ax.get_title(), fontsize='medium')\n"
        "fig.tight_layout()"
    ),
    new_markdown_cell(
        "## 3. Paired comparison on the same test set\n\n"
        "Both models predicted the *same* test examples, so their errors are not independent. "
        "`compare(y_true, y_prob_a, y_prob_b, model='binned')` (a `bece.BinnedModel`) puts one Dirichlet over the joint cells "
        "(correct under A, A's bin, correct under B, B's bin) and returns draws of "
        "ECE_A - ECE_B, `P(ECE_A < ECE_B)` and an interval. Each model's own posterior is exactly "
        "the one from `bayesian_ece`; only their dependence is added. Subtracting two "
        "independent posteriors ignores that dependence. It matters when the two ECEs move "
        "together with the shared labels (two similar, both over-confident models: the paired "
        "interval can be several times narrower) or in opposite directions (one over-, one "
        "under-confident model: the independent interval is then too narrow and under-covers). "
        "Here the two intervals happen to be close: the forest's ECE is driven by its overall "
        "accuracy, the regression's by a few sparse bins, and the two barely co-vary."
    ),
    new_code_cell(
        "names = list(prob)\n"
        "c = compare(y_test, prob[names[0]], prob[names[1]], model='binned', num_samples=S, seed=1)\n"
        "independent = results[names[0]].draws - results[names[1]].draws\n"
        "print(c)\n"
        "print('paired      90% interval of ECE_A - ECE_B:', np.round(c.interval(0.9), 4))\n"
        "print('independent 90% interval of ECE_A - ECE_B:', np.round(np.quantile(independent, [0.05, 0.95]), 4))\n"
        "plot_comparison(c, labels=names);"
    ),
    new_markdown_cell(
        "## 4. Per-label view (top-label calibration)\n\n"
        "`bece.bayesian_top_label_ece` splits the predictions by predicted label (Gupta & Ramdas' "
        "top-label calibration); with `model=\"binned\"` (a `bece.BinnedModel`) every (label, bin) "
        "cell gets its own binned posterior, and `reliability_diagram(..., per_label=True)` draws one panel "
        "per label. Most panels are sparse below the top bin: the bands say how little a handful "
        "of predictions tells."
    ),
    new_code_cell(
        "from bece import bayesian_top_label_ece\n\n"
        "top = bayesian_top_label_ece(y_test, prob['random forest'], model='binned', n_bins=10,\n"
        "                             num_samples=S, seed=2)\n"
        "print(top)\n"
        "reliability_diagram(top, per_label=True);"
    ),
    new_markdown_cell(
        "## 5. Recalibrate the random forest and check that it helped\n\n"
        "`bece.calibrate.TopLabelCalibrator` fits one isotonic map per predicted label on the "
        "calibration split, keeps the argmax and replaces the confidence. The recalibrated model "
        "gives triples (predicted label, true label, confidence), so the comparison passes "
        "`y_pred_a` / `y_pred_b`. Paired on the same test set, is the recalibrated forest better "
        "calibrated, and how sure are we?\n\n"
        "Things to look at in the picture: isotonic maps fitted on a few dozen calibration points "
        "per label are coarse step functions, so the recalibrated confidences pile up in a few "
        "bins (some predictions can even be sent to a confidence near 0, with the bands showing "
        "how little those few points say)."
    ),
    new_code_cell(
        "from bece.calibrate import TopLabelCalibrator\n\n"
        "rf = models['random forest']\n"
        "cal = TopLabelCalibrator(method='isotonic').fit(rf.predict_proba(X_cal), y_cal)\n"
        "p_rf = prob['random forest']\n"
        "conf_cal, pred_cal = cal.predict_confidence(p_rf), cal.predict(p_rf)\n"
        "after = compare(y_test, conf_cal, p_rf.max(1), y_pred_a=pred_cal, y_pred_b=p_rf.argmax(1),\n"
        "                model='binned', num_samples=S, seed=3)\n"
        "lo, hi = after.interval(0.9)\n"
        "print(f'ECE recalibrated {after.a.mean:.3f}, original {after.b.mean:.3f}; '\n"
        "      f'difference 90% interval [{lo:+.3f}, {hi:+.3f}]; P(recalibrated better) = {after.prob_a_better:.3f}')\n"
        "ind = (bece.bayesian_ece(y_test, conf_cal, y_pred=pred_cal, num_samples=S, seed=4).draws\n"
        "       - bece.bayesian_ece(y_test, p_rf, num_samples=S, seed=5).draws)\n"
        "print('independent posteriors would say', np.round(np.quantile(ind, [0.05, 0.95]), 3))\n"
        "plot_comparison(after, labels=('recalibrated forest', 'random forest'));"
    ),
    new_markdown_cell(
        "## From the command line\n\n"
        "Save predictions as CSV, Parquet or NPZ with a `y_true` column and `p_0 ... p_{K-1}` "
        "(or `y_prob` for a binary classifier), then\n\n"
        "```bash\n"
        "bece report preds.csv --plot diagram.png     # posterior ECE, table and reliability diagram\n"
        "bece compare model_a.csv model_b.csv --plot compare.png   # paired comparison\n"
        "```"
    ),
]


if __name__ == "__main__":
    from make_notebooks import write  # the same writer (scripts/ is on sys.path when run)

    write("quickstart.ipynb", QUICKSTART)
