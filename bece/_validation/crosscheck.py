r"""MCMC cross-check of the closed-form posterior.

:func:`cross_check_stats` (what ``bece.cross_check(..., model="binned")``
calls) runs NUTS (NumPyro) on the *collapsed* binned model of
:mod:`bece.models` — O(M) per step whatever n is — and compares its draws of
the ECE, each bin's accuracy and each bin's mean confidence with draws of the
closed form (:func:`bece.posterior_ece`); NUTS runs in :mod:`bece._validation.nuts`
and the comparison below is :func:`bece._validation.agreement.compare_draws`.

The comparison is the agreement rule of :mod:`bece._validation.agreement`,
the same for every cross-check: NUTS converged (R-hat <= 1.01, bulk and tail
ESS >= 400, no divergent transition after one repeat at a higher
``target_accept_prob``) and each 5%, 50% and 95% quantile of every compared
quantity within max(z MCSE, 0.25 sd) of the fast path's, z for a
family-wise false-alarm rate of 0.05. NUTS runs in float64 within the call
(a scoped ``enable_x64``; the global configuration is untouched), so
results do not depend on ``jax_enable_x64`` and the collapsed log density
keeps its precision at n = 10^7.

``model="conjugate"`` checks the closed form on the model for which it is
exact; ``model="literal"`` runs NUTS on the literal BECE model (each
confidence a truncated Normal in its bin) and checks its exact fast path
(:mod:`bece._binned.literal`); ``model="binned"`` checks the reference form
(:data:`bece._binned.literal.REFERENCE_FORM`). Either way a disagreement is
a bug (or too few draws). To see how far the two forms are apart, pass the
other form's posterior as ``closed_form``: :attr:`CrossCheck.gap` then
measures it (or use :func:`bece.validation.literal_gap`, which compares the
two fast paths directly).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._base.typing import PriorParam
from .._binned.conjugate import ConjugatePosterior, conjugate_posterior
from .._binned.literal import FORMS, binned_form
from .._binned.posterior import binned_posterior_ece
from .._results.ece import BayesianECE, BayesianTopLabelECE
from .._stats.calibration_stats import CalibrationStats
from .agreement import FALSE_ALARM, CrossCheck, compare_draws
from .nuts import NutsRun, check_run_arguments, mcmc_inference_data, run_nuts

__all__ = [
    "collapsed_data",
    "cross_check_stats",
    "cross_check_label_stats",
    "log_total_scale",
    "nuts_model",
]

MODELS = ("binned", *FORMS)


def collapsed_data(stats: CalibrationStats) -> dict[str, np.ndarray]:
    """Keyword data of the collapsed models: counts, per-bin mean and centred SS.

    Computed in float64 on the host; empty bins get their centre as mean and 0
    as sum of squares (they do not enter the likelihood).
    """
    n_m = stats.bin_counts
    center = 0.5 * (stats.edges[:-1] + stats.edges[1:])
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n_m > 0, stats.sum_p / n_m, center)
    ss = np.where(n_m > 0, np.maximum(stats.sum_p2 - stats.sum_p * mean, 0.0), 0.0)
    return {"counts": np.asarray(stats.counts), "mean_p": mean, "ss_p": ss}


def log_total_scale(n: int, boosted: bool) -> float:
    """Scale :math:`s` of :math:`\\log T` in :class:`bece.models.DirichletGammaReparam`:
    :math:`1/\\sqrt{n}`, at least 0.01 when some cell is ``boosted`` (posterior
    concentration below 1: an empty cell at the default prior).

    :math:`1/\\sqrt n` is about the posterior scale of :math:`\\log q` in the
    cells with most data (see :mod:`bece.models._reparam`). The floor trades
    leapfrog steps for divergences, which come from the empty cells: at
    n = 10^6 with empty cells (seeds 1 to 3), s = 0.01 gave 28 to 31 steps
    per draw and 1 to 3 divergent transitions in 4,000, s = 0.001 gave 17 to
    23 steps and 6 to 10 divergences; without empty cells neither diverged
    (16 and 12 steps), and at n = 10^7 without empty cells s = 0.01 took 68
    steps per draw, 1/sqrt(n) 25.
    """
    s = 1.0 / np.sqrt(max(n, 1))
    return max(s, 0.01) if boosted else s


def binned_target(n: int, boosted: bool) -> float:
    """The binned models' default ``target_accept_prob``: 0.95 where some cell
    is boosted (posterior concentration below 1) and n > 10^4, the regime of
    :func:`log_total_scale`'s floor, where runs at 0.9 had 1 to 3 divergent
    transitions in 4,000 (and the agreement rule's repeat at 0.95 kept one on
    Python 3.13 at n = 10^6); 0.9 elsewhere (so a repeat runs at 0.95)."""
    return 0.95 if boosted and n > 10_000 else 0.9


def nuts_model(stats: CalibrationStats, post: ConjugatePosterior, model: str) -> Any:  # a NumPyro model
    """The collapsed ``model`` ("conjugate" or "literal") with the Dirichlet
    site reparameterised for NUTS (:class:`bece.models.DirichletGammaReparam`)."""
    from numpyro.handlers import reparam

    from ..models import DirichletGammaReparam, conjugate_collapsed, literal_collapsed

    base = conjugate_collapsed if model == "conjugate" else literal_collapsed
    # boost the cells whose posterior concentration is below one (see models._reparam)
    boost = (post.concentration < 1.0).reshape(-1)
    scale = log_total_scale(stats.n, bool(boost.any()))
    return reparam(base, config={"q": DirichletGammaReparam(boost=boost, log_total_scale=scale)})


def _nuts(stats: CalibrationStats, post: ConjugatePosterior, model: str, num_chains: int,
          num_warmup: int, num_samples: int, seed: int, progress_bar: bool | None,
          target_accept_prob: float | None) -> NutsRun:
    if target_accept_prob is None:
        target_accept_prob = binned_target(stats.n, bool((post.concentration < 1.0).any()))
    data: dict[str, Any] = collapsed_data(stats)
    return run_nuts(
        nuts_model(stats, post, model), stats.edges, post.alpha, post.sigma, post.tau,
        num_chains=num_chains, num_warmup=num_warmup, num_samples=num_samples, seed=seed,
        progress_bar=progress_bar, target_accept_prob=target_accept_prob, retry_divergent=True,
        **data,
    )


def cross_check_stats(
    stats: CalibrationStats,
    *,
    alpha: PriorParam = None,
    sigma: PriorParam = None,
    tau: PriorParam = None,
    model: str = "conjugate",
    num_chains: int = 4,
    num_warmup: int = 1000,
    num_samples: int = 1000,
    seed: int = 0,
    num_closed_form: int = 20_000,
    closed_form: BayesianECE | None = None,
    false_alarm: float = FALSE_ALARM,
    progress_bar: bool | None = None,
    target_accept_prob: float | None = None,
) -> CrossCheck:
    """:func:`cross_check` from statistics (e.g. merged chunks)."""
    if model not in MODELS:
        also = (" (model='smooth' runs on the predictions: cross_check(y_true, y_prob, "
                "model='smooth'))" if model == "smooth" else "")
        raise ValueError(f"model must be one of {MODELS} for statistics, got {model!r}{also}")
    model = binned_form(model)
    check_run_arguments(num_chains=num_chains, num_warmup=num_warmup, num_samples=num_samples,
                        num_closed_form=num_closed_form, false_alarm=false_alarm, seed=seed)
    if not isinstance(stats, CalibrationStats):
        raise ValueError(f"stats must be a CalibrationStats, got {type(stats).__name__}")
    if np.any(np.diff(stats.edges) <= 0):
        raise ValueError(
            "cross_check needs bins of positive width; these quantile edges coincide "
            "(many tied confidences): pass fewer bins or explicit edges"
        )
    post = conjugate_posterior(stats, alpha=alpha, sigma=sigma, tau=tau)
    if closed_form is None:
        closed_form = binned_posterior_ece(
            stats, alpha=alpha, sigma=sigma, tau=tau, num_samples=num_closed_form,
            seed=np.random.default_rng([seed, 1]), model=model,
        )
    mcmc = _nuts(stats, post, model, num_chains, num_warmup, num_samples, seed,
                 progress_bar, target_accept_prob)
    samples = mcmc.get_samples(group_by_chain=True)
    m = stats.n_bins
    idata = mcmc_inference_data(
        mcmc, coords={"bin": np.arange(m)},
        dims={"accuracy": ["bin"], "confidence": ["bin"], "weight": ["bin"], "mu": ["bin"]},
    )

    def as64(name: str) -> np.ndarray:
        return np.asarray(samples[name], dtype=np.float64)

    chains = {name: as64(name) for name in ("ece", "accuracy", "confidence", "weight")}
    flat = {k: v.reshape((-1,) + v.shape[2:]) for k, v in chains.items()}
    nuts_result = BayesianECE(
        draws=flat["ece"], accuracy=flat["accuracy"], confidence=flat["confidence"],
        weight=flat["weight"], plugin=closed_form.plugin, stats=stats,
        model="binned" if model == "conjugate" else "binned-literal", method="nuts",
        params=post,
    )
    closed_draws = {
        "ece": closed_form.draws,
        "accuracy": closed_form.accuracy,
        "confidence": closed_form.confidence,
    }
    agreement = compare_draws({k: chains[k] for k in closed_draws}, closed_draws, num_chains,
                              num_samples, false_alarm)
    return CrossCheck.judge(model, agreement, mcmc, nuts_result, closed_form, idata)


def cross_check_label_stats(
    stats: Sequence[CalibrationStats],
    labels: ArrayLike,
    *,
    average: str = "label",
    alpha: PriorParam = None,
    sigma: PriorParam = None,
    tau: PriorParam = None,
    model: str = "conjugate",
    num_chains: int = 4,
    num_warmup: int = 1000,
    num_samples: int = 1000,
    seed: int = 0,
    num_closed_form: int = 20_000,
    closed_form: BayesianECE | None = None,
    false_alarm: float = FALSE_ALARM,
    progress_bar: bool | None = None,
    target_accept_prob: float | None = None,
) -> CrossCheck:
    """The cross-check of the binned top-label posterior from per-label statistics.

    NUTS on :func:`bece.models.top_label_collapsed` (L·2·M Dirichlet cells,
    L·M bin means; O(L M) per step) against
    :func:`bece._binned.binned_posterior_top_label_ece`, compared on the top-label ECE,
    each label's ECE and each (label, bin)'s accuracy and mean confidence;
    the table's ``bin`` column is the flat index ``label * M + bin`` (label
    index in ``nuts.labels``). Meant for a handful of labels: the cost grows
    with L M. ``bece.cross_check(y_true, y_prob, model="binned",
    top_label=True)`` and ``BinnedModel().cross_check(label_stats)`` call it.
    """
    from numpyro.handlers import reparam

    from .._binned.toplabel import binned_posterior_top_label_ece
    from ..models import DirichletGammaReparam, top_label_collapsed

    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS} with top_label=True, got {model!r}")
    model = binned_form(model)
    check_run_arguments(num_chains=num_chains, num_warmup=num_warmup, num_samples=num_samples,
                        num_closed_form=num_closed_form, false_alarm=false_alarm, seed=seed)
    stats = tuple(stats)
    labels = np.asarray(labels)
    if closed_form is None:
        closed_form = binned_posterior_top_label_ece(
            stats, labels, average=average, alpha=alpha, sigma=sigma, tau=tau,
            num_samples=num_closed_form, seed=np.random.default_rng([seed, 1]), keep_bins=True,
            model=model,
        )
    elif not isinstance(closed_form, BayesianTopLabelECE) or closed_form.label_accuracy is None:
        raise ValueError("closed_form must be a BayesianTopLabelECE with its per-bin draws kept")
    post = closed_form.params
    n_labels, m = len(stats), stats[0].n_bins
    concentration = post.concentration.reshape(2, n_labels, m).transpose(1, 0, 2)  # (L, 2, M)
    alpha_l = post.alpha.reshape(2, n_labels, m).transpose(1, 0, 2)
    data = [collapsed_data(s) for s in stats]
    pooled = sum(stats[1:], stats[0])
    base = functools.partial(top_label_collapsed, n_labels=n_labels, average=average,
                             literal=model == "literal")
    boost = (concentration < 1.0).reshape(-1)
    scale = log_total_scale(pooled.n, bool(boost.any()))
    if target_accept_prob is None:
        target_accept_prob = binned_target(pooled.n, bool(boost.any()))
    mcmc = run_nuts(
        reparam(base, config={"q": DirichletGammaReparam(boost=boost, log_total_scale=scale)}),
        pooled.edges, alpha_l, post.sigma.reshape(n_labels, m), post.tau.reshape(n_labels, m),
        num_chains=num_chains, num_warmup=num_warmup, num_samples=num_samples, seed=seed,
        progress_bar=progress_bar, target_accept_prob=target_accept_prob, retry_divergent=True,
        counts=np.stack([d["counts"] for d in data]),
        mean_p=np.stack([d["mean_p"] for d in data]),
        ss_p=np.stack([d["ss_p"] for d in data]),
    )
    samples = mcmc.get_samples(group_by_chain=True)
    dims = {k: ["label", "bin"] for k in ("accuracy", "confidence", "weight", "mu")}
    dims["label_ece"] = ["label"]
    idata = mcmc_inference_data(mcmc, coords={"label": labels, "bin": np.arange(m)}, dims=dims)
    chains = {k: np.asarray(samples[k], dtype=np.float64)
              for k in ("ece", "label_ece", "accuracy", "confidence", "weight")}
    flat = {k: v.reshape((-1,) + v.shape[2:]) for k, v in chains.items()}
    w = flat["weight"]
    with np.errstate(invalid="ignore", divide="ignore"):
        pooled_acc = (w * flat["accuracy"]).sum(axis=1) / w.sum(axis=1)
        pooled_conf = (w * flat["confidence"]).sum(axis=1) / w.sum(axis=1)
    nuts_result = BayesianTopLabelECE(
        draws=flat["ece"], accuracy=pooled_acc, confidence=pooled_conf, weight=w.sum(axis=1),
        plugin=closed_form.plugin, stats=pooled,
        model="binned-top-label" if model == "conjugate" else "binned-top-label-literal",
        method="nuts", params=post, labels=labels, average=average, label_draws=flat["label_ece"],
        label_plugin=closed_form.label_plugin, label_stats=tuple(stats),
        label_accuracy=flat["accuracy"], label_confidence=flat["confidence"], label_weight=w,
    )
    label_accuracy, label_confidence = closed_form.label_accuracy, closed_form.label_confidence
    assert label_accuracy is not None and label_confidence is not None  # kept: checked or keep_bins=True
    closed = {"ece": closed_form.draws, "label_ece": closed_form.label_draws,
              "accuracy": label_accuracy, "confidence": label_confidence}
    agreement = compare_draws({k: chains[k] for k in closed}, closed, num_chains, num_samples,
                              false_alarm)
    return CrossCheck.judge(model, agreement, mcmc, nuts_result, closed_form, idata)
