"""Cross-checks of the regression calibration posteriors: NUTS on the PIT models.

``bece.cross_check(pit, model=SmoothPITModel())`` and
``model=DirichletPITModel()`` call these. Compared under the agreement rule
(:mod:`bece._validation.agreement`) at the 5%, 50% and 95% quantiles:

* the smooth PIT model (:func:`bece.models.pit_model`): its ``shift`` and
  ``log_spread``, the calibration curve at the levels and the cal score of
  the smooth alternative's draws (NUTS against the Laplace-mixture draws
  corrected by importance sampling, before the mixture with calibration),
  and the probability of exact calibration at the model's prior odds (the
  fast path's Bayes factor against bridge sampling on the NUTS draws,
  :func:`bece._validation.smooth.exact_calibration`);
* the Dirichlet model (:func:`bece.models.pit_dirichlet_model`): the curve
  and the cal score against the closed-form Dirichlet draws (exact: a
  disagreement is a bug).

NUTS runs on the PIT histogram (the grid the fast path fits), so its cost
does not grow with n.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._base.laplace import mixture_information, single_threaded_blas
from .._base.random import sample_dirichlet
from .._regression.bayesian import BayesianCalibrationError, pit_data, smooth_prior
from .._regression.cells import cell_curve, forecast_cells
from .._regression.forecast import check_levels
from .._regression.metrics import DEFAULT_LEVELS
from .._regression.smooth import curve_draws, fit_pit_model, log_cell_probs, model_grid, pit_model_draws
from .agreement import CrossCheck, compare_draws, first_converged, independent_draws
from .nuts import mcmc_inference_data, run_nuts
from .settings import MCMCSettings
from .smooth import SMOOTH_TARGET, exact_calibration

__all__ = ["cross_check_dirichlet_pit", "cross_check_smooth_pit", "smooth_pit_arguments",
           "tilt_information"]

#: NUTS step-size target of the Dirichlet PIT model (no funnel: 2 chains x
#: 1,000 draws at 0.9 had no divergence on n = 300); the smooth one's is
#: :data:`bece._validation.smooth.SMOOTH_TARGET` with a dense mass matrix, for
#: the funnel of its tilt scale at calibration (at 0.9 and 0.95 a calibrated
#: forecaster, n = 300 on 20 cells, gave 1 divergent transition in 2,000)
PIT_TARGET = 0.9


def _levels(levels: ArrayLike | None) -> np.ndarray:
    return DEFAULT_LEVELS.copy() if levels is None else check_levels(levels)


def smooth_pit_arguments(pit: Any, levels: np.ndarray, scales: dict[str, float],
                         n_cells: int | None, forecast: tuple[Any, Any]) -> tuple[Any, ...]:
    """The data, its fit and the NumPyro model's arguments for the smooth PIT model:
    ``(data, cells, post, args, kwargs)``; ``kwargs["counts"]`` holds the data."""
    data = pit_data(pit, levels, n_cells)
    cells = forecast_cells(forecast[0], forecast[1], data.histogram, data.values)
    hist = data.histogram
    with single_threaded_blas():
        post = fit_pit_model(hist, cells=cells, **scales)
    grid = model_grid(hist, cells)
    kwargs: dict[str, Any] = {"n": hist.n, "counts": hist.counts if cells is None else cells.counts,
                              **scales}
    if cells is not None:
        kwargs["share"] = cells.share
    return data, cells, post, (grid.z[1:-1], grid.basis), kwargs


def _result(draws: np.ndarray, curve: np.ndarray, levels: np.ndarray, data: Any, model: str,
            **extra: Any) -> BayesianCalibrationError:
    plugin = float(np.sum((levels - data.observed) ** 2))
    return BayesianCalibrationError(draws=draws, curve=curve, levels=levels, observed=data.observed,
                                    plugin=plugin, n=data.histogram.n, counts=data.counts,
                                    model=model, **extra)


def cross_check_smooth_pit(pit: Any, levels: ArrayLike | None = None, *, prior_odds: float,
                           scales: dict[str, float | None], n_cells: int | None = None,
                           forecast: tuple[Any, Any] = (None, None),
                           mcmc: MCMCSettings | None = None) -> CrossCheck:
    """NUTS on :func:`bece.models.pit_model` against the smooth PIT model's fast path.

    ``pit``: PIT values or a :class:`~bece.regression.PITHistogram`;
    ``scales``: ``shift_scale``, ``spread_scale``, ``smoothness_scale``
    (None: the defaults); ``forecast``: ``(forecast_levels,
    forecast_draws)`` of a quantile or sample forecast's randomised PIT.
    The cal score compared is :math:`\\sum_j (p_j - C_j)^2`.

    NUTS runs the model with each tilt coefficient :math:`w_k` scaled by
    :math:`\\sqrt{1 + \\lambda^2 I_k}`, :math:`I_k` the data's information
    about :math:`\\lambda w_k` from the Laplace fit (:func:`tilt_information`;
    ``pit_model(tilt_information=...)``), so that NUTS sees no funnel between
    :math:`\\lambda` and :math:`w` at either end of :math:`\\lambda`. When
    that run does not converge (after its repeat at a higher
    ``target_accept_prob``), the model as written (non-centred) is run once
    more, and the run that converged is judged (the first when neither did;
    ``CrossCheck.parameterisation`` says which: "scaled" or "non-centred").
    """
    mcmc = MCMCSettings.resolve(mcmc)
    p = _levels(levels)
    full = smooth_prior(scales.get("shift_scale"), scales.get("spread_scale"),
                        scales.get("smoothness_scale"))
    data, cells, post, args, kwargs = smooth_pit_arguments(pit, p, full, n_cells, forecast)
    hist = data.histogram
    with single_threaded_blas():
        theta, lam, curve, post = pit_model_draws(hist, post, mcmc.num_closed_form,
                                                  np.random.default_rng([mcmc.seed, 1]), p)
    assert curve is not None
    cal_f = ((p - curve) ** 2).sum(axis=1)
    fast = _result(cal_f, curve, p, data, "smooth", shift=theta[:, 0], log_spread=theta[:, 1],
                   lam=lam, w=theta[:, 2:], params=post, log_bayes_factor=post.log_bayes_factor,
                   prior_odds=prior_odds, histogram=hist)

    run = partial(_nuts_against_pit, data, cells, post, args, kwargs, fast, p, prior_odds, mcmc)
    return first_converged({"scaled": {"tilt_information": tilt_information(post)},
                            "non-centred": {}}, run, "PIT model", mcmc.progress_bar)


def tilt_information(post: Any) -> np.ndarray:
    r"""The data's information :math:`I_k` about each tilt coefficient
    :math:`\lambda w_k`, from the Laplace fit (``tilt_information`` of
    :func:`bece.models.pit_model`).

    Component j of the fit, at :math:`\lambda_j`, has the negative Hessian
    :math:`H_j = L_j L_j^\top`, whose diagonal for :math:`w_k` is the prior
    precision 1 plus :math:`\lambda_j^2 I_k`; the estimates
    :math:`([H_j]_{kk} - 1) / \lambda_j^2` are averaged with the
    components' weights.

    Measured with ``benchmarks/crosscheck_agreement.py``'s data at n =
    10^5 (4 chains of 1,000 draws after 1,000 warm-up): the model as written
    kept one or two divergent transitions at ``target_accept_prob`` 0.999
    on three data sets (Gaussian forecasts, calibrated seed 1 and shifted
    seed 0; 100-draw sample forecasts, calibrated seed 0), at 96 to 160
    leapfrog steps per transition; scaled, none at 0.99, at 31 steps. On
    the first, one minus the Laplace variance as a partial centering
    (:func:`bece._validation.smooth.nuts_centering`) took 60 steps but
    diverged at :math:`\lambda = 3 \cdot 10^{-5}`, the other end of
    :math:`\lambda`'s posterior (1% to 99% quantiles 0.0002 to 0.12) from
    the non-centred run's divergence (:math:`\lambda = 0.14`).
    """
    diag = np.einsum("jkl,jkl->jk", post.chol, post.chol)[:, 2:]  # [L L^T]_kk
    return mixture_information(post.weights, diag, post.lambdas)


def _nuts_against_pit(data: Any, cells: Any, post: Any, args: tuple, kwargs: dict[str, Any],
                      fast: BayesianCalibrationError, p: np.ndarray, prior_odds: float,
                      mcmc: MCMCSettings, parameterisation: str,
                      options: dict[str, Any]) -> CrossCheck:
    """One NUTS run of the smooth PIT model in the parameterisation that
    ``options`` give :func:`bece.models.pit_model` (``tilt_information``;
    empty: the model as written), judged against the fast path's draws ``fast``."""
    from ..models import pit_model

    hist = data.histogram
    run = run_nuts(pit_model, *args, num_chains=mcmc.num_chains, num_warmup=mcmc.num_warmup,
                   num_samples=mcmc.num_samples, seed=mcmc.seed, progress_bar=mcmc.progress_bar,
                   target_accept_prob=mcmc.target_accept_prob or SMOOTH_TARGET, retry_divergent=True,
                   dense_mass=True, **kwargs, **options)
    smp = {k: np.asarray(v, dtype=np.float64) for k, v in run.get_samples(group_by_chain=True).items()}
    shape = (mcmc.num_chains, mcmc.num_samples)
    th = np.concatenate([smp["shift"].reshape(-1, 1), smp["log_spread"].reshape(-1, 1),
                         smp["w"].reshape(-1, smp["w"].shape[-1])], axis=1)
    lam_n = smp["lam"].reshape(-1)
    grid = model_grid(hist, cells)
    nuts_curve = (curve_draws(th, lam_n, p, hist.n_cells) if cells is None
                  else cell_curve(np.exp(log_cell_probs(th, lam_n, grid)), cells, p))
    cal_n = ((p - nuts_curve) ** 2).sum(axis=1)
    chains = {"shift": smp["shift"], "log_spread": smp["log_spread"],
              "curve": nuts_curve.reshape(shape + (-1,)), "cal": cal_n.reshape(shape)}
    assert fast.shift is not None and fast.log_spread is not None  # the smooth model's draws
    refs = {"shift": fast.shift, "log_spread": fast.log_spread, "curve": fast.curve, "cal": fast.draws}
    identity = {"shift": 0.0, "log_spread": 0.0, "lam": 1.0, "w": np.zeros(args[1].shape[1])}
    evidence, probabilities = exact_calibration(pit_model, smp, args, kwargs, identity,
                                                post.log_bayes_factor, prior_odds, mcmc.seed,
                                                centering=options)
    agreement = compare_draws(chains, refs, mcmc.num_chains, mcmc.num_samples, mcmc.false_alarm,
                              diagnose={k: smp[k] for k in ("shift", "log_spread", "lam", "w")},
                              probabilities=probabilities,
                              fast_draws=independent_draws(post, fast.draws.shape[0]))
    nuts = _result(cal_n, nuts_curve, p, data, "smooth", shift=th[:, 0], log_spread=th[:, 1],
                   lam=lam_n, w=th[:, 2:], histogram=hist)
    return CrossCheck.judge("smooth-pit", agreement, run, nuts, fast, mcmc_inference_data(run),
                            evidence=evidence, parameterisation=parameterisation)


