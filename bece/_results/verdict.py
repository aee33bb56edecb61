r"""Is it calibrated? One stated rule over the calibration test's two answers.

:func:`bece.calibration_test` answers the question two ways, and they can
disagree:

* the **p-value** (consistency resampling) measures evidence against
  *exact* calibration at this n: under perfect calibration it is uniform,
  so p < 0.05 happens 5% of the time. With large n it detects a
  miscalibration too small to matter; with small n it misses a large one;
* **P(calibrated)** is the posterior probability of the identity curve
  :math:`P(y = 1 \mid p) = p` against the smooth calibration-curve model,
  with the stated prior odds (default 1): it weighs *how well* each
  hypothesis explains the data, so a small, noisy deviation that the
  p-value flags can still be explained better by "calibrated" than by the
  smooth model's spread of curves (Lindley's paradox), and the reverse.

:func:`verdict` reads both:

=============================  ======================  ======================
                               P(calibrated) >= 0.5    P(calibrated) < 0.5
=============================  ======================  ======================
p-value >= level (0.05)        consistent with         inconclusive
                               calibration
p-value < level                inconclusive            miscalibrated
=============================  ======================  ======================

"consistent with calibration" is not a proof of calibration (an ECE
interval says how far from it the model may be); "inconclusive" says the
two answers disagree, and which way each points.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = [
    "MEANING",
    "PROB_THRESHOLD",
    "VERDICTS",
    "Verdict",
    "comparison_verdict",
    "verdict",
]

#: The posterior probability of calibration at or above which the Bayes
#: factor's answer is "calibrated" (even odds after the data).
PROB_THRESHOLD = 0.5

#: What the two numbers mean, in words (``bece test`` and ``bece report --help``).
MEANING = (
    "p-value: evidence against exact calibration at this n (consistency resampling of the "
    "plug-in ECE; on a calibrated model p < 0.05 one time in 20). P(calibrated): the posterior "
    "probability that the calibration curve is the identity, P(y = 1 | p) = p, against the "
    "smooth calibration-curve model, at the stated prior odds (default 1). They can disagree: "
    "with large n the test detects a miscalibration too small to matter in practice, while the "
    "Bayes factor may still prefer 'calibrated' to the smooth model's spread of curves; with "
    "small n neither has much to go on (the ECE interval says how far from calibrated the model "
    "may be)."
)

#: The three answers of :func:`verdict`.
VERDICTS = ("consistent with calibration", "inconclusive", "miscalibrated")


def _p_text(p: float, num_resamples: int | None) -> str:
    """``p = 0.019``, or ``p <= 0.001`` at the resampling test's floor 1/(B + 1)."""
    if num_resamples is not None and p <= 1.0 / (num_resamples + 1) * (1 + 1e-12):
        return f"p <= {p:.2g}"
    return f"p = {p:.2g}" if p < 0.01 else f"p = {p:.3f}"


def _prob_text(prob: float) -> str:
    """`` = 0.700``, or `` > 0.999`` / `` < 0.001`` near the ends (to follow a name)."""
    if prob > 0.999:
        return " > 0.999"
    if prob < 0.001:
        return " < 0.001"
    return f" = {prob:.3f}"


def _check_unit(value: Any, name: str, *, open_: bool = False) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    ok = (0.0 < x < 1.0) if open_ else (0.0 <= x <= 1.0)
    if not ok:  # NaN fails too
        where = "(0, 1)" if open_ else "[0, 1]"
        raise ValueError(f"{name} must lie in {where}, got {value!r}")
    return x


@dataclass(frozen=True)
class Verdict:
    """The answer of :func:`verdict` and the numbers behind it.

    Attributes
    ----------
    label : str
        ``"consistent with calibration"``, ``"miscalibrated"`` or
        ``"inconclusive"``.
    p_value : float
        The calibration test's p-value.
    prob_calibrated : float
        Posterior probability of exact calibration.
    level : float
        The p-value's threshold (the test's false-alarm rate).
    prior_odds : float or None
        The prior odds behind ``prob_calibrated``, when known.
    num_resamples : int or None
        Resamples behind the p-value, when known (its floor is 1/(B + 1)).
    """

    label: str
    p_value: float
    prob_calibrated: float
    level: float = 0.05
    prior_odds: float | None = None
    num_resamples: int | None = None

    @property
    def calibrated(self) -> bool | None:
        """True for "consistent with calibration", False for
        "miscalibrated", None for "inconclusive"."""
        return {VERDICTS[0]: True, VERDICTS[2]: False}.get(self.label)

    @property
    def numbers(self) -> str:
        """``p = 0.42, P(calibrated) = 0.930``: both numbers, as shown."""
        return (f"{_p_text(self.p_value, self.num_resamples)}, "
                f"P(calibrated){_prob_text(self.prob_calibrated)}")

    @property
    def reason(self) -> str:
        """Which way each answer points, against its threshold (why the
        answers agree, or how they disagree)."""
        rejects, favours = self.p_value < self.level, self.prob_calibrated >= PROB_THRESHOLD
        test = (f"the test rejects calibration at {self.level:g}" if rejects
                else f"the test does not reject calibration at {self.level:g}")
        bayes = ("the Bayes factor favours calibration" if favours
                 else "the Bayes factor favours miscalibration")
        return f"{test}{' but ' if rejects == favours else ' and '}{bayes}"

    @property
    def headline(self) -> str:
        """The answer and both numbers: ``miscalibrated (p <= 0.001,
        P(calibrated) = 0.001, prior odds 1)``."""
        odds = "" if self.prior_odds is None else f", prior odds {self.prior_odds:g}"
        return f"{self.label} ({self.numbers}{odds})"

    @property
    def text(self) -> str:
        """:attr:`headline`, and for "inconclusive" how the answers disagree."""
        return self.headline + (f": {self.reason}" if self.label == VERDICTS[1] else "")

    def __str__(self) -> str:
        return self.text

    def to_dict(self) -> dict[str, Any]:
        """The verdict as a JSON-ready dict: ``verdict`` (the label),
        ``calibrated`` (true, false or null), ``p_value``,
        ``prob_calibrated``, ``level``, ``prob_threshold``, ``prior_odds``,
        ``text``."""
        return {"verdict": self.label, "calibrated": self.calibrated, "p_value": self.p_value,
                "prob_calibrated": self.prob_calibrated, "level": self.level,
                "prob_threshold": PROB_THRESHOLD, "prior_odds": self.prior_odds,
                "text": self.text}


