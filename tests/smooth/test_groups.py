"""Calibration by group: statistics that add up, the pooled and own posteriors, the result."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import special

import bece
from bece import GroupECE, GroupStats, SmoothGroupModel, SmoothModel
from bece._results.groups import _worst
from bece._stats.groups import group_index


def _data(seed=0, n=(1500, 1500, 150), slopes=(1.0, 1.0, 2.5)):
    """Binary predictions in groups a, b, c; group j's curve logit = s_j logit p."""
    rng = np.random.default_rng(seed)
    names = np.repeat(np.array(["a", "b", "c"])[:len(n)], n)
    p = rng.beta(2, 2, size=names.size)
    s = np.repeat(slopes, n)
    y = rng.uniform(size=p.size) < special.expit(s * special.logit(p))
    return y.astype(np.int64), p, names


def _small_outlier():
    """Four calibrated groups of 3,000 and one of 100 (group 4) with logit slope 2.5."""
    rng = np.random.default_rng(0)
    g = np.repeat(np.arange(5), [3000, 3000, 3000, 3000, 100])
    p = rng.beta(2, 2, size=g.size)
    y = rng.uniform(size=p.size) < special.expit(np.where(g == 4, 2.5, 1.0) * special.logit(p))
    return y, p, g


@pytest.fixture(scope="module")
def data():
    return _data()


@pytest.fixture(scope="module")
def pooled(data):
    y, p, g = data
    return bece.bayesian_ece(y, p, by=g, num_samples=2000, seed=3)


# ------------------------------------------------------------------ statistics
def test_group_index_sorts_and_numbers_the_groups():
    names, index = group_index(np.array(["b", "a", "b", "c"]), 4)
    assert names.tolist() == ["a", "b", "c"] and index.tolist() == [1, 0, 1, 2]
    assert index.dtype == np.int64


@pytest.mark.parametrize("by, match", [
    (np.array([1.0, np.nan, 2.0]), "1 missing value"),
    (np.array(["a", None, "b"], dtype=object), "missing value"),
    (np.array(["2026-01-01", "NaT", "2026-01-02"], dtype="datetime64[D]"), "missing value"),
    (np.array([1, 2]), "2 entries but y_prob has 3"),
    (np.array([[1], [2], [3]]), "shape"),
    (np.array([1, "a", 2.5], dtype=object), "cannot be ordered"),
])
def test_bad_groups_are_refused(by, match):
    with pytest.raises(ValueError, match=match):
        group_index(by, 3)


def test_each_group_gets_the_statistics_of_its_own_rows(data):
    y, p, g = data
    model = SmoothGroupModel(n_bins=10)
    stats = model.group_statistics(y, p, by=g)
    assert isinstance(stats, GroupStats) and stats.groups.tolist() == ["a", "b", "c"]
    for name, s in zip(stats.groups, stats.stats):
        own = SmoothModel(n_bins=10).statistics(y[g == name], p[g == name])
        assert s == own and s.kind == "binary"


def test_a_days_statistics_merged_into_the_months_give_the_months(data):
    y, p, g = data
    model = SmoothGroupModel(n_bins=10)
    whole = model.group_statistics(y, p, by=g)
    order = np.random.default_rng(1).permutation(y.size)
    # day 0 holds group a only: b and c are added on later days alone
    first = order[g[order] == "a"][:40]
    days = [first] + np.array_split(np.setdiff1d(order, first), 30)
    parts = [model.group_statistics(y[d], p[d], by=g[d]) for d in days]
    assert parts[0].groups.tolist() == ["a"]
    month = sum(parts)
    assert month == whole  # counts and exact sums
    again = GroupStats.from_dict(json.loads(json.dumps(month.to_dict())))
    assert again == whole
    a = model.posterior(month, num_samples=1000, seed=5)
    b = model.posterior(whole, num_samples=1000, seed=5)
    np.testing.assert_array_equal(a.draws, b.draws)  # the same posterior, bit for bit


