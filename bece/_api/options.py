"""The refusal of sample weights, shared by the posterior entry points."""

from __future__ import annotations

from typing import Any

__all__ = ["refuse_sample_weight"]


def refuse_sample_weight(sample_weight: Any) -> None:
    """The posteriors take no sample weights: a ValueError that says why."""
    if sample_weight is not None:
        raise ValueError(
            "sample_weight is not supported by the posterior: its models count predictions "
            "(each one Bernoulli outcome), and a weighted count has no such likelihood. The "
            "plug-in metrics of bece.metrics take sample_weight; for whole-number weights, "
            "repeat the rows (np.repeat)")
