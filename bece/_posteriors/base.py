"""What every model object has: options, a NumPyro model, statistics, a fast path, a cross-check.

A model object is a frozen dataclass of its options, checked once when it
is made (as scikit-learn's estimators hold their parameters, and NumPyro's
``NUTS(model, ...)`` its settings). Every entry point that takes ``model=``
takes such an object, or a string shorthand that :func:`resolve_model`
turns into one.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

__all__ = ["Model", "NumPyroModel"]


@dataclass(frozen=True)
class NumPyroModel:
    """A NumPyro model with the arguments a data set gives it.

    ``fn(*args, **kwargs)`` is the model conditioned on the data;
    ``observed`` names the keyword arguments that hold the outcomes (left
    out, the model samples them: its prior predictive). What the outcomes
    are counted over (a cell's number of predictions, ``trials``) stays.

    Attributes
    ----------
    fn : callable
        The model function (in :mod:`bece.models`).
    args : tuple
    kwargs : dict
    observed : tuple of str
    """

    fn: Any
    args: tuple
    kwargs: dict[str, Any]
    observed: tuple[str, ...]

    def prior_predictive(self, num_samples: int = 500, seed: int = 0) -> dict[str, np.ndarray]:
        """Draws of every site under the prior (``numpyro.infer.Predictive``), as float64 arrays."""
        import jax
        from numpyro.infer import Predictive

        kwargs = {k: v for k, v in self.kwargs.items() if k not in self.observed}
        draws = Predictive(self.fn, num_samples=num_samples)(jax.random.PRNGKey(seed), *self.args,
                                                              **kwargs)
        return {k: np.asarray(v) for k, v in draws.items()}

    def __repr__(self) -> str:
        return (f"NumPyroModel(fn=bece.models.{self.fn.__name__}, "
                f"data={', '.join(self.observed)})")


class Model:
    """Base of the model objects (subclasses are frozen dataclasses).

    Subclasses set ``shorthand`` (the ``model=`` string that makes their
    default) and ``tasks`` (``"binary"``: :func:`bece.bayesian_ece`;
    ``"top-label"``: :func:`bece.bayesian_top_label_ece`), and implement
    ``statistics``, ``posterior``, ``numpyro`` and ``cross_check``.
    """

    shorthand: ClassVar[str]
    tasks: ClassVar[tuple[str, ...]]
    compares: ClassVar[str]
    """What the model's cross-check compares, in words."""

    def replace(self, **options: Any) -> Model:
        """A copy with ``options`` changed (``ValueError`` naming any the model does not have)."""
        names = [f.name for f in dataclasses.fields(self)]  # type: ignore[arg-type]
        unknown = [k for k in options if k not in names]
        if unknown:
            raise ValueError(
                f"{', '.join(unknown)}: not an option of {type(self).__name__} (its options: "
                f"{', '.join(names)})")
        return dataclasses.replace(self, **options)  # type: ignore[type-var]

    @property
    def options(self) -> dict[str, Any]:
        """The options, as keywords of the constructor."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}  # type: ignore[arg-type]

    def _cross_check_predictions(self, y_true: Any, y_prob: Any, y_pred: Any, *, mcmc: Any,
                                 closed_form: Any, average: str, top_label: bool) -> Any:
        """The cross-check from predictions (default: from the model's statistics)."""
        if top_label:  # y_pred: the predicted labels, y_prob their confidences
            stats = self.label_statistics(y_true, y_prob, y_pred=y_pred)  # type: ignore[attr-defined]
        else:
            stats = self.statistics(y_true, y_prob, y_pred=y_pred)  # type: ignore[attr-defined]
        return self.cross_check(stats, mcmc=mcmc, closed_form=closed_form,  # type: ignore[attr-defined]
                                average=average)

    def _uses_only(self, task: str, options: tuple[str, ...]) -> None:
        """``ValueError`` naming any option, other than ``options``, set away
        from its default: ``task``'s engine does not take it."""
        others = [f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self)  # type: ignore[arg-type]
                  if f.name not in options and getattr(self, f.name) != f.default]
        if others:
            raise ValueError(f"the {task} of {type(self).__name__} takes its options "
                             f"{', '.join(options)}; {', '.join(others)} is not used there")

    def _check_spline(self, scales: tuple[str, ...]) -> None:
        """The smooth models' spline and scale options, checked once."""
        from .._base.checks import check_scale, positive_int

        if positive_int(getattr(self, "n_knots"), "n_knots") < 3:
            raise ValueError(f"n_knots must be an integer >= 3, got {getattr(self, 'n_knots')}: a "
                             "natural cubic spline with K knots has K - 2 non-linear functions")
        for name in scales:
            if getattr(self, name) is not None:
                check_scale(getattr(self, name), name)

    def check_task(self, task: str) -> None:
        if task not in self.tasks:
            raise ValueError(f"{type(self).__name__} has no {task} posterior (its tasks: "
                             f"{', '.join(self.tasks)})")

