r"""Binary recalibrators: Platt scaling, isotonic regression, beta calibration.

Each maps the score of class 1 of a two-class classifier to a calibrated
:math:`P(y = 1)`. ``X`` is (n,) (the log-odds, or :math:`P(y=1)`) or (n, 2)
(two columns of logits or probabilities), as ``input`` says
(:mod:`bece._calibrate.scores`); more than two classes are refused (use
:class:`~bece.calibrate.TopLabelCalibrator` or the scaling families). With
:math:`\ell_0, \ell_1` the log-probabilities of the two classes (log-softmax
of logits; the logarithm of probabilities, zeros read as
``finfo(dtype).tiny``):

* :class:`PlattScaling` (Platt 1999): :math:`\sigma(a (\ell_1 - \ell_0) + c)`,
  a logistic regression on the log-odds, fitted on Platt's smoothed targets
  :math:`(N_+ + 1)/(N_+ + 2)` and :math:`1/(N_- + 2)` as scikit-learn's
  ``CalibratedClassifierCV(method="sigmoid")`` does
  (``smoothed_targets=False``: on the labels themselves); probabilities
  that hold exact 0s or 1s are read in :math:`[\epsilon, 1 - \epsilon]`
  instead, :math:`\epsilon` half the smallest distance of the others from
  0 or 1 (``clip_``, with a warning);
* :class:`IsotonicCalibration`: :class:`sklearn.isotonic.IsotonicRegression`
  (increasing, values in [0, 1], ``out_of_bounds="clip"``) of y on the
  score itself: :math:`P(y=1)` for probabilities, the log-odds
  :math:`\ell_1 - \ell_0` for logits (isotonic regression depends on the
  order of the scores only, but the interpolation between its thresholds
  is linear in the score it is fitted on);
* :class:`BetaCalibration` (Kull, Silva Filho & Flach 2017, the three-parameter
  "abm" model): :math:`\sigma(a \ell_1 - b \ell_0 + c)` with
  :math:`a, b \ge 0`, a logistic regression on :math:`(\ell_1, -\ell_0)`;
  if the fit gives :math:`a < 0` it is refitted with :math:`a = 0` (only
  :math:`-\ell_0`), if :math:`b < 0` with :math:`b = 0`, as the authors'
  ``betacal`` does; if the refitted slope is negative too, the map is the
  constant :math:`\operatorname{logit}(\bar y)` (betacal keeps the negative
  slope, outside its model). ``betacal`` clips probabilities to
  :math:`[\epsilon, 1 - \epsilon]` (machine epsilon) before the logarithm;
  here, as for Platt scaling, probabilities that hold exact 0s or 1s are
  read in :math:`[\epsilon, 1 - \epsilon]` with :math:`\epsilon` half the
  smallest distance of the others from 0 or 1 (``clip_``, with a warning),
  and others are used as given.

The logistic fits are :class:`sklearn.linear_model.LogisticRegression`
without penalty (``C=inf``, lbfgs, ``tol=1e-10``, ``max_iter=1000``).
"""

from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import expit

from .base import CalibrationWarning, ScoreCalibrator
from .scores import Scores, log_softmax
from .stored import Field

__all__ = [
    "BetaCalibration",
    "BinaryCalibrator",
    "IsotonicCalibration",
    "PlattScaling",
    "binary_log_probabilities",
    "clipped_log_probabilities",
    "saturation_clip",
]


def _require_two(scores: Scores) -> None:
    if scores.k != 2:
        raise ValueError(
            f"X must hold a binary classifier's scores ((n,) or (n, 2)), got K = {scores.k} "
            "classes: use TopLabelCalibrator or a scaling family for more classes"
        )


