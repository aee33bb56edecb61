"""bece._metrics.clinical: calibration slope/intercept, Spiegelhalter's Z,
Hosmer-Lemeshow and the KS calibration error, against hand cases, scipy and
scikit-learn, naive loops, and their null distributions."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats
from scipy.special import expit

from bece.metrics import (
    calibration_in_the_large,
    calibration_slope,
    hosmer_lemeshow,
    ks_calibration_error,
    spiegelhalter_z,
)

from ..conftest import simulate_binary


def _miscalibrated(rng, n, slope=0.6, shift=0.3):
    x = rng.normal(scale=1.5, size=n)
    p = expit(x)
    y = (rng.uniform(size=n) < expit(shift + slope * x)).astype(int)
    return y, p


def test_slope_equals_scipy_minimiser(rng):
    y, p = _miscalibrated(rng, 3000)
    w = rng.uniform(0.5, 2.0, size=p.size)
    x = np.log(p / (1 - p))

    def nll(beta):
        t = beta[0] + beta[1] * x
        return float(np.sum(w * (np.logaddexp(0, t) - y * t)))

    ref = optimize.minimize(nll, [0.0, 1.0], method="BFGS", options={"gtol": 1e-10}).x
    fit = calibration_slope(y, p, sample_weight=w)
    # BFGS stops at gradient 1e-10 on a sum over 3000 points: 1e-6 in the parameters
    assert fit.intercept == pytest.approx(ref[0], abs=1e-6)
    assert fit.slope == pytest.approx(ref[1], abs=1e-6)
    # calibration-in-the-large: the root of its score equation (brentq to 1e-14)
    a0 = optimize.brentq(lambda a: np.dot(w, y - expit(a + x)), -5, 5, xtol=1e-14)
    assert fit.intercept_in_the_large == pytest.approx(a0, abs=1e-10)


def test_slope_equals_sklearn_and_its_se(rng):
    from sklearn.linear_model import LogisticRegression

    y, p = _miscalibrated(rng, 2000)
    x = np.log(p / (1 - p))[:, None]
    lr = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10_000).fit(x, y)
    fit = calibration_slope(y, p)
    assert fit.slope == pytest.approx(lr.coef_[0, 0], abs=1e-6)  # lbfgs to tol 1e-12
    assert fit.intercept == pytest.approx(lr.intercept_[0], abs=1e-6)
    # the standard errors: inverse Fisher information written out
    mu = expit(fit.intercept + fit.slope * x[:, 0])
    d = np.column_stack([np.ones_like(mu), x[:, 0]])
    cov = np.linalg.inv(d.T @ (d * (mu * (1 - mu))[:, None]))
    assert fit.slope_se == pytest.approx(np.sqrt(cov[1, 1]), rel=1e-8)


def test_slope_is_one_when_calibrated(rng):
    # |slope - 1| < 4 se and |a0| < 4 se: false alarm about 6e-5 each
    y, p = _miscalibrated(rng, 5000, slope=1.0, shift=0.0)
    fit = calibration_slope(y, p)
    assert abs(fit.slope - 1) < 4 * fit.slope_se
    assert abs(fit.intercept_in_the_large) < 4 * fit.intercept_in_the_large_se
    bad = calibration_slope(*_miscalibrated(rng, 5000, slope=0.6))
    assert bad.slope < 0.7


def test_spiegelhalter_hand_case():
    # z - p: -0.2, 0.4, 0.1; 1 - 2p: 0.6, -0.2, -0.8 -> numerator -0.28;
    # variance 0.36*0.16 + 0.04*0.24 + 0.64*0.09 = 0.1248
    t = spiegelhalter_z([0, 1, 1], [0.2, 0.6, 0.9])
    assert t.statistic == pytest.approx(-0.28 / np.sqrt(0.1248), abs=1e-14)
    assert t.p_value == pytest.approx(2 * stats.norm.sf(0.28 / np.sqrt(0.1248)), abs=1e-14)


def test_spiegelhalter_and_hl_levels_under_calibration(rng):
    """Rejection rates at 5% over R = 400 calibrated data sets (n = 300): the
    rate's sd is sqrt(0.05 * 0.95 / 400) = 0.011; |rate - 0.05| < 4 sd = 0.044
    fails with probability about 6e-5 if the level is exact (both are
    asymptotic; measured over 3,000 data sets: Z 0.043, Hosmer-Lemeshow with
    G degrees of freedom 0.058, with G - 2 0.119, which this test would catch)."""
    rej_z = rej_hl = 0
    for _ in range(400):
        y, p = simulate_binary(300, rng, power=1.0)
        rej_z += spiegelhalter_z(y, p).p_value < 0.05
        rej_hl += hosmer_lemeshow(y, p).p_value < 0.05
    assert abs(rej_z / 400 - 0.05) < 0.044
    assert abs(rej_hl / 400 - 0.05) < 0.044


def test_hosmer_lemeshow_hand_case_and_power(rng):
    # groups {0.2 z0, 0.3 z1}: (1 - 0.5)^2 / (0.5 * 0.75); {0.5 z0, 0.6 z1}: 0.01/(1.1 * 0.45);
    # {0.8 z1, 0.9 z1}: 0.09/(1.7 * 0.15)
    t = hosmer_lemeshow([0, 1, 0, 1, 1, 1], [0.2, 0.3, 0.5, 0.6, 0.8, 0.9], n_groups=3)
    want = 0.25 / 0.375 + 0.01 / (1.1 * 0.45) + 0.09 / (1.7 * 0.15)
    assert t.statistic == pytest.approx(want, abs=1e-14)
    assert t.df == 3 and t.p_value == pytest.approx(stats.chi2.sf(want, 3), abs=1e-14)
    f = hosmer_lemeshow([0, 1, 0, 1, 1, 1], [0.2, 0.3, 0.5, 0.6, 0.8, 0.9], n_groups=3, fitted=True)
    assert f.df == 1 and f.p_value == pytest.approx(stats.chi2.sf(want, 1), abs=1e-14)
    y, p = _miscalibrated(rng, 3000)
    assert hosmer_lemeshow(y, p).p_value < 1e-6


def _ks_loop(z, p):
    best = 0.0
    for v in np.unique(p):
        s = (z[p <= v] - p[p <= v]).sum() / len(p)
        best = max(best, abs(s))
    return best


def test_ks_hand_case_loop_and_ties(rng):
    # sorted 0.2 (z 0), 0.6 (z 1), 0.9 (z 1): cumulative -0.2, 0.2, 0.3, / 3
    assert ks_calibration_error([0, 1, 1], [0.2, 0.6, 0.9]) == pytest.approx(0.1, abs=1e-15)
    y, p = simulate_binary(500, rng, power=1.7)
    p = np.round(p, 2)
    assert ks_calibration_error(y, p) == pytest.approx(_ks_loop(y.astype(float), p), abs=1e-13)
    perm = rng.permutation(p.size)
    assert ks_calibration_error(y[perm], p[perm]) == pytest.approx(ks_calibration_error(y, p),
                                                                  abs=1e-13)


def test_calibration_in_the_large_hand_case_weights_and_top_label(rng):
    # (0.2 - 0) + (0.6 - 1) + (0.9 - 1) + (0.5 - 0) = 0.2; / 4
    assert calibration_in_the_large([0, 1, 1, 0], [0.2, 0.6, 0.9, 0.5]) == pytest.approx(0.05,
                                                                                      abs=1e-15)
    # weights 1, 2, 1, 0: (0.2 - 0.8 - 0.1) / 4
    assert calibration_in_the_large([0, 1, 1, 0], [0.2, 0.6, 0.9, 0.5],
                                    sample_weight=[1, 2, 1, 0]) == pytest.approx(-0.175, abs=1e-15)
    y, p = simulate_binary(500, rng, power=1.5)
    w = rng.uniform(0.5, 2.0, size=500)
    assert calibration_in_the_large(y, p, sample_weight=w) == pytest.approx(
        np.average(p, weights=w) - np.average(y, weights=w), rel=1e-12)
    # (n, K): mean confidence less accuracy of the top label; y_pred names the label
    probs = rng.dirichlet(np.ones(4), size=300)
    labels = rng.integers(0, 4, size=300)
    top = probs.argmax(axis=1)
    want = probs.max(axis=1).mean() - (top == labels).mean()
    assert calibration_in_the_large(labels, probs) == pytest.approx(want, rel=1e-12)
    conf = probs[np.arange(300), top]
    assert calibration_in_the_large(labels, conf, y_pred=top) == pytest.approx(want, rel=1e-12)
    with pytest.raises(ValueError, match="sample_weight"):
        calibration_in_the_large([0, 1], [0.2, 0.6], sample_weight=[1.0])


def test_bad_input():
    with pytest.raises(ValueError, match="exactly 0 or 1"):
        calibration_slope([0, 1, 1], [0.2, 1.0, 0.5])
    with pytest.raises(ValueError, match="did not converge"):
        calibration_slope([0, 0, 1, 1], [0.1, 0.2, 0.8, 0.9])
    with pytest.raises(ValueError, match="n_groups must be between 3"):
        hosmer_lemeshow([0, 1, 1], [0.2, 0.6, 0.9], n_groups=10)
    with pytest.raises(ValueError, match="n_groups must be a positive integer"):
        hosmer_lemeshow([0, 1, 1], [0.2, 0.6, 0.9], n_groups=2.5)
    with pytest.raises(ValueError, match="variance is 0"):
        spiegelhalter_z([0, 1], [0.5, 0.5])


def _hoslem_r(y, p, g):
    """R's ResourceSelection::hoslem.test statistic, transcribed line by line
    in plain Python: qq <- unique(quantile(yhat, seq(0, 1, 1/g))) (type 7),
    cut(yhat, qq, include.lowest = TRUE) (right-closed), then
    sum((observed - expected)^2 / expected) over the y0 and y1 columns
    (empty intervals left out: R's NaN there)."""
    xs = sorted(p)
    n = len(xs)
    qq = []
    for i in range(g + 1):
        index = 1 + (n - 1) * (i / g)
        lo, hi = math.floor(index), math.ceil(index)
        q = xs[lo - 1]
        if index > lo and xs[hi - 1] != q:
            h = index - lo
            q = (1 - h) * q + h * xs[hi - 1]
        if q not in qq:
            qq.append(q)
    chisq = 0.0
    for k in range(max(len(qq) - 1, 1)):
        lower, upper = qq[k], qq[min(k + 1, len(qq) - 1)]
        members = [j for j in range(n) if (lower < p[j] <= upper) or (k == 0 and p[j] == lower)]
        if not members:
            continue
        o1 = sum(y[j] for j in members)
        e1 = sum(p[j] for j in members)
        o0, e0 = len(members) - o1, len(members) - e1
        chisq += (o1 - e1) ** 2 / e1 + (o0 - e0) ** 2 / e0
    return chisq


def test_hosmer_lemeshow_groups_as_r_hoslem_test(rng):
    """Against a line-by-line transcription of R's hoslem.test (type-7
    quantile breaks, right-closed groups): without ties (n = 287, not a
    multiple of g) and with ties (confidences rounded to 2 and to 1 decimal,
    where breaks coincide and fewer groups are used). R gave 11.369232550
    where the split into equal counts gave 11.427133408 (external-validity
    report, breast cancer n = 285)."""
    for decimals, g in ((None, 10), (2, 10), (1, 10), (None, 7)):
        y, p = simulate_binary(287, rng, power=1.3)
        if decimals is not None:
            p = np.clip(np.round(p, decimals), 0.01, 0.99)
        h = hosmer_lemeshow(y, p, n_groups=g)
        want = _hoslem_r([int(v) for v in y], [float(v) for v in p], g)
        assert h.statistic == pytest.approx(want, rel=1e-12), (decimals, g)
        if decimals == 1:
            assert h.n_groups < g
        assert h.df == h.n_groups and h.p_value == pytest.approx(stats.chi2.sf(want, h.n_groups), rel=1e-12)


def test_hosmer_lemeshow_does_not_depend_on_the_order_of_rows(rng):
    """With ties the equal-count split depended on row order (51.11 to 55.28
    over 20 permutations in the external-validity report); quantile groups
    keep equal predictions together."""
    y, p = simulate_binary(1000, rng, power=1.4)
    p = np.round(p, 2)
    first = hosmer_lemeshow(y, p).statistic
    for _ in range(20):
        perm = rng.permutation(p.size)
        assert hosmer_lemeshow(y[perm], p[perm]).statistic == first


def test_the_quantile_breaks_are_numpys_type_7(rng):
    from bece._metrics.clinical import _quantile_type7

    x = rng.uniform(size=101)
    probs = np.arange(11) / 10
    np.testing.assert_allclose(_quantile_type7(x, probs), np.quantile(x, probs, method="linear"),
                               rtol=0, atol=1e-15)
