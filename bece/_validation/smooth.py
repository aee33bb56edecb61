"""NUTS on the smooth model against its Laplace path."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._base.laplace import mixture_variances, single_threaded_blas
from .._base.typing import BinningSpec
from .._results.ece import BayesianECE, SmoothBayesianECE
from .._smooth.atoms import Atoms
from .._smooth.average import DEFAULT_PRIOR_ODDS
from .._smooth.basis import DEFAULT_N_KNOTS
from .._smooth.draws import curve_values, importance_draws
from .._smooth.fit import fit_smooth
from .._smooth.posterior import prepare_atoms, smooth_result
from .._stats.binning import Binning
from .._stats.calibration_stats import CalibrationStats
from .agreement import FALSE_ALARM, CrossCheck, Probability, first_converged, independent_draws

__all__ = [
    "SMOOTH_TARGET",
    "cross_check_smooth",
    "cross_check_smooth_atoms",
    "exact_calibration",
    "identity_curve",
    "nuts_centering",
    "smooth_model_kwargs",
]


#: The smooth models' default ``target_accept_prob``, with a dense mass matrix
#: (repeat at 0.999): the funnels of the scale parameters. With a diagonal mass
#: matrix, runs at 0.95 had 1 to 10 divergent transitions in 4,000 on calibrated
#: data at n = 3,000, and runs at 0.99 still 1 (n = 2,000 at P(y = 1 | p) = p^1.5;
#: n = 10^5 calibrated); with a dense one, 1 to 3 at 0.95 and none at 0.99 on
#: those and on calibrated data at n = 2,000 and 10^4 (41 leapfrog steps per
#: transition, a diagonal one at 0.99 39 to 45).
SMOOTH_TARGET = 0.99


def cross_check_smooth(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    y_pred: ArrayLike | None = None,
    n_bins: int | None = None,
    binning: BinningSpec | Binning = "uniform",
    grid: str | int | None = "auto",
    **options: Any,
) -> CrossCheck:
    """:func:`cross_check_smooth_atoms` on the atoms of predictions: one per
    prediction up to 2,000 of them, the fine grid above (``grid``, as
    :func:`bece._smooth.posterior.smooth_ece`); ``options`` are its keywords."""
    atoms, stats, grid_points = prepare_atoms(y_true, y_prob, y_pred, n_bins, binning, grid)
    return cross_check_smooth_atoms(atoms, stats, grid_points, **options)


def cross_check_smooth_atoms(
    atoms: Atoms,
    stats: CalibrationStats,
    grid_points: np.ndarray,
    *,
    n_knots: int = DEFAULT_N_KNOTS,
    intercept_scale: float = 1.0,
    slope_scale: float = 0.5,
    smoothness_scale: float = 0.5,
    bin_scale: float | None = 0.25,
    num_chains: int = 4,
    num_warmup: int = 1000,
    num_samples: int = 1000,
    seed: int = 0,
    num_closed_form: int = 20_000,
    closed_form: BayesianECE | None = None,
    false_alarm: float = FALSE_ALARM,
    progress_bar: bool | None = None,
    target_accept_prob: float | None = None,
    curve_points: int = 9,
    prior_odds: float = DEFAULT_PRIOR_ODDS,
) -> CrossCheck:
    """NUTS on :func:`bece.models._smooth.smooth_model` against the Laplace path.

    ``atoms`` are the data the model sees (:class:`bece._smooth.atoms.Atoms`: from
    predictions, fine statistics or a result), ``stats`` the statistics in
    the ECE bins, ``grid_points`` the confidences where curves are drawn.
    The model's knots, transform and prior are those of
    :func:`bece._smooth.posterior.smooth_ece`; NUTS samples :math:`(a, b,
    \\lambda, u, \\tau, v)` with the coefficients partly centred as the
    Laplace fit suggests (:func:`nuts_centering`); when that run does not
    converge (after its repeat at a higher ``target_accept_prob``), the same
    model is run once more non-centred, and the run that converged is judged
    (the centred one when neither did; ``CrossCheck.parameterisation`` says
    which). Each parameterisation fails to converge on some data sets (in
    ``benchmarks/crosscheck_agreement.py``, the centred mostly at n = 10^6
    on calibrated data, the non-centred at n = 10^6 on miscalibrated data),
    mostly one divergent transition in 4,000; on some both fail, and the
    verdict is "not converged". Each NUTS draw gets
    its own Bayesian-bootstrap weights (the posterior factorises, see the
    module docstring). Compared under the agreement rule
    (:mod:`bece._validation.agreement`): the ECE, each bin's accuracy and the
    curve at ``curve_points`` confidences (equally spaced quantiles of the
    data, ends excluded) at their 5%, 50% and 95% quantiles; the probability
    of exact calibration at ``prior_odds`` (the fast path's Bayes factor
    against bridge sampling on the NUTS draws, :func:`exact_calibration`;
    ``CrossCheck.evidence`` holds both log Bayes factors); and :math:`P(\\tau
    > 0.3)`, the gate of the zero-gap spike. NUTS runs in float64 within the
    call (a scoped ``enable_x64``), so its draws do not depend on
    ``jax_enable_x64``.

    Returns
    -------
    bece.CrossCheck
        ``model="smooth"``; ``closed_form`` holds the Laplace draws
        (``method="laplace"``), ``nuts`` the NUTS ones (``method="nuts"``).
    """
    from .nuts import check_run_arguments

    check_run_arguments(false_alarm=false_alarm, seed=seed, num_chains=num_chains,
                        num_warmup=num_warmup, num_samples=num_samples,
                        num_closed_form=num_closed_form, curve_points=curve_points)
    if target_accept_prob is None:  # the funnels of the scale parameters
        target_accept_prob = SMOOTH_TARGET
    if closed_form is not None and not isinstance(closed_form, SmoothBayesianECE):
        raise ValueError("closed_form must be a SmoothBayesianECE (the smooth model's draws, with their "
                         "curve coefficients)")
    with single_threaded_blas():
        post = fit_smooth(atoms, n_knots=n_knots, intercept_scale=intercept_scale,
                          slope_scale=slope_scale, smoothness_scale=smoothness_scale,
                          bin_scale=bin_scale)
    basis = post.basis
    if basis.n_spline == 0:
        raise ValueError("cross_check(model='smooth') needs at least 3 distinct confidences")
    rng = np.random.default_rng([seed, 1])
    if closed_form is None:
        with single_threaded_blas():
            beta_c, lam_c, tau_c, post = importance_draws(atoms, post, num_closed_form, rng)
            closed_form = smooth_result(atoms, stats, post, beta_c, lam_c, tau_c, rng,
                                         "laplace", grid_points)
    model_kwargs = smooth_model_kwargs(atoms, post)
    run = partial(_nuts_against, atoms, stats, grid_points, post, closed_form, model_kwargs,
                  num_chains=num_chains, num_warmup=num_warmup, num_samples=num_samples, seed=seed,
                  progress_bar=progress_bar, target_accept_prob=target_accept_prob,
                  false_alarm=false_alarm, curve_points=curve_points, prior_odds=prior_odds)
    return first_converged({"centred": nuts_centering(post), "non-centred": {}}, run, "smooth model",
                           progress_bar)


def _nuts_against(atoms: Atoms, stats: CalibrationStats, grid_points: np.ndarray, post: Any,
                  closed_form: SmoothBayesianECE, model_kwargs: dict[str, Any],
                  parameterisation: str, centering: dict[str, Any], *, num_chains: int,
                  num_warmup: int, num_samples: int, seed: int, progress_bar: bool | None,
                  target_accept_prob: float, false_alarm: float, curve_points: int,
                  prior_odds: float) -> CrossCheck:
    """One NUTS run of the smooth model in the parameterisation ``centering``
    (:func:`nuts_centering`'s keywords; empty: non-centred), judged against
    the Laplace draws ``closed_form`` by the agreement rule."""
    from ..models import smooth_model
    from .agreement import compare_draws
    from .nuts import mcmc_inference_data, run_nuts

    basis = post.basis

    mcmc = run_nuts(
        smooth_model, basis.knots, basis.transform, num_chains=num_chains, num_warmup=num_warmup,
        num_samples=num_samples, seed=seed, progress_bar=progress_bar,
        target_accept_prob=target_accept_prob, retry_divergent=True, dense_mass=True,
        **model_kwargs, **centering,
    )
    smp = {k: np.asarray(v, dtype=np.float64) for k, v in mcmc.get_samples(group_by_chain=True).items()}
    flat = {k: v.reshape((num_chains * num_samples,) + v.shape[2:]) for k, v in smp.items()}
    lam = flat["lam"]
    tau = flat["tau"] if basis.n_bins else np.zeros_like(lam)
    theta = [flat["a"][:, None], flat["b"][:, None], flat["u"]]
    if basis.n_bins:
        theta.append(flat["v"])
    beta = np.concatenate(theta, axis=1) * post.column_scale(lam, tau)
    nuts_result = smooth_result(atoms, stats, post, beta, lam, tau,
                                 np.random.default_rng([seed, 2]), "nuts", grid_points)
    idata = mcmc_inference_data(mcmc)
    probe = np.quantile(atoms.p, np.linspace(0, 1, curve_points + 2)[1:-1])
    shape = (num_chains, num_samples)
    chains = {
        "ece": nuts_result.draws.reshape(shape),
        "accuracy": nuts_result.accuracy.reshape(shape + (-1,)),
        "curve": curve_values(basis, atoms.binning, probe, beta).reshape(shape + (-1,)),
    }
    refs = {
        "ece": closed_form.draws[:, None],
        "accuracy": closed_form.accuracy,
        "curve": curve_values(basis, atoms.binning, probe, closed_form.coefficients),
    }
    params: dict[str, np.ndarray] = {k: smp[k] for k in ("a", "b", "lam", "u", "tau", "v") if k in smp}
    evidence, probabilities = exact_calibration(
        smooth_model, smp, (basis.knots, basis.transform), model_kwargs, identity_curve(basis),
        closed_form.params.log_bayes_factor, prior_odds, seed, centering=centering)
    if basis.n_bins:
        probabilities["P(tau > 0.3)"] = _rough(smp["tau"], closed_form.params)
    agreement = compare_draws(chains, refs, num_chains, num_samples, false_alarm, diagnose=params,
                              probabilities=probabilities,
                              fast_draws=independent_draws(closed_form.params, closed_form.draws.shape[0]))
    return CrossCheck.judge("smooth", agreement, mcmc, nuts_result, closed_form, idata,
                            evidence=evidence, parameterisation=parameterisation)


def smooth_model_kwargs(atoms: Any, post: Any) -> dict[str, Any]:
    """The keywords of :func:`bece.models.smooth_model` (after ``knots, transform``)
    for the atoms of a data set and the prior scales of its fit ``post``; ``z``
    (and ``trials``) hold the data."""
    data: dict[str, Any] = {"x": atoms.x, "z": atoms.successes}
    if not atoms.exact:
        data["trials"] = atoms.trials
    if post.basis.n_bins:
        data.update(bins=atoms.bin, n_bins=post.basis.n_bins, bin_scale=post.bin_scale)
    return dict(intercept_scale=float(post.prior_scales[0]), slope_scale=float(post.prior_scales[1]),
                smoothness_scale=post.smoothness_scale, **data)


def nuts_centering(post: Any) -> dict[str, np.ndarray]:
    r"""The partial centering of the spline and bin coefficients NUTS runs with
    (``spline_centering``, ``bin_centering`` of :func:`bece.models.smooth_model`).

    Coefficient k gets :math:`c_k = 1 - \bar v_k`, clipped to [0, 1], with
    :math:`\bar v_k` its posterior variance in prior units under the
    Laplace fit (the mixture's components' :math:`[H_j^{-1}]_{kk}` weighted
    by their weights): for a normal likelihood, the centering under which
    a Gibbs step on the coefficient and its scale mixes best
    (Papaspiliopoulos, Roberts & Sköld 2007). Coefficients the data say
    little about stay non-centred (c near 0); those the data pin down
    (large n) are centred, where the non-centred pair
    :math:`(\lambda, u)` lies on a curved ridge :math:`\lambda u \approx`
    const. On miscalibrated data at n = 10^6 (P(y = 1 | p) = p^1.5, seed 2)
    NUTS had 15 divergent transitions in 4,000 at ``target_accept_prob``
    0.99 without it (all at the upper end of :math:`\lambda`, median 63
    leapfrog steps) and none with it (31 steps).
    """
    centering = np.clip(1.0 - mixture_variances(post.weights, post.chol), 0.0, 1.0)
    k2 = post.basis.n_spline
    out = {"spline_centering": centering[2:2 + k2]}
    if post.basis.n_bins:
        out["bin_centering"] = centering[2 + k2:]
    return out


def exact_calibration(model: Any, samples: dict[str, np.ndarray], args: tuple,
                      model_kwargs: dict[str, Any], identity: dict[str, Any], fast: float,
                      prior_odds: float, seed: int, centering: dict[str, Any] | None = None,
                      ) -> tuple[dict[str, float], dict[str, Probability]]:
    """The log Bayes factor of exact calibration against the NumPyro ``model``:
    ``fast`` (the fast path's) and from bridge sampling on the NUTS ``samples``
    (:mod:`bece._validation.bridge`), with the identity curve's likelihood
    from the model at the parameters ``identity``; and the probability of
    exact calibration each gives at ``prior_odds``. ``centering`` holds the
    model's keywords of the parameterisation NUTS ran (:func:`nuts_centering`'s,
    or ``tilt_information`` for the PIT model): the bridge works in its
    unconstrained space; the identity curve's likelihood does not depend on it."""
    from .._smooth.average import prob_calibrated
    from .bridge import log_likelihood_at, model_log_marginal

    log_ml1, se = model_log_marginal(model, samples, *args, seed=seed, **model_kwargs,
                                     **(centering or {}))
    nuts = log_likelihood_at(model, identity, *args, **model_kwargs) - log_ml1
    pi_nuts, pi_fast = prob_calibrated(nuts, prior_odds), prob_calibrated(fast, prior_odds)
    evidence = {"fast": float(fast), "nuts": nuts, "se": se, "prior_odds": prior_odds}
    return evidence, {"P(exactly calibrated)": Probability(
        fast=pi_fast, nuts=pi_nuts, mcse_nuts=pi_nuts * (1 - pi_nuts) * se)}


def identity_curve(basis: Any) -> dict[str, Any]:
    """The smooth model's parameters of the identity curve :math:`f(x) = x`."""
    identity: dict[str, Any] = {"a": 0.0, "b": 0.0, "lam": 0.0, "u": np.zeros(basis.n_spline)}
    if basis.n_bins:
        identity.update(tau=0.0, v=np.zeros(basis.n_bins))
    return identity


def _rough(tau: np.ndarray, post: Any) -> Probability:
    """:math:`P(\\tau > \\tau_0 \\mid \\text{data})`, the gate of the zero-gap
    spike (:func:`bece._smooth.zero_gaps.rough_probability`), from the fast
    path's grid and from the NUTS draws ``tau`` (chain, draw)."""
    from .._base.arviz import ess
    from .._smooth.zero_gaps import ZERO_GAP_TAU, rough_probability

    above = (tau > ZERO_GAP_TAU).astype(np.float64)
    p = float(above.mean())
    n_eff = ess(above, method="mean") if 0 < p < 1 else above.size
    # the Monte Carlo error of a share of draws, 0 or 1 included: Jeffreys' estimate in it
    smoothed = (above.sum() + 0.5) / (above.size + 1)
    return Probability(fast=rough_probability(post, ZERO_GAP_TAU), nuts=p,
                       mcse_nuts=float(np.sqrt(smoothed * (1 - smoothed) / max(n_eff, 1.0))))
