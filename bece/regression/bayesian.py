"""Posterior over a regression forecaster's calibration curve and cal score.

Model. Levels :math:`0 < p_1 < \\dots < p_J < 1` cut [0, 1] into the J + 1
cells :math:`[0, p_1], (p_1, p_2], \\dots, (p_J, 1]`. The PIT values
:math:`u_1..u_T` of a test set are i.i.d. draws from the forecaster's PIT
distribution; their cell counts :math:`c_k` (int64) are multinomial with cell
probabilities :math:`\\pi`, and

.. math::

    \\pi \\sim \\mathrm{Dirichlet}(\\alpha), \\qquad
    \\pi \\mid c \\sim \\mathrm{Dirichlet}(\\alpha + c), \\qquad
    C_j = \\sum_{k < j} \\pi_k = P(u \\le p_j),

so each draw of :math:`\\pi` gives a draw of the population calibration curve
:math:`C_j` and of the population score

.. math::

    \\mathrm{cal} = \\sum_{j=1}^{J} w_j (p_j - C_j)^2 .

Default prior :math:`\\alpha_k = a (p_{k+1} - p_k)` with :math:`a = 1`
(:math:`p_0 = 0, p_{J+1} = 1`): the Dirichlet process with total mass
:math:`a` and the uniform distribution as base, seen on the grid. Its prior
mean is the diagonal (calibration), its total weight is one observation, and
by the aggregation property :math:`C_j \\sim \\mathrm{Beta}(a p_j + N_j,\\,
a(1 - p_j) + T - N_j)` a posteriori with :math:`N_j = |\\{t: u_t \\le p_j\\}|`,
whatever other levels the grid holds: refining the grid does not change the
posterior at a level.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..base.arviz import from_dict
from ..base.checks import check_prob, positive_int
from ..base.random import as_generator, sample_dirichlet
from ..base.typing import Seed
from ..results.summaries import DrawSummaries
from .forecast import check_levels, check_pit, real_array
from .metrics import DEFAULT_LEVELS, count_weights, observed_frequency

__all__ = [
    "bayesian_calibration_error",
    "BayesianCalibrationError",
]


@dataclass(frozen=True, repr=False, eq=False)
class BayesianCalibrationError(DrawSummaries):
    """Posterior draws of a regression forecaster's calibration curve and cal score.

    Attributes
    ----------
    draws : ndarray of shape (S,)
        Posterior draws of the population cal score
        :math:`\\sum_j w_j (p_j - C_j)^2`.
    curve : ndarray of shape (S, J)
        Posterior draws of :math:`C_j = P(u \\le p_j)`.
    levels : ndarray of shape (J,)
        The levels :math:`p_j`.
    observed : ndarray of shape (J,)
        Empirical :math:`\\hat p_j = N_j / T`.
    plugin : float
        :func:`~bece.regression.calibration_error` of the data, same levels
        and weights.
    n : int
        Number of PIT values T.
    counts : ndarray of shape (J + 1,), int64
        PIT histogram over the cells :math:`[0, p_1], (p_1, p_2], \\dots, (p_J, 1]`.
    alpha : ndarray of shape (J + 1,)
        Dirichlet prior concentration of the cells.
    weights : None, "count" or ndarray of shape (J,)
        The weighting of the score (see :func:`bayesian_calibration_error`).
    """

    draws: np.ndarray
    curve: np.ndarray
    levels: np.ndarray
    observed: np.ndarray
    plugin: float
    n: int
    counts: np.ndarray
    alpha: np.ndarray
    weights: str | np.ndarray | None = None

    def curve_interval(self, prob: float = 0.9) -> tuple[np.ndarray, np.ndarray]:
        """Pointwise equal-tailed credible band of the curve :math:`C_j`.

        Returns
        -------
        lo, hi : ndarray of shape (J,)
        """
        prob = check_prob(prob)
        lo, hi = np.quantile(self.curve, [(1 - prob) / 2, (1 + prob) / 2], axis=0)
        return lo, hi

    def to_inference_data(self) -> Any:  # arviz.InferenceData (0.2x) or xarray.DataTree (1.x)
        """The draws in ArviZ's format on the installed ArviZ
        (``arviz.InferenceData`` on 0.2x, ``xarray.DataTree`` on 1.x; see
        :meth:`bece.BayesianECE.to_inference_data`).

        ``posterior``: ``cal`` (chain, draw) and ``curve`` (chain, draw,
        level), with coordinate ``level`` = :attr:`levels`. ``constant_data``:
        ``counts`` and ``alpha`` (cell), ``edges`` (edge; the J + 2 cell
        boundaries 0, p_1, ..., p_J, 1) and ``observed`` (level). Independent
        draws are stored as one chain.
        """
        j = self.levels.size
        weights = self.weights if isinstance(self.weights, str) or self.weights is None else "array"
        return from_dict(
            {
                "posterior": {"cal": self.draws[None, :], "curve": self.curve[None]},
                "constant_data": {
                    "counts": self.counts,
                    "alpha": self.alpha,
                    "edges": np.concatenate([[0.0], self.levels, [1.0]]),
                    "observed": self.observed,
                },
            },
            coords={"level": self.levels, "cell": np.arange(j + 1), "edge": np.arange(j + 2)},
            dims={
                "curve": ["level"],
                "observed": ["level"],
                "counts": ["cell"],
                "alpha": ["cell"],
                "edges": ["edge"],
            },
            attrs={"posterior": {"plugin_cal": self.plugin, "n": self.n, "weights": weights}},
        )

    def __repr__(self) -> str:
        lo, hi = self.interval(0.9)
        return (
            f"BayesianCalibrationError(mean={self.mean:.4g}, interval90=[{lo:.4g}, {hi:.4g}], "
            f"plugin={self.plugin:.4g}, n={self.n}, levels={self.levels.size}, "
            f"num_samples={self.num_samples})"
        )


def _prior(alpha: ArrayLike | None, levels: np.ndarray) -> np.ndarray:
    width = np.diff(np.concatenate([[0.0], levels, [1.0]]))
    if alpha is None:
        return width.copy()
    a = real_array(alpha, "alpha", ndim=(0, 1), positive=True)
    if a.ndim == 0:
        return float(a) * width
    if a.shape != width.shape:
        raise ValueError(
            f"alpha must be a positive number (total prior weight) or an array of shape "
            f"({width.size},) (one concentration per cell), got shape {a.shape}"
        )
    return a


def bayesian_calibration_error(
    pit: ArrayLike,
    levels: ArrayLike | None = None,
    *,
    weights: str | ArrayLike | None = None,
    alpha: ArrayLike | None = None,
    num_samples: int = 10_000,
    seed: Seed = 0,
) -> BayesianCalibrationError:
    """Posterior over the calibration curve and the cal score of a regression forecaster.

    The draws estimate the *population* score
    :math:`\\sum_j w_j (p_j - P(u \\le p_j))^2` at the given levels, where
    :math:`P` is the distribution of the forecaster's PIT on the population
    the test set was drawn from (module docstring for the model).

    Parameters
    ----------
    pit : array_like of shape (T,)
        PIT values of the test set (:func:`~bece.regression.pit`).
    levels : array_like of shape (J,), optional
        Strictly increasing in (0, 1); default
        :data:`~bece.regression.DEFAULT_LEVELS` (0.01, ..., 0.99).
    weights : None, "count" or array_like of shape (J,), default None
        As :func:`~bece.regression.calibration_error`; with ``"count"`` each
        draw uses :math:`w_j = C_j / \\sum_i C_i`, the population analogue.
    alpha : float or array_like of shape (J + 1,), optional
        Dirichlet prior. A number a gives :math:`\\alpha_k = a (p_{k+1} - p_k)`;
        an array gives each cell's concentration. Default a = 1: centred on
        calibration, the weight of one observation, and the posterior at a
        level does not depend on the other levels (module docstring).
    num_samples : int, default 10_000
        Number of independent posterior draws S.
    seed : int or numpy.random.Generator, default 0

    Returns
    -------
    BayesianCalibrationError

    Notes
    -----
    Every draw's curve deviates from the diagonal by about its posterior
    spread :math:`\\sqrt{p_j(1-p_j)/T}`, so even for a calibrated forecaster
    the draws of cal sit above 0 (their mean is about
    :math:`\\sum_j w_j p_j(1-p_j)/T` plus the squared gaps) and an interval
    that excludes 0 is no evidence of miscalibration. To judge calibration
    look at the curve band (:meth:`BayesianCalibrationError.curve_interval`)
    against the diagonal, or compare two forecasters' posteriors on the same
    levels.

    Examples
    --------
    >>> import numpy as np
    >>> from bece.regression import bayesian_calibration_error
    >>> u = (np.arange(500) + 0.5) / 500                  # PIT of a calibrated forecaster
    >>> r = bayesian_calibration_error(u, levels=[0.1, 0.5, 0.9], seed=1)
    >>> r.curve.shape, r.draws.shape
    ((10000, 3), (10000,))
    >>> r.observed                                        # empirical curve
    array([0.1, 0.5, 0.9])
    >>> lo, hi = r.curve_interval(0.99)                   # pointwise 99% band
    >>> bool(np.all((lo < [0.1, 0.5, 0.9]) & ([0.1, 0.5, 0.9] < hi)))
    True
    """
    u = check_pit(pit)
    p = DEFAULT_LEVELS.copy() if levels is None else check_levels(levels)
    num_samples = positive_int(num_samples, "num_samples")
    rng = as_generator(seed)
    t = u.size
    j = p.size
    observed = observed_frequency(u, p, "quantile")
    w_plugin = count_weights(weights, observed)
    plugin = float(np.sum(w_plugin * (p - observed) ** 2))
    cell = np.searchsorted(p, u, side="left")  # u <= p_1 -> 0, p_k < u <= p_{k+1} -> k
    counts = np.bincount(cell, minlength=j + 1).astype(np.int64)
    prior = _prior(alpha, p)
    pi = sample_dirichlet(prior + counts, num_samples, rng)
    curve = np.cumsum(pi, axis=1)[:, :j]
    if isinstance(weights, str):  # "count", checked above
        total = curve.sum(axis=1, keepdims=True)
        w = np.divide(curve, total, out=np.zeros_like(curve), where=total > 0)
    else:
        w = w_plugin[None, :]
    draws = np.sum(w * (p[None, :] - curve) ** 2, axis=1)
    return BayesianCalibrationError(
        draws=draws,
        curve=curve,
        levels=p,
        observed=observed,
        plugin=plugin,
        n=int(t),
        counts=counts,
        alpha=prior,
        weights=weights if weights is None or isinstance(weights, str) else w_plugin,
    )
