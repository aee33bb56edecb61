"""Metrics from one pass over chunks: sums that add across chunks, and which
metrics need the whole data instead.

:class:`MetricSums` holds, for (outcome, confidence) pairs :math:`(z_i, p_i)`
(:mod:`bece._metrics.pairs`; unweighted) in fixed bins: per bin the count and
the sums of :math:`p`, :math:`z`, :math:`u = z - p` and :math:`u^2`; over all
pairs the sums of the log loss terms and of Spiegelhalter's numerator and
variance. Two :class:`MetricSums` of disjoint rows add (``a + b``), as
:class:`bece.CalibrationStats` do for the ECE, so a file is read chunk by
chunk in bounded memory. As there, the sums are exact (int64 limbs,
:mod:`bece._stats.exact`; a signed term as its positive and negative
parts), so every cut of the rows into chunks, and the arrays in memory,
give the same metrics and intervals to the last bit. From them, exactly as the in-memory functions:

* ``l2``, ``debiased_l2``: :func:`~bece.metrics.l2_calibration_error`
  (plug-in, Kumar's debiased) on these bins;
* ``l2_sun``: :func:`~bece.metrics.l2_ece_interval` (its interval too);
* ``brier``: :func:`~bece.metrics.brier_score`, with Murphy's decomposition
  on these bins (:func:`~bece.metrics.brier_decomposition` with
  ``binning=``);
* ``log_loss``: :func:`~bece.metrics.log_loss`;
* ``citl``: :func:`~bece.metrics.calibration_in_the_large`;
* ``spiegelhalter``: :func:`~bece.metrics.spiegelhalter_z`.

The other metrics of :data:`~bece._metrics.registry.METRIC_NAMES` need every pair at
once (:data:`WHOLE_DATA`): the smooth ECE and ECE_sweep (sorted pairs), the
KS error (cumulative sums in sorted order), the calibration slope and the
logistic calibration intercept (Newton iterations over all pairs),
Hosmer-Lemeshow (its groups are cut at the deciles of the confidences, which
one pass cannot know before it ends; a second pass could count them from
the quantiles, but the deciles of a chunked file are not exact without
holding or sorting all confidences, so it is computed on the whole data).

Intervals from one pass: the Poisson bootstrap of
:func:`~bece.metrics.bootstrap_interval` (its default). Each pair gets
``n_boot`` independent Poisson(1) counts, one per replicate
(:func:`~bece._metrics.bootstrap.poisson_weights`), and every replicate's
sums are added like the sums themselves; the percentile interval of a
metric is taken over the replicates. The counts of a pair depend only on
``seed`` and its row number in the file, so the intervals do not depend on
how the file is cut into chunks, and they equal (to float64 rounding)
``bootstrap_interval(metric, ..., seed=seed)`` on the whole data, which
repeats row i ``w[i, r]`` times in replicate r.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._base.checks import check_prob
from .._stats import exact
from .._stats.binning import Binning
from .bootstrap import BLOCK, poisson_weights
from .l2 import l2_from_bin_means
from .l2_interval import l2_interval_from_sums

__all__ = [
    "MERGEABLE",
    "WHOLE_DATA",
    "MetricSums",
    "metric_sums",
    "streamed_metrics",
]

#: Metrics computed from :class:`MetricSums`, with their labels.
MERGEABLE: dict[str, str] = {
    "l2": "binned l2 (RMS) ECE",
    "debiased_l2": "debiased l2 ECE (Kumar et al. 2019)",
    "l2_sun": "debiased l2 ECE (Sun et al. 2024)",
    "brier": "Brier score",
    "log_loss": "log loss",
    "citl": "calibration-in-the-large (mean p - mean y)",
    "spiegelhalter": "Spiegelhalter's Z",
}

#: Metrics that need all pairs in memory, and why.
WHOLE_DATA: dict[str, str] = {
    "smooth_ece": "kernel smoothing over the sorted pairs",
    "ece_sweep": "equal-count bins of the sorted pairs",
    "ks": "cumulative sums in sorted order",
    "slope": "Newton iterations over all pairs",
    "intercept": "Newton iterations over all pairs",
    "hosmer_lemeshow": "groups cut at the deciles of the confidences: equal-count groups "
                       "of the sorted pairs",
}

# per-bin sums: count, p, z, u, u^2; scalars: log loss, number of infinite
# log loss terms, Spiegelhalter's numerator and variance
_BIN = 5
_SCALAR = 4

# Exact sums (bece._stats.exact): per bin the counts of pairs and of z = 1
# (int64), and the limb sums of p and u^2 (in [0, 1]); over all pairs the
# number of infinite log loss terms and the limb sums of the finite log loss
# terms, of the positive and negative parts of (z - p)(1 - 2p) and of
# (1 - 2p)^2 p (1 - p). Limbs are float64 columns holding integers, so a
# product with the Poisson counts of a block of BLOCK rows (at most
# 4096 x 19 x 2^26 < 2^53) is exact in any order of summation.
_ROWS = 1 << 16  # rows per pass: 22 float64 columns per row


def _limb_columns(x: np.ndarray, unit: bool) -> list[np.ndarray]:
    """The limbs of ``x >= 0`` as float64 columns: three fractional ones for
    ``x`` in [0, 1] (``unit``), else the integer part and three."""
    return list(exact.fraction_limbs(x) if unit else exact.limbs(x))


def _row_terms(z: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pair: the bin columns (count, z, limbs of p, limbs of u^2: 8), the
    scalar columns (limbs of the finite log loss term, of (z - p)(1 - 2p)'s
    positive and negative parts and of (1 - 2p)^2 p (1 - p): 16) and the
    indicator of an infinite log loss term."""
    u = z - p
    q = np.where(z > 0.5, p, 1.0 - p)
    with np.errstate(divide="ignore"):
        t = -np.log(q)
    inf = ~np.isfinite(t)
    c = 1.0 - 2.0 * p
    uc = u * c
    bins = np.stack([np.ones_like(p), z, *_limb_columns(p, True),
                     *_limb_columns(u * u, True)], axis=1)
    scalars = np.stack([*_limb_columns(np.where(inf, 0.0, t), False),
                        *_limb_columns(np.maximum(uc, 0.0), True),
                        *_limb_columns(np.maximum(-uc, 0.0), True),
                        *_limb_columns(c * c * p * (1.0 - p), True)], axis=1)
    return bins, scalars, inf.astype(np.float64)


