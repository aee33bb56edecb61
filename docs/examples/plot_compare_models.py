"""
Which of two models is better calibrated?
=========================================

Two classifiers scored on the same test examples: :func:`bece.compare` keeps
the pairing of the examples, so the posterior of the difference of their ECEs
is narrower than two separate posteriors suggest.
"""

import matplotlib.pyplot as plt
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB

import bece
from bece.plots import plot_comparison

X, y = make_classification(n_samples=3000, n_features=20, n_informative=6, random_state=1)
X_fit, X_test, y_fit, y_test = train_test_split(X, y, test_size=0.5, random_state=1)
p_logistic = LogisticRegression().fit(X_fit, y_fit).predict_proba(X_test)[:, 1]
p_bayes = GaussianNB().fit(X_fit, y_fit).predict_proba(X_test)[:, 1]  # naive Bayes: over-confident

c = bece.compare(y_test, p_logistic, p_bayes, seed=0)
print(c)
print(f"P(ECE_logistic < ECE_naive_bayes) = {c.prob_a_better:.3f}")

# %%
# Both reliability diagrams, and the posterior of the paired difference.
plot_comparison(c, labels=("logistic regression", "naive Bayes"))
plt.show()
