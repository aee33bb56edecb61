"""The l2 (RMS) binned calibration error, Kumar's debiased estimator, ECE_sweep.

For pairs :math:`(z_i, p_i)` with weights :math:`w_i` (:mod:`bece._metrics.pairs`)
in bins :math:`b` with weight share :math:`\\pi_b`, mean confidence
:math:`\\bar p_b` and mean outcome :math:`\\bar z_b`:

.. math::

    \\mathrm{ECE}_2 = \\Big(\\sum_b \\pi_b (\\bar p_b - \\bar z_b)^2\\Big)^{1/2}.

Its square is biased upward by the binomial noise of :math:`\\bar z_b`.
Kumar, Liang & Ma (2019, "Verified uncertainty calibration") subtract it bin
by bin (unweighted counts :math:`n_b`; bins with :math:`n_b < 2` contribute
0) and take the root of the positive part:

.. math::

    \\widehat{\\mathrm{ECE}}_2^{\\,\\mathrm{debiased}} = \\Big(\\max\\Big(0,
    \\sum_b \\frac{n_b}{n}\\Big[(\\bar p_b - \\bar z_b)^2
    - \\frac{\\bar z_b (1 - \\bar z_b)}{n_b - 1}\\Big]\\Big)\\Big)^{1/2},

which is ``calibration.lower_bound_scaling_ce(probs, labels, p=2,
debias=True, ...)`` of their ``uncertainty-calibration`` package on the same
bins (their default bins are equal-mass with edges at midpoints between
groups: pass those as ``binning=`` edges to compare).

ECE_sweep (Roelofs, Cain, Shlens & Mozer 2022, "Mitigating bias in
calibration error estimation"): sort the pairs by confidence, split them into
:math:`b = 1, 2, \\dots` equal-count groups (``np.array_split`` of the sorted
order), and keep the largest :math:`b` before the first :math:`b` whose group
mean outcomes are not non-decreasing; the result is the
:math:`\\ell_p` binned error at that :math:`b`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._base.typing import BinningSpec
from .._stats.binning import Binning, make_binning
from .._stats.inputs import Inputs
from .pairs import weighted_pairs

__all__ = [
    "ece_sweep",
    "l2_calibration_error",
]


def _bin_means(z: np.ndarray, p: np.ndarray, w: np.ndarray, index: np.ndarray,
               size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per non-empty bin: weight share, mean p, mean z and the unweighted count."""
    ws = np.bincount(index, weights=w, minlength=size)
    sp = np.bincount(index, weights=w * p, minlength=size)
    sz = np.bincount(index, weights=w * z, minlength=size)
    cnt = np.bincount(index, minlength=size)
    seen = ws > 0
    return ws[seen] / ws.sum(), sp[seen] / ws[seen], sz[seen] / ws[seen], cnt[seen]


def l2_calibration_error(
    y_true: ArrayLike, y_prob: ArrayLike, *, y_pred: ArrayLike | None = None,
    n_bins: int | None = None, binning: BinningSpec | Binning = "uniform",
    debiased: bool = False, sample_weight: ArrayLike | None = None,
    labels: ArrayLike | None = None, pos_label: Any = None, from_logits: bool = False,
) -> float:
    """Binned l2 (root-mean-square) calibration error, plug-in or debiased.

    Parameters
    ----------
    y_true, y_prob, y_pred, labels, pos_label, from_logits
        As :func:`bece.expected_calibration_error`; (n, K) ``y_prob`` is read
        top-label (confidence against correctness).
    n_bins : int, default 15
    binning : {"uniform", "quantile"} or array_like, default "uniform"
        Bins of :mod:`bece._stats.binning`.
    debiased : bool, default False
        Kumar et al.'s debiased estimator (module docstring).
    sample_weight : array_like of shape (n,), optional
        Weights of the plug-in estimator; the debiased one is defined for
        counts and refuses them.

    Returns
    -------
    float

    Examples
    --------
    >>> from bece.metrics import l2_calibration_error
    >>> round(l2_calibration_error([0, 1, 1, 1], [0.2, 0.6, 0.7, 0.9], n_bins=2), 12)
    0.251661147842
    """
    if not isinstance(debiased, (bool, np.bool_)):
        raise ValueError(f"debiased must be True or False, got {debiased!r}")
    if debiased and sample_weight is not None:
        raise ValueError("sample_weight is not supported with debiased=True: Kumar et al.'s "
                         "correction z(1 - z)/(n_b - 1) is defined for unweighted counts")
    z, p, w = weighted_pairs(y_true, y_prob, y_pred=y_pred, sample_weight=sample_weight,
                             inputs=Inputs(labels, pos_label, from_logits))
    spec = make_binning(p, n_bins, binning)
    return l2_from_bin_means(*_bin_means(z, p, w, spec.index(p), spec.n_bins), debiased=debiased)


