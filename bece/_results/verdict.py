r"""Is it calibrated? One stated rule over the calibration test's two answers.

:func:`bece.calibration_test` (and
:func:`bece.regression.pit_calibration_test`) answer the question two ways,
and they can disagree:

* the **p-value** (consistency resampling) measures evidence against
  *exact* calibration at this n: under perfect calibration it is uniform,
  so p < 0.05 happens 5% of the time. With large n it detects a
  miscalibration too small to matter; with small n it misses a large one;
* the **Bayes factor** :math:`B_{01}` is how much more probable the data
  are under exact calibration, :math:`P(y = 1 \mid p) = p`, than under the
  smooth calibration-curve model: it weighs *how well* each hypothesis
  explains the data, so a small, noisy deviation that the p-value flags can
  still be explained better by "calibrated" than by the smooth model's
  spread of curves (Lindley's paradox), and the reverse. It needs no prior
  odds; the posterior probability of exact calibration, **P(calibrated)**,
  is :math:`B_{01}` times the prior odds, as odds (the results print it
  with the prior odds it assumes, 0.02 by default).

:func:`verdict` reads both:

=============================  ======================  ======================
                               :math:`B_{01} \ge 1`    :math:`B_{01} < 1`
=============================  ======================  ======================
p-value >= level (0.05)        consistent with         inconclusive
                               calibration
p-value < level                inconclusive            miscalibrated
=============================  ======================  ======================

"consistent with calibration" is not a proof of calibration (an ECE
interval says how far from it the model may be); "inconclusive" says the
two answers disagree, and which way each points. A Bayes factor between
1/3 and 3 is called indecisive, never said to favour either side
(Jeffreys' "barely worth mentioning"; Kass & Raftery 1995).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .html import HTMLDisplay
from .text import format_prob

__all__ = [
    "BAYES_FACTOR_THRESHOLD",
    "INDECISIVE",
    "MEANING",
    "VERDICTS",
    "Verdict",
    "comparison_verdict",
    "format_bayes_factor",
    "prob_text",
    "rule_lines",
    "verdict",
]

#: The Bayes factor :math:`B_{01}` at or above which its answer is
#: "calibrated" (even odds after the data, at even prior odds).
BAYES_FACTOR_THRESHOLD = 1.0
#: A Bayes factor within [1/INDECISIVE, INDECISIVE] is called indecisive.
INDECISIVE = 3.0

#: What the two numbers mean, in words (``bece test`` and ``bece report --help``).
MEANING = (
    "p-value: evidence against exact calibration at this n (consistency resampling of the "
    "plug-in ECE; on a calibrated model p < 0.05 one time in 20). B01: the Bayes factor of "
    "exact calibration, P(y = 1 | p) = p, against the smooth calibration-curve model (above 1 "
    "the data favour calibration; between 1/3 and 3 they say little). P(calibrated): the "
    "posterior probability of exact calibration, B01 times the stated prior odds, as odds. The "
    "p-value and B01 can disagree: with large n the test detects a miscalibration too small to "
    "matter in practice, while the Bayes factor may still prefer 'calibrated' to the smooth "
    "model's spread of curves; with small n neither has much to go on (the ECE interval says "
    "how far from calibrated the model may be)."
)

#: The three answers of :func:`verdict`.
VERDICTS = ("consistent with calibration", "inconclusive", "miscalibrated")


def _p_text(p: float, num_resamples: int | None) -> str:
    """``p = 0.019``, or ``p <= 0.001`` at the resampling test's floor 1/(B + 1)."""
    if num_resamples is not None and p <= 1.0 / (num_resamples + 1) * (1 + 1e-12):
        return f"p <= {p:.2g}"
    return f"p = {p:.2g}" if p < 0.01 else f"p = {p:.3f}"


def prob_text(prob: float, draws: int | None = None) -> str:
    """`` = 0.700``, or `` > 0.999`` / `` < 0.001`` near the ends (or, with
    ``draws``, beyond what that many draws can tell: 1/draws), to follow a
    name: ``P(ECE_A < ECE_B) > 0.999``."""
    shown = format_prob(prob, draws)
    return f" {shown}" if shown[0] in "<>" else f" = {shown}"


