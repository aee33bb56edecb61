"""JAX across the versions bece admits (``jax>=0.4.26`` to the newest).

The scoped float64 context is ``jax.enable_x64`` from JAX 0.8 on and
``jax.experimental.enable_x64`` before (removed in 0.9); both are
thread-local and leave the global configuration untouched.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "enable_x64",
]


def enable_x64(new_val: bool = True) -> Any:  # a context manager
    """``with enable_x64():`` runs JAX in float64 inside the block only."""
    import importlib

    import jax

    scoped: Any = getattr(jax, "enable_x64", None)
    if scoped is None:  # JAX < 0.8
        scoped = importlib.import_module("jax.experimental").enable_x64
    return scoped(new_val)
