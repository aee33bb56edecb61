"""Summaries of posterior draws shared by every result type."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..base.arviz import load_arviz, quiet_arviz
from ..base.checks import check_prob

__all__ = [
    "DrawSummaries",
]


class DrawSummaries:
    """Summaries of a 1-D array of posterior draws, for result objects.

    A subclass names the array with ``_draws_attr`` (default ``"draws"``),
    provides ``to_inference_data()`` for :meth:`summary`, and may set
    ``_summary_vars``, the variables :meth:`summary` shows by default.
    """

    _draws_attr = "draws"
    _summary_vars: list[str] | None = None

    if TYPE_CHECKING:  # every subclass defines it

        def to_inference_data(self) -> Any: ...  # arviz.InferenceData

    @property
    def _summary_draws(self) -> np.ndarray:
        return getattr(self, self._draws_attr)

    @property
    def num_samples(self) -> int:
        return int(self._summary_draws.shape[0])

    @property
    def mean(self) -> float:
        """Posterior mean."""
        return float(np.mean(self._summary_draws))

    @property
    def std(self) -> float:
        """Posterior standard deviation."""
        return float(np.std(self._summary_draws, ddof=1))

    @property
    def median(self) -> float:
        return float(np.median(self._summary_draws))

    def interval(self, prob: float = 0.9) -> tuple[float, float]:
        """Equal-tailed credible interval: the (1-prob)/2 and (1+prob)/2 quantiles."""
        prob = check_prob(prob)
        lo, hi = np.quantile(self._summary_draws, [(1 - prob) / 2, (1 + prob) / 2])
        return float(lo), float(hi)

    def hdi(self, prob: float = 0.9) -> tuple[float, float]:
        """Highest-density interval of the draws (``arviz.hdi``)."""
        prob = check_prob(prob)
        lo, hi = load_arviz().hdi(self._summary_draws, hdi_prob=prob)
        return float(lo), float(hi)

    def summary(self, var_names: str | list[str] | None = None, **kwargs: Any) -> Any:
        """ArviZ summary table (``arviz.summary``) of :meth:`to_inference_data`.

        Parameters
        ----------
        var_names : str or list of str, optional
            Variables to include; default ``_summary_vars`` (None: all).
        **kwargs
            Passed to ``arviz.summary`` (default ``hdi_prob=0.9``; e.g.
            ``kind="stats"``).

        Returns
        -------
        pandas.DataFrame
        """
        az = load_arviz()
        kwargs.setdefault("hdi_prob", 0.9)
        if var_names is None:
            var_names = self._summary_vars
        with quiet_arviz():
            return az.summary(self.to_inference_data(), var_names=var_names, **kwargs)