class MetricSums:
    """Sums of (outcome, confidence) pairs that add across chunks, exactly.

    The float views: ``bins`` (M, 5), per bin the count and the sums of p,
    z, z - p and (z - p)^2; ``scalars`` (4,), the sum of -log q (q the
    probability given to the outcome; finite terms), the number of infinite
    terms, the sums of (z - p)(1 - 2p) and of (1 - 2p)^2 p (1 - p);
    ``boot_bins`` (B, M, 5) and ``boot_scalars`` (B, 4), the same weighted
    by each replicate's Poisson counts. They are read from exact sums
    (:mod:`bece._stats.exact`), so any cut of the pairs into chunks, and the
    arrays in memory, give the same bits.
    """

    __slots__ = ("_counts", "_inf", "_scalar_sums", "_sums", "binning", "boot_bins",
                 "boot_scalars", "bins", "scalars", "seed")

    def __init__(self, binning: Binning, counts: np.ndarray, sums: np.ndarray, inf: np.ndarray,
                 scalar_sums: np.ndarray, seed: int) -> None:
        """``counts`` (1 + B, M, 2) int64, the (weighted) counts of pairs and
        of z = 1 per bin, replicate 0 the data itself; ``sums`` (1 + B, 2, 4,
        M) the limb sums of p and u^2; ``inf`` (1 + B,) the infinite log loss
        terms; ``scalar_sums`` (1 + B, 4, 4, 1) the limb sums of the finite log
        loss terms, of the positive and negative parts of (z - p)(1 - 2p) and
        of (1 - 2p)^2 p (1 - p)."""
        self.binning, self.seed = binning, int(seed)
        self._counts, self._inf = counts, inf
        self._sums, self._scalar_sums = exact.normalise(sums), exact.normalise(scalar_sums)
        cnt, nz = counts[..., 0].astype(np.float64), counts[..., 1].astype(np.float64)
        sp, su2 = exact.value(self._sums).transpose(1, 0, 2)  # (1 + B, M) each
        su = exact.value(exact.normalise(exact.of_floats(nz) - self._sums[:, 0]))
        t, _, _, v = exact.value(self._scalar_sums)[..., 0].T
        uc = exact.value(exact.normalise(self._scalar_sums[:, 1] - self._scalar_sums[:, 2]))[:, 0]
        every = np.stack([cnt, sp, nz, su, su2], axis=-1)
        scal = np.stack([t, inf.astype(np.float64), uc, v], axis=-1)
        self.bins, self.boot_bins = every[0], every[1:]
        self.scalars, self.boot_scalars = scal[0], scal[1:]

    @property
    def n(self) -> int:
        return int(self._counts[0, :, 0].sum())

    def __add__(self, other: MetricSums) -> MetricSums:
        if not isinstance(other, MetricSums):
            return NotImplemented
        if (not np.array_equal(self.binning.edges, other.binning.edges)
                or self._counts.shape != other._counts.shape or self.seed != other.seed):
            raise ValueError("MetricSums add only with the same bins, n_boot and seed")
        return MetricSums(self.binning, self._counts + other._counts, self._sums + other._sums,
                          self._inf + other._inf, self._scalar_sums + other._scalar_sums,
                          self.seed)


