"""bece._validation.crosscheck: the NUTS cross-check of the closed form (binned
and top-label).

``cross_check`` declares agreement under the rule of bece._validation.agreement:
NUTS converged (R-hat <= 1.01, ESS >= 400, no divergence after the retry) and
each 5/50/95% quantile within max(z MCSE, 0.25 sd), z for a family-wise
false-alarm rate of 0.05. On the conjugate model, whose closed form is exact,
the rule's false-alarm rate is measured by benchmarks/crosscheck_agreement.py
(the table on the validation page); each test here has at most that rate
(<= 0.05) of failing by chance, and its seeds are fixed, so each run is
deterministic.
"""

from __future__ import annotations

import numpy as np
import pytest

import bece
from bece import CalibrationStats, bayesian_top_label_ece, posterior_ece
from bece._base import sample_dirichlet
from bece._binned import conjugate_posterior
from bece._binned.conjugate import ece_of_draws
from bece._results import BayesianECE, BayesianTopLabelECE
from bece._validation.agreement import compare_draws
from bece._validation.crosscheck import cross_check_stats

from ..conftest import simulate_binary, simulate_multiclass


def _beta_data(n, seed):
    rng = np.random.default_rng(seed)
    p = rng.beta(5, 1, size=n)
    y = (rng.uniform(size=n) < p**1.2).astype(int)
    return y, p


@pytest.mark.parametrize(
    "n,n_bins",
    [(25, 10), (1000, 15), (1_000_000, 15)],
    ids=["small-n-empty-bins", "medium", "large-n"],
)
def test_agrees_on_the_conjugate_model(n, n_bins):
    y, p = _beta_data(n, seed=n)
    cc = bece.cross_check(y, p, n_bins=n_bins, seed=1, model="conjugate")
    if n == 25:
        assert (cc.closed_form.stats.bin_counts == 0).any()
    assert cc.converged, cc
    assert cc.agree, cc.reasons
    assert cc.reasons == [] and cc.divergences == 0
    assert len(cc.table) == 3 * (1 + 2 * n_bins)
    assert cc.nuts.draws.shape == (4000,) and cc.nuts.method == "nuts"
    assert cc.inference_data.posterior.sizes["chain"] == 4
    assert "ece" in cc.closed_form_inference_data.posterior
    assert abs(cc.ece_gap["mean"]) <= 5 * cc.closed_form.std / np.sqrt(cc.ess_min) + 1e-6


@pytest.fixture(scope="module")
def small():
    y, p = _beta_data(30, seed=3)
    return CalibrationStats.from_arrays(y, p, n_bins=5)


def test_alpha_off_by_one_is_detected(small):
    wrong = posterior_ece(small, alpha=1 / 10 + 1, num_samples=20_000, seed=2)
    cc = cross_check_stats(small, closed_form=wrong, seed=4)
    assert cc.converged and not cc.agree
    assert cc.max_ratio > 1.5  # the ECE's quantiles ~0.45 posterior sd apart (tolerance 0.25 sd)
    assert any("accuracy" in r or "ece" in r for r in cc.reasons)


def test_untruncated_mu_is_detected(small):
    post = conjugate_posterior(small)
    rng = np.random.default_rng(5)
    size = 20_000
    q = sample_dirichlet(post.concentration, size, rng)
    mu = post.loc + post.scale * rng.standard_normal((size, small.n_bins))  # no truncation
    weight = q.sum(axis=1)
    wrong = BayesianECE(
        draws=ece_of_draws(q, mu), accuracy=q[:, 1] / weight, confidence=mu, weight=weight,
        plugin=0.0, stats=small,
    )
    cc = cross_check_stats(small, closed_form=wrong, seed=6)
    assert cc.converged and not cc.agree
    assert cc.worst["variable"] == "confidence"
    assert cc.reasons[0].startswith("confidence[")


def test_literal_fast_path_agrees_with_nuts_and_the_gap_to_the_conjugate_form_shows():
    # few points per bin and a wide sigma: the truncation normaliser matters
    y, p = simulate_binary(40, np.random.default_rng(8), power=2.0)
    stats = CalibrationStats.from_arrays(y, p, n_bins=4)
    cc = cross_check_stats(stats, model="literal", sigma=0.5, tau=0.5, seed=7)
    assert cc.model == "literal" and cc.converged
    assert cc.nuts.model == "binned-literal" and cc.closed_form.model == "binned-literal"
    assert cc.agree, cc.table.sort_values("ratio").tail(3)
    # the conjugate form's posterior on the same NUTS run: visibly off at this sigma
    conj = bece.posterior_ece(stats, model="conjugate", sigma=0.5, tau=0.5, num_samples=20_000,
                              seed=1)
    gap = cross_check_stats(stats, model="literal", sigma=0.5, tau=0.5, seed=7, closed_form=conj)
    assert not gap.agree
    assert list(gap.gap.index) == ["bin 0", "bin 1", "bin 2", "bin 3", "ece"]
    # the literal model's mean confidence is pulled towards the bin centre
    centre = 0.5 * (stats.edges[:-1] + stats.edges[1:])
    nonempty = stats.bin_counts > 0
    lit = gap.gap["confidence_nuts"].to_numpy()[:4][nonempty]
    closed = gap.gap["confidence_closed_form"].to_numpy()[:4][nonempty]
    assert np.all(np.abs(lit - centre[nonempty]) <= np.abs(closed - centre[nonempty]) + 1e-3)


