"""The binned BECE model: its closed-form (conjugate) posterior for binary and
top-label predictions, and the paired comparison of two models.

:mod:`~bece._binned.conjugate` is the maths (posterior parameters and exact
draws), :mod:`~bece._binned.posterior` the ECE posterior from statistics,
:mod:`~bece._binned.toplabel` its top-label form over (label, bin) cells and
:mod:`~bece._binned.compare` the joint posterior of two models' ECEs.
"""

from .conjugate import PRESETS, ConjugatePosterior, conjugate_posterior
from .posterior import binned_posterior_ece
from .toplabel import binned_posterior_top_label_ece

__all__ = [
    "binned_posterior_ece",
    "binned_posterior_top_label_ece",
    "conjugate_posterior",
    "ConjugatePosterior",
    "PRESETS",
]
