"""The verdict rule (bece._results.verdict): its three answers, its boundaries, its checks."""

from __future__ import annotations

import math

import numpy as np
import pytest

import bece
from bece._results import Verdict, comparison_verdict, verdict
from bece._results.verdict import PROB_THRESHOLD, VERDICTS


def _table(p: float, prob: float, level: float) -> str:
    """The rule as the README's 2 x 2 table, written independently of the code."""
    table = {(True, True): "consistent with calibration", (True, False): "inconclusive",
             (False, True): "inconclusive", (False, False): "miscalibrated"}
    return table[(not p < level, not prob < 0.5)]


@pytest.mark.parametrize(
    "p,prob,label",
    [
        (0.42, 0.93, "consistent with calibration"),
        (0.001, 0.18, "miscalibrated"),  # notebooks/validation.ipynb's pair
        (0.019, 0.70, "inconclusive"),  # n = 5,000 in the newcomer's report: the two disagree
        (0.60, 0.20, "inconclusive"),  # the other way round
        # boundaries: p = level does not reject, P(calibrated) = 0.5 favours calibration
        (0.05, 0.5, "consistent with calibration"),
        (0.05, 0.4999, "inconclusive"),
        (0.0499, 0.5, "inconclusive"),
        (0.0499, 0.4999, "miscalibrated"),
        (1.0, 1.0, "consistent with calibration"),
        (0.0, 0.0, "miscalibrated"),
    ],
)
def test_rule_at_hand_cases_and_boundaries(p, prob, label):
    v = verdict(p, prob)
    assert v.label == label and v.label == _table(p, prob, 0.05)
    assert v.calibrated == {"consistent with calibration": True, "miscalibrated": False}.get(label)
    assert (v.p_value, v.prob_calibrated, v.level) == (p, prob, 0.05)


def test_rule_on_a_grid_matches_the_table_and_the_level_moves_the_line():
    ps = np.r_[0.0, 0.009, 0.01, 0.011, 0.049, 0.05, 0.051, 0.2, 1.0]
    probs = np.r_[0.0, 0.3, 0.4999, 0.5, 0.5001, 1.0]
    for level in (0.01, 0.05, 0.1):
        for p in ps:
            for prob in probs:
                assert verdict(p, prob, level).label == _table(p, prob, level)
    assert verdict(0.03, 0.9, 0.05).label == "inconclusive"
    assert verdict(0.03, 0.9, 0.01).label == "consistent with calibration"
    assert set(VERDICTS) == {"consistent with calibration", "inconclusive", "miscalibrated"}
    assert PROB_THRESHOLD == 0.5


def test_text_shows_both_numbers_and_why_when_inconclusive():
    v = verdict(0.019, 0.70, prior_odds=1.0)
    assert v.headline == "inconclusive (p = 0.019, P(calibrated) = 0.700, prior odds 1)"
    assert v.reason == "the test rejects calibration at 0.05 but the Bayes factor favours calibration"
    assert v.text == f"{v.headline}: {v.reason}" and str(v) == v.text
    v = verdict(0.6, 0.2)
    assert v.reason == ("the test does not reject calibration at 0.05 but the Bayes factor "
                        "favours miscalibration")
    # agreeing answers: the headline only; the resampling floor 1/(B + 1) is shown as such
    v = verdict(1 / 1001, 2e-7, num_resamples=1000, prior_odds=1)
    assert v.text == "miscalibrated (p <= 0.001, P(calibrated) < 0.001, prior odds 1)"
    assert verdict(0.288, 0.9996).text == "consistent with calibration (p = 0.288, P(calibrated) > 0.999)"
    d = verdict(0.3, 0.8, prior_odds=0.5).to_dict()
    assert d == {"verdict": "consistent with calibration", "calibrated": True, "p_value": 0.3,
                 "prob_calibrated": 0.8, "level": 0.05, "prob_threshold": 0.5, "prior_odds": 0.5,
                 "text": "consistent with calibration (p = 0.300, P(calibrated) = 0.800, prior odds 0.5)"}
    assert isinstance(verdict(0.3, 0.8), Verdict)


@pytest.mark.parametrize(
    "args,message",
    [
        ((math.nan, 0.5), "p_value must lie in [0, 1], got nan"),
        ((-0.1, 0.5), "p_value must lie in [0, 1]"),
        ((0.5, 1.2), "prob_calibrated must lie in [0, 1], got 1.2"),
        ((0.5, math.nan), "prob_calibrated must lie in [0, 1]"),
        (("high", 0.5), "p_value must be a number, got 'high'"),
        ((0.5, 0.5, 0.0), "level must lie in (0, 1), got 0.0"),
        ((0.5, 0.5, 1.0), "level must lie in (0, 1)"),
    ],
)
def test_bad_numbers_are_refused_by_name(args, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]")):
        verdict(*args)
    with pytest.raises(ValueError, match="prior_odds must be a positive number"):
        verdict(0.5, 0.5, prior_odds=0.0)


def test_calibration_test_result_has_the_verdict_of_its_own_numbers(rng):
    p = rng.uniform(size=400)
    y = rng.uniform(size=400) < p**2  # strongly miscalibrated
    t = bece.calibration_test(y, p, num_resamples=200, num_samples=500, seed=1)
    v = t.verdict()
    assert (v.p_value, v.prob_calibrated, v.prior_odds, v.num_resamples) == (
        t.p_value, t.prob_calibrated, 1.0, 200)
    assert v.label == _table(t.p_value, t.prob_calibrated, 0.05) == "miscalibrated"
    assert t.verdict(0.5).level == 0.5
    assert str(t).splitlines()[0] == f"  verdict       {v.headline}"


@pytest.mark.parametrize(
    "pa,head",
    [
        (0.998, "A is better calibrated: P(ECE_A < ECE_B) = 0.998"),
        (0.95, "A is better calibrated: P(ECE_A < ECE_B) = 0.950"),  # the boundary is "sure"
        (0.9499, "no clear winner: P(ECE_A < ECE_B) = 0.950"),
        (0.5, "no clear winner: P(ECE_A < ECE_B) = 0.500"),
        (0.3, "no clear winner: P(ECE_B < ECE_A) = 0.700"),
        (0.05, "B is better calibrated: P(ECE_B < ECE_A) = 0.950"),
        (0.0, "B is better calibrated: P(ECE_B < ECE_A) > 0.999"),
    ],
)
def test_comparison_verdict(pa, head):
    text = comparison_verdict(pa, (-0.12, 0.0301))
    assert text == f"{head}, ECE_A - ECE_B in [-0.1200, +0.0301] (90%)"
    with pytest.raises(ValueError, match="prob_a_better must lie in"):
        comparison_verdict(1.5, (0.0, 0.1))
