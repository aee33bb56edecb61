"""bece._base.psis against ArviZ's PSIS and against the definition.

ArviZ 0.2x's ``psislw`` is the same algorithm: equal to float64 rounding.
ArviZ 1.x (arviz_stats) fits the tail a little differently: k-hat and the
smoothed weights within 0.05 (measured differences about 1e-2). By hand:
with a tail of at most 4 draws nothing is smoothed; the smoothed tail keeps
the order of the raw one, never exceeds the largest raw weight, and the
body is untouched.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from bece._base import arviz as adapters
from bece._base.psis import gpd_fit, psislw


@pytest.mark.parametrize("size, scale", [(60, 1.0), (1000, 1.0), (4000, 3.0), (2000, 0.1), (500, 10.0)])
def test_equals_arviz(size, scale):
    lw = np.random.default_rng(size).normal(scale=scale, size=size)
    ours, k = psislw(lw)
    theirs, k_ref = adapters.psislw(lw)
    theirs = theirs - np.logaddexp.reduce(theirs)
    tol = 0.05 if adapters.uses_datatree() else 1e-12
    assert k == pytest.approx(k_ref, abs=tol)
    assert np.max(np.abs(np.exp(ours) - np.exp(theirs))) < tol * np.exp(ours).max()
    if not adapters.uses_datatree():
        np.testing.assert_allclose(ours, theirs, atol=1e-12)


def test_the_definition_by_hand():
    rng = np.random.default_rng(3)
    lw = rng.normal(size=400)
    ours, k = psislw(lw)
    assert np.logaddexp.reduce(ours) == pytest.approx(0.0, abs=1e-12)
    shifted = lw - np.logaddexp.reduce(lw)
    m = int(np.ceil(min(0.2 * 400, 3 * np.sqrt(400))))  # 60 tail draws
    order = np.argsort(lw)
    body, tail = order[:-m], order[-m:]
    # the body is the raw weights up to the common normalisation
    c = ours[body[0]] - shifted[body[0]]
    np.testing.assert_allclose(ours[body], shifted[body] + c, atol=1e-12)
    # the tail keeps its order and is capped at the largest raw weight
    assert np.all(np.diff(ours[tail]) >= 0)
    assert ours[tail].max() <= shifted.max() + c + 1e-12
    # the tail is the fitted GPD's quantiles at (i - 1/2)/M above the cutoff
    w = np.exp(lw - lw.max())
    cutoff = w[order[-m - 1]]
    kk, sigma = gpd_fit(np.sort(w[tail]) - cutoff)
    q = sigma * np.expm1(-kk * np.log1p(-(np.arange(m) + 0.5) / m)) / kk + cutoff
    expected = np.minimum(np.log(q), 0.0)  # log weights with the largest raw one at 0
    np.testing.assert_allclose(ours[tail] - ours[tail][-1], expected - expected[-1], atol=1e-10)
    assert k == pytest.approx(kk)


def test_gpd_fit_recovers_a_known_shape():
    """5,000 draws of a GPD with k = 0.3, sigma = 1 by inversion: the estimate
    within 0.05 of k (its sd is about (1 + k)/sqrt(n) = 0.018: 2.7 sd, two-sided
    false-alarm rate 0.7%) and sigma within 0.08 (its sd about
    sigma sqrt(2(1 + k)/n) = 0.023: 3.5 sd, 0.05%)."""
    u = np.random.default_rng(0).uniform(size=5000)
    x = np.sort(np.expm1(-0.3 * np.log1p(-u)) / 0.3)
    k, sigma = gpd_fit(x)
    # the prior shrinks k towards 0.5 with the weight of 10 draws: negligible here
    assert k == pytest.approx(0.3, abs=0.05) and sigma == pytest.approx(1.0, abs=0.08)


@pytest.mark.parametrize("size", [1, 2, 20])
def test_too_few_tail_draws_are_unsmoothed(size):
    lw = np.linspace(0.0, 1.0, size)
    ours, k = psislw(lw)
    assert k == np.inf
    np.testing.assert_allclose(ours, lw - np.logaddexp.reduce(lw), atol=1e-12)


def test_bad_log_weights_are_refused():
    for bad in ([], [[0.0, 1.0]], [0.0, np.nan], [np.inf, 0.0]):
        with pytest.raises(ValueError, match="log_weights"):
            psislw(np.array(bad))
    with pytest.raises(ValueError, match="at least one finite"):
        psislw(np.array([-np.inf, -np.inf]))


def test_the_smooth_posterior_does_not_import_arviz():
    code = ("import sys, numpy as np, bece\n"
            "p = np.linspace(0.01, 0.99, 300); y = (np.arange(300) % 3 == 0)\n"
            "bece.bayesian_ece(y, p, num_samples=200)\n"
            "print(sorted(m for m in ('arviz', 'arviz_stats') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_psis_resample_resamples_with_the_smoothed_weights():
    """The shared importance step: indices drawn with the smoothed weights
    (the same stream as numpy's choice with them), the raw weights' log mean
    as the evidence; with keep_if_unreliable, proposals kept (None) when the
    Pareto k-hat is at least 0.7 and resampled below."""
    from scipy import special

    from bece._base.psis import PARETO_K_MAX, psis_resample, smoothed_weights

    g = np.random.default_rng(0)
    light = g.normal(scale=0.3, size=2000)           # k-hat well below 0.7
    heavy = 3.0 * np.log(g.pareto(0.8, size=2000))   # weights with an infinite mean
    idx, info = psis_resample(light, np.random.default_rng(1))
    _, w, k_hat, ess = smoothed_weights(light)
    np.testing.assert_array_equal(idx, np.random.default_rng(1).choice(2000, size=2000, p=w / w.sum()))
    assert info["pareto_k"] == k_hat < PARETO_K_MAX and info["resampled"] and info["is_ess"] == ess
    assert info["log_marginal_is"] == pytest.approx(special.logsumexp(light) - np.log(2000), rel=1e-12)
    k_heavy = smoothed_weights(heavy)[2]
    assert k_heavy >= PARETO_K_MAX
    idx, info = psis_resample(heavy, np.random.default_rng(1), keep_if_unreliable=True)
    assert idx is None and not info["resampled"]
    idx, info = psis_resample(heavy, np.random.default_rng(1))
    assert idx is not None and info["resampled"]
    idx, _ = psis_resample(light, np.random.default_rng(1), keep_if_unreliable=True)
    assert idx is not None
