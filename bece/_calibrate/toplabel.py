r"""Top-label recalibration: one binary calibrator per predicted label.

Following Gupta & Ramdas (2021) and MAPIE's ``TopLabelCalibrator``: on a
calibration set, the points predicted label :math:`l` give pairs
(top confidence :math:`p_i`, correct :math:`z_i = [y_i = l]`), and a binary
calibrator :math:`h_l` is fitted on them. A new prediction keeps its argmax
:math:`l` and gets the calibrated confidence :math:`h_l(p)`:

* ``"isotonic"``: :class:`sklearn.isotonic.IsotonicRegression` (increasing,
  values in [0, 1]; confidences outside the calibration range take the
  nearest fitted value, ``out_of_bounds="clip"``);
* ``"sigmoid"``: Platt scaling on the logit of the confidence,
  :math:`h_l(p) = \sigma(a_l\,\mathrm{logit}(p) + b_l)` fitted by
  :class:`sklearn.linear_model.LogisticRegression` without penalty on
  Platt's smoothed targets :math:`(N_+ + 1)/(N_+ + 2)` and
  :math:`1/(N_- + 2)` (so a label that is always right still gets a finite
  fit). On the logit, :math:`a_l` is a per-label temperature; the logit is
  taken of confidences limited to :math:`[10^{-12}, 1 - 10^{-12}]` (a
  confidence of exactly 1 has an infinite logit);
* ``"histogram"``: Gupta & Ramdas' histogram binning: uniform-mass bins of
  about ``points_per_bin`` calibration points (their default 50) and each
  bin's observed accuracy.

A label predicted fewer than ``min_samples`` times in the calibration set
keeps its confidence unchanged (identity) and a :class:`CalibrationWarning`
names it. Calibrated values are written back row by row, indexed by the
predicted label of each row; nothing depends on which labels happen to be
predicted in a batch (MAPIE 1.x writes into columns by position among the
labels present, which misplaces values when some labels are absent).

It is a scikit-learn classifier (``get_params``, ``clone``, ``fit``,
``predict_proba``, ``predict``; ``classes_ = arange(K)``).
:meth:`TopLabelCalibrator.predict_proba` returns a full (n, K) matrix: the
predicted label's entry is the recalibrated confidence :math:`c = h_l(p)`
and the other entries of the row are the original ones rescaled to sum to
:math:`1 - c`, i.e. :math:`p_k (1 - c) / \sum_{j \ne l} p_j`; when they are all
0 (a confidence of exactly 1) each gets :math:`(1 - c)/(K - 1)`. The rows
sum to one and keep the ranking of the other classes; the predicted label
stays the original argmax (:meth:`~TopLabelCalibrator.predict`), even in
the rare row where a recalibrated confidence falls below a rescaled entry.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import NotFittedError

from .._stats.binning import make_binning
from .._stats.inputs import as_array, check_labels, check_top_label
from .base import CalibrationWarning

__all__ = [
    "METHODS",
    "TopLabelCalibrator",
]

METHODS = ("isotonic", "sigmoid", "histogram")
_LOGIT_LIMIT = 1e-12


def _dense(y_prob: Any) -> Any:
    """``y_prob`` unless it is sparse or complex (ValueError saying so)."""
    from scipy.sparse import issparse

    if issparse(y_prob):
        raise ValueError("y_prob is a sparse matrix: sparse input is not supported; pass a dense array")
    arr = as_array(y_prob, "y_prob")
    if arr.dtype.kind == "c":
        raise ValueError("y_prob holds complex numbers: Complex data not supported")
    return arr


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, _LOGIT_LIMIT, 1.0 - _LOGIT_LIMIT)
    return np.log(p) - np.log1p(-p)


class _Platt:
    """sigma(a logit(p) + b), fitted on Platt's smoothed targets."""

    def fit(self, p: np.ndarray, z: np.ndarray) -> _Platt:
        from sklearn.linear_model import LogisticRegression

        n_pos = int(z.sum())
        n_neg = z.size - n_pos
        t = np.where(z, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
        x = _logit(p)[:, None]
        model = LogisticRegression(C=np.inf, tol=1e-10, max_iter=1000)  # no penalty
        model.fit(np.vstack([x, x]), np.r_[np.ones(z.size), np.zeros(z.size)],
                  sample_weight=np.r_[t, 1.0 - t])
        self.coef_ = float(model.coef_[0, 0])
        self.intercept_ = float(model.intercept_[0])
        return self

    def predict(self, p: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-(self.coef_ * _logit(p) + self.intercept_)))


