"""Running NUTS (NumPyro) for the cross-checks."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._base.arviz import from_dict, preload
from .._base.checks import positive_int
from .._base.jaxcompat import enable_x64

__all__ = [
    "check_run_arguments",
    "mcmc_inference_data",
    "NutsRun",
    "run_nuts",
]


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


def mcmc_inference_data(
    mcmc: Any, coords: dict[str, Any] | None = None, dims: dict[str, list[str]] | None = None
) -> Any:
    """ArviZ's container of a NUTS run from its stored draws: ``arviz.InferenceData``
    on ArviZ 0.2x, ``xarray.DataTree`` on 1.x (:func:`bece._base.arviz.from_dict`).

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
    posterior = {k: np.asarray(v) for k, v in mcmc.get_samples(group_by_chain=True).items()}
    extra = {k: np.asarray(v) for k, v in mcmc.get_extra_fields(group_by_chain=True).items()}
    names = {"diverging": "diverging", "num_steps": "n_steps", "accept_prob": "acceptance_rate",
             "energy": "energy", "adapt_state.step_size": "step_size"}
    stats = {names[k]: v for k, v in extra.items() if k in names}
    if "potential_energy" in extra:
        stats["lp"] = -extra["potential_energy"]
    if "num_steps" in extra:
        stats["tree_depth"] = np.floor(np.log2(np.maximum(extra["num_steps"], 1))).astype(int) + 1
    return from_dict({"posterior": posterior, "sample_stats": stats}, coords=coords, dims=dims,
                     attrs={"posterior": {"inference_library": "numpyro"}})


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

    samples: dict[str, np.ndarray]
    extra_fields: dict[str, np.ndarray]
    target_accept_prob: float = float("nan")

    @property
    def divergences(self) -> int:
        """Divergent transitions after warm-up, over all chains."""
        return int(np.asarray(self.extra_fields["diverging"]).sum())

    @staticmethod
    def _group(values: dict[str, np.ndarray], group_by_chain: bool) -> dict[str, np.ndarray]:
        if group_by_chain:
            return dict(values)
        return {k: v.reshape((-1,) + v.shape[2:]) for k, v in values.items()}

    def get_samples(self, group_by_chain: bool = False) -> dict[str, np.ndarray]:
        """Draws per site; (chain * draw, ...) unless ``group_by_chain``."""
        return self._group(self.samples, group_by_chain)

    def get_extra_fields(self, group_by_chain: bool = False) -> dict[str, np.ndarray]:
        """NUTS fields per name; (chain * draw,) unless ``group_by_chain``."""
        return self._group(self.extra_fields, group_by_chain)

    def __repr__(self) -> str:
        shapes = {k: v.shape for k, v in self.samples.items()}
        return f"NutsRun(samples={shapes})"


#: The adaptation targets of the one repeat of a run with divergent
#: transitions: the first above the run's own target.
RETRY_TARGET_ACCEPT = (0.95, 0.99, 0.999)


def retry_target(target_accept_prob: float) -> float | None:
    """The target of the repeat of a run at ``target_accept_prob`` with
    divergent transitions (None: no higher one)."""
    return next((t for t in RETRY_TARGET_ACCEPT if t > target_accept_prob), None)


#: Leapfrog steps per NUTS transition assumed by :func:`estimate_seconds`
#: (tree depth 5; the smooth model took 30 to 45 at n = 3,000).
STEPS_PER_DRAW = 31
#: Seconds to compile one chain's program, assumed by :func:`estimate_seconds`.
COMPILE_SECONDS = 6.0
#: Runs expected to take longer than this show NumPyro's progress bar by default.
PROGRESS_SECONDS = 20.0
#: Runs of at least this many transitions per chain (four times the pilot's)
#: are timed by a pilot chain before they start (:func:`pilot_seconds`);
#: shorter ones announce the first guess of :func:`estimate_seconds`.
PILOT_ABOVE = 500
#: The pilot chain (the run's first chain's seed): this many warm-up
#: transitions under NumPyro's schedule for that length (15 at the unit
#: mass matrix, 75 adapting it, 10 more of step size) ...
PILOT_WARMUP = 100
#: ... then this many at the adapted kernel; then both again, from its last
#: draw and a mass matrix of its adapted draws (:func:`pilot_seconds`).
PILOT_SAMPLES = 25
#: Transitions of the whole pilot.
PILOT_LENGTH = 2 * (PILOT_WARMUP + PILOT_SAMPLES)


