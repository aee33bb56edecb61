"""The models the entry points dispatch between, and the checks that an
option given belongs to the model chosen."""

from __future__ import annotations

from typing import Any

from ..binned.literal import FORMS

__all__ = [
    "MODELS",
    "TOP_LABEL_SMOOTH",
    "binned_options_unused",
    "check_model",
    "smooth_options_unused",
]

MODELS = ("binned", *FORMS, "smooth")


def check_model(model: str) -> None:
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}, got {model!r}")


def binned_options_unused(where: str = "bece.smooth.smooth_ece and bece.smooth.smooth_posterior_ece",
                           **options: Any) -> None:
    given = [k for k, v in options.items() if v is not None]
    if given:
        raise ValueError(
            f"{', '.join(given)} belong(s) to the binned model: pass model='binned' to use it "
            f"(the default, model='smooth', takes its options through {where})"
        )


def smooth_options_unused(model: str, **options: Any) -> None:
    given = [k for k, v in options.items() if v is not None]
    if given:
        raise ValueError(f"{', '.join(given)} belong(s) to model='smooth'; model={model!r} "
                         "has no posterior probability of calibration")


TOP_LABEL_SMOOTH = ("bece.smooth.toplabel.smooth_top_label_ece and "
                     "bece.smooth.toplabel.smooth_posterior_top_label_ece")
