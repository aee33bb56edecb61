"""ArviZ, imported when first needed, on either of its two lines.

ArviZ 0.2x is one package whose results are ``arviz.InferenceData``; ArviZ
1.x (Python >= 3.12) is split into ``arviz_base`` (data), ``arviz_stats``
(statistics) and ``arviz_plots``, and stores results as ``xarray.DataTree``.
The small adapters below call the right API for the installed ArviZ, so the
rest of bece never branches on its version:

========================  ===============================  ==========================================
adapter                   ArviZ 0.2x                       ArviZ 1.x
========================  ===============================  ==========================================
:func:`from_dict`         ``az.from_dict(**groups)``       ``arviz_base.from_dict(groups)``
:func:`hdi`               ``az.hdi(x, hdi_prob=p)``        ``arviz_stats.hdi(x, p)``
:func:`ess`               ``az.ess(x, method=m)``          ``arviz_stats.ess(x, method=m)`` (tail at
                                                           the 5% and 95% quantiles, as 0.2x)
:func:`rhat`              ``az.rhat(x)``                   ``arviz_stats.rhat(x)``
:func:`psislw`            ``az.psislw(lw)``                ``array_stats.psislw(-lw)`` (takes the
                                                           log-likelihood, i.e. minus the log weights)
:func:`kde`               ``az.kde(x, bound_correction)``  ``arviz_stats.kde(x, bound_correction)``
:func:`summary`           ``az.summary(d, hdi_prob=p)``    ``arviz_stats.summary(d, ci_prob=p,
                                                           ci_kind="hdi")``
========================  ===============================  ==========================================

On 1.x only ``arviz_base`` and ``arviz_stats`` are imported (not the
plotting package ``arviz_plots``, nor matplotlib through it).
"""

from __future__ import annotations

import functools
import logging
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from .checks import check_prob

__all__ = [
    "arviz_version",
    "ess",
    "from_dict",
    "hdi",
    "kde",
    "load_arviz",
    "preload",
    "psislw",
    "quiet_arviz",
    "rhat",
    "summary",
    "uses_datatree",
]

#: ESS methods accepted by :func:`ess` (those the cross-checks use; both lines have them)
ESS_METHODS = ("bulk", "tail", "mean")

#: quantiles of the tail ESS (Vehtari et al. 2021; ArviZ 0.2x's default)
TAIL_PROBS = (0.05, 0.95)


def load_arviz() -> Any:  # the arviz module
    """The ``arviz`` module (either line), imported quietly."""
    with warnings.catch_warnings():
        # arviz 0.2x announces its 1.0 refactor on import; it is not ours to show
        warnings.simplefilter("ignore", FutureWarning)
        import arviz

    return arviz


@functools.cache
def arviz_version() -> tuple[int, int]:
    """(major, minor) of the installed ArviZ, read without importing it."""
    from importlib import metadata

    try:
        text = metadata.version("arviz")
    except metadata.PackageNotFoundError:  # not installed as a distribution
        text = load_arviz().__version__
    parts = (text.split(".") + ["0"])[:2]
    return int(parts[0]), int("".join(c for c in parts[1] if c.isdigit()) or 0)


def uses_datatree() -> bool:
    """True for ArviZ 1.x (``xarray.DataTree``), False for 0.2x (``InferenceData``)."""
    return arviz_version()[0] >= 1


def _stats() -> Any:  # the arviz_stats module (1.x)
    import arviz_stats

    return arviz_stats


def preload() -> None:
    """Import what the adapters use (``arviz`` on 0.2x; ``arviz_base`` and
    ``arviz_stats`` on 1.x), e.g. while something else waits without the GIL."""
    if uses_datatree():
        import arviz_base  # noqa: F401

        _stats()
    else:
        load_arviz()


@contextmanager
def quiet_arviz() -> Iterator[None]:
    """Silence ArviZ's notes that one chain is too few for R-hat and that an
    array holds NaN.

    Our draws are independent, stored as one chain; the note is about MCMC.
    NaN is an empty bin's accuracy when both its cells underflow (handled by
    the callers).
    """
    loggers = [logging.getLogger(name) for name in ("arviz", "arviz_base", "arviz_stats")]
    if not uses_datatree():
        # arviz 0.2x logs through its own ``arviz._log`` (a Logger outside the
        # logging registry) as well as the registered "arviz" logger
        own = getattr(load_arviz(), "_log", None)
        if isinstance(own, logging.Logger):
            loggers.append(own)
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)


