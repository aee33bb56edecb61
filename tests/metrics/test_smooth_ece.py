"""bece._metrics.smooth_ece: relplot's smooth ECE. relplot itself is compared in
benchmarks/peer_ece.py (equal to float64 rounding); here the grid computation is
checked against direct kernel sums, and the bandwidth against its fixed point."""

from __future__ import annotations

import numpy as np
import pytest

from bece.metrics import smooth_calibration_error, smooth_calibration_error_at

from ..conftest import simulate_binary


def _direct(y, p, sigma):
    """smECE_sigma by direct sums of the reflected Gaussian kernel (images at
    -p and 2 - p), at relplot's evaluation points, same epsilon."""
    t = np.linspace(0, 1, max(round(10 / sigma), 200))[:, None]

    def k(u):
        return np.exp(-u * u / (2 * sigma**2)) / (np.sqrt(2 * np.pi) * sigma)

    kern = k(t - p) + k(t + p) + k(2 - t - p)
    dens = kern.sum(axis=1) + 1e-4
    rs = (kern * (p - y)).sum(axis=1) / dens
    return float(np.sum(np.abs(rs) * dens) / np.sum(dens))


@pytest.mark.parametrize("sigma", [0.05, 0.1, 0.3])
def test_grid_equals_direct_kernel_sums(rng, sigma):
    y, p = simulate_binary(1500, rng, power=1.8)
    got = smooth_calibration_error_at(y, p, sigma)
    # relplot's grid (about 1,000 nodes, linear spreading and interpolation)
    # approximates the kernel sums: measured 1e-5 (sigma 0.3) to 1.3e-3 (sigma 0.05)
    # relative on these data; deterministic, so the bound is fixed, not a false-alarm rate
    assert got == pytest.approx(_direct(y.astype(float), p, sigma), rel=2e-3)


def test_bandwidth_is_the_fixed_point(rng):
    y, p = simulate_binary(2000, rng, power=2.0)
    value, sigma = smooth_calibration_error(y, p, return_bandwidth=True)
    assert value == smooth_calibration_error_at(y, p, sigma)
    # bisection: sigma >= smECE(sigma), and one bracket step (2^-10) lower is below it
    assert sigma >= value
    lower = sigma - 2.0**-10
    assert lower < smooth_calibration_error_at(y, p, lower)


def test_calibrated_is_small_and_weights(rng):
    y, p = simulate_binary(4000, rng, power=1.0)
    assert smooth_calibration_error(y, p) < 0.05
    y, p = simulate_binary(1000, rng, power=1.5)
    assert smooth_calibration_error(y, p, sample_weight=np.ones(p.size)) == \
        smooth_calibration_error(y, p)
    w = rng.integers(1, 4, size=p.size)
    rep = smooth_calibration_error(np.repeat(y, w), np.repeat(p, w))
    # relplot adds epsilon = 1e-4 to a density that grows with the number of rows;
    # weights are normalised to mean 1 (n rows), the repeats have sum(w) rows: O(eps/n)
    assert smooth_calibration_error(y, p, sample_weight=w) == pytest.approx(rep, rel=1e-6)


def test_bad_input():
    with pytest.raises(ValueError, match="bandwidth must be a number in"):
        smooth_calibration_error_at([0, 1], [0.2, 0.7], 0.0)
    with pytest.raises(ValueError, match="tol must be a number in"):
        smooth_calibration_error([0, 1], [0.2, 0.7], tol=2.0)
