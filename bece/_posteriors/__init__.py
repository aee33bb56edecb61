"""Model objects: each posterior bece offers, with its options, NumPyro model,
statistics, fast path and cross-check (:class:`BinnedModel`,
:class:`SmoothModel`, :class:`SmoothTopLabelModel`, :class:`SmoothGroupModel`); :class:`MCMCSettings`;
:func:`cross_check`; :func:`resolve_model`, where ``model=`` strings become objects."""

from .._validation.settings import MCMCSettings
from .base import Model, NumPyroModel
from .binned import BinnedModel
from .crosscheck import cross_check
from .groups import SmoothGroupModel
from .regression import DirichletPITModel, SmoothPITModel
from .resolve import SHORTHANDS, resolve_model
from .smooth import SmoothModel, SmoothTopLabelModel

__all__ = [
    "SHORTHANDS",
    "BinnedModel",
    "DirichletPITModel",
    "MCMCSettings",
    "Model",
    "NumPyroModel",
    "SmoothGroupModel",
    "SmoothModel",
    "SmoothPITModel",
    "SmoothTopLabelModel",
    "cross_check",
    "resolve_model",
]
