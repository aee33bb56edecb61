"""Recalibration of regression forecasts (Kuleshov et al. 2018, Algorithm 1).

From the PIT values :math:`u_t = F_t(y_t)` of a calibration set (not the
training set, not the test set) fit a non-decreasing
:math:`R: [0, 1] \\to [0, 1]` by isotonic regression on

.. math::

    \\{(u_t, \\hat P(u_t))\\}_{t=1}^{T}, \\qquad
    \\hat P(p) = \\frac{|\\{s : u_s \\le p\\}|}{T}.

The recalibrated forecast has CDF :math:`R \\circ F_t`; its quantile at level
:math:`q` is :math:`F_t^{-1}(R^{-1}(q))`.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._base.checks import check_prob
from .forecast import check_pit, forecast_quantiles, real_array

__all__ = [
    "Recalibrator",
]


class Recalibrator:
    """Isotonic recalibration map :math:`R` of Kuleshov et al. (2018).

    ``R`` interpolates linearly between the points
    :math:`(u_t, \\hat P(u_t))` (``sklearn.isotonic.IsotonicRegression``,
    ``increasing=True``, ``out_of_bounds="clip"``). As
    :math:`\\hat P` is the empirical CDF of the :math:`u_t`, it is already
    non-decreasing in :math:`u_t` and the isotonic fit passes through every
    point (the algorithm's isotonic step matters only for other targets).
    When no :math:`u_t` is 0, the point (0, 0) is added, so that R is a CDF on
    [0, 1] and levels below :math:`1/T` interpolate towards 0 rather than all
    mapping to :math:`R^{-1}(q) = 0` (an infinite quantile for a Gaussian).
    When some :math:`u_t` are exactly 0 (targets below every sample of a
    sample forecast), :math:`R(0) = \\hat P(0) > 0` and those levels do map
    to the lower end of the forecasts' support.

    Attributes
    ----------
    isotonic_ : sklearn.isotonic.IsotonicRegression
        The fitted map (after :meth:`fit`).
    n_ : int
        Size T of the calibration set.

    Examples
    --------
    >>> import numpy as np
    >>> from bece.regression import Recalibrator, pit
    >>> rng = np.random.default_rng(0)
    >>> y = rng.normal(size=4000)                  # truth N(0, 1)
    >>> u = pit(y, mean=0.0, std=0.5)              # over-confident forecast
    >>> rec = Recalibrator().fit(u[:2000])
    >>> lo, hi = rec.interval(0.9, mean=np.zeros(2000), std=np.full(2000, 0.5))
    >>> cover = np.mean((lo < y[2000:]) & (y[2000:] <= hi))
    >>> bool(0.87 < cover < 0.93)
    True
    """

    def __init__(self) -> None:
        self.isotonic_: Any = None
        self.n_: int = 0

    def __repr__(self) -> str:
        return f"Recalibrator(n_={self.n_})" if self.isotonic_ is not None else "Recalibrator()"

    # ----------------------------------------------------------------- map
    def fit(self, pit_cal: ArrayLike) -> Recalibrator:
        """Fit R on the PIT values of a calibration set.

        Parameters
        ----------
        pit_cal : array_like of shape (T,)
            PIT values in [0, 1] of the calibration set
            (:func:`~bece.regression.pit`).

        Returns
        -------
        self
        """
        from sklearn.isotonic import IsotonicRegression

        u = check_pit(pit_cal, "pit_cal")
        t = u.size
        target = np.searchsorted(np.sort(u), u, side="right") / t  # P_hat(u_t), '<='
        x, y = u, target
        if u.min() > 0:
            x, y = np.concatenate([[0.0], u]), np.concatenate([[0.0], target])
        iso = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip")
        self.isotonic_ = iso.fit(x, y)
        self.n_ = int(t)
        return self

    def _fitted(self) -> Any:
        if self.isotonic_ is None:
            raise ValueError("this Recalibrator is not fitted yet: call fit(pit_cal) first")
        return self.isotonic_

    def transform(self, pit: ArrayLike) -> np.ndarray:
        """Recalibrated PIT values :math:`R(u_t)`, shape (n,)."""
        iso = self._fitted()
        return np.asarray(iso.predict(check_pit(pit)), dtype=np.float64)

    def quantile_level(self, q: ArrayLike) -> np.ndarray | float:
        """Level of the base forecast that serves level ``q``: :math:`R^{-1}(q)`.

        The generalised inverse :math:`R^{-1}(q) = \\inf\\{u \\in [0, 1] : R(u) \\ge q\\}`
        of the piecewise-linear R: on a segment from :math:`(x_{i-1}, r_{i-1})`
        to :math:`(x_i, r_i)` with :math:`r_{i-1} < q \\le r_i`,
        :math:`R^{-1}(q) = x_{i-1} + (x_i - x_{i-1})(q - r_{i-1})/(r_i - r_{i-1})`;
        :math:`R(R^{-1}(q)) = q` for every q in (0, 1].

        Parameters
        ----------
        q : float or array_like
            Levels in [0, 1].

        Returns
        -------
        float or ndarray of q's shape
        """
        iso = self._fitted()
        qq = real_array(q, "q", ndim=(0, 1))
        bad = ~((qq >= 0) & (qq <= 1))
        if bad.any():
            raise ValueError(f"q must lie in [0, 1], got {qq[bad].ravel()[:3]}")
        x = np.asarray(iso.X_thresholds_, dtype=np.float64)
        r = np.asarray(iso.y_thresholds_, dtype=np.float64)
        i = np.searchsorted(r, qq, side="left")  # first i with r_i >= q
        i = np.minimum(i, r.size - 1)
        prev = np.maximum(i - 1, 0)
        with np.errstate(invalid="ignore", divide="ignore"):  # i == 0 is 0/0, replaced by x[0]
            frac = (qq - r[prev]) / (r[i] - r[prev])
            out = np.where(i == 0, x[0], x[prev] + frac * (x[i] - x[prev]))
        return float(out) if out.ndim == 0 else out

    # ------------------------------------------------------------ forecasts
    def predict_quantiles(
        self,
        q: ArrayLike,
        *,
        mean: ArrayLike | None = None,
        std: ArrayLike | None = None,
        dist: Any = None,  # a frozen scipy.stats distribution
        samples: ArrayLike | None = None,
        quantiles: ArrayLike | None = None,
        levels: ArrayLike | None = None,
    ) -> np.ndarray:
        """Recalibrated quantiles :math:`F_t^{-1}(R^{-1}(q))` of any forecast form.

        Parameters
        ----------
        q : float or array_like of shape (Q,)
            Levels in (0, 1).
        mean, std, dist, samples, quantiles, levels
            One forecast form, as in :func:`~bece.regression.pit`; the base
            quantiles are :func:`~bece.regression.forecast_quantiles`.

        Returns
        -------
        ndarray of shape (n,) for a scalar ``q``, else (n, Q)

        Notes
        -----
        A sample forecast cannot be moved beyond its samples: where
        :math:`R^{-1}(q) < 1/S` the quantile is the smallest sample (and the
        largest where :math:`R^{-1}(q) > 1 - 1/S`), so an interval that needs
        more spread than the samples have will under-cover; a
        ``RuntimeWarning`` says so and how many samples would be needed. A quantile
        forecast raises ``ValueError`` where :math:`R^{-1}(q)` falls outside its
        levels.
        """
        qq = real_array(q, "q", ndim=(0, 1))
        bad = ~((qq > 0) & (qq < 1))
        if bad.any():
            raise ValueError(f"q must lie in (0, 1), got {qq[bad].ravel()[:3]}")
        tau = self.quantile_level(qq)
        if samples is not None:
            size = np.shape(samples)[1] if np.ndim(samples) == 2 else 1
            t = np.atleast_1d(tau)
            far = (t < 1.0 / size) | (t > 1.0 - 1.0 / size)
            if far.any():
                edge = float(np.min(np.minimum(t, 1.0 - t)))
                need = (
                    f"draw more than {int(np.ceil(1.0 / edge))} samples"
                    if edge > 0
                    else "the calibration set has PIT values of exactly 0 or 1 (targets beyond "
                    "every sample): fit on randomised PITs or widen the forecast"
                )
                warnings.warn(
                    f"recalibrated level(s) {t[far][:3]} lie beyond the resolution 1/S = "
                    f"{1.0 / size:.3g} of the {size} samples: the quantiles there are the "
                    f"smallest or largest sample and intervals from them under-cover; {need}",
                    RuntimeWarning,
                    stacklevel=2,
                )
        return forecast_quantiles(
            tau,
            mean=mean,
            std=std,
            dist=dist,
            samples=samples,
            quantiles=quantiles,
            levels=levels,
        )

    def gaussian_quantiles(self, mean: ArrayLike, std: ArrayLike, q: ArrayLike) -> np.ndarray:
        """Recalibrated quantiles of Gaussian forecasts: :math:`\\mu_t + \\sigma_t\\Phi^{-1}(R^{-1}(q))`."""
        return self.predict_quantiles(q, mean=mean, std=std)

    def sample_quantiles(self, samples: ArrayLike, q: ArrayLike) -> np.ndarray:
        """Recalibrated quantiles of sample forecasts (n, S) (see :meth:`predict_quantiles`)."""
        return self.predict_quantiles(q, samples=samples)

    def interpolated_quantiles(self, quantiles: ArrayLike, levels: ArrayLike, q: ArrayLike) -> np.ndarray:
        """Recalibrated quantiles of quantile forecasts (n, K) at ``levels`` (K,)."""
        return self.predict_quantiles(q, quantiles=quantiles, levels=levels)

    def interval(
        self,
        prob: float = 0.9,
        *,
        mean: ArrayLike | None = None,
        std: ArrayLike | None = None,
        dist: Any = None,  # a frozen scipy.stats distribution
        samples: ArrayLike | None = None,
        quantiles: ArrayLike | None = None,
        levels: ArrayLike | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Recalibrated central ``prob`` interval of each forecast.

        The recalibrated quantiles at :math:`(1 - \\text{prob})/2` and
        :math:`(1 + \\text{prob})/2`: the interval
        :math:`(F_t^{-1}(R^{-1}(\\frac{1-\\text{prob}}{2})), F_t^{-1}(R^{-1}(\\frac{1+\\text{prob}}{2}))]`
        contains y with probability prob when the recalibrated forecaster is
        calibrated.

        Returns
        -------
        lo, hi : ndarray of shape (n,)
        """
        prob = check_prob(prob)
        both = self.predict_quantiles(
            np.array([(1 - prob) / 2, (1 + prob) / 2]),
            mean=mean,
            std=std,
            dist=dist,
            samples=samples,
            quantiles=quantiles,
            levels=levels,
        )
        return both[:, 0], both[:, 1]
