"""The verdict rule (bece._results.verdict): its three answers, its boundaries, its checks."""

from __future__ import annotations

import math

import numpy as np
import pytest

import bece
from bece._results import Verdict, comparison_verdict, verdict
from bece._results.verdict import BAYES_FACTOR_THRESHOLD, VERDICTS, format_bayes_factor


def _table(p: float, bf: float, level: float) -> str:
    """The rule as the README's 2 x 2 table, written independently of the code."""
    table = {(True, True): "consistent with calibration", (True, False): "inconclusive",
             (False, True): "inconclusive", (False, False): "miscalibrated"}
    return table[(not p < level, not bf < 1.0)]


@pytest.mark.parametrize(
    "p,bf,label",
    [
        (0.42, 9.3, "consistent with calibration"),
        (0.001, 0.18, "miscalibrated"),
        (0.019, 2.3, "inconclusive"),  # n = 5,000 in the newcomer's report: the two disagree
        (0.60, 0.2, "inconclusive"),  # the other way round
        # boundaries: p = level does not reject, B01 = 1 favours calibration
        (0.05, 1.0, "consistent with calibration"),
        (0.05, 0.9999, "inconclusive"),
        (0.0499, 1.0, "inconclusive"),
        (0.0499, 0.9999, "miscalibrated"),
        (1.0, 1e300, "consistent with calibration"),
        (0.0, 1e-300, "miscalibrated"),
    ],
)
def test_rule_at_hand_cases_and_boundaries(p, bf, label):
    v = verdict(p, math.log(bf))
    assert v.label == label and v.label == _table(p, bf, 0.05)
    assert v.calibrated == {"consistent with calibration": True, "miscalibrated": False}.get(label)
    assert (v.p_value, v.log_bayes_factor, v.level) == (p, math.log(bf), 0.05)
    assert v.bayes_factor == pytest.approx(bf, rel=1e-12)


def test_rule_on_a_grid_matches_the_table_and_the_level_moves_the_line():
    ps = np.r_[0.0, 0.009, 0.01, 0.011, 0.049, 0.05, 0.051, 0.2, 1.0]
    bfs = np.r_[1e-9, 0.3, 0.9999, 1.0, 1.0001, 1e9]
    for level in (0.01, 0.05, 0.1):
        for p in ps:
            for bf in bfs:
                assert verdict(p, math.log(bf), level).label == _table(p, bf, level)
    assert verdict(0.03, math.log(9.0), 0.05).label == "inconclusive"
    assert verdict(0.03, math.log(9.0), 0.01).label == "consistent with calibration"
    assert set(VERDICTS) == {"consistent with calibration", "inconclusive", "miscalibrated"}
    assert BAYES_FACTOR_THRESHOLD == 1.0


def test_text_shows_both_numbers_and_why_when_inconclusive():
    v = verdict(0.019, math.log(2.33))
    assert v.headline == "inconclusive (p = 0.019, B01 = 2.33)"
    # a factor between 1/3 and 3 is indecisive: it never "favours" a side
    assert v.reason == ("the test rejects calibration at 0.05 and the Bayes factor is indecisive "
                        "(B01 between 1/3 and 3)")
    assert v.text == f"{v.headline}: {v.reason}" and str(v) == v.text
    v = verdict(0.019, math.log(40.0))
    assert v.reason == "the test rejects calibration at 0.05 but the Bayes factor favours calibration"
    v = verdict(0.6, math.log(0.2))
    assert v.reason == ("the test does not reject calibration at 0.05 but the Bayes factor "
                        "favours miscalibration")
    # the newcomer's case: P = 0.487 at even odds is B01 = 0.95, a coin toss
    v = verdict(0.160, math.log(0.487 / 0.513))
    assert v.text == ("inconclusive (p = 0.160, B01 = 0.949): the test does not reject calibration "
                      "at 0.05 and the Bayes factor is indecisive (B01 between 1/3 and 3)")
    assert "favours" not in v.text
    # agreeing answers: the headline only; the resampling floor 1/(B + 1) is shown as such
    v = verdict(1 / 1001, math.log(2e-7), num_resamples=1000)
    assert v.text == "miscalibrated (p <= 0.001, B01 = 2e-07)"
    assert verdict(0.288, math.log(2460.0)).text == "consistent with calibration (p = 0.288, B01 = 2.5e+03)"
    d = verdict(0.3, math.log(4.0)).to_dict()
    assert d == {"verdict": "consistent with calibration", "calibrated": True, "p_value": 0.3,
                 "bayes_factor": pytest.approx(4.0, rel=1e-12), "log_bayes_factor": math.log(4.0),
                 "level": 0.05, "bayes_factor_threshold": 1.0,
                 "text": "consistent with calibration (p = 0.300, B01 = 4)"}
    assert verdict(0.3, 2000.0).to_dict()["bayes_factor"] is None  # beyond float64
    assert isinstance(verdict(0.3, 0.8), Verdict)


