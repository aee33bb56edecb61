"""Summaries of posterior draws shared by every result type."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .._base import arviz as _arviz
from .._base.checks import check_prob

__all__ = [
    "DrawSummaries",
    "draws_table",
    "numbers_table",
]


def numbers_table(rows: dict[str, dict[str, Any]]) -> Any:  # pandas.DataFrame
    """The ``summary()`` of a result without draws: one row per named
    quantity (or per result), one column per number, as ``to_dict()`` gives
    them; tables of several results concatenate (``pandas.concat``)."""
    import pandas as pd

    return pd.DataFrame.from_dict(rows, orient="index")


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

    def upper_bound(self, prob: float = 0.9) -> float:
        """One-sided credible bound: the value the quantity stays at or below
        with posterior probability ``prob`` (the ``prob`` quantile of the
        draws). For an ECE that can be exactly 0 it answers "how large a
        miscalibration do the data still allow?"."""
        prob = check_prob(prob)
        return float(np.quantile(self._summary_draws, prob))

    def hdi(self, prob: float = 0.9) -> tuple[float, float]:
        """Highest-density interval of the draws (ArviZ's ``hdi``): the
        shortest interval between two sorted draws holding a ``prob`` share
        of them; the same on ArviZ 0.2x and 1.x."""
        prob = check_prob(prob)
        return _arviz.hdi(self._summary_draws, prob)

    def summary(
        self, var_names: str | list[str] | None = None, *, hdi_prob: float = 0.9, **kwargs: Any
    ) -> Any:
        """Summary table of the posterior draws (a pandas DataFrame).

        The draws are independent (one chain), so the table has what means
        something for them: ``mean``, ``sd``, the ``hdi_prob`` highest-density
        interval (``hdi_5%``, ``hdi_95%`` for 0.9, as ArviZ 0.2x names them),
        ``mcse_mean`` (:math:`\\mathrm{sd}/\\sqrt{S}`) and ``ess`` (S, the
        number of draws); no R-hat, which compares chains of MCMC.

        Parameters
        ----------
        var_names : str or list of str, optional
            Variables of :meth:`to_inference_data`'s ``posterior``. Default:
            the headline quantities (``_summary_vars``: the ECE; a comparison's
            two ECEs and their difference); ``"all"``: every variable (per-bin
            and per-label draws too, one row per scalar).
        hdi_prob : float, default 0.9
            Probability of the highest-density interval.
        **kwargs
            Given any, the table is the installed ArviZ's ``summary`` of
            :meth:`to_inference_data` instead, with these options (e.g.
            ``kind="stats"``; its columns and rounding are ArviZ's:
            ``hdi_5%``/``hdi_95%`` on 0.2x, ``hdi90_lb``/``hdi90_ub`` and text
            on 1.x unless ``round_to="none"``).

        Returns
        -------
        pandas.DataFrame
            One row per scalar quantity (``ece``, ``accuracy[0]``, ...; rows
            of a labelled dimension are named by its coordinate values).
        """
        if isinstance(hdi_prob, (bool, np.bool_)) or not isinstance(
                hdi_prob, (int, float, np.floating)) or not 0.0 < float(hdi_prob) < 1.0:
            raise ValueError(f"hdi_prob must be a number in (0, 1), got {hdi_prob!r}")
        if var_names is None:
            var_names = self._summary_vars
        elif var_names == "all":
            var_names = None
        data = self.to_inference_data()
        if kwargs:
            return _arviz.summary(data, var_names=var_names, hdi_prob=hdi_prob, **kwargs)
        return draws_table(data["posterior"], var_names, float(hdi_prob))


def _hdi(x: np.ndarray, prob: float) -> tuple[float, float]:
    """The shortest interval between sorted draws i and i + floor(prob * S)
    (ArviZ's ``hdi`` of one variable); NaN when a draw is NaN."""
    if np.isnan(x).any():
        return float("nan"), float("nan")
    s = np.sort(x)
    k = int(np.floor(prob * s.size))
    if k >= s.size:
        return float(s[0]), float(s[-1])
    i = int(np.argmin(s[k:] - s[: s.size - k]))
    return float(s[i]), float(s[i + k])


def draws_table(posterior: Any, var_names: str | list[str] | None, prob: float) -> Any:
    """The summary table of independent draws stored as one chain
    (:meth:`DrawSummaries.summary`): a DataFrame with ``mean``, ``sd``, the
    HDI, ``mcse_mean`` and ``ess`` per scalar quantity."""
    import pandas as pd

    names = list(posterior.data_vars) if var_names is None else (
        [var_names] if isinstance(var_names, str) else list(var_names))
    missing = [v for v in names if v not in posterior.data_vars]
    if missing:
        raise ValueError(f"var_names: no variable(s) {missing} in the posterior "
                         f"(it has {list(posterior.data_vars)}; or 'all')")
    alpha = 1.0 - prob
    cols = ["mean", "sd", f"hdi_{100 * alpha / 2:g}%", f"hdi_{100 * (1 - alpha / 2):g}%",
            "mcse_mean", "ess"]
    rows, index = [], []
    for name in names:
        var = posterior[name]
        dims = [d for d in var.dims if d not in ("chain", "draw")]
        values = np.asarray(var.transpose("chain", "draw", *dims).values, dtype=np.float64)
        flat = values.reshape(values.shape[0] * values.shape[1], -1)
        coords = [np.asarray(var[d].values) for d in dims]
        for j in range(flat.shape[1]):
            x = flat[:, j]
            sd = float(np.std(x, ddof=1)) if x.size > 1 else float("nan")
            lo, hi = _hdi(x, prob)
            rows.append([float(np.mean(x)), sd, lo, hi, sd / np.sqrt(x.size), x.size])
            if dims:
                at = np.unravel_index(j, values.shape[2:])
                index.append(f"{name}[{', '.join(str(c[i]) for c, i in zip(coords, at))}]")
            else:
                index.append(name)
    table = pd.DataFrame(rows, index=index, columns=cols)
    table["ess"] = table["ess"].astype(np.int64)
    return table
