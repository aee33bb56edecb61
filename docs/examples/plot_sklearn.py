"""
scikit-learn: choose the best calibrated model, and draw its curve
==================================================================

:mod:`bece.sklearn` meets scikit-learn where it is: a scorer for
``scoring=`` in :func:`~sklearn.model_selection.cross_val_score` and
:class:`~sklearn.model_selection.GridSearchCV` (minus a calibration error,
scikit-learn's convention for losses: greater is better), and a display with
the ``from_estimator`` / ``from_predictions`` / ``plot`` methods of
:class:`sklearn.calibration.CalibrationDisplay`, drawing bece's posterior
curve and band.
"""

import matplotlib.pyplot as plt
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, train_test_split

from bece.sklearn import BayesianCalibrationDisplay, ece_scorer, make_calibration_scorer

X, y = make_classification(n_samples=4000, n_features=20, n_informative=6, random_state=1)
X_fit, X_test, y_fit, y_test = train_test_split(X, y, test_size=0.5, random_state=1)

# %%
# Pick a forest's leaf size by the ECE of its held-out probabilities (two
# classes: ``predict_proba(X)[:, 1]`` read as P(y = 1), as scikit-learn's
# own scorers read it), and keep the Brier score beside it.
search = GridSearchCV(
    RandomForestClassifier(n_estimators=100, random_state=0),
    {"min_samples_leaf": [1, 5, 20]},
    scoring={"ece": ece_scorer, "brier": make_calibration_scorer("brier")},
    refit="ece", cv=3,
).fit(X_fit, y_fit)
for leaf, ece, brier in zip(search.cv_results_["param_min_samples_leaf"],
                            search.cv_results_["mean_test_ece"],
                            search.cv_results_["mean_test_brier"]):
    print(f"min_samples_leaf={leaf:>2}: ECE {-ece:.4f}, Brier {-brier:.4f}")
print("chosen:", search.best_params_)

# %%
# The chosen forest and a logistic regression on the test half: each
# display holds its posterior (``result``) and scikit-learn's ``prob_true``
# and ``prob_pred`` per bin.
fig, axes = plt.subplots(1, 2, figsize=(10, 4.8), sharey=True)
forest = BayesianCalibrationDisplay.from_estimator(search.best_estimator_, X_test, y_test,
                                                   ax=axes[0], name="forest", show_counts=False)
logistic = BayesianCalibrationDisplay.from_estimator(LogisticRegression().fit(X_fit, y_fit),
                                                     X_test, y_test, ax=axes[1],
                                                     name="logistic", show_counts=False)
print(forest.result)
fig.tight_layout()
plt.show()
