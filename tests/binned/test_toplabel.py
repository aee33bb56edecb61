"""bece._binned.toplabel: the Bayesian top-label ECE; statistics, closed form,
result object.

Monte Carlo comparisons use Z = 5 standard errors (two-sided false-alarm
rate 5.7e-7 per comparison; the largest test makes 60, so < 3.5e-5). The
NUTS cross-check of this model (false-alarm rate 1e-4 family-wise) is in
tests/validation/test_crosscheck.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

import bece
from bece import bayesian_ece, bayesian_top_label_ece, top_label_ece
from bece._binned import binned_posterior_top_label_ece as posterior_top_label_ece
from bece._binned.toplabel import top_label_statistics

from ..conftest import simulate_multiclass

Z = 5.0
mapie_calibration = pytest.importorskip("mapie.metrics.calibration")


def test_statistics_hand_case():
    prob = np.array([[0.9, 0.1, 0.0], [0.8, 0.2, 0.0], [0.3, 0.7, 0.0], [0.1, 0.2, 0.7]])
    y = [0, 1, 1, 0]
    labels, stats = top_label_statistics(y, prob, n_bins=2)
    assert labels.tolist() == [0, 1, 2]
    # label 0: conf 0.9 (right), 0.8 (wrong), both in bin 1
    assert stats[0].counts.tolist() == [[0, 1], [0, 1]]
    assert stats[0].sum_p.tolist() == pytest.approx([0.0, 1.7])
    assert stats[1].counts.tolist() == [[0, 0], [0, 1]]
    assert stats[2].counts.tolist() == [[0, 1], [0, 0]]
    assert stats[2].sum_p2.tolist() == pytest.approx([0.0, 0.49])


def test_statistics_equal_a_naive_loop(rng):
    y, prob = simulate_multiclass(3000, 7, rng, temperature=2.0)
    labels, stats = top_label_statistics(y, prob, n_bins=10)
    pred, conf = prob.argmax(axis=1), prob.max(axis=1)
    assert labels.tolist() == sorted(set(pred.tolist()))
    for lab, s in zip(labels, stats):
        sel = pred == lab
        ref = bece.CalibrationStats.from_arrays((y[sel] == lab).astype(int), conf[sel], n_bins=10)
        np.testing.assert_array_equal(s.counts, ref.counts)
        np.testing.assert_allclose(s.sum_p, ref.sum_p, rtol=1e-13)
        np.testing.assert_allclose(s.sum_p2, ref.sum_p2, rtol=1e-13)


@pytest.mark.parametrize("average", ["label", "sample"])
def test_plugin_is_top_label_ece_and_mapie(rng, average):
    y, prob = simulate_multiclass(2000, 5, rng, temperature=2.0)
    r = bayesian_top_label_ece(y, prob, n_bins=10, average=average, num_samples=200, model="binned")
    assert r.plugin == pytest.approx(top_label_ece(y, prob, n_bins=10, average=average), abs=1e-13)
    if average == "label":
        ref = mapie_calibration.top_label_ece(y, prob, num_bins=11, split_strategy="uniform")
        assert abs(r.plugin - ref) <= 1e-12


def test_one_label_is_the_binary_posterior():
    """With one predicted label the model is the binned model on (z, top confidence):
    same prior (alpha = 1/(2M)), same random stream, hence the same draws."""
    rng = np.random.default_rng(3)
    p1 = rng.uniform(0.55, 1.0, size=500)
    prob = np.column_stack([p1, 1 - p1])
    y = (rng.uniform(size=500) > p1).astype(int)  # label 0 right with prob p1
    r = bayesian_top_label_ece(y, prob, n_bins=8, seed=11, model="binned")
    ref = bayesian_ece((y == 0).astype(int), p1, n_bins=8, seed=11, model="binned")
    assert r.labels.tolist() == [0]
    np.testing.assert_allclose(r.draws, ref.draws, rtol=1e-12)
    np.testing.assert_allclose(r.label_draws[:, 0], ref.draws, rtol=1e-12)
    np.testing.assert_allclose(r.accuracy, ref.accuracy, rtol=1e-12)
    np.testing.assert_allclose(r.confidence, ref.confidence, rtol=1e-12)


def test_closed_form_moments(rng):
    """Cell masses are Dirichlet(alpha + c) and bin means truncated Normals."""
    y, prob = simulate_multiclass(400, 3, rng)
    r = bayesian_top_label_ece(y, prob, n_bins=5, num_samples=20_000, seed=2, model="binned")
    L, M = r.n_labels, 5
    counts = np.stack([s.counts for s in r.label_stats])  # (L, 2, M)
    conc = counts + 1.0 / (2 * L * M)
    mass = conc.sum(axis=1) / conc.sum()  # E[pi_lm]
    se = r.label_weight.std(axis=0) / np.sqrt(r.num_samples)
    assert np.all(np.abs(r.label_weight.mean(axis=0) - mass) <= Z * se + 1e-12)
    post = r.params
    lo, hi = post.lower, post.upper
    a, b = (lo - post.loc) / post.scale, (hi - post.loc) / post.scale
    mean = sps.truncnorm(a, b, loc=post.loc, scale=post.scale).mean().reshape(L, M)
    se = r.label_confidence.std(axis=0) / np.sqrt(r.num_samples)
    assert np.all(np.abs(r.label_confidence.mean(axis=0) - mean) <= Z * se + 1e-12)


def test_averages_are_the_stated_functions_of_the_cells(rng):
    y, prob = simulate_multiclass(1500, 4, rng, temperature=0.5)
    prob[:, 3] *= 0.2  # label 3 rarely predicted: averages differ
    prob /= prob.sum(axis=1, keepdims=True)
    lab = bayesian_top_label_ece(y, prob, num_samples=500, seed=4, model="binned")
    smp = bayesian_top_label_ece(y, prob, num_samples=500, seed=4, average="sample", model="binned")
    np.testing.assert_allclose(lab.draws, lab.label_draws.mean(axis=1), rtol=1e-12)
    pi = smp.label_weight
    gaps = np.abs(pi * smp.label_accuracy - pi * smp.label_confidence).sum(axis=2)
    np.testing.assert_allclose(smp.draws, gaps.sum(axis=1), rtol=1e-10)
    np.testing.assert_allclose(smp.label_draws, gaps / pi.sum(axis=2), rtol=1e-10)
    np.testing.assert_allclose(lab.label_draws, smp.label_draws)  # same stream, same cells
    assert abs(lab.mean - smp.mean) > 10 * max(lab.std, smp.std) / np.sqrt(500)


def test_concentrates_on_the_plugin_at_large_n(rng):
    """n = 3e5: the posterior sd of the ECE is ~0.001 (measured 0.00084), so
    the 0.003 bounds are > 3 posterior sd, and |mean - plugin| is the model's
    bias (measured 4e-6) plus Monte Carlo error of 2,000 draws (~2e-5). Each
    label's plug-in must lie within 0.003 of its 99% interval: for a
    posterior centred on the plug-in that fails with probability < 1e-4 per
    label. Fixed seed: the run is deterministic."""
    y, prob = simulate_multiclass(300_000, 3, rng, temperature=2.0)  # over-confident
    r = bayesian_top_label_ece(y, prob, num_samples=2000, model="binned")
    assert r.std < 0.003
    assert abs(r.mean - r.plugin) < 0.003
    lo, hi = r.label_interval(0.99)
    assert np.all((lo <= r.label_plugin + 0.003) & (r.label_plugin - 0.003 <= hi))


def test_inference_data_has_a_label_coordinate(rng):
    y, prob = simulate_multiclass(600, 4, rng)
    prob[:, 2] = 0.0  # label 2 never predicted
    prob /= prob.sum(axis=1, keepdims=True)
    r = bayesian_top_label_ece(y, prob, n_bins=6, num_samples=300, model="binned")
    assert 2 not in r.labels.tolist()
    idata = r.to_inference_data()
    assert idata.posterior["label"].values.tolist() == r.labels.tolist()
    assert idata.posterior["label_ece"].shape == (1, 300, r.n_labels)
    assert idata.posterior["label_accuracy"].shape == (1, 300, r.n_labels, 6)
    np.testing.assert_array_equal(idata.constant_data["label_count_correct"].values,
                                  np.stack([s.counts[1] for s in r.label_stats]))
    assert idata.posterior.attrs["average"] == "label"
    table = r.summary(var_names=["ece", "label_ece"], kind="stats")
    assert len(table) == 1 + r.n_labels
    assert "BayesianTopLabelECE(" in repr(r)


def test_per_bin_draws_dropped_when_large_and_results_unchanged(rng):
    y, prob = simulate_multiclass(800, 5, rng)
    kept = bayesian_top_label_ece(y, prob, num_samples=400, keep_bins=True, seed=9, model="binned")
    auto = bayesian_top_label_ece(y, prob, num_samples=400, keep_bins=False, seed=9, model="binned")
    assert auto.label_accuracy is None and kept.label_accuracy.shape == (400, 5, 15)
    np.testing.assert_array_equal(kept.draws, auto.draws)
    assert "label_accuracy" not in auto.to_inference_data().posterior


def test_recalibrated_confidences_with_y_pred(rng):
    y, prob = simulate_multiclass(1000, 4, rng)
    pred, conf = prob.argmax(axis=1), prob.max(axis=1)
    a = bayesian_top_label_ece(y, prob, num_samples=300, seed=1, model="binned")
    b = bayesian_top_label_ece(y, conf, y_pred=pred, num_samples=300, seed=1, model="binned")
    np.testing.assert_array_equal(a.draws, b.draws)
    assert top_label_ece(y, conf, y_pred=pred) == pytest.approx(top_label_ece(y, prob), abs=1e-15)


def test_statistics_merge_over_chunks(rng):
    y, prob = simulate_multiclass(900, 3, rng)
    labels, whole = top_label_statistics(y, prob, n_bins=7)
    _, first = top_label_statistics(y[:450], prob[:450], n_bins=7)
    _, second = top_label_statistics(y[450:], prob[450:], n_bins=7)
    assert all(len(x) == 3 for x in (first, second))  # every label predicted in both halves
    merged = [a + b for a, b in zip(first, second)]
    for s, t in zip(whole, merged):
        np.testing.assert_array_equal(s.counts, t.counts)
    r1 = posterior_top_label_ece(whole, labels, num_samples=100, seed=0)
    r2 = posterior_top_label_ece(merged, labels, num_samples=100, seed=0)
    np.testing.assert_allclose(r1.draws, r2.draws, rtol=1e-12)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"binning": "quantile"}, "quantile.*not supported"),
        ({"average": "macro"}, "average must be one of"),
        ({"num_samples": 0}, "num_samples must be a positive integer"),
        ({"keep_bins": "yes"}, "keep_bins must be"),
        ({"alpha": -1.0}, "alpha must be finite and > 0"),
        ({"sigma": np.ones((3, 15))}, "sigma must have shape"),
    ],
)
def test_bad_options(kwargs, message):
    prob = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]])
    with pytest.raises(ValueError, match=message):
        bayesian_top_label_ece([0, 1, 1], prob, **kwargs, model="binned")


@pytest.mark.parametrize(
    "y,prob,kwargs,message",
    [
        ([0, 2], [[0.5, 0.5], [0.4, 0.6]], {}, "y_true must hold labels in 0..1"),
        ([0, 1], [[0.5, 0.6], [0.4, 0.6]], {}, "rows must sum to 1"),
        ([0, 1], [[0.5, np.nan], [0.4, 0.6]], {}, "NaN"),
        ([0, 1, 1], [[0.5, 0.5], [0.4, 0.6]], {}, "same length"),
        ([0, 1], [[0.5, 0.5], [0.4, 0.6]], {"y_pred": [0, 1]}, "confidences of y_pred"),
        ([0, 1], [0.5, 0.6], {"y_pred": [0, -1]}, "y_pred must hold non-negative"),
    ],
)
def test_bad_input(y, prob, kwargs, message):
    with pytest.raises(ValueError, match=message):
        bayesian_top_label_ece(y, prob, **kwargs, model="binned")


def test_default_number_of_draws_shrinks_with_many_labels():
    from bece._binned.toplabel import default_num_samples

    assert default_num_samples(10, 15) == 10_000
    assert default_num_samples(1000, 15) == 2 * 10**7 // 15_000 == 1333
    assert default_num_samples(10**5, 15) == 1000
    rng = np.random.default_rng(8)
    k = 1400  # L * M > 2e6 / ... : fewer than 10,000 draws by default
    prob = rng.dirichlet(np.full(k, 0.05), size=6000)
    y = rng.integers(0, k, size=6000)
    r = bayesian_top_label_ece(y, prob, model="binned")
    assert r.num_samples == default_num_samples(r.n_labels, 15) < 10_000


def test_a_huge_label_does_not_allocate_by_the_label_range():
    """Robustness #3: K = max label + 1 made a 3-row call with y_pred = 10**8
    allocate 11 GiB; only the predicted labels are needed."""
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    conf = [0.9, 0.8, 0.7]
    r = bayesian_top_label_ece([0, 1, 2], conf, y_pred=[0, 1, 10**9], num_samples=200, model="binned")
    assert r.labels.tolist() == [0, 1, 10**9]
    assert top_label_ece([0, 1, 2], conf, y_pred=[0, 1, 10**8]) == pytest.approx(
        top_label_ece([0, 1, 2], conf, y_pred=[0, 1, 7]))
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before  # KiB on Linux
    assert grown < 200_000


def test_labels_without_predictions_are_refused():
    """Robustness #20 for the top-label posterior: a label with n = 0."""
    from bece import CalibrationStats

    _, stats = top_label_statistics([0, 1, 1], [[0.8, 0.2], [0.3, 0.7], [0.4, 0.6]], n_bins=5)
    empty = CalibrationStats(stats[0].binning, np.zeros((2, 5), int), np.zeros(5), np.zeros(5))
    with pytest.raises(ValueError, match=r"stats\[1\] holds no predictions"):
        posterior_top_label_ece([stats[0], empty], num_samples=100)


def test_top_label_draws_beyond_the_memory_limit_are_refused(monkeypatch):
    monkeypatch.setenv("BECE_MEMORY_LIMIT", "1GiB")
    prob = [[0.8, 0.2], [0.3, 0.7], [0.4, 0.6]]
    with pytest.raises(ValueError, match=r"num_samples=100000000 with 2 labels and n_bins=15: "
                                         r"the top-label posterior draws"):
        bayesian_top_label_ece([0, 1, 1], prob, num_samples=10**8, keep_bins=False, model="binned")
    assert bayesian_top_label_ece([0, 1, 1], prob, num_samples=100, model="binned").draws.shape == (100,)


def test_zero_width_bins_take_the_point_prior():
    """Equal explicit edges (as quantile edges of tied confidences give) make a
    zero-width bin whose default sigma = tau = 0 is a point, not an error."""
    r = bayesian_top_label_ece([0, 1, 1, 1], [0.5, 1.0, 1.0, 0.7], y_pred=[0, 1, 1, 1],
                               binning=[0.0, 0.5, 1.0, 1.0], num_samples=200, model="binned")
    assert np.isfinite(r.draws).all()
    assert np.all(r.label_confidence[:, :, 2] == 1.0)
