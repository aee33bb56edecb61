r"""The agreement rule: when MCMC draws and a fast path describe the same posterior.

Every cross-check in bece is judged by one rule, in two parts.

**NUTS converged**: the largest R-hat is at most 1.01, the smallest bulk and
tail ESS at least 400 (over the compared quantities and the model's
parameters), and no transition diverged after warm-up. A run with
divergent transitions is repeated once at ``target_accept_prob`` 0.95
(:func:`bece._validation.nuts.run_nuts`, ``retry_divergent``); if some remain
the check is "not converged" and says how many.

**The reported quantities agree**: for each quantity users read (the ECE,
each bin's accuracy, the curve at fixed probe points, per-label ECEs, ...),
each of its 5%, 50% and 95% posterior quantiles differs between NUTS and
the fast path by at most

.. math::

    \max\big(z\,\mathrm{MCSE},\; \delta\,\mathrm{sd}\big), \qquad \delta = 0.25,

with sd the NUTS posterior sd of that quantity. :math:`z\,\mathrm{MCSE}` is
the Monte Carlo band of the NUTS quantile: the NUTS draws' quantiles at
:math:`p \pm z\,s_p` with :math:`s_p^2 = p(1-p)(1/\mathrm{ESS} + 1/N)`, the
Monte Carlo error of both sides in probability (ESS of the indicator
:math:`[x \le \hat q]` over the chains; :math:`N` the independent draws the
fast path's are worth: all S of them when independent, and
:math:`1/(1/\mathrm{ESS}_{\mathrm{IS}} + 1/S)` when they were resampled
with importance weights, as the smooth posteriors' are,
:func:`independent_draws`). That is ArviZ's quantile MCSE taken through the draws'
quantile function rather than linearised, so it widens where the density
thins (between the two modes of an empty bin's U-shaped accuracy the
median moves by 0.4 for a shift of 0.03 in probability). A shift of 0.25 sd
moves a 90% interval's coverage by about one point (for a Normal posterior,
0.90 becomes 0.89), so a fast path within it gives the same answer to a
user; an exact fast path at large n is within the Monte Carlo band. A
probability the fast path reports (the probability of exact calibration,
...) is compared the same way, with sd the sd of its event's indicator,
:math:`\sqrt{\bar\pi(1-\bar\pi)}` at the mean :math:`\bar\pi` of the two
estimates, and its MCSE.

:math:`z = \Phi^{-1}(1 - a/(2k))` for the :math:`k` comparisons of the run
and family-wise false-alarm rate :math:`a` (default 0.05; Bonferroni, so
at most :math:`a`). The false-alarm rate of the whole rule, convergence
included, is measured on the binned conjugate model, whose closed form is
exact (``benchmarks/crosscheck_agreement.py``; the validation page).

When the rule does not agree, :attr:`CrossCheck.reasons` names each
quantity and why.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._base.arviz import ess as _ess
from .._base.arviz import quiet_arviz
from .._base.arviz import rhat as _rhat
from .._results.ece import BayesianECE
from .._results.html import HTMLDisplay, histogram_svg

__all__ = [
    "Agreement",
    "compare_draws",
    "CrossCheck",
    "first_converged",
    "gap_table",
    "independent_draws",
]

#: The posterior quantiles compared.
QUANTILES = (0.05, 0.5, 0.95)
#: Tolerance in posterior sd (a shift of 0.25 sd moves a 90% interval's coverage by ~1 point).
DELTA = 0.25
#: Family-wise false-alarm rate of the comparisons.
FALSE_ALARM = 0.05
#: Convergence: the largest R-hat and the smallest bulk and tail ESS.
RHAT_MAX = 1.01
ESS_MIN = 400

#: Values in [0, 1] closer than this are not told apart (float32 NUTS output).
FLOAT32_RESOLUTION = 1e-6

_COLUMNS = ["variable", "bin", "quantile", "fast", "nuts", "diff", "mcse", "sd", "tolerance",
            "nan_nuts", "ratio"]


def _indicator_ess(x: np.ndarray, valid: np.ndarray, q: float) -> float:
    """ESS of :math:`[x \\le q]` over the chains of ``x`` (chain, draw); NaN
    draws get the mean so the chain structure is kept."""
    below = (x <= q).astype(np.float64)
    below[~valid] = float(np.mean(below[valid]))
    ess = _ess(below, method="mean")
    if not np.isfinite(ess) or ess <= 0:  # indicator constant in every draw
        ess = float(valid.sum())
    return ess


def independent_draws(post: Any, num_samples: int) -> float:
    """The independent draws that ``num_samples`` draws of a fast path are
    worth, for the rule's :math:`N`: ``num_samples``, or, for draws resampled
    with importance weights of effective sample size ``post.is_ess`` (the
    smooth posteriors' draws; the top-label posterior keeps its proposals,
    independent, where ``post.resampled`` is False),
    :math:`1/(1/\\mathrm{ESS}_{\\mathrm{IS}} + 1/S)`: the weights' error plus that
    of drawing S of them with replacement. At ESS 2,000 of S = 20,000 the
    draws are worth 1,818, not 20,000."""
    ess = float(getattr(post, "is_ess", np.nan))
    if not getattr(post, "resampled", True) or not np.isfinite(ess) or ess <= 0:
        return float(num_samples)
    return 1.0 / (1.0 / ess + 1.0 / num_samples)


def _quantile_row(x: np.ndarray, ref: np.ndarray, prob: float, z: float, delta: float,
                  n_ref: float | None = None) -> tuple:
    """The rule at ``prob`` for NUTS draws ``x`` (chain, draw) against the fast
    path's draws ``ref``, worth ``n_ref`` independent ones (None: all of
    them): (fast, nuts, diff, mcse, sd, tolerance, NaN count).

    The Monte Carlo band of the NUTS quantile is the NUTS draws' quantiles at
    :math:`p \\pm z\\,s_p`, :math:`s_p^2 = p(1-p)(1/\\mathrm{ESS} + 1/N)` (the
    error of both sides in probability, ESS of the indicator at the NUTS
    quantile, N = ``n_ref``): ArviZ's quantile MCSE taken through the draws' quantile
    function, so it widens where the density thins, as between the two
    modes of an empty bin's U-shaped accuracy, where a linearised MCSE would
    be far too small. The tolerance is the band's half on the fast path's
    side, or :math:`\\delta` sd if larger; ``mcse`` is the band's width over
    :math:`2z`. Both cells of an empty bin can underflow to 0 and make its
    accuracy 0/0 (in float32 about 0.1% of draws per empty bin at the
    default prior); such draws are left out and counted.
    """
    valid = ~np.isnan(x)
    flat = x[valid]
    sd = float(np.std(flat))
    q_f = float(np.quantile(ref, prob))
    q_n = float(np.quantile(flat, prob))
    n_ref = ref.size if n_ref is None else min(n_ref, ref.size)
    s_p = np.sqrt(prob * (1 - prob) * (1 / _indicator_ess(x, valid, q_n) + 1 / n_ref))
    lo, hi = np.quantile(flat, np.clip([prob - z * s_p, prob + z * s_p], 0.0, 1.0))
    diff = q_n - q_f
    if abs(diff) <= FLOAT32_RESOLUTION:
        diff = 0.0
    side = (hi - q_n) if diff < 0 else (q_n - lo)
    tolerance = max(float(side), delta * sd)
    return q_f, q_n, diff, float((hi - lo) / (2 * z)), sd, tolerance, int((~valid).sum())


@dataclass(frozen=True)
class Probability:
    """A probability both sides report, for :func:`compare_draws`:
    ``fast`` and ``nuts`` with their Monte Carlo standard errors."""

    fast: float
    nuts: float
    mcse_nuts: float
    mcse_fast: float = 0.0


@dataclass(frozen=True, repr=False, eq=False)
class Agreement:
    """What :func:`compare_draws` finds: the table, the diagnostics and the reasons.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per (variable, bin, quantile): the fast path's quantile
        ``fast``, NUTS's ``nuts``, their difference ``diff`` (NUTS minus
        fast), ``mcse`` (the Monte Carlo band's width over 2z), the NUTS
        posterior sd ``sd``, the ``tolerance`` (the band's half on the fast
        path's side, or delta sd if larger), ``nan_nuts`` (NUTS draws left
        out as NaN) and ``ratio``, the absolute difference over the tolerance (the row agrees at
        ratio <= 1). Probabilities have ``quantile`` NaN and tolerance
        max(z mcse, delta sd).
    rhat_max, ess_bulk_min, ess_tail_min : float
    z : float
        The multiplier of the MCSE, :math:`\\Phi^{-1}(1 - a/(2k))`.
    delta : float
    false_alarm : float
    """

    table: Any
    rhat_max: float
    ess_bulk_min: float
    ess_tail_min: float
    z: float
    delta: float
    false_alarm: float

    @property
    def max_ratio(self) -> float:
        return float(self.table["ratio"].max()) if len(self.table) else 0.0

    def reasons(self) -> list[str]:
        """Why the draws do not agree (empty when they do): convergence, then
        each quantity whose difference exceeds its tolerance, worst first."""
        out = []
        if not self.rhat_max <= RHAT_MAX:
            out.append(f"R-hat {self.rhat_max:.4f} > {RHAT_MAX}")
        ess = min(self.ess_bulk_min, self.ess_tail_min)
        if not ess >= ESS_MIN:
            out.append(f"ESS {ess:.0f} < {ESS_MIN} (bulk {self.ess_bulk_min:.0f}, tail "
                       f"{self.ess_tail_min:.0f}): more draws")
        bad = self.table[self.table["ratio"] > 1].sort_values("ratio", ascending=False)
        for row in bad.itertuples():
            where = "" if row.bin < 0 else f"[{row.bin}]"
            what = "" if np.isnan(row.quantile) else f" q{row.quantile:g}"
            out.append(f"{row.variable}{where}{what}: NUTS {row.nuts:.6g}, fast path {row.fast:.6g}, "
                       f"|diff| {abs(row.diff):.3g} > tolerance {row.tolerance:.3g} "
                       f"({row.ratio:.1f}x; {abs(row.diff) / row.sd if row.sd > 0 else np.inf:.2f} sd)")
        return out


def compare_draws(chains: dict[str, np.ndarray], fast: dict[str, np.ndarray], num_chains: int,
                  num_samples: int, false_alarm: float = FALSE_ALARM,
                  diagnose: dict[str, np.ndarray] | None = None,
                  probabilities: dict[str, Probability] | None = None,
                  delta: float = DELTA, fast_draws: float | None = None) -> Agreement:
    """The agreement rule's table and diagnostics for NUTS ``chains`` against ``fast`` draws.

    ``chains[v]`` has shape (chain, draw) or (chain, draw, ...) and
    ``fast[v]`` (S,) or (S, ...) with the same trailing shape; the trailing
    axes are flattened (column ``bin`` of the table is the flat index, -1
    for scalars). ``diagnose`` adds chains (the model's parameters) to the
    R-hat and ESS diagnostics only; ``probabilities`` adds reported
    probabilities (:class:`Probability`) to the comparison; ``fast_draws``
    is the number of independent draws the fast path's are worth
    (:func:`independent_draws`; None: all of them).
    """
    import pandas as pd
    from scipy import stats as sps  # here, not at import: scipy.stats costs ~1 s

    probabilities = probabilities or {}
    shaped = {var: draws.reshape(num_chains, num_samples, -1) for var, draws in chains.items()}
    k = len(QUANTILES) * sum(a.shape[-1] for a in shaped.values()) + len(probabilities)
    z = float(sps.norm.isf(false_alarm / (2 * max(k, 1))))
    rows = []
    with quiet_arviz(), warnings.catch_warnings(), np.errstate(invalid="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        for var, a in shaped.items():
            b = fast[var].reshape(-1, a.shape[-1])
            for j in range(a.shape[-1]):
                ref = b[:, j][~np.isnan(b[:, j])]
                for prob in QUANTILES:
                    rows.append((var, -1 if chains[var].ndim == 2 else j, prob,
                                 *_quantile_row(a[..., j], ref, prob, z, delta, fast_draws)))
        for name, p in probabilities.items():
            mid = (p.nuts + p.fast) / 2  # the indicator's sd at the two estimates' mean
            sd = float(np.sqrt(max(mid * (1 - mid), 0.0)))
            mcse = float(np.hypot(p.mcse_nuts, p.mcse_fast))
            rows.append((name, -1, np.nan, p.fast, p.nuts, p.nuts - p.fast, mcse, sd,
                         max(z * mcse, delta * sd), 0))
        flat = {k: v.reshape(num_chains, num_samples, -1)
                for k, v in {**chains, **(diagnose or {})}.items()}
        rhat = max(_rhat(v) for v in _split_vars(flat))
        ess_bulk = min(_ess(v, method="bulk") for v in _split_vars(flat))
        ess_tail = min(_ess(v, method="tail") for v in _split_vars(flat))
    table = pd.DataFrame(rows, columns=[c for c in _COLUMNS if c != "ratio"])
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.abs(table["diff"]) / table["tolerance"]
    table["ratio"] = np.where(table["diff"] == 0, 0.0, ratio)
    table = table[_COLUMNS]
    return Agreement(table=table, rhat_max=float(rhat), ess_bulk_min=float(ess_bulk),
                     ess_tail_min=float(ess_tail), z=z, delta=delta, false_alarm=false_alarm)


def _split_vars(chains: dict[str, np.ndarray]):
    """(chain, draw) arrays, one per scalar quantity (per bin for bin variables)."""
    for v in chains.values():
        if v.ndim == 2:
            yield v
        else:
            for j in range(v.shape[-1]):
                yield v[..., j]


@dataclass(frozen=True, repr=False, eq=False)
class CrossCheck(HTMLDisplay):
    """Result of :func:`bece.cross_check`: NUTS against the fast path under the agreement rule.

    Attributes
    ----------
    model : str
        The model NUTS sampled ("conjugate", "literal", "smooth", "smooth-top-label").
    agree : bool
        ``converged`` and every reported quantity within its tolerance.
    converged : bool
        R-hat <= 1.01, bulk and tail ESS >= 400 and no divergent transition
        after warm-up (after the retry at ``target_accept_prob`` 0.95).
    reasons : list of str
        Why the check does not agree, one line per failed condition or
        quantity (empty when it agrees).
    max_ratio : float
        The largest absolute difference over its tolerance in the table (agreement
        needs <= 1).
    z, delta, false_alarm : float
        The rule's MCSE multiplier, sd fraction and family-wise false-alarm rate.
    rhat_max, ess_bulk_min, ess_tail_min : float
        Diagnostics of the NUTS draws of the compared quantities and parameters.
    divergences : int
        Divergent transitions after warm-up, in the run kept.
    target_accept_prob : float
        The NUTS adaptation target of the run kept (0.95 after a retry).
    table : pandas.DataFrame
        The comparison, one row per (variable, bin, quantile): see
        :class:`Agreement`.
    gap : pandas.DataFrame or None
        Per bin and for the ECE: posterior means under NUTS and the fast
        path and their difference (NUTS minus fast path); None for the
        regression models, which have no bins.
    nuts : BayesianECE or BayesianCalibrationError
        The NUTS draws in the library's result type (``method="nuts"``).
    closed_form : BayesianECE or BayesianCalibrationError
        The fast path's draws compared against.
    inference_data : arviz.InferenceData or xarray.DataTree
        All NUTS output, with sample stats, in the installed ArviZ's format.
    evidence : dict
        For the smooth model: the log Bayes factor of exact calibration from
        the fast path and from bridge sampling on the NUTS draws, with its
        standard error (:mod:`bece._validation.bridge`); empty otherwise.
    parameterisation : str
        For the smooth models, the parameterisation of the run kept: the
        one NUTS tries first, from the Laplace fit ("centred" for the binary
        model: its coefficients partly centred; "scaled" for the PIT model,
        its tilt scaled by the data's information, and for the hierarchical
        top-label model, its coefficients scaled and its label scales
        sampled by their prior's probit), or "non-centred" (the
        model as written, run when the first did not converge). Empty for
        the other models, which have one.

    Examples
    --------
    >>> import numpy as np
    >>> from bece import cross_check
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = rng.uniform(size=500) < p
    >>> cc = cross_check(y, p, n_bins=4, model="conjugate")
    >>> cc  # doctest: +ELLIPSIS
    CrossCheck(model='conjugate', agree=True, max_ratio=... (agree <= 1), rhat_max=..., ess_min=..., ...)
    >>> cc.converged, cc.reasons
    (True, [])
    >>> cc.nuts.method, cc.closed_form.method, cc.nuts.draws.shape
    ('nuts', 'conjugate', (4000,))
    >>> sorted(set(cc.table.columns) & {"fast", "nuts", "tolerance"})
    ['fast', 'nuts', 'tolerance']
    >>> cc.inference_data.posterior["ece"].shape      # (chain, draw)
    (4, 1000)
    """

    model: str
    agree: bool
    converged: bool
    reasons: list[str]
    max_ratio: float
    z: float
    delta: float
    false_alarm: float
    rhat_max: float
    ess_bulk_min: float
    ess_tail_min: float
    divergences: int
    target_accept_prob: float
    table: Any  # pandas.DataFrame (pandas and ArviZ load when used)
    gap: Any  # pandas.DataFrame or None
    nuts: Any  # BayesianECE, or BayesianCalibrationError for the regression models
    closed_form: Any
    inference_data: Any  # arviz.InferenceData (0.2x) or xarray.DataTree (1.x)
    evidence: dict[str, float] = field(default_factory=dict)
    parameterisation: str = ""

    @classmethod
    def judge(cls, model: str, agreement: Agreement, run: Any, nuts: Any,
              closed_form: Any, inference_data: Any,
              evidence: dict[str, float] | None = None, parameterisation: str = "") -> CrossCheck:
        """The verdict of the agreement rule on ``agreement`` and NUTS ``run``
        (a :class:`~bece._validation.nuts.NutsRun`)."""
        reasons = []
        divergences = run.divergences
        if divergences:
            reasons.append(f"{divergences} divergent transition(s) after warm-up at "
                           f"target_accept_prob {run.target_accept_prob:g}")
        reasons += agreement.reasons()
        diag = agreement.rhat_max <= RHAT_MAX and min(agreement.ess_bulk_min,
                                                      agreement.ess_tail_min) >= ESS_MIN
        converged = bool(diag and divergences == 0)
        return cls(
            model=model, agree=bool(converged and agreement.max_ratio <= 1), converged=converged,
            reasons=reasons, max_ratio=agreement.max_ratio, z=agreement.z, delta=agreement.delta,
            false_alarm=agreement.false_alarm, rhat_max=agreement.rhat_max,
            ess_bulk_min=agreement.ess_bulk_min, ess_tail_min=agreement.ess_tail_min,
            divergences=divergences, target_accept_prob=run.target_accept_prob,
            table=agreement.table,
            gap=gap_table(nuts, closed_form) if isinstance(nuts, BayesianECE) else None, nuts=nuts,
            closed_form=closed_form, inference_data=inference_data, evidence=dict(evidence or {}),
            parameterisation=parameterisation,
        )

    @property
    def closed_form_inference_data(self) -> Any:  # arviz.InferenceData or xarray.DataTree
        """The fast path's draws in ArviZ's format (the NUTS ones are
        :attr:`inference_data`)."""
        return self.closed_form.to_inference_data()

    @property
    def ess_min(self) -> float:
        return min(self.ess_bulk_min, self.ess_tail_min)

    @property
    def worst(self) -> Any:  # pandas.Series
        """The table's row with the largest absolute difference over its tolerance."""
        return self.table.loc[self.table["ratio"].idxmax()]

    @property
    def ece_gap(self) -> dict[str, float]:
        """NUTS minus fast path: ECE posterior mean and 90% interval ends."""
        lo_n, hi_n = self.nuts.interval(0.9)
        lo_c, hi_c = self.closed_form.interval(0.9)
        return {
            "mean": self.nuts.mean - self.closed_form.mean,
            "interval_low": lo_n - lo_c,
            "interval_high": hi_n - hi_c,
        }

    def _html_diagram(self) -> str | None:
        return histogram_svg(self.table["ratio"].to_numpy(), label="each comparison's ratio "
                             "(agree at <= 1)", marks={"agreement limit": 1.0})

    def to_dict(self) -> dict[str, Any]:
        """Plain Python (JSON): the verdict (``agree``, ``converged``,
        ``reasons``), the rule (``z``, ``delta``, ``false_alarm``), the
        diagnostics (``max_ratio``, ``rhat_max``, ``ess_bulk_min``,
        ``ess_tail_min``: None where undefined, as R-hat of one chain;
        ``divergences``, ``target_accept_prob``, ``parameterisation``: None
        where the model has one), the
        ``evidence`` of exact calibration where the model has it, and the
        comparison ``table`` as one record per row (NaN as None)."""
        table = [{k: (None if isinstance(v, float) and v != v else
                      v.item() if isinstance(v, np.generic) else v)
                  for k, v in row.items()} for row in self.table.to_dict(orient="records")]
        return {
            "model": self.model, "agree": self.agree, "converged": self.converged,
            "reasons": list(self.reasons),
            "rule": {"z": self.z, "delta": self.delta, "false_alarm": self.false_alarm,
                     "rhat_max": RHAT_MAX, "ess_min": ESS_MIN},
            "max_ratio": self.max_ratio, "rhat_max": _number(self.rhat_max),
            "ess_bulk_min": _number(self.ess_bulk_min), "ess_tail_min": _number(self.ess_tail_min),
            "divergences": self.divergences, "target_accept_prob": self.target_accept_prob,
            "parameterisation": self.parameterisation or None,
            "evidence": {k: _number(v) if isinstance(v, float) else v
                         for k, v in self.evidence.items()}, "table": table,
        }

    def __repr__(self) -> str:
        g = self.ece_gap
        return (
            f"CrossCheck(model={self.model!r}, agree={self.agree}, max_ratio={self.max_ratio:.2f} "
            f"(agree <= 1), rhat_max={self.rhat_max:.4f}, "
            f"ess_min={self.ess_min:.0f}, divergences={self.divergences}, "
            f"ece_mean nuts={self.nuts.mean:.5f} fast={self.closed_form.mean:.5f} "
            f"(gap {g['mean']:+.2e}))"
        )

    def summary(self) -> Any:  # pandas.DataFrame
        """The agreement rule's table: one row per compared quantile of each
        quantity, NUTS against the fast path (``diff``, ``tolerance``,
        ``ratio``: within the rule when at most 1)."""
        return self.table.copy()

    def __str__(self) -> str:
        return self.text()

    def text(self) -> str:
        """The lines a person reads: the verdict, the rule, the diagnostics,
        the evidence of exact calibration and each reason it does not agree."""
        verdict = "agree" if self.agree else ("do not agree" if self.converged else "not converged")
        lines = [
            f"NUTS and the fast path ({self.model} model): {verdict}",
            f"  rule: each 5/50/95% quantile within max({self.z:.2f} MCSE, {self.delta:g} sd); "
            f"R-hat <= {RHAT_MAX}, ESS >= {ESS_MIN}, no divergence",
            f"  worst ratio {self.max_ratio:.2f} ({len(self.table)} comparisons); R-hat "
            f"{self.rhat_max:.4f}, ESS {self.ess_min:.0f}, divergences {self.divergences}"
            + (f"; {self.parameterisation} model" if self.parameterisation else ""),
        ]
        if self.evidence:
            e = self.evidence
            lines.append(f"  log Bayes factor of exact calibration: fast path {e['fast']:.3f}, "
                         f"bridge sampling on NUTS {e['nuts']:.3f} (se {e['se']:.3f})")
        lines += [f"  - {r}" for r in self.reasons]
        return "\n".join(lines)


def _number(x: float) -> float | None:
    """A diagnostic as JSON: None where it is undefined (R-hat of one chain: NaN)."""
    return None if x != x else float(x)


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


def first_converged(parameterisations: dict[str, dict[str, Any]],
                    run: Callable[[str, dict[str, Any]], CrossCheck], model: str,
                    progress_bar: bool | None) -> CrossCheck:
    """``run(name, options)`` for each parameterisation in turn (its name and
    the model's keywords that give it) until one NUTS run converges.

    The smooth models' cross-checks run their model first in the
    parameterisation the Laplace fit suggests and, when that run does not
    converge (after its own repeat at a higher ``target_accept_prob``), the
    model as written. The first run that converged is judged; the first run
    when none did. With ``progress_bar`` None (the announcements on stderr),
    each change is said there, naming ``model``.
    """
    first, previous = None, ""
    for name, options in parameterisations.items():
        if previous and progress_bar is None:
            print(f"NUTS: not converged on the {previous} {model}; once more on the {name} one",
                  file=sys.stderr)
        cc = run(name, options)
        if cc.converged:
            return cc
        first, previous = first or cc, name
    assert first is not None, "first_converged needs at least one parameterisation"
    return first
