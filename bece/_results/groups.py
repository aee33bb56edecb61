"""Result of calibration by group: each group's ECE posterior and what tells them apart."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._base.arviz import from_dict
from .._base.checks import check_prob
from .._stats.groups import GroupStats
from .html import HTMLDisplay
from .summaries import numbers_table
from .text import format_prob, input_words

__all__ = ["GroupECE", "plain_name"]

#: What each pooling is, in words.
POOLING_WORDS = {
    "partial": ("partial pooling: each group's curve is a shared curve plus its own logit shift "
                "and slope change, of learned spread"),
    "none": "no pooling: each group's posterior from its own data alone",
}


def _worst(draws: np.ndarray) -> np.ndarray:
    top = draws.max(axis=1, keepdims=True)
    tied = draws == top
    return (tied / tied.sum(axis=1, keepdims=True)).mean(axis=0)


def _equals(text: str) -> str:
    """``= 0.123``, or ``< 0.001`` as it is."""
    return text if text[:1] in "<>" else f"= {text}"


def plain_name(g: Any) -> Any:
    """A group as plain Python for JSON: a window of time as ISO text."""
    if isinstance(g, np.datetime64):
        return str(g)
    return g.item() if hasattr(g, "item") else g


@dataclass(frozen=True, repr=False, eq=False)
class GroupECE(HTMLDisplay):
    """Posterior draws of each group's ECE (:func:`bece.bayesian_ece` with ``by=``).

    Attributes
    ----------
    groups : ndarray of shape (G,)
        The groups, sorted; the order of every per-group array.
    draws : ndarray of shape (S, G)
        Each group's ECE in each posterior draw (the population binned ECE of
        the group's predictions).
    stats : GroupStats
        Each group's statistics in the ECE bins.
    pooling : {"partial", "none"}
    prob_calibrated : float
        Probability that every group is exactly calibrated: the product of
        :attr:`group_prob_calibrated`.
    prior_odds : float
    kind : str or None
        How the predictions were read (``"binary"``, ``"top-label"``, ``"triples"``).
    gap_draws : ndarray of shape (S, G) or None
        Partial pooling: each group's mean gap between its curve and the
        shared curve over its predictions (:mod:`bece._smooth.groups`).
    independent_draws : ndarray of shape (S, G) or None
        Partial pooling: each group's ECE from its own data alone (the
        posterior ``pooling="none"`` gives).
    group_prob_calibrated : ndarray of shape (G,) or None
        Each group's probability of exact calibration, from its own data
        (:mod:`bece._smooth.groups`).
    params : object
        The fit (the hierarchical model's Laplace mixture, or one smooth
        posterior per group).

    Examples
    --------
    >>> import numpy as np
    >>> from bece import bayesian_ece
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=3000)
    >>> group = np.repeat(["a", "b", "c"], 1000)
    >>> truth = np.where(group == "c", p ** 2, p)           # c over-predicts
    >>> y = rng.uniform(size=3000) < truth
    >>> r = bayesian_ece(y, p, by=group, num_samples=2000, seed=1)
    >>> r.groups.tolist(), r.draws.shape
    (['a', 'b', 'c'], (2000, 3))
    >>> lo, hi = r.interval(0.9)
    >>> bool(lo[2] > hi[0]), int(np.argmax(r.prob_worst)), r.hidden().tolist()
    (True, 2, [False, False, False])
    """

    groups: np.ndarray
    draws: np.ndarray
    stats: GroupStats
    pooling: str
    prob_calibrated: float
    prior_odds: float
    kind: str | None = None
    gap_draws: np.ndarray | None = field(default=None, repr=False)
    independent_draws: np.ndarray | None = field(default=None, repr=False)
    group_prob_calibrated: np.ndarray | None = None
    params: Any = field(default=None, repr=False)

    model = "smooth-groups"

    # ------------------------------------------------------------ numbers
    @property
    def n_groups(self) -> int:
        return int(self.groups.shape[0])

    @property
    def num_samples(self) -> int:
        return int(self.draws.shape[0])

    @property
    def n(self) -> np.ndarray:
        """Predictions per group, int64."""
        return np.array([s.n for s in self.stats.stats], dtype=np.int64)

    @property
    def plugin(self) -> np.ndarray:
        """Each group's plug-in ECE on the same bins."""
        return np.array([np.abs(s.counts[1] - s.sum_p).sum() / s.n for s in self.stats.stats])

    @property
    def mean(self) -> np.ndarray:
        """Each group's posterior mean ECE."""
        return self.draws.mean(axis=0)

    def interval(self, prob: float = 0.9) -> tuple[np.ndarray, np.ndarray]:
        """Equal-tailed credible interval of each group's ECE: two arrays of shape (G,)."""
        prob = check_prob(prob)
        lo, hi = np.quantile(self.draws, [(1 - prob) / 2, (1 + prob) / 2], axis=0)
        return lo, hi

    def independent_interval(self, prob: float = 0.9) -> tuple[np.ndarray, np.ndarray] | None:
        """Equal-tailed interval of each group's own posterior (its data
        alone): two arrays of shape (G,); None without them."""
        if self.independent_draws is None:
            return None
        prob = check_prob(prob)
        lo, hi = np.quantile(self.independent_draws, [(1 - prob) / 2, (1 + prob) / 2], axis=0)
        return lo, hi

    @property
    def prob_worst(self) -> np.ndarray:
        """P(each group has the largest ECE); draws where groups tie (all
        exactly calibrated) count a share for each. Sums to 1."""
        return _worst(self.draws)

    def differs(self, prob: float = 0.95) -> np.ndarray | None:
        """Partial pooling: whether each group's mean gap to the shared curve
        has a ``prob`` interval that excludes 0 (None without pooling)."""
        if self.gap_draws is None:
            return None
        prob = check_prob(prob)
        lo, hi = np.quantile(self.gap_draws, [(1 - prob) / 2, (1 + prob) / 2], axis=0)
        return (lo > 0) | (hi < 0)

    def hidden(self, prob: float = 0.9) -> np.ndarray | None:
        """Partial pooling: groups whose pooled posterior mean lies below the
        ``(1 - prob) / 2`` quantile of their own posterior (their own data
        put the ECE above the pooled estimate with probability
        ``(1 + prob) / 2``): pooling may hide their miscalibration. None
        without pooling."""
        own = self.independent_interval(prob)
        return None if own is None else own[0] > self.mean

    # ------------------------------------------------------------ words
    def to_dict(self, prob: float = 0.9) -> dict[str, Any]:
        """Plain Python for JSON: the options and one record per group."""
        prob = check_prob(prob)
        lo, hi = self.interval(prob)
        rows = []
        differs, hidden = self.differs(), self.hidden(prob)
        ind = self.independent_interval(prob)
        gap = None if self.gap_draws is None else self.gap_draws.mean(axis=0)
        n, plugin, mean, worst = self.n, self.plugin, self.mean, self.prob_worst  # once, not per group
        for j, g in enumerate(self.groups):
            row: dict[str, Any] = {
                "group": plain_name(g), "n": int(n[j]), "plugin": float(plugin[j]),
                "mean": float(mean[j]), "interval": [float(lo[j]), float(hi[j])],
                "prob_worst": float(worst[j]),
            }
            if gap is not None and differs is not None:
                row["gap_mean"] = float(gap[j])
                row["differs"] = bool(differs[j])
            if ind is not None and hidden is not None:
                row["independent_interval"] = [float(ind[0][j]), float(ind[1][j])]
                row["hidden"] = bool(hidden[j])
            if self.group_prob_calibrated is not None:
                row["prob_calibrated"] = float(self.group_prob_calibrated[j])
            rows.append(row)
        return {"model": self.model, "pooling": self.pooling, "input_kind": self.kind,
                "n": int(n.sum()), "n_bins": int(self.stats.binning.n_bins),
                "num_samples": self.num_samples, "prob": prob,
                "prob_calibrated": float(self.prob_calibrated), "prior_odds": self.prior_odds,
                "groups": rows}

    def summary(self, prob: float = 0.9) -> Any:  # pandas.DataFrame
        """One row per group: n, plug-in, posterior mean, interval, P(worst)
        and, where computed, the gap to the shared curve and the independent interval."""
        rows = {}
        for r in self.to_dict(prob)["groups"]:
            r = dict(r)
            name = r.pop("group")
            lo, hi = r.pop("interval")
            r["lower"], r["upper"] = lo, hi
            if "independent_interval" in r:
                r["independent_lower"], r["independent_upper"] = r.pop("independent_interval")
            rows[str(name)] = r
        return numbers_table(rows)

    def text(self, prob: float = 0.9) -> str:
        """The table and the lines a person reads (``bece report --by``)."""
        prob = check_prob(prob)
        d = self.to_dict(prob)
        pct = f"{100 * prob:g}%"
        lines = [
            f"ECE by group: {self.n_groups} groups, {d['n']:,} predictions "
            f"({input_words(self.kind)}), {d['n_bins']} bins",
            f"smooth model, {POOLING_WORDS[self.pooling]}",
            f"P(every group exactly calibrated) {_equals(format_prob(self.prob_calibrated))}",
            "",
        ]
        names = [str(r["group"]) for r in d["groups"]]
        w = max(5, *(len(s) for s in names))
        head = f"{'group':<{w}}  {'n':>9}  {'plug-in':>7}  {'mean':>7}  {pct + ' interval':>18}  " \
               f"{'P(worst)':>8}"
        if self.gap_draws is not None:
            head += f"  {'vs shared':>9}"
        if self.independent_draws is not None:
            head += f"  {'alone, ' + pct:>18}"
        lines.append(head)
        for name, r in zip(names, d["groups"]):
            lo, hi = r["interval"]
            line = (f"{name:<{w}}  {r['n']:>9,}  {r['plugin']:>7.4f}  {r['mean']:>7.4f}  "
                    f"{f'[{lo:.4f}, {hi:.4f}]':>18}  {format_prob(r['prob_worst']):>8}")
            if "differs" in r:
                word = ("-" if not r["differs"] else
                        "above" if r["gap_mean"] > 0 else "below")
                line += f"  {word:>9}"
            if "independent_interval" in r:
                a, b = r["independent_interval"]
                line += f"  {f'[{a:.4f}, {b:.4f}]':>18}"
            lines.append(line)
        lines.append("")
        if self.gap_draws is not None:
            lines.append("vs shared: the group's curve lies above or below the shared curve over "
                         "its predictions (95% interval of the mean gap excludes 0); - : no "
                         "evidence that it differs")
        if self.independent_draws is not None:
            gain = self.pooling_gain(prob)
            effect = (f"narrows the mean {pct} interval by {gain:.0%}" if gain >= 0 else
                      f"widens the mean {pct} interval by {-gain:.0%}")
            lines.append(f"alone: the group's own posterior, without pooling "
                         f"(pooling=\"none\"); here pooling {effect}")
        for r in d["groups"]:
            if r.get("hidden"):
                a, b = r["independent_interval"]
                lo, hi = r["interval"]
                lines.append(
                    f"warning: pooling may hide the miscalibration of group {r['group']!r} "
                    f"(n = {r['n']:,}): its own data give ECE [{a:.4f}, {b:.4f}], above its "
                    f"pooled mean {r['mean']:.4f}; read its own posterior "
                    "(pooling=\"none\", --pooling none)")
        return "\n".join(lines)

    def pooling_gain(self, prob: float = 0.9) -> float:
        """1 - (mean width of the pooled intervals) / (mean width of the
        independent ones); NaN without the independent posteriors."""
        own = self.independent_interval(prob)
        if own is None:
            return float("nan")
        lo, hi = self.interval(prob)
        a, b = own
        width = float(np.mean(b - a))
        return float(1.0 - np.mean(hi - lo) / width) if width > 0 else float("nan")

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return (f"GroupECE(n_groups={self.n_groups}, n={int(self.n.sum())}, "
                f"pooling={self.pooling!r}, num_samples={self.num_samples}, "
                f"prob_calibrated={self.prob_calibrated:.4f}, kind={self.kind!r})")

    # ------------------------------------------------------------ ArviZ
    def to_inference_data(self) -> Any:  # arviz.InferenceData (0.2x) or xarray.DataTree (1.x)
        """The draws in ArviZ's format (as :meth:`bece.BayesianECE.to_inference_data`):
        ``posterior`` holds ``ece`` (chain, draw, group) and, where
        computed, ``gap`` and ``independent_ece``; ``constant_data`` the
        groups' counts ``n`` and plug-in ECEs."""
        posterior = {"ece": self.draws[None]}
        dims: dict[str, list[str]] = {"ece": ["group"], "n": ["group"], "plugin_ece": ["group"]}
        if self.gap_draws is not None:
            posterior["gap"] = self.gap_draws[None]
            dims["gap"] = ["group"]
        if self.independent_draws is not None:
            posterior["independent_ece"] = self.independent_draws[None]
            dims["independent_ece"] = ["group"]
        names = self.groups if self.groups.dtype.kind in "iubfM" else self.groups.astype(str)
        return from_dict(
            groups={"posterior": posterior,
                    "constant_data": {"n": self.n, "plugin_ece": self.plugin}},
            coords={"group": names}, dims=dims,
            attrs={"posterior": {"model": self.model, "pooling": self.pooling,
                                 "prob_calibrated": self.prob_calibrated,
                                 "prior_odds": self.prior_odds, "input_kind": str(self.kind)}})
