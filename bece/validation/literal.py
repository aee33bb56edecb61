"""How far the closed form is from the literal BECE model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..stats.binning import make_binning
from ..stats.calibration_stats import CalibrationStats

__all__ = [
    "literal_gap",
]


def literal_gap(
    ns: Sequence[int] = (30, 100, 1000, 10_000),
    sigma_factors: Sequence[float] = (1, 2, 4),
    *,
    n_bins: int = 5,
    power: float = 1.5,
    seed: int = 0,
    **cross_check_kwargs: Any,
) -> Any:  # pandas.DataFrame
    """How far the closed form is from the seed's literal model, as n and sigma vary.

    For each n, simulate confidences ``p ~ U(0, 1)`` with outcomes
    ``P(y = 1 | p) = p**power`` and, for each factor f, run
    ``cross_check(model="literal")`` with ``sigma = tau = f w / sqrt(12)``.

    Returns
    -------
    pandas.DataFrame
        One row per (n, sigma_factor): the closed-form and literal-model ECE
        posterior means and 90% intervals, their differences, the largest
        per-bin difference in mean confidence, and the cross-check's verdict.
    """
    import pandas as pd

    from .crosscheck import cross_check_stats

    rng = np.random.default_rng(seed)
    binning = make_binning(None, n_bins, "uniform")
    rows = []
    for n in ns:
        p = rng.uniform(size=n)
        y = (rng.uniform(size=n) < p**power).astype(np.int64)
        stats = CalibrationStats.from_arrays(y, p, binning=binning)
        for factor in sigma_factors:
            sig = factor * np.diff(stats.edges) / np.sqrt(12)
            cc = cross_check_stats(stats, model="literal", sigma=sig, tau=sig, seed=seed,
                                   **cross_check_kwargs)
            lo_c, hi_c = cc.closed_form.interval(0.9)
            lo_l, hi_l = cc.nuts.interval(0.9)
            conf_gap = cc.gap["confidence_gap"].to_numpy()[:n_bins]
            rows.append({
                "n": n, "sigma_factor": factor,
                "ece_closed": cc.closed_form.mean, "ece_literal": cc.nuts.mean,
                "gap_mean": cc.nuts.mean - cc.closed_form.mean,
                "interval_closed": (round(lo_c, 4), round(hi_c, 4)),
                "interval_literal": (round(lo_l, 4), round(hi_l, 4)),
                "max_confidence_gap": float(np.nanmax(np.abs(conf_gap))),
                "converged": cc.converged, "max_z": cc.max_z, "agree": cc.agree,
            })
    return pd.DataFrame(rows)
