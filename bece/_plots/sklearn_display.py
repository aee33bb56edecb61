"""scikit-learn's display convention for bece's posterior calibration curve.

Re-exported by :mod:`bece.sklearn`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._api.scorers import read_estimator
from .._results.ece import BayesianECE

__all__ = ["BayesianCalibrationDisplay"]


class BayesianCalibrationDisplay:
    """The posterior calibration curve, in scikit-learn's display convention.

    Built by :meth:`from_estimator` or :meth:`from_predictions` (as
    :class:`sklearn.calibration.CalibrationDisplay`), which compute the
    posterior (:func:`bece.bayesian_ece`) and call :meth:`plot`.

    Parameters
    ----------
    result : BayesianECE
        The posterior to draw.
    estimator_name : str, optional
        Shown in the title.
    pos_label : optional
        The class whose probability was read (two classes).

    Attributes
    ----------
    prob_true, prob_pred : ndarray of shape (n_bins,)
        Observed frequency (accuracy) and mean predicted probability
        (confidence) of each bin; NaN for an empty bin (scikit-learn's
        ``calibration_curve`` leaves empty bins out).
    result : BayesianECE
        The posterior.
    ax_, figure_
        The matplotlib axes and figure, after :meth:`plot`.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.linear_model import LogisticRegression
    >>> from bece.sklearn import BayesianCalibrationDisplay
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> clf = LogisticRegression(max_iter=5000).fit(X[::2], y[::2])
    >>> disp = BayesianCalibrationDisplay.from_estimator(clf, X[1::2], y[1::2], n_bins=10)
    >>> disp.prob_true.shape, disp.result.model, disp.ax_ is not None
    ((10,), 'smooth', True)
    """

    def __init__(self, result: BayesianECE, *, estimator_name: str | None = None,
                 pos_label: Any = None) -> None:
        self.result = result
        self.estimator_name = estimator_name
        self.pos_label = pos_label
        self.prob_true = np.asarray(result.stats.accuracy, dtype=np.float64)
        self.prob_pred = np.asarray(result.stats.confidence, dtype=np.float64)
        self.ax_: Any = None
        self.figure_: Any = None

    def plot(self, *, ax: Any = None, name: str | None = None, **kwargs: Any
             ) -> BayesianCalibrationDisplay:
        """Draw the reliability diagram on ``ax`` (a new figure by default);
        ``kwargs`` go to :func:`bece.plots.reliability_diagram` (``prob``,
        ``show_counts``, ...). Returns the display."""
        from .reliability import reliability_diagram

        ax = reliability_diagram(self.result, ax=ax, **kwargs)
        name = self.estimator_name if name is None else name
        if name:
            ax.set_title(f"{name}: {ax.get_title()}", fontsize="medium")
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_estimator(cls, estimator: Any, X: Any, y: ArrayLike, *, n_bins: int = 15,
                       strategy: str = "uniform", pos_label: Any = None, name: str | None = None,
                       ax: Any = None, model: str = "smooth", num_samples: int = 10_000,
                       seed: int = 0, **kwargs: Any) -> BayesianCalibrationDisplay:
        """The display of a fitted classifier's ``predict_proba(X)`` against ``y``:
        two classes read as P(y = ``pos_label``) (default ``classes_[1]``),
        more read top-label. ``strategy`` ("uniform" or "quantile") names the
        bins as scikit-learn does; ``model``, ``num_samples`` and ``seed`` go to
        :func:`bece.bayesian_ece`; ``kwargs`` to :meth:`plot`."""
        _, proba, reading = read_estimator(estimator, X, y, pos_label)
        name = type(estimator).__name__ if name is None else name
        return cls._build(y, proba, reading, n_bins=n_bins, strategy=strategy, name=name, ax=ax,
                          model=model, num_samples=num_samples, seed=seed, **kwargs)

    @classmethod
    def from_predictions(cls, y_true: ArrayLike, y_prob: ArrayLike, *, n_bins: int = 15,
                         strategy: str = "uniform", pos_label: Any = None,
                         name: str | None = None, ax: Any = None, model: str = "smooth",
                         num_samples: int = 10_000, seed: int = 0,
                         **kwargs: Any) -> BayesianCalibrationDisplay:
        """The display of ``y_prob`` against ``y_true``: P(y = ``pos_label``) of
        shape (n,) (default label 1 for 0/1 and -1/1 labels), or class
        probabilities of shape (n, K) read top-label; options as
        :meth:`from_estimator`."""
        reading = {} if pos_label is None else {"pos_label": pos_label}
        return cls._build(y_true, y_prob, reading, n_bins=n_bins, strategy=strategy, name=name,
                          ax=ax, model=model, num_samples=num_samples, seed=seed, **kwargs)

    @classmethod
    def _build(cls, y_true: Any, y_prob: Any, reading: dict[str, Any], *, n_bins: int,
               strategy: str, name: str | None, ax: Any, model: str, num_samples: int,
               seed: int, **kwargs: Any) -> BayesianCalibrationDisplay:
        from .._api.ece import bayesian_ece

        if strategy not in ("uniform", "quantile"):
            raise ValueError(f"strategy must be 'uniform' or 'quantile', got {strategy!r}")
        result = bayesian_ece(y_true, y_prob, n_bins=n_bins, binning=strategy, model=model,
                              num_samples=num_samples, seed=seed, **reading)
        display = cls(result, estimator_name=name, pos_label=reading.get("pos_label"))
        return display.plot(ax=ax, **kwargs)
