"""Recalibration in one call: fit on validation, the test set before and after."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._base.typing import BinningSpec, Seed
from .._calibrate.methods import RECALIBRATION_METHODS
from .._results.recalibration import Recalibration
from .._stats.binning import Binning

__all__ = ["RECALIBRATION_METHODS", "recalibrate"]


def _nll(logp: np.ndarray, y: np.ndarray) -> float:
    return float(-np.mean(logp[np.arange(y.size), y]))


def recalibrate(
    y_val: ArrayLike,
    scores_val: ArrayLike,
    y_test: ArrayLike,
    scores_test: ArrayLike,
    *,
    method: Any = "temperature",
    input: str = "auto",
    labels: ArrayLike | None = None,
    pos_label: Any = None,
    n_bins: int | None = None,
    binning: BinningSpec | Binning = "uniform",
    num_samples: int = 10_000,
    seed: Seed = 0,
    progress: bool = False,
    model: str = "smooth",
) -> Recalibration:
    """Fit a recalibrator on a validation set and score the test set before and after.

    The workflow of every calibration study in one call: the calibrator is
    fitted on ``(scores_val, y_val)`` only; the test set's probabilities
    before (the scores as given: softmax of logits, or the probabilities)
    and after (``calibrator.predict_proba(scores_test)``) go through
    :func:`bece.compare`, the paired posterior of the two ECEs on the same
    examples, with after as A and before as B.

    Parameters
    ----------
    y_val, scores_val : array_like of shape (n_val,) and (n_val, K) or (n_val,)
        Validation labels and the classifier's scores: logits or
        probabilities (``input``), (n, K), or (n,) for a binary classifier's
        log-odds or :math:`P(y = 1)`.
    y_test, scores_test : array_like
        Test labels and scores of the same form.
    method : str or estimator, default "temperature"
        ``"temperature"``, ``"vector"``, ``"matrix"``, ``"dirichlet"``,
        ``"platt"``, ``"isotonic"`` or ``"beta"`` (:data:`RECALIBRATION_METHODS`:
        the calibrator of :mod:`bece.calibrate` with its defaults and
        ``input``), or an unfitted scikit-learn calibrator (cloned, then
        fitted), e.g. ``MatrixScaling(reg_lambda=0.01, reg_mu=0.01)``.
        The binary methods need two classes.
    input : {"auto", "logits", "probabilities"}, default "auto"
        What the scores hold (:mod:`bece._calibrate.scores`); a calibrator
        passed as an object uses its own.
    labels : array_like, optional
        The class of each column of the scores, in order (``clf.classes_``),
        when the labels are not ``0 .. K-1``; for 1-D scores the negative
        then the positive class.
    pos_label : optional
        For 1-D scores, the value of ``y`` that is ``y = 1`` (default 1
        for 0/1 and -1/1 labels).
    n_bins, binning, num_samples, seed, progress, model
        As :func:`bece.compare` (15 uniform bins, 10,000 joint draws; the
        smooth model by default, ``model="binned"`` for the binned one).

    Returns
    -------
    Recalibration
        ``before``, ``after`` (each a :class:`~bece.BayesianECE`),
        ``mean``/``interval()``/``hdi()`` of after - before,
        ``prob_better`` = :math:`P(\\mathrm{ECE}_\\text{after} < \\mathrm{ECE}_\\text{before})`,
        ``nll_before``/``nll_after``, the fitted ``calibrator`` and the
        recalibrated test probabilities ``y_prob``; ``str()`` prints them.

    Notes
    -----
    This is question (a) of :mod:`bece._calibrate.bayes_temperature`: the
    calibrator as fitted, judged on the test set (test-set uncertainty
    only). What to expect from temperature scaling fitted on a validation
    split of this size is :func:`bece.calibrate.temperature_scaled_ece`.

    Examples
    --------
    >>> import numpy as np
    >>> import bece
    >>> rng = np.random.default_rng(0)
    >>> logits = rng.normal(scale=3.0, size=(4000, 5))
    >>> p = np.exp(logits / 2) / np.exp(logits / 2).sum(axis=1, keepdims=True)
    >>> y = (rng.uniform(size=(4000, 1)) > p.cumsum(axis=1)).sum(axis=1)  # T = 2
    >>> r = bece.recalibrate(y[:2000], logits[:2000], y[2000:], logits[2000:], input="logits")
    >>> bool(r.after.mean < r.before.mean), bool(r.prob_better > 0.99)
    (True, True)
    """
    from sklearn.base import clone

    from .._calibrate.binary import BetaCalibration, IsotonicCalibration, PlattScaling
    from .._calibrate.linear import DirichletCalibration, MatrixScaling
    from .._calibrate.scores import as_scores, log_softmax, softmax
    from .._calibrate.temperature import TemperatureScaling
    from .._calibrate.vector import VectorScaling
    from .._stats.inputs import Inputs
    from .._stats.labels import binary_outcome, class_indices
    from .compare import compare

    if isinstance(method, str):
        if method not in RECALIBRATION_METHODS:
            raise ValueError(f"method must be one of {tuple(RECALIBRATION_METHODS)} or a "
                             f"calibrator, got {method!r}")
        name = method
        calibrators = {c.__name__: c for c in (TemperatureScaling, VectorScaling, MatrixScaling,
                                           DirichletCalibration, PlattScaling, IsotonicCalibration,
                                           BetaCalibration)}
        cal = calibrators[RECALIBRATION_METHODS[method]](input=input)
    elif hasattr(method, "fit") and hasattr(method, "predict_proba") and hasattr(method, "get_params"):
        name = type(method).__name__
        cal = clone(method)
    else:
        raise ValueError(f"method must be one of {tuple(RECALIBRATION_METHODS)} or an unfitted "
                         f"calibrator of bece.calibrate, got {method!r}")
    kind = getattr(cal, "input", input)
    val = as_scores(scores_val, kind, "scores_val")
    test = as_scores(scores_test, val.kind, "scores_test")
    if test.binary != val.binary or test.k != val.k:
        raise ValueError(f"scores_test has shape {test.data.shape} but scores_val has shape "
                         f"{val.data.shape}; they must hold the same classes")
    def read(y: ArrayLike, n: int, name: str) -> tuple[np.ndarray, np.ndarray | None]:
        try:
            if val.binary:
                return binary_outcome(y, n, Inputs(labels, pos_label)), None
            index, _, names = class_indices(y, None, n, val.k, labels=labels)
            return index, names
        except ValueError as exc:  # the library says y_true: say which one
            raise ValueError(str(exc).replace("y_true", name)) from None

    yv, classes = read(y_val, val.n, "y_val")
    yt, classes_t = read(y_test, test.n, "y_test")
    if not val.binary:
        if not (classes is None and classes_t is None) and (
                classes is None or classes_t is None or not np.array_equal(classes, classes_t)):
            raise ValueError("y_test's classes differ from y_val's; pass labels= with the class "
                             "of each column in order")
    cal.fit(val.data, yv)
    after = np.asarray(cal.predict_proba(test.data), dtype=np.float64)
    logp = np.empty((test.n, test.k))
    before = np.empty((test.n, test.k)) if val.kind == "logits" else None
    for start, stop, block in test.blocks():
        logp[start:stop] = log_softmax(block)
        if before is not None:
            before[start:stop] = softmax(block)
    if before is None:  # probabilities as given
        before = test.data if not test.binary else np.column_stack([1 - test.data, test.data])
    nll_before = _nll(logp, yt)
    nll_after = _nll(np.log(np.maximum(after, np.finfo(np.float64).tiny)), yt)
    if test.binary:  # P(y = 1) against the outcome
        prob_after, prob_before = after[:, 1], np.asarray(before)[:, 1]
    else:
        prob_after, prob_before = after, before
    comparison = compare(yt, prob_after, prob_before, n_bins=n_bins, binning=binning,
                         num_samples=num_samples, seed=seed, progress=progress, model=model)
    return Recalibration(method=name, calibrator=cal, comparison=comparison, y_prob=after,
                         nll_before=nll_before, nll_after=nll_after, input=val.kind, n_val=val.n,
                         classes=classes)
