"""The model objects: each runs its NumPyro model, its fast path and its
cross-check, and its statistics merge across chunks into the whole data's
posterior."""

from __future__ import annotations

import json

import numpy as np
import pytest

import bece
from bece import (
    BinnedModel,
    CalibrationStats,
    LabelStats,
    MCMCSettings,
    SmoothModel,
    SmoothTopLabelModel,
)
from tests.conftest import simulate_binary, simulate_multiclass

# tiny NUTS runs: the call path, not the verdict (the verdicts are tested in
# tests/validation with the default settings)
TINY = MCMCSettings(num_chains=2, num_warmup=150, num_samples=150, num_closed_form=2000,
                    progress_bar=False)


def _binary(n=400, seed=0):
    return simulate_binary(n, np.random.default_rng(seed), power=1.5)


def _multiclass(n=600, k=3, seed=0):
    return simulate_multiclass(n, k, np.random.default_rng(seed))


BINARY_MODELS = [BinnedModel(n_bins=5), BinnedModel(n_bins=5, form="literal"), SmoothModel(n_bins=5)]
TOP_LABEL_MODELS = [BinnedModel(n_bins=4), SmoothTopLabelModel(n_bins=4)]


def _stats(model, y, p, top_label):
    return model.label_statistics(y, p) if top_label else model.statistics(y, p)


CASES = [(m, False) for m in BINARY_MODELS] + [(m, True) for m in TOP_LABEL_MODELS]
IDS = ["binned", "literal", "smooth", "binned-top-label", "smooth-top-label"]


@pytest.mark.parametrize("model, top_label", CASES, ids=IDS)
def test_prior_predictive_simulates_data_of_the_observed_shape(model, top_label):
    y, p = _multiclass() if top_label else _binary()
    nm = model.numpyro(_stats(model, y, p, top_label))
    draws = nm.prior_predictive(num_samples=400, seed=1)
    for name in nm.observed:  # left out, the data are simulated (or absent, collapsed models)
        if name in nm.kwargs and name in draws:
            assert draws[name].shape == (400,) + np.shape(nm.kwargs[name])
    if isinstance(model, BinnedModel):
        # Dirichlet(alpha) with equal concentrations: every bin's prior mass is 1/B
        w = draws["weight"]
        cells = w.shape[-1] * (w.shape[-2] if w.ndim == 3 else 1)
        assert np.allclose(w.mean(axis=0), 1 / cells, atol=6 * w.std(axis=0).max() / np.sqrt(400))
        assert np.all((draws["ece"] >= 0) & (draws["ece"] <= 1))
    else:
        # the simulated successes never exceed their trials (or 1, Bernoulli)
        trials = nm.kwargs.get("trials")
        assert np.all(draws["z"] >= 0)
        assert np.all(draws["z"] <= (1 if trials is None else np.asarray(trials)))
        if trials is not None and np.max(trials) > 1:  # counted over each cell's predictions
            assert (draws["z"] > 1).any()


@pytest.mark.parametrize("model, top_label", CASES, ids=IDS)
def test_fast_path_from_statistics_is_the_entry_points(model, top_label):
    y, p = _multiclass(3000) if top_label else _binary(3000)
    stats = _stats(model, y, p, top_label)
    r = model.posterior(stats, num_samples=1500, seed=3)
    if top_label:
        s = bece.bayesian_top_label_ece(y, p, model=model, num_samples=1500, seed=3)
    else:
        s = bece.bayesian_ece(y, p, model=model, num_samples=1500, seed=3)
    assert r.model == s.model and r.model.startswith(model.name)
    # statistics above 2,000 predictions are the fine grid the array path uses
    np.testing.assert_allclose(r.draws, s.draws, rtol=1e-9, atol=1e-12)
    assert r.plugin == pytest.approx(s.plugin, rel=1e-12)


