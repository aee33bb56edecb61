"""The one place where ``model=`` becomes a model object."""

from __future__ import annotations

import dataclasses
from typing import Any

from .base import Model
from .binned import BinnedModel
from .groups import SmoothGroupModel
from .regression import DirichletPITModel, SmoothPITModel
from .smooth import SmoothModel, SmoothTopLabelModel

__all__ = ["MODEL_CLASSES", "SHORTHANDS", "resolve_model"]

#: every model class, for the messages that name which one has an option
MODEL_CLASSES: tuple[type[Model], ...] = (SmoothModel, SmoothTopLabelModel, SmoothGroupModel,
                                          BinnedModel, SmoothPITModel, DirichletPITModel)

#: ``model=`` strings, per task: the default first
SHORTHANDS: dict[str, dict[str, Any]] = {
    "binary": {
        "smooth": SmoothModel,
        "binned": BinnedModel,
        "conjugate": lambda: BinnedModel(form="conjugate"),
        "literal": lambda: BinnedModel(form="literal"),
    },
    "paired": {
        "smooth": SmoothModel,
        "binned": BinnedModel,
        "conjugate": lambda: BinnedModel(form="conjugate"),
    },
    "test": {
        "smooth": SmoothModel,
    },
    "regression": {
        "smooth": SmoothPITModel,
        "dirichlet": DirichletPITModel,
    },
    "groups": {
        "smooth": SmoothGroupModel,
    },
    "top-label": {
        "smooth": SmoothTopLabelModel,
        "binned": BinnedModel,
        "conjugate": lambda: BinnedModel(form="conjugate"),
        "literal": lambda: BinnedModel(form="literal"),
    },
}


def _owners(option: str) -> str:
    have = [c.__name__ for c in MODEL_CLASSES
            if option in {f.name for f in dataclasses.fields(c)}]  # type: ignore[arg-type]
    return f"; {option} is an option of {' and '.join(have)}" if have else ""


def resolve_model(model: str | Model | None, task: str, **options: Any) -> Model:
    """The model object that ``model`` names for ``task``, with ``options`` set.

    Parameters
    ----------
    model : str, model object or None
        A shorthand of :data:`SHORTHANDS` (``"smooth"``, ``"binned"``,
        ``"conjugate"``, ``"literal"``), a model object, or None for the
        task's default (its first shorthand, ``"smooth"``).
    task : {"binary", "top-label", "groups", "paired", "test", "regression"}
        The posterior asked for (:func:`bece.bayesian_ece`,
        :func:`bece.bayesian_top_label_ece`, :func:`bece.compare`,
        :func:`bece.calibration_test` or
        :func:`bece.regression.bayesian_calibration_error`).
    **options
        Options given at the entry point (``n_bins=...``, ``alpha=...``);
        None means not given. They replace the model's own; an option the
        model does not have raises ``ValueError`` naming the models that do.
    """
    shorthands = SHORTHANDS[task]
    if model is None:
        model = next(iter(shorthands))
    if isinstance(model, str):
        if model not in shorthands:
            raise ValueError(f"model must be one of {tuple(shorthands)} or a model object, "
                             f"got {model!r}")
        obj = shorthands[model]()
    elif isinstance(model, Model):
        obj = model
    else:
        raise ValueError(f"model must be one of {tuple(shorthands)} or a model object "
                         f"(bece.SmoothModel, bece.BinnedModel, ...), got {type(model).__name__}")
    obj.check_task(task)
    given = {k: v for k, v in options.items() if v is not None}
    if not given:
        return obj
    unknown = [k for k in given if k not in obj.options]
    if unknown:
        names = ", ".join(obj.options)
        raise ValueError(f"{unknown[0]}: not an option of {type(obj).__name__} (its options: "
                         f"{names}){_owners(unknown[0])}")
    return obj.replace(**given)
