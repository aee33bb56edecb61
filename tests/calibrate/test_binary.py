"""bece._calibrate.binary: Platt scaling against scikit-learn's sigmoid
calibration and an optimality certificate, isotonic against scikit-learn's
IsotonicRegression, beta calibration against its definition (betacal's
model, a, b >= 0) minimised here with scipy; inputs and refusals.

Deterministic (fixed data); no false-alarm rate.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, special
from sklearn.calibration import CalibratedClassifierCV
from sklearn.isotonic import IsotonicRegression

from bece.calibrate import BetaCalibration, IsotonicCalibration, PlattScaling

from .helpers import PassThrough


@pytest.fixture
def binary(rng):
    """Log-odds s ~ N(0, 2^2), over-confident: P(y=1 | s) = sigma(s / 1.5 + 0.2)."""
    s = rng.normal(scale=2.0, size=2500)
    y = (rng.uniform(size=s.size) < special.expit(s / 1.5 + 0.2)).astype(np.int64)
    return s, y


def test_platt_agrees_with_scikit_learn_sigmoid(binary):
    from sklearn.frozen import FrozenEstimator

    s, y = binary
    sk = CalibratedClassifierCV(FrozenEstimator(PassThrough().fit(s, y)), method="sigmoid").fit(s, y)
    ours = PlattScaling(input="logits").fit(s, y)
    # both minimise the same strictly convex loss (Platt's targets) to lbfgs
    # tolerances: probabilities within 1e-5
    np.testing.assert_allclose(ours.predict_proba(s), sk.predict_proba(s), atol=1e-5)


def test_platt_is_optimal(binary):
    """Newton step of Platt's loss at the fit: its distance to the unique
    minimiser (a certificate independent of the solver's stopping rule)."""
    s, y = binary
    fit = PlattScaling(input="logits").fit(s, y)
    n_pos = y.sum()
    t = np.where(y == 1, (n_pos + 1) / (n_pos + 2), 1 / (y.size - n_pos + 2))
    x = np.c_[s, np.ones_like(s)]
    f = x @ [fit.coef_, fit.intercept_]
    q = special.expit(f)
    grad = x.T @ (q - t) / s.size
    hess = (x * (q * (1 - q))[:, None]).T @ x / s.size
    assert np.abs(np.linalg.solve(hess, grad)).max() < 1e-6
    assert fit.coef_ == pytest.approx(1 / 1.5, abs=0.1)


@pytest.mark.parametrize("kind", ["logits", "probabilities"])
def test_isotonic_is_scikit_learns(binary, kind):
    s, y = binary
    x = s if kind == "logits" else special.expit(s)
    ours = IsotonicCalibration(input=kind).fit(x[:2000], y[:2000])
    ref = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(x[:2000], y[:2000])
    np.testing.assert_allclose(ours.predict_proba(x[2000:])[:, 1], ref.predict(x[2000:]), rtol=1e-12,
                               atol=1e-15)


def beta_reference(p, y):
    """Beta calibration's model, minimised here: sigma(a log p - b log(1-p) + c)
    with a, b >= 0 (L-BFGS-B bounds), mean log-loss."""
    l1, l0 = np.log(p), np.log1p(-p)

    def loss(theta):
        a, b, c = theta
        f = a * l1 - b * l0 + c
        return np.mean(np.logaddexp(0, f) - y * f)

    res = optimize.minimize(loss, [1.0, 1.0, 0.0], method="L-BFGS-B",
                            bounds=[(0, None), (0, None), (None, None)],
                            options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10_000})
    return res.x


def test_beta_is_its_definition(binary):
    s, y = binary
    p = special.expit(s)
    fit = BetaCalibration(input="probabilities").fit(p, y)
    a, b, c = beta_reference(p, y)
    assert [fit.a_, fit.b_, fit.c_] == pytest.approx([a, b, c], abs=1e-4)
    np.testing.assert_allclose(fit.predict_proba(p)[:, 1],
                               special.expit(a * np.log(p) - b * np.log1p(-p) + c), atol=1e-5)
    # logits give the same map (log p = -log(1 + e^-s))
    fl = BetaCalibration(input="logits").fit(s, y)
    assert [fl.a_, fl.b_, fl.c_] == pytest.approx([fit.a_, fit.b_, fit.c_], abs=1e-6)


def test_beta_refits_at_the_boundary(rng):
    """Outcomes with a < 0 in the unconstrained fit (truth a = -1, b = 2): the
    fit sets a = 0, as betacal does, which is the constrained optimum here;
    outcomes that fall as p grows: both slopes 0, the mean's logit."""
    p = rng.uniform(0.05, 0.95, size=3000)
    y = (rng.uniform(size=p.size) < special.expit(-np.log(p) - 2 * np.log1p(-p))).astype(int)
    fit = BetaCalibration(input="probabilities").fit(p, y)
    a, b, c = beta_reference(p, y)
    assert fit.a_ == 0.0 and a == pytest.approx(0.0, abs=1e-6)
    assert [fit.b_, fit.c_] == pytest.approx([b, c], abs=1e-4)
    y = (rng.uniform(size=p.size) < 1 - p).astype(int)
    fit = BetaCalibration(input="probabilities").fit(p, y)
    a, b, c = beta_reference(p, y)
    assert [fit.a_, fit.b_] == [0.0, 0.0] and [a, b] == pytest.approx([0.0, 0.0], abs=1e-6)
    assert fit.c_ == pytest.approx(special.logit(y.mean()), rel=1e-12)
    assert fit.c_ == pytest.approx(c, abs=1e-5)


