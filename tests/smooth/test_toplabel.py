"""The hierarchical smooth top-label posterior: ECE draws, entry points, statistics route,
bad input, and a small semi-synthetic honesty check.

The ECE draws are checked against a naive loop over labels, bins and
predictions with the same bootstrap weights; the plug-in against
:func:`bece.top_label_ece`; the statistics route against the arrays route
draw for draw. The honesty check (synthetic Dirichlet softmax outputs, K =
10, outcomes from a known label-dependent calibration map, the truth
computed exactly on the population the data are drawn from) asserts that
at least 12 of 20 90% intervals cover the truth under each average: at a
true coverage of 0.9 the chance of 11 or fewer is 7e-5 (1.3e-3 at 0.85),
and the binned top-label posterior, whose intervals miss (0 of 20 at
K = 100 on network outputs), fails it.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

import bece
from bece._base.laplace import single_threaded_blas
from bece._binned.toplabel import top_label_statistics
from bece._smooth.toplabel import (
    label_ece_draws,
    label_posterior_draws,
    prepare_label_atoms,
    smooth_posterior_top_label_ece,
    smooth_top_label_ece,
)
from bece._smooth.toplabel_atoms import top_label_fine_binning
from bece._smooth.toplabel_fit import fit_top_label_smooth

K = 4


def _softmax_data(n, k=K, seed=0, scale=2.0, shift=0.5):
    """Softmax outputs and labels drawn from a label-dependent map of the top confidence."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, k)) * scale
    prob = np.exp(logits - logits.max(axis=1, keepdims=True))
    prob /= prob.sum(axis=1, keepdims=True)
    pred, conf = prob.argmax(axis=1), prob.max(axis=1)
    a = np.random.default_rng(99).normal(0.0, shift, size=k)
    correct = rng.uniform(size=n) < special.expit(0.7 * special.logit(conf) + a[pred])
    y = np.where(correct, pred, (pred + 1 + rng.integers(0, k - 1, n)) % k)
    return y, prob


def test_ece_draws_equal_a_naive_loop():
    y, prob = _softmax_data(300, seed=1)
    atoms, _, _ = prepare_label_atoms(y, prob, None, 6, "uniform", None)
    post = fit_top_label_smooth(atoms)
    beta, label_beta, *_ = post.sample(5, np.random.default_rng(2))
    e = label_ece_draws(atoms, post, beta, label_beta, np.random.default_rng(3), keep=True,
                        loglik=True)
    g = np.random.default_rng(3).standard_exponential((5, atoms.p.size))  # the same weights
    m, n_labels = 6, atoms.n_labels
    for s in range(5):
        f = (atoms.x + post.basis.design(atoms.x) @ beta[s]
             + label_beta[s, atoms.label, 0]
             + label_beta[s, atoms.label, 1] * (atoms.x - post.center) / post.spread)
        sv = special.expit(f)
        assert e["loglik"][s] == pytest.approx(
            np.sum(atoms.successes * np.log(sv) + (1 - atoms.successes) * np.log1p(-sv)), rel=1e-12)
        gaps = np.zeros((n_labels, m))
        mass = np.zeros((n_labels, m))
        acc = np.zeros((n_labels, m))
        for j in range(atoms.p.size):
            lab, b = atoms.label[j], atoms.bin[j]
            gaps[lab, b] += g[s, j] * (sv[j] - atoms.p[j])
            mass[lab, b] += g[s, j]
            acc[lab, b] += g[s, j] * sv[j]
        label_ece = np.abs(gaps).sum(axis=1) / mass.sum(axis=1)
        np.testing.assert_allclose(e["label_ece"][s], label_ece, rtol=1e-12)
        assert e["label"][s] == pytest.approx(label_ece.mean(), rel=1e-12)
        assert e["sample"][s] == pytest.approx(np.abs(gaps).sum() / mass.sum(), rel=1e-12)
        np.testing.assert_allclose(e["weight"][s], mass.sum(axis=0) / mass.sum(), rtol=1e-12)
        full = mass.sum(axis=0) > 0
        np.testing.assert_allclose(e["accuracy"][s][full], acc.sum(axis=0)[full] / mass.sum(axis=0)[full],
                                   rtol=1e-12)
        np.testing.assert_allclose(e["label_mass"][s], mass.sum(axis=1) / mass.sum(), rtol=1e-12)
        kept = mass > 0
        np.testing.assert_allclose(e["label_accuracy"][s][kept], acc[kept] / mass[kept], rtol=1e-12)


