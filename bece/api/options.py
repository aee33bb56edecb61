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
    "refuse_sample_weight",
    "smooth_options_unused",
]

MODELS = ("binned", *FORMS, "smooth")


def check_model(model: str) -> None:
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}, got {model!r}")


def refuse_sample_weight(sample_weight: Any) -> None:
    """The posteriors take no sample weights: a ValueError that says why."""
    if sample_weight is not None:
        raise ValueError(
            "sample_weight is not supported by the posterior: its models count predictions "
            "(each one Bernoulli outcome), and a weighted count has no such likelihood. The "
            "plug-in metrics of bece.metrics take sample_weight; for whole-number weights, "
            "repeat the rows (np.repeat)")


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
