r"""A top-label posterior that pools across labels: the hierarchical smooth model.

The binned top-label posterior (:mod:`bece._binned.toplabel`) estimates each
(label, bin) cell on its own; with many classes most cells hold a handful of
predictions, and the absolute value in each label's ECE turns their noise
into an upward bias (on CIFAR-100 network outputs its 90% interval lay
entirely above the plug-in on 8 of 10 data sets). Here each predicted
label's calibration curve is a curve shared by all labels plus a deviation
whose two parts have learned scales (written out in NumPyro in
:mod:`bece.models._toplabel_smooth`):

.. math::

    \operatorname{logit} P(z = 1 \mid p, \ell = l) = f(x) + \kappa\,c_l + \omega\,e_l\,x,
    \qquad x = \operatorname{logit} p,

with :math:`f` the smooth curve of :mod:`bece.smooth` (linear part, spline
with learned smoothness :math:`\lambda`, optional per-bin deviations),
:math:`c_l, e_l \sim \mathcal N(0, 1)` a per-label logit shift (at p = 1/2)
and change of logit slope (a per-label inverse temperature), and their
scales learned from all labels together, each with a two-part prior
(:mod:`bece._smooth.scale_prior`): with probability 1/2 a "shared"
exponential of mean 0.02 times the scale's (all labels share one curve),
else the exponential of mean 0.5 (:math:`\kappa`) or 0.25
(:math:`\omega`). A label with few predictions is pulled towards the
shared curve by as much as the spread between labels says, and one with
many gets its own; when the data cannot tell the labels apart, the
"shared" part keeps their prior spread out of the ECE (it biased the
top-label ECE upwards where each label had about 10 predictions).

Why two scales about logit 0: a per-label bias moves a label's logit by the
same amount everywhere, a per-label temperature by an amount that grows with
:math:`|x|` (nothing at p = 1/2). The shifts are measured by the low
confidences, where errors are common; the tilts mostly by how the curve
saturates next to 1. A single scale for both, about the logits' mean (the
model before), took its size from the well-measured small deviations and
shrank the high-confidence ones with it: on DenseNet-BC-100's CIFAR-100
outputs with a per-label shift and slope map (n = 10^4), it put the shared
scale at 0.32 where the truth's high-confidence deviations need about 1, and
its interval covered the top-label ECE 0.42 of the time (the
marginal likelihood was not the culprit: adaptive Gauss-Hermite per label
moved it by under 0.6 nats).

Why a shift and a tilt per label (and not a per-label spline or per-(label,
bin) deviations): two numbers per label are what a few dozen predictions
can tell, they cover a per-class temperature or bias (what per-class
recalibration fits), and they keep the fit's cost linear in the number of
labels. What they cannot follow is a label whose curve bends differently
from the shared one; as a label's predictions grow into thousands, its ECE
posterior concentrates on the ECE of its best shift-and-tilt curve.
The shared per-bin deviations of the smooth model are optional here
(``bin_scale=None`` by default): they add a third hyper-parameter to the
grid, and on network outputs the pooled curve is smooth.

Distribution of the confidences: the Bayesian bootstrap, as in
:mod:`bece.smooth`, over all predictions (weights :math:`w_i`,
independent of the curves a posteriori). Each posterior draw gives, per
label l and ECE bin m, :math:`A_{lm} = \sum_{i \in (l, m)} w_i\,\sigma(f(x_i)
+ d_l(x_i))` and :math:`C_{lm} = \sum_{i \in (l, m)} w_i p_i`, and

.. math::

    \mathrm{ECE}_l = \frac{\sum_m |A_{lm} - C_{lm}|}{\sum_{i:\,\ell_i = l} w_i},
    \qquad
    \mathrm{TL\text{-}ECE} =
    \begin{cases}
      \frac1L \sum_l \mathrm{ECE}_l & \texttt{average="label"} \\
      \sum_{l,m} |A_{lm} - C_{lm}| / \sum_i w_i & \texttt{average="sample"},
    \end{cases}

the same quantities as :func:`bece.bayesian_top_label_ece`'s, over the labels
predicted at least once. The pooled per-bin ``accuracy``, ``confidence`` and
``weight`` add the labels bin by bin, so the pooled (label-blind) ECE of
the top-label confidence is :math:`\sum_m |\sum_l (A_{lm} - C_{lm})|`.

Fast path (:mod:`bece._smooth.toplabel_fit`): Laplace over the coefficients
for each hyper-parameter point :math:`(\lambda, \kappa, \omega[, \tau])`, solved by
blocks (the shared coefficients and a 2 x 2 block per label: a Schur
complement, so a Newton step costs :math:`O(J P^2 + L P^2)`), integrated over
a grid explored outwards from its best point (the cells of its heaviest
points cut finer along the label scales), then Pareto-smoothed importance
resampling when the Pareto :math:`\hat k` is below 0.7.

Atoms: up to 2,000 predictions each is an atom (exact). Above, each ECE bin
is cut into r equal-width sub-cells, and any sub-cell wider than 1/2 in
logit is cut further (confidences pile up next to 1, where equal widths in
p span logits 4 to 14); a (label, sub-cell) with :math:`t` predictions,
:math:`c` correct and mean confidence :math:`\bar p` is one atom, with
bootstrap weight :math:`\mathrm{Gamma}(t)` (the exact law of the sub-cell
total). r is 128 (as :mod:`bece.smooth`) for a few labels and halves as
labels grow, keeping ``L * M * r <= 16,384`` (with 15 bins: r = 8 at 100
labels, 1 from 547): the fit and every draw cost O(atoms), whatever n is.
Within a sub-cell the curve is nearly linear, so replacing its predictions
by their mean confidence changes an ECE draw by second-order terms only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from .._base.checks import positive_int
from .._base.laplace import single_threaded_blas
from .._base.memory import check_allocation
from .._base.psis import psis_resample
from .._base.random import as_generator
from .._base.typing import BinningSpec, Seed
from .._metrics.multiclass import top_label_inputs
from .._metrics.predictive import label_expected_plugin, predictive_draws
from .._results.ece import BayesianTopLabelECE
from .._stats.binning import Binning, make_binning
from .._stats.calibration_stats import CalibrationStats
from .average import DEFAULT_PRIOR_ODDS, average_top_label_with_calibrated
from .basis import DEFAULT_N_KNOTS, logit_confidence
from .posterior import check_prior_odds
from .scale_prior import SHARED_PROB
from .toplabel_atoms import (
    LabelAtoms,
    check_label_grid,
    coarse_label_stats,
    exact_or_grid,
    label_atoms,
    label_atoms_exact,
    label_atoms_from_cells,
    label_cells_from_stats,
    label_coarse_stats,
)
from .toplabel_fit import PointDesign, TopLabelSmoothPosterior, fit_top_label_smooth

__all__ = [
    "AVERAGES",
    "curves_expected_plugin",
    "label_ece_draws",
    "label_posterior_draws",
    "prepare_label_atoms",
    "smooth_posterior_top_label_ece",
    "smooth_top_label_ece",
    "top_label_result",
]

AVERAGES = ("label", "sample")
KEEP_BINS_LIMIT = 10**7
DRAW_BUDGET = 2 * 10**7


def default_num_samples(n_labels: int, n_bins: int) -> int:
    """The binned top-label posterior's default, ``min(10_000, max(1_000, 2 * 10**7 // (L M)))``."""
    return int(min(10_000, max(1_000, DRAW_BUDGET // (n_labels * n_bins))))


def label_ece_draws(
    atoms: LabelAtoms, post: TopLabelSmoothPosterior, beta: np.ndarray, label_beta: np.ndarray,
    rng: np.random.Generator, *, keep: bool = False, loglik: bool = False,
    chunk_elems: int = 2_000_000,
) -> dict[str, Any]:
    """Top-label ECE draws for curve draws under Bayesian-bootstrap weights.

    Parameters
    ----------
    atoms : LabelAtoms
    post : TopLabelSmoothPosterior
    beta, label_beta : ndarray of shape (S, P) and (S, L, 2)
        Curve draws (:meth:`TopLabelSmoothPosterior.sample`).
    rng : numpy.random.Generator
        Draws the bootstrap weights (Gamma(trials) per atom and draw).
    keep : bool
        Also return the per-(label, bin) draws.
    loglik : bool
        Also return each draw's log likelihood (for the importance weights,
        in the same pass over the atoms).

    Returns
    -------
    dict with ``label`` and ``sample`` (S,): the top-label ECE under either
    average; ``label_ece`` (S, L); ``label_mass`` (S, L), each label's share
    of the predictions; pooled ``accuracy``, ``confidence``, ``weight``
    (S, M); with ``keep`` ``label_accuracy``, ``label_confidence``,
    ``label_weight`` (S, L, M) (an empty (label, bin) has weight 0, its
    confidence is the bin's centre and its accuracy the label's curve
    there); with ``loglik`` ``loglik`` (S,).
    """
    n_labels, m = atoms.n_labels, atoms.binning.n_bins
    s_total, j = beta.shape[0], atoms.p.size
    cells, starts = atoms.segments()
    design = PointDesign(post, atoms.x, atoms.label, atoms.bin)
    edges = atoms.binning.edges
    center = 0.5 * (edges[:-1] + edges[1:])
    bc = np.tile(np.arange(m), n_labels)
    centres = PointDesign(post, logit_confidence(center)[bc], np.repeat(np.arange(n_labels), m), bc)
    out: dict[str, Any] = {k: np.empty(s_total) for k in ("label", "sample")}
    for k in ("label_ece", "label_mass"):
        out[k] = np.empty((s_total, n_labels))
    for k in ("accuracy", "confidence", "weight"):
        out[k] = np.empty((s_total, m))
    if keep:
        for k in ("label_accuracy", "label_confidence", "label_weight"):
            out[k] = np.empty((s_total, n_labels, m))
    if loglik:
        out["loglik"] = np.empty(s_total)
    step = max(1, chunk_elems // max(j, n_labels * m, 1))
    trials = atoms.trials.astype(np.float64)
    successes = atoms.successes.astype(np.float64)
    pooled_empty = np.flatnonzero(np.bincount(atoms.bin, minlength=m) == 0)
    for a in range(0, s_total, step):
        b = min(s_total, a + step)
        s = b - a
        f = design.logits(beta[a:b], label_beta[a:b])
        q = special.expit(-f)  # 1 - sigma(f), accurate where sigma(f) is near 1
        if loglik:  # log(1 + e^f) = -log(1 - sigma(f))
            out["loglik"][a:b] = f @ successes + np.log(q) @ trials
        sv = np.subtract(1.0, q, out=q)
        g = (rng.standard_exponential((s, j)) if atoms.exact
             else rng.standard_gamma(trials, size=(s, j)))
        wt = np.zeros((s, n_labels * m))
        acc = np.zeros((s, n_labels * m))
        conf = np.zeros((s, n_labels * m))
        wt[:, cells] = np.add.reduceat(g, starts, axis=1)
        conf[:, cells] = np.add.reduceat(g * atoms.p, starts, axis=1)
        g *= sv
        acc[:, cells] = np.add.reduceat(g, starts, axis=1)
        wt, acc, conf = (v.reshape(s, n_labels, m) for v in (wt, acc, conf))
        gaps = np.abs(acc - conf)
        mass = wt.sum(axis=2)  # (s, L)
        total = mass.sum(axis=1)
        out["label_ece"][a:b] = gaps.sum(axis=2) / mass
        out["label"][a:b] = out["label_ece"][a:b].mean(axis=1)
        out["sample"][a:b] = gaps.sum(axis=(1, 2)) / total
        out["label_mass"][a:b] = mass / total[:, None]
        pooled_w = wt.sum(axis=1)  # (s, M)
        with np.errstate(invalid="ignore", divide="ignore"):
            out["weight"][a:b] = pooled_w / total[:, None]
            out["accuracy"][a:b] = acc.sum(axis=1) / pooled_w
            out["confidence"][a:b] = conf.sum(axis=1) / pooled_w
        if pooled_empty.size or keep:
            # each label's curve at the bin centres: (s, L, M)
            lab_curve = special.expit(centres.logits(beta[a:b], label_beta[a:b])).reshape(
                s, n_labels, m)
            if pooled_empty.size:
                out["accuracy"][a:b, pooled_empty] = lab_curve[:, :, pooled_empty].mean(axis=1)
                out["confidence"][a:b, pooled_empty] = center[pooled_empty]
            if keep:
                with np.errstate(invalid="ignore", divide="ignore"):
                    out["label_accuracy"][a:b] = np.where(wt > 0, acc / wt, lab_curve)
                    out["label_confidence"][a:b] = np.where(wt > 0, conf / wt, center)
                out["label_weight"][a:b] = wt / total[:, None, None]
    return out


def curves_expected_plugin(atoms: LabelAtoms, post: TopLabelSmoothPosterior, beta: np.ndarray,
                           label_beta: np.ndarray, *, chunk_elems: int = 2_000_000) -> np.ndarray:
    """Each label's plug-in ECE expected for the data's predictions with their
    outcomes redrawn from the first curve draws (:mod:`bece._metrics.predictive`):
    each (label, bin) cell's accuracy is the curve averaged over its
    predictions. Shape (S', L), S' = :func:`~bece._metrics.predictive.predictive_draws`."""
    cells, starts = atoms.segments()
    k = predictive_draws(beta.shape[0], cells.size)
    design = PointDesign(post, atoms.x, atoms.label, atoms.bin)
    trials = atoms.trials.astype(np.float64)
    cell_n = np.add.reduceat(trials, starts)
    cell_s = np.add.reduceat(trials * atoms.p, starts)
    label = cells // atoms.binning.n_bins
    out = np.empty((k, atoms.n_labels))
    step = max(1, chunk_elems // max(atoms.p.size, 1))
    for a in range(0, k, step):
        b = min(k, a + step)
        f = special.expit(design.logits(beta[a:b], label_beta[a:b]))
        acc = np.add.reduceat(f * trials, starts, axis=1) / cell_n
        out[a:b] = label_expected_plugin(acc, cell_n, cell_s, label, atoms.n_labels)
    return out


def _plugin(stats: Sequence[CalibrationStats], average: str) -> tuple[float, np.ndarray]:
    gaps = np.array([np.abs(s.counts[1] - s.sum_p).sum() for s in stats])
    n_l = np.array([s.n for s in stats], dtype=np.float64)
    label = gaps / n_l
    return (float(label.mean()) if average == "label" else float(gaps.sum() / n_l.sum())), label


def _check_average(average: Any) -> str:
    if average not in AVERAGES:
        raise ValueError(f"average must be one of {AVERAGES}, got {average!r}")
    return average


def _check_keep(keep_bins: Any, num_samples: int, n_labels: int, m: int, n_atoms: int) -> bool:
    if keep_bins not in ("auto", True, False):
        raise ValueError(f"keep_bins must be 'auto', True or False, got {keep_bins!r}")
    keep = (num_samples * n_labels * m <= KEEP_BINS_LIMIT) if keep_bins == "auto" else bool(keep_bins)
    check_allocation(
        8.0 * (num_samples * (4 + 2 * n_labels + 3 * m + 2 * n_labels + 40
                              + (3 * n_labels * m if keep else 0))
               + 8 * 4_000_000 + 64.0 * n_atoms),
        what=f"the smooth top-label posterior draws ({n_labels} labels x {m} bins"
             f"{', per-(label, bin) draws kept' if keep else ''})",
        argument=f"num_samples={num_samples} with {n_labels} labels and n_bins={m}",
        advice="pass fewer num_samples" + (", or keep_bins=False" if keep else ""),
    )
    return keep


def top_label_result(
    atoms: LabelAtoms, label_stats: tuple[CalibrationStats, ...], labels: np.ndarray,
    post: TopLabelSmoothPosterior, e: dict[str, Any], average: str, method: str,
) -> BayesianTopLabelECE:
    """The result from the draws ``e`` of :func:`label_ece_draws`."""
    plugin, label_plugin = _plugin(label_stats, average)
    return BayesianTopLabelECE(
        draws=e[average], accuracy=e["accuracy"], confidence=e["confidence"], weight=e["weight"],
        plugin=plugin, stats=sum(label_stats[1:], label_stats[0]), model="smooth-top-label",
        method=method, params=post, labels=labels, average=average, label_draws=e["label_ece"],
        label_plugin=label_plugin, label_stats=label_stats,
        label_accuracy=e.get("label_accuracy"), label_confidence=e.get("label_confidence"),
        label_weight=e.get("label_weight"),
        label_expected_plugin=(curves_expected_plugin(atoms, post, e["beta"], e["label_beta"])
                               if "beta" in e else None),
    )


def label_posterior_draws(
    atoms: LabelAtoms, post: TopLabelSmoothPosterior, num_samples: int, rng: np.random.Generator,
    keep: bool,
) -> tuple[dict[str, Any], TopLabelSmoothPosterior]:
    """ECE draws of the importance-corrected Laplace mixture.

    One pass over the atoms gives each proposal's log likelihood (its
    importance weight, :func:`~bece._base.psis.psis_resample`) and
    its ECE under its own bootstrap weights; the pairs are then resampled
    together (the bootstrap weights are independent of the curve a
    posteriori, so a resampled pair is a draw of both). The curve draws are
    returned too (``beta``, ``label_beta``, ``lam``, ``tau``, ``kappa``, ``omega``).
    """
    beta, label_beta, lam, tau, kappa, omega, log_ratio = post.sample(num_samples, rng)
    e = label_ece_draws(atoms, post, beta, label_beta, rng, keep=keep, loglik=True)
    e.update(beta=beta, label_beta=label_beta, lam=lam, tau=tau, kappa=kappa, omega=omega)
    idx, info = psis_resample(e.pop("loglik") + log_ratio, rng, keep_if_unreliable=True)
    post = replace(post, **info)
    if idx is not None:
        e = {k: v[idx] for k, v in e.items()}
    return e, post


def _posterior(atoms: LabelAtoms, label_stats: tuple[CalibrationStats, ...], labels: np.ndarray,
               average: str, num_samples: int | None, seed: Seed, keep_bins: bool | str,
               prior_odds: float, **model: Any) -> BayesianTopLabelECE:
    rng = as_generator(seed)
    n_labels, m = atoms.n_labels, atoms.binning.n_bins
    num_samples = (default_num_samples(n_labels, m) if num_samples is None
                   else positive_int(num_samples, "num_samples"))
    keep = _check_keep(keep_bins, num_samples, n_labels, m, atoms.p.size)
    with single_threaded_blas():
        post = fit_top_label_smooth(atoms, **model)
        e, post = label_posterior_draws(atoms, post, num_samples, rng, keep)
    result = top_label_result(atoms, label_stats, labels, post, e, average, "laplace")
    return average_top_label_with_calibrated(result, prior_odds, rng)


def prepare_label_atoms(
    y_true: ArrayLike, y_prob: ArrayLike, y_pred: ArrayLike | None, n_bins: int | None,
    binning: BinningSpec | Binning, grid: str | int | None,
) -> tuple[LabelAtoms, tuple[CalibrationStats, ...], np.ndarray]:
    """Atoms, per-label statistics in the ECE bins and the predicted labels, from predictions."""
    if isinstance(binning, str) and binning in ("quantile", "equal-mass"):
        raise ValueError(
            "binning='quantile' is not supported for the top-label ECE posterior: the labels "
            "need common bins; use 'uniform' or explicit edges"
        )
    grid = check_label_grid(grid)
    pred, conf, y, _ = top_label_inputs(y_true, y_prob, y_pred)
    coarse = make_binning(conf, n_bins, binning)
    labels, inverse = np.unique(pred, return_inverse=True)
    inverse = inverse.reshape(-1)
    n_labels, m = labels.size, coarse.n_bins
    z = (y == pred).astype(np.int64)
    r = exact_or_grid(grid, conf.size, n_labels, m)
    label_stats = label_coarse_stats(inverse, z, conf, n_labels, coarse)
    atoms = (label_atoms_exact(inverse, z, conf, n_labels, coarse) if r is None
             else label_atoms(inverse, z, conf, n_labels, coarse, r))
    return atoms, label_stats, labels


def smooth_top_label_ece(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    y_pred: ArrayLike | None = None,
    n_bins: int | None = None,
    binning: BinningSpec | Binning = "uniform",
    average: str = "label",
    n_knots: int = DEFAULT_N_KNOTS,
    intercept_scale: float = 1.0,
    slope_scale: float = 0.5,
    smoothness_scale: float = 0.5,
    bin_scale: float | None = None,
    label_scale: float = 0.5,
    tilt_scale: float = 0.25,
    shared_prob: float = SHARED_PROB,
    grid: str | int | None = "auto",
    num_samples: int | None = None,
    seed: Seed = 0,
    keep_bins: bool | str = "auto",
    prior_odds: float = DEFAULT_PRIOR_ODDS,
) -> BayesianTopLabelECE:
    """Posterior over the top-label ECE under the hierarchical smooth model (Laplace).

    ``bece.bayesian_top_label_ece(..., model="smooth")`` calls this with the
    defaults.

    Parameters
    ----------
    y_true, y_prob, y_pred, n_bins, binning, average
        As :func:`bece.bayesian_top_label_ece` (uniform bins or explicit
        edges shared by all labels).
    n_knots, intercept_scale, slope_scale, smoothness_scale
        The shared curve and its prior (:func:`bece._smooth.fit.fit_smooth`).
    bin_scale : float or None, default None
        Prior mean of the shared per-bin deviations' scale; None: none.
    label_scale : float, default 0.5
        Prior mean of :math:`\\kappa`, the scale of the label shifts.
    tilt_scale : float, default 0.25
        Prior mean of :math:`\\omega`, the scale of the label tilts (changes of
        logit slope).
    shared_prob : float, default 0.5
        Prior probability that each scale is in its "shared" component
        (deviations of a few hundredths of a logit at most:
        :mod:`bece._smooth.scale_prior`); 0: exponential priors alone.
    grid : "auto", None or int, default "auto"
        None: one atom per prediction; an int r: r sub-cells per ECE bin and
        label; "auto": exact up to 2,000 predictions, else r = 128 halved
        until ``L * M * r <= 16,384`` (module docstring).
    num_samples : int, optional
        Posterior draws; default as the binned top-label posterior (10,000,
        fewer, at least 1,000, for many labels).
    seed : int or numpy.random.Generator, default 0
    keep_bins : {"auto", True, False}, default "auto"
        Keep the (S, L, M) per-(label, bin) draws ("auto": when
        ``S * L * M <= 10**7``).
    prior_odds : float, default :data:`bece._smooth.average.DEFAULT_PRIOR_ODDS`
        Prior odds of exact calibration of every label against the
        hierarchical model: the draws average the two
        (:func:`bece._smooth.average.average_top_label_with_calibrated`), so
        the interval reaches 0 when the data favour calibration; 0 gives the
        hierarchical model alone.

    Returns
    -------
    BayesianTopLabelECE
        ``model="smooth-top-label"``, ``method="laplace"``; ``params`` is the
        :class:`~bece._smooth.toplabel_fit.TopLabelSmoothPosterior`.

    Examples
    --------
    >>> import numpy as np
    >>> from bece._smooth.toplabel import smooth_top_label_ece
    >>> rng = np.random.default_rng(0)
    >>> prob = rng.dirichlet(np.full(4, 0.5), size=3000)
    >>> y = np.array([rng.choice(4, p=row) for row in prob])   # calibrated
    >>> r = smooth_top_label_ece(y, prob, n_bins=10, num_samples=2000, seed=1)
    >>> r.model, r.draws.shape, r.label_draws.shape
    ('smooth-top-label', (2000,), (2000, 4))
    """
    average = _check_average(average)
    prior_odds = check_prior_odds(prior_odds)
    atoms, label_stats, labels = prepare_label_atoms(y_true, y_prob, y_pred, n_bins, binning, grid)
    return _posterior(atoms, label_stats, labels, average, num_samples, seed, keep_bins, prior_odds,
                      n_knots=n_knots, intercept_scale=intercept_scale, slope_scale=slope_scale,
                      smoothness_scale=smoothness_scale, bin_scale=bin_scale,
                      label_scale=label_scale, tilt_scale=tilt_scale,
                      shared_prob=shared_prob)


def smooth_posterior_top_label_ece(
    stats: Sequence[CalibrationStats],
    labels: ArrayLike | None = None,
    *,
    n_bins: int | None = None,
    binning: BinningSpec | Binning = "uniform",
    average: str = "label",
    n_knots: int = DEFAULT_N_KNOTS,
    intercept_scale: float = 1.0,
    slope_scale: float = 0.5,
    smoothness_scale: float = 0.5,
    bin_scale: float | None = None,
    label_scale: float = 0.5,
    tilt_scale: float = 0.25,
    shared_prob: float = SHARED_PROB,
    grid: str | int = "auto",
    num_samples: int | None = None,
    seed: Seed = 0,
    keep_bins: bool | str = "auto",
    prior_odds: float = DEFAULT_PRIOR_ODDS,
) -> BayesianTopLabelECE:
    """The hierarchical smooth top-label posterior from per-label fine statistics.

    ``bece.posterior_top_label_ece(stats, labels, model="smooth")`` calls
    this. ``stats[j]`` holds the predictions of label ``labels[j]`` in bins
    that refine the ECE bins, possibly summed over chunks; within each ECE
    bin the fine bins are merged into the sub-cells of
    :func:`~bece._smooth.toplabel_atoms.top_label_fine_binning` (by their
    mid-points). Statistics collected in those sub-cells,

    ``bece._binned.toplabel.top_label_statistics(y, prob, binning=top_label_fine_binning(K))``,

    give the draws of :func:`smooth_top_label_ece` with the same seed
    (above 2,000 predictions; fewer are exact atoms there).

    Parameters
    ----------
    stats : sequence of L CalibrationStats
    labels : array_like of shape (L,), optional
        The labels' names; default ``0 .. L-1``.
    n_bins, binning
        The ECE bins (default 15 uniform), which the bins of ``stats`` refine.
    grid : "auto" or int, default "auto"
        Sub-cells per ECE bin.
    average, n_knots, intercept_scale, slope_scale, smoothness_scale, bin_scale, label_scale,
    tilt_scale, shared_prob, num_samples, seed, keep_bins, prior_odds
        As :func:`smooth_top_label_ece`.

    Returns
    -------
    BayesianTopLabelECE
    """
    average = _check_average(average)
    prior_odds = check_prior_odds(prior_odds)
    if grid is None:
        raise ValueError("grid=None (one atom per prediction) needs the predictions: use "
                         "smooth_top_label_ece; statistics take 'auto' or a positive integer")
    checked = check_label_grid(grid)
    counts, sp, _, fine, cell_bin, coarse = label_cells_from_stats(stats, n_bins, binning)
    n_labels, m = counts.shape[0], coarse.n_bins
    names = np.arange(n_labels) if labels is None else np.asarray(labels)
    if names.shape != (n_labels,):
        raise ValueError(f"labels must have shape ({n_labels},), got {names.shape}")
    r = exact_or_grid(checked, 1 << 62, n_labels, m)
    assert r is not None
    atoms = label_atoms_from_cells(counts, sp, fine, cell_bin, coarse, r)
    label_stats = coarse_label_stats(stats, cell_bin, coarse)
    return _posterior(atoms, label_stats, names, average, num_samples, seed, keep_bins, prior_odds,
                      n_knots=n_knots, intercept_scale=intercept_scale, slope_scale=slope_scale,
                      smoothness_scale=smoothness_scale, bin_scale=bin_scale,
                      label_scale=label_scale, tilt_scale=tilt_scale,
                      shared_prob=shared_prob)