def test_group_stats_refuse_what_they_cannot_add(data):
    y, p, g = data
    a = SmoothGroupModel(n_bins=10).group_statistics(y, p, by=g)
    b = SmoothGroupModel(n_bins=12).group_statistics(y, p, by=g)
    with pytest.raises(ValueError, match="different bins"):
        a + b
    with pytest.raises(TypeError):
        a + bece.BinnedModel(n_bins=10).label_statistics(np.zeros(3, int), np.eye(3))
    with pytest.raises(ValueError, match="'groups' and 'stats'"):
        GroupStats.from_dict({"labels": [], "stats": []})
    assert a.subset(["c"]).stats[0] == a.stats[2]
    with pytest.raises(ValueError, match="no group 'z'"):
        a.subset(["z"])


# ------------------------------------------------------------------ posterior
def test_from_predictions_equals_from_statistics(data, pooled):
    y, p, g = data
    stats = SmoothGroupModel().group_statistics(y, p, by=g)
    r = bece.posterior_ece(stats, num_samples=2000, seed=3)
    assert isinstance(r, GroupECE)
    np.testing.assert_array_equal(r.draws, pooled.draws)
    np.testing.assert_array_equal(r.independent_draws, pooled.independent_draws)


def test_plugin_per_group_is_each_groups_binned_ece(data, pooled):
    y, p, g = data
    for j, name in enumerate(pooled.groups):
        rows = g == name
        b = np.minimum((p[rows] * 15).astype(int), 14)  # 15 uniform bins, a naive loop
        gaps = [abs(y[rows][b == m].sum() - p[rows][b == m].sum()) for m in range(15)]
        assert pooled.plugin[j] == pytest.approx(sum(gaps) / rows.sum(), rel=1e-12)
        assert pooled.n[j] == rows.sum()


def test_a_miscalibrated_group_stands_out_and_calibrated_ones_reach_zero(pooled):
    # c's curve is logit-slope 2.5: true ECE about 0.13; a and b are calibrated
    lo, hi = pooled.interval(0.9)
    assert lo[2] > 0.01 and hi[2] > 0.1 and lo[0] == lo[1] == 0.0
    own_lo = np.quantile(pooled.independent_draws[:, 2], 0.05)
    assert own_lo > 0.05  # c's own data alone, unshrunk
    assert pooled.prob_worst[2] > 0.9
    assert pooled.prob_worst.sum() == pytest.approx(1.0)
    # P(calibrated) from each group's own data; >= 0.05 puts the interval's lower end at 0
    assert pooled.group_prob_calibrated[2] < 0.01 < 0.05 <= pooled.group_prob_calibrated[:2].min()
    assert pooled.prob_calibrated == pytest.approx(np.prod(pooled.group_prob_calibrated))


def test_the_own_posteriors_are_the_binary_smooth_model_on_each_group(data):
    y, p, g = data
    r = bece.bayesian_ece(y, p, by=g, num_samples=4000, seed=7, pooling="none")
    assert r.pooling == "none" and r.gap_draws is None and r.independent_draws is None
    assert r.differs() is None and r.hidden() is None
    for j, name in enumerate(r.groups):
        stats = SmoothModel().statistics(y[g == name], p[g == name])
        own = SmoothModel().posterior(stats, num_samples=4000, seed=11)
        # the same model and statistics, other seeds: means within Monte Carlo error.
        # The difference of two means of 4,000 draws (effective size at least
        # 1,000 each after resampling) has sd below sd * sqrt(2 / 1000); 5 sd / sqrt(1000)
        # is 3.5 of those: false-alarm rate below 5e-4 per group (normal tail)
        sd = max(own.std, 1e-4)
        assert abs(r.mean[j] - own.mean) < 5 * sd / np.sqrt(1000), name
        # P(calibrated) uses the importance-sampling marginal likelihood: seed-dependent.
        # Its log has se about 0.025 (the cross-check study's log_bf_se), so pi0 moves by
        # about pi0 (1 - pi0) 0.025 sqrt(2) <= 0.009 sd; 0.01 is over 1.1 sd at worst
        # (pi0 = 1/2) and 2.6 sd at these groups' pi0 (0.14, 0.14, 0.00): a false alarm
        # about 1% per group at these values. Fixed seeds make the run deterministic.
        assert r.group_prob_calibrated[j] == pytest.approx(own.prob_calibrated, abs=0.01)


