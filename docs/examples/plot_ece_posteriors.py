"""
ECE posteriors of several models side by side
=============================================

Three classifiers on the same test set, their ECE posteriors as a forest plot:
each line is a 90% credible interval, the dot the posterior mean.
"""

import matplotlib.pyplot as plt
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB

import bece
from bece.plots import plot_ece_posterior

X, y = make_classification(n_samples=3000, n_features=20, n_informative=6, random_state=2)
X_fit, X_test, y_fit, y_test = train_test_split(X, y, test_size=0.5, random_state=2)
models = {
    "logistic": LogisticRegression(),
    "naive Bayes": GaussianNB(),
    "random forest": RandomForestClassifier(n_estimators=50, random_state=0),
}
results = [
    bece.bayesian_ece(y_test, m.fit(X_fit, y_fit).predict_proba(X_test)[:, 1], seed=0)
    for m in models.values()
]
for name, r in zip(models, results):
    lo, hi = r.interval(0.9)
    print(f"{name:14s} ECE {r.mean:.4f} [{lo:.4f}, {hi:.4f}]  P(calibrated) {r.prob_calibrated:.2f}")

# %%
plot_ece_posterior(*results, labels=list(models), kind="forest")
plt.show()