def format_bayes_factor(log_bayes_factor: float) -> str:
    """A Bayes factor from its log, for people: three significant digits
    between 0.01 and 1,000 (``0.487``, ``49.2``), else a power of ten
    (``2.5e+03``, ``3e-120``, ``1e+400``: beyond float64, from the log)."""
    log10 = log_bayes_factor / math.log(10.0)
    if -2.0 <= log10 < 3.0:
        return f"{10.0 ** log10:.3g}"
    exponent = math.floor(log10)
    mantissa = 10.0 ** (log10 - exponent)
    if round(mantissa, 1) >= 10.0:
        mantissa, exponent = 1.0, exponent + 1
    return f"{mantissa:.1f}e{exponent:+03d}".replace(".0e", "e")


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
class Verdict(HTMLDisplay):
    """The answer of :func:`verdict` and the numbers behind it.

    Attributes
    ----------
    label : str
        ``"consistent with calibration"``, ``"miscalibrated"`` or
        ``"inconclusive"``.
    p_value : float
        The calibration test's p-value.
    log_bayes_factor : float
        :math:`\\log B_{01}`, the log Bayes factor of exact calibration.
    level : float
        The p-value's threshold (the test's false-alarm rate).
    num_resamples : int or None
        Resamples behind the p-value, when known (its floor is 1/(B + 1)).
    """

    label: str
    p_value: float
    log_bayes_factor: float
    level: float = 0.05
    num_resamples: int | None = None

    @property
    def calibrated(self) -> bool | None:
        """True for "consistent with calibration", False for
        "miscalibrated", None for "inconclusive"."""
        return {VERDICTS[0]: True, VERDICTS[2]: False}.get(self.label)

    @property
    def bayes_factor(self) -> float:
        """:math:`B_{01}` (inf or 0 beyond float64's range)."""
        return math.exp(self.log_bayes_factor) if self.log_bayes_factor < 709.0 else math.inf

    @property
    def numbers(self) -> str:
        """``p = 0.42, B01 = 9.3``: both numbers, as shown."""
        return f"{_p_text(self.p_value, self.num_resamples)}, B01 = " \
               f"{format_bayes_factor(self.log_bayes_factor)}"

    @property
    def reason(self) -> str:
        """Which way each answer points, against its threshold (why the
        answers agree, or how they disagree); a Bayes factor between 1/3 and
        3 is indecisive."""
        rejects = self.p_value < self.level
        test = (f"the test rejects calibration at {self.level:g}" if rejects
                else f"the test does not reject calibration at {self.level:g}")
        log_b, edge = self.log_bayes_factor, math.log(INDECISIVE)
        if abs(log_b) <= edge:
            return f"{test} and the Bayes factor is indecisive (B01 between 1/3 and 3)"
        favours = log_b > 0
        bayes = ("the Bayes factor favours calibration" if favours
                 else "the Bayes factor favours miscalibration")
        return f"{test}{' but ' if rejects == favours else ' and '}{bayes}"

    @property
    def headline(self) -> str:
        """The answer and both numbers: ``miscalibrated (p <= 0.001,
        B01 = 3e-05)``."""
        return f"{self.label} ({self.numbers})"

    @property
    def text(self) -> str:
        """:attr:`headline`, and for "inconclusive" how the answers disagree."""
        return self.headline + (f": {self.reason}" if self.label == VERDICTS[1] else "")

    def __str__(self) -> str:
        return self.text

    def to_dict(self) -> dict[str, Any]:
        """The verdict as a JSON-ready dict: ``verdict`` (the label),
        ``calibrated`` (true, false or null), ``p_value``, ``bayes_factor``
        (None beyond float64's range), ``log_bayes_factor``, ``level``,
        ``bayes_factor_threshold``, ``text``."""
        bf = self.bayes_factor
        return {"verdict": self.label, "calibrated": self.calibrated, "p_value": self.p_value,
                "bayes_factor": bf if 0.0 < bf < math.inf else None,
                "log_bayes_factor": self.log_bayes_factor, "level": self.level,
                "bayes_factor_threshold": BAYES_FACTOR_THRESHOLD, "text": self.text}


def rule_lines(level: float) -> list[str]:
    """The rule of :func:`verdict` at ``level``, as the tests' texts print it."""
    return [f"  rule: consistent with calibration when p >= {level:g} and B01 >= 1;",
            f"        miscalibrated when p < {level:g} and B01 < 1; else inconclusive"]


def verdict(p_value: float, log_bayes_factor: float, level: float = 0.05, *,
            num_resamples: int | None = None) -> Verdict:
    """Is it calibrated? The calibration test's two answers read by one rule.

    Parameters
    ----------
    p_value : float in [0, 1]
        The calibration test's p-value (evidence against exact calibration).
    log_bayes_factor : float
        :math:`\\log B_{01}`, the log Bayes factor of exact calibration
        against the smooth calibration-curve model (no prior odds needed).
    level : float in (0, 1), default 0.05
        The p-value's threshold.
    num_resamples : int, optional
        The resamples behind the p-value; a p-value at the floor
        1/(B + 1) is shown as ``p <= ...``.

    Returns
    -------
    Verdict
        ``label``:

        * ``"consistent with calibration"`` when ``p_value >= level`` and
          :math:`B_{01} \\ge 1`;
        * ``"miscalibrated"`` when ``p_value < level`` and :math:`B_{01} < 1`;
        * ``"inconclusive"`` otherwise (the two answers disagree).

    Raises
    ------
    ValueError
        A number that is NaN or out of range.

    Examples
    --------
    >>> import math
    >>> from bece._results.verdict import verdict
    >>> verdict(0.42, math.log(9.3)).label
    'consistent with calibration'
    >>> verdict(0.001, math.log(0.02)).text
    'miscalibrated (p = 0.001, B01 = 0.02)'
    >>> v = verdict(0.019, math.log(50))
    >>> v.label, v.calibrated
    ('inconclusive', None)
    >>> v.reason
    'the test rejects calibration at 0.05 but the Bayes factor favours calibration'
    >>> print(verdict(0.16, math.log(0.95)))  # doctest: +NORMALIZE_WHITESPACE
    inconclusive (p = 0.160, B01 = 0.95): the test does not reject calibration at 0.05 and
    the Bayes factor is indecisive (B01 between 1/3 and 3)
    """
    p = _check_unit(p_value, "p_value")
    try:
        log_b = float(log_bayes_factor)
    except (TypeError, ValueError):
        raise ValueError(f"log_bayes_factor must be a number, got {log_bayes_factor!r}") from None
    if math.isnan(log_b):
        raise ValueError("log_bayes_factor must be a number, got NaN")
    level = _check_unit(level, "level", open_=True)
    rejects, favours = p < level, log_b >= math.log(BAYES_FACTOR_THRESHOLD)
    label = VERDICTS[1] if rejects == favours else VERDICTS[2] if rejects else VERDICTS[0]
    return Verdict(label, p, log_b, level, num_resamples)


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
    return (f"{head}: P(ECE_{lead} < ECE_{other}){prob_text(p_lead)}, "
            f"ECE_{a} - ECE_{b} in [{lo:+.4f}, {hi:+.4f}] ({prob:.0%})")
