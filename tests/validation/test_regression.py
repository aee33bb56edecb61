"""The smooth PIT model's cross-check (bece._validation.regression): its two
parameterisations of the tilt and which run it keeps."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import bece._validation.regression as vr
from bece.regression import pit


def test_tilt_centering_is_one_minus_the_laplace_variance_of_w():
    """tilt_centering: c_k = 1 - sum_j w_j [H_j^{-1}]_kk for the tilt's
    coefficients (after shift and log_spread), clipped to [0, 1]; against
    numpy's inverse of each H_j = L_j L_j^T on a hand-made two-component fit
    with variances both below and above 1."""
    rng = np.random.default_rng(8)
    p_dim = 2 + 5
    chol = []
    for scale in (0.3, 3.0):
        a = rng.normal(size=(p_dim, p_dim)) * scale
        chol.append(np.linalg.cholesky(a @ a.T + np.diag(rng.uniform(0.05, 2.0, size=p_dim))))
    post = SimpleNamespace(weights=np.array([0.4, 0.6]), chol=np.stack(chol))
    var = sum(w * np.diag(np.linalg.inv(lo @ lo.T)) for w, lo in zip(post.weights, chol))
    c = vr.tilt_centering(post)
    np.testing.assert_allclose(c, np.clip(1 - var[2:], 0, 1), rtol=1e-12)
    assert c.shape == (5,) and np.all((c >= 0) & (c <= 1))


@pytest.mark.parametrize("converges, kept, calls_made", [
    ({"non-centred"}, "non-centred", ["non-centred"]),
    ({"centred"}, "centred", ["non-centred", "centred"]),
    (set(), "non-centred", ["non-centred", "centred"]),
])
def test_a_run_that_does_not_converge_is_repeated_partly_centred(monkeypatch, capsys, converges, kept,
                                                                 calls_made):
    """cross_check_smooth_pit runs NUTS on the model as written first; when
    that run does not converge it runs the partly centred model once and
    keeps the run that converged (the first when neither did), saying so on
    stderr when no progress bar is shown. The NUTS runs are replaced by
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
    assert calls[0][1] == {}
    if len(calls) > 1:
        assert set(calls[1][1]) == {"tilt_centering"}
        assert np.all((calls[1][1]["tilt_centering"] >= 0) & (calls[1][1]["tilt_centering"] <= 1))
        assert "once more with the tilt partly centred" in capsys.readouterr().err
