"""The result of a paired comparison of two models on the same test set."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .._base.arviz import from_dict
from .._base.checks import check_prob
from .ece import BayesianECE
from .html import HTMLDisplay, histogram_svg
from .summaries import DrawSummaries
from .text import format_prob, input_words

__all__ = [
    "Comparison",
    "differences_under_priors",
]


#: How each paired model pairs the two (the comparison's text).
PAIRING_BINNED = (
    "  model         binned BECE model, paired: one Dirichlet over the joint",
    "                (correct_A, bin_A, correct_B, bin_B) cells of the same examples",
)
PAIRING_SMOOTH = (
    "  model         smooth calibration curves (Laplace), paired: shared outcome",
    "                perturbations and one Bayesian bootstrap over the same examples",
)


@dataclass(frozen=True, repr=False, eq=False)
class Comparison(DrawSummaries, HTMLDisplay):
    """Joint posterior of the ECEs of two models on the same test set.

    Attributes
    ----------
    a, b : BayesianECE
        Each model's marginal posterior (draws ``(S,)``, per-bin
        ``accuracy``, ``confidence``, ``weight`` ``(S, M)``, ``plugin``,
        ``stats``), taken from the same joint draws.
    diff_draws : ndarray of shape (S,)
        :math:`\\mathrm{ECE}_a - \\mathrm{ECE}_b` of each joint draw
        (``a.draws - b.draws``).
    counts : ndarray of shape (2, M, 2, M), int64
        Joint counts :math:`C_{z^a, b^a, z^b, b^b}`.
    concentration : ndarray of shape (2, M, 2, M)
        Prior concentration :math:`\\alpha^{ab}` of the joint cells.
    names : (str, str), default ("A", "B")
        What the text and the JSON call the two models (:meth:`named`).
    diff_under_priors : ndarray of shape (4, S), or None
        Where each model is averaged with exact calibration (the smooth
        default), the difference's draws under each of four priors: each
        model's prior odds of exact calibration 0 or its ``prior_odds``
        (:func:`differences_under_priors` of each side's
        ``miscalibrated_draws`` and ``draws``; the last row is
        ``diff_draws``). :meth:`interval` and :meth:`upper_bound` are then
        robust over them (below); None otherwise.

    Notes
    -----
    **The robust interval.** A model whose ECE is small but not 0 (0.02 at
    n = 2,000) can have a posterior probability of exact calibration of a
    third or more; its averaged draws are then often exactly 0, and the
    difference's draws :math:`\\mathrm{ECE}_a - 0` sit above the true
    difference: the equal-tailed interval of ``diff_draws`` covered such a
    difference 75% of the time where 90% was asked
    (docs: validation, "Paired comparisons"). So where ``diff_under_priors``
    is set, the ``prob`` interval runs from the lowest lower end to the
    highest upper end of the four priors' equal-tailed intervals: the range
    of the posterior's quantiles over every prior that gives each model
    prior odds of exact calibration from 0 to :math:`O`. (With the default
    independent indicators the posterior CDF at any point is bilinear in
    the two probabilities of calibration, so it takes its extremes over
    that range at the four corners.) ``mean``, ``std``, :meth:`hdi`,
    :attr:`prob_a_better`, the ArviZ data and the plots' densities are
    those of ``diff_draws``, the default prior's.

    Examples
    --------
    >>> import numpy as np
    >>> from bece import compare
    >>> rng = np.random.default_rng(0)
    >>> t = rng.uniform(size=1000)
    >>> y = rng.uniform(size=1000) < t             # t is calibrated, t ** 0.7 is not
    >>> c = compare(y, t, t ** 0.7, n_bins=10, num_samples=2000, seed=1, model="binned")
    >>> c  # doctest: +ELLIPSIS
    Comparison(ece_a=0.0..., ece_b=0.0..., n=1000, num_samples=2000, model='binned', kind='binary')
    >>> c.diff_draws.shape, bool(np.allclose(c.diff_draws, c.a.draws - c.b.draws))
    ((2000,), True)
    >>> lo, hi = c.interval(0.9)                     # of ECE_a - ECE_b
    >>> bool(hi < 0), bool(c.prob_a_better > 0.95)
    (True, True)
    """

    a: BayesianECE
    b: BayesianECE
    diff_draws: np.ndarray
    counts: np.ndarray
    concentration: np.ndarray
    names: tuple[str, str] = ("A", "B")

    # mean, std, median, interval(prob), hdi(prob) summarise the difference;
    # summary() shows the two ECEs and their difference
    _draws_attr = "diff_draws"
    _summary_vars = ["ece_a", "ece_b", "ece_diff"]

    @property
    def diff_under_priors(self) -> np.ndarray | None:
        """The difference's draws under the four priors (class docstring),
        shape (4, S); None where the models are not averaged with exact
        calibration."""
        smooth_a, smooth_b = self.a.miscalibrated_draws, self.b.miscalibrated_draws
        if smooth_a is None or smooth_b is None:
            return None
        return differences_under_priors(smooth_a, smooth_b, self.a.draws, self.b.draws)

    def interval(self, prob: float = 0.9) -> tuple[float, float]:
        """Equal-tailed credible interval of :math:`\\mathrm{ECE}_a - \\mathrm{ECE}_b`:
        the (1-prob)/2 and (1+prob)/2 quantiles of ``diff_draws``, or, where
        ``diff_under_priors`` is set, the lowest and highest of them over its
        four priors (Notes)."""
        under = self.diff_under_priors
        if under is None:
            return super().interval(prob)
        prob = check_prob(prob)
        q = np.quantile(under, [(1 - prob) / 2, (1 + prob) / 2], axis=1)
        return float(q[0].min()), float(q[1].max())

    def upper_bound(self, prob: float = 0.9) -> float:
        """One-sided credible bound of the difference: the ``prob`` quantile of
        ``diff_draws``, or its highest over ``diff_under_priors`` (Notes)."""
        under = self.diff_under_priors
        if under is None:
            return super().upper_bound(prob)
        prob = check_prob(prob)
        return float(np.quantile(under, prob, axis=1).max())

    def named(self, name_a: str, name_b: str) -> Comparison:
        """The same comparison, its text and JSON calling the two models
        ``name_a`` and ``name_b`` instead of A and B (two distinct non-empty
        strings): ``compare(y, p_resnet, p_vit).named("resnet", "vit")``."""
        names = (name_a, name_b)
        if not all(isinstance(n, str) and n.strip() for n in names) or name_a == name_b:
            raise ValueError(f"names must be two distinct non-empty strings, e.g. "
                             f"named('resnet', 'vit'), got {names!r}")
        return replace(self, names=names)

    @property
    def prob_a_better(self) -> float:
        """Posterior probability that A is better calibrated, :math:`P(\\mathrm{ECE}_a < \\mathrm{ECE}_b)`.

        The fraction of draws with :math:`\\Delta < 0`; its Monte Carlo
        standard error is :math:`\\sqrt{P(1-P)/S}`.
        """
        return float(np.mean(self.diff_draws < 0))

    def to_inference_data(self) -> Any:  # arviz.InferenceData (0.2x) or xarray.DataTree (1.x)
        """The joint draws in ArviZ's format on the installed ArviZ
        (``arviz.InferenceData`` on 0.2x, ``xarray.DataTree`` on 1.x; see
        :meth:`BayesianECE.to_inference_data <bece.BayesianECE.to_inference_data>`).

        ``posterior`` holds ``ece_a``, ``ece_b``, ``ece_diff`` (chain, draw)
        and ``accuracy_a``, ``confidence_a``, ``weight_a`` (chain, draw,
        bin_a), likewise for b; ``constant_data`` holds ``joint_counts``
        (z_a, bin_a, z_b, bin_b), ``edges_a`` and ``edges_b``. Independent
        draws are stored as one chain.
        """
        m_a, m_b = self.a.stats.n_bins, self.b.stats.n_bins
        posterior = {"ece_a": self.a.draws[None], "ece_b": self.b.draws[None],
                     "ece_diff": self.diff_draws[None]}
        dims: dict[str, list[str]] = {}
        for tag, r in (("a", self.a), ("b", self.b)):
            for name in ("accuracy", "confidence", "weight"):
                posterior[f"{name}_{tag}"] = getattr(r, name)[None]
                dims[f"{name}_{tag}"] = [f"bin_{tag}"]
            dims[f"edges_{tag}"] = [f"edge_{tag}"]
        dims["joint_counts"] = ["z_a", "bin_a", "z_b", "bin_b"]
        constant = {"joint_counts": self.counts, "edges_a": self.a.stats.edges,
                    "edges_b": self.b.stats.edges}
        coords = {"bin_a": np.arange(m_a), "bin_b": np.arange(m_b), "z_a": [0, 1], "z_b": [0, 1],
                  "edge_a": np.arange(m_a + 1), "edge_b": np.arange(m_b + 1)}
        attrs = {"n": self.a.stats.n, "plugin_ece_a": self.a.plugin, "plugin_ece_b": self.b.plugin,
                 "prob_a_better": self.prob_a_better, "method": "conjugate-paired",
                 "model": self.a.model, "input_kind": str(self.a.kind)}
        return from_dict({"posterior": posterior, "constant_data": constant}, coords=coords, dims=dims,
                         attrs={"posterior": attrs})

    def __repr__(self) -> str:
        lo, hi = self.interval(0.9)
        return (
            f"Comparison(ece_a={self.a.mean:.4f}, ece_b={self.b.mean:.4f}, "
            f"diff={self.mean:+.4f}, interval90=[{lo:+.4f}, {hi:+.4f}], "
            f"prob_a_better={self.prob_a_better:.3f}, n={self.a.stats.n}, "
            f"num_samples={self.num_samples}, model={self.a.model!r}, kind={self.a.kind!r})"
        )

    def _html_diagram(self) -> str | None:
        a, b = self.names
        return histogram_svg(self.diff_draws, label=f"posterior of ECE_{a} - ECE_{b}, 90% shaded",
                             interval=self.interval(0.9), marks={"equal": 0.0})

    def to_dict(self, prob: float = 0.9) -> dict[str, Any]:
        """Plain Python (JSON): the numbers ``bece compare --json`` prints.

        ``model``, ``input_kind``, ``n``, ``n_bins``, ``names`` (what A and
        B are called), ``a`` and ``b`` (each
        ``plugin_ece`` and ``ece``: ``mean``, ``std``, ``prob``,
        ``interval``; with exact calibration in the model, its
        ``prob_calibrated`` and ``prior_odds``), ``diff`` (ECE_A - ECE_B,
        as ``ece``; where the interval is robust over the prior odds of
        exact calibration, ``interval_prior_odds``: their range) and
        ``prob_a_better``.
        """
        prob = check_prob(prob)

        def one(r: Any) -> dict[str, Any]:
            lo, hi = r.interval(prob)
            out = {"plugin_ece": r.plugin,
                   "ece": {"mean": r.mean, "std": r.std, "prob": prob, "interval": [lo, hi]}}
            if r.prob_calibrated is not None:
                out["prob_calibrated"] = r.prob_calibrated
                out["prior_odds"] = r.prior_odds
            return out

        lo, hi = self.interval(prob)
        diff = {"mean": self.mean, "std": self.std, "prob": prob, "interval": [lo, hi]}
        if self.a.miscalibrated_draws is not None:  # the interval is robust (class docstring)
            diff["interval_prior_odds"] = [0.0, self.a.prior_odds]
        return {
            "model": self.a.model, "input_kind": self.a.stats.kind,
            "n": self.a.stats.n, "n_bins": self.a.stats.n_bins, "names": list(self.names),
            "a": one(self.a), "b": one(self.b),
            "diff": diff,
            "prob_a_better": self.prob_a_better,
        }

    def text(self, prob: float = 0.9) -> str:
        """The lines a person reads, as ``bece compare`` prints them under its
        header: the verdict, the input, both ECEs and their difference with
        ``prob`` intervals, P(ECE_A < ECE_B), the model and how it is validated."""
        from .verdict import comparison_verdict, prob_text

        d = self.to_dict(prob)
        name_a, name_b = self.names
        head = f"{prob:.0%} interval"
        diff = f"{name_a} - {name_b}"
        w = max(8, len(diff))
        verdict = comparison_verdict(d["prob_a_better"], d["diff"]["interval"], prob=prob,
                                     names=self.names)
        lines = [
            f"  verdict       {verdict}",
            f"  predictions   {d['n']:,} ({input_words(self.a.kind)})",
            "",
            f"  {'':<{w}} {'Bayesian ECE':>12}  {head:<20}  {'plug-in ECE':>11}",
        ]
        for tag, name in (("a", name_a), ("b", name_b)):
            e = d[tag]["ece"]
            lo, hi = e["interval"]
            lines.append(f"  {name:<{w}} {e['mean']:>12.4f}  {f'[{lo:.4f}, {hi:.4f}]':<20}  "
                         f"{d[tag]['plugin_ece']:>11.4f}")
        lo, hi = d["diff"]["interval"]
        plug = d["a"]["plugin_ece"] - d["b"]["plugin_ece"]
        lines += [
            f"  {diff:<{w}} {d['diff']['mean']:>+12.4f}  {f'[{lo:+.4f}, {hi:+.4f}]':<20}  "
            f"{plug:>+11.4f}",
            "",
            f"  P(ECE_{name_a} < ECE_{name_b}){prob_text(d['prob_a_better'], self.num_samples)}   "
            f"({self.num_samples:,} joint draws)",
            *(PAIRING_SMOOTH if self.a.model == "smooth" else PAIRING_BINNED),
        ]
        if "prob_calibrated" in d["a"] and d["a"]["prior_odds"]:
            lines.append(f"                each averaged with ECE 0 by P(calibrated): {name_a} "
                         f"{format_prob(d['a']['prob_calibrated'])}, {name_b} "
                         f"{format_prob(d['b']['prob_calibrated'])} "
                         f"(prior odds {d['a']['prior_odds']:g})")
        if "interval_prior_odds" in d["diff"]:
            lines.append(f"                the difference's interval holds for each model's prior "
                         f"odds from 0 to {d['a']['prior_odds']:g}")
        lines.append("  validated     by simulated coverage (no joint NumPyro model to cross-check)")
        return "\n".join(lines)

    def __str__(self) -> str:
        """:meth:`text` at 90%: what ``bece compare`` prints under its header."""
        return self.text()


def differences_under_priors(smooth_a: np.ndarray, smooth_b: np.ndarray, averaged_a: np.ndarray,
                             averaged_b: np.ndarray) -> np.ndarray:
    """The difference's draws under each prior of the class the interval is robust over.

    Each model's prior odds of exact calibration is either 0 (its smooth
    model alone) or the comparison's :math:`O` (its draws averaged with
    exact calibration: 0 where its indicator picked :math:`H_0`); all four
    share the paired draws and the indicators.

    Parameters
    ----------
    smooth_a, smooth_b : ndarray of shape (S,)
        The paired smooth draws (prior odds 0; a result's ``miscalibrated_draws``).
    averaged_a, averaged_b : ndarray of shape (S,)
        The same draws averaged at the prior odds :math:`O` (a result's ``draws``).

    Returns
    -------
    ndarray of shape (4, S)
        Rows: odds (0, 0), (O, 0), (0, O), (O, O) for (A, B).

    Examples
    --------
    >>> import numpy as np
    >>> from bece._results.comparison import differences_under_priors
    >>> d = differences_under_priors(np.array([0.04, 0.05]), np.array([0.02, 0.03]),
    ...                              np.array([0.04, 0.0]), np.array([0.0, 0.03]))
    >>> d.round(2).tolist()
    [[0.02, 0.02], [0.02, -0.03], [0.04, 0.02], [0.04, -0.03]]
    """
    return np.stack([smooth_a - smooth_b, averaged_a - smooth_b, smooth_a - averaged_b,
                     averaged_a - averaged_b])