def test_binary_inputs(binary):
    """(n,) log-odds, (n, 2) logits and (n, 2) / (n,) probabilities fit the
    same Platt map; labels may be any two values."""
    s, y = binary
    a = PlattScaling(input="logits").fit(s, y)
    b = PlattScaling(input="logits").fit(np.c_[-s / 2, s / 2], y)
    p = special.expit(s)
    c = PlattScaling(input="probabilities").fit(p, y)
    d = PlattScaling(input="probabilities").fit(np.c_[1 - p, p], y)
    for other in (b, c, d):
        assert (other.coef_, other.intercept_) == pytest.approx((a.coef_, a.intercept_), abs=1e-6)
    labels = np.where(y == 1, "yes", "no")
    e = PlattScaling(input="logits").fit(s, labels)
    assert e.classes_.tolist() == ["no", "yes"]
    assert set(e.predict(s)) <= {"no", "yes"}
    np.testing.assert_array_equal(e.predict(s) == "yes", a.predict(s) == 1)


@pytest.mark.parametrize("cls", [PlattScaling, IsotonicCalibration, BetaCalibration])
def test_refusals(cls):
    with pytest.raises(ValueError, match="binary classifier's scores.*K = 3"):
        cls(input="logits").fit(np.zeros((4, 3)), [0, 1, 2, 0])
    with pytest.raises(ValueError, match="y must hold both classes"):
        cls(input="logits").fit(np.array([0.1, -0.3, 2.0]), [1, 1, 1])


def test_platt_and_beta_read_exact_zeros_and_ones_inside_the_grid_and_warn():
    """Probabilities of exactly 0 or 1 (a random forest's) have infinite
    log-odds; read at about +-708 they dominated the fit and Platt scaling
    raised the ECE (newcomer report W1). Now they are read in [eps, 1 - eps],
    eps half the smallest distance of the others from 0 or 1, with a
    CalibrationWarning: on a forest's held-out scores the test-set ECE does
    not rise and is within 0.005 of scikit-learn's sigmoid calibration
    (fitted on P(y = 1) itself) or below it."""
    import warnings

    from sklearn.calibration import _SigmoidCalibration
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier

    import bece
    from bece.calibrate import CalibrationWarning

    X, y = make_classification(9000, random_state=0)
    rf = RandomForestClassifier(n_estimators=50, random_state=0, n_jobs=1).fit(X[:3000], y[:3000])
    pv, pt = rf.predict_proba(X[3000:6000])[:, 1], rf.predict_proba(X[6000:])[:, 1]
    yv, yt = y[3000:6000], y[6000:]
    saturated = (pv == 0) | (pv == 1)
    assert saturated.mean() > 0.03
    with pytest.warns(CalibrationWarning, match=f"{saturated.sum()} of 3000 probabilities are exactly"):
        platt = PlattScaling().fit(pv, yv)
    inside = np.concatenate([pv[pv > 0], 1 - pv[pv < 1]])
    assert platt.clip_ == inside.min() / 2 == 0.01  # 50 trees: probabilities on a grid of 1/50
    ece = lambda p: bece.expected_calibration_error(yt, p)  # noqa: E731
    before, after = ece(pt), ece(platt.predict_proba(pt)[:, 1])
    sklearn = ece(_SigmoidCalibration().fit(pv, yv).predict(pt))
    assert after <= before and after <= sklearn + 0.005, (before, after, sklearn)
    # beta calibration reads them the same way (it went 0.020 -> 0.155 on the
    # newcomer report's forest before, 0.015 now)
    with pytest.warns(CalibrationWarning, match="BetaCalibration"):
        beta = BetaCalibration().fit(pv, yv)
    assert beta.clip_ == 0.01 and ece(beta.predict_proba(pt)[:, 1]) <= before
    # the same map as Platt on the log-odds of the clipped probabilities
    s = special.logit(np.clip(pv, 0.01, 0.99))
    ref = PlattScaling(input="logits").fit(s, yv)
    assert platt.coef_ == pytest.approx(ref.coef_, rel=1e-9)
    # no exact 0 or 1, or log-odds: as before, no warning, clip_ = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert PlattScaling().fit(np.clip(pv, 0.01, 0.99), yv).clip_ == 0.0
        assert PlattScaling(input="logits").fit(s, yv).clip_ == 0.0
        assert BetaCalibration().fit(np.clip(pv, 0.01, 0.99), yv).clip_ == 0.0


@pytest.mark.parametrize("cls", [PlattScaling, BetaCalibration])
def test_a_file_written_before_clip_loads_as_it_was_fitted(cls):
    import json

    from bece.calibrate import from_json

    rng = np.random.default_rng(0)
    p = rng.uniform(0.05, 0.95, size=300)
    y = rng.uniform(size=300) < p
    fit = cls().fit(p, y)
    spec = json.loads(fit.to_json())
    del spec["fitted"]["clip_"]
    old = from_json(json.dumps(spec))
    assert old.clip_ == 0.0
    np.testing.assert_array_equal(old.predict_proba(p), fit.predict_proba(p))
