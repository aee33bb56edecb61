r"""Posterior over a regression forecaster's calibration curve and cal score.

At levels :math:`0 < p_1 < \dots < p_J < 1` the population calibration
curve is :math:`C_j = P(u \le p_j)`, u the forecaster's PIT on the population
the test set was drawn from, and the population cal score (Kuleshov et al.
2018) is

.. math::

    \mathrm{cal} = \sum_{j=1}^{J} w_j (p_j - C_j)^2 ,

0 exactly when the forecaster is calibrated. Two models of the PIT
distribution give a posterior over C and cal.

``model="smooth"`` (default; :mod:`bece._regression.smooth`, written out in
NumPyro in :mod:`bece.models._regression`). Calibration, the uniform PIT
:math:`H_0`, is one model; the smooth model :math:`H_1` (a probit-normal
family, exact for Gaussian forecasts of Gaussian targets, with a smooth tilt
of the log density) is the other, and contains :math:`H_0` at the
parameters 0. The posterior is their mixture:

.. math::

    p(\mathrm{cal} \mid \text{data}) = P(H_0 \mid \text{data})\,\delta_0
        + P(H_1 \mid \text{data})\, p(\mathrm{cal} \mid \text{data}, H_1),

so a draw is 0 (and its curve the diagonal) with the posterior probability
of calibration, ``prob_calibrated``, computed from the Bayes factor of the
two models and prior odds of calibration of 0.1 (why:
:mod:`bece._regression.smooth`). For a calibrated forecaster this
probability grows with n and the 90% interval includes 0; for a
miscalibrated one it vanishes and the smooth model's posterior remains.
The model is fitted to the PIT histogram on a fine grid
(:class:`~bece.regression.PITHistogram`, 1000 cells), which is also what
chunked data reach it as.

``model="dirichlet"``: the J + 1 cells :math:`[0, p_1], (p_1, p_2], \dots,
(p_J, 1]` have probabilities :math:`\pi \sim \mathrm{Dirichlet}(\alpha)` a
priori, :math:`\pi \mid c \sim \mathrm{Dirichlet}(\alpha + c)` given the
cell counts c, and :math:`C_j = \sum_{k < j} \pi_k`. Default
:math:`\alpha_k = a (p_{k+1} - p_k)` with :math:`a = 1`: the Dirichlet process
with total mass a and the uniform as base, seen on the grid; then
:math:`C_j \sim \mathrm{Beta}(a p_j + N_j, a(1 - p_j) + T - N_j)` a posteriori,
whatever other levels the grid holds. This model puts no mass on exact
calibration: every draw's curve deviates from the diagonal by about its
posterior spread :math:`\sqrt{p_j(1-p_j)/T}`, so for a calibrated forecaster
its draws of cal sit above 0 and its interval excludes the truth (measured:
``benchmarks/regression_study.py``). It has no ``prob_calibrated`` (NaN).

References
----------
Kuleshov, Fenner & Ermon (2018), "Accurate uncertainties for deep learning
using calibrated regression", ICML.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from .._base.arviz import from_dict
from .._base.checks import check_prob, check_scale, positive_int
from .._base.laplace import single_threaded_blas
from .._base.memory import check_allocation
from .._base.random import as_generator, sample_dirichlet
from .._base.typing import Seed
from .._results.html import HTMLDisplay, histogram_svg
from .._results.summaries import DrawSummaries
from .cells import forecast_cells
from .forecast import check_levels, real_array
from .histogram import PITHistogram, as_histogram
from .metrics import DEFAULT_LEVELS, count_weights, observed_frequency
from .smooth import (
    N_TILT,
    PRIOR_ODDS,
    SHIFT_SCALE,
    SMOOTHNESS_SCALE,
    SPREAD_SCALE,
    SmoothPITPosterior,
    fit_pit_model,
    pit_model_draws,
)

__all__ = [
    "BayesianCalibrationError",
    "dirichlet_prior",
    "MODELS",
    "pit_posterior",
    "pit_data",
    "PITData",
    "smooth_prior",
]

MODELS = ("smooth", "dirichlet")


@dataclass(frozen=True, repr=False, eq=False)
class BayesianCalibrationError(DrawSummaries, HTMLDisplay):
    """Posterior draws of a regression forecaster's calibration curve and cal score.

    Attributes
    ----------
    draws : ndarray of shape (S,)
        Posterior draws of the population cal score
        :math:`\\sum_j w_j (p_j - C_j)^2` (exactly 0 in the draws of
        calibration under ``model="smooth"``).
    curve : ndarray of shape (S, J)
        Posterior draws of :math:`C_j = P(u \\le p_j)`.
    levels : ndarray of shape (J,)
        The levels :math:`p_j`.
    observed : ndarray of shape (J,)
        Empirical :math:`\\hat p_j = N_j / T`.
    plugin : float
        :func:`~bece.regression.calibration_error` of the data, same levels
        and weights.
    n : int
        Number of PIT values T.
    counts : ndarray of shape (J + 1,), int64
        PIT values in the cells :math:`[0, p_1], (p_1, p_2], \\dots, (p_J, 1]`.
    alpha : ndarray of shape (J + 1,) or None
        Dirichlet prior concentration of the cells (``model="dirichlet"``).
    weights : "mean", "sum", "count" or ndarray of shape (J,)
        The weighting of the score (see :func:`bayesian_calibration_error`).
    model : {"smooth", "dirichlet"}
    log_bayes_factor : float
        :math:`\\log B_{01}`, calibration against the smooth model (positive
        favours calibration); NaN for ``model="dirichlet"``.
    prior_odds : float
        :math:`P(H_0) / P(H_1)` before the data.
    calibrated : ndarray of shape (S,), bool, or None
        Which draws are draws of calibration (``model="smooth"``).
    shift, log_spread, lam : ndarray of shape (S,) or None
        The smooth model's parameters in each draw (0 in the draws of
        calibration): :math:`a`, :math:`b` and :math:`\\lambda` of
        :mod:`bece.models._regression`.
    w : ndarray of shape (S, K) or None
        The tilt's coefficients :math:`w` in each draw (0 in the draws of
        calibration).
    params : SmoothPITPosterior or None
        The smooth model's fit: evidence, Pareto :math:`\\hat k`, ...
    histogram : PITHistogram or None
        The PIT histogram the smooth model was fitted to.

    Examples
    --------
    >>> import numpy as np
    >>> from bece.regression import bayesian_calibration_error, pit
    >>> rng = np.random.default_rng(0)
    >>> y = rng.normal(size=2000)
    >>> r = bayesian_calibration_error(pit(y, mean=0.0, std=0.7), num_samples=2000)
    >>> r  # doctest: +ELLIPSIS
    BayesianCalibrationError(model='smooth', mean=0.00..., n=2000, levels=99, num_samples=2000)
    >>> r.curve.shape, float(r.levels[9])
    ((2000, 99), 0.1)
    >>> lo, hi = r.curve_interval(0.9)     # P(u <= 0.1) is Phi(0.7 * Phi^-1(0.1)) = 0.185
    >>> bool(lo[9] < 0.185 < hi[9]), bool(r.prob_calibrated < 1e-6), bool(r.calibrated.any())
    (True, True, False)
    """

    draws: np.ndarray
    curve: np.ndarray
    levels: np.ndarray
    observed: np.ndarray
    plugin: float
    n: int
    counts: np.ndarray
    alpha: np.ndarray | None = None
    weights: str | np.ndarray | None = "mean"
    model: str = "dirichlet"
    log_bayes_factor: float = float("nan")
    prior_odds: float = PRIOR_ODDS
    calibrated: np.ndarray | None = None
    shift: np.ndarray | None = None
    log_spread: np.ndarray | None = None
    lam: np.ndarray | None = None
    w: np.ndarray | None = None
    params: SmoothPITPosterior | None = None
    histogram: PITHistogram | None = None

    @property
    def bayes_factor(self) -> float:
        """:math:`B_{01} = p(\\text{data} \\mid \\text{calibrated}) / p(\\text{data} \\mid \\text{smooth})`
        (NaN for ``model="dirichlet"``)."""
        return float(np.exp(self.log_bayes_factor))

    @property
    def prob_calibrated(self) -> float:
        """Posterior probability of calibration, :math:`B_{01}O / (1 + B_{01}O)`
        (NaN for ``model="dirichlet"``, which gives calibration no mass)."""
        return float(special.expit(self.log_bayes_factor + np.log(self.prior_odds)))

    def curve_interval(self, prob: float = 0.9) -> tuple[np.ndarray, np.ndarray]:
        """Pointwise equal-tailed credible band of the curve :math:`C_j`.

        Returns
        -------
        lo, hi : ndarray of shape (J,)
        """
        prob = check_prob(prob)
        lo, hi = np.quantile(self.curve, [(1 - prob) / 2, (1 + prob) / 2], axis=0)
        return lo, hi

    def predictive_interval(self, prob: float = 0.9, seed: Seed = 0) -> tuple[np.ndarray, np.ndarray]:
        """Pointwise band of the *observed* curve under the fitted model: where
        the empirical frequencies :math:`\\hat p_j` of another n PIT values
        would lie (posterior predictive). Each draw's curve gives cell
        probabilities :math:`C_{j} - C_{j-1}`; n values are drawn from them
        (multinomial counts) and their cumulative frequencies taken; the
        band is their equal-tailed ``prob`` interval at each level. Unlike
        :meth:`curve_interval` (the population's curve, which narrows onto
        the diagonal when calibration is likely), it includes the sampling
        noise of n values, so an honest forecaster's observed curve lies
        inside it at about the nominal rate.

        Returns
        -------
        lo, hi : ndarray of shape (J,)
        """
        prob = check_prob(prob)
        rng = as_generator(seed)
        c = np.clip(np.asarray(self.curve, dtype=np.float64), 0.0, 1.0)
        edges = np.concatenate([np.zeros((c.shape[0], 1)), c, np.ones((c.shape[0], 1))], axis=1)
        cells = np.maximum(np.diff(edges, axis=1), 0.0)
        cells /= cells.sum(axis=1, keepdims=True)
        counts = rng.multinomial(self.n, cells)
        replicated = np.cumsum(counts[:, :-1], axis=1) / self.n
        lo, hi = np.quantile(replicated, [(1 - prob) / 2, (1 + prob) / 2], axis=0)
        return lo, hi

    def to_inference_data(self) -> Any:  # arviz.InferenceData (0.2x) or xarray.DataTree (1.x)
        """The draws in ArviZ's format on the installed ArviZ
        (``arviz.InferenceData`` on 0.2x, ``xarray.DataTree`` on 1.x; see
        :meth:`bece.BayesianECE.to_inference_data`).

        ``posterior``: ``cal`` (chain, draw) and ``curve`` (chain, draw,
        level), with coordinate ``level`` = :attr:`levels`; for
        ``model="smooth"`` also ``calibrated`` (1 in the draws of
        calibration), ``shift``, ``log_spread``, ``lam`` and ``w`` (chain,
        draw, tilt).
        ``constant_data``: ``counts`` (cell; and ``alpha`` for the Dirichlet
        model), ``edges`` (edge; the J + 2 cell boundaries 0, p_1, ..., p_J,
        1) and ``observed`` (level). Independent draws are stored as one
        chain. Attributes of ``posterior``: ``plugin_cal``, ``n``,
        ``weights``, ``model``, and for the smooth model ``prob_calibrated``,
        ``log_bayes_factor`` and ``prior_odds``.
        """
        j = self.levels.size
        weights = self._weights_name
        post: dict[str, np.ndarray] = {"cal": self.draws[None, :], "curve": self.curve[None]}
        attrs: dict[str, Any] = {"plugin_cal": self.plugin, "n": self.n, "weights": weights,
                                 "model": self.model}
        const: dict[str, np.ndarray] = {
            "counts": self.counts,
            "edges": np.concatenate([[0.0], self.levels, [1.0]]),
            "observed": self.observed,
        }
        dims: dict[str, list[str]] = {"curve": ["level"], "observed": ["level"], "counts": ["cell"],
                                      "edges": ["edge"]}
        if self.alpha is not None:
            const["alpha"] = self.alpha
            dims["alpha"] = ["cell"]
        if self.calibrated is not None:
            post["calibrated"] = self.calibrated.astype(np.int64)[None, :]
            for name in ("shift", "log_spread", "lam", "w"):
                value = getattr(self, name)
                if value is not None:
                    post[name] = value[None]
            dims["w"] = ["tilt"]
            attrs.update(prob_calibrated=self.prob_calibrated, log_bayes_factor=self.log_bayes_factor,
                         prior_odds=self.prior_odds)
        return from_dict(
            {"posterior": post, "constant_data": const},
            coords={"level": self.levels, "cell": np.arange(j + 1), "edge": np.arange(j + 2)},
            dims=dims,
            attrs={"posterior": attrs},
        )

    @property
    def _weights_name(self) -> str:
        """``weights`` by name: "mean", "sum", "count" or "array"."""
        if self.weights is None:
            return "mean"
        return self.weights if isinstance(self.weights, str) else "array"

    def _html_diagram(self) -> str | None:
        return histogram_svg(self.draws, label="posterior of the calibration error, 90% shaded",
                             interval=self.interval(0.9), marks={"plug-in": self.plugin})

    def to_dict(self, prob: float = 0.9) -> dict[str, Any]:
        """Plain Python (JSON): ``model``, ``n``, ``calibration_error``
        (``mean``, ``std``, ``prob``, ``interval``, ``plugin``, ``levels``,
        ``weights``: "mean", "sum", "count" or "array"),
        ``curve`` (per level its ``level``, ``observed`` and the band's
        ``interval``) and, for the smooth model, ``prob_calibrated``,
        ``prior_odds`` and ``log_bayes_factor``; the numbers ``bece report
        --json`` prints for regression forecasts."""
        prob = check_prob(prob)
        lo, hi = self.interval(prob)
        band_lo, band_hi = self.curve_interval(prob)
        levels = np.asarray(self.levels, dtype=np.float64)
        observed = np.asarray(self.observed, dtype=np.float64)
        d: dict[str, Any] = {
            "model": self.model, "n": int(self.n),
            "calibration_error": {"mean": self.mean, "std": self.std, "prob": prob,
                                  "interval": [lo, hi], "plugin": self.plugin,
                                  "levels": levels.tolist(), "weights": self._weights_name},
            "curve": [{"level": float(levels[j]), "observed": float(observed[j]),
                       "interval": [float(band_lo[j]), float(band_hi[j])]}
                      for j in range(levels.size)],
        }
        if self.model == "smooth":
            d.update(prob_calibrated=self.prob_calibrated, prior_odds=float(self.prior_odds),
                     log_bayes_factor=float(self.log_bayes_factor))
        return d

    def text(self, prob: float = 0.9, *, test: Any = None, alpha: float = 0.05,
             every: bool = False) -> str:
        """The lines a person reads, as ``bece report`` prints them for
        regression forecasts under its header: with ``test`` (a
        :class:`~bece.regression.RegressionCalibrationTest` of the same PIT
        values) the verdict at ``alpha`` first; the calibration error's
        posterior mean, ``prob`` interval and plug-in value; the curve's table
        at the levels (a few of them unless ``every``) with its band."""
        from .report_text import report_lines

        return "\n".join(report_lines(self, prob, test=test, alpha=alpha, every=every))

    def __str__(self) -> str:
        """:meth:`text` at 90%: what ``bece report`` prints under its header."""
        return self.text()

    def __repr__(self) -> str:
        lo, hi = self.interval(0.9)
        calib = f", prob_calibrated={self.prob_calibrated:.4g}" if self.model == "smooth" else ""
        return (
            f"BayesianCalibrationError(model={self.model!r}, mean={self.mean:.4g}, "
            f"interval90=[{lo:.4g}, {hi:.4g}], plugin={self.plugin:.4g}{calib}, n={self.n}, "
            f"levels={self.levels.size}, num_samples={self.num_samples})"
        )


@dataclass(frozen=True)
class PITData:
    """PIT values or their histogram, read at the levels."""

    values: np.ndarray | None  # (T,); None for a histogram
    histogram: PITHistogram
    observed: np.ndarray  # (J,)
    counts: np.ndarray  # (J + 1,) int64: the cells [0, p_1], (p_1, p_2], ..., (p_J, 1]


def pit_data(pit: Any, p: np.ndarray, n_cells: int | None) -> PITData:
    """Read ``pit`` (values or a :class:`PITHistogram`) at levels ``p``."""
    hist, u = as_histogram(pit, n_cells, stacklevel=5)
    if u is None:
        cum = hist.cumulative(p)
        counts = np.diff(np.concatenate([[0], cum, [hist.n]])).astype(np.int64)
        return PITData(None, hist, cum / hist.n, counts)
    cell = np.searchsorted(p, u, side="left")  # u <= p_1 -> 0, p_k < u <= p_{k+1} -> k
    counts = np.bincount(cell, minlength=p.size + 1).astype(np.int64)
    return PITData(u, hist, observed_frequency(u, p, "quantile"), counts)


def dirichlet_prior(alpha: ArrayLike | None, levels: np.ndarray) -> np.ndarray:
    """The Dirichlet model's concentrations of the J + 1 cells at ``levels``
    (default: the cells' widths, total mass 1), or ``ValueError`` naming ``alpha``."""
    width = np.diff(np.concatenate([[0.0], levels, [1.0]]))
    if alpha is None:
        return width.copy()
    a = real_array(alpha, "alpha", ndim=(0, 1), positive=True)
    if a.ndim == 0:
        return float(a) * width
    if a.shape != width.shape:
        raise ValueError(
            f"alpha must be a positive number (total prior weight) or an array of shape "
            f"({width.size},) (one concentration per cell), got shape {a.shape}"
        )
    return a


def smooth_prior(shift_scale: float | None, spread_scale: float | None,
                 smoothness_scale: float | None) -> dict[str, float]:
    """The smooth model's prior scales, defaults filled in and checked."""
    return {
        "shift_scale": check_scale(SHIFT_SCALE if shift_scale is None else shift_scale, "shift_scale"),
        "spread_scale": check_scale(SPREAD_SCALE if spread_scale is None else spread_scale, "spread_scale"),
        "smoothness_scale": check_scale(SMOOTHNESS_SCALE if smoothness_scale is None else smoothness_scale,
                                        "smoothness_scale"),
    }


def _score(curve: np.ndarray, p: np.ndarray, weights: str | ArrayLike | None,
           w_plugin: np.ndarray) -> np.ndarray:
    if isinstance(weights, str) and weights == "count":  # checked with the plug-in
        total = curve.sum(axis=1, keepdims=True)
        w = np.divide(curve, total, out=np.zeros_like(curve), where=total > 0)
    else:
        w = w_plugin[None, :]
    return np.sum(w * (p[None, :] - curve) ** 2, axis=1)


def pit_posterior(
    pit: ArrayLike | PITHistogram,
    levels: ArrayLike | None = None,
    *,
    model: str = "smooth",
    weights: str | ArrayLike | None = "mean",
    prior_odds: float = PRIOR_ODDS,
    shift_scale: float | None = None,
    spread_scale: float | None = None,
    smoothness_scale: float | None = None,
    n_cells: int | None = None,
    forecast_levels: ArrayLike | None = None,
    forecast_draws: int | None = None,
    alpha: ArrayLike | None = None,
    num_samples: int = 10_000,
    seed: Seed = 0,
) -> BayesianCalibrationError:
    """The regression calibration posterior of the models, by name (the engine of
    :func:`bece.regression.bayesian_calibration_error`, which documents the
    arguments; the model objects :class:`bece.regression.SmoothPITModel` and
    :class:`bece.regression.DirichletPITModel` call it)."""
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}, got {model!r}")
    p = DEFAULT_LEVELS.copy() if levels is None else check_levels(levels)
    num_samples = positive_int(num_samples, "num_samples")
    prior_odds = check_scale(prior_odds, "prior_odds")
    rng = as_generator(seed)
    if model == "dirichlet":
        smooth_only = (("shift_scale", shift_scale), ("spread_scale", spread_scale),
                       ("smoothness_scale", smoothness_scale), ("n_cells", n_cells),
                       ("forecast_levels", forecast_levels), ("forecast_draws", forecast_draws))
        given = [k for k, v in smooth_only if v is not None]
        if given:
            raise ValueError(f"{', '.join(given)} belong to model='smooth'; model='dirichlet' takes alpha")
    elif alpha is not None:
        raise ValueError("alpha is the Dirichlet model's prior; pass model='dirichlet' to use it")
    data = pit_data(pit, p, n_cells)
    cells = None if model == "dirichlet" else forecast_cells(forecast_levels, forecast_draws, data.histogram,
                                                             data.values)
    j = p.size
    check_allocation(
        8.0 * num_samples * (3 * j + 3 * (N_TILT + 2) + 8),
        what=f"the posterior draws (num_samples x about {3 * j + 3 * (N_TILT + 2) + 8} float64)",
        argument=f"num_samples={num_samples}",
        advice="pass fewer num_samples",
    )
    w_plugin = count_weights(weights, data.observed)
    plugin = float(np.sum(w_plugin * (p - data.observed) ** 2))
    common: dict[str, Any] = dict(
        levels=p, observed=data.observed, plugin=plugin, n=data.histogram.n, counts=data.counts,
        weights=weights if weights is None or isinstance(weights, str) else w_plugin,
    )
    if model == "dirichlet":
        prior = dirichlet_prior(alpha, p)
        pi = sample_dirichlet(prior + data.counts, num_samples, rng)
        curve = np.cumsum(pi, axis=1)[:, :j]
        return BayesianCalibrationError(draws=_score(curve, p, weights, w_plugin), curve=curve,
                                        alpha=prior, model="dirichlet", **common)
    scales = smooth_prior(shift_scale, spread_scale, smoothness_scale)
    hist = data.histogram
    with single_threaded_blas():
        post = fit_pit_model(hist, shift_scale=scales["shift_scale"], spread_scale=scales["spread_scale"],
                             smoothness_scale=scales["smoothness_scale"], cells=cells)
        theta, lam, drawn, post = pit_model_draws(hist, post, num_samples, rng, p)
    assert drawn is not None
    curve = drawn
    log_bf = post.log_bayes_factor
    calibrated = rng.random(num_samples) < special.expit(log_bf + np.log(prior_odds))
    curve[calibrated] = p
    keep = ~calibrated
    return BayesianCalibrationError(
        draws=_score(curve, p, weights, w_plugin), curve=curve, model="smooth",
        log_bayes_factor=log_bf, prior_odds=prior_odds, calibrated=calibrated,
        shift=np.where(keep, theta[:, 0], 0.0), log_spread=np.where(keep, theta[:, 1], 0.0),
        lam=np.where(keep, lam, 0.0), w=np.where(keep[:, None], theta[:, 2:], 0.0), params=post,
        histogram=hist, **common,
    )
