"""How far the conjugate form of the binned model is from the literal one.

Both forms have exact fast paths (:mod:`bece._binned.conjugate`,
:mod:`bece._binned.literal`), so the gap between them is measured directly
from the same statistics, at any n, without MCMC; the NUTS cross-check
(``cross_check(model="literal")``) is what validates the literal fast path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._binned.posterior import binned_posterior_ece
from .._stats.binning import make_binning
from .._stats.calibration_stats import CalibrationStats

__all__ = [
    "form_gap",
    "literal_gap",
]


def form_gap(stats: CalibrationStats, *, num_samples: int = 20_000, seed: int = 0,
             truth: float | None = None, **prior: Any) -> dict[str, Any]:
    """The conjugate and literal posteriors of the same statistics, side by side.

    Returns
    -------
    dict
        ``plugin``; for each form (``conjugate``, ``literal``) the posterior
        mean, sd and 90% interval of the ECE; ``gap_mean`` (literal minus
        conjugate) and ``gap_sd`` (in conjugate posterior sds);
        ``max_confidence_gap``, the largest difference between the forms'
        posterior mean confidence in a bin; and, with ``truth``, whether each
        form's 90% interval covers it.
    """
    out: dict[str, Any] = {"n": stats.n}
    res = {}
    for form in ("conjugate", "literal"):
        r = binned_posterior_ece(stats, num_samples=num_samples, seed=seed, model=form, **prior)
        res[form] = r
        lo, hi = r.interval(0.9)
        out[f"{form}_mean"], out[f"{form}_sd"] = r.mean, r.std
        out[f"{form}_interval"] = (lo, hi)
        if truth is not None:
            out[f"{form}_covers"] = bool(lo <= truth <= hi)
    out["plugin"] = res["conjugate"].plugin
    out["gap_mean"] = res["literal"].mean - res["conjugate"].mean
    out["gap_sd"] = out["gap_mean"] / res["conjugate"].std
    with np.errstate(invalid="ignore"):
        conf = {f: np.nanmean(r.confidence, axis=0) for f, r in res.items()}
    seen = stats.bin_counts > 0
    out["max_confidence_gap"] = float(np.max(np.abs(conf["literal"] - conf["conjugate"])[seen]))
    if truth is not None:
        out["truth"] = truth
    return out


def _uniform_power(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    p = rng.uniform(size=n)
    return (rng.uniform(size=n) < p**1.5).astype(np.int64), p


def literal_gap(
    ns: Sequence[int] = (100, 1000, 10_000, 100_000, 1_000_000),
    *,
    simulate: Callable[[int, np.random.Generator], tuple[np.ndarray, np.ndarray]] | None = None,
    n_bins: int = 15,
    num_samples: int = 20_000,
    seed: int = 0,
    **prior: Any,
) -> Any:  # pandas.DataFrame
    """The gap between the conjugate and the literal form as n grows.

    Parameters
    ----------
    ns : sequence of int
        Test-set sizes.
    simulate : callable, optional
        ``simulate(n, rng) -> (y_true, y_prob)`` of a binary classifier;
        default confidences ``U(0, 1)`` with ``P(y = 1 | p) = p**1.5``. For
        confidences piled at 0 and 1 pass e.g. Beta(0.3, 0.3) confidences,
        or resample a real model's outputs.
    n_bins : int, default 15
    num_samples : int, default 20_000
    seed : int, default 0
    **prior
        ``alpha``, ``sigma``, ``tau`` as for :func:`bece.bayesian_ece`.

    Returns
    -------
    pandas.DataFrame
        One row per n: :func:`form_gap`'s values.

    Examples
    --------
    >>> from bece.validation import literal_gap
    >>> gap = literal_gap([100, 10_000], num_samples=2000)
    >>> list(gap["n"])
    [100, 10000]
    >>> bool((gap["gap_sd"].abs() < 0.1).all())   # in conjugate posterior sds: negligible
    True
    """
    import pandas as pd

    simulate = _uniform_power if simulate is None else simulate
    rng = np.random.default_rng(seed)
    binning = make_binning(None, n_bins, "uniform")
    rows = []
    for n in ns:
        y, p = simulate(int(n), rng)
        stats = CalibrationStats.from_arrays(y, p, binning=binning)
        rows.append(form_gap(stats, num_samples=num_samples, seed=seed, **prior))
    return pd.DataFrame(rows)