@pytest.mark.parametrize("model, top_label", CASES, ids=IDS)
def test_statistics_of_chunks_merge_into_the_whole_datas_posterior(model, top_label):
    y, p = _multiclass(2400) if top_label else _binary(2400)
    whole = _stats(model, y, p, top_label)
    parts = [_stats(model, y[i], p[i], top_label) for i in np.array_split(np.arange(y.size), 3)]
    merged = sum(parts[1:], parts[0])
    one = whole.stats if top_label else [whole]
    other = merged.stats if top_label else [merged]
    for a, b in zip(one, other):
        np.testing.assert_array_equal(a.counts, b.counts)
        np.testing.assert_allclose(a.sum_p, b.sum_p, rtol=1e-13)
    ra = model.posterior(whole, num_samples=1000, seed=2)
    rb = model.posterior(merged, num_samples=1000, seed=2)
    if getattr(model, "form", None) == "literal":
        # its exact sampler of each bin's mean accepts or rejects proposals:
        # sums that differ in the last bit change some draws, not their law
        # (means within 4 standard errors of a difference: false alarm < 1e-4)
        se = np.sqrt(ra.draws.var() / 1000 + rb.draws.var() / 1000)
        assert abs(ra.draws.mean() - rb.draws.mean()) < 4 * se
    else:
        np.testing.assert_allclose(ra.draws, rb.draws, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("model, top_label", CASES, ids=IDS)
def test_cross_check_runs_through_the_model_object(model, top_label):
    y, p = _multiclass(300) if top_label else _binary(300)
    cc = bece.cross_check(y, p, model=model, top_label=top_label, mcmc=TINY)
    assert isinstance(cc, bece.CrossCheck)
    assert cc.nuts.draws.shape == (TINY.num_chains * TINY.num_samples,)
    assert cc.closed_form.model.startswith(model.name)
    assert set(cc.table["variable"]) >= {"ece"}
    assert cc.agree == (cc.converged and not cc.reasons)


def test_binned_cross_check_from_merged_statistics_agrees():
    """The binned model's check takes statistics (chunks summed); at the
    default settings it agrees (false-alarm rate 0.05 by construction)."""
    y, p = _binary(1000, seed=4)
    model = BinnedModel(n_bins=5)
    stats = model.statistics(y[:500], p[:500]) + model.statistics(y[500:], p[500:])
    cc = model.cross_check(stats, mcmc=MCMCSettings(progress_bar=False))
    assert cc.agree, cc.reasons


def test_the_smooth_check_runs_from_predictions_statistics_or_a_result():
    """Above 2,000 predictions the smooth model reads the fine grid's cells,
    so its check from the predictions, from their statistics and from the
    default's result runs NUTS on the same atoms: the same draws."""
    y, p = _binary(2050, seed=6)
    model = SmoothModel()
    mcmc = MCMCSettings(num_chains=1, num_warmup=60, num_samples=60, num_closed_form=500,
                        progress_bar=False)
    from_predictions = bece.cross_check(y, p, mcmc=mcmc)
    from_stats = model.cross_check(model.statistics(y, p), mcmc=mcmc)
    from_result = bece.cross_check(bece.bayesian_ece(y, p, num_samples=500), mcmc=mcmc)
    for cc in (from_stats, from_result):
        np.testing.assert_array_equal(cc.nuts.draws, from_predictions.nuts.draws)
        np.testing.assert_array_equal(cc.closed_form.draws, from_predictions.closed_form.draws)
        np.testing.assert_equal(cc.evidence, from_predictions.evidence)  # NaN se: one chain
    with pytest.raises(ValueError, match="runs NUTS on the predictions"):
        bece.cross_check(SmoothTopLabelModel().label_statistics(*_multiclass(200)))


# ----------------------------------------------------------------- model=


def test_options_live_on_the_model_and_shorthands_take_them():
    y, p = _binary(500)
    a = bece.bayesian_ece(y, p, model="binned", alpha=0.2, n_bins=6, num_samples=500)
    b = bece.bayesian_ece(y, p, model=BinnedModel(n_bins=6, alpha=0.2), num_samples=500)
    np.testing.assert_array_equal(a.draws, b.draws)
    assert float(a.params.alpha.max()) == 0.2


def test_an_option_of_another_model_names_the_model_that_has_it():
    y, p = _binary(50)
    with pytest.raises(ValueError, match="alpha: not an option of SmoothModel.*alpha is an option "
                                         "of BinnedModel"):
        bece.bayesian_ece(y, p, alpha=0.1)
    with pytest.raises(ValueError, match="prior_odds: not an option of BinnedModel.*SmoothModel "
                                         "and SmoothTopLabelModel"):
        bece.bayesian_ece(y, p, model="binned", prior_odds=0.5)
    with pytest.raises(ValueError, match="SmoothModel has no top-label posterior"):
        bece.bayesian_top_label_ece(*_multiclass(50), model=SmoothModel())
    with pytest.raises(ValueError, match="model must be one of .* or a model object, got 3"
                                         "|got int"):
        bece.bayesian_ece(y, p, model=3)
    with pytest.raises(ValueError, match="sample_weight is not supported"):
        bece.bayesian_ece(y, p, sample_weight=np.ones(50))


def test_options_are_checked_once_when_the_model_is_made():
    with pytest.raises(ValueError, match="form must be one of"):
        BinnedModel(form="exact")
    with pytest.raises(ValueError, match="does not apply to form='literal'"):
        BinnedModel(form="literal", preset="uncertainty-metrics")
    with pytest.raises(ValueError, match="prior_odds"):
        SmoothModel(prior_odds=-1)
    with pytest.raises(ValueError, match="n_bins"):
        SmoothTopLabelModel(n_bins=0)
    with pytest.raises(ValueError, match="n_knots must be an integer >= 3"):
        SmoothModel(n_knots=2)
    with pytest.raises(ValueError, match="slope_scale must be a finite number > 0"):
        SmoothModel(slope_scale=float("nan"))
    with pytest.raises(ValueError, match="tilt_scale"):
        SmoothTopLabelModel(tilt_scale=-1.0)
    with pytest.raises(ValueError, match="alpha must be finite and > 0"):
        BinnedModel(alpha=-1)
    with pytest.raises(ValueError, match="sigma must be finite and > 0"):
        BinnedModel(sigma=[0.1, 0.0, 0.1])
    with pytest.raises(ValueError, match="num_chains"):
        MCMCSettings(num_chains=0)
    with pytest.raises(ValueError, match="target_accept_prob"):
        MCMCSettings(target_accept_prob=1.5)
    with pytest.raises(ValueError, match="thin: not MCMC settings"):
        MCMCSettings.resolve(None, thin=2)


def test_binned_model_refuses_statistics_in_other_bins():
    y, p = _binary(100)
    stats = BinnedModel(n_bins=10).statistics(y, p)
    with pytest.raises(ValueError, match="10 bins and the model n_bins=5"):
        BinnedModel(n_bins=5).posterior(stats)
    assert BinnedModel().posterior(stats, num_samples=100).stats.n_bins == 10


# ------------------------------------------------------------ statistics


def test_statistics_round_trip_through_json_exactly():
    y, p = _binary(300)
    stats = CalibrationStats.from_arrays(y, p, n_bins=7)
    back = CalibrationStats.from_dict(json.loads(json.dumps(stats.to_dict())))
    assert back == stats and back.kind == "binary"
    y3, prob = _multiclass(300)
    labels = BinnedModel(n_bins=4).label_statistics(y3, prob)
    assert LabelStats.from_dict(json.loads(json.dumps(labels.to_dict()))) == labels


@pytest.mark.parametrize("change, match", [
    (lambda d: d.pop("sum_p"), "needs the keys"),
    (lambda d: d.update(rule="log"), "rule must be"),
    (lambda d: d.update(edges=[0.0, 2.0]), "edges must be"),
    (lambda d: d["counts"][0].__setitem__(0, -1), "counts"),
    (lambda d: d.update(sum_p=[5.0] * 3), "sum_p|statistics for"),
])
def test_bad_statistics_dicts_are_refused(change, match):
    d = CalibrationStats.from_arrays([0, 1, 1], [0.1, 0.5, 0.9], n_bins=3).to_dict()
    change(d)
    with pytest.raises(ValueError, match=match):
        CalibrationStats.from_dict(d)


def test_paired_statistics_round_trip_through_json_exactly():
    y, p = _binary(300)
    stats = bece.PairedStats.from_arrays(y, p, p ** 0.8, n_bins=6)
    d = json.loads(json.dumps(stats.to_dict()))
    assert bece.PairedStats.from_dict(d) == stats
    d["keys"] = d["keys"][::-1]
    with pytest.raises(ValueError, match="keys must be increasing"):
        bece.PairedStats.from_dict(d)
    with pytest.raises(ValueError, match="needs the keys"):
        bece.PairedStats.from_dict({"keys": []})


def test_label_stats_merge_labels_seen_in_one_chunk_only():
    model = BinnedModel(n_bins=3)
    a = model.label_statistics([0, 1, 1], np.array([[0.9, 0.1], [0.2, 0.8], [0.3, 0.7]]))
    b = model.label_statistics([0], np.array([[0.6, 0.4]]))
    merged = a + b
    assert merged.labels.tolist() == [0, 1]
    assert [s.n for s in merged.stats] == [2, 2]
    with pytest.raises(ValueError, match="different bins"):
        a + BinnedModel(n_bins=4).label_statistics([0], np.array([[0.6, 0.4]]))


# ------------------------------------------------------------ regression


from bece.regression import DirichletPITModel, SmoothPITModel, pit  # noqa: E402

PIT_MODELS = [SmoothPITModel(levels=[0.1, 0.5, 0.9], n_cells=20),
              DirichletPITModel(levels=[0.1, 0.5, 0.9])]


def _pit(n=300, std=0.7, seed=3):
    return pit(np.random.default_rng(seed).normal(size=n), mean=0.0, std=std)


@pytest.mark.parametrize("model", PIT_MODELS, ids=["smooth-pit", "dirichlet-pit"])
def test_pit_models_prior_predictive_fast_path_and_merge(model):
    u = _pit(3000)
    hist = model.statistics(u[:1000]) + model.statistics(u[1000:])
    nm = model.numpyro(hist)
    draws = nm.prior_predictive(num_samples=300, seed=2)
    assert draws["counts"].shape == (300,) + np.shape(nm.kwargs["counts"])
    assert np.all(draws["counts"].sum(axis=1) == nm.kwargs["n"])      # n PIT values each
    r = model.posterior(hist, num_samples=1000, seed=4)
    s = bece.regression.bayesian_calibration_error(u, [0.1, 0.5, 0.9], model=model,
                                                   num_samples=1000, seed=4)
    assert r.model == s.model == model.name
    np.testing.assert_allclose(r.draws, s.draws, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("model", PIT_MODELS, ids=["smooth-pit", "dirichlet-pit"])
@pytest.mark.parametrize("std", [0.7, 1.0], ids=["over-confident", "calibrated"])
def test_pit_models_cross_check_agrees(model, std):
    """2 chains x 1,000 draws on 20 cells (n = 300): converged and within the
    rule on both a miscalibrated and a calibrated forecaster (false-alarm
    rate 0.05 per check by construction; seeds fixed)."""
    mcmc = MCMCSettings(num_chains=2, num_warmup=300, num_samples=1000, progress_bar=False)
    cc = bece.cross_check(_pit(std=std), model=model, mcmc=mcmc)
    assert cc.agree, cc.reasons
    if isinstance(model, SmoothPITModel):   # the fast path's Bayes factor against bridge sampling
        e = cc.evidence
        assert abs(e["fast"] - e["nuts"]) < 4 * e["se"] + 0.05
        assert "P(exactly calibrated)" in set(cc.table["variable"])


def test_pit_model_options_are_checked_and_resolved():
    u = _pit(200)
    with pytest.raises(ValueError, match="alpha: not an option of SmoothPITModel.*"
                                         "DirichletPITModel"):
        bece.regression.bayesian_calibration_error(u, alpha=2.0)
    with pytest.raises(ValueError, match="not both"):
        SmoothPITModel(forecast_levels=[0.5], forecast_draws=3)
    with pytest.raises(ValueError, match="levels"):
        DirichletPITModel(levels=[0.5, 0.2])
    with pytest.raises(ValueError, match="y_prob and y_pred do not apply"):
        bece.cross_check(u, u, model=SmoothPITModel())


def test_a_binned_result_is_cross_checked_against_its_own_draws():
    """bece.cross_check(result): NUTS on the result's model (its prior, its
    statistics) against the result's own draws (false-alarm rate 0.05 by
    construction; seeds fixed)."""
    y, p = _binary(800, seed=5)
    r = bece.bayesian_ece(y, p, model="binned", n_bins=5, alpha=0.2, num_samples=4000, seed=1)
    cc = bece.cross_check(r, progress_bar=False)
    assert cc.agree, cc.reasons
    assert cc.closed_form is r and cc.model == "conjugate"
    y3, prob = _multiclass(900, seed=5)
    t = bece.bayesian_top_label_ece(y3, prob, model="binned", n_bins=3, num_samples=4000, seed=1)
    ct = bece.cross_check(t, mcmc=MCMCSettings(progress_bar=False))
    assert ct.agree, ct.reasons
    assert ct.closed_form is t and "label_ece" in set(ct.table["variable"])
    side = bece.compare(y, p, p ** 1.1, num_samples=100).a  # a paired side holds no atoms
    with pytest.raises(ValueError, match="holds no atoms"):
        bece.cross_check(side)
    with pytest.raises(ValueError, match="pass it alone"):
        bece.cross_check(r, p)
