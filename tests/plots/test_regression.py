"""bece._plots.regression: the regression calibration curve with its band,
checked against the result's draws; the figure is also written as PNG."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from matplotlib.collections import PolyCollection
from scipy import stats

from bece.plots import plot_calibration_curve

from .conftest import _line


# ---------------------------------------------------------- regression curve
def test_calibration_curve_of_a_regression_result(tmp_path):
    from bece.regression import bayesian_calibration_error

    rng = np.random.default_rng(9)
    u = stats.norm.cdf(rng.normal(size=400) / 0.8)  # PIT of a too-narrow forecaster
    levels = np.linspace(0.1, 0.9, 9)
    r = bayesian_calibration_error(u, levels, num_samples=2000, seed=1)
    ax = plot_calibration_curve(r)
    ax.figure.savefig(tmp_path / "regression.png")
    observed = _line(ax, "observed (empirical)")
    np.testing.assert_array_equal(observed.get_xdata(), levels)
    np.testing.assert_allclose(observed.get_ydata(), [(u <= p).mean() for p in levels])
    np.testing.assert_allclose(_line(ax, "posterior median").get_ydata(), np.median(r.curve, axis=0))
    (band,) = [co for co in ax.collections if isinstance(co, PolyCollection)]
    v = band.get_paths()[0].vertices
    # the band: where the observed curve of 400 new PIT values would lie
    # (posterior predictive), wider than the population curve's credible band
    lo, hi = r.predictive_interval(0.9)
    pop_lo, pop_hi = np.quantile(r.curve, [0.05, 0.95], axis=0)
    for j, p in enumerate(levels):
        ys = v[np.isclose(v[:, 0], p), 1]
        assert ys.min() == pytest.approx(lo[j]) and ys.max() == pytest.approx(hi[j])
        assert lo[j] <= pop_lo[j] + 1e-12 and hi[j] >= pop_hi[j] - 1e-12
    assert "calibration error" in ax.get_title()


def test_calibration_curve_with_a_hand_built_result():
    curve = np.array([[0.2, 0.5, 0.8], [0.3, 0.6, 0.7], [0.25, 0.55, 0.75]])
    fake = SimpleNamespace(levels=np.array([0.25, 0.5, 0.75]), curve=curve,
                           observed=np.array([0.25, 0.55, 0.75]))
    ax = plot_calibration_curve(fake, prob=0.5)
    assert ax.get_title() == "calibration curve"
    np.testing.assert_allclose(_line(ax, "posterior median").get_ydata(), [0.25, 0.55, 0.75])
    with pytest.raises(ValueError, match="expected \\(J,\\), \\(S, J\\) and \\(J,\\)"):
        plot_calibration_curve(SimpleNamespace(levels=np.zeros(2), curve=curve, observed=np.zeros(3)))
    with pytest.raises(ValueError, match="has no 'levels'"):
        plot_calibration_curve(object())
