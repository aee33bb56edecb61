"""
Reliability diagram of a classifier, with its posterior
=======================================================

A logistic regression on a synthetic binary problem: the posterior of its
expected calibration error (ECE), the verdict of the calibration test, and the
reliability diagram of the default (smooth) model: the posterior calibration
curve with its 90% band, each bin's dot sized by its count.
"""

import matplotlib.pyplot as plt
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

import bece
from bece.plots import reliability_diagram

X, y = make_classification(n_samples=4000, n_features=20, n_informative=5, random_state=0)
X_fit, X_test, y_fit, y_test = train_test_split(X, y, test_size=0.5, random_state=0)
clf = LogisticRegression(C=0.01).fit(X_fit, y_fit)  # strong regularisation: under-confident
y_prob = clf.predict_proba(X_test)[:, 1]  # P(y = 1)

r = bece.bayesian_ece(y_test, y_prob, seed=0)
print(r)

# %%
# The verdict combines a p-value and the posterior probability of exact
# calibration (see "What an interval and a verdict mean" in the docs).
print(bece.calibration_test(y_test, y_prob, seed=0).verdict().text)

# %%
# The line is the posterior median of P(y = 1 | predicted P(y = 1)), the band
# its 90% credible band, the crosses what each bin observed.
reliability_diagram(r)
plt.show()
