"""Scorers for scikit-learn's model selection: minus a calibration metric of ``predict_proba``.

Re-exported by :mod:`bece.sklearn`, whose docstring says how the
probabilities are read and the sign convention.
"""


from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "SCORER_METRICS",
    "CalibrationScorer",
    "binary_column",
    "ece_scorer",
    "make_calibration_scorer",
    "posterior_ece_scorer",
    "read_estimator",
]


def _posterior_mean(y_true: Any, y_prob: Any, **options: Any) -> float:
    from .ece import bayesian_ece

    options = {"num_samples": 2000, "seed": 0, **options}
    return float(bayesian_ece(y_true, y_prob, **options).mean)


def _metric(name: str) -> Callable[..., float]:
    from .._metrics.binned import expected_calibration_error, maximum_calibration_error
    from .._metrics.clinical import ks_calibration_error
    from .._metrics.l2 import ece_sweep, l2_calibration_error
    from .._metrics.scores import brier_score, log_loss
    from .._metrics.smooth_ece import smooth_calibration_error

    metrics: dict[str, Callable[..., Any]] = {
        "ece": expected_calibration_error, "posterior_ece": _posterior_mean,
        "mce": maximum_calibration_error, "l2": l2_calibration_error,
        "debiased_l2": lambda *a, **k: l2_calibration_error(*a, debiased=True, **k),
        "smooth_ece": smooth_calibration_error, "ece_sweep": ece_sweep,
        "brier": brier_score, "log_loss": log_loss, "ks": ks_calibration_error,
    }
    return metrics[name]


#: The metrics a scorer can use (each lower is better, 0 at best): the binned
#: plug-in ECE and MCE, the default model's posterior mean ECE, the l2 ECE
#: (plain and debiased), the smooth ECE, the ECE-sweep, the Brier score, the
#: log loss and the Kolmogorov-Smirnov calibration error (bece.metrics).
SCORER_METRICS = ("ece", "posterior_ece", "mce", "l2", "debiased_l2", "smooth_ece",
                  "ece_sweep", "brier", "log_loss", "ks")


class CalibrationScorer:
    """``scorer(estimator, X, y)``: minus a calibration metric of
    ``estimator.predict_proba(X)`` against ``y`` (module docstring).

    Parameters
    ----------
    metric : str
        One of ``"ece"`` and ``"mce"`` (binned plug-in), ``"posterior_ece"``
        (the default model's posterior mean), ``"l2"``, ``"debiased_l2"``,
        ``"smooth_ece"``, ``"ece_sweep"``, ``"brier"``, ``"log_loss"``,
        ``"ks"`` (:mod:`bece.metrics`); each lower is better, 0 at best.
    **options
        Keywords of the metric (``n_bins=10``, ``binning="quantile"``;
        ``model="binned"``, ``num_samples``, ``seed`` for ``"posterior_ece"``).
        The reading of the probabilities (``pos_label``, ``labels``) comes
        from the estimator's ``classes_``.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import GridSearchCV
    >>> from bece.sklearn import CalibrationScorer
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> scorer = CalibrationScorer("brier")
    >>> scorer
    make_calibration_scorer('brier')
    >>> search = GridSearchCV(LogisticRegression(max_iter=5000), {"C": [0.01, 1.0]}, cv=3,
    ...                       scoring=scorer).fit(X, y)
    >>> sorted(search.best_params_)
    ['C']
    """

    def __init__(self, metric: str, **options: Any) -> None:
        if metric not in SCORER_METRICS:
            raise ValueError(f"metric must be one of {SCORER_METRICS}, got {metric!r}")
        given = {"pos_label", "labels", "from_logits"} & set(options)
        if given:
            raise ValueError(f"{', '.join(sorted(given))}: set from the estimator's classes_ and "
                             "predict_proba, not an option of the scorer")
        self.metric = metric
        self.options = options

    def __call__(self, estimator: Any, X: Any, y_true: ArrayLike,
                 sample_weight: ArrayLike | None = None) -> float:
        y_true, y_prob, reading = read_estimator(estimator, X, y_true)
        extra = {} if sample_weight is None else {"sample_weight": sample_weight}
        return -float(_metric(self.metric)(y_true, y_prob, **reading, **self.options, **extra))

    def __repr__(self) -> str:
        opts = "".join(f", {k}={v!r}" for k, v in self.options.items())
        return f"make_calibration_scorer({self.metric!r}{opts})"


