"""The metrics a report can carry, by name, each with its interval or p-value.

:func:`metric_report` computes the chosen metrics of (outcome, confidence)
pairs (:mod:`bece._metrics.pairs`) and gives each an interval: the l2 ECE
from the posterior draws of a Bayesian ECE when one is passed
(:func:`~bece._metrics.posterior_l2.l2_ece_draws`, the same draws as the
l1 posterior), the asymptotic interval of Sun et al. (2024) for their
debiased l2 ECE (:func:`~bece._metrics.l2_interval.l2_ece_interval`), the
percentile Poisson bootstrap otherwise
(:func:`~bece._metrics.bootstrap.bootstrap_interval`); the tests of
calibration give their statistic and p-value. ``bece report --metrics``
prints it.

One bootstrap: the metrics that are sums over the pairs
(:data:`~bece._metrics.streaming.MERGEABLE`) come from
:func:`~bece._metrics.streaming.metric_sums`, as ``bece report --metrics``
computes them in one pass over a file, and the others from
:func:`~bece.metrics.bootstrap_interval` with the same Poisson counts (row
i's depend on ``(seed, i)`` only). So the same pairs and seed give the same
intervals here, from chunks and from the command line, and every metric's
replicate r is the same resample of the rows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._stats.binning import make_binning
from .bootstrap import bootstrap_interval
from .clinical import (
    calibration_in_the_large,
    calibration_slope,
    hosmer_lemeshow,
    ks_calibration_error,
    spiegelhalter_z,
)
from .l2 import ece_sweep, l2_calibration_error
from .l2_interval import l2_ece_interval
from .posterior_l2 import l2_ece_draws
from .scores import brier_score, log_loss
from .smooth_ece import smooth_calibration_error
from .streaming import MERGEABLE, metric_sums, streamed_metrics

__all__ = [
    "METRIC_LABELS",
    "METRIC_NAMES",
    "check_metric_names",
    "metric_report",
]


def _slope(*a: Any, **k: Any) -> float:
    return calibration_slope(*a, **k).slope


def _citl(*a: Any, **k: Any) -> float:
    return calibration_slope(*a, **k).intercept_in_the_large


_ESTIMATES: dict[str, tuple[str, Callable[..., Any]]] = {
    "l2": ("binned l2 (RMS) ECE", l2_calibration_error),
    "debiased_l2": ("debiased l2 ECE (Kumar et al. 2019)",
                    lambda *a, **k: l2_calibration_error(*a, debiased=True, **k)),
    "l2_sun": ("debiased l2 ECE (Sun et al. 2024)", lambda *a, **k: l2_ece_interval(*a, **k).estimate),
    "smooth_ece": ("smooth ECE (Blasiok & Nakkiran 2023)", smooth_calibration_error),
    "ece_sweep": ("ECE_sweep (Roelofs et al. 2022)", ece_sweep),
    "brier": ("Brier score", brier_score),
    "log_loss": ("log loss", log_loss),
    "ks": ("KS calibration error (Gupta et al. 2021)", ks_calibration_error),
    "slope": ("calibration slope", _slope),
    "citl": ("calibration-in-the-large (mean p - mean y)", calibration_in_the_large),
    "intercept": ("calibration intercept (logistic, slope 1)", _citl),
}
_TESTS: dict[str, tuple[str, Callable[..., Any]]] = {
    "spiegelhalter": ("Spiegelhalter's Z", spiegelhalter_z),
    "hosmer_lemeshow": ("Hosmer-Lemeshow (10 groups)", hosmer_lemeshow),
}

#: Every name :func:`metric_report` knows, in report order.
METRIC_NAMES: tuple[str, ...] = (*_ESTIMATES, *_TESTS)

#: The label each name is reported under.
METRIC_LABELS: dict[str, str] = {k: v[0] for k, v in (*_ESTIMATES.items(), *_TESTS.items())}


def check_metric_names(names: Any) -> list[str]:
    """The names as a list, or ValueError naming the unknown ones and the known."""
    if isinstance(names, str):
        names = [t.strip() for t in names.split(",")]
    names = list(names)
    unknown = [n for n in names if n not in METRIC_NAMES]
    if unknown or not names:
        raise ValueError(f"metrics must be names among {', '.join(METRIC_NAMES)} (or 'all'); "
                         f"got {', '.join(map(repr, unknown)) or 'none'}")
    return names


def metric_report(
    z: np.ndarray, p: np.ndarray, names: Any, *, posterior: Any = None, prob: float = 0.9,
    n_boot: int = 200, seed: int = 0,
) -> dict[str, dict[str, Any]]:
    """The chosen metrics of the pairs, each with its interval or p-value.

    Parameters
    ----------
    z, p : array_like of shape (n,)
        Outcomes (0/1) and confidences (P(y = 1), or the top-label pairs).
    names : str or list of str
        Names from :data:`METRIC_NAMES`, or ``"all"``.
    posterior : BayesianECE, optional
        A Bayesian ECE of the same data: the l2 ECE then takes its bins and
        its interval from the posterior draws.
    prob : float, default 0.9
    n_boot, seed
        The Poisson bootstrap's replicates and its seed (an int): row i's
        counts depend on ``(seed, i)`` only, and every metric uses the same
        replicates.

    Returns
    -------
    dict
        ``{name: {"label", "value", "interval", "interval_method"}}`` for the
        estimates, ``{name: {"label", "statistic", "p_value", ...}}`` for the
        tests; a metric that cannot be computed on these data (a slope with a
        confidence of exactly 1) gets ``{"label", "error"}`` with the reason.

    Examples
    --------
    >>> import numpy as np
    >>> from bece.metrics import metric_report
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> z = (rng.uniform(size=2000) < p ** 1.5).astype(float)
    >>> rep = metric_report(z, p, ["brier", "ks"], n_boot=100, seed=1)
    >>> sorted(rep), sorted(rep["ks"])
    (['brier', 'ks'], ['interval', 'interval_method', 'label', 'value'])
    """
    names = list(METRIC_NAMES) if names == "all" or names == ["all"] else check_metric_names(names)
    z = np.asarray(z, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64)
    out: dict[str, dict[str, Any]] = {}
    summed = [n for n in names if n in MERGEABLE and n not in _TESTS]
    if summed:  # exactly as bece report --metrics, one pass or not
        bins = posterior.stats.binning if posterior is not None else make_binning(p, 15, "uniform")
        sums = metric_sums(z, p, bins, n_boot=n_boot, seed=seed)
        draws = l2_ece_draws(posterior) if posterior is not None else None
        out.update(streamed_metrics(sums, summed, prob=prob, posterior_l2=draws))
    for name in names:
        if name in out:
            continue
        try:
            out[name] = _one(name, z, p, prob, n_boot, seed)
        except ValueError as exc:  # reported, not dropped: e.g. a slope with p = 1.0
            label = (_TESTS.get(name) or _ESTIMATES[name])[0]
            out[name] = {"label": label, "error": str(exc)}
    return {n: out[n] for n in names}


def _one(name: str, z: np.ndarray, p: np.ndarray, prob: float, n_boot: int,
         seed: int) -> dict[str, Any]:
    """One metric's entry of :func:`metric_report`."""
    if name in _TESTS:
        label, test = _TESTS[name]
        res = test(z, p)._asdict()
        return {"label": label, **{k: float(v) if isinstance(v, float) else v
                                   for k, v in res.items()}}
    label, fn = _ESTIMATES[name]
    iv = bootstrap_interval(fn, z, p, prob=prob, n_boot=n_boot, seed=seed)
    return {"label": label, "value": iv.estimate, "interval": [iv.low, iv.high],
            "interval_method": f"Poisson bootstrap ({n_boot} replicates)"}