def from_dict(
    groups: Mapping[str, Mapping[str, Any]],
    *,
    coords: Mapping[str, Any] | None = None,
    dims: Mapping[str, Sequence[str]] | None = None,
    attrs: Mapping[str, Mapping[str, Any]] | None = None,
) -> Any:  # arviz.InferenceData (0.2x) or xarray.DataTree (1.x)
    """ArviZ's container of ``groups`` on the installed ArviZ.

    Parameters
    ----------
    groups : mapping of group name to {variable: array}
        E.g. ``{"posterior": {...}, "constant_data": {...}}``. Variables of
        ``posterior`` and ``sample_stats`` lead with (chain, draw); those of
        a group whose name holds "data" have no sample dimensions.
    coords, dims
        As ArviZ's ``from_dict``: coordinate values per dimension, and the
        dimensions after (chain, draw) of each variable.
    attrs : mapping of group name to {attribute: value}, optional
        Added to each group's attributes (after ArviZ's own).

    Returns
    -------
    arviz.InferenceData on ArviZ 0.2x, xarray.DataTree on ArviZ 1.x; both
    give a group as ``data.posterior`` or ``data["posterior"]``.
    """
    if not isinstance(groups, Mapping) or not all(isinstance(g, Mapping) for g in groups.values()):
        raise ValueError("groups must map group names to {variable: array} mappings")
    unknown = set(attrs or {}) - set(groups)
    if unknown:
        raise ValueError(f"attrs names groups that are not in groups: {sorted(unknown)}")
    coords = dict(coords) if coords is not None else None
    dims = {k: list(v) for k, v in dims.items()} if dims is not None else None
    with quiet_arviz():
        if uses_datatree():
            import arviz_base

            data = arviz_base.from_dict(
                {name: dict(g) for name, g in groups.items()}, coords=coords, dims=dims
            )
        else:
            data = load_arviz().from_dict(
                **{name: dict(g) for name, g in groups.items()}, coords=coords, dims=dims
            )
    for name, values in (attrs or {}).items():
        data[name].attrs.update(values)
    return data


def hdi(draws: Any, prob: float) -> tuple[float, float]:
    """Highest-density interval of 1-D ``draws``: the shortest interval
    between two sorted draws that holds ``floor(prob * n)`` steps of them."""
    prob = check_prob(prob)
    x = np.asarray(draws, dtype=np.float64)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"draws must be a non-empty 1-D array, got shape {x.shape}")
    if uses_datatree():
        lo, hi = _stats().hdi(x, prob)
    else:
        lo, hi = load_arviz().hdi(x, hdi_prob=prob)
    return float(lo), float(hi)


def ess(x: Any, method: str = "bulk") -> float:
    """Effective sample size of (chain, draw) draws ``x`` of one quantity.

    ``method`` is ``"bulk"``, ``"tail"`` (the smaller of the ESS of the 5%
    and 95% quantiles on both lines) or ``"mean"``. NaN where ArviZ gives
    NaN (e.g. too few draws).
    """
    if method not in ESS_METHODS:
        raise ValueError(f"method must be one of {ESS_METHODS}, got {method!r}")
    a = _chain_draw(x)
    if uses_datatree():
        prob = TAIL_PROBS if method == "tail" else None
        return float(_stats().ess(a, method=method, prob=prob))
    return float(load_arviz().ess(a, method=method))


def rhat(x: Any) -> float:
    """Rank-normalised split R-hat of (chain, draw) draws ``x`` of one quantity."""
    a = _chain_draw(x)
    if uses_datatree():
        return float(_stats().rhat(a))
    return float(load_arviz().rhat(a))


def _chain_draw(x: Any) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError(f"x must be a (chain, draw) array, got shape {a.shape}")
    return a


#: fewest draws arviz_stats (1.x) smooths: it fits a tail of floor(n / 5) draws
#: below 225 draws and refuses a tail of fewer than 5
PSIS_MIN_DRAWS_1X = 25


