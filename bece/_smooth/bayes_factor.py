r"""Is the classifier calibrated? A consistency-resampling p-value and a Bayes factor.

An interval for the ECE cannot answer this: the ECE is non-negative, so for a
perfectly calibrated classifier (ECE = 0) every interval of its posterior or
bootstrap lies above the truth. :func:`calibration_test` answers it two ways.

**Consistency resampling** (Bröcker & Smith 2007; Vaicenavicius et al.
2019). Under perfect calibration :math:`z_i \sim \mathrm{Bernoulli}(p_i)`
given the confidences, so the test statistic — the plug-in binned ECE
:math:`T = \frac1n\sum_m |C_m - S_m|` with :math:`C_m` the correct
predictions and :math:`S_m` the summed confidences of bin m — can be
simulated under the null with the confidences held fixed: draw
:math:`z^{*(b)}_i \sim \mathrm{Bernoulli}(p_i)`, :math:`b = 1..B`, and report

.. math::

    \text{p-value} = \frac{1 + \#\{b : T^{*(b)} \ge T\}}{B + 1},

which is valid in finite samples: under the null :math:`T, T^{*(1)}, \dots,
T^{*(B)}` are exchangeable, so :math:`P(\text{p-value} \le \alpha) \le
\alpha`. For top-label (multiclass) inputs, drawing the label from the
predicted distribution and scoring ``argmax == label`` is the same as
:math:`z^* \sim \mathrm{Bernoulli}(\max_k p_k)`. Above 2,000 predictions
the resampling uses the fine grid of :mod:`bece.smooth` (128 sub-cells per
bin, cut further in logit next to 0 and 1): a sub-cell's correct count is
drawn as :math:`\mathrm{Binomial}(t_g, \bar p_g)` instead of a sum of Bernoullis
with the individual :math:`p_i`; both have mean :math:`t_g\bar p_g`, and the
binomial's variance exceeds the exact one by
:math:`\sum_{i\in g}(p_i - \bar p_g)^2 \le t_g h_g^2/4` (sub-cell width
:math:`h_g`), a relative excess of at most :math:`h^2/(4\bar p_m(1-\bar p_m))` of bin
m's variance: below :math:`10^{-4}` for 15 uniform bins
(:math:`h = 1/1920`) unless the bin's mean confidence is within
:math:`7\times10^{-4}` of 0 or 1, where the sub-cells are narrower still
(at most 1/32 wide in logit p).

**Bayes factor** of the identity curve :math:`H_0: P(z=1\mid p) = p` against
the smooth model :math:`H_1` of :mod:`bece.smooth` (spline in logit(p) with
its prior):

.. math::

    B_{01} = \frac{p(z \mid p, H_0)}{p(z \mid p, H_1)}, \qquad
    P(H_0 \mid \text{data}) = \frac{B_{01}\,O}{1 + B_{01}\,O},

with prior odds :math:`O = P(H_0)/P(H_1)` (default 1). Since :math:`H_0` is
:math:`H_1` at :math:`a = b = u = v = 0`, this is the Savage–Dickey density
ratio :math:`p(\theta = 0 \mid \text{data}, H_1)/p(\theta = 0 \mid H_1)`;
we compute it as the ratio of marginal likelihoods — :math:`H_0`'s exactly,
:math:`H_1`'s by importance sampling from the Laplace mixture over the
hyper-parameters (the Laplace value itself when the Pareto :math:`\hat k`
of the weights is 0.7 or more) — because the Laplace approximation is
accurate near the posterior mode, whereas Savage–Dickey under Laplace
would evaluate the Gaussian approximation at :math:`\theta = 0`, in its
tail when the data are miscalibrated. A Bayes
factor depends on the prior of the alternative (wider priors favour
:math:`H_0`); the defaults of :func:`bece._smooth.fit.fit_smooth` describe
miscalibration of the size seen in practice (temperature 0.5–2, logit
shifts of about 1).

References
----------
Bröcker & Smith (2007), "Increasing the reliability of reliability
diagrams", Weather and Forecasting 22(3).
Vaicenavicius et al. (2019), "Evaluating model calibration in
classification", AISTATS.
Verdinelli & Wasserman (1995), "Computing Bayes factors using a
generalization of the Savage–Dickey density ratio", JASA.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import expit

from .._base.checks import check_scale, positive_int
from .._base.laplace import single_threaded_blas
from .._base.memory import check_allocation
from .._base.random import as_generator
from .._base.typing import Seed
from .._results.html import HTMLDisplay, histogram_svg
from .atoms import Atoms
from .average import DEFAULT_PRIOR_ODDS
from .basis import DEFAULT_N_KNOTS
from .draws import importance_draws
from .fit import SmoothPosterior, fit_smooth
from .posterior import check_smooth_draws

__all__ = [
    "calibration_test_of_atoms",
    "CalibrationTest",
    "resampled_ece",
]


@dataclass(frozen=True, repr=False, eq=False)
class CalibrationTest(HTMLDisplay):
    """Result of :func:`calibration_test`.

    Attributes
    ----------
    statistic : float
        Plug-in binned ECE of the data.
    p_value : float
        Consistency-resampling p-value of perfect calibration.
    resampled : ndarray of shape (B,)
        The statistic on each data set resampled under perfect calibration.
    log_bayes_factor : float
        :math:`\\log B_{01}` (calibrated against the smooth model); positive
        favours calibration.
    prior_odds : float
        :math:`P(H_0)/P(H_1)`.
    n, n_bins : int
    posterior : bece._smooth.fit.SmoothPosterior
        The smooth model's fit (its marginal likelihoods give the Bayes factor).
    kind : {"binary", "top-label", "triples"} or None
        How the predictions were read (:func:`bece._stats.inputs.input_kind`).

    Examples
    --------
    >>> import numpy as np
    >>> from bece import calibration_test
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = rng.uniform(size=2000) < p ** 1.5      # over-confident: P(y = 1 | p) = p^1.5
    >>> t = calibration_test(y, p, seed=1)
    >>> t  # doctest: +ELLIPSIS
    CalibrationTest(statistic=0.1..., n=2000, n_bins=15, num_resamples=1000, kind='binary')
    >>> t.reject(0.05), bool(t.prob_calibrated < 0.001), t.verdict().label
    (True, True, 'miscalibrated')
    """

    statistic: float
    p_value: float
    resampled: np.ndarray
    log_bayes_factor: float
    prior_odds: float
    n: int
    n_bins: int
    posterior: SmoothPosterior
    kind: str | None = None

    @property
    def bayes_factor(self) -> float:
        """The Bayes factor for calibration.

        :math:`B_{01} = p(\\text{data} \\mid \\text{calibrated}) / p(\\text{data} \\mid \\text{smooth})`;
        0.0 below :math:`e^{-745}` and ``inf`` above :math:`e^{709}` (float64's
        range), quietly: :attr:`log_bayes_factor` holds the value.
        """
        with np.errstate(over="ignore", under="ignore"):
            return float(np.exp(self.log_bayes_factor))

    @property
    def prob_calibrated(self) -> float:
        """Posterior probability of perfect calibration, :math:`B_{01}O/(1 + B_{01}O)`,
        as :math:`\\mathrm{expit}(\\log B_{01} + \\log O)` (no overflow for any
        log Bayes factor)."""
        return float(expit(self.log_bayes_factor + np.log(self.prior_odds)))

    def reject(self, level: float = 0.05) -> bool:
        """Whether the p-value rejects perfect calibration at ``level``."""
        if not 0.0 < level < 1.0:
            raise ValueError(f"level must be in (0, 1), got {level!r}")
        return bool(self.p_value <= level)

    def verdict(self, level: float = 0.05) -> Any:  # bece._results.verdict.Verdict
        """Is it calibrated? Both answers read by one rule
        (:func:`bece._results.verdict.verdict`): "consistent with
        calibration" when ``p_value >= level`` and the Bayes factor
        :math:`B_{01} \\ge 1`, "miscalibrated" when ``p_value < level`` and
        :math:`B_{01} < 1`, "inconclusive" otherwise. The rule needs no
        prior odds; ``prior_odds`` sets only :attr:`prob_calibrated`."""
        from .._results.verdict import verdict

        return verdict(self.p_value, self.log_bayes_factor, level,
                       num_resamples=int(self.resampled.size))

    def _html_diagram(self) -> str | None:
        return histogram_svg(self.resampled, label="plug-in ECE resampled under calibration",
                             marks={"observed": self.statistic})

    def to_dict(self, level: float = 0.05) -> dict[str, Any]:
        """Plain Python (JSON): the ``verdict`` and ``calibration_test`` objects
        of ``bece test --json`` (and of ``bece report --json``).

        ``verdict``: :meth:`bece._results.verdict.Verdict.to_dict` at
        ``level``; ``calibration_test``: ``statistic`` (plug-in ECE),
        ``p_value``, ``num_resamples``, ``bayes_factor`` (for calibration;
        None beyond float64's range), ``log_bayes_factor``, ``prior_odds``,
        ``prob_calibrated``.
        """
        bf = self.bayes_factor
        return {
            "verdict": self.verdict(level).to_dict(),
            "calibration_test": {
                "statistic": self.statistic, "p_value": self.p_value,
                "num_resamples": int(self.resampled.size),
                "bayes_factor": bf if 0.0 < bf < float("inf") else None,
                "log_bayes_factor": self.log_bayes_factor, "prior_odds": self.prior_odds,
                "prob_calibrated": self.prob_calibrated,
            },
        }

    def summary(self, level: float = 0.05) -> Any:  # pandas.DataFrame
        """One row, ``calibration_test``: the numbers of :meth:`to_dict` and
        the verdict's label at ``level``."""
        from .._results.summaries import numbers_table

        d = self.to_dict(level)
        return numbers_table({"calibration_test": {**d["calibration_test"],
                                                    "verdict": d["verdict"]["verdict"]}})

    def __repr__(self) -> str:
        return (
            f"CalibrationTest(statistic={self.statistic:.4f}, p_value={self.p_value:.4f}, "
            f"prob_calibrated={self.prob_calibrated:.4f}, log_bayes_factor={self.log_bayes_factor:.2f}, "
            f"n={self.n}, n_bins={self.n_bins}, num_resamples={self.resampled.size}, "
            f"kind={self.kind!r})"
        )

    def text(self, level: float = 0.05) -> str:
        """The lines a person reads, as ``bece test`` prints them under its
        header: the verdict at ``level``, the input, each number and what it
        means, the rule and how the two answers relate."""
        import textwrap

        from .._results.report_text import verdict_lines
        from .._results.text import format_prob, input_words
        from .._results.verdict import MEANING, format_bayes_factor, rule_lines

        b = self.resampled.size
        floor = self.p_value <= 1.0 / (b + 1) * (1 + 1e-12)
        p = f"<= {self.p_value:.2g}" if floor else f"{self.p_value:.3g}"
        bf_text = format_bayes_factor(self.log_bayes_factor)
        pc = format_prob(self.prob_calibrated)
        lines = verdict_lines(self, level) + [
            f"  predictions   {self.n:,} ({input_words(self.kind)}), {self.n_bins} bins",
            "",
            f"  p-value       {p:<9} consistency resampling of the plug-in ECE ({b:,} resamples)",
            f"  B01           {bf_text:<9} Bayes factor of exact calibration against the smooth "
            f"model (log B01 = {self.log_bayes_factor:.3g})",
            f"  P(calibrated) {pc:<9} posterior probability of exact calibration, prior odds "
            f"{self.prior_odds:g}",
            f"  plug-in ECE   {self.statistic:<9.4f} the test statistic",
            "",
            *rule_lines(level),
            *textwrap.wrap(MEANING, 92, initial_indent="  ", subsequent_indent="  ",
                          break_on_hyphens=False),
        ]
        return "\n".join(lines)

    def __str__(self) -> str:
        """:meth:`text` at level 0.05: what ``bece test`` prints under its header."""
        return self.text()


def _ece_of_counts(correct: np.ndarray, sum_p: np.ndarray, n: int) -> np.ndarray:
    return np.abs(correct - sum_p).sum(axis=-1) / n


#: (resample, atom) pairs drawn at once by :func:`resampled_ece`
RESAMPLE_CHUNK = 4_000_000


def resampled_ece(atoms: Atoms, num_resamples: int, rng: np.random.Generator,
                  *, chunk_elems: int = RESAMPLE_CHUNK) -> tuple[float, np.ndarray]:
    """Plug-in ECE of the data and of ``num_resamples`` consistency resamples.

    Parameters
    ----------
    atoms : bece._smooth.atoms.Atoms
    num_resamples : int
    rng : numpy.random.Generator

    Returns
    -------
    statistic : float
        :math:`\\frac1n\\sum_m |C_m - S_m|`.
    resampled : ndarray of shape (num_resamples,)
        The same with :math:`C_m` replaced by a draw of
        :math:`\\sum_{j\\in m} \\mathrm{Binomial}(t_j, p_j)` (Bernoulli for
        exact atoms).
    """
    n = atoms.n
    _, starts = np.unique(atoms.bin, return_index=True)
    sp = np.add.reduceat(atoms.trials * atoms.p, starts)
    # the data's statistic by the same reduction as the resamples', so that
    # equal counts give bit-identical values (ties count as >= in the p-value)
    observed = np.add.reduceat(atoms.successes.astype(np.float64), starts)
    statistic = float(_ece_of_counts(observed, sp, n))
    J = atoms.p.size
    out = np.empty(num_resamples)
    step = max(1, chunk_elems // max(J, 1))
    for a in range(0, num_resamples, step):
        b = min(num_resamples, a + step)
        if atoms.exact:
            draws = (rng.random((b - a, J)) < atoms.p).astype(np.float64)
            out[a:b] = _ece_of_counts(np.add.reduceat(draws, starts, axis=1), sp, n)
        else:
            # atom by atom (rows of the (J, B) array), so that numpy sets up its
            # binomial sampler once per atom instead of once per draw
            counts = rng.binomial(atoms.trials[:, None], atoms.p[:, None], size=(J, b - a))
            correct = np.add.reduceat(counts, starts, axis=0).T.astype(np.float64)
            out[a:b] = _ece_of_counts(correct, sp, n)
    return statistic, out


def calibration_test_of_atoms(
    atoms: Atoms, n_bins: int, kind: str | None, *, num_resamples: int = 1000,
    prior_odds: float = DEFAULT_PRIOR_ODDS, num_samples: int = 2000, spline: dict[str, Any] | None = None,
    seed: Seed = 0,
) -> CalibrationTest:
    """The test on atoms: the p-value of the plug-in ECE in the ``n_bins`` ECE
    bins that the atoms refine (:func:`resampled_ece`), and the Bayes factor
    of the identity curve against the smooth model with ``spline`` (the
    keywords of :func:`bece._smooth.fit.fit_smooth`; module docstring).

    :func:`bece.calibration_test` builds the atoms from predictions and
    :meth:`bece.SmoothModel.calibration_test` from fine statistics.
    """
    num_resamples = positive_int(num_resamples, "num_resamples")
    num_samples = positive_int(num_samples, "num_samples")
    check_allocation(
        8.0 * (num_resamples + 3 * RESAMPLE_CHUNK),
        what="the resampled statistics (num_resamples float64, and a chunk of resamples)",
        argument=f"num_resamples={num_resamples}",
        advice="pass fewer num_resamples (the smallest p-value is 1/(num_resamples + 1))",
    )
    prior_odds = check_scale(prior_odds, "prior_odds")
    rng = as_generator(seed)
    spline = {} if spline is None else spline
    check_smooth_draws(num_samples, spline.get("n_knots", DEFAULT_N_KNOTS), atoms.binning.n_bins)
    # the resamples have their own stream, spawned from ``rng`` (which it does
    # not advance), and are drawn on a second thread while the smooth model is
    # fitted: numpy's binomial draws and reductions release the GIL
    resample_rng = rng.spawn(1)[0]
    with ThreadPoolExecutor(1) as pool:
        resampling = pool.submit(resampled_ece, atoms, num_resamples, resample_rng)
        with single_threaded_blas():
            post = fit_smooth(atoms, **spline)
            *_, post = importance_draws(atoms, post, num_samples, rng)
        statistic, resampled = resampling.result()
    p_value = (1.0 + np.count_nonzero(resampled >= statistic)) / (num_resamples + 1.0)
    return CalibrationTest(
        statistic=statistic, p_value=float(p_value), resampled=resampled,
        log_bayes_factor=post.log_bayes_factor, prior_odds=prior_odds, n=atoms.n,
        n_bins=n_bins, posterior=post, kind=kind,
    )
