"""The settings of a cross-check's NUTS run, in one object."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from .agreement import FALSE_ALARM
from .nuts import check_run_arguments

__all__ = ["MCMCSettings"]


@dataclass(frozen=True)
class MCMCSettings:
    """How :func:`bece.cross_check` runs NUTS and judges it.

    The names are NumPyro's (``MCMC(NUTS(model, target_accept_prob=...),
    num_warmup=..., num_samples=..., num_chains=...)``); every cross-check
    takes this one object (``mcmc=``), or its fields as keywords.

    Parameters
    ----------
    num_chains, num_warmup, num_samples : int, default 4, 1000, 1000
        Chains, warm-up and kept draws per chain.
    seed : int, default 0
        Seeds NUTS (``jax.random.PRNGKey(seed)``) and the fast path's draws.
    target_accept_prob : float, optional
        NUTS step-size target; None: the model's own (0.9 binned, 0.99
        with a dense mass matrix for the smooth models). A run with
        divergent transitions is repeated once with smaller steps.
    progress_bar : bool, optional
        NumPyro's bar; None shows it when the printed time estimate
        exceeds 20 seconds.
    num_closed_form : int, default 20_000
        Fast-path draws compared with the NUTS draws.
    false_alarm : float, default 0.05
        Family-wise false-alarm rate of the agreement rule
        (:mod:`bece._validation.agreement`).

    Examples
    --------
    >>> from bece import MCMCSettings
    >>> MCMCSettings(num_chains=2, num_samples=500)
    MCMCSettings(num_chains=2, num_warmup=1000, num_samples=500, seed=0)
    >>> MCMCSettings(num_chains=0)
    Traceback (most recent call last):
    ...
    ValueError: num_chains must be a positive integer, got 0
    """

    num_chains: int = 4
    num_warmup: int = 1000
    num_samples: int = 1000
    seed: int = 0
    target_accept_prob: float | None = None
    progress_bar: bool | None = None
    num_closed_form: int = 20_000
    false_alarm: float = FALSE_ALARM

    def __post_init__(self) -> None:
        check_run_arguments(num_chains=self.num_chains, num_warmup=self.num_warmup,
                            num_samples=self.num_samples, num_closed_form=self.num_closed_form,
                            false_alarm=self.false_alarm, seed=self.seed)
        t = self.target_accept_prob
        if t is not None and not (isinstance(t, (int, float)) and 0 < t < 1):
            raise ValueError(f"target_accept_prob must be in (0, 1) or None, got {t!r}")
        if self.progress_bar not in (None, True, False):
            raise ValueError(f"progress_bar must be True, False or None, got {self.progress_bar!r}")

    @classmethod
    def resolve(cls, mcmc: MCMCSettings | None = None, **fields: Any) -> MCMCSettings:
        """``mcmc`` (default settings when None) with the given fields replaced."""
        if mcmc is None:
            mcmc = cls()
        if not isinstance(mcmc, cls):
            raise ValueError(f"mcmc must be an MCMCSettings, got {type(mcmc).__name__}")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(fields) - names)
        if unknown:
            raise ValueError(f"{', '.join(unknown)}: not MCMC settings (MCMCSettings takes "
                             f"{', '.join(sorted(names))})")
        return dataclasses.replace(mcmc, **fields) if fields else mcmc

    def as_kwargs(self) -> dict[str, Any]:
        """The fields as keywords."""
        return dataclasses.asdict(self)

    def __repr__(self) -> str:
        shown = [f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self)
                 if f.name in ("num_chains", "num_warmup", "num_samples", "seed")
                 or getattr(self, f.name) != f.default]
        return f"MCMCSettings({', '.join(shown)})"