def verdict(p_value: float, prob_calibrated: float, level: float = 0.05, *,
            prior_odds: float | None = None, num_resamples: int | None = None) -> Verdict:
    """Is it calibrated? The calibration test's two answers read by one rule.

    Parameters
    ----------
    p_value : float in [0, 1]
        The calibration test's p-value (evidence against exact calibration).
    prob_calibrated : float in [0, 1]
        Posterior probability of exact calibration (the Bayes factor with
        its prior odds).
    level : float in (0, 1), default 0.05
        The p-value's threshold.
    prior_odds : float, optional
        The prior odds behind ``prob_calibrated``, shown in the text.
    num_resamples : int, optional
        The resamples behind the p-value; a p-value at the floor
        1/(B + 1) is shown as ``p <= ...``.

    Returns
    -------
    Verdict
        ``label``:

        * ``"consistent with calibration"`` when ``p_value >= level`` and
          ``prob_calibrated >= 0.5``;
        * ``"miscalibrated"`` when ``p_value < level`` and
          ``prob_calibrated < 0.5``;
        * ``"inconclusive"`` otherwise (the two answers disagree).

    Raises
    ------
    ValueError
        A number that is NaN or out of range.

    Examples
    --------
    >>> from bece._results.verdict import verdict
    >>> verdict(0.42, 0.93).label
    'consistent with calibration'
    >>> verdict(0.001, 0.18).label
    'miscalibrated'
    >>> v = verdict(0.019, 0.70, prior_odds=1)
    >>> v.label, v.calibrated
    ('inconclusive', None)
    >>> v.reason
    'the test rejects calibration at 0.05 but the Bayes factor favours calibration'
    """
    p = _check_unit(p_value, "p_value")
    prob = _check_unit(prob_calibrated, "prob_calibrated")
    level = _check_unit(level, "level", open_=True)
    if prior_odds is not None and not (math.isfinite(prior_odds) and prior_odds > 0):
        raise ValueError(f"prior_odds must be a positive number, got {prior_odds!r}")
    rejects, favours = p < level, prob >= PROB_THRESHOLD
    label = VERDICTS[1] if rejects == favours else VERDICTS[2] if rejects else VERDICTS[0]
    return Verdict(label, p, prob, level, None if prior_odds is None else float(prior_odds),
                   num_resamples)


def comparison_verdict(prob_a_better: float, interval: tuple[float, float], *,
                       names: tuple[str, str] = ("A", "B"), prob: float = 0.9,
                       sure: float = 0.95) -> str:
    """One line on which of two models is better calibrated, and how sure.

    Parameters
    ----------
    prob_a_better : float in [0, 1]
        :math:`P(\\mathrm{ECE}_A < \\mathrm{ECE}_B)` (:attr:`bece.Comparison.prob_a_better`).
    interval : (float, float)
        The ``prob`` credible interval of :math:`\\mathrm{ECE}_A - \\mathrm{ECE}_B`.
    names : (str, str), default ("A", "B")
    prob : float, default 0.9
        The interval's mass, for the text.
    sure : float in (0.5, 1), default 0.95
        The posterior probability from which the leader is called "better
        calibrated"; below it, "no clear winner".

    Returns
    -------
    str
        E.g. ``A is better calibrated: P(ECE_A < ECE_B) = 0.998, ECE_A -
        ECE_B in [-0.1201, -0.0726] (90%)``.

    Examples
    --------
    >>> from bece._results.verdict import comparison_verdict
    >>> comparison_verdict(0.02, (0.01, 0.05))
    'B is better calibrated: P(ECE_B < ECE_A) = 0.980, ECE_A - ECE_B in [+0.0100, +0.0500] (90%)'
    >>> comparison_verdict(0.896, (-0.0125, 0.0019))
    'no clear winner: P(ECE_A < ECE_B) = 0.896, ECE_A - ECE_B in [-0.0125, +0.0019] (90%)'
    """
    pa = _check_unit(prob_a_better, "prob_a_better")
    sure = _check_unit(sure, "sure", open_=True)
    lo, hi = (float(v) for v in interval)
    a, b = names
    lead, other, p_lead = (a, b, pa) if pa >= 0.5 else (b, a, 1.0 - pa)
    head = f"{lead} is better calibrated" if p_lead >= sure else "no clear winner"
    return (f"{head}: P(ECE_{lead} < ECE_{other}){_prob_text(p_lead)}, "
            f"ECE_{a} - ECE_{b} in [{lo:+.4f}, {hi:+.4f}] ({prob:.0%})")
