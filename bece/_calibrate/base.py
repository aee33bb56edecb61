"""The estimator protocol every recalibrator shares: scikit-learn's, plus JSON.

:class:`ScoreCalibrator` is a scikit-learn classifier (``BaseEstimator``,
``ClassifierMixin``): ``get_params``/``set_params``, ``sklearn.base.clone``,
``fit(X, y)``, ``predict_proba(X)``, ``predict(X)``, ``score``, fitted
attributes with a trailing underscore, ``classes_``. ``X`` holds a
classifier's scores (:mod:`bece._calibrate.scores`), not arbitrary features.
Fitted calibrators pickle (and ``joblib.dump``) as scikit-learn estimators do,
and :meth:`ScoreCalibrator.to_json` / :meth:`ScoreCalibrator.from_json` write
and read a small JSON of their parameters (floats written with Python's
``repr``, so a round trip gives identical predictions).
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from .._base.version import VERSION
from .scores import INPUTS, Scores, as_scores, encode_labels
from .stored import COMMON, Field, check_fitted, decode, encode, parse

__all__ = [
    "CalibrationWarning",
    "JSON_FORMAT",
    "ScoreCalibrator",
    "from_json",
]


class CalibrationWarning(UserWarning):
    """A calibrator read part of its input in a way the user should know of.

    :class:`~bece.calibrate.TopLabelCalibrator`: a label had too few calibration points and
    keeps its confidences. :class:`~bece.calibrate.PlattScaling`: some probabilities were
    exactly 0 or 1, whose log-odds are infinite, and were read at a finite
    distance from 0 and 1 (``clip_``).

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from bece.calibrate import CalibrationWarning, TopLabelCalibrator
    >>> rng = np.random.default_rng(0)
    >>> prob = rng.dirichlet([1.0, 1.0, 1.0], size=40)
    >>> y = (rng.uniform(size=(40, 1)) > prob.cumsum(axis=1)).sum(axis=1)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     cal = TopLabelCalibrator(min_samples=20).fit(prob, y)
    >>> [w.category.__name__ for w in caught]
    ['CalibrationWarning']
    >>> cal.n_samples_                       # each label predicted fewer than 20 times
    array([ 8, 16, 16])
    """

JSON_FORMAT = 1

_REGISTRY: dict[str, type[ScoreCalibrator]] = {}


class ScoreCalibrator(ClassifierMixin, BaseEstimator):
    """Base of the recalibrators of a classifier's scores.

    Subclasses define ``__init__`` (keyword parameters, stored as given,
    among them ``input``), :meth:`_fit` and :meth:`_proba_block`, and list
    the contract of their fitted attributes in ``_contract`` (name to
    :class:`~bece._calibrate.stored.Field`) for :meth:`to_json` and
    :meth:`from_json`.

    Attributes
    ----------
    classes_ : ndarray of shape (K,)
        The class of each column of ``X`` (:func:`~bece._calibrate.scores.encode_labels`).
    n_classes_ : int
        K.
    input_ : {"logits", "probabilities"}
        How ``X`` was read (``input="auto"`` decided at :meth:`fit`).
    binary_input_ : bool
        ``X`` was 1-D (a binary classifier's score).
    n_features_in_ : int
        Columns of ``X`` (K; 1 for 1-D input).

    Examples
    --------
    Every calibrator of :mod:`bece.calibrate` is a scikit-learn estimator:

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> logits = rng.normal(scale=3.0, size=(2000, 3))
    >>> p_true = np.exp(logits / 2) / np.exp(logits / 2).sum(axis=1, keepdims=True)
    >>> y = (rng.uniform(size=(2000, 1)) > p_true.cumsum(axis=1)).sum(axis=1)   # T = 2
    >>> from sklearn.base import clone
    >>> from bece.calibrate import ScoreCalibrator, TemperatureScaling
    >>> cal = TemperatureScaling(input="auto")
    >>> isinstance(cal, ScoreCalibrator), cal.get_params()["input"]
    (True, 'auto')
    >>> cal = clone(cal).fit(logits[:1000], y[:1000])
    >>> cal.input_, cal.n_classes_, cal.classes_                # "auto" read logits
    ('logits', 3, array([0, 1, 2]))
    >>> cal.predict_proba(logits[1000:]).shape, cal.predict(logits[1000:]).shape
    ((1000, 3), (1000,))
    >>> bool(cal.score(logits[1000:], y[1000:]) > 0.5)          # accuracy, as ClassifierMixin
    True
    """

    input: str
    _contract: ClassVar[dict[str, Field]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _REGISTRY[cls.__name__] = cls

    # ----------------------------------------------------------------- fit
    def _check_params(self) -> None:
        """ValueError naming a parameter that is not allowed (subclasses add theirs)."""

    def fit(self, X: ArrayLike, y: ArrayLike) -> ScoreCalibrator:
        """Fit the calibrator on a calibration (validation) set.

        Parameters
        ----------
        X : array_like of shape (n, K) or (n,)
            Scores of the calibration set: logits or probabilities, as the
            ``input`` option says (:mod:`bece._calibrate.scores`).
        y : array_like of shape (n,)
            Labels: ``0 .. K-1``, or K distinct labels in the columns' order.

        Returns
        -------
        self
        """
        self._check_params()
        scores = as_scores(X, self.input)
        classes, index = encode_labels(y, scores.n, scores.k)
        self.classes_ = classes
        self.n_classes_ = int(scores.k)
        self.input_ = scores.kind
        self.binary_input_ = bool(scores.binary)
        self.n_features_in_ = scores.n_features
        self._fit(scores, index)
        return self

    def _fit(self, scores: Scores, y: np.ndarray) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    # ------------------------------------------------------------- predict
    def _scores(self, X: ArrayLike) -> Scores:
        check_is_fitted(self, "classes_")
        scores = as_scores(X, self.input_)
        if scores.binary != self.binary_input_ or scores.k != self.n_classes_:
            fitted = "(n,)" if self.binary_input_ else f"(n, {self.n_classes_})"
            raise ValueError(
                f"X has shape {scores.data.shape} but the calibrator was fitted on shape {fitted}"
            )
        return scores

    def _proba_block(self, block: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """Calibrated class probabilities.

        Parameters
        ----------
        X : array_like of shape (n, K) or (n,)
            Scores of the same kind and K as in :meth:`fit`.

        Returns
        -------
        ndarray of shape (n, K), float64
            Column k is the probability of ``classes_[k]`` (two columns for
            1-D input: :math:`P(y = 0)`, :math:`P(y = 1)`).
        """
        scores = self._scores(X)
        out = np.empty((scores.n, scores.k), dtype=np.float64)
        for start, stop, block in scores.blocks():
            out[start:stop] = self._proba_block(block)
        return out

    def predict(self, X: ArrayLike) -> np.ndarray:
        """The most probable class of each row after calibration (``classes_[argmax]``)."""
        scores = self._scores(X)
        index = np.empty(scores.n, dtype=np.int64)
        for start, stop, block in scores.blocks():
            index[start:stop] = self._proba_block(block).argmax(axis=1)
        return self.classes_[index]

    # ---------------------------------------------------------------- JSON
    def to_json(self) -> str:
        """The fitted calibrator as a JSON string: its class, parameters and
        fitted attributes (:meth:`from_json` reads it back)."""
        check_is_fitted(self, "classes_")
        names = ["classes_", *COMMON, *self._contract]
        return json.dumps({
            "estimator": type(self).__name__,
            "format": JSON_FORMAT,
            "bece_version": VERSION,
            "params": {k: encode(v) for k, v in self.get_params(deep=False).items()},
            "fitted": {name: encode(getattr(self, name)) for name in names},
        })

    @classmethod
    def from_json(cls, text: str) -> ScoreCalibrator:
        """A fitted calibrator from :meth:`to_json`'s string.

        Called on :class:`ScoreCalibrator` itself it returns whichever
        calibrator the string holds; on a subclass, the string must hold
        that class. It loads only if every field meets the fitted
        estimator's contract (:mod:`bece._calibrate.stored`); otherwise a
        ValueError names the field.
        """
        spec = parse(text)
        if spec["format"] != JSON_FORMAT:
            raise ValueError(f"text has JSON format {spec['format']!r}; this bece reads {JSON_FORMAT}")
        name = spec["estimator"]
        target = _REGISTRY.get(name) if isinstance(name, str) else None
        if target is not None and not target._contract:  # a base class: nothing is fitted
            target = None
        if target is None or (cls is not ScoreCalibrator and target is not cls):
            raise ValueError(f"text holds a {name!r}, not a {cls.__name__}")
        allowed = target().get_params(deep=False)
        unknown = [k for k in spec["params"] if k not in allowed]
        if unknown:
            raise ValueError(f"params holds {', '.join(map(repr, unknown))}, which a {name} does "
                             f"not take (it takes {', '.join(allowed)})")
        obj = target(**{k: decode(v, k) for k, v in spec["params"].items()})
        if not isinstance(obj.input, str) or obj.input not in INPUTS:
            raise ValueError(f"input must be one of {INPUTS}, got {obj.input!r}")
        obj._check_params()
        check_fitted(obj, spec["fitted"], target._contract)
        return obj


def from_json(text: str) -> ScoreCalibrator:
    """Any fitted calibrator from its :meth:`ScoreCalibrator.to_json` string.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> logits = rng.normal(scale=3.0, size=(2000, 3))
    >>> p_true = np.exp(logits / 2) / np.exp(logits / 2).sum(axis=1, keepdims=True)
    >>> y = (rng.uniform(size=(2000, 1)) > p_true.cumsum(axis=1)).sum(axis=1)   # T = 2
    >>> from bece.calibrate import IsotonicCalibration, TemperatureScaling, from_json
    >>> fitted = TemperatureScaling(input="logits").fit(logits, y)
    >>> text = fitted.to_json()                     # store it with the model
    >>> again = from_json(text)
    >>> again, again.temperature_ == fitted.temperature_
    (TemperatureScaling(input='logits'), True)
    >>> bool(np.array_equal(again.predict_proba(logits), fitted.predict_proba(logits)))
    True
    >>> IsotonicCalibration.from_json(text)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: text holds a 'TemperatureScaling', not a...IsotonicCalibration
    """
    return ScoreCalibrator.from_json(text)