def metric_sums(z: np.ndarray, p: np.ndarray, binning: Binning, *, start: int = 0,
                n_boot: int = 200, seed: int = 0) -> MetricSums:
    """The sums of pairs ``start, start + 1, ...`` of a file (or of all data
    with ``start=0``).

    Parameters
    ----------
    z, p : ndarray of shape (n,)
        Outcomes (0/1) and confidences, checked (:mod:`bece._metrics.pairs`).
    binning : Binning
        Fixed bins (:mod:`bece._stats.binning`).
    start : int, default 0
        Row number of the first pair (its bootstrap weights depend on it).
    n_boot : int, default 200
        Poisson-bootstrap replicates (0 for none).
    seed : int, default 0

    Examples
    --------
    >>> import numpy as np
    >>> from bece._metrics.streaming import metric_sums, streamed_metrics
    >>> from bece._stats.binning import make_binning
    >>> z, p = np.array([0.0, 1, 1, 1]), np.array([0.2, 0.6, 0.7, 0.9])
    >>> bins = make_binning(None, 2)
    >>> s = metric_sums(z[:2], p[:2], bins) + metric_sums(z[2:], p[2:], bins, start=2)
    >>> round(streamed_metrics(s, ["l2"])["l2"]["value"], 12)
    0.251661147842
    >>> s.bins.tolist() == metric_sums(z, p, bins).bins.tolist()   # to the last bit
    True
    """
    z = np.asarray(z, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64)
    m = binning.n_bins
    idx = binning.index(p)
    reps = 1 + n_boot
    counts = np.zeros((reps, m, 2), dtype=np.int64)
    sums = np.zeros((reps, 2, exact.N_LIMBS, m), dtype=np.int64)
    inf = np.zeros(reps, dtype=np.int64)
    scalar_sums = np.zeros((reps, 4, exact.N_LIMBS, 1), dtype=np.int64)

    def add(r: slice, bins: np.ndarray, scalars: np.ndarray, infinite: np.ndarray) -> None:
        # bins (R, M, 8), scalars (R, 13), infinite (R,): float64 holding integers
        k = bins.shape[0]
        counts[r] += np.rint(bins[..., :2]).astype(np.int64)
        limbs = np.rint(bins[..., 2:]).astype(np.int64).reshape(k, m, 2, 3)
        sums[r, :, 1:, :] += limbs.transpose(0, 2, 3, 1)
        s = np.rint(scalars).astype(np.int64)
        scalar_sums[r, 0, :, 0] += s[:, 0:4]
        for j in range(3):
            scalar_sums[r, 1 + j, 1:, 0] += s[:, 4 + 3 * j:7 + 3 * j]
        inf[r] += np.rint(infinite).astype(np.int64)

    for a in range(0, p.size, _ROWS):
        cols, sc, infinite = _row_terms(z[a:a + _ROWS], p[a:a + _ROWS])
        sub_idx = idx[a:a + _ROWS]
        add(slice(0, 1), np.stack([np.bincount(sub_idx, weights=c, minlength=m)
                                   for c in cols.T], axis=1)[None],
            sc.sum(axis=0)[None], infinite.sum(keepdims=True))
        if not n_boot:
            continue
        # the replicates' sums of this pass, in float64: at most 2^16 rows x 19 x
        # 2^26 < 2^53, so exact
        boot = np.zeros((n_boot, m, cols.shape[1]))
        boot_sc = np.zeros((n_boot, sc.shape[1]))
        boot_inf = np.zeros(n_boot)
        at = 0
        while at < cols.shape[0]:
            # one block of BLOCK rows (aligned on row numbers) at a time: memory
            # BLOCK x n_boot, whatever the chunk size
            row = start + a + at
            take = min(BLOCK - row % BLOCK, cols.shape[0] - at)
            w = poisson_weights(row, take, n_boot, seed)  # (take, B)
            part = slice(at, at + take)
            sub = sub_idx[part]
            order = np.argsort(sub, kind="stable")
            cuts = np.concatenate([[0], np.cumsum(np.bincount(sub, minlength=m))])
            cb = cols[part]
            for b in np.flatnonzero(np.diff(cuts)):  # bin by bin over the rows sorted by bin
                rows = order[cuts[b]:cuts[b + 1]]
                boot[:, b, :] += w[rows].T @ cb[rows]
            boot_sc += w.T @ sc[part]
            boot_inf += w.T @ infinite[part]
            at += take
        add(slice(1, None), boot, boot_sc, boot_inf)
    return MetricSums(binning, counts, sums, inf, scalar_sums, int(seed))