def test_literal_fast_path_agrees_with_nuts_on_confidences_piled_at_the_ends():
    """scikit-learn's breast-cancer data with a logistic regression (ships with
    scikit-learn): confidences piled near 0 and 1, where the conjugate form
    was one posterior sd from NUTS on the literal model (max z 252)."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    x, y = load_breast_cancer(return_X_y=True)
    xtr, xte, ytr, yte = train_test_split(x, y, test_size=0.5, random_state=0)
    clf = make_pipeline(StandardScaler(), LogisticRegression()).fit(xtr, ytr)
    p = clf.predict_proba(xte)[:, 1]
    cc = bece.cross_check(yte, p, model="literal", seed=2)
    assert cc.converged and cc.agree, cc.table.sort_values("ratio").tail(3)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"model": "bogus"}, "model must be one of"),
        ({"num_chains": 0}, "num_chains must be a positive integer"),
        ({"num_warmup": 0}, "num_warmup must be a positive integer"),
        ({"false_alarm": 1.5}, "false_alarm must be in"),
        ({"seed": -2}, "seed must be a non-negative int"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        bece.cross_check([0, 1, 1], [0.2, 0.7, 0.9], **kwargs)


def test_zero_width_bins_are_refused():
    p = np.array([0.7] * 8 + [0.1, 0.9])
    with pytest.raises(ValueError, match="bins of positive width"):
        bece.cross_check(np.ones(10, int), p, n_bins=5, binning="quantile", model="conjugate")


# ------------------------------------------------------------ top-label
@pytest.fixture(scope="module")
def nuts_top_label():
    rng = np.random.default_rng(5)
    y, prob = simulate_multiclass(300, 3, rng, temperature=1.5)
    return y, prob, bece.cross_check(y, prob, top_label=True, n_bins=4, num_warmup=600, seed=0,
                                         model="conjugate")


def test_cross_check_agrees_on_the_top_label_model(nuts_top_label):
    _, _, cc = nuts_top_label
    assert cc.converged, cc
    assert cc.agree, cc.table.sort_values("ratio").tail()
    assert set(cc.table["variable"]) == {"ece", "label_ece", "accuracy", "confidence"}
    assert isinstance(cc.nuts, BayesianTopLabelECE) and cc.nuts.method == "nuts"
    assert "label" in cc.inference_data.posterior.coords


def test_cross_check_catches_a_wrong_top_label_closed_form(nuts_top_label):
    """The same NUTS draws against a closed form whose prior is off (alpha = 1 per
    cell instead of 1/(2LM)): the comparison must reject it."""
    y, prob, cc = nuts_top_label
    wrong = bayesian_top_label_ece(y, prob, n_bins=4, alpha=1.0, num_samples=20_000,
                                   seed=3, keep_bins=True, model="binned")
    chains = {
        "ece": cc.nuts.draws.reshape(4, 1000),
        "label_ece": cc.nuts.label_draws.reshape(4, 1000, -1),
        "accuracy": cc.nuts.label_accuracy.reshape(4, 1000, -1),
        "confidence": cc.nuts.label_confidence.reshape(4, 1000, -1),
    }
    closed = {"ece": wrong.draws, "label_ece": wrong.label_draws,
              "accuracy": wrong.label_accuracy, "confidence": wrong.label_confidence}
    agreement = compare_draws(chains, closed, 4, 1000)
    assert agreement.max_ratio > 2


def test_unknown_model_lists_every_accepted_model():
    """Robustness #18: cross_check(model='foo') said ('conjugate', 'literal')
    although model='smooth' is accepted."""
    from bece import cross_check

    with pytest.raises(ValueError, match=r"model must be one of \('smooth', 'binned', 'conjugate', "
                                         r"'literal'\) or a model object, got 'foo'"):
        cross_check([0, 1, 1], [0.2, 0.6, 0.9], model="foo")
    stats = CalibrationStats.from_arrays([0, 1, 1], [0.2, 0.6, 0.9])
    with pytest.raises(ValueError, match=r"for statistics, got 'smooth' \(model='smooth' runs on the "
                                         r"predictions"):
        cross_check_stats(stats, model="smooth")


def test_form_gap_and_literal_gap_compare_the_two_fast_paths():
    from bece._validation.literal import form_gap
    from bece.validation import literal_gap

    y, p = simulate_binary(3000, np.random.default_rng(9))
    stats = CalibrationStats.from_arrays(y, p, n_bins=5)
    g = form_gap(stats, num_samples=4000, seed=1, truth=0.05)
    conj = posterior_ece(stats, model="conjugate", num_samples=4000, seed=1)
    lit = posterior_ece(stats, model="literal", num_samples=4000, seed=1)
    assert g["conjugate_mean"] == conj.mean and g["literal_mean"] == lit.mean
    assert g["gap_mean"] == pytest.approx(lit.mean - conj.mean)
    assert g["gap_sd"] == pytest.approx((lit.mean - conj.mean) / conj.std)
    lo, hi = lit.interval(0.9)
    assert g["literal_covers"] == (lo <= 0.05 <= hi)
    table = literal_gap([200, 2000], n_bins=5, num_samples=1000, seed=3)
    assert list(table["n"]) == [200, 2000]
    assert {"plugin", "conjugate_mean", "literal_mean", "gap_sd", "max_confidence_gap"} <= set(table)


@pytest.mark.slow
def test_top_label_literal_fast_path_agrees_with_nuts():
    """NUTS on the literal top-label model against the exact per-(label, bin)
    sampler (~2 minutes on a loaded 2-core machine)."""
    rng = np.random.default_rng(3)
    prob = rng.dirichlet(np.ones(3) * 0.4, size=600)
    y = np.array([rng.choice(3, p=row) for row in prob])
    cc = bece.cross_check(y, prob, top_label=True, model="literal", n_bins=4, seed=1)
    assert cc.closed_form.model == "binned-top-label-literal"
    assert cc.converged and cc.agree, cc.table.sort_values("ratio").tail(3)