def test_worst_probability_counts_ties_as_shares():
    draws = np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 3.0], [3.0, 2.0, 3.0]])
    np.testing.assert_allclose(_worst(draws), [(1 / 3 + 0.5) / 3, (1 / 3) / 3,
                                               (1 / 3 + 1 + 0.5) / 3])


def test_pooling_may_hide_a_small_outlier_and_the_result_says_so():
    y, p, g = _small_outlier()
    r = bece.bayesian_ece(y, p, by=g, num_samples=2000, seed=1)
    assert r.hidden().tolist() == [False, False, False, False, True]
    text = str(r)
    assert "warning: pooling may hide the miscalibration of group 4 (n = 100)" in text
    assert text.count("warning") == 1


def test_top_label_input_groups_the_confidence_and_correctness(rng):
    prob = rng.dirichlet(np.ones(4), size=1200)
    y = (rng.uniform(size=(1200, 1)) > prob.cumsum(axis=1)).sum(axis=1)
    site = np.repeat([10, 20], 600)
    r = bece.bayesian_ece(y, prob, by=site, num_samples=1000, seed=0)
    assert r.kind == "top-label" and r.groups.tolist() == [10, 20]
    conf = prob.max(axis=1)
    correct = prob.argmax(axis=1) == y
    s = SmoothGroupModel().group_statistics(y, prob, by=site)
    for j, v in enumerate([10, 20]):
        rows = site == v
        assert s.stats[j].counts[1].sum() == correct[rows].sum()
        assert s.stats[j].sum_p.sum() == pytest.approx(conf[rows].sum(), rel=1e-14)


def test_bad_uses_are_refused(data):
    y, p, g = data
    with pytest.raises(ValueError, match=r"model must be one of \('smooth',\)"):
        bece.bayesian_ece(y, p, by=g, model="binned")
    with pytest.raises(ValueError, match="pooling applies to groups"):
        bece.bayesian_ece(y, p, pooling="none")
    with pytest.raises(ValueError, match="pooling must be one of"):
        bece.bayesian_ece(y, p, by=g, pooling="full")
    with pytest.raises(ValueError, match="sample_weight is not supported"):
        bece.bayesian_ece(y, p, by=g, sample_weight=np.ones(p.size))
    with pytest.raises(ValueError, match="common bins"):
        SmoothGroupModel(binning="quantile")
    stats = SmoothGroupModel().group_statistics(y, p, by=g)
    with pytest.raises(ValueError, match=r"model must be one of \('smooth',\)"):
        bece.posterior_ece(stats, model="binned")
    with pytest.raises(ValueError, match="2 entries but y_prob has"):
        bece.bayesian_ece(y, p, by=g[:2])


def test_result_words_numbers_and_arviz(pooled):
    d = json.loads(json.dumps(pooled.to_dict()))
    assert d["model"] == "smooth-groups" and d["pooling"] == "partial"
    assert [r["group"] for r in d["groups"]] == ["a", "b", "c"]
    lo, hi = pooled.interval(0.9)
    assert d["groups"][2]["interval"] == [lo[2], hi[2]]
    assert d["groups"][2]["n"] == 150 and d["groups"][2]["plugin"] == pooled.plugin[2]
    table = pooled.summary()
    assert list(table.index) == ["a", "b", "c"] and "independent_lower" in table
    text = str(pooled)
    assert text.startswith("ECE by group: 3 groups, 3,150 predictions (binary")
    assert "partial pooling" in text and "alone, 90%" in text
    assert repr(pooled).startswith("GroupECE(n_groups=3, n=3150, pooling='partial'")
    idata = pooled.to_inference_data()
    post = idata["posterior"] if not hasattr(idata, "posterior") else idata.posterior
    assert post["ece"].shape == (1, 2000, 3) and list(post["group"].values) == ["a", "b", "c"]