def test_result_plugin_shapes_and_both_averages():
    y, prob = _softmax_data(1500, seed=2)
    lab = bece.bayesian_top_label_ece(y, prob, model="smooth", num_samples=400, seed=3)
    smp = bece.bayesian_top_label_ece(y, prob, model="smooth", num_samples=400, seed=3,
                                      average="sample")
    assert lab.model == "smooth-top-label" and lab.method == "laplace"
    assert lab.draws.shape == (400,) and lab.label_draws.shape == (400, K)
    assert lab.label_accuracy is not None and lab.label_accuracy.shape == (400, K, 15)
    for r, avg in ((lab, "label"), (smp, "sample")):
        assert r.plugin == pytest.approx(bece.top_label_ece(y, prob, average=avg), abs=1e-12)
    # the same fit and draws: the averages differ only in how labels are weighted
    np.testing.assert_array_equal(lab.label_draws, smp.label_draws)
    np.testing.assert_allclose(lab.draws, lab.label_draws.mean(axis=1), rtol=1e-12)
    assert not np.allclose(lab.draws, smp.draws)
    # the binned model is unchanged through the new entry point
    b1 = bece.bayesian_top_label_ece(y, prob, num_samples=300, seed=4, model="binned")
    b2 = bece.bayesian_top_label_ece(y, prob, model="binned", num_samples=300, seed=4)
    np.testing.assert_array_equal(b1.draws, b2.draws)


def test_statistics_route_gives_the_draws_of_the_arrays_route():
    y, prob = _softmax_data(4000, seed=5)
    r = bece.bayesian_top_label_ece(y, prob, model="smooth", num_samples=300, seed=7)
    fine = top_label_fine_binning(K)
    labels, stats = top_label_statistics(y, prob, binning=fine)
    s = bece.posterior_top_label_ece(stats, labels, model="smooth", n_bins=15, num_samples=300,
                                     seed=7)
    np.testing.assert_allclose(s.draws, r.draws, rtol=1e-12, atol=0)
    np.testing.assert_allclose(s.label_draws, r.label_draws, rtol=1e-12, atol=0)
    assert s.plugin == pytest.approx(r.plugin, abs=1e-14)
    # chunks added: float rounding of the sums only
    _, first = top_label_statistics(y[:1500], prob[:1500], binning=fine)
    _, second = top_label_statistics(y[1500:], prob[1500:], binning=fine)
    merged = [a + b for a, b in zip(first, second, strict=True)]
    m = smooth_posterior_top_label_ece(merged, n_bins=15, num_samples=300, seed=7)
    np.testing.assert_allclose(m.draws, r.draws, rtol=1e-9)


@pytest.mark.parametrize("call, match", [
    (lambda y, p: bece.bayesian_top_label_ece(y, p, model="smooth", alpha=0.1), "alpha"),
    (lambda y, p: bece.bayesian_top_label_ece(y, p, model="smoothed"), "model must be one of"),
    (lambda y, p: bece.bayesian_top_label_ece(y, p, model="smooth", average="mean"), "average"),
    (lambda y, p: bece.bayesian_top_label_ece(y, p, model="smooth", keep_bins="yes"), "keep_bins"),
    (lambda y, p: bece.bayesian_top_label_ece(y, p, model="smooth", binning="quantile"), "quantile"),
    (lambda y, p: bece.bayesian_top_label_ece(y, p, model="smooth", num_samples=0), "num_samples"),
    (lambda y, p: smooth_top_label_ece(y, p, label_scale=-1.0), "label_scale"),
    (lambda y, p: smooth_top_label_ece(y, p, grid="fine"), "grid"),
    (lambda y, p: smooth_top_label_ece(y, p, n_knots=2), "n_knots"),
    (lambda y, p: bece.bayesian_top_label_ece(y[:-1], p, model="smooth"), "y_true"),
    (lambda y, p: bece.bayesian_top_label_ece(y, np.where(p > 0.5, np.nan, p), model="smooth"),
     "NaN"),
])
def test_bad_input_is_refused_with_a_message(call, match):
    y, prob = _softmax_data(200, seed=6)
    with pytest.raises(ValueError, match=match):
        call(y, prob)


def test_bad_statistics_are_refused():
    y, prob = _softmax_data(500, seed=8)
    labels, coarse = top_label_statistics(y, prob, n_bins=7)
    with pytest.raises(ValueError, match="refine"):
        bece.posterior_top_label_ece(coarse, model="smooth", n_bins=15)
    labels, fine = top_label_statistics(y, prob, binning=top_label_fine_binning(K))
    with pytest.raises(ValueError, match="n_bins"):
        bece.posterior_top_label_ece(fine, n_bins=15)  # binned: bins of stats
    with pytest.raises(ValueError, match="grid=None"):
        smooth_posterior_top_label_ece(fine, grid=None)
    with pytest.raises(ValueError, match="labels must have shape"):
        smooth_posterior_top_label_ece(fine, labels[:-1])
    with pytest.raises(ValueError, match="sequence of CalibrationStats"):
        smooth_posterior_top_label_ece(fine[0])
    empty = type(fine[0])(fine[0].binning, np.zeros_like(fine[0].counts), np.zeros(fine[0].n_bins),
                          np.zeros(fine[0].n_bins))
    with pytest.raises(ValueError, match="holds no predictions"):
        smooth_posterior_top_label_ece([fine[0], empty])