def _values(name: str, bins: np.ndarray, scalars: np.ndarray) -> float:
    """One metric from sums (bins (M, 5), scalars (4,)); a metric without an
    interval (no replicates, or an infinite log loss) is reported without one."""
    cnt, sp, sz, su, su2 = bins.T
    n = cnt.sum()
    seen = cnt > 0
    share = cnt[seen] / n
    pbar, zbar = sp[seen] / cnt[seen], sz[seen] / cnt[seen]
    if name in ("l2", "debiased_l2"):
        return l2_from_bin_means(share, pbar, zbar, cnt[seen], debiased=name == "debiased_l2")
    if name == "brier":
        return float(su2.sum() / n)
    if name == "citl":
        return float(-su.sum() / n)
    if name == "log_loss":
        return float("inf") if scalars[1] > 0 else float(scalars[0] / n)
    raise ValueError(f"no one-pass value for {name!r}")


def streamed_metrics(sums: MetricSums, names: Any, *, prob: float = 0.9,
                     posterior_l2: np.ndarray | None = None) -> dict[str, dict[str, Any]]:
    """The one-pass metrics among ``names`` from ``sums``, each with its interval.

    Parameters
    ----------
    sums : MetricSums
    names : list of str
        Names of :data:`MERGEABLE` (others are skipped: see :data:`WHOLE_DATA`).
    prob : float, default 0.9
    posterior_l2 : ndarray, optional
        Posterior draws of the l2 ECE on the same bins
        (:func:`~bece.metrics.l2_ece_draws`): the l2 interval then comes from
        them instead of the bootstrap.

    Returns
    -------
    dict
        As :func:`bece.metrics.metric_report`; ``brier`` also carries its
        Murphy decomposition on the bins, and with ``posterior_l2`` the
        posterior interval of its reliability term (the squared binned l2
        ECE, so the squares of the same draws).
    """
    from scipy.stats import norm

    prob = check_prob(prob)
    out: dict[str, dict[str, Any]] = {}
    q = [(1 - prob) / 2, (1 + prob) / 2]
    n_boot = sums.boot_bins.shape[0]
    for name in names:
        if name not in MERGEABLE:
            continue
        label = MERGEABLE[name]
        if name == "spiegelhalter":
            num, var = sums.scalars[2], sums.scalars[3]
            if not var > 0:
                out[name] = {"label": label, "error": "Spiegelhalter's Z is undefined: its "
                             "variance is 0 because every y_prob is 0, 0.5 or 1"}
                continue
            stat = float(num / np.sqrt(var))
            out[name] = {"label": label, "statistic": stat,
                         "p_value": float(2.0 * norm.sf(abs(stat)))}
            continue
        if name == "l2_sun":
            b = sums.bins
            try:
                iv = l2_interval_from_sums(b[:, 0].astype(np.int64), b[:, 3], b[:, 4], prob=prob)
            except ValueError as exc:  # too few pairs: this metric only, not the report
                out[name] = {"label": label, "error": str(exc)}
                continue
            out[name] = {"label": label, "value": iv.estimate, "interval": [iv.low, iv.high],
                         "interval_method": f"asymptotic (Sun et al. 2024; {iv.rule})"}
            continue
        value = _values(name, sums.bins, sums.scalars)
        entry: dict[str, Any] = {"label": label, "value": value}
        if name == "log_loss" and not np.isfinite(value):
            entry["reason"] = (f"infinite: {int(sums.scalars[1])} prediction(s) gave the observed "
                               "outcome probability 0")
        if name == "l2" and posterior_l2 is not None:
            lo, hi = np.quantile(posterior_l2, q)
            entry.update(interval=[float(lo), float(hi)], interval_method="posterior")
        elif n_boot and np.isfinite(value):
            reps = np.array([_values(name, sums.boot_bins[r], sums.boot_scalars[r])
                             for r in range(n_boot) if sums.boot_bins[r, :, 0].sum() > 0])
            lo, hi = np.quantile(reps, q)
            entry.update(interval=[float(lo), float(hi)],
                         interval_method=f"Poisson bootstrap ({n_boot} replicates, one pass)")
        if name == "brier":
            entry["decomposition"] = _murphy(sums.bins)
            if posterior_l2 is not None:  # reliability = squared binned l2 ECE
                lo, hi = np.quantile(np.square(posterior_l2), q)
                entry["decomposition"]["reliability_interval"] = [float(lo), float(hi)]
                entry["decomposition"]["reliability_interval_method"] = (
                    "posterior (the squared l2 ECE draws)")
        out[name] = entry
    return out


def _murphy(bins: np.ndarray) -> dict[str, float]:
    """Murphy's decomposition on the bins (``brier_decomposition(binning=)``)."""
    cnt, sp, sz, _, su2 = bins.T
    n = cnt.sum()
    seen = cnt > 0
    pi = cnt[seen] / n
    pbar, zbar_g = sp[seen] / cnt[seen], sz[seen] / cnt[seen]
    zbar = float(sz.sum() / n)
    brier = float(su2.sum() / n)
    rel = float(np.dot(pi, (pbar - zbar_g) ** 2))
    res = float(np.dot(pi, (zbar_g - zbar) ** 2))
    unc = zbar * (1.0 - zbar)
    return {"reliability": rel, "resolution": res, "uncertainty": unc,
            "within": brier - rel + res - unc}