def test_numpyro_model_has_one_deviation_per_group(data):
    y, p, g = data
    model = SmoothGroupModel()
    m = model.numpyro(model.group_statistics(y, p, by=g))
    draws = m.prior_predictive(num_samples=5, seed=0)
    assert draws["c"].shape == (5, 3) and draws["e"].shape == (5, 3)
    with pytest.raises(ValueError, match="pooling='none'"):
        SmoothGroupModel(pooling="none").numpyro(model.group_statistics(y, p, by=g))


# ------------------------------------------------------------------ command line
def _write(tmp_path, data, fmt):
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    y, p, g = data
    table = pa.table({"y_true": y, "y_prob": p, "version": g})
    if fmt == "csv":
        path = tmp_path / "log.csv"
        pcsv.write_csv(table, path)
        return path
    folder = tmp_path / "logs"  # a Parquet folder, as Spark writes it
    folder.mkdir()
    half = len(y) // 2
    pq.write_table(table.slice(0, half), folder / "part-0.parquet")
    pq.write_table(table.slice(half), folder / "part-1.parquet")
    return folder


@pytest.mark.parametrize("fmt", ["csv", "parquet-folder"])
def test_report_by_a_column(tmp_path, capsys, data, fmt):
    from bece._cli import main

    path = _write(tmp_path, data, fmt)
    code = main(["report", str(path), "--by", "version", "--json", "--samples", "1000"])
    out = capsys.readouterr().out
    assert code == 0
    d = json.loads(out)
    y, p, g = data
    r = bece.bayesian_ece(y, p, by=g, num_samples=1000, seed=0)
    assert d["by"] == "version" and d["model"] == "smooth-groups" and d["seed"] == 0
    assert [x["group"] for x in d["groups"]] == ["a", "b", "c"]
    assert [x["mean"] for x in d["groups"]] == r.mean.tolist()
    png = tmp_path / "groups.png"
    code = main(["report", str(path), "--by", "version", "--samples", "500", "--pooling", "none",
                 "--plot", str(png)])
    out = capsys.readouterr().out
    assert code == 0 and png.stat().st_size > 0
    assert out.startswith(f"bece report: {path}, by version\nECE by group: 3 groups")
    assert "no pooling" in out


def test_report_by_refuses_what_does_not_apply(tmp_path, capsys, data):
    from bece._cli import main

    path = _write(tmp_path, data, "csv")
    for argv, words in [
        (["--by", "region"], "no column 'region' to group by"),
        (["--pooling", "none"], "--pooling applies only with --by"),
        (["--by", "version", "--model", "binned"], "--model binned has no pooling"),
        (["--by", "version", "--top-label"], "--top-label applies only without --by"),
        (["--by", "version", "--binning", "quantile"], "groups need common bins"),
    ]:
        assert main(["report", str(path), *argv]) == 2
        assert words in capsys.readouterr().err


def test_plot_groups_marks_a_hidden_group():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bece.plots import plot_groups

    y, p, g = _small_outlier()
    r = bece.bayesian_ece(y, p, by=g, num_samples=1000, seed=1)
    ax = plot_groups(r)
    ticks = ax.get_yticklabels()
    assert [t.get_text().split("\n")[0] for t in ticks] == ["0", "1", "2", "3", "4 !"]
    assert ticks[4].get_color() == "C3"
    labels = {t.get_text() for t in ax.get_legend().get_texts()}
    assert "group's own 90% interval (no pooling)" in labels
    plt.close(ax.figure)
    with pytest.raises(ValueError, match="GroupECE"):
        plot_groups(bece.bayesian_ece(y[:500], p[:500], num_samples=100))