def test_a_label_with_few_predictions_borrows_the_shared_curve():
    """Two labels share a curve; a third, predicted 6 times, has its plug-in
    ECE far from the truth. Its posterior ECE is pulled towards the others'
    (shrinkage), where the binned posterior stays at its plug-in."""
    rng = np.random.default_rng(11)
    n = 2000
    pred = np.concatenate([rng.integers(0, 2, n - 6), np.full(6, 2)])
    conf = rng.uniform(0.5, 1.0, n)
    correct = rng.uniform(size=n) < conf  # calibrated for every label
    y = np.where(correct, pred, (pred + 1) % 3)
    s = bece.bayesian_top_label_ece(y, conf, y_pred=pred, model="smooth", num_samples=2000, seed=0)
    b = bece.bayesian_top_label_ece(y, conf, y_pred=pred, num_samples=2000, seed=0, model="binned")
    small = s.label_draws[:, 2].mean()
    assert small < 0.5 * b.label_draws[:, 2].mean()
    assert s.params.kappas @ s.params.weights < 0.5  # little spread between labels


def _population(k=10, size=20_000, seed=0):
    rng = np.random.default_rng(seed)
    prob = rng.dirichlet(np.full(k, 0.3), size=size)
    pred, conf = prob.argmax(axis=1), prob.max(axis=1)
    a = np.random.default_rng(5).normal(0.0, 0.5, k)
    g = special.expit(a[pred] + 0.8 * special.logit(np.clip(conf, 1e-6, 1 - 1e-6)))
    b = np.minimum((conf * 15).astype(int), 14)
    gaps = np.abs(np.bincount(pred * 15 + b, weights=g - conf, minlength=k * 15).reshape(k, 15))
    return pred, conf, g, gaps.sum(axis=1), np.bincount(pred, minlength=k).astype(float)


def _replications(population, k, n, reps, rng):
    """Each replication: n predictions resampled from ``population``, outcomes
    redrawn from its map, the true top-label ECE under both averages (over
    the labels predicted), and 1,000 draws of the hierarchical posterior."""
    pred, conf, g, gaps, counts = population
    for rep in range(reps):
        idx = rng.integers(0, pred.size, n)
        correct = rng.uniform(size=idx.size) < g[idx]
        p, lab = conf[idx], pred[idx]
        y = np.where(correct, lab, (lab + 1) % k)
        present = np.unique(lab)
        truth = {"label": np.mean(gaps[present] / counts[present]),
                 "sample": gaps[present].sum() / counts[present].sum()}
        with single_threaded_blas():
            atoms, _, _ = prepare_label_atoms(y, p, lab, 15, "uniform", "auto")
            e, _ = label_posterior_draws(atoms, fit_top_label_smooth(atoms), 1000,
                                         np.random.default_rng(rep), False)
        yield y, p, lab, truth, e


def _covers(draws, truth):
    lo, hi = np.quantile(draws, [0.05, 0.95])
    return int(lo <= truth <= hi)


def test_semi_synthetic_intervals_cover_the_true_top_label_ece():
    """K = 10, n = 1500 resampled from a population of 20,000 Dirichlet softmax
    outputs, outcomes from a label-dependent map (truth about 0.05); 20
    replications (module docstring for the threshold)."""
    covered = {"label": 0, "sample": 0}
    err = {"label": [], "sample": []}
    plug_err = {"label": [], "sample": []}
    for y, p, lab, truth, e in _replications(_population(), 10, 1500, 20, np.random.default_rng(1)):
        for avg in covered:
            covered[avg] += _covers(e[avg], truth[avg])
            err[avg].append(e[avg].mean() - truth[avg])
            plug_err[avg].append(bece.top_label_ece(y, p, y_pred=lab, average=avg) - truth[avg])
    for avg in covered:
        assert covered[avg] >= 12, (avg, covered[avg])
        # the posterior mean is less biased than the plug-in (biased up by about 0.02 here)
        assert abs(np.mean(err[avg])) < 0.5 * abs(np.mean(plug_err[avg])), avg


@pytest.mark.slow
def test_semi_synthetic_coverage_with_many_labels():
    """K = 100, n = 3000 (about 30 predictions per label) from a population of
    50,000 Dirichlet softmax outputs, label-dependent map; 40 replications,
    at least 28 covered under each average (at a true coverage of 0.9 the
    chance of 27 or fewer is 1e-4; 4e-3 at 0.85)."""
    population = _population(k=100, size=50_000, seed=3)
    covered = {"label": 0, "sample": 0}
    for _, _, _, truth, e in _replications(population, 100, 3000, 40, np.random.default_rng(2)):
        for avg in covered:
            covered[avg] += _covers(e[avg], truth[avg])
    assert min(covered.values()) >= 28, covered