def estimate_seconds(model: Callable[..., Any], args: tuple, kwargs: dict[str, Any], num_chains: int,
                     num_warmup: int, num_samples: int) -> float:
    """A first guess at the wall time of :func:`run_nuts`: a gradient of the
    model's log density timed here (in a compiled loop, so without Python's
    dispatch, in float64), times :data:`STEPS_PER_DRAW` per transition, for
    every chain, two at a time, plus :data:`COMPILE_SECONDS`. Announced for
    short runs only (fewer than :data:`PILOT_ABOVE` transitions per chain);
    longer ones are timed by a pilot chain (:func:`pilot_seconds`): the
    leapfrog steps per transition range from a few to several hundred (the
    hierarchical top-label model took 190 and 510 on two CIFAR-100
    networks' outputs, K = 100), which no single guess covers."""
    import time

    import jax
    from numpyro.infer.util import initialize_model

    with enable_x64():
        info = initialize_model(jax.random.PRNGKey(0), model, model_args=args, model_kwargs=kwargs)
        value_and_grad = jax.value_and_grad(info.potential_fn)

        def gradients(z, count):  # count gradients in a row, each on the last one's output
            def one(_, z):
                g = value_and_grad(z)[1]
                return jax.tree.map(lambda x, dx: x + 1e-30 * dx, z, g)
            return jax.lax.fori_loop(0, count, one, z)

        loop = jax.jit(gradients)
        z = info.param_info.z
        jax.block_until_ready(loop(z, 1))  # compiled: time what follows
        count, seconds = 1, 0.0
        while seconds < 0.05 and count < 10**6:
            count *= 4
            start = time.perf_counter()
            jax.block_until_ready(loop(z, count))
            seconds = time.perf_counter() - start
        per_grad = seconds / count
    return (COMPILE_SECONDS
            + _rounds(num_chains) * (num_warmup + num_samples) * STEPS_PER_DRAW * per_grad)


def pilot_seconds(steps: np.ndarray, seconds: float, num_chains: int, num_warmup: int,
                  num_samples: int) -> float:
    """Wall time of a run's chains predicted from its pilot chain.

    ``steps`` are the leapfrog steps of the pilot's :data:`PILOT_LENGTH`
    transitions and ``seconds`` the time they took, so one step costs
    ``seconds / sum(steps)``. The pilot has four parts:

    1. :data:`PILOT_WARMUP` warm-up transitions under NumPyro's schedule for
       that length (15 at the unit mass matrix, 75 adapting it, 10 more of
       step size), as the run's first transitions are, at a unit or barely
       adapted mass matrix;
    2. :data:`PILOT_SAMPLES` transitions at that adapted kernel;
    3. from part 2's last draw, :data:`PILOT_WARMUP` warm-up transitions
       again, starting from a diagonal mass matrix of part 2's draws'
       variances;
    4. :data:`PILOT_SAMPLES` transitions at that kernel.

    A chain's first ``min(num_warmup, PILOT_WARMUP)`` transitions take the
    mean of part 1; every later one, warm-up or sampling, the mean of parts
    3 and 4, a warm-up and draws from a start in the posterior, as the run's
    later transitions are (its windows, each from draws of the posterior,
    then its draws). Chains run two at a time.

    Parts 3 and 4 are there for posteriors whose scales are far from 1 and
    whose chain's way to them is long: part 1's window then learns the way,
    not the scales (at n = 10^6, part 2 took 511 to 1,023 steps per
    transition and the run's draws 31), and part 2 overestimated such runs
    seven times. Part 4 alone, at a mass matrix from part 3's 75-draw window,
    is still too rough (178 steps per transition at n = 10^6, where the run's
    later transitions averaged about 60); the draws of part 2 alone, or a
    step size tuned for 25 transitions only, gave too narrow a mass matrix or
    too long a step and underestimated hierarchical models up to eight times.
    Measured by benchmarks/nuts_estimate.py (docs/tables/nuts_estimate.md).
    """
    steps = np.asarray(steps, dtype=np.float64)
    warm = steps[:PILOT_WARMUP].mean()
    adapted = steps[PILOT_WARMUP + PILOT_SAMPLES:].mean()
    early = min(num_warmup, PILOT_WARMUP)
    per_chain = early * warm + (num_warmup - early + num_samples) * adapted
    return _rounds(num_chains) * per_chain * seconds / steps.sum()


def _diagonal_like(inverse_mass_matrix: Any, flat_draws: Any) -> Any:
    """A diagonal inverse mass matrix of the variances of ``flat_draws``
    (draws, dimension), in the structure of NumPyro's ``inverse_mass_matrix``
    (one block of every site, keyed by their names, a vector or, for
    ``dense_mass=True``, a matrix; a bare array in older NumPyro),
    shrunk as NumPyro (after Stan) shrinks a window's estimate: ``n/(n + 5)``
    times the variance plus ``1e-3 * 5/(n + 5)``. The variance here divides
    by n, where NumPyro's window divides by n - 1 (4% smaller at the
    pilot's 25 draws; the benchmark's numbers are this one's)."""
    import jax.numpy as jnp

    n = flat_draws.shape[0]
    variances = (n / (n + 5.0)) * flat_draws.var(axis=0) + 1e-3 * (5.0 / (n + 5.0))

    def like(block: Any) -> Any:
        return jnp.diag(variances) if jnp.ndim(block) == 2 else variances

    if isinstance(inverse_mass_matrix, dict):
        return {key: like(block) for key, block in inverse_mass_matrix.items()}
    return like(inverse_mass_matrix)


