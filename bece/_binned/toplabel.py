r"""Bayesian top-label ECE: a posterior over Gupta & Ramdas' top-label calibration error.

Each prediction is reduced to its predicted label :math:`\ell_i` (argmax),
its top confidence :math:`p_i` and whether it was right,
:math:`z_i = [y_i = \ell_i]`. The binned model of :mod:`bece._binned.conjugate` then
runs over (label, outcome, bin) cells for the L labels that are predicted at
least once (:mod:`bece.models._toplabel` writes it in NumPyro):

.. math::

    q \mid \text{data} &\sim \mathrm{Dirichlet}(\alpha + c),
        \qquad q, c \in \mathbb R^{L \times 2 \times M}, \\
    \mu_{l,m} \mid \text{data} &\sim \mathcal N(\bar\mu_{l,m}, s_{l,m}^2)
        \ \text{restricted to}\ I_m,

the closed form of :func:`bece._binned.conjugate.closed_form` applied to the L·M
(label, bin) cells. Each draw gives every label's ECE, conditional on
predicting that label, and the top-label ECE:

.. math::

    \mathrm{ECE}_l = \frac{\sum_m |q_{l,1,m} - \pi_{l,m}\mu_{l,m}|}{\sum_m \pi_{l,m}},
    \qquad
    \mathrm{TL\text{-}ECE} =
    \begin{cases}
      \frac1L \sum_l \mathrm{ECE}_l & \texttt{average="label"} \\
      \sum_{l,m} |q_{l,1,m} - \pi_{l,m}\mu_{l,m}| & \texttt{average="sample"}
    \end{cases}

with :math:`\pi_{l,m} = q_{l,0,m} + q_{l,1,m}`; as n grows each draw
concentrates on :func:`bece.top_label_ece`'s plug-in value with the same
``average``.

Prior defaults, and why: :math:`\alpha = 1/(2LM)` per cell, a total weight of
one observation as in :func:`bece.bayesian_ece`; :math:`\sigma = \tau =
w_m/\sqrt{12}` per bin. Labels never predicted are left out, as the plug-in
leaves them out: the posterior is conditional on the set of predicted labels.

Memory and time: the per-(label, bin) draws take ``S * L * M`` floats each;
they are kept when that is at most ``10**7`` (``keep_bins="auto"``), so at
K = 1,000 classes only the ECE, per-label ECE and pooled per-bin draws are
stored. Draws are generated in chunks, so memory stays bounded either way.
Random-number generation dominates the time (~1.5 microseconds per (label,
bin) cell and draw), so the default number of draws shrinks from 10,000 to
no fewer than 1,000 as L·M grows (:func:`default_num_samples`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._base.checks import positive_array, positive_int
from .._base.memory import check_allocation
from .._base.random import as_generator, sample_dirichlet
from .._base.typing import BinningSpec, PriorParam, Seed
from .._metrics.multiclass import top_label_data
from .._metrics.predictive import label_cells, label_expected_plugin, predictive_draws
from .._results.ece import BayesianTopLabelECE
from .._stats.binning import Binning, make_binning
from .._stats.calibration_stats import CalibrationStats, label_statistics
from .._stats.inputs import DEFAULT_INPUTS, Inputs
from .conjugate import ConjugatePosterior, closed_form
from .literal import binned_form, sample_bin_confidence

__all__ = [
    "AVERAGES",
    "default_num_samples",
    "binned_posterior_top_label_ece",
    "top_label_posterior",
    "top_label_statistics",
]

AVERAGES = ("label", "sample")
KEEP_BINS_LIMIT = 10**7
DRAW_BUDGET = 2 * 10**7  # (label, bin) cells per call, see default_num_samples
_CHUNK_CELLS = 1 << 21  # Dirichlet cells per chunk of draws (16 MiB of float64)


def default_num_samples(n_labels: int, n_bins: int) -> int:
    """Default number of posterior draws for L labels and M bins.

    ``min(10_000, max(1_000, 2 * 10**7 // (L * M)))``: each draw samples
    2LM Dirichlet cells and LM truncated Normals (~1.5 microseconds per
    (label, bin) on one core), so the budget keeps the default to a few
    seconds at K = 1,000 while 1,000 draws still give Monte Carlo error of
    the 90% interval ends well below the posterior sd.
    """
    return int(min(10_000, max(1_000, DRAW_BUDGET // (n_labels * n_bins))))


def _check_average(average: Any) -> str:
    if average not in AVERAGES:
        raise ValueError(f"average must be one of {AVERAGES}, got {average!r}")
    return average


def top_label_statistics(
    y_true: ArrayLike, y_prob: ArrayLike, *, y_pred: ArrayLike | None = None, n_bins: int | None = None,
    binning: BinningSpec | Binning = "uniform", inputs: Inputs = DEFAULT_INPUTS,
) -> tuple[np.ndarray, tuple[CalibrationStats, ...]]:
    """Per predicted label, the statistics of its top-label confidences.

    One pass over the (n, K) matrix (validation and argmax, block by block)
    and three ``bincount`` over (label, bin, outcome) cells.

    Parameters
    ----------
    y_true : array_like of shape (n,)
        Labels in ``0 .. K-1``.
    y_prob : array_like of shape (n, K) or (n,)
        Class probabilities; or with ``y_pred`` the confidence of each
        prediction.
    y_pred : array_like of shape (n,), optional
        Predicted labels (e.g. after :class:`bece.calibrate.TopLabelCalibrator`).
    n_bins : int, default 15
    binning : {"uniform"} or array_like of edges, default "uniform"
        Bins shared by all labels. Quantile bins are refused: each label
        would have its own edges, and the pooled per-bin summaries of the
        result need common bins.
    inputs : Inputs, optional
        How the predictions are read (:class:`bece._stats.inputs.Inputs`):
        ``labels``, the class of each column of ``y_prob`` (``clf.classes_``)
        for labels that are not ``0 .. K-1`` (:mod:`bece._stats.labels`);
        ``from_logits``; ``row_sum_tol``.

    Returns
    -------
    labels : ndarray of shape (L,)
        The labels predicted at least once, in the order of the columns
        (int64 column indices, or the class labels themselves when
        ``labels`` was given or the labels are text).
    stats : tuple of L CalibrationStats
        ``stats[j]`` holds the points predicted ``labels[j]``: counts of
        ``[y == label]`` and sums of the top confidence per bin.
    """
    if isinstance(binning, str) and binning in ("quantile", "equal-mass"):
        raise ValueError(
            "binning='quantile' is not supported for the Bayesian top-label ECE: "
            "the labels need common bins; use 'uniform' or explicit edges"
        )
    pred, conf, y, _, classes = top_label_data(y_true, y_prob, y_pred, inputs)
    spec = make_binning(conf, n_bins, binning)
    labels, inverse = np.unique(pred, return_inverse=True)
    n_labels = labels.size
    kind = "triples" if y_pred is not None else "top-label"
    stats = label_statistics(spec, inverse.reshape(-1), y == pred, conf, n_labels, kind)
    return (labels if classes is None else classes[labels]), stats


def _per_label(value: ArrayLike, name: str, n_labels: int, shape: tuple[int, ...]) -> np.ndarray:
    """A prior parameter as an array of shape (L,) + shape: scalar, per bin or per label."""
    arr = np.asarray(value)  # converted (and its dtype checked) by positive_array
    if arr.ndim == len(shape) + 1:
        if arr.shape != (n_labels, *shape):
            raise ValueError(f"{name} must have shape {shape} or {(n_labels, *shape)}, "
                             f"got {arr.shape}")
        return positive_array(arr, name, arr.shape)
    return np.broadcast_to(positive_array(value, name, shape), (n_labels, *shape)).copy()


def top_label_posterior(
    stats: Sequence[CalibrationStats], *, alpha: PriorParam = None, sigma: PriorParam = None,
    tau: PriorParam = None,
) -> ConjugatePosterior:
    """Closed-form posterior over the L·M (label, bin) cells.

    Returns a :class:`bece._binned.conjugate.ConjugatePosterior` whose B = L·M bins
    are ordered label-major (cell ``l * M + m``): ``concentration`` has
    shape (2, L·M), the others (L·M,).

    Parameters
    ----------
    stats : sequence of L CalibrationStats with the same bins
    alpha : float or array of shape (2, M) or (L, 2, M), default 1/(2LM)
    sigma, tau : float or array of shape (M,) or (L, M), default w_m/sqrt(12)
    """
    if len(stats) == 0 or not all(isinstance(s, CalibrationStats) for s in stats):
        raise ValueError("stats must be a non-empty sequence of CalibrationStats")
    binning = stats[0].binning
    if any(s.binning != binning for s in stats):
        raise ValueError("all labels' CalibrationStats must share the same bins")
    empty = [j for j, s in enumerate(stats) if s.n == 0]
    if empty:
        raise ValueError(
            f"stats[{empty[0]}] holds no predictions (n = 0; {len(empty)} label(s) in all): the "
            "posterior is conditional on the labels that are predicted; leave those out"
        )
    n_labels, m = len(stats), binning.n_bins
    width = np.diff(binning.edges)
    alpha_a = (np.full((n_labels, 2, m), 1.0 / (2 * n_labels * m)) if alpha is None
               else _per_label(alpha, "alpha", n_labels, (2, m)))
    # the default is 0 for a zero-width bin (a point: closed_form handles it)
    default = np.broadcast_to(width / np.sqrt(12.0), (n_labels, m))
    sigma_a = default.copy() if sigma is None else _per_label(sigma, "sigma", n_labels, (m,))
    tau_a = default.copy() if tau is None else _per_label(tau, "tau", n_labels, (m,))
    counts = np.stack([s.counts for s in stats])  # (L, 2, M)
    sum_p = np.concatenate([s.sum_p for s in stats])
    lower = np.tile(binning.edges[:-1], n_labels)
    upper = np.tile(binning.edges[1:], n_labels)

    def flat(x: np.ndarray) -> np.ndarray:  # (L, 2, M) -> (2, L M)
        return np.ascontiguousarray(x.transpose(1, 0, 2).reshape(2, -1))

    return closed_form(flat(counts), sum_p, lower, upper, flat(alpha_a),
                       sigma_a.reshape(-1), tau_a.reshape(-1))


def _plugin(stats: Sequence[CalibrationStats], average: str) -> tuple[float, np.ndarray]:
    gaps = np.array([np.abs(s.counts[1] - s.sum_p).sum() for s in stats])
    n_l = np.array([s.n for s in stats], dtype=np.float64)
    label = gaps / n_l
    return (float(label.mean()) if average == "label" else float(gaps.sum() / n_l.sum())), label


def binned_posterior_top_label_ece(
    stats: Sequence[CalibrationStats],
    labels: ArrayLike | None = None,
    *,
    average: str = "label",
    alpha: PriorParam = None,
    sigma: PriorParam = None,
    tau: PriorParam = None,
    num_samples: int | None = None,
    seed: Seed = 0,
    keep_bins: bool | str = "auto",
    model: str = "binned",
) -> BayesianTopLabelECE:
    """Posterior over the top-label ECE from per-label statistics (closed form).

    Parameters
    ----------
    stats : sequence of L CalibrationStats
        One per predicted label, sharing bins (e.g. from
        :func:`top_label_statistics`, possibly summed over chunks).
    labels : array_like of shape (L,), optional
        The labels' names; default ``0 .. L-1``.
    average : {"label", "sample"}, default "label"
    alpha, sigma, tau
        Prior, see :func:`top_label_posterior`.
    num_samples : int, optional
        Posterior draws S. Default :func:`default_num_samples`: 10,000, or
        fewer (at least 1,000) when L·M is large, so that a draw budget of
        ``2 * 10**7`` (label, bin) cells bounds the time (K = 1,000 classes,
        M = 15: 1,333 draws, a few seconds).
    seed : int or numpy.random.Generator, default 0
    keep_bins : {"auto", True, False}, default "auto"
        Keep the (S, L, M) per-(label, bin) draws; "auto" keeps them when
        ``S * L * M <= 10**7``.
    model : {"binned", "conjugate", "literal"}, default "binned"
        The form of the binned model in each (label, bin) cell, as for
        :func:`bece.bayesian_ece`: ``"literal"`` samples each cell's mean
        exactly under the literal model (:mod:`bece._binned.literal`);
        ``"binned"`` is the reference form.

    Returns
    -------
    BayesianTopLabelECE
    """
    average = _check_average(average)
    form = binned_form(model)
    rng = as_generator(seed)
    post = top_label_posterior(stats, alpha=alpha, sigma=sigma, tau=tau)
    n_labels, m = len(stats), stats[0].n_bins
    num_samples = (default_num_samples(n_labels, m) if num_samples is None
                   else positive_int(num_samples, "num_samples"))
    labels = np.arange(n_labels) if labels is None else np.asarray(labels)
    if labels.shape != (n_labels,):
        raise ValueError(f"labels must have shape ({n_labels},), got {labels.shape}")
    if keep_bins not in ("auto", True, False):
        raise ValueError(f"keep_bins must be 'auto', True or False, got {keep_bins!r}")
    keep = (num_samples * n_labels * m <= KEEP_BINS_LIMIT) if keep_bins == "auto" else keep_bins
    # kept: draws (S), label_draws (S, L), pooled (3 S M), per cell (3 S L M) when keep;
    # plus a chunk of Dirichlet and Normal draws (at most ~6 _CHUNK_CELLS values)
    check_allocation(
        8.0 * (num_samples * (1 + n_labels + 3 * m + (3 * n_labels * m if keep else 0))
               + 6 * max(_CHUNK_CELLS, 2 * n_labels * m)),
        what=f"the top-label posterior draws ({n_labels} labels x {m} bins"
             f"{', per-(label, bin) draws kept' if keep else ''})",
        argument=f"num_samples={num_samples} with {n_labels} labels and n_bins={m}",
        advice="pass fewer num_samples or n_bins" + (", or keep_bins=False" if keep else ""),
    )

    draws = np.empty(num_samples)
    label_draws = np.empty((num_samples, n_labels))
    pooled = {k: np.empty((num_samples, m)) for k in ("accuracy", "confidence", "weight")}
    per_cell = ({k: np.empty((num_samples, n_labels, m)) for k in ("accuracy", "confidence",
                                                                  "weight")} if keep else None)
    # the plug-in's expectation under the posterior predictive (first draws)
    lab, bins, n_cell, s_cell = label_cells(stats)
    n_pred = predictive_draws(num_samples, lab.size)
    expected = np.empty((n_pred, n_labels))
    chunk = max(1, _CHUNK_CELLS // (2 * n_labels * m))
    for start in range(0, num_samples, chunk):
        s = min(chunk, num_samples - start)
        sl = slice(start, start + s)
        q = sample_dirichlet(post.concentration, s, rng).reshape(s, 2, n_labels, m)
        mu = sample_bin_confidence(post, s, rng, form).reshape(s, n_labels, m)
        q0, q1 = q[:, 0], q[:, 1]
        pi = q0 + q1
        gaps = np.abs(q1 - pi * mu)
        label_mass = pi.sum(axis=2)
        label_draws[sl] = gaps.sum(axis=2) / label_mass
        draws[sl] = label_draws[sl].mean(axis=1) if average == "label" else gaps.sum(axis=(1, 2))
        w = pi.sum(axis=1)
        pooled["weight"][sl] = w
        with np.errstate(invalid="ignore", divide="ignore"):
            pooled["accuracy"][sl] = q1.sum(axis=1) / w
            pooled["confidence"][sl] = (pi * mu).sum(axis=1) / w
            if per_cell is not None:  # keep
                per_cell["accuracy"][sl] = q1 / pi
        if per_cell is not None:
            per_cell["confidence"][sl] = mu
            per_cell["weight"][sl] = pi
        if start < n_pred:
            c = min(start + s, n_pred) - start
            with np.errstate(invalid="ignore", divide="ignore"):
                acc = q1[:c, lab, bins] / pi[:c, lab, bins]
            expected[start:start + c] = label_expected_plugin(acc, n_cell, s_cell, lab, n_labels)
    plugin, label_plugin = _plugin(stats, average)
    return BayesianTopLabelECE(
        draws=draws,
        accuracy=pooled["accuracy"],
        confidence=pooled["confidence"],
        weight=pooled["weight"],
        plugin=plugin,
        stats=sum(stats[1:], stats[0]),
        model="binned-top-label" if form == "conjugate" else "binned-top-label-literal",
        method="conjugate" if form == "conjugate" else "exact",
        params=post,
        labels=labels,
        average=average,
        label_draws=label_draws,
        label_plugin=label_plugin,
        label_stats=tuple(stats),
        label_accuracy=None if per_cell is None else per_cell["accuracy"],
        label_confidence=None if per_cell is None else per_cell["confidence"],
        label_weight=None if per_cell is None else per_cell["weight"],
        label_expected_plugin=expected,
    )
