"""NUTS on the hierarchical smooth top-label model against its Laplace path."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from .._base.laplace import mixture_information, single_threaded_blas
from .._base.typing import BinningSpec, PriorParam
from .._results.ece import BayesianECE, BayesianTopLabelECE
from .._smooth.average import DEFAULT_PRIOR_ODDS
from .._smooth.basis import DEFAULT_N_KNOTS, logit_confidence
from .._smooth.scale_prior import SHARED_PROB, SHARED_RATIO
from .._smooth.toplabel import (
    AVERAGES,
    label_ece_draws,
    label_posterior_draws,
    prepare_label_atoms,
    top_label_result,
)
from .._smooth.toplabel_fit import fit_top_label_smooth
from .._stats.binning import Binning
from .agreement import FALSE_ALARM, CrossCheck, first_converged, independent_draws
from .smooth import SMOOTH_TARGET, exact_calibration, identity_curve

__all__ = [
    "cross_check_smooth_top_label",
    "scaled_information",
    "top_label_model_kwargs",
]


def cross_check_smooth_top_label(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    y_pred: ArrayLike | None = None,
    n_bins: int | None = None,
    binning: BinningSpec | Binning = "uniform",
    average: str = "label",
    alpha: PriorParam = None,
    sigma: PriorParam = None,
    tau: PriorParam = None,
    model: str = "smooth",
    n_knots: int = DEFAULT_N_KNOTS,
    intercept_scale: float = 1.0,
    slope_scale: float = 0.5,
    smoothness_scale: float = 0.5,
    bin_scale: float | None = None,
    label_scale: float = 0.5,
    tilt_scale: float = 0.25,
    shared_prob: float = SHARED_PROB,
    grid: str | int | None = "auto",
    num_chains: int = 4,
    num_warmup: int = 1000,
    num_samples: int = 1000,
    seed: int = 0,
    num_closed_form: int = 20_000,
    closed_form: BayesianECE | None = None,
    false_alarm: float = FALSE_ALARM,
    progress_bar: bool | None = None,
    target_accept_prob: float | None = None,
    curve_points: int = 5,
    prior_odds: float = DEFAULT_PRIOR_ODDS,
) -> CrossCheck:
    """NUTS on :func:`bece.models.top_label_smooth_model` against the Laplace path.

    ``bece.cross_check(y_true, y_prob, model="smooth", top_label=True)``
    calls this. The model's spline, atoms, label centring and prior are
    those of :func:`bece._smooth.toplabel.smooth_top_label_ece`. NUTS first
    runs the model with each coefficient scaled by the data's information
    about it (:func:`scaled_information`: :math:`u_k` by :math:`\\sqrt{1 +
    \\lambda^2 I_k}`, and likewise :math:`v`, :math:`c`, :math:`e`) and the
    label scales :math:`\\kappa, \\omega` sampled by the probit of their
    prior's CDF (``probit_scales``), so that it sees neither the funnels of
    the coefficients with their scales nor the trough between the two parts
    of the scales' prior; when that run does not converge (after its repeat
    at a higher ``target_accept_prob``), the model as written (non-centred)
    is run once more, and the run that converged is judged (the first when
    neither did; ``CrossCheck.parameterisation`` says "scaled" or
    "non-centred"). Each NUTS draw gets its own Bayesian-bootstrap weights. Compared under the
    agreement rule (:mod:`bece._validation.agreement`): the top-label ECE
    (``average``), each label's ECE and each label's curve
    :math:`P(z = 1 \\mid p, l)` at ``curve_points`` confidences (equally spaced
    quantiles of the data, ends excluded; the table's ``bin`` column is the
    flat index, label then point) at their 5%, 50% and 95% quantiles, and
    the probability that every label is exactly calibrated at
    ``prior_odds`` (bridge sampling on the NUTS draws,
    :func:`bece._validation.smooth.exact_calibration`).
    Meant for a handful of labels (the table grows with L). ``alpha``,
    ``sigma``, ``tau`` (the binned model's prior) and ``closed_form`` do not
    apply; ``model`` must be "smooth" (it is there so that
    :func:`bece.cross_check` passes its arguments alike to either check).

    Returns
    -------
    bece.CrossCheck
        ``model="smooth-top-label"``; ``closed_form`` holds the Laplace draws
        (``method="laplace"``), ``nuts`` the NUTS ones (``method="nuts"``).
    """
    from .nuts import check_run_arguments

    check_run_arguments(false_alarm=false_alarm, seed=seed, num_chains=num_chains,
                        num_warmup=num_warmup, num_samples=num_samples,
                        num_closed_form=num_closed_form, curve_points=curve_points)
    if target_accept_prob is None:  # the funnels of the scale parameters
        target_accept_prob = SMOOTH_TARGET
    given = [k for k, v in (("alpha", alpha), ("sigma", sigma), ("tau", tau)) if v is not None]
    if given:
        raise ValueError(f"{', '.join(given)} do(es) not apply to model='smooth'")
    if model != "smooth":
        raise ValueError(f"model must be 'smooth' here, got {model!r}")
    if average not in AVERAGES:
        raise ValueError(f"average must be one of {AVERAGES}, got {average!r}")
    if closed_form is not None:
        raise ValueError("closed_form does not apply to model='smooth' with top_label=True: the "
                         "Laplace draws are computed here, with the curves they compare")
    atoms, label_stats, labels = prepare_label_atoms(y_true, y_prob, y_pred, n_bins, binning, grid)
    with single_threaded_blas():
        post = fit_top_label_smooth(atoms, n_knots=n_knots, intercept_scale=intercept_scale,
                                    slope_scale=slope_scale, smoothness_scale=smoothness_scale,
                                    bin_scale=bin_scale, label_scale=label_scale,
                                    tilt_scale=tilt_scale, shared_prob=shared_prob)
        basis = post.basis
        if basis.n_spline == 0:
            raise ValueError("cross_check(model='smooth', top_label=True) needs at least 3 "
                             "distinct confidences")
        e, post = label_posterior_draws(atoms, post, num_closed_form,
                                        np.random.default_rng([seed, 1]), True)
        laplace = top_label_result(atoms, label_stats, labels, post, e, average, "laplace")
    model_kwargs = top_label_model_kwargs(atoms, post)
    run = partial(_nuts_against_top_label, atoms, label_stats, labels, post, e, laplace, average,
                  model_kwargs, num_chains=num_chains, num_warmup=num_warmup,
                  num_samples=num_samples, seed=seed, progress_bar=progress_bar,
                  target_accept_prob=target_accept_prob, false_alarm=false_alarm,
                  curve_points=curve_points, prior_odds=prior_odds)
    return first_converged({"scaled": {**scaled_information(post), "probit_scales": True},
                            "non-centred": {}}, run, "top-label model", progress_bar)


def _nuts_against_top_label(atoms: Any, label_stats: Any, labels: np.ndarray, post: Any,
                            e: dict[str, np.ndarray], laplace: BayesianTopLabelECE, average: str,
                            model_kwargs: dict[str, Any], parameterisation: str,
                            options: dict[str, Any], *, num_chains: int, num_warmup: int,
                            num_samples: int, seed: int, progress_bar: bool | None,
                            target_accept_prob: float, false_alarm: float, curve_points: int,
                            prior_odds: float) -> CrossCheck:
    """One NUTS run of the hierarchical top-label model in the parameterisation
    that ``options`` give :func:`bece.models.top_label_smooth_model`
    (:func:`scaled_information`'s keywords; empty: the model as written),
    judged against the Laplace draws ``e`` and their result ``laplace``."""
    from ..models import top_label_smooth_model
    from .agreement import compare_draws
    from .nuts import mcmc_inference_data, run_nuts

    basis, n_labels = post.basis, atoms.n_labels
    mcmc = run_nuts(
        top_label_smooth_model, basis.knots, basis.transform, num_chains=num_chains,
        num_warmup=num_warmup, num_samples=num_samples, seed=seed, progress_bar=progress_bar,
        target_accept_prob=target_accept_prob, retry_divergent=True, dense_mass=True, **model_kwargs,
        **options,
    )
    smp = {k: np.asarray(v, dtype=np.float64) for k, v in mcmc.get_samples(group_by_chain=True).items()}
    flat = {k: v.reshape((num_chains * num_samples,) + v.shape[2:]) for k, v in smp.items()}
    lam = flat["lam"]
    tau = flat["tau"] if basis.n_bins else np.zeros_like(lam)
    theta = [flat["a"][:, None], flat["b"][:, None], flat["u"]]
    if basis.n_bins:
        theta.append(flat["v"])
    beta = np.concatenate(theta, axis=1) * post.column_scale(lam, tau)
    label_beta = np.stack([flat["kappa"][:, None] * flat["c"], flat["omega"][:, None] * flat["e"]],
                          axis=-1)
    with single_threaded_blas():
        e_nuts = label_ece_draws(atoms, post, beta, label_beta, np.random.default_rng([seed, 2]),
                                 keep=True)
    nuts_result = top_label_result(atoms, label_stats, labels, post, e_nuts, average, "nuts")
    idata = mcmc_inference_data(mcmc, coords={"label": labels},
                                dims={k: ["label"] for k in ("c", "e", "c_scaled", "e_scaled") if k in smp})
    probe = np.quantile(atoms.p, np.linspace(0, 1, curve_points + 2)[1:-1])
    pl = np.repeat(np.arange(n_labels), curve_points)
    xp = np.tile(probe, n_labels)
    bp = atoms.binning.index(xp) if basis.n_bins else None
    def curves(b: np.ndarray, lb: np.ndarray) -> np.ndarray:
        return special.expit(post.logits(logit_confidence(xp), pl, bp, b, lb))

    shape = (num_chains, num_samples)
    chains = {
        "ece": nuts_result.draws.reshape(shape),
        "label_ece": nuts_result.label_draws.reshape(shape + (-1,)),
        "curve": curves(beta, label_beta).reshape(shape + (-1,)),
    }
    refs = {
        "ece": laplace.draws[:, None],
        "label_ece": laplace.label_draws,
        "curve": curves(e["beta"], e["label_beta"]),
    }
    names = ("a", "b", "lam", "u", "tau", "v", "kappa", "omega", "c", "e")
    params: dict[str, np.ndarray] = {k: smp[k] for k in names if k in smp}
    identity = {**identity_curve(basis), "kappa": 0.0, "omega": 0.0, "c": np.zeros(n_labels),
                "e": np.zeros(n_labels)}
    evidence, probabilities = exact_calibration(
        top_label_smooth_model, smp, (basis.knots, basis.transform), model_kwargs, identity,
        post.log_bayes_factor, prior_odds, seed, centering=options)
    agreement = compare_draws(chains, refs, num_chains, num_samples, false_alarm, diagnose=params,
                              probabilities=probabilities,
                              fast_draws=independent_draws(post, laplace.draws.shape[0]))
    assert isinstance(nuts_result, BayesianTopLabelECE)
    return CrossCheck.judge("smooth-top-label", agreement, mcmc, nuts_result, laplace, idata,
                            evidence=evidence, parameterisation=parameterisation)


def top_label_model_kwargs(atoms: Any, post: Any) -> dict[str, Any]:
    """The keywords of :func:`bece.models.top_label_smooth_model` (after ``knots,
    transform``) for the label atoms of a data set and its fit ``post``; ``z``
    (and ``trials``) hold the data."""
    data: dict[str, Any] = {"x": atoms.x, "label": atoms.label, "z": atoms.successes}
    if not atoms.exact:
        data["trials"] = atoms.trials
    if post.basis.n_bins:
        data.update(bins=atoms.bin, n_bins=post.basis.n_bins, bin_scale=post.bin_scale)
    return dict(
        n_labels=atoms.n_labels, center=post.center, spread=post.spread,
        intercept_scale=float(post.prior_scales[0]), slope_scale=float(post.prior_scales[1]),
        smoothness_scale=post.smoothness_scale, label_scale=post.label_scale,
        tilt_scale=post.tilt_scale, shared_prob=post.shared_prob, shared_ratio=SHARED_RATIO, **data,
    )


def scaled_information(post: Any) -> dict[str, np.ndarray]:
    r"""The data's information about each scaled effect of the hierarchical
    top-label model, from its Laplace fit: the ``spline_information``,
    ``bin_information``, ``shift_information`` and ``tilt_information`` of
    :func:`bece.models.top_label_smooth_model`.

    Component j of the fit, at :math:`(\lambda_j, \tau_j, \kappa_j,
    \omega_j)`, has the label blocks :math:`C_l = R_l R_l^\top`, whose
    diagonal is the prior precision 1 plus :math:`\kappa_j^2 I^c_l` and
    :math:`\omega_j^2 I^e_l`, and the Schur complement :math:`S = L L^\top`
    of the shared coefficients, whose diagonal for :math:`u_k` is the prior
    precision 1 plus :math:`\lambda_j^2 I^u_k` (the information left once
    the label effects are integrated out; :math:`\tau_j` for :math:`v_m`).
    Each estimate, such as :math:`([C_l]_{00} - 1)/\kappa_j^2`, is averaged
    with the components' weights.
    """
    label_diag = np.einsum("jlab,jlab->jla", post.label_chol, post.label_chol)  # (G, L, 2)
    shared = np.einsum("jkl,jkl->jk", post.chol, post.chol)  # (G, P)
    prec = 1.0 / np.asarray(post.prior_scales, dtype=np.float64) ** 2
    k2, m = post.basis.n_spline, post.basis.n_bins
    out = {"shift_information": mixture_information(post.weights, label_diag[:, :, 0], post.kappas),
           "tilt_information": mixture_information(post.weights, label_diag[:, :, 1], post.omegas)}
    if k2:
        spline = slice(2, 2 + k2)
        out["spline_information"] = mixture_information(post.weights, shared[:, spline],
                                                         post.lambdas, prec[spline])
    if m:
        out["bin_information"] = mixture_information(post.weights, shared[:, 2 + k2:], post.taus,
                                                     prec[2 + k2:])
    return out