def psislw(log_weights: Any) -> tuple[np.ndarray, float]:
    """Pareto-smoothed log importance weights of 1-D ``log_weights`` and the
    Pareto shape :math:`\\hat k` (below 0.7: reliable).

    The smoothed weights are defined up to a constant (normalise them with
    ``logsumexp``). ArviZ 0.2x and 1.x fit the tail a little differently:
    :math:`\\hat k` and the smoothed tail agree to about 1e-2, not exactly.
    Where ArviZ has too few draws to fit a tail the weights come back
    unsmoothed with :math:`\\hat k = \\infty`: ArviZ 0.2x does so itself
    for a tail of fewer than 5 draws (up to 20 draws); here also for one
    draw (0.2x fails) and on 1.x for fewer than :data:`PSIS_MIN_DRAWS_1X`
    draws or a tail of equal values (1.x refuses them).
    """
    lw = np.array(log_weights, dtype=np.float64)  # a copy: ArviZ may write to it
    if lw.ndim != 1 or lw.size == 0:
        raise ValueError(f"log_weights must be a non-empty 1-D array, got shape {lw.shape}")
    if np.any(np.isnan(lw)) or np.any(lw == np.inf):
        raise ValueError("log_weights must not hold NaN or +inf (-inf is a zero weight)")
    if uses_datatree():
        from arviz_stats.base import array_stats

        if lw.size < PSIS_MIN_DRAWS_1X:
            return _unsmoothed(lw)
        try:
            # arviz_stats' psislw takes log-likelihood values: the log weights negated
            smoothed, k_hat = array_stats.psislw(-lw)
        except ValueError as err:  # "All tail values are the same": nothing to fit
            if "tail" not in str(err):
                raise
            return _unsmoothed(lw)
    else:
        if lw.size == 1:  # ArviZ 0.2x fails on one draw (IndexError)
            return _unsmoothed(lw)
        smoothed, k_hat = load_arviz().psislw(lw)
    return np.asarray(smoothed, dtype=np.float64), float(k_hat)


def _unsmoothed(lw: np.ndarray) -> tuple[np.ndarray, float]:
    from scipy.special import logsumexp

    return lw - logsumexp(lw), float("inf")


def kde(x: Any) -> tuple[np.ndarray, np.ndarray]:
    """Kernel density estimate of 1-D draws ``x`` with boundary correction:
    (grid, pdf) on ArviZ's default grid of 512 points over the draws' range."""
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"x must be a non-empty 1-D array, got shape {a.shape}")
    if uses_datatree():
        grid, pdf, _bw = _stats().kde(a, bound_correction=True)
    else:
        grid, pdf = load_arviz().kde(a, bound_correction=True)
    return np.asarray(grid), np.asarray(pdf)


def summary(
    data: Any, var_names: str | list[str] | None = None, *, hdi_prob: float = 0.9, **kwargs: Any
) -> Any:  # pandas.DataFrame
    """ArviZ's summary table of ``data`` (what :func:`from_dict` returns),
    with the ``hdi_prob`` highest-density interval.

    ``kwargs`` go to the installed ArviZ's ``summary`` unchanged (e.g.
    ``kind="stats"`` on both lines). The columns and their rounding are
    ArviZ's: on 0.2x ``hdi_5%``, ``hdi_95%`` and numbers rounded to 3
    decimals; on 1.x ``hdi90_lb``, ``hdi90_ub`` and, by default
    (``round_to="auto"``), values shown as text to their Monte Carlo
    precision (pass ``round_to="none"`` for numbers).
    """
    if isinstance(hdi_prob, (bool, np.bool_)) or not isinstance(hdi_prob, (int, float, np.floating)) \
            or not 0.0 < float(hdi_prob) < 1.0:
        raise ValueError(f"hdi_prob must be a number in (0, 1), got {hdi_prob!r}")
    hdi_prob = float(hdi_prob)
    with quiet_arviz():
        if uses_datatree():
            data, kwargs = _without_label_dim(data, kwargs)
            return _stats().summary(data, var_names=var_names, ci_prob=hdi_prob, ci_kind="hdi", **kwargs)
        return load_arviz().summary(data, var_names=var_names, hdi_prob=hdi_prob, **kwargs)


def _without_label_dim(data: Any, kwargs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """ArviZ 1.x's summary stacks the dimensions into a new one named
    "label" and fails on data that has a "label" dimension (the top-label
    results do): summarise that group's Dataset with the dimension renamed.
    The rows are named by coordinate values (``label_ece[3]``), so they do
    not change."""
    import xarray as xr

    group = kwargs.get("group", "posterior")
    if not isinstance(data, xr.DataTree) or group not in data.children:
        return data, kwargs
    ds = data[group].to_dataset()
    if "label" not in ds.dims:
        return data, kwargs
    name = "label_"
    while name in ds.dims or name in ds.variables:
        name += "_"
    kwargs = {k: v for k, v in kwargs.items() if k != "group"}
    return ds.rename({"label": name}), kwargs