def make_calibration_scorer(metric: str = "ece", **options: Any) -> CalibrationScorer:
    """A scorer for ``scoring=``: minus ``metric`` of the estimator's
    ``predict_proba`` (greater is better), with the metric's ``options``;
    the metrics as :class:`CalibrationScorer`.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import cross_val_score
    >>> from bece.sklearn import make_calibration_scorer
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> scores = cross_val_score(LogisticRegression(max_iter=5000), X, y, cv=3,
    ...                          scoring=make_calibration_scorer("ece", n_bins=10))
    >>> scores.shape, bool((scores <= 0).all())
    ((3,), True)
    """
    return CalibrationScorer(metric, **options)


def ece_scorer(estimator: Any, X: Any, y_true: ArrayLike,
               sample_weight: ArrayLike | None = None) -> float:
    """Minus the plug-in ECE (15 equal-width bins) of ``estimator.predict_proba(X)``:
    ``scoring=ece_scorer`` (:mod:`bece.sklearn`).

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.linear_model import LogisticRegression
    >>> from bece.sklearn import ece_scorer
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> clf = LogisticRegression(max_iter=5000).fit(X[::2], y[::2])
    >>> import bece
    >>> p = clf.predict_proba(X[1::2])[:, 1]
    >>> ece_scorer(clf, X[1::2], y[1::2]) == -bece.expected_calibration_error(y[1::2], p)
    True
    """
    return _ECE(estimator, X, y_true, sample_weight)


def posterior_ece_scorer(estimator: Any, X: Any, y_true: ArrayLike,
                         sample_weight: ArrayLike | None = None) -> float:
    """Minus the posterior mean ECE of the default model (:func:`bece.bayesian_ece`,
    2,000 draws, seed 0) of ``estimator.predict_proba(X)``: ``scoring=posterior_ece_scorer``.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.linear_model import LogisticRegression
    >>> from bece.sklearn import posterior_ece_scorer
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> clf = LogisticRegression(max_iter=5000).fit(X[::2], y[::2])
    >>> score = posterior_ece_scorer(clf, X[1::2], y[1::2])
    >>> bool(-0.2 < score < 0)
    True
    """
    return _POSTERIOR(estimator, X, y_true, sample_weight)


_ECE = CalibrationScorer("ece")
_POSTERIOR = CalibrationScorer("posterior_ece")


def read_estimator(estimator: Any, X: Any, y_true: Any,
                   positive: Any = None) -> tuple[Any, np.ndarray, dict[str, Any]]:
    """``y_true``, the probabilities and how to read them, from a fitted classifier."""
    if not hasattr(estimator, "predict_proba"):
        raise ValueError(f"estimator must have predict_proba (a fitted classifier), got "
                         f"{type(estimator).__name__}")
    proba = np.asarray(estimator.predict_proba(X))
    classes = np.asarray(getattr(estimator, "classes_", np.arange(proba.shape[1])))
    if proba.ndim != 2 or proba.shape[1] != classes.size:
        raise ValueError(f"predict_proba must return shape (n, {classes.size}) for "
                         f"{classes.size} classes_, got {proba.shape}")
    return (y_true, *binary_column(proba, classes, positive))


def binary_column(proba: np.ndarray, classes: np.ndarray,
                  positive: Any = None) -> tuple[np.ndarray, dict[str, Any]]:
    """Two classes: the column of class ``positive`` (default ``classes[1]``) as
    P(y = positive), read with ``pos_label=positive``; more: the matrix with its
    ``labels``."""
    if classes.size == 2:
        if positive is None:
            positive = classes[1]
        if positive not in classes:
            raise ValueError(f"pos_label={positive!r} is not one of the classes "
                             f"{classes.tolist()}")
        col = int(np.flatnonzero(classes == positive)[0])
        label = positive.item() if isinstance(positive, np.generic) else positive
        return proba[:, col], {"pos_label": label}
    if positive is not None:
        raise ValueError("pos_label applies to two classes; with more, the probabilities are "
                         "read top-label")
    return proba, {"labels": classes}
