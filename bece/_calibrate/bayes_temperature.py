r"""The posterior of the temperature, and what it means for the test-set ECE.

**The posterior.** :func:`temperature_posterior` computes the posterior of
:math:`u = \log T` under :func:`bece.models.temperature_model` (a Normal
prior on :math:`\log T`, default :math:`\mathcal N(0, 1)`, and the
categorical likelihood of the validation labels under
:math:`\operatorname{softmax}(z/T)`) by one-dimensional quadrature:

1. the mode :math:`\hat u` is the root of
   :math:`\ell'(u) = \beta\,\mathrm{NLL}'(\beta) - (u - m_0)/s_0^2`
   (:math:`\beta = e^{-u}`, :func:`scipy.optimize.brentq`), and the Laplace
   standard deviation :math:`s = (-\ell''(\hat u))^{-1/2}` with
   :math:`-\ell''(u) = \beta\,\mathrm{NLL}' + \beta^2\,\mathrm{NLL}'' + 1/s_0^2`;
2. the log-density :math:`\ell(u)` is evaluated at Chebyshev–Lobatto nodes
   on :math:`[\hat u - 12 s, \hat u + 12 s]` (widened while the density at
   an end exceeds :math:`10^{-14}` of its maximum) and interpolated
   (:class:`scipy.interpolate.BarycentricInterpolator`), with 17, 33, 65,
   ... nodes (nested, so each doubling costs only the new nodes) until the
   posterior CDF, by the trapezoidal rule on 8,001 points, changes by at
   most ``tol`` (default :math:`10^{-6}`) between two doublings. The
   quadrature error of that CDF on the fine grid is below :math:`2 \cdot
   10^{-7}`, so quantiles are exact to about ``tol`` divided by the density.

Each evaluation of :math:`\ell` is one pass over the logits (about 45 in
all). :mod:`bece.models._temperature` is the same model in NumPyro; the tests
compare NUTS's quantiles with these within Monte Carlo error.

**Two questions about the ECE after temperature scaling.** Keep them apart:

(a) *How calibrated is the calibrator I deploy?* Its temperature
    :math:`\hat T` is fixed; the only uncertainty is the finite test set:
    ``bece.bayesian_ece(y_test, TemperatureScaling().fit(X_val,
    y_val).predict_proba(X_test))`` answers it.
(b) *What ECE should I expect from temperature scaling fitted on a
    validation split of this size?* The temperature itself is uncertain
    given n_val labels; :func:`temperature_scaled_ece` propagates its
    posterior into the test-set ECE: for temperatures :math:`T_j` at the
    posterior's quantiles :math:`(j + 1/2)/J`, the test set is recalibrated
    with :math:`T_j` and the ECE posterior drawn from; the draws pooled over
    j are draws of :math:`\int p(\mathrm{ECE} \mid T, \text{test})\,
    p(T \mid \text{validation})\,dT`.

(b) is wider than (a), and shifted up when the ECE grows away from the
best temperature, most at small n_val (``benchmarks/recalibration.py``
shows n_val = 100, 500, 5000); with many validation labels the two agree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.integrate import cumulative_trapezoid
from scipy.interpolate import BarycentricInterpolator
from scipy.optimize import brentq

from .._base.arviz import from_dict
from .._base.checks import check_prob, positive_int
from .._base.random import as_generator
from .._base.typing import Seed
from .._results.summaries import DrawSummaries
from .scores import Scores, as_scores, encode_labels, softmax
from .temperature import PassCounter, TemperatureScaling, check_bounds, temperature_terms

__all__ = [
    "TemperaturePosterior",
    "TemperatureScaledECE",
    "temperature_posterior",
    "temperature_scaled_ece",
]

GRID_POINTS = 8001
HALF_WIDTH = 12.0
END_DENSITY = 1e-14
MAX_NODES = 1024


@dataclass(frozen=True, repr=False)
class TemperaturePosterior:
    r"""Posterior of the temperature on a fine grid of :math:`\log T`.

    Attributes
    ----------
    log_t : ndarray of shape (G,)
        Grid of :math:`u = \log T`.
    density : ndarray of shape (G,)
        Posterior density of :math:`u` on the grid (integrates to 1).
    cdf : ndarray of shape (G,)
        Its CDF (0 at the first point, 1 at the last).
    mode : float
        The posterior mode of T (the MAP temperature, :math:`e^{\hat u}`).
    laplace_sd : float
        Laplace standard deviation of :math:`\log T` at the mode.
    n : int
        Validation labels.
    n_nodes : int
        Chebyshev nodes of the last interpolant.
    n_passes : int
        Passes over the logits.
    prior_loc, prior_scale : float

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> logits = rng.normal(scale=3.0, size=(2000, 3))
    >>> p_true = np.exp(logits / 2) / np.exp(logits / 2).sum(axis=1, keepdims=True)
    >>> y = (rng.uniform(size=(2000, 1)) > p_true.cumsum(axis=1)).sum(axis=1)   # T = 2
    >>> from bece.calibrate import temperature_posterior
    >>> post = temperature_posterior(logits[:1000], y[:1000], input="logits")
    >>> lo, hi = post.interval(0.9)                   # 90% credible interval of T
    >>> bool(lo < 2.0 < hi), bool(lo < post.mode < hi), bool(0.03 < post.log_sd < 0.1)
    (True, True, True)
    >>> t = post.sample(1000, seed=1)                 # draws of T
    >>> t.shape, bool(np.all((t > 1.5) & (t < 2.5)))
    ((1000,), True)
    """

    log_t: np.ndarray
    density: np.ndarray
    cdf: np.ndarray
    mode: float
    laplace_sd: float
    n: int
    n_nodes: int
    n_passes: int
    prior_loc: float
    prior_scale: float

    def quantile(self, q: ArrayLike) -> np.ndarray:
        """Posterior quantiles of T (inverse CDF, linear between grid points)."""
        q = np.asarray(q, dtype=np.float64)
        if not np.all((q >= 0) & (q <= 1)):
            raise ValueError(f"q must lie in [0, 1], got {q!r}")
        return np.exp(np.interp(q, self.cdf, self.log_t))

    @property
    def median(self) -> float:
        return float(self.quantile(0.5))

    @property
    def mean(self) -> float:
        """Posterior mean of T."""
        return float(np.trapezoid(np.exp(self.log_t) * self.density, self.log_t))

    @property
    def log_mean(self) -> float:
        r"""Posterior mean of :math:`\log T`."""
        return float(np.trapezoid(self.log_t * self.density, self.log_t))

    @property
    def log_sd(self) -> float:
        r"""Posterior standard deviation of :math:`\log T`."""
        m = self.log_mean
        return float(np.sqrt(np.trapezoid((self.log_t - m) ** 2 * self.density, self.log_t)))

    def interval(self, prob: float = 0.9) -> tuple[float, float]:
        """Equal-tailed credible interval of T."""
        prob = check_prob(prob)
        lo, hi = self.quantile([(1 - prob) / 2, (1 + prob) / 2])
        return float(lo), float(hi)

    def sample(self, size: int, seed: Seed = 0) -> np.ndarray:
        """``size`` independent draws of T (inverse CDF of uniforms)."""
        size = positive_int(size, "size")
        return self.quantile(as_generator(seed).uniform(size=size))

    def __repr__(self) -> str:
        lo, hi = self.interval(0.9)
        return (f"TemperaturePosterior(median={self.median:.4f}, interval90=[{lo:.4f}, {hi:.4f}], "
                f"mode={self.mode:.4f}, n={self.n})")


def _log_posterior(scores: Scores, y: np.ndarray, loc: float, scale: float,
                   counter: PassCounter) -> Callable[[float], float]:
    def f(u: float) -> float:
        nll = temperature_terms(scores, y, float(np.exp(-u)), counter=counter)[0]
        return -nll - 0.5 * ((u - loc) / scale) ** 2

    return f


def _lobatto(a: float, b: float, n: int) -> np.ndarray:
    return 0.5 * (a + b) + 0.5 * (b - a) * np.cos(np.pi * np.arange(n + 1) / n)


def _check_prior(prior_loc: Any, prior_scale: Any) -> tuple[float, float]:
    try:
        loc, scale = float(prior_loc), float(prior_scale)
    except (TypeError, ValueError):
        raise ValueError(f"prior_loc and prior_scale must be numbers, got {prior_loc!r}, "
                         f"{prior_scale!r}") from None
    if not np.isfinite(loc):
        raise ValueError(f"prior_loc must be finite, got {prior_loc!r}")
    if not (np.isfinite(scale) and scale > 0):
        raise ValueError(f"prior_scale must be finite and > 0, got {prior_scale!r}")
    return loc, scale


def posterior_from_scores(scores: Scores, y: np.ndarray, *, prior_loc: float = 0.0,
                          prior_scale: float = 1.0, tol: float = 1e-6,
                          bounds: tuple[float, float] = (1e-3, 1e3)) -> TemperaturePosterior:
    """:func:`temperature_posterior` on checked scores and label indices."""
    loc, scale = _check_prior(prior_loc, prior_scale)
    if not (isinstance(tol, float) and 0 < tol < 0.1):
        raise ValueError(f"tol must be a float in (0, 0.1), got {tol!r}")
    lo, hi = check_bounds(bounds)
    counter = PassCounter()

    def slope(u: float) -> float:
        beta = float(np.exp(-u))
        return beta * temperature_terms(scores, y, beta, counter=counter)[1] - (u - loc) / scale**2

    a, b = np.log(lo), np.log(hi)
    if slope(a) <= 0 or slope(b) >= 0:
        raise ValueError(f"the posterior mode of T lies outside bounds={bounds}; widen them")
    mode = brentq(slope, a, b, xtol=1e-10, rtol=4 * np.finfo(float).eps, maxiter=200)
    beta = float(np.exp(-mode))
    _, g, h = temperature_terms(scores, y, beta, second=True, counter=counter)
    curvature = beta * g + beta**2 * h + 1.0 / scale**2
    sd = float(1.0 / np.sqrt(curvature))
    logp = _log_posterior(scores, y, loc, scale, counter)
    width = HALF_WIDTH
    while True:
        ga, gb = max(a, mode - width * sd), min(b, mode + width * sd)
        grid = np.linspace(ga, gb, GRID_POINTS)
        values: dict[float, float] = {}
        previous = None
        nodes = 16
        while True:
            x = _lobatto(ga, gb, nodes)
            for u in x:
                if float(u) not in values:
                    values[float(u)] = logp(float(u))
            fx = np.array([values[float(u)] for u in x])
            top = fx.max()
            lp = BarycentricInterpolator(x, fx - top)(grid)
            dens = np.exp(lp - lp.max())
            cdf = cumulative_trapezoid(dens, grid, initial=0.0)
            total = cdf[-1]
            cdf /= total
            if previous is not None and np.max(np.abs(cdf - previous)) <= tol:
                break
            if nodes >= MAX_NODES:
                raise RuntimeError(f"the posterior of T did not converge with {nodes} nodes")
            previous = cdf
            nodes *= 2
        ends_ok = ((ga <= a or dens[0] <= END_DENSITY) and (gb >= b or dens[-1] <= END_DENSITY))
        if ends_ok:
            break
        width *= 2
    return TemperaturePosterior(
        log_t=grid, density=dens / total, cdf=cdf, mode=float(np.exp(mode)), laplace_sd=sd,
        n=scores.n, n_nodes=nodes + 1, n_passes=counter.count, prior_loc=loc, prior_scale=scale,
    )


def temperature_posterior(X: ArrayLike, y: ArrayLike, *, input: str = "auto", prior_loc: float = 0.0,
                          prior_scale: float = 1.0, tol: float = 1e-6,
                          bounds: tuple[float, float] = (1e-3, 1e3)) -> TemperaturePosterior:
    r"""Posterior of the temperature given validation scores and labels.

    Parameters
    ----------
    X : array_like of shape (n, K) or (n,)
        Validation logits or probabilities (:mod:`bece._calibrate.scores`).
    y : array_like of shape (n,)
        Their labels.
    input : {"auto", "logits", "probabilities"}, default "auto"
    prior_loc, prior_scale : float, default 0.0, 1.0
        Normal prior on :math:`\log T` (:mod:`bece.models._temperature`).
    tol : float, default 1e-6
        Largest change of the posterior CDF between two node doublings
        (module docstring).
    bounds : (float, float), default (0.001, 1000)
        Range of T searched.

    Returns
    -------
    TemperaturePosterior

    Examples
    --------
    >>> import numpy as np
    >>> from bece.calibrate import temperature_posterior
    >>> rng = np.random.default_rng(1)
    >>> z = rng.normal(scale=3.0, size=(500, 3))
    >>> p = np.exp(z / 2) / np.exp(z / 2).sum(axis=1, keepdims=True)
    >>> y = (rng.uniform(size=(500, 1)) > p.cumsum(axis=1)).sum(axis=1)
    >>> post = temperature_posterior(z, y, input="logits")
    >>> post                       # the labels were drawn with T = 2
    TemperaturePosterior(median=1.7776, interval90=[1.5897, 1.9973], mode=1.7744, n=500)
    """
    scores = as_scores(X, input)
    _, index = encode_labels(y, scores.n, scores.k)
    return posterior_from_scores(scores, index, prior_loc=prior_loc, prior_scale=prior_scale, tol=tol,
                                 bounds=bounds)


@dataclass(frozen=True, repr=False, eq=False)
class TemperatureScaledECE(DrawSummaries):
    """The test-set ECE of temperature scaling, with the temperature's uncertainty.

    ``draws`` answer question (b) of the module docstring; ``deployed``
    answers (a).

    Attributes
    ----------
    draws : ndarray of shape (S,)
        ECE draws pooled over the temperature's posterior.
    temperatures : ndarray of shape (S,)
        The temperature each draw was made at.
    deployed : BayesianECE
        The ECE posterior of the test set recalibrated with the fitted
        :math:`\\hat T` (test-set uncertainty only).
    temperature : float
        :math:`\\hat T`, maximum likelihood on the validation set.
    posterior : TemperaturePosterior
        The temperature's posterior.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> logits = rng.normal(scale=3.0, size=(2000, 3))
    >>> p_true = np.exp(logits / 2) / np.exp(logits / 2).sum(axis=1, keepdims=True)
    >>> y = (rng.uniform(size=(2000, 1)) > p_true.cumsum(axis=1)).sum(axis=1)   # T = 2
    >>> from functools import partial
    >>> from bece import bayesian_ece
    >>> from bece.calibrate import temperature_scaled_ece
    >>> r = temperature_scaled_ece(logits[:1000], y[:1000], logits[1000:], y[1000:], input="logits",
    ...                            ece=partial(bayesian_ece, model="binned", n_bins=10),
    ...                            num_temperatures=20, num_samples=2000)
    >>> r.draws.shape, r.temperatures.shape, np.unique(r.temperatures).size
    ((2000,), (2000,), 20)
    >>> bool(abs(r.temperature - 2.0) < 0.2), r.deployed.num_samples   # the fitted T and its ECE
    (True, 2000)
    """

    draws: np.ndarray
    temperatures: np.ndarray
    deployed: Any
    temperature: float
    posterior: TemperaturePosterior

    def to_inference_data(self) -> Any:
        """``posterior`` holds ``ece`` and ``temperature`` (chain, draw), as one chain."""
        return from_dict({"posterior": {"ece": self.draws[None], "temperature": self.temperatures[None]}},
                         attrs={"posterior": {"temperature_hat": self.temperature}})

    def __repr__(self) -> str:
        lo, hi = self.interval(0.9)
        dlo, dhi = self.deployed.interval(0.9)
        return (f"TemperatureScaledECE(mean={self.mean:.4f}, interval90=[{lo:.4f}, {hi:.4f}]; "
                f"deployed T={self.temperature:.4f}: mean={self.deployed.mean:.4f}, "
                f"interval90=[{dlo:.4f}, {dhi:.4f}])")


def temperature_scaled_ece(
    X_val: ArrayLike,
    y_val: ArrayLike,
    X_test: ArrayLike,
    y_test: ArrayLike,
    *,
    ece: Callable[..., Any],
    input: str = "auto",
    num_temperatures: int = 100,
    num_samples: int = 10_000,
    seed: Seed = 0,
    prior_loc: float = 0.0,
    prior_scale: float = 1.0,
    bounds: tuple[float, float] = (1e-2, 1e2),
) -> TemperatureScaledECE:
    r"""The test-set ECE to expect from temperature scaling fitted on this validation split.

    Question (b) of the module docstring, with (a) beside it.

    Parameters
    ----------
    X_val, y_val : array_like
        Validation scores (n_val, K) or (n_val,) and labels: T's posterior
        (:func:`temperature_posterior`) and its maximum-likelihood value.
    X_test, y_test : array_like
        Test scores of the same kind and K, and labels.
    ece : callable
        ``ece(y_true, y_prob, num_samples=..., seed=...)`` returning a
        result with ``.draws``: pass :func:`bece.bayesian_ece` (or a
        ``functools.partial`` of it with its options, e.g. ``n_bins`` or
        ``model``). It receives the labels as column indices ``0 .. K-1``
        and the recalibrated (n_test, K) probabilities, so the ECE is that
        of the top-label confidence (row maximum).
    input : {"auto", "logits", "probabilities"}, default "auto"
    num_temperatures : int, default 100
        J, the temperatures at the posterior quantiles :math:`(j + 1/2)/J`.
    num_samples : int, default 10_000
        S, ECE draws in all (S/J per temperature, the remainder to the
        first ones) and for ``deployed``.
    seed : int or numpy.random.Generator, default 0
    prior_loc, prior_scale : float
        Prior of :math:`\log T` (:mod:`bece.models._temperature`).
    bounds : (float, float), default (0.01, 100)
        Search interval of the fitted T and of the posterior.

    Returns
    -------
    TemperatureScaledECE

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> logits = rng.normal(scale=3.0, size=(2000, 3))
    >>> p_true = np.exp(logits / 2) / np.exp(logits / 2).sum(axis=1, keepdims=True)
    >>> y = (rng.uniform(size=(2000, 1)) > p_true.cumsum(axis=1)).sum(axis=1)   # T = 2
    >>> from functools import partial
    >>> from bece import bayesian_ece
    >>> from bece.calibrate import temperature_scaled_ece
    >>> r = temperature_scaled_ece(logits[:1000], y[:1000], logits[1000:], y[1000:], input="logits",
    ...                            ece=partial(bayesian_ece, model="binned", n_bins=10),
    ...                            num_temperatures=20, num_samples=2000)
    >>> r  # doctest: +ELLIPSIS
    TemperatureScaledECE(mean=0.0..., interval90=[...]; deployed T=...: mean=0.0..., interval90=[...])
    >>> lo, hi = r.interval(0.9)          # with T's uncertainty: at least as wide as deployed's
    >>> dlo, dhi = r.deployed.interval(0.9)
    >>> bool(hi - lo >= 0.9 * (dhi - dlo)), bool(hi < 0.1)
    (True, True)
    """
    if not callable(ece):
        raise ValueError(f"ece must be a callable such as bece.bayesian_ece, got {ece!r}")
    j_count = positive_int(num_temperatures, "num_temperatures")
    s_count = positive_int(num_samples, "num_samples")
    if j_count > s_count:
        raise ValueError(f"num_temperatures={j_count} exceeds num_samples={s_count}: each "
                         "temperature needs at least one ECE draw")
    rng = as_generator(seed)
    ts = TemperatureScaling(input=input, bounds=bounds).fit(X_val, y_val)
    val = as_scores(X_val, ts.input_, "X_val")
    _, y_index = encode_labels(y_val, val.n, val.k, "y_val")
    post = posterior_from_scores(val, y_index, prior_loc=prior_loc, prior_scale=prior_scale,
                                 bounds=bounds)
    test = as_scores(X_test, ts.input_, "X_test")
    if test.k != val.k or test.binary != val.binary:
        raise ValueError(f"X_test has shape {test.data.shape}, X_val {val.data.shape}: they need "
                         "the same classes")
    classes, t_index = encode_labels(y_test, test.n, test.k, "y_test")
    if not np.array_equal(classes, ts.classes_):
        raise ValueError(f"y_test's classes {classes.tolist()} differ from y_val's "
                         f"{ts.classes_.tolist()}")

    def recalibrated(t: float) -> np.ndarray:
        out = np.empty((test.n, test.k))
        for start, stop, block in test.blocks():
            out[start:stop] = softmax(block / t)
        return out

    temps = post.quantile((np.arange(j_count) + 0.5) / j_count)
    counts = np.full(j_count, s_count // j_count)
    counts[: s_count % j_count] += 1
    draws, at = [], []
    for t, c in zip(temps, counts):
        r = ece(t_index, recalibrated(float(t)), num_samples=int(c), seed=rng)
        draws.append(np.asarray(r.draws, dtype=np.float64))
        at.append(np.full(int(c), t))
    deployed = ece(t_index, recalibrated(ts.temperature_), num_samples=s_count, seed=rng)
    return TemperatureScaledECE(draws=np.concatenate(draws), temperatures=np.concatenate(at),
                                deployed=deployed, temperature=ts.temperature_, posterior=post)
