"""Type aliases of the public signatures, defined once.

They are runtime objects (not strings), so ``typing.get_type_hints`` resolves
every annotation that uses them; ``X | Y`` works at runtime from Python 3.10.
Objects of lazily imported libraries (ArviZ ``InferenceData``, pandas
``DataFrame``, matplotlib ``Axes``/``Figure``, frozen scipy.stats
distributions, NumPyro models) are annotated ``Any``: naming their classes
would import the library with bece.
"""

from typing import TypeAlias

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "BinningSpec",
    "PriorParam",
    "Seed",
]

#: Randomness: a non-negative int seed, Python's or numpy's (the same int gives
#: the same draws), or a numpy Generator, used as is
#: (:func:`bece._base.random.as_generator`).
Seed: TypeAlias = int | np.integer | np.random.Generator

#: Bins: a rule name ("uniform", "quantile"/"equal-mass") or an array of
#: edges (:func:`bece._stats.binning.make_binning`, which also takes a
#: :class:`~bece._stats.binning.Binning`).
BinningSpec: TypeAlias = str | ArrayLike

#: A prior parameter (alpha, sigma, tau): a positive number or array, or None
#: for the default.
PriorParam: TypeAlias = ArrayLike | None
