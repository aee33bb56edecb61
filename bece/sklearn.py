"""scikit-learn: scorers for model selection and a display of the posterior calibration curve.

**Scorers.** ``scoring=`` of :func:`sklearn.model_selection.cross_val_score`,
:class:`~sklearn.model_selection.GridSearchCV` and the other model-selection
tools takes a callable ``scorer(estimator, X, y)``; the ones here call
``estimator.predict_proba(X)`` and return a calibration error with its sign
flipped, scikit-learn's convention for losses (``neg_log_loss``,
``neg_brier_score``): greater is better, so the search picks the best
calibrated model. The probabilities are read as scikit-learn reads them:

* two classes: ``predict_proba(X)[:, 1]`` is :math:`P(y = \\text{classes\\_}[1])`
  (as :func:`sklearn.calibration.calibration_curve` and scikit-learn's own
  binary scorers read it), ``pos_label=estimator.classes_[1]``;
* more classes: the (n, K) matrix, read top-label as :func:`bece.bayesian_ece`
  reads it (confidence = the largest probability, correct = the argmax is
  the label), ``labels=estimator.classes_``.

:data:`ece_scorer` is the plug-in ECE (15 equal-width bins),
:data:`posterior_ece_scorer` the posterior mean of the default model's ECE
(:func:`bece.bayesian_ece`, 2,000 draws, seed 0: the same number for the same
data). :func:`make_calibration_scorer` builds one for any of the ten metrics
:class:`CalibrationScorer` lists, with its options.

**Display.** :class:`BayesianCalibrationDisplay` follows
:class:`sklearn.calibration.CalibrationDisplay`: ``from_estimator``,
``from_predictions`` and ``plot(ax=...)``, with ``prob_true``,
``prob_pred``, ``ax_`` and ``figure_``; it draws bece's reliability diagram
(:func:`bece.plots.reliability_diagram`): the per-bin observed frequencies,
the posterior band and the ECE's posterior in the title, and keeps the
posterior as ``result``.
"""

from ._api.scorers import (
    CalibrationScorer,
    ece_scorer,
    make_calibration_scorer,
    posterior_ece_scorer,
)
from ._plots.sklearn_display import BayesianCalibrationDisplay

__all__ = [
    "BayesianCalibrationDisplay",
    "CalibrationScorer",
    "ece_scorer",
    "make_calibration_scorer",
    "posterior_ece_scorer",
]
