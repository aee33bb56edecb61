"""The result of recalibrating a classifier: the test set before and after, paired."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._base.checks import check_prob
from .comparison import Comparison
from .ece import BayesianECE
from .html import HTMLDisplay
from .text import input_words
from .verdict import prob_text

__all__ = [
    "METHOD_WORDS",
    "Recalibration",
    "describe_calibrator",
    "verdict",
]

#: The command line's and :func:`bece.recalibrate`'s method names, in words.
METHOD_WORDS = {
    "temperature": "temperature scaling",
    "vector": "vector scaling",
    "matrix": "matrix scaling",
    "dirichlet": "Dirichlet calibration",
    "platt": "Platt scaling",
    "isotonic": "isotonic regression",
    "beta": "beta calibration",
}


#: The ECE model of the comparison, in words.
MODEL_WORDS = {"smooth": "the smooth calibration-curve model (the default)",
               "binned": "the binned BECE model"}


def describe_calibrator(cal: Any) -> str:
    """A fitted calibrator's parameters in one line (what a reader checks first)."""
    name = type(cal).__name__
    if hasattr(cal, "temperature_"):
        return f"{name}: T = {cal.temperature_:.4f}"
    if hasattr(cal, "reg_lambda_"):  # vector, matrix and Dirichlet scaling
        how = ("chosen by cross-validation" if getattr(cal, "cv_nll_", None) is not None
               else "as given")
        nu = f", nu = {cal.reg_diagonal_:g}" if hasattr(cal, "reg_diagonal_") else ""
        head = (f"{name}: lambda = {cal.reg_lambda_:g}, mu = {cal.reg_mu_:g}{nu} ({how}; "
                f"{cal.features} features); ")
        if np.ndim(cal.coef_) == 2:
            d = np.diag(cal.coef_)
            return head + f"diagonal of W in [{d.min():.3f}, {d.max():.3f}]"
        return head + (f"w in [{cal.coef_.min():.3f}, {cal.coef_.max():.3f}], "
                       f"b in [{cal.intercept_.min():.3f}, {cal.intercept_.max():.3f}]")
    if hasattr(cal, "a_"):
        return f"{name}: a = {cal.a_:.4f}, b = {cal.b_:.4f}, c = {cal.c_:.4f}"
    if hasattr(cal, "coef_"):
        return f"{name}: slope = {float(cal.coef_):.4f}, intercept = {float(cal.intercept_):.4f}"
    if hasattr(cal, "X_thresholds_"):
        return f"{name}: step function with {len(cal.X_thresholds_)} thresholds"
    return name


