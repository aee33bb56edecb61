"""bece._base.arviz: the adapters give the same results on ArviZ 0.2x
(InferenceData) and 1.x (DataTree), and refuse bad input by name."""

from __future__ import annotations

import logging
import subprocess
import sys

import numpy as np
import pytest

from bece._base import arviz as adapters


@pytest.fixture
def groups():
    rng = np.random.default_rng(0)
    return {
        "posterior": {"ece": rng.gamma(2.0, size=(1, 300)), "accuracy": rng.uniform(size=(1, 300, 3))},
        "constant_data": {"edges": np.linspace(0, 1, 4), "counts": np.arange(3)},
    }


def test_version_is_read_and_decides_the_format():
    major, minor = adapters.arviz_version()
    assert major >= 1 or (major, minor) >= (0, 20)
    assert adapters.uses_datatree() == (major >= 1)


def test_from_dict_gives_the_installed_arvizs_container(groups):
    data = adapters.from_dict(
        groups, coords={"bin": [10, 11, 12], "edge": np.arange(4)},
        dims={"accuracy": ["bin"], "counts": ["bin"], "edges": ["edge"]},
        attrs={"posterior": {"model": "binned", "n": 7}},
    )
    if adapters.uses_datatree():
        import xarray as xr

        assert isinstance(data, xr.DataTree)
    else:
        assert type(data).__name__ == "InferenceData"
    post = data.posterior
    assert set(post.data_vars) == {"ece", "accuracy"}
    assert post["ece"].dims == ("chain", "draw") and post.sizes["draw"] == 300
    assert post["accuracy"].dims == ("chain", "draw", "bin")
    assert post["bin"].values.tolist() == [10, 11, 12]
    np.testing.assert_array_equal(post["ece"].values[0], groups["posterior"]["ece"][0])
    assert post.attrs["model"] == "binned" and post.attrs["n"] == 7
    const = data["constant_data"]  # item access works on both containers
    assert const["edges"].dims == ("edge",) and "chain" not in const.dims
    np.testing.assert_array_equal(const["counts"].values, np.arange(3))


def test_from_dict_refuses_bad_input(groups):
    with pytest.raises(ValueError, match="groups must map"):
        adapters.from_dict({"posterior": [1, 2]})
    with pytest.raises(ValueError, match="attrs names groups"):
        adapters.from_dict(groups, attrs={"prior": {"a": 1}})


def test_hdi_is_the_shortest_interval():
    x = np.random.default_rng(1).gamma(2.0, size=1001)
    s = np.sort(x)
    k = int(np.floor(0.8 * x.size))
    i = int(np.argmin(s[k:] - s[: x.size - k]))
    assert adapters.hdi(x, 0.8) == (s[i], s[i + k])


@pytest.mark.parametrize("prob", [0, 1, "0.9", None])
def test_hdi_refuses_bad_prob(prob):
    with pytest.raises(ValueError, match="prob must be a number in"):
        adapters.hdi(np.arange(10.0), prob)


def test_hdi_refuses_bad_draws_and_takes_one_draw():
    for bad in (np.ones((2, 5)), np.array([])):
        with pytest.raises(ValueError, match="draws must be a non-empty 1-D array"):
            adapters.hdi(bad, 0.9)
    assert adapters.hdi(np.array([0.25]), 0.9) == (0.25, 0.25)  # as ArviZ: degenerate, not refused


def _ar1(rng, phi, shape):
    x = np.empty(shape)
    x[..., 0] = rng.normal(size=shape[:-1]) / np.sqrt(1 - phi**2)
    for t in range(1, shape[-1]):
        x[..., t] = phi * x[..., t - 1] + rng.normal(size=shape[:-1])
    return x


def test_ess_and_rhat_of_known_chains():
    """Independent draws: ESS near the number of draws, R-hat near 1; an
    AR(1) with phi = 0.8: ESS near n (1 - phi) / (1 + phi); chains with
    different means: R-hat well above 1. Fixed seed."""
    rng = np.random.default_rng(2)
    iid = rng.normal(size=(4, 1000))
    for method in adapters.ESS_METHODS:
        assert 3000 < adapters.ess(iid, method) < 5000
    assert adapters.rhat(iid) == pytest.approx(1.0, abs=0.01)
    ar = _ar1(rng, 0.8, (4, 5000))
    assert adapters.ess(ar, "mean") == pytest.approx(20_000 * 0.2 / 1.8, rel=0.2)
    assert adapters.rhat(iid + np.arange(4)[:, None]) > 1.5


def test_tail_ess_is_at_the_5_and_95_percent_quantiles():
    """On both lines the tail ESS is the smaller quantile ESS at 5% and 95%
    (ArviZ 1.x's own default would use rcParams["stats.ci_prob"] instead)."""
    x = _ar1(np.random.default_rng(3), 0.5, (4, 400))
    if adapters.uses_datatree():
        import arviz_stats

        q = [float(arviz_stats.ess(x, method="quantile", prob=p)) for p in (0.05, 0.95)]
    else:
        az = adapters.load_arviz()
        q = [float(az.ess(x, method="quantile", prob=p)) for p in (0.05, 0.95)]
    assert adapters.ess(x, "tail") == pytest.approx(min(q), rel=1e-12)


def test_ess_and_rhat_refuse_bad_input():
    with pytest.raises(ValueError, match="method must be one of"):
        adapters.ess(np.zeros((2, 10)), "median")
    with pytest.raises(ValueError, match=r"x must be a \(chain, draw\) array"):
        adapters.ess(np.zeros(10))
    with pytest.raises(ValueError, match=r"x must be a \(chain, draw\) array"):
        adapters.rhat(np.zeros((2, 3, 4)))


