"""
Which of two models is better calibrated?
=========================================

Two classifiers scored on the same test examples: :func:`bece.compare` keeps
the pairing of the examples, so the posterior of the difference of their ECEs
is narrower than two separate posteriors suggest.
"""

import matplotlib.pyplot as plt
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

import bece
from bece.plots import plot_comparison

X, y = make_classification(n_samples=3000, n_features=20, n_informative=6, random_state=1)
X_fit, X_test, y_fit, y_test = train_test_split(X, y, test_size=0.5, random_state=1)
p_logistic = LogisticRegression().fit(X_fit, y_fit).predict_proba(X_test)[:, 1]
forest = RandomForestClassifier(n_estimators=50, random_state=0)
p_forest = forest.fit(X_fit, y_fit).predict_proba(X_test)[:, 1]  # averaged votes: under-confident

c = bece.compare(y_test, p_logistic, p_forest, seed=0)
print(c)
print(f"P(ECE_logistic < ECE_forest) = {c.prob_a_better:.3f}")

# %%
# Both reliability diagrams, and the posterior of the paired difference.
plot_comparison(c, labels=("logistic regression", "random forest"))
plt.show()