@dataclass(frozen=True, repr=False, eq=False)
class Recalibration(HTMLDisplay):
    """A calibrator fitted on a validation set, and the test set scored before and after.

    Attributes
    ----------
    method : str
        The method's name (``"temperature"``, ...; the class name for a
        calibrator passed as an object).
    calibrator : estimator
        The fitted calibrator (:mod:`bece.calibrate`).
    comparison : Comparison
        Paired posterior (:func:`bece.compare`) of the test set with
        ``a`` = after recalibration, ``b`` = before; its difference is
        :math:`\\mathrm{ECE}_\\text{after} - \\mathrm{ECE}_\\text{before}`.
    y_prob : ndarray of shape (n_test, K)
        The recalibrated test probabilities (``calibrator.predict_proba``;
        two columns for 1-D binary scores).
    nll_before, nll_after : float
        Mean negative log-likelihood of the test labels before and after
        (a probability 0 read as in :mod:`bece._calibrate.scores`, at
        ``finfo(dtype).tiny``; after: float64's).
    input : {"logits", "probabilities"}
        How the scores were read.
    n_val : int
        Validation predictions the calibrator was fitted on.
    classes : ndarray or None
        The label of each column, or None when the labels are the column
        indices themselves.

    Examples
    --------
    >>> import numpy as np
    >>> import bece
    >>> rng = np.random.default_rng(0)
    >>> logits = rng.normal(scale=3.0, size=(2000, 4))
    >>> p = np.exp(logits / 2) / np.exp(logits / 2).sum(axis=1, keepdims=True)
    >>> y = (rng.uniform(size=(2000, 1)) > p.cumsum(axis=1)).sum(axis=1)   # drawn with T = 2
    >>> r = bece.recalibrate(y[:1000], logits[:1000], y[1000:], logits[1000:], input="logits",
    ...                      model="binned", n_bins=10, num_samples=2000)
    >>> r  # doctest: +ELLIPSIS
    Recalibration(method='temperature', ece_before=0.1..., ece_after=0.0..., n_val=1000, n_test=1000)
    >>> r.calibrator, r.y_prob.shape
    (TemperatureScaling(input='logits'), (1000, 4))
    >>> bool(r.interval(0.9)[1] < 0), bool(r.nll_after < r.nll_before)
    (True, True)
    """

    method: str
    calibrator: Any
    comparison: Comparison
    y_prob: np.ndarray
    nll_before: float
    nll_after: float
    input: str
    n_val: int
    classes: np.ndarray | None = None

    @property
    def before(self) -> BayesianECE:
        """Posterior of the test-set ECE before recalibration (``comparison.b``)."""
        return self.comparison.b

    @property
    def after(self) -> BayesianECE:
        """Posterior of the test-set ECE after recalibration (``comparison.a``)."""
        return self.comparison.a

    @property
    def diff_draws(self) -> np.ndarray:
        """:math:`\\mathrm{ECE}_\\text{after} - \\mathrm{ECE}_\\text{before}` of each joint draw, (S,)."""
        return self.comparison.diff_draws

    @property
    def mean(self) -> float:
        """Posterior mean of the difference after - before (negative: recalibration helped)."""
        return self.comparison.mean

    def interval(self, prob: float = 0.9) -> tuple[float, float]:
        """Equal-tailed credible interval of the difference after - before
        (:meth:`Comparison.interval <bece.Comparison.interval>`: with the smooth
        model, robust over each side's prior odds of exact calibration)."""
        return self.comparison.interval(prob)

    def hdi(self, prob: float = 0.9) -> tuple[float, float]:
        """Highest-density interval of the difference after - before."""
        return self.comparison.hdi(prob)

    @property
    def prob_better(self) -> float:
        """:math:`P(\\mathrm{ECE}_\\text{after} < \\mathrm{ECE}_\\text{before})` (fraction of joint draws)."""
        return self.comparison.prob_a_better

    def __repr__(self) -> str:
        lo, hi = self.interval(0.9)
        return (f"Recalibration(method={self.method!r}, ece_before={self.before.mean:.4f}, "
                f"ece_after={self.after.mean:.4f}, diff={self.mean:+.4f}, "
                f"interval90=[{lo:+.4f}, {hi:+.4f}], prob_better={self.prob_better:.3f}, "
                f"n_val={self.n_val}, n_test={self.before.stats.n})")

    def table(self, prob: float = 0.9) -> list[str]:
        """The before / after / difference rows and the verdict, as lines of text."""
        pct = f"{prob:.0%} interval"
        lines = [f"{'':<16} {'Bayesian ECE':>12}  {pct:<20} {'plug-in':>8} {'NLL':>8}"]
        for tag, r, nll in (("before", self.before, self.nll_before),
                            ("after", self.after, self.nll_after)):
            lo, hi = r.interval(prob)
            lines.append(f"{tag:<16} {r.mean:>12.4f}  {f'[{lo:.4f}, {hi:.4f}]':<20} "
                         f"{r.plugin:>8.4f} {nll:>8.4f}")
        lo, hi = self.interval(prob)
        lines.append(f"{'after - before':<16} {self.mean:>+12.4f}  {f'[{lo:+.4f}, {hi:+.4f}]':<20} "
                     f"{self.after.plugin - self.before.plugin:>+8.4f} "
                     f"{self.nll_after - self.nll_before:>+8.4f}")
        n = self.comparison.num_samples
        lines += ["", f"P(ECE_after < ECE_before){prob_text(self.prob_better, n)}   "
                      f"({n:,} joint draws; paired: the same test examples before and after)",
                  verdict(self.prob_better, self.interval(prob), prob)]
        return lines

    def _html_diagram(self) -> str | None:
        return self.comparison._html_diagram()

    def to_dict(self, prob: float = 0.9) -> dict[str, Any]:
        """Plain Python (JSON): the numbers ``bece recalibrate --json`` prints.

        ``model``, ``input_kind``, ``method``, ``calibrator`` (``name`` and
        its scalar fitted ``params``), ``val`` (``n``), ``test`` (``n``,
        ``n_bins``), ``before`` and ``after`` (``plugin_ece``, ``nll``,
        ``ece``: ``mean``, ``std``, ``prob``, ``interval``), ``diff`` (the
        posterior of ECE_after - ECE_before) and ``prob_after_better``.
        """
        prob = check_prob(prob)
        cal = self.calibrator
        params = {k: (v.item() if isinstance(v, np.generic) else v) for k, v in vars(cal).items()
                  if k.endswith("_") and not k.startswith("_") and np.ndim(v) == 0
                  and isinstance(v, (int, float, str, np.number))}

        def one(r: BayesianECE, nll: float) -> dict[str, Any]:
            lo, hi = r.interval(prob)
            return {"plugin_ece": r.plugin, "nll": nll,
                    "ece": {"mean": r.mean, "std": r.std, "prob": prob, "interval": [lo, hi]}}

        lo, hi = self.interval(prob)
        return {
            "model": self.after.model, "input_kind": self.after.stats.kind,
            "method": self.method,
            "calibrator": {"name": type(cal).__name__, "params": params},
            "val": {"n": self.n_val},
            "test": {"n": self.before.stats.n, "n_bins": self.before.stats.n_bins},
            "before": one(self.before, self.nll_before),
            "after": one(self.after, self.nll_after),
            "diff": {"mean": self.mean, "std": self.comparison.std, "prob": prob,
                     "interval": [lo, hi]},
            "prob_after_better": self.prob_better,
        }

    def text(self, prob: float = 0.9) -> str:
        """The lines a person reads, as ``bece recalibrate`` prints them under
        its header: the two sets of predictions, the calibrator, the table
        of ECE and NLL before and after (``prob`` intervals) with the verdict,
        and the model the ECEs come from."""
        stats = self.before.stats
        model = MODEL_WORDS.get(self.after.model, f"the {self.after.model} model")
        lines = [
            f"  method        {METHOD_WORDS.get(self.method, self.method)}",
            f"  validation    {self.n_val:,} predictions",
            f"  test          {stats.n:,} predictions ({input_words(self.before.kind)})",
            f"  scores        {self.input}",
            f"  calibrator    {describe_calibrator(self.calibrator)}",
            "",
            *(f"  {line}" if line else "" for line in self.table(prob)),
            "  (NLL: mean negative log-likelihood of the test labels. The ECEs are paired "
            "posteriors of",
            f"  {model}, over the same test examples before and after:",
            "  drawn jointly, 'before' can differ a little from bece.bayesian_ece of the same "
            "predictions alone)",
        ]
        return "\n".join(lines)

    def __str__(self) -> str:
        """:meth:`text` at 90%: what ``bece recalibrate`` prints under its header."""
        return self.text()

    def summary(self, *, hdi_prob: float = 0.9) -> Any:  # pandas.DataFrame
        """The comparison's summary table (:meth:`bece.Comparison.summary`)
        with its rows named for what they are: ``ece_after``,
        ``ece_before`` and ``ece_after - ece_before``."""
        table = self.comparison.summary(hdi_prob=hdi_prob)
        return table.rename(index={"ece_a": "ece_after", "ece_b": "ece_before",
                                   "ece_diff": "ece_after - ece_before"})


def verdict(prob_better: float, interval: tuple[float, float], prob: float = 0.9) -> str:
    """One sentence: whether the test set shows recalibration lowered the ECE."""
    lo, hi = interval
    pct = f"{prob:.0%}"
    if hi < 0:
        return (f"Verdict: recalibration lowered the test-set ECE (the {pct} interval of "
                "after - before lies below 0).")
    if lo > 0:
        return (f"Verdict: recalibration raised the test-set ECE (the {pct} interval of "
                "after - before lies above 0).")
    return (f"Verdict: the test set cannot tell whether recalibration changed the ECE (the {pct} "
            "interval of after - before contains 0).")