def _workers(num_chains: int) -> int:
    """Chains run at once: two, or fewer where there are fewer cores or chains."""
    import os

    return max(1, min(num_chains, os.cpu_count() or 1, 2))


def _rounds(num_chains: int) -> int:
    """Rounds of :func:`_workers` chains that run ``num_chains``."""
    return -(-num_chains // _workers(num_chains))


def run_nuts(model: Callable[..., Any], *args: Any, num_chains: int, num_warmup: int, num_samples: int,
             seed: int, progress_bar: bool | None, target_accept_prob: float,
             retry_divergent: bool = False, dense_mass: bool = False, **kwargs: Any) -> NutsRun:
    """NUTS on ``model(*args, **kwargs)``: seeded, recording :data:`EXTRA_FIELDS`.

    With ``progress_bar=None`` the run says on stderr how long it will take
    before it starts, and shows a progress bar if that is over
    :data:`PROGRESS_SECONDS`. A run of :data:`PILOT_ABOVE` transitions per
    chain or more is timed by a pilot chain (:data:`PILOT_LENGTH`
    transitions, compiled beside the run's own program on the second core;
    :func:`pilot_seconds`); a shorter one announces the
    first guess of :func:`estimate_seconds`. The pilot does not change the
    run's draws.

    With ``retry_divergent``, a run with divergent transitions after warm-up
    is repeated once with smaller steps, at ``target_accept_prob`` 0.95 (0.99
    for a run that was at 0.95 or more already, 0.999 from 0.99:
    :func:`retry_target`), and that run is returned, as the agreement rule of
    :mod:`bece._validation.agreement` asks. ``dense_mass`` adapts a dense mass
    matrix (NumPyro's ``NUTS(dense_mass=True)``).

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
    import sys
    import time

    announce = progress_bar is None
    pilot = False
    draws = f"NUTS: {num_chains} chains x {num_warmup} + {num_samples} draws"
    if announce:  # say how long it will take; a pilot chain and a bar for long runs
        pilot = num_warmup + num_samples >= PILOT_ABOVE
        if pilot:  # compiled in; opened if the pilot finds the run long
            progress_bar = True
        else:
            seconds = estimate_seconds(model, args, kwargs, num_chains, num_warmup, num_samples)
            progress_bar = seconds > PROGRESS_SECONDS
            print(f"{draws}, about {seconds:.0f} s", file=sys.stderr)
    bar = bool(progress_bar)
    start = time.perf_counter()
    run = _run_nuts(model, args, kwargs, num_chains, num_warmup, num_samples, seed, bar,
                    target_accept_prob, dense_mass, announcement=draws if pilot else None)
    retry = retry_target(target_accept_prob)
    if retry_divergent and run.divergences and retry is not None:
        if announce:
            print(f"NUTS: {run.divergences} divergent transition(s); once more at "
                  f"target_accept_prob {retry} (the first run took "
                  f"{time.perf_counter() - start:.0f} s; smaller steps take longer)", file=sys.stderr)
        run = _run_nuts(model, args, kwargs, num_chains, num_warmup, num_samples, seed, bar, retry,
                        dense_mass)
    return run


def _run_nuts(model: Callable[..., Any], args: tuple, kwargs: dict[str, Any], num_chains: int,
              num_warmup: int, num_samples: int, seed: int, progress_bar: bool,
              target_accept_prob: float, dense_mass: bool = False,
              announcement: str | None = None) -> NutsRun:
    """One run of :func:`run_nuts`; with ``announcement`` (its first words),
    a pilot chain times the run and the announcement, with that time, goes
    to stderr before the chains start."""
    import sys
    import time
    from concurrent.futures import ThreadPoolExecutor
    from operator import attrgetter

    import jax
    import jax.numpy as jnp
    from jax.flatten_util import ravel_pytree
    from numpyro.infer import NUTS

    total = num_warmup + num_samples
    getters = {f: attrgetter(f) for f in EXTRA_FIELDS}
    bar = _progress(total, num_chains) if progress_bar else None

    def kernel():
        return NUTS(model, target_accept_prob=target_accept_prob, dense_mass=dense_mass)

    def one_chain(rng_key, chain):
        nuts = kernel()
        state = nuts.init(rng_key, num_warmup, model_args=args, model_kwargs=kwargs)

        def step(state, i):
            state = nuts.sample(state, args, kwargs)
            if bar is not None:
                bar.tick(i, chain)
            return state, (state.z, {f: get(state) for f, get in getters.items()})

        _, (z, extra) = jax.lax.scan(step, state, jnp.arange(total))
        z, extra = jax.tree.map(lambda x: x[num_warmup:], (z, extra))
        return jax.vmap(nuts.postprocess_fn(args, kwargs))(z), extra

    def pilot_chain(rng_key):  # the leapfrog steps of each pilot transition
        nuts = kernel()
        state = nuts.init(rng_key, PILOT_WARMUP, model_args=args, model_kwargs=kwargs)

        def step(state, _):
            state = nuts.sample(state, args, kwargs)
            return state, (state.num_steps, ravel_pytree(state.z)[0])

        state, (steps, flat) = jax.lax.scan(step, state, None, length=PILOT_WARMUP + PILOT_SAMPLES)
        # warmed up again from its last draw, starting at a diagonal mass
        # matrix of its adapted draws' variances: the window now sees draws
        # of the posterior, not of the chain's way to it
        again = NUTS(model, target_accept_prob=target_accept_prob, dense_mass=dense_mass,
                     inverse_mass_matrix=_diagonal_like(state.adapt_state.inverse_mass_matrix,
                                                        flat[PILOT_WARMUP:]))
        state = again.init(jax.random.fold_in(rng_key, 1), PILOT_WARMUP, init_params=state.z,
                           model_args=args, model_kwargs=kwargs)

        def again_step(state, _):
            state = again.sample(state, args, kwargs)
            return state, state.num_steps

        more = jax.lax.scan(again_step, state, None, length=PILOT_WARMUP + PILOT_SAMPLES)[1]
        return jnp.concatenate([steps, more])

    with enable_x64():
        key = jax.random.PRNGKey(seed)
        keys = jax.random.split(key, num_chains) if num_chains > 1 else key[None]
        # tracing holds the GIL: do it first
        lowered = [jax.jit(one_chain).lower(keys[0], 0)]
        if announcement is not None:
            lowered.append(jax.jit(pilot_chain).lower(keys[0]))

    def compile_program(program):
        with enable_x64():  # a thread-local context: enter it in each thread
            try:
                return program.compile(COMPILER_OPTIONS)
            except Exception:  # an XLA without this option; a real error recurs below
                return program.compile()

    def time_pilot():
        program = compile_program(lowered[1])
        with enable_x64():
            start = time.perf_counter()
            steps = np.asarray(jax.device_get(program(keys[0])))
        return steps, time.perf_counter() - start

    def run(c):
        with enable_x64():
            return jax.device_get(compiled(keys[c], c))

    with ThreadPoolExecutor(_workers(num_chains)) as pool:
        pending = pool.submit(compile_program, lowered[0])
        timed = pool.submit(time_pilot) if announcement is not None else None
        # every caller needs ArviZ next: import it (~3 s cold) while XLA
        # compiles (~5 s, without the GIL) before waiting for the program
        preload()
        compiled = pending.result()
        if timed is not None:
            steps, took = timed.result()
            seconds = pilot_seconds(steps, took, num_chains, num_warmup, num_samples)
            print(f"{announcement}, about {seconds:.0f} s (timed by a pilot chain of "
                  f"{PILOT_LENGTH} transitions)", file=sys.stderr)
        if bar is not None and (timed is None or seconds > PROGRESS_SECONDS):
            bar.open()
        chains = list(pool.map(run, range(num_chains)))
    if bar is not None:
        bar.close()
    stack = lambda *x: np.stack([np.asarray(v) for v in x])  # noqa: E731
    samples = jax.tree.map(stack, *[c[0] for c in chains])
    extra = jax.tree.map(stack, *[c[1] for c in chains])
    return NutsRun(samples=dict(samples), extra_fields=dict(extra),
                   target_accept_prob=float(target_accept_prob))


class _progress:
    """tqdm bars (one per chain) advanced from inside the compiled loop;
    shown from :meth:`open`, after the run's announcement (never, for a
    run its pilot chain finds short)."""

    def __init__(self, total: int, num_chains: int):
        self.total, self.num_chains = total, num_chains
        self.every = max(1, total // 20)
        self.bars: list[Any] = []

    def open(self):
        from tqdm.auto import tqdm

        self.bars = [tqdm(total=self.total, position=c, desc=f"chain {c}")
                     for c in range(self.num_chains)]

    def _update(self, i, chain):
        if not self.bars:  # not opened: a short run
            return
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
