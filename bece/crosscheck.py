r"""MCMC cross-check of the closed-form posterior.

:func:`cross_check` runs NUTS (NumPyro) on the *collapsed* binned model of
:mod:`bece.models` — O(M) per step whatever n is — and compares its draws of
the ECE, each bin's accuracy and each bin's mean confidence with draws of the
closed form (:func:`bece.posterior_ece`).

Comparison. For every quantity and each probability
:math:`p \in \{0.05, 0.25, 0.5, 0.75, 0.95\}`, take the closed form's
quantile :math:`\hat Q_c(p)` (from ``num_closed_form`` independent draws)
and ask what fraction of the NUTS draws lies below it. If both describe the
same posterior that fraction is :math:`p` up to Monte Carlo error:

.. math::

    z = \frac{\operatorname{dist}\big(p,\,[\hat F_{\text{NUTS}}(\hat Q_c - \epsilon),
                                      \hat F_{\text{NUTS}}(\hat Q_c + \epsilon)]\big)}
             {\sqrt{p(1-p)/\mathrm{ESS} + p(1-p)/N_c}}

with :math:`\mathrm{ESS}` the effective sample size of the indicator
:math:`[x \le \hat Q_c]` over the NUTS chains (``arviz.ess``),
:math:`N_c` the number of closed-form draws and :math:`\epsilon = 10^{-6}`
a resolution below which values in [0, 1] are not told apart. Working in
probability space keeps the test valid where a quantile is ill-determined:
the accuracy of an empty bin is Beta(1/(2M), 1/(2M)), U-shaped with half its
mass below 1e-6, and its median can sit anywhere in between. NUTS runs in
float64 within the call (``jax.enable_x64`` as a scoped context; the global
configuration is untouched), so results do not depend on ``jax_enable_x64``
and the collapsed log density keeps its precision at n = 10^7. The check
*agrees* when the chains converged (max R-hat < 1.01, bulk and tail ESS >=
400) and every :math:`z` is below the Bonferroni threshold
:math:`\Phi^{-1}(1 - a / (2k))` for :math:`k` comparisons and family-wise
false-alarm rate ``a`` (default 1e-4).

``model="conjugate"`` checks the closed form on the model for which it is
exact: a disagreement is a bug (or too few draws). ``model="literal"`` runs
NUTS on the seed's truncated-Normal model, for which the closed form is an
approximation; :attr:`CrossCheck.gap` then says how far apart they are.
"""

from __future__ import annotations

import functools
import logging
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .posterior import conjugate_posterior, positive_int, posterior_ece
from .result import BayesianECE, _arviz, _quiet_arviz
from .stats import CalibrationStats

__all__ = [
    "CrossCheck",
    "cross_check",
    "cross_check_stats",
    "cross_check_top_label",
    "collapsed_data",
    "mcmc_inference_data",
    "NutsRun",
    "nuts_model",
    "run_nuts",
]

QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
FLOAT32_RESOLUTION = 1e-6
MODELS = ("conjugate", "literal")


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
    inference_data : arviz.InferenceData
        All NUTS output (:func:`mcmc_inference_data`), with sample stats.
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
    table: Any
    gap: Any
    nuts: BayesianECE
    closed_form: BayesianECE
    inference_data: Any

    @property
    def closed_form_inference_data(self):
        """The closed-form draws as ``arviz.InferenceData`` (the NUTS ones are
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


def check_run_arguments(*, false_alarm: Any, seed: Any, **counts: Any) -> None:
    """ValueError naming the argument unless every count is a positive int,
    ``false_alarm`` is in (0, 1) and ``seed`` a non-negative int."""
    for name, value in counts.items():
        positive_int(value, name)
    if not 0 < false_alarm < 1:
        raise ValueError(f"false_alarm must be in (0, 1), got {false_alarm!r}")
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")


#: XLA options of :func:`run_nuts`'s program (this call only): LLVM at -O1
#: instead of -O3 compiled the M = 15 chain program in 5.4 s instead of 6.4 s
#: on a 2-core machine and ran it as fast (~1.2 s for 4 chains x 2,000 steps)
COMPILER_OPTIONS = {"xla_backend_optimization_level": 1}

#: NUTS fields recorded by every run, for :func:`mcmc_inference_data`
EXTRA_FIELDS = ("diverging", "num_steps", "accept_prob", "energy", "potential_energy",
                "adapt_state.step_size")


def mcmc_inference_data(mcmc: Any, coords: dict | None = None, dims: dict | None = None):
    """``arviz.InferenceData`` of a NUTS run from its stored draws.

    ``mcmc`` is a :class:`NutsRun` (what :func:`run_nuts` returns) or a
    ``numpyro.infer.MCMC`` run with ``extra_fields=EXTRA_FIELDS``.
    Equivalent to ``az.from_numpyro(mcmc, log_likelihood=False)`` for our
    collapsed models (they have no observed sites), without re-running the
    model: ``from_numpyro`` traces it again, which costs ~13 s of XLA
    compilation of eager operations on a 2-core machine. ``posterior`` holds
    every sampled and deterministic site (chain, draw, ...); ``sample_stats``
    uses ArviZ's names: ``diverging``, ``n_steps``, ``tree_depth``,
    ``acceptance_rate``, ``energy``, ``lp`` (minus the potential energy) and
    ``step_size``, from the run's ``extra_fields`` (:data:`EXTRA_FIELDS`).
    """
    az = _arviz()
    posterior = {k: np.asarray(v) for k, v in mcmc.get_samples(group_by_chain=True).items()}
    extra = {k: np.asarray(v) for k, v in mcmc.get_extra_fields(group_by_chain=True).items()}
    names = {"diverging": "diverging", "num_steps": "n_steps", "accept_prob": "acceptance_rate",
             "energy": "energy", "adapt_state.step_size": "step_size"}
    stats = {names[k]: v for k, v in extra.items() if k in names}
    if "potential_energy" in extra:
        stats["lp"] = -extra["potential_energy"]
    if "num_steps" in extra:
        stats["tree_depth"] = np.floor(np.log2(np.maximum(extra["num_steps"], 1))).astype(int) + 1
    with _quiet_arviz():
        idata = az.from_dict(posterior=posterior, sample_stats=stats, coords=coords, dims=dims)
    idata.posterior.attrs["inference_library"] = "numpyro"
    return idata


def collapsed_data(stats: CalibrationStats) -> dict[str, np.ndarray]:
    """Keyword data of the collapsed models: counts, per-bin mean and centred SS.

    Computed in float64 on the host; empty bins get their centre as mean and 0
    as sum of squares (they do not enter the likelihood).
    """
    n_m = stats.bin_counts
    center = 0.5 * (stats.edges[:-1] + stats.edges[1:])
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n_m > 0, stats.sum_p / n_m, center)
    ss = np.where(n_m > 0, np.maximum(stats.sum_p2 - stats.sum_p * mean, 0.0), 0.0)
    return {"counts": np.asarray(stats.counts), "mean_p": mean, "ss_p": ss}


def _log_total_scale(n: int, boosted: bool) -> float:
    """Scale :math:`s` of :math:`\\log T` in :class:`bece.models.DirichletGammaReparam`:
    :math:`1/\\sqrt{n}`, at least 0.01 when some cell is ``boosted`` (posterior
    concentration below 1: an empty cell at the default prior).

    :math:`1/\\sqrt n` is about the posterior scale of :math:`\\log q` in the
    cells with most data (see :mod:`bece.models.reparam`). The floor trades
    leapfrog steps for divergences, which come from the empty cells: at
    n = 10^6 with empty cells (seeds 1 to 3), s = 0.01 gave 28 to 31 steps
    per draw and 1 to 3 divergent transitions in 4,000, s = 0.001 gave 17 to
    23 steps and 6 to 10 divergences; without empty cells neither diverged
    (16 and 12 steps), and at n = 10^7 without empty cells s = 0.01 took 68
    steps per draw, 1/sqrt(n) 25.
    """
    s = 1.0 / np.sqrt(max(n, 1))
    return max(s, 0.01) if boosted else s


def nuts_model(stats: CalibrationStats, post: Any, model: str):
    """The collapsed ``model`` ("conjugate" or "literal") with the Dirichlet
    site reparameterised for NUTS (:class:`bece.models.DirichletGammaReparam`)."""
    from numpyro.handlers import reparam

    from .models import DirichletGammaReparam, conjugate_collapsed, literal_collapsed

    base = conjugate_collapsed if model == "conjugate" else literal_collapsed
    # boost the cells whose posterior concentration is below one (see models.reparam)
    boost = (post.concentration < 1.0).reshape(-1)
    scale = _log_total_scale(stats.n, bool(boost.any()))
    return reparam(base, config={"q": DirichletGammaReparam(boost=boost, log_total_scale=scale)})


@dataclass(frozen=True, repr=False, eq=False)
class NutsRun:
    """Draws of :func:`run_nuts`, with ``numpyro.infer.MCMC``'s accessors.

    Attributes
    ----------
    samples : dict of str to ndarray
        Every sampled site (constrained) and deterministic site, shape
        (chain, draw, ...): what ``MCMC.get_samples(group_by_chain=True)``
        returns.
    extra_fields : dict of str to ndarray
        The NUTS fields :data:`EXTRA_FIELDS`, shape (chain, draw).
    """

    samples: dict
    extra_fields: dict

    @staticmethod
    def _group(values: dict, group_by_chain: bool) -> dict:
        if group_by_chain:
            return dict(values)
        return {k: v.reshape((-1,) + v.shape[2:]) for k, v in values.items()}

    def get_samples(self, group_by_chain: bool = False) -> dict:
        """Draws per site; (chain * draw, ...) unless ``group_by_chain``."""
        return self._group(self.samples, group_by_chain)

    def get_extra_fields(self, group_by_chain: bool = False) -> dict:
        """NUTS fields per name; (chain * draw,) unless ``group_by_chain``."""
        return self._group(self.extra_fields, group_by_chain)

    def __repr__(self) -> str:
        shapes = {k: v.shape for k, v in self.samples.items()}
        return f"NutsRun(samples={shapes})"


def run_nuts(model: Any, *args: Any, num_chains: int, num_warmup: int, num_samples: int,
             seed: int, progress_bar: bool, target_accept_prob: float, **kwargs: Any) -> NutsRun:
    """NUTS on ``model(*args, **kwargs)``: seeded, recording :data:`EXTRA_FIELDS`.

    Each chain is NumPyro's ``NUTS`` kernel on ``model`` (``init``, then
    ``num_warmup + num_samples`` calls of ``sample``, then the kernel's
    ``postprocess_fn`` for the constrained and deterministic sites), as in
    ``numpyro.infer.MCMC`` with the same seed handling: chain c starts from
    ``jax.random.split(jax.random.PRNGKey(seed), num_chains)[c]`` (the key
    itself for one chain). Unlike ``MCMC``, one chain's whole run
    (initialisation, warm-up, sampling, post-processing) is a single
    compiled program, compiled once and run for every chain, two chains at a
    time on two cores. ``MCMC`` runs its initialisation and post-processing
    eagerly, compiling some 200 one-operation programs, and compiles its
    sampler loop vectorised over chains, which is slower to compile (batched
    ``while`` and ``cond``); on a 2-core machine that took 20 of the 27 s
    of a cold run at M = 15. The program is compiled with
    :data:`COMPILER_OPTIONS` (faster to compile, as fast to run). While XLA
    compiles it (on a worker thread, without the GIL), the calling thread
    imports ArviZ, which every caller needs next (~3 s cold). Arguments of
    the model are closed over as constants, as ``MCMC`` does. Returns a
    :class:`NutsRun`, whose ``get_samples`` and ``get_extra_fields`` are
    ``MCMC``'s.

    Runs in float64 inside this call only (``jax.enable_x64`` is a scoped
    context; the global configuration is untouched): the same draws whatever
    ``jax_enable_x64`` says, and at n = 10^7 float32 rounding of the
    collapsed models' c log q terms (~c 1e-7) would make the Hamiltonian
    noisy at O(1).
    """
    import os
    from concurrent.futures import ThreadPoolExecutor
    from operator import attrgetter

    import jax
    import jax.numpy as jnp
    from numpyro.infer import NUTS

    total = num_warmup + num_samples
    getters = {f: attrgetter(f) for f in EXTRA_FIELDS}
    bar = _progress(total, num_chains) if progress_bar else None

    def one_chain(rng_key, chain):
        kernel = NUTS(model, target_accept_prob=target_accept_prob)
        state = kernel.init(rng_key, num_warmup, model_args=args, model_kwargs=kwargs)

        def step(state, i):
            state = kernel.sample(state, args, kwargs)
            if bar is not None:
                bar.tick(i, chain)
            return state, (state.z, {f: get(state) for f, get in getters.items()})

        _, (z, extra) = jax.lax.scan(step, state, jnp.arange(total))
        z, extra = jax.tree.map(lambda x: x[num_warmup:], (z, extra))
        return jax.vmap(kernel.postprocess_fn(args, kwargs))(z), extra

    with jax.enable_x64(True):
        key = jax.random.PRNGKey(seed)
        keys = jax.random.split(key, num_chains) if num_chains > 1 else key[None]
        lowered = jax.jit(one_chain).lower(keys[0], 0)  # tracing holds the GIL: do it first

    def compile_chain():
        with jax.enable_x64(True):  # a thread-local context: enter it in each thread
            try:
                return lowered.compile(COMPILER_OPTIONS)
            except Exception:  # an XLA without this option; a real error recurs below
                return lowered.compile()

    def run(c):
        with jax.enable_x64(True):
            return jax.device_get(compiled(keys[c], c))

    workers = max(1, min(num_chains, os.cpu_count() or 1, 2))
    with ThreadPoolExecutor(workers) as pool:
        pending = pool.submit(compile_chain)
        # every caller needs ArviZ next: import it (~3 s cold) while XLA
        # compiles (~5 s, without the GIL) before waiting for the program
        _arviz()
        compiled = pending.result()
        chains = list(pool.map(run, range(num_chains)))
    if bar is not None:
        bar.close()
    stack = lambda *x: np.stack([np.asarray(v) for v in x])  # noqa: E731
    samples = jax.tree.map(stack, *[c[0] for c in chains])
    extra = jax.tree.map(stack, *[c[1] for c in chains])
    return NutsRun(samples=dict(samples), extra_fields=dict(extra))


class _progress:
    """tqdm bars (one per chain) advanced from inside the compiled loop."""

    def __init__(self, total: int, num_chains: int):
        from tqdm.auto import tqdm

        self.total = total
        self.every = max(1, total // 20)
        self.bars = [tqdm(total=total, position=c, desc=f"chain {c}") for c in range(num_chains)]

    def _update(self, i, chain):
        i, chain = int(i), int(chain)
        bar = self.bars[chain]
        bar.update(min(i + 1, self.total) - bar.n)

    def tick(self, i, chain):
        import jax

        due = ((i + 1) % self.every == 0) | (i + 1 == self.total)
        jax.lax.cond(due, lambda: jax.debug.callback(self._update, i, chain), lambda: None)

    def close(self):
        for bar in self.bars:
            bar.close()


def _nuts(stats, post, model, num_chains, num_warmup, num_samples, seed, progress_bar,
          target_accept_prob):
    return run_nuts(
        nuts_model(stats, post, model), stats.edges, post.alpha, post.sigma, post.tau,
        num_chains=num_chains, num_warmup=num_warmup, num_samples=num_samples, seed=seed,
        progress_bar=progress_bar, target_accept_prob=target_accept_prob,
        **collapsed_data(stats),
    )


def _compare_at_quantile(az, x: np.ndarray, ref: np.ndarray, prob: float):
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
    ess = float(az.ess(below, method="mean"))
    if not np.isfinite(ess) or ess <= 0:  # indicator constant in every draw
        ess = float(flat.size)
    sd = np.sqrt(prob * (1 - prob) * (1 / ess + 1 / ref.size))
    return q_c, float(np.quantile(flat, prob)), frac, ess, gap / sd, int((~valid).sum())


def cross_check_stats(
    stats: CalibrationStats,
    *,
    alpha: Any = None,
    sigma: Any = None,
    tau: Any = None,
    model: str = "conjugate",
    num_chains: int = 4,
    num_warmup: int = 1000,
    num_samples: int = 1000,
    seed: int = 0,
    num_closed_form: int = 20_000,
    closed_form: BayesianECE | None = None,
    false_alarm: float = 1e-4,
    progress_bar: bool = False,
    target_accept_prob: float = 0.9,
) -> CrossCheck:
    """:func:`cross_check` from statistics (e.g. merged chunks)."""
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}, got {model!r}")
    check_run_arguments(num_chains=num_chains, num_warmup=num_warmup, num_samples=num_samples,
                        num_closed_form=num_closed_form, false_alarm=false_alarm, seed=seed)
    if not isinstance(stats, CalibrationStats):
        raise ValueError(f"stats must be a CalibrationStats, got {type(stats).__name__}")
    if np.any(np.diff(stats.edges) <= 0):
        raise ValueError(
            "cross_check needs bins of positive width; these quantile edges coincide "
            "(many tied confidences): pass fewer bins or explicit edges"
        )
    post = conjugate_posterior(stats, alpha=alpha, sigma=sigma, tau=tau)
    if closed_form is None:
        closed_form = posterior_ece(
            stats, alpha=alpha, sigma=sigma, tau=tau, num_samples=num_closed_form,
            seed=np.random.default_rng([seed, 1]),
        )
    mcmc = _nuts(stats, post, model, num_chains, num_warmup, num_samples, seed,
                 progress_bar, target_accept_prob)
    samples = mcmc.get_samples(group_by_chain=True)
    az = _arviz()
    m = stats.n_bins
    idata = mcmc_inference_data(
        mcmc, coords={"bin": np.arange(m)},
        dims={"accuracy": ["bin"], "confidence": ["bin"], "weight": ["bin"], "mu": ["bin"]},
    )
    divergences = int(np.asarray(mcmc.get_extra_fields()["diverging"]).sum())

    def as64(name):
        return np.asarray(samples[name], dtype=np.float64)

    chains = {name: as64(name) for name in ("ece", "accuracy", "confidence", "weight")}
    flat = {k: v.reshape((-1,) + v.shape[2:]) for k, v in chains.items()}
    nuts_result = BayesianECE(
        draws=flat["ece"], accuracy=flat["accuracy"], confidence=flat["confidence"],
        weight=flat["weight"], plugin=closed_form.plugin, stats=stats,
        model="binned" if model == "conjugate" else "binned-literal", method="nuts",
        params=post,
    )
    closed_draws = {
        "ece": closed_form.draws,
        "accuracy": closed_form.accuracy,
        "confidence": closed_form.confidence,
    }
    table, rhat, ess_bulk, ess_tail, max_z, z_threshold, converged = _compare(
        az, {k: chains[k] for k in closed_draws}, closed_draws, num_chains, num_samples,
        false_alarm,
    )
    gap = _gap_table(nuts_result, closed_form)
    return CrossCheck(
        model=model, agree=bool(converged and max_z <= z_threshold), converged=converged,
        max_z=max_z, z_threshold=z_threshold, rhat_max=rhat, ess_bulk_min=ess_bulk,
        ess_tail_min=ess_tail, divergences=divergences, table=table, gap=gap, nuts=nuts_result,
        closed_form=closed_form, inference_data=idata,
    )


def _compare(az, chains: dict[str, np.ndarray], closed: dict[str, np.ndarray], num_chains: int,
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
    with _quiet_arviz(), warnings.catch_warnings(), np.errstate(invalid="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        for var, draws in chains.items():
            a = draws.reshape(num_chains, num_samples, -1)
            b = closed[var].reshape(-1, a.shape[-1])
            for j in range(a.shape[-1]):
                x, ref = a[..., j], b[:, j]
                ref = ref[~np.isnan(ref)]
                for prob in QUANTILES:
                    rows.append((var, -1 if draws.ndim == 2 else j, prob,
                                 *_compare_at_quantile(az, x, ref, prob)))
        flat = {k: v.reshape(num_chains, num_samples, -1)
                for k, v in {**chains, **(diagnose or {})}.items()}
        rhat = max(float(np.nanmax(az.rhat(v))) for v in _split_vars(flat))
        ess_bulk = min(float(np.nanmin(az.ess(v, method="bulk"))) for v in _split_vars(flat))
        ess_tail = min(float(np.nanmin(az.ess(v, method="tail"))) for v in _split_vars(flat))
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


def _gap_table(nuts: BayesianECE, closed: BayesianECE):
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


def cross_check(
    y_true: Any,
    y_prob: Any,
    *,
    y_pred: Any = None,
    n_bins: int | None = None,
    binning: Any = "uniform",
    alpha: Any = None,
    sigma: Any = None,
    tau: Any = None,
    model: str = "conjugate",
    num_chains: int = 4,
    num_warmup: int = 1000,
    num_samples: int = 1000,
    seed: int = 0,
    num_closed_form: int = 20_000,
    closed_form: BayesianECE | None = None,
    false_alarm: float = 1e-4,
    progress_bar: bool = False,
    target_accept_prob: float = 0.9,
    top_label: bool = False,
    average: str = "label",
) -> CrossCheck:
    """Cross-check the closed-form BECE posterior with NUTS on the same model.

    Parameters
    ----------
    y_true, y_prob, y_pred, n_bins, binning
        The data, as for :func:`bece.bayesian_ece`.
    alpha, sigma, tau
        The prior, as for :func:`bece.bayesian_ece` (defaults 1/(2M), w/sqrt(12)).
    model : {"conjugate", "literal", "smooth"}, default "conjugate"
        ``"conjugate"``: the model for which the closed form is exact.
        ``"literal"``: the seed's truncated-Normal model; the result's
        ``gap`` quantifies the closed form's approximation.
        ``"smooth"``: NUTS on the smooth calibration-curve model against
        its Laplace path (``bayesian_ece(..., model="smooth")``); see
        :func:`bece.smooth.cross_check_smooth` (``alpha``, ``sigma``,
        ``tau`` do not apply).
    num_chains, num_warmup, num_samples : int, default 4, 1000, 1000
        NUTS settings; one compiled program per chain, two chains at a time
        on two threads (:func:`run_nuts`; the global JAX configuration is
        never changed).
    seed : int, default 0
        Seeds NUTS (``jax.random.PRNGKey(seed)``) and the closed-form draws.
    num_closed_form : int, default 20_000
        Closed-form draws compared against (ignored with ``closed_form``).
    closed_form : BayesianECE, optional
        Compare against these draws instead (e.g. from another prior or
        approximation, to see that a wrong closed form is caught).
    false_alarm : float, default 1e-4
        Family-wise false-alarm rate of the quantile comparisons.
    progress_bar : bool, default False
        NumPyro's progress bar.
    target_accept_prob : float, default 0.9
        NUTS step-size adaptation target. Higher than NumPyro's 0.8: cells
        without data have long tails (see :mod:`bece.models.reparam`) where
        0.8 occasionally diverges and then under-samples the tail.
    top_label : bool, default False
        Check :func:`bece.bayesian_top_label_ece` instead (``y_prob`` of
        shape (n, K)); see :func:`cross_check_top_label`.
    average : {"label", "sample"}, default "label"
        The top-label average (only with ``top_label=True``).

    Returns
    -------
    CrossCheck
    """
    if top_label:
        if y_pred is not None:
            raise ValueError("y_pred does not apply with top_label=True (the argmax is used)")
        return cross_check_top_label(
            y_true, y_prob, n_bins=n_bins, binning=binning, average=average, alpha=alpha,
            sigma=sigma, tau=tau, model=model, num_chains=num_chains, num_warmup=num_warmup,
            num_samples=num_samples, seed=seed, num_closed_form=num_closed_form,
            closed_form=closed_form, false_alarm=false_alarm, progress_bar=progress_bar,
            target_accept_prob=target_accept_prob,
        )
    if model == "smooth":
        given = [k for k, v in (("alpha", alpha), ("sigma", sigma), ("tau", tau)) if v is not None]
        if given:
            raise ValueError(f"{', '.join(given)} do(es) not apply to model='smooth'")
        from .smooth import cross_check_smooth

        return cross_check_smooth(
            y_true, y_prob, y_pred=y_pred, n_bins=n_bins, binning=binning,
            num_chains=num_chains, num_warmup=num_warmup, num_samples=num_samples, seed=seed,
            num_closed_form=num_closed_form, closed_form=closed_form, false_alarm=false_alarm,
            progress_bar=progress_bar, target_accept_prob=target_accept_prob,
        )
    stats = CalibrationStats.from_arrays(y_true, y_prob, y_pred=y_pred, n_bins=n_bins, binning=binning)
    return cross_check_stats(
        stats, alpha=alpha, sigma=sigma, tau=tau, model=model, num_chains=num_chains,
        num_warmup=num_warmup, num_samples=num_samples, seed=seed,
        num_closed_form=num_closed_form, closed_form=closed_form, false_alarm=false_alarm,
        progress_bar=progress_bar, target_accept_prob=target_accept_prob,
    )


def cross_check_top_label(
    y_true: Any,
    y_prob: Any,
    *,
    n_bins: int | None = None,
    binning: Any = "uniform",
    average: str = "label",
    alpha: Any = None,
    sigma: Any = None,
    tau: Any = None,
    model: str = "conjugate",
    num_chains: int = 4,
    num_warmup: int = 1000,
    num_samples: int = 1000,
    seed: int = 0,
    num_closed_form: int = 20_000,
    closed_form: Any = None,
    false_alarm: float = 1e-4,
    progress_bar: bool = False,
    target_accept_prob: float = 0.9,
) -> CrossCheck:
    """:func:`cross_check` of the Bayesian top-label ECE (``top_label=True``).

    NUTS on :func:`bece.models.top_label_collapsed` (L·2·M Dirichlet cells,
    L·M bin means; O(L M) per step) against
    :func:`bece.posterior_top_label_ece`, compared on the top-label ECE,
    each label's ECE and each (label, bin)'s accuracy and mean confidence;
    the table's ``bin`` column is the flat index ``label * M + bin`` (label
    index in ``nuts.labels``). Meant for a handful of labels: the cost grows
    with L M. Arguments as :func:`cross_check`, plus ``average``.
    """
    from numpyro.handlers import reparam

    from .models import DirichletGammaReparam, top_label_collapsed
    from .result import BayesianTopLabelECE
    from .toplabel import posterior_top_label_ece, top_label_statistics

    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS} with top_label=True, got {model!r}")
    check_run_arguments(num_chains=num_chains, num_warmup=num_warmup, num_samples=num_samples,
                        num_closed_form=num_closed_form, false_alarm=false_alarm, seed=seed)
    labels, stats = top_label_statistics(y_true, y_prob, n_bins=n_bins, binning=binning)
    if closed_form is None:
        closed_form = posterior_top_label_ece(
            stats, labels, average=average, alpha=alpha, sigma=sigma, tau=tau,
            num_samples=num_closed_form, seed=np.random.default_rng([seed, 1]), keep_bins=True,
        )
    elif not isinstance(closed_form, BayesianTopLabelECE) or closed_form.label_accuracy is None:
        raise ValueError("closed_form must be a BayesianTopLabelECE with its per-bin draws kept")
    post = closed_form.params
    n_labels, m = len(stats), stats[0].n_bins
    concentration = post.concentration.reshape(2, n_labels, m).transpose(1, 0, 2)  # (L, 2, M)
    alpha_l = post.alpha.reshape(2, n_labels, m).transpose(1, 0, 2)
    data = [collapsed_data(s) for s in stats]
    pooled = sum(stats[1:], stats[0])
    base = functools.partial(top_label_collapsed, n_labels=n_labels, average=average,
                             literal=model == "literal")
    boost = (concentration < 1.0).reshape(-1)
    scale = _log_total_scale(pooled.n, bool(boost.any()))
    mcmc = run_nuts(
        reparam(base, config={"q": DirichletGammaReparam(boost=boost, log_total_scale=scale)}),
        pooled.edges, alpha_l, post.sigma.reshape(n_labels, m), post.tau.reshape(n_labels, m),
        num_chains=num_chains, num_warmup=num_warmup, num_samples=num_samples, seed=seed,
        progress_bar=progress_bar, target_accept_prob=target_accept_prob,
        counts=np.stack([d["counts"] for d in data]),
        mean_p=np.stack([d["mean_p"] for d in data]),
        ss_p=np.stack([d["ss_p"] for d in data]),
    )
    samples = mcmc.get_samples(group_by_chain=True)
    az = _arviz()
    dims = {k: ["label", "bin"] for k in ("accuracy", "confidence", "weight", "mu")}
    dims["label_ece"] = ["label"]
    idata = mcmc_inference_data(mcmc, coords={"label": labels, "bin": np.arange(m)}, dims=dims)
    divergences = int(np.asarray(mcmc.get_extra_fields()["diverging"]).sum())
    chains = {k: np.asarray(samples[k], dtype=np.float64)
              for k in ("ece", "label_ece", "accuracy", "confidence", "weight")}
    flat = {k: v.reshape((-1,) + v.shape[2:]) for k, v in chains.items()}
    w = flat["weight"]
    with np.errstate(invalid="ignore", divide="ignore"):
        pooled_acc = (w * flat["accuracy"]).sum(axis=1) / w.sum(axis=1)
        pooled_conf = (w * flat["confidence"]).sum(axis=1) / w.sum(axis=1)
    nuts_result = BayesianTopLabelECE(
        draws=flat["ece"], accuracy=pooled_acc, confidence=pooled_conf, weight=w.sum(axis=1),
        plugin=closed_form.plugin, stats=pooled,
        model="binned-top-label" if model == "conjugate" else "binned-top-label-literal",
        method="nuts", params=post, labels=labels, average=average, label_draws=flat["label_ece"],
        label_plugin=closed_form.label_plugin, label_stats=tuple(stats),
        label_accuracy=flat["accuracy"], label_confidence=flat["confidence"], label_weight=w,
    )
    closed = {"ece": closed_form.draws, "label_ece": closed_form.label_draws,
              "accuracy": closed_form.label_accuracy, "confidence": closed_form.label_confidence}
    table, rhat, ess_bulk, ess_tail, max_z, z_threshold, converged = _compare(
        az, {k: chains[k] for k in closed}, closed, num_chains, num_samples, false_alarm)
    gap = _gap_table(nuts_result, closed_form)
    return CrossCheck(
        model=model, agree=bool(converged and max_z <= z_threshold), converged=converged,
        max_z=max_z, z_threshold=z_threshold, rhat_max=rhat, ess_bulk_min=ess_bulk,
        ess_tail_min=ess_tail, divergences=divergences, table=table, gap=gap, nuts=nuts_result,
        closed_form=closed_form, inference_data=idata,
    )