class _Histogram:
    """Uniform-mass histogram binning (Gupta & Ramdas' HB_binary, without the random nudge)."""

    def __init__(self, points_per_bin: int) -> None:
        self.points_per_bin = points_per_bin

    def fit(self, p: np.ndarray, z: np.ndarray) -> _Histogram:
        n_bins = max(1, p.size // self.points_per_bin)
        self.binning_ = make_binning(p, n_bins, "quantile")
        b = self.binning_.index(p)
        m = self.binning_.n_bins
        count = np.bincount(b, minlength=m)
        hits = np.bincount(b, weights=z, minlength=m)
        # a zero-width bin (tied confidences) may hold no point: it takes the
        # label's overall accuracy
        self.values_ = np.where(count > 0, hits / np.maximum(count, 1), z.mean())
        self.counts_ = count
        return self

    def predict(self, p: np.ndarray) -> np.ndarray:
        return self.values_[self.binning_.index(p)]


class TopLabelCalibrator(ClassifierMixin, BaseEstimator):
    """Recalibrate the top-label confidence with one calibrator per predicted label.

    Parameters
    ----------
    method : {"isotonic", "sigmoid", "histogram"}, default "isotonic"
        The binary calibrator (module docstring).
    min_samples : int, default 20
        Labels predicted fewer times than this in the calibration set keep
        the identity map (with a :class:`CalibrationWarning`): a calibrator
        fitted on a handful of points does more harm than good.
    points_per_bin : int, default 50
        Calibration points per bin for ``method="histogram"`` (Gupta &
        Ramdas' default).

    Attributes
    ----------
    classes_ : ndarray of shape (K,)
        ``arange(K)``: the columns of ``y_prob``.
    n_classes_, n_features_in_ : int
        K seen in :meth:`fit`.
    calibrators_ : dict[int, object]
        Fitted calibrator per label (``None``: identity).
    n_samples_ : ndarray of shape (K,), int64
        Calibration points predicted each label.

    Examples
    --------
    >>> import numpy as np
    >>> from bece.calibrate import TopLabelCalibrator
    >>> rng = np.random.default_rng(0)
    >>> logits = rng.normal(size=(2000, 3)) * 3
    >>> prob = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    >>> y = np.array([rng.choice(3, p=np.exp(r / 3) / np.exp(r / 3).sum()) for r in logits])
    >>> cal = TopLabelCalibrator(method="sigmoid").fit(prob[:1000], y[:1000])
    >>> conf = cal.predict_confidence(prob[1000:])
    >>> bool(conf.mean() < prob[1000:].max(axis=1).mean())  # it was over-confident
    True
    """

    def __init__(self, method: str = "isotonic", *, min_samples: int = 20,
                 points_per_bin: int = 50) -> None:
        self.method = method
        self.min_samples = min_samples
        self.points_per_bin = points_per_bin

    def _check_params(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")
        for name in ("min_samples", "points_per_bin"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")

    def _new(self) -> Any:
        if self.method == "isotonic":
            from sklearn.isotonic import IsotonicRegression

            return IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True,
                                      out_of_bounds="clip")
        if self.method == "sigmoid":
            return _Platt()
        return _Histogram(self.points_per_bin)

    def fit(self, y_prob: ArrayLike, y_true: ArrayLike) -> TopLabelCalibrator:
        """Fit one calibrator per predicted label.

        Parameters
        ----------
        y_prob : array_like of shape (n, K)
            Class probabilities of the calibration set.
        y_true : array_like of shape (n,)
            Its labels, in ``0 .. K-1``.
        """
        self._check_params()
        if y_true is None:
            raise ValueError("fit requires y_true to be passed, but the target y_true is None")
        pred, conf, k = check_top_label(_dense(y_prob))
        y = check_labels(y_true, "y_true", conf.shape[0], n_classes=k)
        z = (y == pred).astype(np.float64)
        self.classes_ = np.arange(k, dtype=np.int64)
        self.n_classes_ = k
        self.n_features_in_ = k
        self.n_samples_ = np.bincount(pred, minlength=k)
        order = np.argsort(pred, kind="stable")
        starts = np.concatenate([[0], np.cumsum(self.n_samples_)])
        self.calibrators_: dict[int, Any] = {}
        few = []
        for label in range(k):
            idx = order[starts[label]:starts[label + 1]]
            if idx.size < self.min_samples:
                self.calibrators_[label] = None
                if idx.size:
                    few.append(label)
                continue
            self.calibrators_[label] = self._new().fit(conf[idx], z[idx])
        never = int((self.n_samples_ == 0).sum())
        if few or never:
            shown = ", ".join(map(str, few[:10])) + (" ..." if len(few) > 10 else "")
            parts = []
            if few:
                parts.append(f"label(s) {shown} predicted fewer than min_samples="
                             f"{self.min_samples} times")
            if never:
                parts.append(f"{never} label(s) never predicted")
            warnings.warn(
                f"{'; '.join(parts)} in the calibration set: their confidences are left "
                "unchanged (identity)", CalibrationWarning, stacklevel=2,
            )
        return self

    def _check_fitted(self, y_prob: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        if not hasattr(self, "calibrators_"):
            raise NotFittedError("this TopLabelCalibrator is not fitted yet: call fit first")
        pred, conf, k = check_top_label(_dense(y_prob))
        if k != self.n_classes_:
            raise ValueError(
                f"y_prob has K = {k} classes but the calibrator was fitted with "
                f"K = {self.n_classes_}"
            )
        return pred, conf

    def predict_confidence(self, y_prob: ArrayLike) -> np.ndarray:
        """Calibrated top-label confidence of each row.

        Returns
        -------
        ndarray of shape (n,), float64
            :math:`h_l(\\max_k p_k)` with :math:`l` the row's argmax.
        """
        pred, conf = self._check_fitted(y_prob)
        out = conf.copy()
        order = np.argsort(pred, kind="stable")
        counts = np.bincount(pred, minlength=self.n_classes_)
        starts = np.concatenate([[0], np.cumsum(counts)])
        for label in np.flatnonzero(counts):
            cal = self.calibrators_[int(label)]
            if cal is not None:
                idx = order[starts[label]:starts[label + 1]]
                out[idx] = cal.predict(conf[idx])
        return out

    def predict_proba(self, y_prob: ArrayLike) -> np.ndarray:
        """Class probabilities with the recalibrated top-label confidence.

        Returns
        -------
        ndarray of shape (n, K), float64
            Row i: the confidence :meth:`predict_confidence` gives at its
            argmax, the other entries rescaled to sum to one minus it (module
            docstring).
        """
        conf = self.predict_confidence(y_prob)
        p = np.array(y_prob, dtype=np.float64)
        n, k = p.shape
        rows = np.arange(n)
        pred = p.argmax(axis=1)
        p[rows, pred] = 0.0
        others = p.sum(axis=1)  # 1 - top, up to the input's rounding
        # rows whose other entries are all zero share 1 - c equally
        empty = others == 0.0
        p *= ((1.0 - conf) / np.where(empty, 1.0, others))[:, None]
        if empty.any():
            p[empty] = ((1.0 - conf[empty]) / (k - 1))[:, None]
        p[rows, pred] = conf
        return p

    def predict(self, y_prob: ArrayLike) -> np.ndarray:
        """The predicted labels (argmax of each row), unchanged by calibration."""
        pred, _ = self._check_fitted(y_prob)
        return pred
