"""bece's metrics against the light peers themselves (in the test extra):
Kumar's uncertainty-calibration (his binned and debiased l2 errors, HELM's
``ece_10_bin``) and relplot (its binned ECE and smECE).

The torch-based peers (torchmetrics, netcal, probmetrics) are in the
``peers`` extra and compared by ``benchmarks/peer_ece.py``; their
conventions are checked here on hand-computed cases (test_conventions.py).
Every comparison is on float64 input, where each peer computes in float64,
so the tolerance is rounding (1e-10) unless a comment says otherwise.
"""

from __future__ import annotations

import numpy as np
import pytest

from bece.metrics import l2_calibration_error, peer_ece, smooth_calibration_error

from ..conftest import simulate_binary, simulate_multiclass

kumar = pytest.importorskip("calibration")
relplot = pytest.importorskip("relplot")


def _top_label(y, p):
    return (p.argmax(axis=1) == y).astype(np.int64), p.max(axis=1).astype(np.float64)


@pytest.fixture(params=["binary", "multiclass"])
def data(request):
    rng = np.random.default_rng(17)
    if request.param == "binary":
        y, p = simulate_binary(2_000, rng, power=1.3)
        return np.asarray(y, dtype=np.int64), np.asarray(p, dtype=np.float64)
    y, p = simulate_multiclass(2_000, 5, rng, temperature=1.4)
    return np.asarray(y, dtype=np.int64), np.asarray(p, dtype=np.float64)


@pytest.mark.parametrize("n_bins", [10, 15])
def test_kumar_convention_equals_get_ece(data, n_bins):
    y, p = data
    ours = peer_ece(y, p, convention="kumar", n_bins=n_bins)
    assert ours == pytest.approx(float(kumar.get_ece(p, y, num_bins=n_bins)), abs=1e-10)


def test_helm_convention_equals_get_ece_em(data):
    y, p = data
    z, c = _top_label(y, p) if p.ndim == 2 else (y, p)
    theirs = float(kumar.get_ece_em(list(c), list(z), num_bins=10))
    assert peer_ece(y, p, convention="helm") == pytest.approx(theirs, abs=1e-10)


@pytest.mark.parametrize("n_bins", [10, 15])
def test_relplot_convention_equals_binned_ece(data, n_bins):
    y, p = data
    z, c = _top_label(y, p) if p.ndim == 2 else (y, p)
    theirs = float(relplot.metrics.binnedECE(c, z, nbins=n_bins))
    assert peer_ece(y, p, convention="relplot", n_bins=n_bins) == pytest.approx(theirs, abs=1e-10)


@pytest.mark.parametrize("debias", [False, True])
def test_l2_equals_kumar_on_his_equal_mass_bins(data, debias):
    y, p = data
    z, c = _top_label(y, p) if p.ndim == 2 else (y, p)
    theirs = float(kumar.lower_bound_scaling_ce(c, z, p=2, debias=debias, num_bins=15,
                                                 binning_scheme=kumar.get_equal_bins))
    # Kumar's bins are right-closed with data values as upper edges; bece's
    # are left-closed: the same bins are his edges moved up by one ulp
    upper = np.asarray(kumar.get_equal_bins(list(c), num_bins=15), dtype=np.float64)
    edges = np.r_[0.0, np.nextafter(upper[:-1], np.inf), 1.0]
    ours = l2_calibration_error(z, c, binning=edges, debiased=debias)
    assert ours == pytest.approx(theirs, abs=1e-10)


def test_smooth_ece_equals_relplot_smece(data):
    y, p = data
    z, c = _top_label(y, p) if p.ndim == 2 else (y, p)
    theirs = float(relplot.smECE(c, z))
    # relplot's kernel smoothing on its own grid, reproduced operation by
    # operation; agreement to rounding was measured (0.0 on the CIFAR outputs)
    assert smooth_calibration_error(z, c) == pytest.approx(theirs, abs=1e-10)
