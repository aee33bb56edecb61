"""NumPyro models of calibration, importable as ``bece.models``.

They depend on numpyro and jax only; ``bece`` imports them lazily, when a
function that runs MCMC or simulates data is first called.
"""

from ._binned import (
    conjugate_collapsed,
    conjugate_model,
    literal_collapsed,
    literal_model,
)
from ._regression import pit_dirichlet_model, pit_model
from ._reparam import DirichletGammaReparam
from ._smooth import smooth_model
from ._temperature import temperature_model
from ._toplabel import top_label_collapsed, top_label_model
from ._toplabel_smooth import top_label_smooth_model

__all__ = [
    "DirichletGammaReparam",
    "conjugate_collapsed",
    "conjugate_model",
    "literal_collapsed",
    "literal_model",
    "pit_dirichlet_model",
    "pit_model",
    "smooth_model",
    "temperature_model",
    "top_label_collapsed",
    "top_label_model",
    "top_label_smooth_model",
]
