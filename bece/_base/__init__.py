"""Helpers every stage uses: argument checks, random generators, ArviZ on demand,
and the type aliases of the signatures (:mod:`bece._base.typing`).

Each name is imported from its module on first use (PEP 562), as in
:mod:`bece` itself: ``import bece`` reads :mod:`bece._base.version` through
this package and must not load NumPy on the way."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .arviz import load_arviz, quiet_arviz
    from .checks import check_prob, positive_array, positive_int
    from .memory import check_allocation
    from .random import as_generator, sample_dirichlet

#: Where each name is defined.
_WHERE = {
    "as_generator": ".random", "check_allocation": ".memory", "check_prob": ".checks",
    "load_arviz": ".arviz", "positive_array": ".checks", "positive_int": ".checks",
    "quiet_arviz": ".arviz", "sample_dirichlet": ".random",
}

__all__ = [
    "as_generator",
    "check_allocation",
    "check_prob",
    "load_arviz",
    "positive_array",
    "positive_int",
    "quiet_arviz",
    "sample_dirichlet",
]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        value = getattr(importlib.import_module(_WHERE[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
