"""Which ECE? Each peer library's binned ECE, reproduced.

Libraries that report "the ECE" of the same predictions give different
numbers, because they bin differently. All compute

.. math::

    \\mathrm{ECE} = \\sum_{b} \\frac{n_b}{n}\\,|\\bar z_b - \\bar p_b|
                = \\frac1n \\sum_b \\Big|\\sum_{i \\in b} (z_i - p_i)\\Big|

over their bins :math:`b`; what differs is which bin a confidence falls in,
how many bins there are, and the precision of the sums. With ``M`` the
library's own bin-count argument (``n_bins`` here), :func:`peer_ece` bins as
follows.

=============== ========== ===================================================
convention      default M  bins (``p`` a confidence)
=============== ========== ===================================================
``"bece"``      15         ``[m/M, (m+1)/M)``, index ``min(floor(pM), M-1)``;
                           ``p = 1`` in the last bin (netcal's convention)
``"torchmetrics"`` 15      ``[e_m, e_{m+1})`` on ``torch.linspace`` edges;
                           ``p = 1`` alone in an extra bin M; float32
                           confidences and sums for (n, K) input
``"netcal"``    10         ``p`` clipped to ``[eps, 1 - eps]`` (the input's eps),
                           then ``[e_m, e_{m+1})`` on ``np.linspace`` edges
``"sklearn"``   5          ``calibration_curve``'s bins: ``(e_m, e_{m+1}]``,
                           the first ``[0, e_1]`` (``searchsorted`` left)
``"sklearn-quantile"`` 5   ``calibration_curve(strategy="quantile")``: the
                           same rule on ``np.percentile`` edges at
                           ``m/M``; tied edges leave bins empty (dropped)
``"mapie"``     50         ``np.linspace(0, 1, M)``: ``M - 1`` intervals
                           ``(e_{m-1}, e_m]`` and a bin ``{0}`` of its own
``"kumar"``     15         ``get_ece``: upper edges ``i/M``, right-closed as
                           ``"sklearn"``
``"relplot"``   10         ``binnedECE``: index ``int(p / (1/M))``; ``p = 1``
                           alone in an extra bin M
``"helm"``      10         Kumar's ``get_ece_em``: equal-mass bins, edges the
                           midpoints between the sorted groups of
                           ``np.array_split``; right-closed
=============== ========== ===================================================

On continuous confidences away from the edges the uniform conventions agree
to float64 rounding (torchmetrics to float32 rounding); they part on
confidences that sit exactly on an edge (0.2 with 5 bins, 1.0, 0.0) and on
what ``M`` means. The documentation page "Which ECE?" gives a three-point example
of every difference.

The tests check each convention against hand-computed cases and, for
scikit-learn and MAPIE (installed with the test extra), against the library
itself; torchmetrics, netcal, relplot and Kumar's ``uncertainty-calibration``
are compared in ``benchmarks/peer_ece.py`` (run in an environment that has
them), whose table is in the documentation's validation page.

References
----------
Guo et al. (2017); Kumar, Liang & Ma (2019), "Verified uncertainty
calibration", NeurIPS (``p-lambda/verified_calibration``); Liang et al.
(2022), HELM (``ece_10_bin``); Blasiok & Nakkiran (2023), relplot.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._stats.binning import check_n_bins
from .._stats.inputs import Inputs, as_outcomes, input_kind
from .binned import expected_calibration_error

__all__ = [
    "CONVENTIONS",
    "peer_bins",
    "peer_ece",
]

#: Each convention and its library's default number of bins.
CONVENTIONS: dict[str, int] = {
    "bece": 15,
    "torchmetrics": 15,
    "netcal": 10,
    "sklearn": 5,
    "sklearn-quantile": 5,
    "mapie": 50,
    "kumar": 15,
    "relplot": 10,
    "helm": 10,
}


def _check_convention(convention: Any) -> str:
    if not isinstance(convention, str) or convention not in CONVENTIONS:
        raise ValueError(
            f"convention must be one of {tuple(CONVENTIONS)}, got {convention!r}"
        )
    return convention


def _torch_linspace(m: int, dtype: type) -> np.ndarray:
    """``torch.linspace(0, 1, m + 1)`` by its two-sided formula: ``i * step``
    on the first half, ``1 - (m - i) * step`` on the second, in ``dtype``.

    torch's vectorised CPU kernel can differ from this by one unit in the
    last place at some edges (it depends on the CPU's vector width); only a
    confidence within one ulp of such an edge is binned differently.
    """
    step = dtype(1.0) / dtype(m)
    i = np.arange(m + 1)
    low = (i.astype(dtype) * step).astype(dtype)
    high = (dtype(1.0) - (m - i).astype(dtype) * step).astype(dtype)
    return np.where(i < (m + 1) // 2, low, high).astype(dtype)


def _kumar_equal_mass_upper(p: np.ndarray, m: int) -> np.ndarray:
    """Upper edges of Kumar's ``get_equal_bins``: the sorted confidences cut
    into ``min(m, n)`` groups by ``np.array_split``, each inner edge the
    midpoint between a group's last and the next group's first value, and 1."""
    s = np.sort(p)
    groups = np.array_split(s, min(m, s.size))
    inner = [(groups[i][-1] + groups[i + 1][0]) / 2.0 for i in range(len(groups) - 1)]
    return np.array(sorted(set(inner + [1.0])), dtype=np.float64)


def peer_bins(p: np.ndarray, convention: str, n_bins: int,
              dtype: Any = np.float64) -> tuple[np.ndarray, int]:
    """Bin index of each confidence under a convention, and the number of bins.

    Parameters
    ----------
    p : ndarray of shape (n,), float64
        Confidences in [0, 1].
    convention : str
        One of :data:`CONVENTIONS`.
    n_bins : int
        The library's bin-count argument M.
    dtype : numpy dtype, default float64
        The dtype the predictions came in: netcal clips to its machine
        epsilon (1.2e-7 for float32).

    Returns
    -------
    index : ndarray of shape (n,), int64
    size : int
        Number of bins, empty ones included (M + 1 for torchmetrics and
        relplot, M for MAPIE, whose M counts edges).
    """
    m = n_bins
    if convention == "bece":
        return np.minimum((p * m).astype(np.int64), m - 1), m
    if convention == "torchmetrics":  # bucketize(right=True) - 1 on M + 1 edges
        edges = _torch_linspace(m, np.float64)
        return np.searchsorted(edges, p, side="right").astype(np.int64) - 1, m + 1
    if convention == "netcal":
        eps = float(np.finfo(dtype).eps)
        q = np.clip(p, eps, 1.0 - eps)
        edges = np.linspace(0.0, 1.0, m + 1)
        return np.minimum(np.searchsorted(edges, q, side="right") - 1, m - 1).astype(np.int64), m
    if convention == "sklearn":
        return np.searchsorted(np.linspace(0.0, 1.0, m + 1)[1:-1], p).astype(np.int64), m
    if convention == "sklearn-quantile":
        edges = np.percentile(p, np.linspace(0.0, 1.0, m + 1) * 100)
        return np.searchsorted(edges[1:-1], p).astype(np.int64), m
    if convention == "mapie":
        return np.searchsorted(np.linspace(0.0, 1.0, m), p, side="left").astype(np.int64), m
    if convention == "kumar":
        upper = np.array([i * 1.0 / m for i in range(1, m + 1)])
        return np.searchsorted(upper, p, side="left").astype(np.int64), m
    if convention == "relplot":
        size = 1.0 / m
        return (p / size).astype(np.int64), int(1.0 / size) + 1
    if convention == "helm":
        upper = _kumar_equal_mass_upper(p, m)
        return np.searchsorted(upper, p, side="left").astype(np.int64), int(upper.size)
    raise ValueError(f"convention must be one of {tuple(CONVENTIONS)}, got {convention!r}")


def _torchmetrics_float32(z: np.ndarray, p: np.ndarray, m: int) -> float:
    """torchmetrics' ``_ce_compute`` in float32: ``scatter_add_`` of ones,
    confidences and outcomes (sequential float32 sums), bin means, weights
    ``count / count.sum()``, and the weighted sum of absolute gaps."""
    f = np.float32
    conf = p.astype(f)
    edges = _torch_linspace(m, f)
    idx = np.searchsorted(edges, conf, side="right").astype(np.int64) - 1
    count = np.zeros(m + 1, f)
    s = np.zeros(m + 1, f)
    acc = np.zeros(m + 1, f)
    np.add.at(count, idx, f(1.0))
    np.add.at(s, idx, conf)
    np.add.at(acc, idx, z.astype(f))
    with np.errstate(invalid="ignore", divide="ignore"):
        conf_bin = np.nan_to_num(s / count)
        acc_bin = np.nan_to_num(acc / count)
    prop = count / count.sum(dtype=f)
    return float(np.sum(np.abs(acc_bin - conf_bin) * prop, dtype=f))


def _netcal(z: np.ndarray, p: np.ndarray, m: int) -> float:
    """``netcal.metrics.ECE(m).measure`` on outcomes ``z`` and confidences ``p``
    (in the input's dtype): ``p`` clipped to [eps, 1 - eps] of its dtype; each
    bin's mean outcome and mean confidence from
    ``scipy.stats.binned_statistic_dd``, its count from ``np.histogramdd``, on
    ``np.linspace`` edges, as netcal computes them. The two binnings disagree
    on a float32 confidence at an edge (``binned_statistic_dd`` compares it
    with the edges in float32, ``histogramdd`` in float64), so netcal can
    average a prediction in one bin and count it in another: a single
    ``float32(0.7)`` with y = 1 gives 0.0 at M = 10 (its bin of means holds
    no count), where one binning would give 0.3."""
    from scipy.stats import binned_statistic_dd

    eps = np.finfo(p.dtype).eps
    x = np.clip(p, eps, p.dtype.type(1.0) - eps)[:, None]
    edges = [np.linspace(0.0, 1.0, m + 1)]
    acc = binned_statistic_dd(x, z, statistic="mean", bins=edges)[0]
    conf = binned_statistic_dd(x, x[:, 0], statistic="mean", bins=edges)[0]
    count = np.histogramdd(x, bins=edges)[0]
    acc, conf, count = (np.nan_to_num(a, nan=0.0) for a in (acc, conf, count))
    return float(np.sum(np.abs(acc - conf) * count / p.size))


def peer_ece(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    convention: str = "bece",
    n_bins: int | None = None,
    y_pred: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    pos_label: Any = None,
    from_logits: bool = False,
) -> float:
    """The binned ECE that a peer library reports for the same predictions.

    Parameters
    ----------
    y_true, y_prob, y_pred, labels, pos_label, from_logits
        As :func:`bece.expected_calibration_error`: ``y_prob`` of shape (n,)
        is :math:`P(y = 1)`, of shape (n, K) class probabilities read
        top-label (confidence = row maximum, correct = ``argmax == y_true``),
        with ``y_pred`` the confidence of ``y_pred``.
    convention : str, default "bece"
        ``"bece"``, ``"torchmetrics"`` (``binary_calibration_error`` for
        (n,) input, ``multiclass_calibration_error`` otherwise),
        ``"netcal"`` (``netcal.metrics.ECE``), ``"sklearn"`` (the ECE of
        ``calibration_curve``'s bins, empty bins dropped),
        ``"sklearn-quantile"`` (the same with ``strategy="quantile"``), ``"mapie"``
        (``mapie.metrics.calibration.expected_calibration_error``),
        ``"kumar"`` (``calibration.get_ece``), ``"relplot"``
        (``relplot.binnedECE``) or ``"helm"`` (HELM's ``ece_10_bin``:
        ``calibration.get_ece_em``); see the module docstring.
    n_bins : int, optional
        The library's own bin-count argument, with its meaning (MAPIE's
        ``num_bins`` counts edges, so ``n_bins=15`` gives 14 intervals);
        default the library's default (:data:`CONVENTIONS`).

    Returns
    -------
    float
        The number the library gives, to float64 rounding (torchmetrics: its
        float32 arithmetic is reproduced for (n, K) and triples input and for
        float32 (n,) input).

    Notes
    -----
    netcal reads an (n, 2) ``y_prob`` as :math:`P(y = 1)` = column 1;
    bece, and this function, read every (n, K) top-label: pass
    ``y_prob[:, 1]`` to get netcal's number for such input. MAPIE's 2-D
    ``y_scores`` takes the row maximum but compares it with ``y_true`` as
    given (0/1); this function compares it with ``argmax == y_true``, which
    is MAPIE's number when ``y_true`` is the correctness.

    Examples
    --------
    0.2 on an inner edge of 5 bins: left-closed bins (bece, torchmetrics,
    netcal) put it with 0.3, right-closed ones (scikit-learn) do not.

    >>> from bece.metrics import peer_ece
    >>> y, p = [1, 0, 0], [0.2, 0.2, 0.3]
    >>> [round(peer_ece(y, p, convention=c, n_bins=5), 12) for c in ("bece", "sklearn")]
    [0.1, 0.3]
    """
    convention = _check_convention(convention)
    m = CONVENTIONS[convention] if n_bins is None else check_n_bins(n_bins)
    if convention == "mapie" and m < 2:
        raise ValueError(
            f"n_bins must be at least 2 for convention='mapie' (MAPIE's num_bins counts bin "
            f"edges: num_bins=2 is one interval), got {m}"
        )
    if convention == "bece":
        return expected_calibration_error(y_true, y_prob, y_pred=y_pred, n_bins=m, labels=labels,
                                          pos_label=pos_label, from_logits=from_logits)
    z_raw, p = as_outcomes(y_true, y_prob, y_pred, Inputs(labels, pos_label, from_logits))
    z = np.asarray(z_raw, dtype=np.float64)
    dtype = getattr(y_prob, "dtype", None)
    float32 = dtype == np.float32
    if convention == "torchmetrics" and (input_kind(y_prob, y_pred) != "binary" or float32):
        return _torchmetrics_float32(z, p, m)
    kind = np.float32 if float32 else np.float64
    if convention == "netcal":
        return _netcal(z, p.astype(kind), m)
    index, size = peer_bins(p, convention, m, kind)
    diff = np.bincount(index, weights=z - p, minlength=size)
    return float(np.abs(diff).sum() / p.size)
