"""Probability integral transform (PIT) and quantiles of regression forecasts.

A regression forecaster issues, for each target :math:`y_t`, a predictive
distribution with CDF :math:`F_t`. Four forms are accepted, each by keyword:

* ``mean, std``: Gaussian :math:`N(\\mu_t, \\sigma_t^2)`;
* ``dist``: a frozen ``scipy.stats`` continuous distribution (vectorised over
  the n targets, or one distribution for all);
* ``samples`` of shape (n, S): draws from the predictive distribution, e.g. a
  NumPyro posterior predictive (``Predictive(...)["obs"]`` is (S, n): pass its
  transpose); :math:`F_t` is their empirical CDF;
* ``quantiles`` of shape (n, K) at ``levels`` of shape (K,): a quantile
  forecast; :math:`F_t` interpolates linearly between
  :math:`(q_{t,k}, \\tau_k)`.

:func:`pit` returns :math:`u_t = F_t(y_t)`; :func:`forecast_quantiles` returns
:math:`F_t^{-1}(\\tau)`, the base quantiles that
:class:`~bece.regression.Recalibrator` serves at recalibrated levels.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from .._base.random import as_generator
from .._base.typing import Seed
from .._stats.inputs import as_array, check_probabilities, describe_bad

__all__ = [
    "check_autocorrelation",
    "check_dist",
    "CorrelatedSamplesWarning",
    "check_levels",
    "check_pit",
    "forecast_quantiles",
    "pit",
    "real_array",
]

#: rows of a sample forecast :func:`check_autocorrelation` looks at
ACF_ROWS = 256
#: it warns when the draws' effective sample size is below this fraction of S
ESS_WARN_FRACTION = 0.5

# row chunk for the (n, S) comparisons of sample forecasts: bounds the
# temporary boolean arrays to about 16 MB whatever n and S are
_CHUNK_ELEMENTS = 1 << 24


# ------------------------------------------------------------------ checks
def real_array(x: Any, name: str, *, ndim: tuple[int, ...], positive: bool = False) -> np.ndarray:
    """``x`` as finite float64 with one of the allowed ``ndim``; ValueError otherwise
    (for anything else, None included)."""
    arr = as_array(x, name)
    if arr.dtype.kind not in "fiu":
        raise ValueError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    if arr.ndim not in ndim:
        shapes = {0: "a scalar", 1: "shape (n,)", 2: "shape (n, S)"}
        allowed = " or ".join(shapes.get(d, f"{d} dimensions") for d in ndim)
        raise ValueError(f"{name} must be {allowed}, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty")
    out = np.asarray(arr, dtype=np.float64)
    bad = ~np.isfinite(out)
    if bad.any():
        kind = "NaN" if np.isnan(out).any() else "infinity"
        raise ValueError(f"{name} contains {kind}: {describe_bad(out, bad)}")
    if positive:
        bad = out <= 0
        if bad.any():
            raise ValueError(f"{name} must be > 0; {describe_bad(out, bad)} are not")
    return out


def check_levels(levels: ArrayLike, name: str = "levels", *, closed: bool = False) -> np.ndarray:
    """Probability levels as float64 (J,), strictly increasing in (0, 1).

    With ``closed=True`` the end points 0 and 1 are allowed too (the grid of
    uncertainty-toolbox, ``linspace(0, 1, 100)``, contains them).
    """
    p = real_array(levels, name, ndim=(1,))
    lo_ok = p[0] >= 0.0 if closed else p[0] > 0.0
    hi_ok = p[-1] <= 1.0 if closed else p[-1] < 1.0
    if not (lo_ok and hi_ok):
        where = "[0, 1]" if closed else "(0, 1)"
        raise ValueError(f"{name} must lie in {where}, got values from {p.min()!r} to {p.max()!r}")
    step = np.diff(p)
    if not np.all(step > 0):
        i = int(np.flatnonzero(step <= 0)[0])
        raise ValueError(
            f"{name} must be strictly increasing; {name}[{i}] = {p[i]!r} is followed by {p[i + 1]!r}"
        )
    return p


def check_pit(pit: ArrayLike, name: str = "pit") -> np.ndarray:
    """PIT values as float64 (n,), finite, in [0, 1]."""
    arr = as_array(pit, name)
    if arr.ndim != 1:
        raise ValueError(f"{name} must have shape (n,), got shape {arr.shape}")
    return check_probabilities(arr, name)


def _same_length(arr: np.ndarray, name: str, n: int) -> None:
    if arr.ndim >= 1 and arr.shape[0] != n:
        hint = ""
        if arr.ndim == 2 and arr.shape[1] == n:
            hint = f" ({name} looks like (S, n) = {arr.shape}: pass its transpose, {name}.T)"
        raise ValueError(f"{name} has {arr.shape[0]} rows but y has {n} entries; they must match{hint}")


def _check_quantile_forecast(quantiles: Any, levels: Any, n: int | None) -> tuple[np.ndarray, np.ndarray]:
    q = real_array(quantiles, "quantiles", ndim=(2,))
    tau = check_levels(levels, "levels")
    if n is not None:
        _same_length(q, "quantiles", n)
    if q.shape[1] != tau.size:
        raise ValueError(
            f"quantiles has {q.shape[1]} columns but levels has {tau.size} entries; "
            "column k holds the quantile at levels[k]"
        )
    dec = np.diff(q, axis=1) < 0
    if dec.any():
        t, k = np.argwhere(dec)[0]
        raise ValueError(
            f"quantiles must be non-decreasing along each row; row {t} has "
            f"{q[t, k]!r} at level {tau[k]} above {q[t, k + 1]!r} at level {tau[k + 1]}"
        )
    return q, tau


def check_dist(dist: Any) -> Any:  # a frozen scipy.stats distribution
    from scipy import stats

    if not isinstance(getattr(dist, "dist", None), stats.rv_continuous) or not hasattr(dist, "cdf"):
        raise ValueError(
            "dist must be a frozen scipy.stats continuous distribution, e.g. "
            f"scipy.stats.norm(loc=mean, scale=std); got {type(dist).__name__}"
        )
    return dist


def _forecast_form(
    mean: ArrayLike | None, std: ArrayLike | None, dist: Any, samples: ArrayLike | None,
    quantiles: ArrayLike | None, levels: ArrayLike | None,
) -> str:
    given = {
        "mean/std": mean is not None or std is not None,
        "dist": dist is not None,
        "samples": samples is not None,
        "quantiles/levels": quantiles is not None or levels is not None,
    }
    chosen = [k for k, v in given.items() if v]
    if len(chosen) != 1:
        raise ValueError(
            "give exactly one forecast: mean= and std= (Gaussian), dist= (frozen scipy "
            "distribution), samples= (n, S) or quantiles= (n, K) with levels= (K,); "
            f"got {', '.join(chosen) if chosen else 'none'}"
        )
    form = chosen[0]
    if form == "mean/std" and (mean is None or std is None):
        raise ValueError("a Gaussian forecast needs both mean= and std=")
    if form == "quantiles/levels" and (quantiles is None or levels is None):
        raise ValueError("a quantile forecast needs both quantiles= (n, K) and levels= (K,)")
    return form


# ---------------------------------------------------------- autocorrelation
class CorrelatedSamplesWarning(UserWarning):
    """The draws of a sample forecast look autocorrelated (MCMC draws in sampler order).

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from bece.regression import CorrelatedSamplesWarning, pit
    >>> rng = np.random.default_rng(0)
    >>> walk = np.cumsum(rng.normal(size=(200, 500)), axis=1)   # each row a random walk
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     u = pit(rng.normal(size=200), samples=walk)
    >>> any(issubclass(w.category, CorrelatedSamplesWarning) for w in caught)
    True
    """


def check_autocorrelation(s: np.ndarray, *, stacklevel: int = 3) -> None:
    """Warn when the S draws of a sample forecast look autocorrelated.

    The rank PIT assumes the S draws and the target are exchangeable. MCMC
    draws kept in the sampler's order are autocorrelated: their effective
    sample size (ESS) is below S, the target's rank among them is more often
    extreme, and the PIT of a correct forecaster has too much mass near 0
    and 1, which a calibration test detects once n is large. The check
    looks at the first :data:`ACF_ROWS` rows: when their mean lag-1
    autocorrelation exceeds 0.2 (independent draws give about -1/S, with
    sd 1/sqrt(256 S)), it computes ArviZ's bulk ESS of the standardised rows
    (as chains of one quantity, :func:`bece._base.arviz.ess`) and warns
    (:class:`CorrelatedSamplesWarning`) when it is below half of S, with the
    numbers and how much to thin. Draws sorted along each row are not
    checked (their order is not the sampler's; ranks do not depend on it).
    """
    n, size = s.shape
    if size < 20:
        return
    rows = s[:ACF_ROWS]
    step = np.diff(rows, axis=1)
    if np.all(step >= 0) or np.all(step <= 0):
        return
    x = rows - rows.mean(axis=1, keepdims=True)
    var = np.einsum("ij,ij->i", x, x)
    ok = var > 0
    if not ok.any():
        return
    rho1 = float(np.mean(np.einsum("ij,ij->i", x[ok, 1:], x[ok, :-1]) / var[ok]))
    if rho1 < 0.2:
        return
    from .._base.arviz import ess

    z = x[ok] / np.sqrt(var[ok] / size)[:, None]
    per_row = ess(z, method="bulk") / z.shape[0]
    if not per_row < ESS_WARN_FRACTION * size:
        return
    thin = int(np.ceil(size / max(per_row, 1.0)))
    warnings.warn(
        f"samples look autocorrelated along axis 1 (lag-1 autocorrelation {rho1:.2f}; effective sample "
        f"size about {per_row:.0f} of S = {size} draws, over {z.shape[0]} rows): the rank PIT assumes "
        "independent draws, and with autocorrelated ones the PIT of a correct forecaster has too many "
        "values near 0 and 1, so calibration tests reject it once n is large. Thin the draws "
        f"(samples[:, ::{thin}]) or use draws from independent chains",
        CorrelatedSamplesWarning,
        stacklevel=stacklevel,
    )


# --------------------------------------------------------------------- PIT
def _count_samples(y: np.ndarray, s: np.ndarray, strict: bool) -> np.ndarray:
    """Per row, the number of samples ``< y`` (strict) or ``<= y``; int64 (n,)."""
    n, size = s.shape
    out = np.empty(n, dtype=np.int64)
    step = max(1, _CHUNK_ELEMENTS // size)
    for a in range(0, n, step):
        b = min(n, a + step)
        yy = y[a:b, None]
        cmp = s[a:b] < yy if strict else s[a:b] <= yy
        out[a:b] = cmp.sum(axis=1)
    return out


def _quantile_pit(y: np.ndarray, q: np.ndarray, tau: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper ends (F(y-), F(y)) of the PIT of a quantile forecast.

    Inside ``[q_1, q_K]`` the CDF is the linear interpolation of
    ``(q_k, tau_k)``; a point where several quantiles coincide is a jump.
    Outside, the forecast says nothing about the shape of the tails: the
    interval is ``[0, tau_1]`` below ``q_1`` and ``[tau_K, 1]`` above ``q_K``.
    """
    n, k = q.shape
    below = (q < y[:, None]).sum(axis=1)  # number of quantiles strictly below y
    upto = (q <= y[:, None]).sum(axis=1)  # number of quantiles <= y
    rows = np.arange(n)
    hi = np.empty(n)
    lo = np.empty(n)
    inner = (upto > 0) & (upto < k)
    i = upto[inner] - 1  # q[i] <= y < q[i + 1]
    r = rows[inner]
    q0, q1 = q[r, i], q[r, i + 1]
    hi[inner] = tau[i] + (y[inner] - q0) / (q1 - q0) * (tau[i + 1] - tau[i])
    top = upto == k
    hi[top] = tau[k - 1]  # y == q_K (and y > q_K below)
    # jumps: y equals quantiles below..upto-1; F(y-) is the first of their levels
    tie = below < upto
    lo[:] = hi
    lo[tie] = tau[below[tie]]
    # tails
    left = upto == 0
    lo[left], hi[left] = 0.0, tau[0]
    right = below == k
    lo[right], hi[right] = tau[k - 1], 1.0
    return lo, hi


def pit(
    y: ArrayLike,
    *,
    mean: ArrayLike | None = None,
    std: ArrayLike | None = None,
    dist: Any = None,  # a frozen scipy.stats distribution (scipy.stats loads when used)
    samples: ArrayLike | None = None,
    quantiles: ArrayLike | None = None,
    levels: ArrayLike | None = None,
    randomize: bool = False,
    seed: Seed | None = None,
) -> np.ndarray:
    """Probability integral transform :math:`u_t = F_t(y_t)` of forecasts.

    Give exactly one forecast form (module docstring).

    Parameters
    ----------
    y : array_like of shape (n,)
        Observed targets.
    mean, std : array_like of shape (n,) or scalars
        Gaussian forecast; ``std > 0``.
        :math:`u_t = \\Phi((y_t - \\mu_t)/\\sigma_t)`.
    dist : frozen scipy.stats continuous distribution
        :math:`u_t` = ``dist.cdf(y)[t]``; its batch shape must broadcast to (n,).
    samples : array_like of shape (n, S)
        Predictive draws :math:`s_{t,1..S}`. Default:
        :math:`u_t = \\#\\{i: s_{t,i} \\le y_t\\}/S` (the empirical CDF).
        With ``randomize=True``:

        .. math::

            u_t = \\frac{\\#\\{i: s_{t,i} < y_t\\} + V_t\\,(\\#\\{i: s_{t,i} = y_t\\} + 1)}{S + 1},
            \\qquad V_t \\sim U(0, 1),

        the randomised rank of :math:`y_t` among the S + 1 values
        :math:`y_t, s_{t,1..S}`: exactly U(0, 1) when they are exchangeable
        (a correct forecaster with independent draws), ties included; it
        differs from the empirical CDF by at most :math:`1/(S+1)`. MCMC
        draws are autocorrelated, not independent: a
        :class:`CorrelatedSamplesWarning` says so, with their effective
        sample size and how much to thin (:func:`check_autocorrelation`).
    quantiles : array_like of shape (n, K)
        Forecast quantiles, non-decreasing along rows, at ``levels``.
    levels : array_like of shape (K,)
        Quantile levels :math:`\\tau_1 < \\dots < \\tau_K` in (0, 1). Between
        :math:`q_{t,k} \\le y_t < q_{t,k+1}`:
        :math:`u_t = \\tau_k + (\\tau_{k+1}-\\tau_k)(y_t-q_{t,k})/(q_{t,k+1}-q_{t,k})`.
        Outside the forecast quantiles the forecast does not say where its tail
        mass lies: :math:`u_t = 0` below :math:`q_{t,1}` and :math:`u_t = 1`
        above :math:`q_{t,K}`, so that :math:`\\{u_t \\le p\\} = \\{y_t \\le
        F_t^{-1}(p)\\}` holds exactly for every level p in
        :math:`[\\tau_1, \\tau_K]` (evaluate calibration on those levels only).
        With ``randomize=True`` the tails are U(0, :math:`\\tau_1`) and
        U(:math:`\\tau_K`, 1), and a point where several quantiles coincide
        (a jump of :math:`F_t`) is uniform over the jump; then the PIT of a
        calibrated quantile forecaster is uniform on the tails too.
    randomize : bool, default False
        Randomised PIT for sample and quantile forecasts (above). No effect on
        continuous forecasts (``mean/std``, ``dist``), whose PIT is already
        U(0, 1) under a correct forecaster.
    seed : int or numpy.random.Generator, optional
        Randomness of ``randomize=True``; required then for sample and
        quantile forecasts (explicit randomness), unused otherwise (but
        checked whenever given: a non-negative int or a Generator).

    Returns
    -------
    ndarray of shape (n,), float64 in [0, 1]

    Raises
    ------
    ValueError
        If no or several forecast forms are given; on NaN or infinity in any
        input; ``std <= 0``; lengths that do not match ``y``; levels not
        strictly increasing in (0, 1); quantile rows that decrease.

    Warns
    -----
    CorrelatedSamplesWarning
        When the draws of a sample forecast look autocorrelated.

    Examples
    --------
    >>> import numpy as np
    >>> from bece.regression import pit
    >>> pit([0.0, 1.0], mean=[0.0, 0.0], std=[1.0, 1.0]).round(4)
    array([0.5   , 0.8413])
    >>> pit([2.0], samples=[[1.0, 2.0, 3.0, 4.0]])
    array([0.5])
    >>> pit([2.5], quantiles=[[1.0, 2.0, 4.0]], levels=[0.1, 0.5, 0.9])
    array([0.6])
    """
    form = _forecast_form(mean, std, dist, samples, quantiles, levels)
    yy = real_array(y, "y", ndim=(1,))
    n = yy.size
    if not isinstance(randomize, (bool, np.bool_)):
        raise ValueError(f"randomize must be True or False, got {randomize!r}")
    # a seed is checked whenever it is given, used or not
    rng = None if seed is None else as_generator(seed)
    if randomize and form in ("quantiles/levels", "samples"):
        if rng is None:
            raise ValueError("randomize=True needs seed= (an int or a numpy Generator)")
    if form == "mean/std":
        mu = real_array(mean, "mean", ndim=(0, 1))
        sd = real_array(std, "std", ndim=(0, 1), positive=True)
        _same_length(mu, "mean", n)
        _same_length(sd, "std", n)
        return special.ndtr((yy - mu) / sd)
    if form == "dist":
        d = check_dist(dist)
        try:
            with np.errstate(invalid="ignore"):
                u = np.asarray(d.cdf(yy), dtype=np.float64)
        except ValueError as exc:
            raise ValueError(
                f"dist.cdf(y) failed ({exc}); the distribution's batch shape must broadcast "
                f"to y's shape ({n},)"
            ) from None
        if u.shape != (n,):
            raise ValueError(
                f"dist.cdf(y) has shape {u.shape}; the distribution's batch shape must "
                f"broadcast to y's shape ({n},)"
            )
        bad = ~((u >= 0) & (u <= 1))
        if bad.any():
            raise ValueError(
                f"dist.cdf(y) is not a probability at {describe_bad(u, bad)}; "
                "check the distribution's parameters (e.g. scale > 0)"
            )
        return u
    if form == "samples":
        s = real_array(samples, "samples", ndim=(2,))
        _same_length(s, "samples", n)
        check_autocorrelation(s)
        size = s.shape[1]
        if not randomize:
            return _count_samples(yy, s, strict=False) / size
        below = _count_samples(yy, s, strict=True)
        ties = _count_samples(yy, s, strict=False) - below
        assert rng is not None  # randomize needs a seed (checked above)
        v = rng.random(n)
        return (below + v * (ties + 1)) / (size + 1)
    q, tau = _check_quantile_forecast(quantiles, levels, n)
    lo, hi = _quantile_pit(yy, q, tau)
    if randomize:
        assert rng is not None  # randomize needs a seed (checked above)
        return lo + rng.random(n) * (hi - lo)
    u = hi
    u[yy < q[:, 0]] = 0.0
    u[yy > q[:, -1]] = 1.0
    return u


# --------------------------------------------------------------- quantiles
def forecast_quantiles(
    level: ArrayLike,
    *,
    mean: ArrayLike | None = None,
    std: ArrayLike | None = None,
    dist: Any = None,  # a frozen scipy.stats distribution
    samples: ArrayLike | None = None,
    quantiles: ArrayLike | None = None,
    levels: ArrayLike | None = None,
) -> np.ndarray:
    """Quantiles :math:`F_t^{-1}(\\tau)` of forecasts at levels :math:`\\tau`.

    Parameters
    ----------
    level : float or array_like of shape (Q,)
        Levels :math:`\\tau` in [0, 1], the same for every forecast. Levels 0
        and 1 give the ends of the forecast's support (Gaussian :math:`\\mp\\infty`,
        ``dist.ppf(0)``/``dist.ppf(1)``, the smallest/largest sample).
    mean, std, dist, samples, quantiles, levels
        One forecast form, as in :func:`pit`.
        Gaussian: :math:`\\mu_t + \\sigma_t \\Phi^{-1}(\\tau)`;
        ``dist``: ``dist.ppf``;
        samples: the generalised inverse of the empirical CDF,
        :math:`\\inf\\{y: \\#\\{i: s_{t,i} \\le y\\}/S \\ge \\tau\\}`, i.e. the
        :math:`\\lceil \\tau S \\rceil`-th smallest sample
        (``numpy.quantile(method="inverted_cdf")``);
        quantile forecasts: linear interpolation of :math:`q_{t,k}` over
        :math:`\\tau_k`, defined only for :math:`\\tau \\in [\\tau_1, \\tau_K]`.

    Returns
    -------
    ndarray of shape (n,) for a scalar level, else (n, Q)
        n is the number of forecasts (for ``dist``, its batch size).

    Raises
    ------
    ValueError
        Bad forecast inputs (as :func:`pit`), levels outside [0, 1], or, for
        a quantile forecast, a level outside its ``[levels[0], levels[-1]]``
        (it carries no information there).

    Examples
    --------
    >>> from bece.regression import forecast_quantiles
    >>> forecast_quantiles(0.5, quantiles=[[1.0, 2.0, 4.0]], levels=[0.1, 0.5, 0.9])
    array([2.])
    >>> forecast_quantiles([0.25, 0.75], samples=[[4.0, 1.0, 3.0, 2.0]])
    array([[1., 3.]])
    """
    form = _forecast_form(mean, std, dist, samples, quantiles, levels)
    tau = real_array(level, "level", ndim=(0, 1))
    bad = ~((tau >= 0) & (tau <= 1))
    if bad.any():
        raise ValueError(f"level must lie in [0, 1]; {describe_bad(tau, bad)} are outside")
    scalar = tau.ndim == 0
    t = np.atleast_1d(tau)
    if form == "mean/std":
        mu = real_array(mean, "mean", ndim=(0, 1))
        sd = real_array(std, "std", ndim=(0, 1), positive=True)
        if mu.ndim and sd.ndim and mu.shape != sd.shape:
            raise ValueError(f"mean has shape {mu.shape} but std has shape {sd.shape}")
        out = np.atleast_1d(mu)[:, None] + np.atleast_1d(sd)[:, None] * special.ndtri(t)[None, :]
    elif form == "dist":
        out = np.atleast_2d(np.asarray(check_dist(dist).ppf(t[:, None]), dtype=np.float64).T)
    elif form == "samples":
        s = real_array(samples, "samples", ndim=(2,))
        out = np.quantile(s, t, axis=1, method="inverted_cdf").T
    else:
        q, lv = _check_quantile_forecast(quantiles, levels, None)
        outside = (t < lv[0]) | (t > lv[-1])
        if outside.any():
            raise ValueError(
                f"level must lie within the quantile forecast's levels [{lv[0]}, {lv[-1]}]; "
                f"{describe_bad(t, outside)} are outside, where the forecast carries no "
                "information (forecast more extreme quantiles, or ask for less extreme levels)"
            )
        if lv.size == 1:  # only that one level is allowed
            out = np.repeat(q, t.size, axis=1)
        else:
            j = np.clip(np.searchsorted(lv, t, side="right") - 1, 0, lv.size - 2)
            w = (t - lv[j]) / (lv[j + 1] - lv[j])
            out = q[:, j] + w * (q[:, j + 1] - q[:, j])
    return out[:, 0] if scalar else out
