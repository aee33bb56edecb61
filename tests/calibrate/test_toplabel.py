"""bece._calibrate.toplabel: top-label recalibration; per-label calibrators
against scikit-learn (isotonic) and an optimality certificate (sigmoid),
fallbacks, row placement (MAPIE's column bug) and a held-out recalibration
study.

Everything here is deterministic (fixed data and splits); no test has a
false-alarm rate.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest
from scipy import special
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline

from bece import bayesian_top_label_ece, top_label_ece
from bece.calibrate import CalibrationWarning, TopLabelCalibrator

from ..conftest import simulate_multiclass


@pytest.fixture
def data(rng):
    y, prob = simulate_multiclass(3000, 4, rng, temperature=2.0)  # over-confident
    return y, prob


def test_isotonic_is_sklearn_per_label(data):
    y, prob = data
    cal = TopLabelCalibrator(method="isotonic").fit(prob[:2000], y[:2000])
    out = cal.predict_confidence(prob[2000:])
    pred, conf = prob.argmax(axis=1), prob.max(axis=1)
    for lab in range(4):
        fit = pred[:2000] == lab
        ref = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(
            conf[:2000][fit], (y[:2000][fit] == lab).astype(float))
        sel = pred[2000:] == lab
        np.testing.assert_allclose(out[sel], ref.predict(conf[2000:][sel]), rtol=1e-12)


def test_sigmoid_minimises_platts_loss(data):
    """Each label's (a, b) minimises Platt's cross-entropy on smoothed targets,
    on the logit of the confidence, written out here.

    The mean loss is strictly convex in (a, b), so its minimiser is unique and
    the Newton step H^-1 g from the fit is its distance to it (to first order):
    a certificate that does not depend on another solver's stopping point.
    scikit-learn's lbfgs (tol=1e-10) stops at max|g| <= 1e-10 or once the loss
    falls by less than 64 eps relatively, i.e. within about
    sqrt(2 * 64 eps * loss / mu) of the minimum (mu the smallest eigenvalue of
    H): about 4e-7 here (measured: 2e-9)."""
    y, prob = data
    cal = TopLabelCalibrator(method="sigmoid").fit(prob, y)
    pred, conf = prob.argmax(axis=1), prob.max(axis=1)
    eps = np.finfo(np.float64).eps
    for lab in range(4):
        sel = pred == lab
        z = y[sel] == lab
        t = np.where(z, (z.sum() + 1) / (z.sum() + 2), 1 / ((~z).sum() + 2))
        x = np.c_[special.logit(conf[sel]), np.ones(sel.sum())]
        c = cal.calibrators_[lab]
        f = x @ [c.coef_, c.intercept_]
        loss = np.mean(np.logaddexp(0, -f) * t + np.logaddexp(0, f) * (1 - t))
        s = special.expit(f)
        grad = x.T @ (s - t) / f.size
        hess = (x * (s * (1 - s))[:, None]).T @ x / f.size
        step = np.linalg.solve(hess, grad)
        mu = np.linalg.eigvalsh(hess)[0]
        assert np.abs(step).max() <= np.sqrt(2 * 64 * eps * loss / mu) + 1e-10 / mu
        assert c.coef_ < 1  # over-confident: the fit shrinks the logit


def test_histogram_binning_hand_case():
    # label 0 predicted 100 times: uniform-mass bins of 50 points, bin value = accuracy
    conf = np.r_[np.linspace(0.5, 0.7, 50, endpoint=False), np.linspace(0.7, 0.99, 50)]
    prob = np.column_stack([conf, 1 - conf])
    y = np.r_[np.zeros(20), np.ones(30), np.zeros(45), np.ones(5)].astype(int)  # 20/50, 45/50 right
    with pytest.warns(CalibrationWarning, match="1 label\\(s\\) never predicted"):
        cal = TopLabelCalibrator(method="histogram", min_samples=1).fit(prob, y)
    h = cal.calibrators_[0]
    assert h.binning_.n_bins == 2 and h.values_.tolist() == [0.4, 0.9]
    out = cal.predict_confidence(np.array([[0.55, 0.45], [0.95, 0.05], [0.999, 0.001]]))
    assert out.tolist() == [0.4, 0.9, 0.9]


def test_rows_keep_their_label_whatever_labels_are_present(data):
    """MAPIE 1.x places values by the position of each label among those
    present; ours must give every row the same value in any batch."""
    y, prob = data
    for method in ("isotonic", "sigmoid", "histogram"):
        cal = TopLabelCalibrator(method=method).fit(prob[:2000], y[:2000])
        test = prob[2000:]
        full = cal.predict_confidence(test)
        pred = test.argmax(axis=1)
        for subset in ([0, 2], [3], [1, 3]):
            rows = np.flatnonzero(np.isin(pred, subset))
            np.testing.assert_array_equal(cal.predict_confidence(test[rows]), full[rows])
            np.testing.assert_array_equal(cal.predict(test[rows]), pred[rows])
        # one row at a time, in reverse order
        one = np.array([cal.predict_confidence(test[i:i + 1])[0] for i in range(20)][::-1])
        np.testing.assert_array_equal(one, full[:20][::-1])


def test_rare_labels_fall_back_to_identity_with_a_warning(rng):
    y, prob = simulate_multiclass(600, 5, rng)
    prob[:, 4] *= 0.002  # label 4: predicted a few times at most
    prob[:, 3] = 0.0  # label 3: never
    prob /= prob.sum(axis=1, keepdims=True)
    pred = prob.argmax(axis=1)
    assert 0 < (pred == 4).sum() < 20 and (pred == 3).sum() == 0
    with pytest.warns(CalibrationWarning, match="label\\(s\\) 4 predicted fewer than min_samples=20"):
        cal = TopLabelCalibrator().fit(prob, y)
    assert cal.calibrators_[4] is None and cal.calibrators_[3] is None
    rows = pred == 4
    np.testing.assert_array_equal(cal.predict_confidence(prob)[rows], prob.max(axis=1)[rows])


@pytest.mark.parametrize(
    "fit_prob,fit_y,pred_prob,message",
    [
        ([[0.6, 0.4]] * 30, [0] * 30, [[0.3, 0.3, 0.4]],
         "K = 3 classes but the calibrator was fitted with K = 2"),
        ([[0.6, 0.4]] * 30, [0] * 29 + [2], None, "y_true must hold labels in 0..1"),
        ([[0.6, 0.5]] * 30, [0] * 30, None, "rows must sum to 1"),
        ([0.6] * 30, [0] * 30, None, "shape \\(n, K\\)"),
    ],
)
def test_bad_input(fit_prob, fit_y, pred_prob, message):
    with pytest.raises(ValueError, match=message), warnings.catch_warnings():
        warnings.simplefilter("ignore", CalibrationWarning)
        cal = TopLabelCalibrator().fit(np.array(fit_prob), fit_y)
        cal.predict_confidence(np.array(pred_prob))


def test_bad_options_and_unfitted():
    with pytest.raises(ValueError, match="method must be one of"):
        TopLabelCalibrator(method="beta").fit([[0.6, 0.4]], [0])
    with pytest.raises(ValueError, match="min_samples must be a positive integer"):
        TopLabelCalibrator(min_samples=0).fit([[0.6, 0.4]], [0])
    with pytest.raises(ValueError, match="not fitted"):
        TopLabelCalibrator().predict_confidence([[0.6, 0.4]])


@functools.cache
def _digits_overconfident():
    """Logistic regression on 4 principal components of scikit-learn's digits
    (accuracy ~0.81), its logits divided by T = 0.25: over-confident.
    Splits: 40% train, 30% calibration, 30% test. The fit is converged
    (tol=1e-10; at the default tolerance its probabilities sit 0.014 from
    the optimum, a stopping point that moves with the scikit-learn version);
    the optimum does not depend on the signs PCA gives its components."""
    x, y = load_digits(return_X_y=True)
    x_tr, x_rest, y_tr, y_rest = train_test_split(x, y, train_size=0.4, random_state=0, stratify=y)
    x_cal, x_te, y_cal, y_te = train_test_split(x_rest, y_rest, train_size=0.5, random_state=0,
                                                stratify=y_rest)
    clf = make_pipeline(PCA(4, random_state=0), LogisticRegression(max_iter=10_000, tol=1e-10))
    clf.fit(x_tr, y_tr)

    def prob(x):
        return special.softmax(clf.decision_function(x) / 0.25, axis=1)

    return prob(x_cal), y_cal, prob(x_te), y_te


@pytest.mark.parametrize("method", ["isotonic", "sigmoid", "histogram"])
def test_recalibration_lowers_held_out_top_label_ece(method):
    p_cal, y_cal, p_te, y_te = _digits_overconfident()
    before = top_label_ece(y_te, p_te, n_bins=10)
    cal = TopLabelCalibrator(method=method).fit(p_cal, y_cal)
    conf, pred = cal.predict_confidence(p_te), cal.predict(p_te)
    np.testing.assert_array_equal(pred, p_te.argmax(axis=1))
    after = top_label_ece(y_te, conf, y_pred=pred, n_bins=10)
    # measured: 0.148 before; 0.081 isotonic, 0.082 sigmoid, 0.033 histogram
    assert after < 0.65 * before
    # the held-out posterior of the over-confident model covers its plug-in
    r = bayesian_top_label_ece(y_te, p_te, n_bins=10, seed=0)
    lo, hi = r.interval(0.9)
    assert lo < before < hi


def test_predict_proba_hand_case():
    """Row (0.5, 0.3, 0.2) with its confidence recalibrated to 0.8: the other
    entries keep their ratio 3:2 and share 0.2; a row (1, 0, 0) recalibrated to
    0.8 gives 0.1 to each other class."""
    cal = TopLabelCalibrator(method="sigmoid")
    with pytest.warns(CalibrationWarning, match="1 label\\(s\\) never predicted"):
        cal.fit(np.array([[0.5, 0.3, 0.2]] * 40 + [[0.3, 0.5, 0.2]] * 40), [0] * 40 + [1] * 40)
    cal.calibrators_[0] = type("Fixed", (), {"predict": lambda self, p: np.full(p.shape, 0.8)})()
    out = cal.predict_proba(np.array([[0.5, 0.3, 0.2], [1.0, 0.0, 0.0]]))
    np.testing.assert_allclose(out, [[0.8, 0.12, 0.08], [0.8, 0.1, 0.1]], rtol=1e-12)


def test_predict_proba_is_consistent(data):
    y, prob = data
    for method in ("isotonic", "sigmoid", "histogram"):
        cal = TopLabelCalibrator(method=method).fit(prob[:2000], y[:2000])
        out = cal.predict_proba(prob[2000:])
        rows = np.arange(out.shape[0])
        pred = cal.predict(prob[2000:])
        np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=1e-12)
        np.testing.assert_array_equal(out[rows, pred], cal.predict_confidence(prob[2000:]))
        others = prob[2000:].copy()
        others[rows, pred] = 0
        scaled = out.copy()
        scaled[rows, pred] = 0
        # the other classes keep their proportions
        np.testing.assert_allclose(scaled * others.sum(axis=1, keepdims=True),
                                   others * scaled.sum(axis=1, keepdims=True), atol=1e-15)
        np.testing.assert_array_equal(cal.classes_, np.arange(4))
