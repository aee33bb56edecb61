"""Helpers every stage uses: argument checks, random generators, ArviZ on demand,
and the type aliases of the signatures (:mod:`bece._base.typing`)."""

from .arviz import load_arviz, quiet_arviz
from .checks import check_prob, positive_array, positive_int
from .memory import check_allocation
from .random import as_generator, sample_dirichlet

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