def cross_check_dirichlet_pit(pit: Any, levels: ArrayLike | None = None, *,
                              alpha: Any = None, mcmc: MCMCSettings | None = None) -> CrossCheck:
    """NUTS on :func:`bece.models.pit_dirichlet_model` against its closed form
    (Dirichlet(alpha + counts)); ``alpha`` as
    :func:`~bece.regression.bayesian_calibration_error` (None: the levels' widths)."""
    from numpyro.handlers import reparam

    from .._regression.bayesian import dirichlet_prior
    from ..models import DirichletGammaReparam, pit_dirichlet_model
    from .crosscheck import log_total_scale

    mcmc = MCMCSettings.resolve(mcmc)
    p = _levels(levels)
    data = pit_data(pit, p, None)
    prior = dirichlet_prior(alpha, p)
    conc = prior + data.counts
    pi = sample_dirichlet(conc, mcmc.num_closed_form, np.random.default_rng([mcmc.seed, 1]))
    curve = np.cumsum(pi, axis=1)[:, :-1]
    boost = conc < 1.0
    model = reparam(pit_dirichlet_model, config={"pi": DirichletGammaReparam(
        boost=boost, log_total_scale=log_total_scale(data.histogram.n, bool(boost.any())))})
    run = run_nuts(model, prior, num_chains=mcmc.num_chains, num_warmup=mcmc.num_warmup,
                   num_samples=mcmc.num_samples, seed=mcmc.seed, progress_bar=mcmc.progress_bar,
                   target_accept_prob=mcmc.target_accept_prob or PIT_TARGET, retry_divergent=True,
                   n=data.histogram.n, counts=data.counts)
    nuts_curve = np.asarray(run.get_samples(group_by_chain=True)["curve"], dtype=np.float64)
    cal_n = ((p - nuts_curve) ** 2).sum(axis=-1)
    cal_f = ((p - curve) ** 2).sum(axis=1)
    agreement = compare_draws({"curve": nuts_curve, "cal": cal_n}, {"curve": curve, "cal": cal_f},
                              mcmc.num_chains, mcmc.num_samples, mcmc.false_alarm)
    flat = nuts_curve.reshape(-1, p.size)
    nuts = _result(cal_n.reshape(-1), flat, p, data, "dirichlet", alpha=prior)
    fast = _result(cal_f, curve, p, data, "dirichlet", alpha=prior)
    return CrossCheck.judge("dirichlet-pit", agreement, run, nuts, fast, mcmc_inference_data(run))