@pytest.mark.parametrize(
    "log_b,text",
    [(math.log(0.487), "0.487"), (math.log(49.2), "49.2"), (math.log(0.01), "0.01"),
     (math.log(999.4), "999"), (math.log(1e-3), "1e-03"), (math.log(2.5e-7), "2.5e-07"),
     (math.log(9.96e5), "1e+06"), (1000.0, "1.97e+434".replace("1.97", "2")),
     (-1000.0, "5.1e-435")],
)
def test_bayes_factors_are_printed_from_their_logs(log_b, text):
    """Three significant digits between 0.01 and 1,000; a power of ten
    outside, from the log, so factors beyond float64 print too
    (e^1000 = 1.97e434; e^-1000 = 5.08e-435)."""
    assert format_bayes_factor(log_b) == text


@pytest.mark.parametrize(
    "args,message",
    [
        ((math.nan, 0.5), "p_value must lie in [0, 1], got nan"),
        ((-0.1, 0.5), "p_value must lie in [0, 1]"),
        ((0.5, math.nan), "log_bayes_factor must be a number, got NaN"),
        ((0.5, "big"), "log_bayes_factor must be a number, got 'big'"),
        (("high", 0.5), "p_value must be a number, got 'high'"),
        ((0.5, 0.5, 0.0), "level must lie in (0, 1), got 0.0"),
        ((0.5, 0.5, 1.0), "level must lie in (0, 1)"),
    ],
)
def test_bad_numbers_are_refused_by_name(args, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]")):
        verdict(*args)


def test_calibration_test_result_has_the_verdict_of_its_own_numbers(rng):
    """The test's verdict reads its p-value and Bayes factor; its
    P(calibrated) is at the prior odds of the averaging (0.02), the same
    number bayesian_ece reports (its weight of ECE 0)."""
    p = rng.uniform(size=400)
    y = rng.uniform(size=400) < p**2  # strongly miscalibrated
    t = bece.calibration_test(y, p, num_resamples=200, num_samples=500, seed=1)
    v = t.verdict()
    assert (v.p_value, v.log_bayes_factor, v.num_resamples) == (t.p_value, t.log_bayes_factor, 200)
    assert v.label == _table(t.p_value, t.bayes_factor, 0.05) == "miscalibrated"
    assert t.verdict(0.5).level == 0.5
    assert str(t).splitlines()[0] == f"  verdict       {v.headline}"
    assert t.prior_odds == 0.02
    odds = t.bayes_factor * 0.02
    assert t.prob_calibrated == pytest.approx(odds / (1 + odds), rel=1e-9)


def test_one_probability_of_exact_calibration_by_default(rng):
    """calibration_test and bayesian_ece name one quantity P(calibrated): at
    the same default prior odds, from the same smooth fit, the test's
    probability equals the posterior's weight of exact calibration, up to
    the importance-sampling error of the two marginal likelihoods (2,000 and
    10,000 draws; their log Bayes factors differ by 0.01 here)."""
    p = rng.uniform(size=600)
    y = (rng.uniform(size=600) < p).astype(int)
    t = bece.calibration_test(y, p, seed=1)
    r = bece.bayesian_ece(y, p, seed=1)
    assert t.prior_odds == r.prior_odds == 0.02
    assert abs(t.log_bayes_factor - r.params.log_bayes_factor) < 0.05
    odds = np.exp(r.params.log_bayes_factor) * r.prior_odds
    assert r.prob_calibrated == pytest.approx(odds / (1 + odds), rel=1e-9)
    assert t.prob_calibrated == pytest.approx(r.prob_calibrated, rel=0.05)
    rows = [line for line in str(t).splitlines() if line.startswith("  P(calibrated)")]
    assert len(rows) == 1 and rows[0].endswith("prior odds 0.02")


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