def binary_log_probabilities(scores: Scores) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`(\ell_0, \ell_1)`, each float64 (n,), of two-class scores."""
    _require_two(scores)
    lp = scores.block(0, scores.n)
    if scores.kind == "logits":
        lp = log_softmax(lp)
    return lp[:, 0], lp[:, 1]


def _logistic(x: np.ndarray, y: np.ndarray, weight: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=np.inf, tol=1e-10, max_iter=1000)
    model.fit(x, y, sample_weight=weight)
    return np.asarray(model.coef_[0], dtype=np.float64), float(model.intercept_[0])


class BinaryCalibrator(ScoreCalibrator):
    """Base of the binary calibrators: :meth:`_p1` maps checked scores to :math:`P(y=1)`."""

    def _p1(self, scores: Scores) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _one(self, scores: Scores, y: np.ndarray) -> None:
        if np.unique(y).size < 2:
            raise ValueError(f"y must hold both classes to fit {type(self).__name__}; "
                             f"it holds only {self.classes_[y[0]]!r}")

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """Calibrated probabilities, shape (n, 2): :math:`P(y = 0)`, :math:`P(y = 1)`."""
        p1 = self._p1(self._scores(X))
        return np.column_stack([1.0 - p1, p1])

    def predict(self, X: ArrayLike) -> np.ndarray:
        """``classes_[1]`` where the calibrated :math:`P(y = 1) > 1/2`, else ``classes_[0]``."""
        index = (self._p1(self._scores(X)) > 0.5).astype(np.int64)
        return self.classes_[index]


#: ``clip_`` of the calibrators that read exact 0/1 probabilities inside the
#: grid; absent from files written before it existed: 0, as they were fitted
CLIP_FIELD = Field("float", low=0.0, high=0.25, default=0.0)


def saturation_clip(scores: Scores, name: str) -> float:
    """:math:`\\epsilon` for probabilities that hold exact 0s or 1s (infinite
    log-odds): half the smallest distance of the others from 0 or 1, with a
    :class:`~bece.calibrate.CalibrationWarning`; 0 for other probabilities
    and for logits (:class:`PlattScaling` says why)."""
    if scores.kind != "probabilities":
        return 0.0
    p = scores.binary_score()
    saturated = int(np.count_nonzero((p == 0) | (p == 1)))
    if not saturated:
        return 0.0
    inside = np.concatenate([p[p > 0], 1.0 - p[p < 1]])
    # all at 0 or 1: any finite value gives the same two-point fit
    clip = float(inside.min()) / 2 if inside.size else 0.25
    warnings.warn(
        f"{name}: {saturated} of {p.size} probabilities are exactly 0 or 1 (infinite "
        f"log-odds); every probability is read in [{clip:.3g}, 1 - {clip:.3g}] (clip_), half "
        "the smallest distance of the others from 0 or 1. Pass input='logits' to choose the "
        "log-odds yourself.", CalibrationWarning, stacklevel=4)
    return clip


def clipped_log_probabilities(scores: Scores, clip: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`binary_log_probabilities`, probabilities read in :math:`[\\epsilon,
    1 - \\epsilon]` when ``clip`` :math:`\\epsilon` is positive."""
    if clip > 0 and scores.kind == "probabilities":
        p = np.clip(scores.binary_score(), clip, 1.0 - clip)
        return np.log1p(-p), np.log(p)
    return binary_log_probabilities(scores)