def l2_from_bin_means(share: np.ndarray, pbar: np.ndarray, zbar: np.ndarray, cnt: np.ndarray, *,
                      debiased: bool = False) -> float:
    """The binned l2 calibration error from its non-empty bins' weight shares,
    mean confidences, mean outcomes and counts (plug-in, or Kumar et al.'s
    debiased estimator); shared by :func:`l2_calibration_error` and the
    one-pass sums of :mod:`bece._metrics.streaming`."""
    sq = (pbar - zbar) ** 2
    if debiased:
        with np.errstate(divide="ignore", invalid="ignore"):
            corr = np.where(cnt >= 2, zbar * (1.0 - zbar) / (cnt - 1.0), 0.0)
        term = np.where(cnt >= 2, sq - corr, 0.0)
        return float(np.sqrt(max(float(np.dot(share, term)), 0.0)))
    return float(np.sqrt(np.dot(share, sq)))


def ece_sweep(
    y_true: ArrayLike, y_prob: ArrayLike, *, y_pred: ArrayLike | None = None,
    p: int = 1, sample_weight: ArrayLike | None = None, return_n_bins: bool = False,
    labels: ArrayLike | None = None, pos_label: Any = None, from_logits: bool = False,
) -> float | tuple[float, int]:
    """ECE_sweep of Roelofs et al. (2022): equal-mass bins, as many as keep
    the bin mean outcomes monotone.

    Parameters
    ----------
    y_true, y_prob, y_pred, labels, pos_label, from_logits
        As :func:`l2_calibration_error`.
    p : {1, 2}, default 1
        The norm: 1 for the ECE, 2 for the l2 error.
    sample_weight : array_like of shape (n,), optional
        Weights of the bin means and shares (the groups are equal in count).
    return_n_bins : bool, default False
        Also return the number of bins chosen.

    Notes
    -----
    Equal confidences on either side of a group boundary are split by their
    order in the input (stable sort), as ``np.array_split`` does. The sweep
    stops at the first non-monotone :math:`b`, at most n.

    Examples
    --------
    >>> from bece.metrics import ece_sweep
    >>> ece_sweep([0, 0, 1, 1], [0.1, 0.3, 0.6, 0.8], return_n_bins=True)
    (0.25, 4)
    """
    if p not in (1, 2) or isinstance(p, bool):
        raise ValueError(f"p must be 1 or 2, got {p!r}")
    z, q, w = weighted_pairs(y_true, y_prob, y_pred=y_pred, sample_weight=sample_weight,
                             inputs=Inputs(labels, pos_label, from_logits))
    order = np.argsort(q, kind="stable")
    zs, qs, ws = z[order], q[order], w[order]
    cw = np.concatenate([[0.0], np.cumsum(ws)])
    cz = np.concatenate([[0.0], np.cumsum(ws * zs)])
    cq = np.concatenate([[0.0], np.cumsum(ws * qs)])
    n = q.size

    def groups(b: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        size, extra = divmod(n, b)
        counts = np.full(b, size)
        counts[:extra] += 1
        cut = np.concatenate([[0], np.cumsum(counts)])
        wb = cw[cut[1:]] - cw[cut[:-1]]
        keep = wb > 0
        wk = wb[keep]
        return (wk / cw[-1], (cq[cut[1:]] - cq[cut[:-1]])[keep] / wk,
                (cz[cut[1:]] - cz[cut[:-1]])[keep] / wk)

    best = groups(1)
    chosen = 1
    for b in range(2, n + 1):
        g = groups(b)
        if np.any(np.diff(g[2]) < 0):
            break
        best, chosen = g, b
    share, qbar, zbar = best
    value = float(np.dot(share, np.abs(qbar - zbar) ** p) ** (1.0 / p))
    return (value, chosen) if return_n_bins else value