def test_psislw_smooths_log_weights():
    """Light-tailed weights: k-hat small and the normalised smoothed weights
    close to the raw ones; heavy-tailed: k-hat large. The input is not
    modified. Fixed seed."""
    from scipy.special import logsumexp

    rng = np.random.default_rng(4)
    light = rng.normal(scale=0.3, size=4000)
    kept = light.copy()
    smoothed, k = adapters.psislw(light)
    np.testing.assert_array_equal(light, kept)
    assert smoothed.shape == light.shape and k < 0.5
    w = np.exp(smoothed - logsumexp(smoothed))
    raw = np.exp(light - logsumexp(light))
    change = np.abs(w - raw) / raw
    assert np.max(change) < 0.15  # the smoothed tail moves a little
    assert np.median(change) < 0.001  # the bulk does not
    _, k_heavy = adapters.psislw(rng.normal(scale=3.0, size=4000))
    assert k_heavy > 0.7


@pytest.mark.parametrize("n", [1, 2, 10, 20])
def test_psislw_of_too_few_draws_is_unsmoothed_with_infinite_k(n):
    """Too few draws to fit a tail (ArviZ 1.x smooths from 25 draws, 0.2x
    from a tail of 5, i.e. 21 draws): the normalised weights unchanged and
    k-hat infinite, on both lines."""
    from scipy.special import logsumexp

    lw = np.random.default_rng(n).normal(size=n)
    smoothed, k = adapters.psislw(lw)
    assert k == np.inf
    np.testing.assert_allclose(smoothed - logsumexp(smoothed), lw - logsumexp(lw), atol=1e-12)


def test_psislw_refuses_bad_log_weights():
    for bad in (np.zeros((2, 5)), np.array([])):
        with pytest.raises(ValueError, match="log_weights must be a non-empty 1-D array"):
            adapters.psislw(bad)
    with pytest.raises(ValueError, match="log_weights must not hold NaN"):
        adapters.psislw(np.array([0.0, np.nan, 1.0]))


def test_kde_is_a_boundary_corrected_density():
    x = np.random.default_rng(5).uniform(size=5000)
    grid, pdf = adapters.kde(x)
    assert grid.shape == pdf.shape == (512,)
    assert grid[0] >= x.min() - 1e-12 and grid[-1] <= x.max() + 1e-12
    assert np.sum(0.5 * (pdf[1:] + pdf[:-1]) * np.diff(grid)) == pytest.approx(1.0, abs=0.02)
    # corrected at the bounds: a uniform's density stays near 1 there (not 1/2)
    assert pdf[0] > 0.75 and pdf[-1] > 0.75
    with pytest.raises(ValueError, match="x must be a non-empty 1-D array"):
        adapters.kde(np.zeros((3, 3)))


def test_summary_rows_and_hdi_columns(groups):
    data = adapters.from_dict(groups, dims={"accuracy": ["bin"]})
    table = adapters.summary(data, var_names=["ece", "accuracy"], hdi_prob=0.8, kind="stats",
                             round_to="none")
    assert list(table.index) == ["ece", "accuracy[0]", "accuracy[1]", "accuracy[2]"]
    lo, hi = (float(v) for v in table.loc["ece"].iloc[2:4])
    assert (lo, hi) == pytest.approx(adapters.hdi(groups["posterior"]["ece"][0], 0.8), rel=1e-12)
    assert float(table.loc["ece", "mean"]) == pytest.approx(groups["posterior"]["ece"].mean(), rel=1e-12)
    with pytest.raises(ValueError, match="hdi_prob must be a number in"):
        adapters.summary(data, hdi_prob=1.5)


def test_summary_of_a_label_dimension():
    """ArviZ 1.x's summary names its stacked rows "label": data with its own
    "label" dimension (the top-label results) still gives one row per label."""
    x = np.random.default_rng(6).normal(size=(1, 200, 3))
    data = adapters.from_dict({"posterior": {"label_ece": x}}, coords={"label": [0, 1, 3]},
                              dims={"label_ece": ["label"]})
    table = adapters.summary(data, kind="stats")
    assert list(table.index) == ["label_ece[0]", "label_ece[1]", "label_ece[3]"]
    assert list(data.posterior["label_ece"].dims) == ["chain", "draw", "label"]  # unchanged


def test_quiet_arviz_restores_the_log_levels():
    logger = logging.getLogger("arviz")
    before = logger.level
    with adapters.quiet_arviz():
        assert logger.level == logging.ERROR
    assert logger.level == before


def test_reading_the_version_imports_no_arviz():
    code = (
        "import sys; from bece._base import arviz as a; a.uses_datatree(); "
        "print([m for m in ('arviz', 'arviz_base', 'arviz_stats') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_adapters_import_no_plotting_on_arviz_1():
    """On 1.x the adapters use arviz_base and arviz_stats only: neither
    arviz_plots nor matplotlib is imported for them."""
    if not adapters.uses_datatree():
        pytest.skip("ArviZ 0.2x is one package (it imports matplotlib itself)")
    code = (
        "import sys, numpy as np; from bece._base import arviz as a\n"
        "x = np.random.default_rng(0).normal(size=(2, 50))\n"
        "d = a.from_dict({'posterior': {'x': x}}); a.summary(d); a.hdi(x[0], 0.9); a.ess(x)\n"
        "a.rhat(x); a.psislw(x[0]); a.kde(x[0]); a.preload()\n"
        "print([m for m in ('arviz', 'arviz_plots', 'matplotlib') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
