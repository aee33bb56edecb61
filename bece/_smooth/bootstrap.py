r"""The Bayesian bootstrap inside a crowded ECE bin, drawn from its exact mean and covariance.

Each ECE draw needs, per bin m, the bootstrap's bin total :math:`W_m =
\sum_{j \in m} g_j` and the two weighted means
:math:`\mathrm{acc}_m = \sum_{j\in m}\pi_j s_j` and
:math:`\mathrm{conf}_m = \sum_{j\in m}\pi_j p_j` of the curve
:math:`s_j = \sigma(f(x_j))` and the confidences, with
:math:`g_j \sim \mathrm{Gamma}(t_j)` over the bin's atoms and
:math:`\pi = g / W_m`. By the Gamma--Dirichlet decomposition
:math:`W_m \sim \mathrm{Gamma}(n_m)` (:math:`n_m = \sum_{j\in m} t_j`
predictions) independently of :math:`\pi \sim \mathrm{Dirichlet}(t)`, so
:math:`W_m` is drawn exactly, and :math:`(\mathrm{acc}_m, \mathrm{conf}_m)`
are two linear functionals of one Dirichlet vector, with exact mean
:math:`(\bar s, \bar p)` (:math:`t`-weighted means over the bin) and
covariance

.. math::

    \frac{1}{n_m + 1}\begin{pmatrix} V_{ss} & V_{sp} \\ V_{sp} & V_{pp}\end{pmatrix},
    \qquad V_{ab} = \sum_{j \in m}\frac{t_j}{n_m}(a_j - \bar a)(b_j - \bar b).

Where a bin holds at least :data:`NORMAL_BIN_MIN` predictions the pair is
drawn from the bivariate normal with that mean and covariance instead of
through one Gamma variate per atom: the draws then need three weighted sums
of :math:`s` per bin (:math:`\sum t s`, :math:`\sum t s p`, :math:`\sum t
s^2`), which the pass that computes the importance weights
(:func:`bece._smooth.draws.loglik_and_moments`) already has at hand, instead
of one Gamma variate per atom and draw (at n = 10^6, 10^4 draws x 2,300
atoms: most of the time of the smooth posterior).

The error: the mean and covariance are exact; what the normal leaves out
is the skewness of the Dirichlet functional, whose third standardised
moment is :math:`\kappa_3 = 2\gamma\sqrt{n_m + 1}/(n_m + 2) < 2\gamma/\sqrt{n_m}`
(:math:`\gamma` the :math:`t`-weighted skewness of :math:`a` over the bin).
By the Cornish--Fisher expansion that moves the functional's 5% and 95%
quantiles by about :math:`(1.645^2 - 1)\kappa_3/6 \approx 0.57\,\gamma/\sqrt{n_m}`
of its standard deviation: 0.036 sd at :math:`n_m = 1000` for a bin where
:math:`|\gamma| = 2`, 0.004 sd at :math:`n_m = 66{,}000` (n = 10^6 over 15 bins).
That standard deviation is itself a small part of the ECE's: within a bin
of width :math:`1/M` the confidences have sd at most :math:`1/(M\sqrt{12})`,
so the bootstrap moves :math:`\mathrm{conf}_m` by at most
:math:`0.019/\sqrt{n_m}` sd for 15 bins, against the curve's posterior sd
of about :math:`\sqrt{\bar s(1 - \bar s)/n_m}` (0.3 to 0.5 over
:math:`\sqrt{n_m}` for :math:`\bar s` in 0.1..0.9, less where the smooth curve
pools the bins). The tests compare these ECE draws with the exact Gamma
draws on the same curve draws (two-sample Kolmogorov--Smirnov and the
interval ends).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .atoms import Atoms

__all__ = [
    "NORMAL_BIN_MIN",
    "BinMoments",
    "normal_bin_draws",
]

#: Predictions in an ECE bin from which its bootstrap means are drawn from
#: their normal approximation (module docstring); bins with fewer draw one
#: Gamma variate per atom.
NORMAL_BIN_MIN = 1000


@dataclass(frozen=True)
class BinMoments:
    """What the normal draws need of the atoms, per ECE bin.

    Attributes
    ----------
    normal : ndarray of shape (M,), bool
        Bins with at least :data:`NORMAL_BIN_MIN` predictions.
    count : ndarray of shape (M,), float64
        :math:`n_m`.
    conf_mean, conf_var : ndarray of shape (M,)
        :math:`\\bar p` and :math:`V_{pp}` (0 in empty bins).
    """

    normal: np.ndarray
    count: np.ndarray
    conf_mean: np.ndarray
    conf_var: np.ndarray

    @classmethod
    def from_atoms(cls, atoms: Atoms, *, min_count: int = NORMAL_BIN_MIN) -> BinMoments:
        m = atoms.binning.n_bins
        t = atoms.trials.astype(np.float64)
        count = np.bincount(atoms.bin, weights=t, minlength=m)
        safe = np.maximum(count, 1.0)
        mean = np.bincount(atoms.bin, weights=t * atoms.p, minlength=m) / safe
        dev = atoms.p - mean[atoms.bin]
        var = np.bincount(atoms.bin, weights=t * dev * dev, minlength=m) / safe
        return cls(count >= min_count, count, mean, var)

    @property
    def any_normal(self) -> bool:
        return bool(self.normal.any())


def normal_bin_draws(bm: BinMoments, sums: np.ndarray,
                     rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bin totals and bootstrap means of the normal bins for each draw.

    Parameters
    ----------
    bm : BinMoments
    sums : ndarray of shape (S, 3, M)
        Per draw and bin :math:`\\sum t s`, :math:`\\sum t s p`,
        :math:`\\sum t s^2` (only the normal bins are read).
    rng : numpy.random.Generator
        Draws :math:`W_m \\sim \\mathrm{Gamma}(n_m)`, shape (S, B), then two
        standard normals per draw and bin, shape (S, 2, B), B the number of
        normal bins.

    Returns
    -------
    total, acc, conf : ndarrays of shape (S, B)
        :math:`W_m` and the draws of :math:`(\\mathrm{acc}_m, \\mathrm{conf}_m)`
        of the normal bins, in bin order.
    """
    nb = np.flatnonzero(bm.normal)
    s_draws = sums.shape[0]
    n = bm.count[nb]
    total = rng.standard_gamma(n, size=(s_draws, nb.size))
    z = rng.standard_normal((s_draws, 2, nb.size))
    mu_s = sums[:, 0, nb] / n
    mu_p = bm.conf_mean[nb]
    v_s = np.maximum(sums[:, 2, nb] / n - mu_s * mu_s, 0.0)
    c_sp = sums[:, 1, nb] / n - mu_s * mu_p
    sd_s = np.sqrt(v_s)
    scale = 1.0 / np.sqrt(n + 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.where(sd_s > 0, c_sp / sd_s, 0.0)  # Cov(s, p) / sd(s)
    rest = np.sqrt(np.maximum(bm.conf_var[nb] - rho * rho, 0.0))
    acc = mu_s + scale * sd_s * z[:, 0]
    conf = mu_p + scale * (rho * z[:, 0] + rest * z[:, 1])
    return total, acc, conf
