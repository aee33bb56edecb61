"""Summaries of posterior draws shared by every result type."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..base import arviz as _arviz
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

        def to_inference_data(self) -> Any: ...  # arviz.InferenceData or xarray.DataTree

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
        """Posterior standard deviation (NaN, quietly, for a single draw: the
        sample sd with ``ddof=1`` is undefined there)."""
        if self.num_samples < 2:
            return float("nan")
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
        """Highest-density interval of the draws (ArviZ's ``hdi``): the
        shortest interval between two sorted draws holding a ``prob`` share
        of them; the same on ArviZ 0.2x and 1.x."""
        prob = check_prob(prob)
        return _arviz.hdi(self._summary_draws, prob)

    def summary(
        self, var_names: str | list[str] | None = None, *, hdi_prob: float = 0.9, **kwargs: Any
    ) -> Any:
        """ArviZ summary table (ArviZ's ``summary``) of :meth:`to_inference_data`.

        Parameters
        ----------
        var_names : str or list of str, optional
            Variables to include; default ``_summary_vars`` (None: all).
        hdi_prob : float, default 0.9
            Probability of the highest-density interval columns (ArviZ 0.2x's
            ``hdi_prob``; ``ci_prob`` with ``ci_kind="hdi"`` on 1.x).
        **kwargs
            Passed to the installed ArviZ's ``summary`` (e.g.
            ``kind="stats"``, accepted by both lines).

        Returns
        -------
        pandas.DataFrame
            ArviZ's table: one row per scalar quantity (``ece``,
            ``accuracy[0]``, ...). Its columns and rounding are those of the
            installed ArviZ: ``hdi_5%``/``hdi_95%`` and numbers on 0.2x;
            ``hdi90_lb``/``hdi90_ub`` and, by default, text rounded to the
            Monte Carlo precision on 1.x (``round_to="none"`` for numbers).
        """
        if var_names is None:
            var_names = self._summary_vars
        return _arviz.summary(self.to_inference_data(), var_names=var_names, hdi_prob=hdi_prob, **kwargs)
