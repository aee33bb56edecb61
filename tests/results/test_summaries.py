"""bece._results.summaries: the summaries of a BayesianECE (mean, sd, intervals,
HDI, summary table) are those of its draws."""

from __future__ import annotations

import numpy as np
import pytest


def test_summaries_are_those_of_the_draws(result):
    d = result.draws
    assert result.mean == pytest.approx(d.mean(), rel=1e-15)
    assert result.std == pytest.approx(d.std(ddof=1), rel=1e-15)
    lo, hi = result.interval(0.8)
    np.testing.assert_allclose((lo, hi), np.quantile(d, [0.1, 0.9]), rtol=1e-12)
    assert np.mean((d >= lo) & (d <= hi)) == pytest.approx(0.8, abs=2 / d.size)


def _shortest_interval(draws, prob):
    """The shortest interval between sorted draws i and i + floor(prob * n)."""
    x = np.sort(draws)
    k = int(np.floor(prob * x.size))
    i = int(np.argmin(x[k:] - x[: x.size - k]))
    return float(x[i]), float(x[i + k])


def test_hdi_is_the_shortest_interval_holding_prob(result):
    lo, hi = result.hdi(0.9)
    assert (lo, hi) == _shortest_interval(result.draws, 0.9)
    elo, ehi = result.interval(0.9)
    assert hi - lo <= ehi - elo + 1e-12
    assert np.mean((result.draws >= lo) & (result.draws <= hi)) >= 0.9 - 1 / result.draws.size


@pytest.mark.parametrize("prob", [0, 1, 1.5, -0.1, "0.9", None])
def test_bad_prob(result, prob):
    with pytest.raises(ValueError, match="prob must be a number in"):
        result.interval(prob)


def test_summary_table_is_the_ece_by_default_and_everything_on_request(result):
    """The default table is the headline quantity only, from the draws
    themselves: mean, sd (ddof=1), the HDI, MCSE sd/sqrt(S) and ESS = S
    for independent draws; no R-hat (one chain). ``"all"`` has every
    per-bin quantity, each row equal to a column of the draws."""
    table = result.summary()
    d = result.draws
    assert list(table.index) == ["ece"]
    assert list(table.columns) == ["mean", "sd", "hdi_5%", "hdi_95%", "mcse_mean", "ess"]
    row = table.loc["ece"]
    assert row["mean"] == pytest.approx(d.mean(), rel=1e-14)
    assert row["sd"] == pytest.approx(d.std(ddof=1), rel=1e-14)
    assert (row["hdi_5%"], row["hdi_95%"]) == _shortest_interval(d, 0.9)
    assert row["mcse_mean"] == pytest.approx(d.std(ddof=1) / np.sqrt(d.size), rel=1e-14)
    assert row["ess"] == d.size
    full = result.summary("all")
    m = result.stats.n_bins
    assert list(full.index) == ["ece"] + [f"{v}[{j}]" for v in ("accuracy", "confidence", "weight")
                                          for j in range(m)]
    assert full.loc["confidence[7]", "mean"] == pytest.approx(result.confidence[:, 7].mean(),
                                                              rel=1e-14)
    only = result.summary(var_names=["ece"], kind="stats")  # ArviZ's own table
    assert list(only.index) == ["ece"]


def test_summary_warns_of_nothing(result):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result.summary()
        result.summary("all", hdi_prob=0.5)


def test_summary_of_an_unknown_variable_names_it(result):
    with pytest.raises(ValueError, match=r"var_names: no variable\(s\) \['ece_b'\]"):
        result.summary(["ece_b"])


def test_summary_interval_is_the_hdi(result):
    """hdi_prob sets the interval columns on either ArviZ line (hdi_5%/hdi_95%
    on 0.2x, hdi90_lb/hdi90_ub on 1.x): the last two of kind="stats"."""
    table = result.summary(var_names=["ece"], kind="stats", hdi_prob=0.8, round_to="none")
    assert list(table.columns[:2]) == ["mean", "sd"] and len(table.columns) == 4
    lo, hi = (float(v) for v in table.loc["ece"].iloc[2:])
    assert (lo, hi) == pytest.approx(result.hdi(0.8), rel=1e-12)


@pytest.mark.parametrize("hdi_prob", [0, 1, "0.9", None, True])
def test_summary_bad_hdi_prob(result, hdi_prob):
    with pytest.raises(ValueError, match="hdi_prob must be a number in"):
        result.summary(hdi_prob=hdi_prob)


def test_sd_of_one_draw_is_nan_without_a_warning(recwarn):
    import bece

    r = bece.bayesian_ece([0, 1, 1], [0.2, 0.7, 0.9], num_samples=1)
    assert np.isnan(r.std)
    assert r.mean == r.draws[0]
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
