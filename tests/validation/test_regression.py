"""The smooth PIT model's cross-check (bece._validation.regression): its two
parameterisations of the tilt and which run it keeps."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import bece._validation.regression as vr
from bece.regression import pit


def test_tilt_information_is_read_from_the_laplace_precision():
    """tilt_information: component j's negative Hessian has [H_j]_kk = 1 +
    lam_j^2 I_k for the tilt's coefficients (prior precision 1); a hand-made
    fit built that way, with off-diagonal terms and other I per component,
    gives back the weighted mean of the I's."""
    rng = np.random.default_rng(8)
    k = 5
    lambdas, weights = np.array([0.01, 0.2, 1.5]), np.array([0.2, 0.5, 0.3])
    info = rng.uniform(10.0, 1e4, size=(3, k))
    chol = []
    for lam, i_j in zip(lambdas, info):
        a = rng.normal(size=(2 + k, 2 + k)) * 0.1
        h = a @ a.T
        h[np.arange(2, 2 + k), np.arange(2, 2 + k)] = 1.0 + lam**2 * i_j
        h[:2, :2] += np.eye(2) * 5.0
        chol.append(np.linalg.cholesky(h))
    post = SimpleNamespace(weights=weights, chol=np.stack(chol), lambdas=lambdas)
    np.testing.assert_allclose(vr.tilt_information(post), weights @ info, rtol=1e-9)


@pytest.mark.parametrize("converges, kept, calls_made", [
    ({"scaled"}, "scaled", ["scaled"]),
    ({"non-centred"}, "non-centred", ["scaled", "non-centred"]),
    (set(), "scaled", ["scaled", "non-centred"]),
])
def test_a_run_that_does_not_converge_is_repeated_non_centred(monkeypatch, capsys, converges, kept,
                                                                 calls_made):
    """cross_check_smooth_pit runs NUTS with the tilt scaled first; when that
    run does not converge it runs the model as written once and keeps the
    run that converged (the first when neither did), saying so on stderr
    when no progress bar is shown. The NUTS runs are replaced by
    stand-ins that record their parameterisation."""
    from bece._validation.settings import MCMCSettings

    calls: list[tuple[str, dict]] = []

    def fake(*args):
        parameterisation, centering = args[-2], args[-1]
        calls.append((parameterisation, centering))
        return SimpleNamespace(converged=parameterisation in converges,
                               parameterisation=parameterisation)

    monkeypatch.setattr(vr, "_nuts_against_pit", fake)
    u = pit(np.random.default_rng(3).normal(size=300), mean=0.0, std=0.8)
    cc = vr.cross_check_smooth_pit(u, prior_odds=0.1, scales={},
                                   mcmc=MCMCSettings(num_closed_form=200, progress_bar=None))
    assert cc.parameterisation == kept
    assert [c[0] for c in calls] == calls_made
    assert set(calls[0][1]) == {"tilt_information"}
    assert np.all(calls[0][1]["tilt_information"] >= 0)
    if len(calls) > 1:
        assert calls[1][1] == {}
        assert "once more on the non-centred one" in capsys.readouterr().err
