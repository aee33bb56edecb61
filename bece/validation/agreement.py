"""Whether MCMC draws agree with a fast path's draws, within Monte Carlo error."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..base.arviz import ess as _ess
from ..base.arviz import quiet_arviz
from ..base.arviz import rhat as _rhat
from ..results.ece import BayesianECE

__all__ = [
    "compare_draws",
    "CrossCheck",
    "gap_table",
]

QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


FLOAT32_RESOLUTION = 1e-6


@dataclass(frozen=True, repr=False, eq=False)
class CrossCheck:
    """Result of :func:`cross_check`.

    Attributes
    ----------
    model : {"conjugate", "literal"}
        The model NUTS sampled.
    agree : bool
        ``converged`` and every z-score below ``z_threshold``.
    converged : bool
        max R-hat < 1.01 and min bulk/tail ESS >= 400.
    max_z, z_threshold : float
        Largest z-score of the comparison table, and the Bonferroni threshold.
    rhat_max, ess_bulk_min, ess_tail_min : float
        Diagnostics of the NUTS draws of the compared quantities.
    divergences : int
        Divergent transitions after warm-up.
    table : pandas.DataFrame
        One row per (variable, bin, quantile): the closed form's quantile
        ``closed_form``, the NUTS quantile ``nuts``, the fraction of NUTS
        draws below the closed form's quantile ``prob_nuts``, the ESS of
        that indicator ``ess_nuts``, the z-score ``z`` and ``nan_nuts``, the
        number of NUTS draws left out as NaN (an empty bin's accuracy when
        both its cells underflow).
    gap : pandas.DataFrame
        Per bin and for the ECE: posterior means under NUTS and the closed
        form and their difference (NUTS minus closed form).
    nuts : BayesianECE
        The NUTS draws in the library's result type (``method="nuts"``).
    closed_form : BayesianECE
        The closed-form draws compared against.
    inference_data : arviz.InferenceData or xarray.DataTree
        All NUTS output (:func:`mcmc_inference_data`), with sample stats, in
        the installed ArviZ's format (InferenceData on 0.2x, DataTree on 1.x).

    Examples
    --------
    >>> import numpy as np
    >>> from bece import cross_check
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = rng.uniform(size=500) < p
    >>> cc = cross_check(y, p, n_bins=4)
    >>> cc  # doctest: +ELLIPSIS
    CrossCheck(model='conjugate', agree=True, max_z=... (threshold ...), rhat_max=..., ess_min=..., ...)
    >>> cc.converged, bool(cc.max_z <= cc.z_threshold)
    (True, True)
    >>> cc.nuts.method, cc.closed_form.method, cc.nuts.draws.shape
    ('nuts', 'conjugate', (4000,))
    >>> sorted(set(cc.table.columns) & {"closed_form", "nuts", "z"})
    ['closed_form', 'nuts', 'z']
    >>> cc.inference_data.posterior["ece"].shape      # (chain, draw)
    (4, 1000)
    """

    model: str
    agree: bool
    converged: bool
    max_z: float
    z_threshold: float
    rhat_max: float
    ess_bulk_min: float
    ess_tail_min: float
    divergences: int
    table: Any  # pandas.DataFrame (pandas and ArviZ load when used)
    gap: Any  # pandas.DataFrame
    nuts: BayesianECE
    closed_form: BayesianECE
    inference_data: Any  # arviz.InferenceData (0.2x) or xarray.DataTree (1.x)

    @property
    def closed_form_inference_data(self) -> Any:  # arviz.InferenceData or xarray.DataTree
        """The closed-form draws in ArviZ's format (the NUTS ones are
        :attr:`inference_data`)."""
        return self.closed_form.to_inference_data()

    @property
    def ess_min(self) -> float:
        return min(self.ess_bulk_min, self.ess_tail_min)

    @property
    def ece_gap(self) -> dict[str, float]:
        """NUTS minus closed form: ECE posterior mean and 90% interval ends."""
        lo_n, hi_n = self.nuts.interval(0.9)
        lo_c, hi_c = self.closed_form.interval(0.9)
        return {
            "mean": self.nuts.mean - self.closed_form.mean,
            "interval_low": lo_n - lo_c,
            "interval_high": hi_n - hi_c,
        }

    def __repr__(self) -> str:
        g = self.ece_gap
        return (
            f"CrossCheck(model={self.model!r}, agree={self.agree}, max_z={self.max_z:.2f} "
            f"(threshold {self.z_threshold:.2f}), rhat_max={self.rhat_max:.4f}, "
            f"ess_min={self.ess_min:.0f}, divergences={self.divergences}, "
            f"ece_mean nuts={self.nuts.mean:.5f} closed={self.closed_form.mean:.5f} "
            f"(gap {g['mean']:+.2e}))"
        )


def _compare_at_quantile(x: np.ndarray, ref: np.ndarray, prob: float):
    """Compare NUTS draws ``x`` (chain, draw) with closed-form draws ``ref`` at ``prob``.

    Both cells of an empty bin can underflow to 0 and make its accuracy
    0/0 (in float32 about 0.1% of draws per empty bin at the default prior;
    rarer in float64); such draws are left out of that comparison and
    counted in the returned ``nan`` column.

    Returns (closed-form quantile, NUTS quantile, fraction of NUTS draws
    below the closed-form quantile, ESS of that indicator, z-score, number
    of NaN draws left out).
    """
    q_c = float(np.quantile(ref, prob))
    valid = ~np.isnan(x)
    flat = x[valid]
    lo = float(np.mean(flat < q_c - FLOAT32_RESOLUTION))
    hi = float(np.mean(flat <= q_c + FLOAT32_RESOLUTION))
    gap = max(0.0, lo - prob, prob - hi)
    below = (x <= q_c).astype(np.float64)
    frac = float(np.mean(below[valid]))
    below[~valid] = frac  # keep the chain structure for the ESS
    ess = _ess(below, method="mean")
    if not np.isfinite(ess) or ess <= 0:  # indicator constant in every draw
        ess = float(flat.size)
    sd = np.sqrt(prob * (1 - prob) * (1 / ess + 1 / ref.size))
    return q_c, float(np.quantile(flat, prob)), frac, ess, gap / sd, int((~valid).sum())


def compare_draws(chains: dict[str, np.ndarray], closed: dict[str, np.ndarray], num_chains: int,
                  num_samples: int, false_alarm: float, diagnose: dict[str, np.ndarray] | None = None):
    """Quantile comparison table and diagnostics of NUTS ``chains`` against ``closed`` draws.

    ``chains[v]`` has shape (chain, draw) or (chain, draw, ...) and
    ``closed[v]`` (S,) or (S, ...) with the same trailing shape; the
    trailing axes are flattened (column ``bin`` of the table is the flat
    index, -1 for scalars). ``diagnose`` adds chains (e.g. the model's
    parameters) to the R-hat and ESS diagnostics only. Returns (table,
    rhat_max, ess_bulk_min, ess_tail_min, max_z, z_threshold, converged).
    """
    import pandas as pd

    rows = []
    with quiet_arviz(), warnings.catch_warnings(), np.errstate(invalid="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        for var, draws in chains.items():
            a = draws.reshape(num_chains, num_samples, -1)
            b = closed[var].reshape(-1, a.shape[-1])
            for j in range(a.shape[-1]):
                x, ref = a[..., j], b[:, j]
                ref = ref[~np.isnan(ref)]
                for prob in QUANTILES:
                    rows.append((var, -1 if draws.ndim == 2 else j, prob,
                                 *_compare_at_quantile(x, ref, prob)))
        flat = {k: v.reshape(num_chains, num_samples, -1)
                for k, v in {**chains, **(diagnose or {})}.items()}
        rhat = max(_rhat(v) for v in _split_vars(flat))
        ess_bulk = min(_ess(v, method="bulk") for v in _split_vars(flat))
        ess_tail = min(_ess(v, method="tail") for v in _split_vars(flat))
    table = pd.DataFrame(
        rows, columns=["variable", "bin", "quantile", "closed_form", "nuts", "prob_nuts",
                       "ess_nuts", "z", "nan_nuts"]
    )
    k = len(table)
    from scipy import stats as sps  # here, not at import: scipy.stats costs ~1 s

    z_threshold = float(sps.norm.isf(false_alarm / (2 * k)))
    max_z = float(table["z"].max()) if k else 0.0
    converged = bool(rhat < 1.01 and min(ess_bulk, ess_tail) >= 400)
    return table, rhat, ess_bulk, ess_tail, max_z, z_threshold, converged


def _split_vars(chains: dict[str, np.ndarray]):
    """(chain, draw) arrays, one per scalar quantity (per bin for bin variables)."""
    for v in chains.values():
        if v.ndim == 2:
            yield v
        else:
            for j in range(v.shape[-1]):
                yield v[..., j]


def gap_table(nuts: BayesianECE, closed: BayesianECE) -> Any:  # pandas.DataFrame
    import pandas as pd

    m = nuts.stats.n_bins
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        rows = {
            "count": np.append(nuts.stats.bin_counts, nuts.stats.n),
            "confidence_nuts": np.append(nuts.confidence.mean(axis=0), np.nan),
            "confidence_closed_form": np.append(closed.confidence.mean(axis=0), np.nan),
            "accuracy_nuts": np.append(np.nanmean(nuts.accuracy, axis=0), np.nan),
            "accuracy_closed_form": np.append(np.nanmean(closed.accuracy, axis=0), np.nan),
            "ece_nuts": np.append(np.full(m, np.nan), nuts.mean),
            "ece_closed_form": np.append(np.full(m, np.nan), closed.mean),
        }
    frame = pd.DataFrame(rows, index=[*[f"bin {j}" for j in range(m)], "ece"])
    frame["confidence_gap"] = frame["confidence_nuts"] - frame["confidence_closed_form"]
    frame["ece_gap"] = frame["ece_nuts"] - frame["ece_closed_form"]
    return frame
