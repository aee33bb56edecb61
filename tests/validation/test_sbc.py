"""bece._validation.sbc: simulation-based calibration.

``SBCResult.uniform`` tests every quantity's rank histogram with a
chi-square test and a Bonferroni correction: family-wise false-alarm rate
1e-4 (up to the chi-square approximation, here with 30 expected counts per
histogram bin). The "detected" cases are far beyond it (adjusted p-values
below 1e-10).
"""

from __future__ import annotations

import pytest

from bece import BinnedModel
from bece._validation.sbc import closed_form_draws
from bece.validation import sbc


def test_closed_form_is_calibrated_on_its_model():
    r = sbc(n=30, num_simulations=300, seed=1)  # 4 bins
    assert r.uniform, r
    assert set(r.ranks) >= {"q[0,0]", "q[1,3]", "confidence[2]", "ece"}
    assert all(v.min() >= 0 and v.max() <= r.num_draws for v in r.ranks.values())
    assert r.histogram("ece").sum() == 300


def test_wrong_closed_form_is_detected():
    def alpha_off_by_one(stats, num, rng):
        return closed_form_draws(stats, num, rng, alpha=1 / 8 + 1)

    r = sbc(n=30, num_simulations=300, method=alpha_off_by_one, seed=1)
    assert not r.uniform and r.adjusted_pvalue < 1e-10
    assert r.method == "alpha_off_by_one"


def test_closed_form_approximation_of_literal_model_shows_at_wide_sigma():
    r = sbc(model=BinnedModel(form="literal", n_bins=4, sigma=0.2), n=30, num_simulations=300,
            seed=2)
    assert not r.uniform and r.adjusted_pvalue < 1e-10
    assert min(r.pvalues, key=r.pvalues.get).startswith("confidence")


def test_literal_fast_path_is_calibrated_on_the_literal_model():
    """The exact sampler of bece._binned.literal, with the literal model as
    simulator, at the wide sigma where the conjugate form fails SBC above."""
    r = sbc(model=BinnedModel(form="literal", n_bins=4, sigma=0.2), n=30, num_simulations=300,
            method="literal", seed=2)
    assert r.uniform, r
    assert r.method == "literal" and r.model == "literal"


@pytest.mark.slow
def test_literal_fast_path_is_calibrated_on_the_literal_model_at_default_prior():
    r = sbc(model=BinnedModel(form="literal", n_bins=6), n=200, num_simulations=1000,
            method="literal", seed=5)
    assert r.uniform, r


def test_nuts_sbc_runs_small():
    """A small real run of NUTS SBC (the full study is marked slow)."""
    r = sbc(model=BinnedModel(n_bins=3), n=30, num_simulations=3, num_draws=19, method="nuts",
            nuts_warmup=200, seed=3)
    assert r.method == "nuts" and r.num_simulations == 3
    assert all(0 <= v.min() and v.max() <= 19 for v in r.ranks.values())


@pytest.mark.slow
def test_nuts_is_calibrated_on_the_conjugate_model():
    r = sbc(model=BinnedModel(n_bins=3), n=30, num_simulations=100, num_draws=49,
            num_hist_bins=5, method="nuts", seed=4)
    assert r.uniform, r


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"num_draws": 100}, "must be a multiple of num_hist_bins"),
        ({"model": "smooth"}, "model must be"),
        ({"model": 3}, "model must be 'conjugate', 'literal' or a bece.BinnedModel"),
        ({"method": "vi"}, "method must be"),
        ({"n": 0}, "n must be a positive integer"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        sbc(**kwargs)