class PlattScaling(BinaryCalibrator):
    r"""Platt scaling: :math:`\sigma(a\,s + c)` on the log-odds :math:`s` (module docstring).

    Probabilities of exactly 0 or 1 have infinite log-odds (read as about
    :math:`\pm 708`, they would dominate the fit: a random forest whose
    validation scores were 5.7% exactly 0 or 1 got slope 0.83 where it
    needed one above 1, and a higher ECE). A forest's or any frequency's
    probabilities are rounded to a grid, and an exact 0 or 1 is a value
    closer to 0 or 1 than the grid resolves: when probabilities given to
    :meth:`fit` hold some, every probability (at fit and at predict) is
    read in :math:`[\epsilon, 1 - \epsilon]`, with :math:`\epsilon`
    (``clip_``) half the smallest distance from 0 or 1 of the others, and a
    :class:`~bece.calibrate.CalibrationWarning` says so. On that forest the
    ECE then falls from 0.020 to 0.013, where scikit-learn's sigmoid
    calibration (fitted on :math:`P(y=1)` itself) gives 0.021. Pass log-odds
    (``input="logits"``) to choose their values yourself.

    Parameters
    ----------
    input : {"auto", "logits", "probabilities"}, default "auto"
    smoothed_targets : bool, default True
        Fit on Platt's smoothed targets (scikit-learn's sigmoid calibration);
        False: on the labels.

    Attributes
    ----------
    coef_ : float
        :math:`a`.
    intercept_ : float
        :math:`c`.
    clip_ : float
        :math:`\epsilon`: probabilities are read in :math:`[\epsilon, 1 -
        \epsilon]` (0: as given; probabilities without an exact 0 or 1,
        and logits).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> s = rng.normal(scale=3.0, size=4000)                # a binary classifier's log-odds
    >>> y = rng.uniform(size=4000) < 1 / (1 + np.exp(-s / 2))   # over-confident: true log-odds s / 2
    >>> from bece.calibrate import PlattScaling
    >>> platt = PlattScaling().fit(s[:2000], y[:2000])
    >>> platt.input_, bool(abs(platt.coef_ - 0.5) < 0.1)   # a = 1/2 undoes the over-confidence
    ('logits', True)
    >>> platt.predict_proba(s[2000:]).shape                 # P(y = 0), P(y = 1)
    (2000, 2)
    """

    _contract = {"coef_": Field("float"), "intercept_": Field("float"), "clip_": CLIP_FIELD}

    def __init__(self, *, input: str = "auto", smoothed_targets: bool = True) -> None:
        self.input = input
        self.smoothed_targets = smoothed_targets

    def _check_params(self) -> None:
        if not isinstance(self.smoothed_targets, (bool, np.bool_)):
            raise ValueError(f"smoothed_targets must be True or False, got {self.smoothed_targets!r}")

    def _fit(self, scores: Scores, y: np.ndarray) -> None:
        self.clip_ = saturation_clip(scores, type(self).__name__)
        self._one(scores, y)
        l0, l1 = clipped_log_probabilities(scores, self.clip_)
        s = (l1 - l0)[:, None]
        z = y.astype(np.float64)
        if self.smoothed_targets:
            n_pos = z.sum()
            n_neg = z.size - n_pos
            t = np.where(z > 0, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
            coef, inter = _logistic(np.vstack([s, s]), np.r_[np.ones(z.size), np.zeros(z.size)],
                                    np.r_[t, 1.0 - t])
        else:
            coef, inter = _logistic(s, z)
        self.coef_ = float(coef[0])
        self.intercept_ = inter

    def _p1(self, scores: Scores) -> np.ndarray:
        l0, l1 = clipped_log_probabilities(scores, self.clip_)
        return expit(self.coef_ * (l1 - l0) + self.intercept_)


class IsotonicCalibration(BinaryCalibrator):
    """Isotonic regression of y on the score (module docstring).

    Predictions interpolate linearly between the fitted thresholds and take
    the nearest threshold's value outside them, as
    ``IsotonicRegression(out_of_bounds="clip").predict``.

    Parameters
    ----------
    input : {"auto", "logits", "probabilities"}, default "auto"

    Attributes
    ----------
    X_thresholds_, y_thresholds_ : ndarray of shape (m,)
        The fitted step function's knots (scikit-learn's attributes).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> s = rng.normal(scale=3.0, size=4000)                # a binary classifier's log-odds
    >>> y = rng.uniform(size=4000) < 1 / (1 + np.exp(-s / 2))   # over-confident: true log-odds s / 2
    >>> from bece import expected_calibration_error
    >>> from bece.calibrate import IsotonicCalibration
    >>> iso = IsotonicCalibration().fit(s[:2000], y[:2000])
    >>> bool(np.all(np.diff(iso.y_thresholds_) >= 0))      # a non-decreasing map
    True
    >>> p_before = 1 / (1 + np.exp(-s[2000:]))
    >>> p_after = iso.predict_proba(s[2000:])[:, 1]
    >>> ece_before = expected_calibration_error(y[2000:], p_before)
    >>> bool(expected_calibration_error(y[2000:], p_after) < ece_before / 2)
    True
    """

    _contract = {
        "X_thresholds_": Field("array", ndim=1, nondecreasing=True),
        "y_thresholds_": Field("array", shape=lambda est: est.X_thresholds_.shape, low=0.0, high=1.0,
                               nondecreasing=True),
    }

    def __init__(self, *, input: str = "auto") -> None:
        self.input = input

    @staticmethod
    def _score(scores: Scores) -> np.ndarray:
        _require_two(scores)
        return scores.binary_score()

    def _fit(self, scores: Scores, y: np.ndarray) -> None:
        from sklearn.isotonic import IsotonicRegression

        s = self._score(scores)
        self._one(scores, y)
        iso = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip")
        iso.fit(s, y.astype(np.float64))
        self.X_thresholds_ = np.asarray(iso.X_thresholds_, dtype=np.float64)
        self.y_thresholds_ = np.asarray(iso.y_thresholds_, dtype=np.float64)

    def _p1(self, scores: Scores) -> np.ndarray:
        return np.interp(self._score(scores), self.X_thresholds_, self.y_thresholds_)


class BetaCalibration(BinaryCalibrator):
    r"""Beta calibration: :math:`\sigma(a \log p - b \log(1 - p) + c)`, :math:`a, b \ge 0`.

    Parameters
    ----------
    input : {"auto", "logits", "probabilities"}, default "auto"

    Attributes
    ----------
    a_, b_, c_ : float
        The fitted map (module docstring); :math:`a = b` is Platt scaling on
        the log-odds.
    clip_ : float
        :math:`\epsilon`: probabilities are read in :math:`[\epsilon, 1 -
        \epsilon]`, as :class:`PlattScaling` reads them (0: as given).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> s = rng.normal(scale=3.0, size=4000)                # a binary classifier's log-odds
    >>> y = rng.uniform(size=4000) < 1 / (1 + np.exp(-s / 2))   # over-confident: true log-odds s / 2
    >>> from bece.calibrate import BetaCalibration
    >>> beta = BetaCalibration().fit(s[:2000], y[:2000])
    >>> bool(abs(beta.a_ - 0.5) < 0.1), bool(abs(beta.b_ - 0.5) < 0.1)   # Platt's a = b = 1/2
    (True, True)
    """

    _contract = {"a_": Field("float"), "b_": Field("float"), "c_": Field("float"),
                 "clip_": CLIP_FIELD}

    def __init__(self, *, input: str = "auto") -> None:
        self.input = input

    def _fit(self, scores: Scores, y: np.ndarray) -> None:
        self.clip_ = saturation_clip(scores, type(self).__name__)
        l0, l1 = clipped_log_probabilities(scores, self.clip_)
        self._one(scores, y)
        x = np.column_stack([l1, -l0])
        coef, c = _logistic(x, y)
        a, b = coef
        if a < 0:
            coef, c = _logistic(x[:, 1:], y)
            a, b = 0.0, coef[0]
        elif b < 0:
            coef, c = _logistic(x[:, :1], y)
            a, b = coef[0], 0.0
        if a < 0 or b < 0:  # the refit's slope is negative too: a constant
            mean = float(np.mean(y))
            a, b, c = 0.0, 0.0, float(np.log(mean) - np.log1p(-mean))
        self.a_, self.b_, self.c_ = float(a), float(b), float(c)

    def _p1(self, scores: Scores) -> np.ndarray:
        l0, l1 = clipped_log_probabilities(scores, self.clip_)
        return expit(self.a_ * l1 - self.b_ * l0 + self.c_)
