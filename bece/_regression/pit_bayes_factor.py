r"""Is a regression forecaster calibrated? A test of PIT uniformity and a Bayes factor.

A forecaster is calibrated when its PIT :math:`u = F(y)` is uniform on
[0, 1]. :func:`pit_calibration_test` answers two ways.

**p-value** (default ``method="anderson-darling"``). The Anderson--Darling
statistic of uniformity,

.. math::

    A^2 = n \int_0^1 \frac{(\hat F(u) - u)^2}{u (1 - u)}\, du ,

:math:`\hat F` the empirical CDF of the PIT, evaluated on the grid of the
PIT histogram (the discrete form of Choulakian, Lockhart & Stephens 1994:
:math:`A^2_G = \frac{n}{G} \sum_{k=1}^{G-1} (\hat F(k/G) - k/G)^2 / (\frac kG
(1 - \frac kG))`, G = 1000 cells), with its p-value from ``num_resamples``
histograms drawn under calibration, where the cell counts are exactly
Multinomial(n, 1/G):

.. math::

    \text{p-value} = \frac{1 + \#\{b : A^{2*}_b \ge A^2_G\}}{B + 1},

valid in finite samples (under calibration the B + 1 statistics are
exchangeable). Why this one: the miscalibrations met in practice -- a
predictive sd too small or too large -- move PIT mass into or out of the
tails, which the weight :math:`1/(u(1-u))` of Anderson--Darling emphasises;
against them it is more powerful than Kolmogorov--Smirnov and
Cramér--von Mises (``benchmarks/regression_study.py`` measures all three),
as Stephens (1974) found for other alternatives. On the grid it needs only
the histogram, so it gives the same answer from PIT values and from
statistics summed over chunks. ``method="cramer-von-mises"`` and
``"kolmogorov-smirnov"`` run ``scipy.stats.cramervonmises`` and
``scipy.stats.kstest`` on PIT values.

**Bayes factor** of calibration (the uniform PIT, :math:`H_0`) against the
smooth model :math:`H_1` of :mod:`bece._regression.smooth`, and the posterior
probability of calibration with prior odds O (default 0.1),
:math:`B_{01}O/(1 + B_{01}O)`: the same numbers as
:func:`~bece.regression.bayesian_calibration_error` reports. A Bayes factor
depends on the alternative's prior; the defaults describe the
miscalibrations met in practice (module :mod:`bece._regression.smooth`).
For quantile and sample forecasts pass ``forecast_levels=`` (the quantile
levels) or ``forecast_draws=`` (the number of draws), as to
:func:`~bece.regression.bayesian_calibration_error`: the randomised PIT is
uniform between the forecast's levels whatever the forecaster, so the
smooth model is fitted to the counts between them
(:mod:`bece._regression.cells`); without them it is fitted to where the
values fall within those cells too, and its Bayes factor differs from the
one :func:`~bece.regression.bayesian_calibration_error` reports with them.

What the test needs.

* **Held-out forecasts.** On the data a model was fitted to, its PIT is not
  uniform even when the model is correct (in-sample residuals are too
  small), and the test rejects a correct model. Use a test split.
* **A continuous PIT.** The PIT of a sample forecast (the empirical CDF of S
  draws) takes the values k/S, and a quantile forecast's PIT is 0 or 1 in
  the tails: such discrete PIT values are not uniform under calibration,
  and the test rejects calibrated forecasters once n is large. Use the
  randomised PIT, ``pit(..., randomize=True, seed=...)``, which is exactly
  uniform under calibration; PIT values with many ties raise a
  :class:`~bece.regression.DiscretePITWarning`.
* **Independent draws.** The randomised PIT of a sample forecast is uniform
  when the S draws and the target are exchangeable. MCMC draws are
  autocorrelated: their effective sample size is below S, the rank of the
  target among them is more often extreme, and the PIT of a correct
  forecaster piles up near 0 and 1. :func:`~bece.regression.pit` warns
  (with the effective sample size) when the draws it is given look
  autocorrelated; thin them to about one draw per S/ESS. Measured on a
  calibrated forecaster with S = 1000 AR(1) draws (autocorrelation 0.9,
  ESS about 53), randomised PIT: the test rejected at level 0.05 in 0.075
  of 200 data sets at n = 1000 and in 0.43 of 100 at n = 10^4 (independent
  draws: 0.055 and 0.07); every 38th draw: 0.05 and 0.06.

References
----------
Anderson & Darling (1954), "A test of goodness of fit", JASA 49.
Stephens (1974), "EDF statistics for goodness of fit and some
comparisons", JASA 69. Choulakian, Lockhart & Stephens (1994),
"Cramér--von Mises statistics for discrete distributions", Canadian
Journal of Statistics 22.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from .._base.checks import check_scale, positive_int
from .._base.laplace import single_threaded_blas
from .._base.memory import check_allocation
from .._base.random import as_generator
from .._base.typing import Seed
from .._results.html import HTMLDisplay, histogram_svg
from .bayesian import smooth_prior
from .cells import forecast_cells
from .histogram import PITHistogram, as_histogram
from .smooth import PRIOR_ODDS, SmoothPITPosterior, fit_pit_model, pit_model_draws

__all__ = [
    "anderson_darling_grid",
    "pit_calibration_test",
    "METHODS",
    "RegressionCalibrationTest",
]

METHODS = ("anderson-darling", "cramer-von-mises", "kolmogorov-smirnov")

#: (resample, cell) counts drawn at once
RESAMPLE_CHUNK = 1 << 22


def anderson_darling_grid(counts: np.ndarray) -> np.ndarray:
    """Anderson--Darling statistic of uniformity on the grid, for histograms ``counts`` (..., G).

    .. math::

        A^2_G = \\frac{n}{G} \\sum_{k=1}^{G-1} \\frac{(\\hat F_k - k/G)^2}{(k/G)(1 - k/G)},
        \\qquad \\hat F_k = \\frac1n \\sum_{i < k} c_i .

    Returns
    -------
    ndarray of shape (...)
    """
    c = np.asarray(counts)
    g = c.shape[-1]
    n = c.sum(axis=-1, keepdims=True).astype(np.float64)
    f_hat = np.cumsum(c[..., :-1], axis=-1) / n
    f = np.arange(1, g) / g
    return (n[..., 0] / g) * np.sum((f_hat - f) ** 2 / (f * (1.0 - f)), axis=-1)


@dataclass(frozen=True, repr=False, eq=False)
class RegressionCalibrationTest(HTMLDisplay):
    """Result of :func:`pit_calibration_test`.

    Attributes
    ----------
    statistic : float
        The test statistic (:math:`A^2_G`, :math:`W^2` or :math:`D`, as ``method``).
    p_value : float
        p-value of calibration (uniform PIT).
    method : str
    n, n_cells : int
        Number of PIT values; cells G of the histogram.
    resampled : ndarray of shape (B,) or None
        ``method="anderson-darling"``: the statistic of each histogram drawn
        under calibration.
    log_bayes_factor : float
        :math:`\\log B_{01}` (calibrated against the smooth model); positive
        favours calibration.
    prior_odds : float
        :math:`P(H_0)/P(H_1)`.
    posterior : SmoothPITPosterior
        The smooth model's fit, whose marginal likelihood gives the Bayes factor.

    Examples
    --------
    >>> import numpy as np
    >>> from bece.regression import pit_calibration_test, pit
    >>> y = np.random.default_rng(0).normal(size=2000)
    >>> t = pit_calibration_test(pit(y, mean=0.0, std=0.7))          # over-confident
    >>> t  # doctest: +ELLIPSIS
    RegressionCalibrationTest(method='anderson-darling', statistic=..., n=2000)
    >>> t.reject(0.05), bool(t.log_bayes_factor < -10), t.resampled.shape
    (True, True, (1000,))
    """

    statistic: float
    p_value: float
    method: str
    n: int
    n_cells: int
    resampled: np.ndarray | None
    log_bayes_factor: float
    prior_odds: float
    posterior: SmoothPITPosterior

    @property
    def bayes_factor(self) -> float:
        """The Bayes factor for calibration,
        :math:`B_{01} = p(\\text{data} \\mid \\text{calibrated}) / p(\\text{data} \\mid \\text{smooth})`."""
        return float(np.exp(self.log_bayes_factor))

    @property
    def prob_calibrated(self) -> float:
        """Posterior probability of calibration, :math:`B_{01}O/(1 + B_{01}O)`."""
        return float(special.expit(self.log_bayes_factor + np.log(self.prior_odds)))

    def reject(self, level: float = 0.05) -> bool:
        """Whether the p-value rejects calibration at ``level``."""
        if isinstance(level, (bool, np.bool_)) or not isinstance(level, (int, float, np.floating)) \
                or not 0.0 < level < 1.0:
            raise ValueError(f"level must be a number in (0, 1), got {level!r}")
        return bool(self.p_value <= level)

    def verdict(self, level: float = 0.05) -> Any:  # bece._results.verdict.Verdict
        """Is it calibrated? The p-value and the Bayes factor read by the rule
        of classifiers (:func:`bece._results.verdict.verdict`): "consistent
        with calibration" when ``p_value >= level`` and :math:`B_{01} \\ge 1`,
        "miscalibrated" when ``p_value < level`` and :math:`B_{01} < 1`,
        "inconclusive" otherwise."""
        from .._results.verdict import verdict

        if isinstance(level, (bool, np.bool_)) or not isinstance(level, (int, float, np.floating)):
            raise ValueError(f"level must be a number in (0, 1), got {level!r}")
        return verdict(self.p_value, self.log_bayes_factor, level,
                       num_resamples=None if self.resampled is None else int(self.resampled.size))

    def _html_diagram(self) -> str | None:
        if self.resampled is None:
            return None
        return histogram_svg(self.resampled, label="statistic resampled under calibration",
                             marks={"observed": self.statistic})

    def to_dict(self, level: float = 0.05) -> dict[str, Any]:
        """Plain Python (JSON): ``method``, ``statistic``, ``p_value``,
        ``num_resamples`` (None without resampling), ``n``, ``n_cells``,
        ``bayes_factor`` (None beyond float64's range), ``log_bayes_factor``,
        ``prior_odds``, ``prob_calibrated``, ``level`` with ``reject``
        (whether the p-value rejects a uniform PIT there) and ``verdict``
        (:meth:`verdict` at ``level``, as a dict)."""
        with np.errstate(over="ignore", under="ignore"):
            bf = float(np.exp(self.log_bayes_factor))
        return {
            "method": self.method, "statistic": self.statistic, "p_value": self.p_value,
            "num_resamples": None if self.resampled is None else int(self.resampled.size),
            "n": self.n, "n_cells": self.n_cells,
            "bayes_factor": bf if 0.0 < bf < float("inf") else None,
            "log_bayes_factor": self.log_bayes_factor, "prior_odds": self.prior_odds,
            "prob_calibrated": self.prob_calibrated, "level": level, "reject": self.reject(level),
            "verdict": self.verdict(level).to_dict(),
        }

    def summary(self, level: float = 0.05) -> Any:  # pandas.DataFrame
        """One row, ``pit_calibration_test``: the numbers of :meth:`to_dict`."""
        from .._results.summaries import numbers_table

        return numbers_table({"pit_calibration_test": self.to_dict(level)})

    def text(self, level: float = 0.05) -> str:
        """The lines a person reads: the verdict at ``level``, each number and
        what it means, and the rule."""
        from .._results.text import format_prob
        from .._results.verdict import format_bayes_factor, rule_lines
        from .report_text import TEST_WORDS

        d = self.to_dict(level)
        name = TEST_WORDS.get(self.method, self.method)
        floor = self.resampled is not None and self.p_value <= 1.0 / (self.resampled.size + 1) * (
            1 + 1e-12)
        p = f"<= {self.p_value:.2g}" if floor else f"{self.p_value:.3g}"
        how = (f"{d['num_resamples']:,} resamples" if d["num_resamples"] is not None
               else "asymptotic")
        v = self.verdict(level)
        return "\n".join([
            f"  verdict       {v.headline}",
            *([f"                ({v.reason})"] if v.calibrated is None else []),
            f"  PIT values    {self.n:,}, {self.n_cells:,} cells",
            "",
            f"  p-value       {p:<9} {name} test of a uniform PIT ({how})",
            f"  B01           {format_bayes_factor(self.log_bayes_factor):<9} Bayes factor of "
            f"calibration against a smooth miscalibrated PIT distribution "
            f"(log B01 = {self.log_bayes_factor:.3g})",
            f"  P(calibrated) {format_prob(self.prob_calibrated):<9} posterior probability of "
            f"calibration, prior odds {self.prior_odds:g}",
            f"  statistic     {self.statistic:<9.4g} the test statistic",
            "",
            *rule_lines(level),
        ])

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return (
            f"RegressionCalibrationTest(method={self.method!r}, statistic={self.statistic:.4g}, "
            f"p_value={self.p_value:.4g}, prob_calibrated={self.prob_calibrated:.4g}, "
            f"log_bayes_factor={self.log_bayes_factor:.3g}, n={self.n})"
        )


def resampled_statistic(n: int, n_cells: int, num_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """:func:`anderson_darling_grid` of ``num_resamples`` Multinomial(n, 1/G) histograms."""
    out = np.empty(num_resamples)
    pvals = np.full(n_cells, 1.0 / n_cells)
    step = max(1, RESAMPLE_CHUNK // n_cells)
    for a in range(0, num_resamples, step):
        b = min(num_resamples, a + step)
        out[a:b] = anderson_darling_grid(rng.multinomial(n, pvals, size=b - a))
    return out


def pit_calibration_test(
    pit: ArrayLike | PITHistogram,
    *,
    method: str = "anderson-darling",
    num_resamples: int = 1000,
    prior_odds: float = PRIOR_ODDS,
    shift_scale: float | None = None,
    spread_scale: float | None = None,
    smoothness_scale: float | None = None,
    n_cells: int | None = None,
    forecast_levels: ArrayLike | None = None,
    forecast_draws: int | None = None,
    num_samples: int = 2000,
    seed: Seed = 0,
) -> RegressionCalibrationTest:
    """Test whether a regression forecaster is calibrated (its PIT uniform).

    Parameters
    ----------
    pit : array_like of shape (T,) or PITHistogram
        PIT values of held-out forecasts (:func:`~bece.regression.pit`,
        randomised for sample and quantile forecasts), or their histogram
        (:class:`~bece.regression.PITHistogram`). See the module docstring
        for what the test assumes.
    method : {"anderson-darling", "cramer-von-mises", "kolmogorov-smirnov"}
        The p-value's test (module docstring). The last two need PIT values.
    num_resamples : int, default 1000
        ``method="anderson-darling"``: histograms B drawn under calibration;
        the smallest p-value is 1/(B + 1).
    prior_odds : float, default 0.1
        :math:`P(\\text{calibrated})/P(\\text{not})` for ``prob_calibrated``;
        the default of :func:`~bece.regression.bayesian_calibration_error`,
        so that both report the same probability (why 0.1:
        :mod:`bece._regression.smooth`).
    shift_scale, spread_scale, smoothness_scale : float, optional
        The alternative (smooth) model's prior; see
        :func:`~bece.regression.bayesian_calibration_error`.
    n_cells : int, optional
        Cells G of the grid PIT values are counted on (default 1000).
    forecast_levels : array_like of shape (K,), optional
        The Bayes factor of a quantile forecast's randomised PIT: its levels,
        between which the PIT is uniform whatever the forecaster; the smooth
        model is then fitted to the counts between them, as
        :func:`~bece.regression.bayesian_calibration_error` does with the
        same keyword (and the two report the same Bayes factor). The
        p-value does not use it: the randomised PIT is exactly uniform
        under calibration.
    forecast_draws : int, optional
        The Bayes factor of a sample forecast's randomised PIT: the number S
        of draws; the model of the ranks
        (:func:`~bece.regression.bayesian_calibration_error`,
        :mod:`bece._regression.cells`).
    num_samples : int, default 2000
        Importance samples for the smooth model's marginal likelihood.
    seed : int or numpy.random.Generator, default 0

    Returns
    -------
    RegressionCalibrationTest
        ``.p_value``, ``.bayes_factor``, ``.prob_calibrated``, ``.reject(level)``.

    Warns
    -----
    DiscretePITWarning
        When PIT values look discrete (many ties).

    Examples
    --------
    >>> import numpy as np
    >>> from bece.regression import pit_calibration_test, pit
    >>> y = np.random.default_rng(0).normal(size=1000)
    >>> t = pit_calibration_test(pit(y, mean=0.0, std=1.0))          # calibrated
    >>> bool(t.p_value > 0.05), bool(t.prob_calibrated > 0.9)
    (True, True)
    >>> t = pit_calibration_test(pit(y, mean=0.0, std=0.7))          # over-confident
    >>> t.reject(0.05), bool(t.prob_calibrated < 1e-6)
    (True, True)
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    num_resamples = positive_int(num_resamples, "num_resamples")
    num_samples = positive_int(num_samples, "num_samples")
    prior_odds = check_scale(prior_odds, "prior_odds")
    scales = smooth_prior(shift_scale, spread_scale, smoothness_scale)
    rng = as_generator(seed)
    if method != "anderson-darling" and isinstance(pit, PITHistogram):
        raise ValueError(
            f"method={method!r} needs PIT values (scipy runs it on them); from a PITHistogram use "
            "method='anderson-darling'"
        )
    hist, values = as_histogram(pit, n_cells)
    cells = forecast_cells(forecast_levels, forecast_draws, hist, values)
    resampled = None
    if method == "anderson-darling":
        check_allocation(
            8.0 * (num_resamples + 2 * RESAMPLE_CHUNK),
            what="the resampled statistics (num_resamples float64, and a chunk of histograms)",
            argument=f"num_resamples={num_resamples}",
            advice="pass fewer num_resamples (the smallest p-value is 1/(num_resamples + 1))",
        )
        statistic = float(anderson_darling_grid(hist.counts[None, :])[0])
        resampled = resampled_statistic(hist.n, hist.n_cells, num_resamples, rng)
        p_value = float((1.0 + np.count_nonzero(resampled >= statistic)) / (num_resamples + 1.0))
    else:
        from scipy import stats

        assert values is not None
        res: Any = (stats.cramervonmises(values, "uniform") if method == "cramer-von-mises"
                    else stats.kstest(values, "uniform"))
        statistic, p_value = float(res.statistic), float(res.pvalue)
    with single_threaded_blas():
        post = fit_pit_model(hist, shift_scale=scales["shift_scale"], spread_scale=scales["spread_scale"],
                             smoothness_scale=scales["smoothness_scale"], cells=cells)
        *_, post = pit_model_draws(hist, post, num_samples, rng)
    return RegressionCalibrationTest(
        statistic=statistic, p_value=float(p_value), method=method, n=hist.n, n_cells=hist.n_cells,
        resampled=resampled, log_bayes_factor=post.log_bayes_factor, prior_odds=prior_odds,
        posterior=post,
    )
