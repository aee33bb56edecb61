r"""A smooth-curve Bayesian ECE: a spline calibration curve and a Bayesian bootstrap.

The binned posterior (:mod:`bece.posterior`) estimates each bin's accuracy
separately; with a few hundred predictions most bins hold a handful, and the
absolute value in :math:`|\mathrm{acc}_m - \mathrm{conf}_m|` turns their noise
into an upward bias and intervals that miss the truth. Here the calibration
curve is modelled smoothly across bins, which pools their information.

Model (written out in NumPyro in :mod:`bece.models.smooth`). With
:math:`x = \operatorname{logit} p` (confidences clipped to
:math:`[10^{-6}, 1 - 10^{-6}]` *for the curve only*, so that a confidence of
exactly 0 or 1 has a finite logit) and :math:`m(p)` the ECE bin of p,

.. math::

    \operatorname{logit} P(z = 1 \mid p) = f(x) = x + a + b x + \lambda\,\phi(x)^\top u
        + \tau\,v_{m(p)},

    a \sim \mathcal N(0, s_a^2),\ b \sim \mathcal N(0, s_b^2),\
    u \sim \mathcal N(0, I),\ v \sim \mathcal N(0, I_M),\
    \lambda \sim \mathrm{Exp}(\text{mean } s_\lambda),\
    \tau \sim \mathrm{Exp}(\text{mean } s_\tau),

with :math:`\phi` the K - 2 non-linear functions of a natural cubic spline
with knots at quantiles of the observed logits, in Demmler–Reinsch form
(:func:`roughness_penalty`) and scaled so that :math:`\lambda` is the prior
RMS over the observed confidences of the curve's non-linear part in logit
units. :math:`f(x) = x` is perfect calibration. The per-bin deviations
:math:`\tau v_m` take up what a smooth curve cannot follow (a staircase):
without them the posterior would concentrate on a wrong ECE as n grows for
such curves; their exponential (penalised-complexity) prior shrinks them
to 0, so that at small n the smooth curve pools the bins.

Distribution of the confidences: the Bayesian bootstrap (Rubin 1981): the
population distribution of :math:`p` is a discrete distribution on the
observed confidences with weights :math:`w \sim \mathrm{Dirichlet}(1, \dots,
1)` — the posterior of a Dirichlet process as its concentration goes to 0.
It is chosen over a parametric or mixture model of :math:`p` because the
binned ECE depends on that distribution only through integrals over bins,
which the bootstrap estimates without assumptions about its shape (point
masses at p = 1, several modes, a bounded support such as
:math:`[1/K, 1]`), at no cost beyond drawing the weights, and it is
asymptotically correct: its posterior matches the sampling distribution of
the empirical bin integrals to first order. What it cannot do is put mass on
confidences never observed; with very few points per bin this understates
the uncertainty about the bin masses, which the curve's uncertainty
dominates there anyway. Because the curve and the distribution of :math:`p`
share no parameters, they are independent a posteriori, and each ECE draw is

.. math::

    \mathrm{ECE} = \sum_{m=1}^M \Big|\sum_{j \in \text{bin } m} w_j\,
        \big(\sigma(f(x_j)) - p_j\big)\Big|,

the population binned ECE (the bins of :mod:`bece.binning`) of a draw of the
curve under a draw of the distribution of confidences. The result reports,
per bin, ``weight`` :math:`\sum_{j\in m} w_j`, ``accuracy``
:math:`\sum_{j\in m} w_j\sigma(f(x_j))/\text{weight}` and ``confidence``
:math:`\sum_{j\in m} w_j p_j/\text{weight}`, so that it compares bin by bin
with the binned posterior (an empty bin has weight 0, its confidence is its
centre and its accuracy the curve there).

Fast path: Laplace. For fixed :math:`\eta = (\lambda, \tau)` the log posterior
of :math:`\theta = (a, b, u, v)` is concave (logistic likelihood, Gaussian
prior); Newton's method finds its mode :math:`\hat\theta_\eta` and Hessian
:math:`H_\eta`, giving :math:`\theta \mid \eta \approx \mathcal N(\hat\theta_\eta,
H_\eta^{-1})` and the Laplace evidence :math:`\log p(\text{data}\mid \eta)
\approx \ell(\hat\theta_\eta) - \tfrac12\hat\theta_\eta^\top P\hat\theta_\eta +
\tfrac12\log|P| - \tfrac12\log|H_\eta|` (P the prior precision). The
hyper-parameters are integrated out on a product grid, 16 values of
:math:`\lambda` and 12 of :math:`\tau` log-spaced over :math:`[10^{-2},
10]` times their prior means, each standing for the prior mass between its
geometric neighbours (the first and last also for the tails, so the masses
sum to one): the posterior is the mixture :math:`\sum_k \pi_k\,\mathcal
N(\hat\theta_{\eta_k}, H_{\eta_k}^{-1})` with :math:`\pi_k \propto
\text{mass}_k\, p(\text{data}\mid \eta_k)` (integrated nested Laplace, Rue et
al. 2009). We integrate rather than take the MAP of :math:`\eta` because at
small n its posterior is wide — often piled against 0, the linear curve —
and plugging in one value would understate the curve's uncertainty exactly
where the binned posterior already fails. The same mixture gives the
marginal likelihood used by :func:`bece.calibtest.calibration_test`.
The Laplace draws are then corrected by Pareto-smoothed importance
resampling (:func:`importance_draws`): with weights
:math:`p(\text{data}, \theta \mid \eta_k)\,\text{mass}_k / q(k, \theta)`
the resampled draws target the exact posterior on the hyper-parameter grid;
the Pareto :math:`\hat k` and the effective sample size are reported
(``params.pareto_k``, ``params.is_ess``; :math:`\hat k` was 0.2–0.5 from
n = 100 to 10^6 in our tests). Without the correction, NUTS showed the
Laplace mixture's tails at the ends of the curve 0.2 posterior sd too short
at n = 2000. :func:`cross_check_smooth` (``bece.cross_check(...,
model="smooth")``) compares the corrected draws with NUTS on the same model.

Large n: a fine grid of confidences. Up to ``EXACT_MAX_N`` predictions every
observation is an atom (exact). Above, each bin is cut into ``grid``
equal-width sub-cells (default 128) and a sub-cell with :math:`t_g`
predictions, :math:`c_g` of them correct and mean confidence :math:`\bar
p_g` becomes one atom: likelihood :math:`c_g f(\bar x_g) - t_g \log(1 +
e^{f(\bar x_g)})` with :math:`\bar x_g = \operatorname{logit}\bar p_g`, and
bootstrap weight :math:`W \sim \mathrm{Dirichlet}(t_1, \dots, t_G)` — the
exact law of the sub-cell totals of the Bayesian bootstrap. Replacing the
sub-cell's points by its mean changes an ECE draw by at most

.. math::

    |\Delta\mathrm{ECE}| \le \sum_g W_g\,\big(h_g + |s(u_g) - s(l_g)|\big),
    \qquad s(p) = \sigma(f(\operatorname{logit} p)),

for sub-cells :math:`[l_g, u_g)` of width :math:`h_g` on which the curve
:math:`s` is monotone (a turning point inside a cell adds a second-order
term). The result's ``params.grid_error`` is the largest of these bounds
over the first 200 draws (about :math:`2h = 2/(128 M)` when the curve is near the
diagonal, 1e-3 for M = 15); the typical error is far smaller, because the
first-order terms have mean zero within each cell. From about n = 10^6 the
bound is wider than the posterior itself (n = 10^6, p ~ Beta(4, 1.5):
bound 1.1e-3, 90% interval half-width 7e-4); the exact path, or a larger
``grid``, is the check.

From statistics. These atoms are exactly what
:class:`~bece.stats.CalibrationStats` holds in bins that refine the ECE bins
(:func:`fine_binning`: ``M * grid`` uniform bins for uniform ECE bins, each
explicit bin cut into ``grid`` otherwise): per cell the count :math:`t_g`,
the correct count :math:`c_g` and :math:`t_g \bar p_g`. Such statistics add
across chunks, files read in batches, Dask partitions and device arrays, and
:func:`smooth_posterior_ece` (``bece.posterior_ece(stats, model="smooth")``)
runs the model on them (:func:`atoms_from_stats`). :func:`make_atoms` builds
its grid atoms through the same statistics, so ``smooth_ece(..., grid=r)``
and the statistics route give the same draws for the same seed. Quantile
ECE bins have data-dependent edges: pass them explicitly (a first pass).

References
----------
Rubin (1981), "The Bayesian bootstrap", Ann. Statist. 9(1).
Hastie, Tibshirani & Friedman (2009), *The Elements of Statistical Learning*, §5.2.
Rue, Martino & Chopin (2009), "Approximate Bayesian inference for latent
Gaussian models by using integrated nested Laplace approximations", JRSS B.
Simpson et al. (2017), "Penalising model component complexity", Stat. Sci.
Roelofs et al. (2022), "Mitigating bias in calibration error estimation", AISTATS.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from scipy import linalg, special

from .binning import Binning, make_binning
from .inputs import as_outcomes
from .posterior import as_generator, positive_int
from .result import BayesianECE, _arviz
from .stats import CalibrationStats

__all__ = [
    "Atoms",
    "SmoothBasis",
    "SmoothBayesianECE",
    "SmoothPosterior",
    "atoms_from_stats",
    "cross_check_smooth",
    "ece_draws",
    "draw_loglik",
    "fine_binning",
    "fit_smooth",
    "importance_draws",
    "logit_confidence",
    "make_atoms",
    "natural_cubic_basis",
    "roughness_penalty",
    "single_threaded_blas",
    "smooth_ece",
    "smooth_posterior_ece",
]

LOGIT_CLIP = 1e-6
EXACT_MAX_N = 2_000
DEFAULT_SUBCELLS = 128
DEFAULT_N_KNOTS = 10
N_LAMBDA = 16
N_TAU = 12
HYPER_RANGE = (1e-2, 10.0)
CURVE_POINTS = 101
BOUND_DRAWS = 200
PARETO_K_MAX = 0.7


# --------------------------------------------------------------------- basis
def logit_confidence(p: np.ndarray) -> np.ndarray:
    """:math:`\\operatorname{logit}(\\operatorname{clip}(p, 10^{-6}, 1 - 10^{-6}))`, float64.

    The clip applies to the curve's argument only (a confidence of exactly 1
    would have an infinite logit); the ECE uses the confidences as given.
    """
    return special.logit(np.clip(np.asarray(p, dtype=np.float64), LOGIT_CLIP, 1.0 - LOGIT_CLIP))


def natural_cubic_basis(x: np.ndarray, knots: np.ndarray) -> np.ndarray:
    """Non-linear natural cubic spline functions (numpy twin of
    :func:`bece.models.smooth.natural_cubic_basis`).

    Parameters
    ----------
    x : ndarray of shape (n,)
    knots : ndarray of shape (K,), strictly increasing

    Returns
    -------
    ndarray of shape (n, K - 2)
        :math:`N_{k+2}(x) = d_k(x) - d_{K-1}(x)`,
        :math:`d_k(x) = ((x-\\xi_k)_+^3 - (x-\\xi_K)_+^3)/(\\xi_K - \\xi_k)`;
        linear beyond :math:`\\xi_K`, 0 below :math:`\\xi_1`.
    """
    x = np.asarray(x, dtype=np.float64)
    knots = np.asarray(knots, dtype=np.float64)
    last = knots[-1]
    span = last - knots[:-1]
    xc = np.minimum(x, last)[:, None]
    d = (np.maximum(xc - knots[:-1], 0.0) ** 3 - np.maximum(xc - last, 0.0) ** 3) / span
    d += np.maximum(x - last, 0.0)[:, None] * (3.0 * span)  # tangent continuation
    return d[:, :-1] - d[:, -1:]


def roughness_penalty(knots: np.ndarray) -> np.ndarray:
    """:math:`\\Omega_{jk} = \\int N_j''(x) N_k''(x)\\,dx`, shape (K - 2, K - 2).

    The second derivatives are piecewise linear between knots (0 outside
    :math:`[\\xi_1, \\xi_K]`), so Simpson's rule on each knot interval is exact.
    """
    knots = np.asarray(knots, dtype=np.float64)
    last = knots[-1]

    def second(t):
        t = np.asarray(t, dtype=np.float64)[:, None]
        d2 = 6.0 * (np.maximum(t - knots[:-1], 0.0) - np.maximum(t - last, 0.0)) / (last - knots[:-1])
        return d2[:, :-1] - d2[:, -1:]

    lo, hi = knots[:-1], knots[1:]
    a, m, b = second(lo), second(0.5 * (lo + hi)), second(hi)
    h = (hi - lo)[:, None, None]
    outer = lambda u: u[:, :, None] * u[:, None, :]  # noqa: E731
    return np.sum(h / 6.0 * (outer(a) + 4.0 * outer(m) + outer(b)), axis=0)


@dataclass(frozen=True)
class SmoothBasis:
    """Design of the curve: :math:`[1, x, \\phi(x), e_{m(x)}]`.

    Attributes
    ----------
    knots : ndarray of shape (K,)
        On the logit scale (empty when fewer than 3 distinct confidences:
        the smooth part is then linear in x).
    transform : ndarray of shape (K, K - 2)
        :math:`\\phi(x) = [1, x, N(x)]\\,T`: the Demmler–Reinsch functions
        :math:`N(x) U D^{-1/2}` (:math:`\\Omega = U D U^\\top`) less their
        least-squares linear part over the observed confidences, divided by
        their RMS :math:`c` there. Removing the linear part changes no
        second derivative, so the prior is still the smoothing-spline prior
        :math:`\\propto \\exp(-\\int g''^2 c^2/(2\\lambda^2))`; it leaves the
        linear trend to :math:`a, b` alone, which removes a ridge between
        them and :math:`\\lambda u` that NUTS diverged on.
    n_bins : int
        M when the curve has a deviation per ECE bin (one-hot columns
        :math:`e_{m(x)}`), else 0.
    """

    knots: np.ndarray
    transform: np.ndarray
    n_bins: int = 0

    @property
    def n_spline(self) -> int:
        return int(self.transform.shape[1])

    @property
    def n_coef(self) -> int:
        return 2 + self.n_spline + self.n_bins

    @property
    def n_smooth(self) -> int:
        """Columns of the smooth part, ``2 + K - 2``."""
        return 2 + self.n_spline

    def logits(self, x: np.ndarray, bins: np.ndarray | None, beta: np.ndarray) -> np.ndarray:
        """:math:`f(x) = x + [1, x, \\phi(x), e_{m(x)}]\\beta` for each row of ``beta``.

        ``x`` and ``bins`` have shape (n,), ``beta`` (S, P); returns (S, n).
        Same as ``x + beta @ design(x, bins).T`` without forming the one-hot
        columns.
        """
        x = np.asarray(x, dtype=np.float64)
        k = self.n_smooth
        f = x + beta[:, :k] @ self.design(x).T
        if self.n_bins:
            f += beta[:, k:][:, np.asarray(bins)]
        return f

    def design(self, x: np.ndarray, bins: np.ndarray | None = None) -> np.ndarray:
        """Columns ``[1, x, N(x) T, onehot(bins)]``, shape (n, 2 + (K - 2) + M);
        without ``bins`` the smooth part only, shape (n, K)."""
        x = np.asarray(x, dtype=np.float64)
        cols = [np.ones_like(x)[:, None], x[:, None]]
        if self.n_spline:
            cols.append(_phi(x, self.knots, self.transform))
        if self.n_bins and bins is not None:
            onehot = np.zeros((x.size, self.n_bins))
            onehot[np.arange(x.size), np.asarray(bins)] = 1.0
            cols.append(onehot)
        return np.concatenate(cols, axis=1)

    @classmethod
    def from_logits(cls, x: np.ndarray, counts: np.ndarray, n_knots: int,
                    n_bins: int = 0) -> "SmoothBasis":
        """Knots at ``n_knots`` equally spaced quantiles of the distinct logits
        (fewer if there are fewer distinct values), scaled over ``x``
        weighted by ``counts``."""
        ux = np.unique(x)
        k = min(n_knots, ux.size)
        if k < 3:
            return cls(np.empty(0), np.empty((0, 0)), n_bins)
        knots = np.quantile(ux, np.linspace(0.0, 1.0, k))
        omega = roughness_penalty(knots)
        evals, evecs = np.linalg.eigh(omega)
        t0 = evecs / np.sqrt(evals)
        phi = natural_cubic_basis(x, knots) @ t0
        lin = np.column_stack([np.ones_like(x), x])
        sw = np.sqrt(counts)[:, None]
        coef, *_ = np.linalg.lstsq(lin * sw, phi * sw, rcond=None)  # (2, K - 2)
        phi -= lin @ coef
        c = np.sqrt(np.sum(counts[:, None] * phi**2) / counts.sum())
        if not np.isfinite(c) or c <= 0:  # pragma: no cover - degenerate confidences
            c = 1.0
        return cls(knots, np.vstack([-coef, t0]) / c, n_bins)


def _phi(x: np.ndarray, knots: np.ndarray, transform: np.ndarray) -> np.ndarray:
    """:math:`[1, x, N(x)]\\,T`, shape (n, K - 2)."""
    return transform[0] + x[:, None] * transform[1] + natural_cubic_basis(x, knots) @ transform[2:]


# --------------------------------------------------------------------- atoms
@dataclass(frozen=True)
class Atoms:
    """What the smooth posterior sees: weighted points sorted by bin.

    Attributes
    ----------
    p, x : ndarray of shape (J,)
        Confidence (mean over a sub-cell) and its clipped logit.
    trials, successes : ndarray of shape (J,), int64
        Predictions and correct predictions per atom (1 and z for exact atoms).
    bin : ndarray of shape (J,), int64
        ECE bin of each atom (non-decreasing).
    lower, upper : ndarray of shape (J,) or None
        The sub-cell of each atom (None when exact).
    binning : Binning
    grid : int or None
        Sub-cells per bin; None when every prediction is an atom.
    """

    p: np.ndarray
    x: np.ndarray
    trials: np.ndarray
    successes: np.ndarray
    bin: np.ndarray
    lower: np.ndarray | None
    upper: np.ndarray | None
    binning: Binning
    grid: int | None = None

    @property
    def exact(self) -> bool:
        return self.grid is None

    @property
    def n(self) -> int:
        return int(self.trials.sum())


def single_threaded_blas():
    """Context that limits BLAS to one thread while it is active (threadpoolctl,
    if installed; else nothing). The products here are small (P <= ~30
    columns); on a loaded machine a multi-threaded BLAS spends ten times
    longer synchronising than computing them. The previous limits are
    restored on exit; nothing global changes."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - optional
        from contextlib import nullcontext

        return nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def _check_grid(grid: Any, n: int) -> int | None:
    if isinstance(grid, str):
        if grid != "auto":
            raise ValueError(f"grid must be 'auto', None or a positive integer, got {grid!r}")
        return None if n <= EXACT_MAX_N else DEFAULT_SUBCELLS
    if grid is None:
        return None
    return positive_int(grid, "grid")


def make_atoms(z: np.ndarray, p: np.ndarray, binning: Binning, grid: int | None) -> Atoms:
    """Atoms from checked outcomes ``z`` and confidences ``p`` (shape (n,)).

    ``grid=None``: one atom per prediction. An int r: r equal-width
    sub-cells per bin (:func:`fine_binning`), one atom per non-empty
    sub-cell; computed as :func:`atoms_from_stats` of the statistics in
    those sub-cells, so that the two routes give the same atoms.
    """
    if grid is None:
        b = binning.index(p)
        order = np.argsort(b, kind="stable")
        ps = p[order]
        ones = np.ones(p.size, dtype=np.int64)
        return Atoms(ps, logit_confidence(ps), ones, np.asarray(z, dtype=np.int64)[order],
                     b[order], None, None, binning, None)
    fine = _subdivide(binning, int(grid))
    stats = CalibrationStats.from_outcomes(np.asarray(z), p, fine)
    return _stats_atoms(stats, binning, _bin_of_cells(fine, binning))


def _subdivide(coarse: Binning, grid: int) -> Binning:
    """Each bin of ``coarse`` cut into ``grid`` equal-width sub-cells.

    Uniform bins give uniform bins (``M * grid`` of them, index
    :math:`\\lfloor p M r \\rfloor`: for r a power of two this is
    :math:`r \\lfloor p M \\rfloor` plus the sub-cell exactly, since scaling
    by a power of two commutes with rounding); other bins explicit edges
    that contain every edge of ``coarse`` as the same float.
    """
    m = coarse.n_bins
    if coarse.rule == "uniform":
        return Binning(np.linspace(0.0, 1.0, m * grid + 1), "uniform")
    e = coarse.edges
    lo, hi = e[:-1, None], e[1:, None]
    inner = np.clip(lo + (hi - lo) * (np.arange(grid) / grid), lo, hi)
    fine = np.maximum.accumulate(np.append(inner.ravel(), e[-1]))
    return Binning(fine, "edges")


def _ece_binning(n_bins: Any, binning: Any) -> Binning:
    if isinstance(binning, str) and binning in ("quantile", "equal-mass"):
        raise ValueError(
            "binning='quantile' needs the confidences to place its edges, which fine "
            "statistics do not keep; compute them first (e.g. bece.binning.make_binning(p, "
            "n_bins, 'quantile').edges, or a first pass over the file) and pass binning=edges "
            "both here and to bece.smooth.fine_binning"
        )
    return make_binning(None, n_bins, binning)


def _bin_of_cells(fine: Binning, coarse: Binning) -> np.ndarray:
    """ECE bin (index into ``coarse``) of each cell of ``fine``, shape (M',);
    ValueError unless ``fine`` refines ``coarse``."""
    mf, mc = fine.n_bins, coarse.n_bins
    if fine.rule == "uniform" and coarse.rule == "uniform":
        if mf % mc:
            raise ValueError(
                f"the {mf} uniform bins of stats do not refine the {mc} uniform ECE bins given "
                f"by n_bins/binning: their number must be a multiple of {mc}, e.g. "
                f"{mc} * {DEFAULT_SUBCELLS} = {mc * DEFAULT_SUBCELLS} "
                f"(bece.smooth.fine_binning(n_bins={mc}))"
            )
        return np.arange(mf, dtype=np.int64) // (mf // mc)
    fe, ce = fine.edges, coarse.edges
    inside = np.isin(ce, fe)
    if fe[0] != ce[0] or fe[-1] != ce[-1] or not inside.all():
        missing = ce[~inside] if not inside.all() else ce[[0, -1]]
        raise ValueError(
            f"the {mf} bins of stats (edges {fe[0]:g} .. {fe[-1]:g}) do not refine the {mc} ECE "
            f"bins given by n_bins/binning: ECE edge(s) {np.round(missing[:5], 6).tolist()} "
            "are not edges of stats' bins (equal as floats); build stats with "
            "binning=bece.smooth.fine_binning(n_bins, binning)"
        )
    return np.minimum(np.searchsorted(ce, fe[:-1], side="right") - 1, mc - 1).astype(np.int64)


def _stats_atoms(stats: CalibrationStats, coarse: Binning, cell_bin: np.ndarray) -> Atoms:
    """One atom per non-empty cell of ``stats`` (cells refining ``coarse``,
    ``cell_bin`` their ECE bins, non-decreasing)."""
    t_all = stats.bin_counts
    keep = np.flatnonzero(t_all)
    t = t_all[keep]
    e = stats.edges
    lower, upper = e[keep], e[keep + 1]
    pm = np.clip(stats.sum_p[keep] / t, lower, upper)  # float rounding of the mean only
    per_bin = np.bincount(cell_bin, minlength=coarse.n_bins)
    grid = int(per_bin[per_bin > 0].min())
    return Atoms(pm, logit_confidence(pm), t.astype(np.int64),
                 stats.counts[1][keep].astype(np.int64), cell_bin[keep], lower, upper,
                 coarse, grid)


def _coarsen(stats: CalibrationStats, coarse: Binning, cell_bin: np.ndarray) -> CalibrationStats:
    """The statistics of ``stats`` added up over the cells of each ECE bin."""
    m = coarse.n_bins
    counts = np.zeros((2, m), dtype=np.int64)
    sum_p, sum_p2 = np.zeros(m), np.zeros(m)
    np.add.at(counts, (slice(None), cell_bin), stats.counts)
    np.add.at(sum_p, cell_bin, stats.sum_p)
    np.add.at(sum_p2, cell_bin, stats.sum_p2)
    return CalibrationStats(coarse, counts, sum_p, sum_p2)


def fine_binning(n_bins: int | None = None, binning: Any = "uniform", *,
                 grid: int = DEFAULT_SUBCELLS) -> Binning:
    """The fine bins to collect statistics in for the smooth model.

    Each of the M ECE bins is cut into ``grid`` equal-width sub-cells.
    Statistics in these bins (:meth:`bece.CalibrationStats.from_arrays`,
    :func:`bece.stream.file_statistics`, :func:`bece.io.read_statistics`,
    Dask arrays and DataFrames, JAX arrays) add across chunks like any
    other, and :func:`smooth_posterior_ece` turns them into the posterior
    that :func:`smooth_ece` gives with ``grid=grid``.

    Parameters
    ----------
    n_bins : int, default 15
        ECE bins M.
    binning : {"uniform"} or array_like of edges or Binning, default "uniform"
        The ECE bins. ``"quantile"`` raises ``ValueError``: its edges
        depend on all confidences, so compute them first (a first pass)
        and pass them as edges.
    grid : int, default 128
        Sub-cells per ECE bin; the bound on the ECE error of the grid is
        about :math:`2/(\\text{grid}\\,M)` (module docstring).

    Returns
    -------
    Binning
        Uniform ECE bins give uniform bins, ``M * grid`` of them (the same
        as ``n_bins=M * grid``); explicit edges give explicit edges
        containing every ECE edge.

    Examples
    --------
    >>> from bece.smooth import fine_binning
    >>> fine_binning(15)
    Binning(rule='uniform', n_bins=1920)
    >>> fine_binning(binning=[0.0, 0.5, 0.9, 1.0], grid=2).edges.tolist()
    [0.0, 0.25, 0.5, 0.7, 0.9, 0.95, 1.0]
    """
    return _subdivide(_ece_binning(n_bins, binning), positive_int(grid, "grid"))


def _from_stats(stats: Any, n_bins: Any, binning: Any) -> tuple[Atoms, CalibrationStats]:
    if not isinstance(stats, CalibrationStats):
        raise ValueError(f"stats must be a CalibrationStats, got {type(stats).__name__}")
    if stats.n == 0:
        raise ValueError("stats holds no predictions (n = 0)")
    coarse = _ece_binning(n_bins, binning)
    cell_bin = _bin_of_cells(stats.binning, coarse)
    return _stats_atoms(stats, coarse, cell_bin), _coarsen(stats, coarse, cell_bin)


def atoms_from_stats(stats: CalibrationStats, *, n_bins: int | None = None,
                     binning: Any = "uniform") -> Atoms:
    """Fine-grid atoms from statistics whose bins refine the ECE bins.

    Each non-empty bin g of ``stats`` becomes one atom: ``trials``
    :math:`t_g = n_g`, ``successes`` :math:`c_{1,g}`, confidence
    :math:`\\bar p_g = S_g / n_g` (clipped to the cell, float rounding
    only), ``lower``/``upper`` the cell's edges (for the error bound), and
    ``bin`` the ECE bin containing the cell.

    Parameters
    ----------
    stats : CalibrationStats
        Statistics in fine bins, e.g. ``binning=fine_binning(n_bins)``;
        possibly summed over chunks.
    n_bins, binning
        The ECE bins (default 15 uniform). The bins of ``stats`` must refine
        them: uniform in a multiple of ``n_bins`` bins, or edges that contain
        every ECE edge. ``"quantile"`` raises (pass its edges).

    Returns
    -------
    Atoms
        ``grid`` is the number of cells per ECE bin (the smallest, if
        uneven).

    Raises
    ------
    ValueError
        If ``stats`` is not a CalibrationStats or holds no predictions, or
        its bins do not refine the ECE bins.
    """
    return _from_stats(stats, n_bins, binning)[0]


# ------------------------------------------------------------------ Laplace
def _loglik(f: np.ndarray, c: np.ndarray, t: np.ndarray) -> float:
    return float(np.dot(c, f) - np.dot(t, np.logaddexp(0.0, f)))


def _newton(Ds, tau, bins, starts, nonempty, n_bins, off, c, t, prec, theta, max_iter=100):
    """Mode and negative Hessian of sum(c f - t log(1+e^f)) - theta' P theta / 2.

    f = off + Ds theta_s + tau theta_v[bins], theta = (theta_s, theta_v): a
    smooth design ``Ds`` (J, k) and M bin deviations; atoms sorted by bin
    (``starts`` of the ``nonempty`` bins). The Hessian is assembled by blocks,
    O(J k^2) instead of O(J (k + M)^2). Concave: damped Newton converges.
    """
    k = Ds.shape[1]

    def logits(th):
        f = off + Ds @ th[:k]
        if n_bins:
            f = f + tau * th[k:][bins]
        return f

    def objective(th):
        f = logits(th)
        return _loglik(f, c, t) - 0.5 * np.dot(prec * th, th), f

    def hessian(f):
        w = t * special.expit(f) * special.expit(-f)
        H = np.diag(prec)
        H[:k, :k] += (Ds.T * w) @ Ds
        if n_bins:
            cross = np.add.reduceat(Ds * w[:, None], starts, axis=0).T  # (k, nonempty)
            H[:k, k + nonempty] += tau * cross
            H[k + nonempty, :k] += tau * cross.T
            H[k + nonempty, k + nonempty] += tau**2 * np.add.reduceat(w, starts)
        return H

    obj, f = objective(theta)
    for _ in range(max_iter):
        r = c - t * special.expit(f)
        grad = -prec * theta
        grad[:k] += Ds.T @ r
        if n_bins:
            grad[k + nonempty] += tau * np.add.reduceat(r, starts)
        H = hessian(f)
        step = linalg.cho_solve(linalg.cho_factor(H, lower=True, check_finite=False), grad,
                                check_finite=False)
        dec = float(np.dot(grad, step))
        if dec < 1e-10:  # converged: H is the Hessian at theta
            return theta, H, obj
        lr = 1.0
        while True:
            new_theta = theta + lr * step
            new_obj, new_f = objective(new_theta)
            if new_obj >= obj + 0.25 * lr * dec or lr < 1e-8:
                break
            lr *= 0.5
        theta, obj, f = new_theta, new_obj, new_f
    return theta, hessian(f), obj


@dataclass(frozen=True)
class SmoothPosterior:
    """The Laplace mixture posterior of the smooth curve.

    The hyper-parameters :math:`h = (\\lambda, \\tau)` (smoothness scale,
    scale of the per-bin deviations) run over a product grid of L values.

    Attributes
    ----------
    basis : SmoothBasis
    lambdas, taus : ndarray of shape (L,)
        The grid of :math:`(\\lambda, \\tau)` pairs (``taus`` is 0 without
        bin deviations).
    prior_mass : ndarray of shape (L,)
        Prior probability each grid pair stands for (sums to 1).
    log_evidence : ndarray of shape (L,)
        Laplace :math:`\\log p(\\text{data} \\mid \\lambda_k, \\tau_k)`.
    weights : ndarray of shape (L,)
        Posterior probability of each grid pair.
    modes : ndarray of shape (L, P)
        :math:`\\hat\\theta_k` (``(a, b, u, v)``).
    chol : ndarray of shape (L, P, P)
        Lower Cholesky factors of the negative Hessians :math:`H_k`.
    prior_scales : ndarray of shape (P,)
        :math:`(s_a, s_b, 1, \\dots, 1)`.
    smoothness_scale, bin_scale : float
        Prior means :math:`s_\\lambda`, :math:`s_\\tau` (``bin_scale`` 0
        without bin deviations).
    log_marginal : float
        :math:`\\log p(\\text{data} \\mid \\text{smooth model})`.
    log_marginal_calibrated : float
        :math:`\\log p(\\text{data} \\mid f(x) = x) = \\sum_j c_j x_j - t_j \\log(1 + e^{x_j})`.
    grid : int or None
        Sub-cells per bin (None: exact, one atom per prediction).
    n_atoms : int
    grid_error : float
        Largest bound on the grid's ECE error over the first 200 draws (0 when exact);
        filled in by :func:`smooth_ece`.
    log_marginal_is, pareto_k, is_ess : float
        Importance-sampling correction of the Laplace mixture
        (:func:`importance_draws`): the log marginal likelihood it
        estimates, the Pareto :math:`\\hat k` of its weights (below 0.7 the
        corrected draws are reliable; Vehtari et al. 2024) and the effective
        sample size of the weights. NaN until computed.
    """

    basis: SmoothBasis
    lambdas: np.ndarray
    taus: np.ndarray
    prior_mass: np.ndarray
    log_evidence: np.ndarray
    weights: np.ndarray
    modes: np.ndarray
    chol: np.ndarray
    prior_scales: np.ndarray
    smoothness_scale: float
    bin_scale: float
    log_marginal: float
    log_marginal_calibrated: float
    grid: int | None
    n_atoms: int
    grid_error: float = 0.0
    log_marginal_is: float = float("nan")
    pareto_k: float = float("nan")
    is_ess: float = float("nan")

    @property
    def log_bayes_factor(self) -> float:
        """:math:`\\log B_{01}`: calibrated (identity curve) against the smooth model.

        Uses the importance-sampling marginal likelihood when it was computed
        and is reliable (Pareto :math:`\\hat k < 0.7`), else the Laplace one.
        """
        return self.log_marginal_calibrated - self.log_marginal_smooth

    @property
    def log_marginal_smooth(self) -> float:
        """The smooth model's log marginal likelihood used for the Bayes factor."""
        if np.isfinite(self.log_marginal_is) and self.pareto_k < PARETO_K_MAX:
            return float(self.log_marginal_is)
        return float(self.log_marginal)

    def column_scale(self, lam: np.ndarray, tau: np.ndarray) -> np.ndarray:
        """Per-draw multipliers of the design columns, shape (S, P): 1 for
        :math:`a, b`, :math:`\\lambda` for the spline, :math:`\\tau` for the bins."""
        b = self.basis
        lam = np.asarray(lam, dtype=np.float64).reshape(-1, 1)
        tau = np.asarray(tau, dtype=np.float64).reshape(-1, 1)
        return np.concatenate([np.ones((lam.shape[0], 2)), np.repeat(lam, b.n_spline, axis=1),
                               np.repeat(tau, b.n_bins, axis=1)], axis=1)

    def sample(self, num_samples: int, rng: np.random.Generator):
        """Draws of the Laplace mixture (uncorrected; see :func:`importance_draws`).

        Returns
        -------
        beta : ndarray of shape (S, P)
            :math:`(a, b, \\lambda u, \\tau v)`: the curve is
            :math:`x + [1, x, \\phi(x), e_{m(x)}]\\beta`.
        lam, tau : ndarray of shape (S,)
            The hyper-parameters of each draw.
        log_ratio : ndarray of shape (S,)
            :math:`\\log[p(\\theta \\mid \\eta_k)\\,\\text{mass}_k] - \\log[\\pi_k\\,
            \\mathcal N(\\theta; \\hat\\theta_k, H_k^{-1})]` of each draw, its
            component k: adding the log likelihood gives its importance weight.
        """
        k = rng.choice(self.lambdas.size, size=num_samples, p=self.weights)
        eps = rng.standard_normal((num_samples, self.modes.shape[1]))
        theta = np.empty_like(eps)
        logdet = np.empty(num_samples)
        for j in np.unique(k):
            sel = k == j
            # theta = mode + L^{-T} eps has covariance (L L^T)^{-1} = H^{-1}
            theta[sel] = self.modes[j] + linalg.solve_triangular(
                self.chol[j], eps[sel].T, lower=True, trans="T").T
            logdet[sel] = np.sum(np.log(np.diag(self.chol[j])))
        prec = 1.0 / self.prior_scales**2
        with np.errstate(divide="ignore"):
            log_ratio = (0.5 * np.sum(np.log(prec)) - 0.5 * (theta**2 @ prec)
                         + np.log(self.prior_mass[k]) - np.log(self.weights[k])
                         - logdet + 0.5 * np.sum(eps**2, axis=1))
        lam, tau = self.lambdas[k], self.taus[k]
        return theta * self.column_scale(lam, tau), lam, tau, log_ratio


def _check_scale(value: Any, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def _exponential_grid(scale: float, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Log-spaced values over HYPER_RANGE * scale and the Exponential(mean
    ``scale``) prior mass between geometric mid-points (tails included)."""
    values = scale * np.geomspace(*HYPER_RANGE, size)
    mids = np.sqrt(values[:-1] * values[1:])
    cdf = np.concatenate([[0.0], -np.expm1(-mids / scale), [1.0]])
    return values, np.diff(cdf)


def fit_smooth(
    atoms: Atoms,
    *,
    n_knots: int = DEFAULT_N_KNOTS,
    intercept_scale: float = 1.0,
    slope_scale: float = 0.5,
    smoothness_scale: float = 0.5,
    bin_scale: float | None = 0.25,
) -> SmoothPosterior:
    """Laplace mixture posterior of the smooth curve (see the module docstring).

    Parameters
    ----------
    atoms : Atoms
    n_knots : int, default 10
        Knots K of the natural cubic spline (K - 2 non-linear functions).
        The smoothness prior, not the knot count, controls the wiggle; what
        ten knots cannot follow (a staircase) the bin deviations take up.
    intercept_scale : float, default 1.0
        :math:`s_a`: prior sd of the logit shift at p = 0.5 (95% of prior
        curves have accuracy within 0.12..0.88 at confidence 0.5).
    slope_scale : float, default 0.5
        :math:`s_b`: prior sd of the change of slope in logit space
        (temperatures 1/(1+b) of 0.5 to 2 sit at about 1 to 2 sd).
    smoothness_scale : float, default 0.5
        :math:`s_\\lambda`: prior mean of the RMS non-linear deviation, in
        logit units (the exponential PC prior puts 14% on more than 1).
    bin_scale : float or None, default 0.25
        :math:`s_\\tau`: prior mean of the sd of the per-bin logit
        deviations :math:`\\tau v_m`, :math:`v_m \\sim \\mathcal N(0, 1)`
        (exponential PC prior: 2% above 1). None leaves them out (a purely
        smooth curve, which is biased for a curve it cannot follow however
        large n is).
    """
    n_knots = positive_int(n_knots, "n_knots")
    s_a = _check_scale(intercept_scale, "intercept_scale")
    s_b = _check_scale(slope_scale, "slope_scale")
    s_l = _check_scale(smoothness_scale, "smoothness_scale")
    s_t = None if bin_scale is None else _check_scale(bin_scale, "bin_scale")
    m = atoms.binning.n_bins if s_t is not None else 0
    basis = SmoothBasis.from_logits(atoms.x, atoms.trials.astype(np.float64), n_knots, m)
    Ds = basis.design(atoms.x)
    nonempty, starts = np.unique(atoms.bin, return_index=True)
    c = atoms.successes.astype(np.float64)
    t = atoms.trials.astype(np.float64)
    x = atoms.x
    scales = np.concatenate([[s_a, s_b], np.ones(basis.n_spline + basis.n_bins)])
    prec = 1.0 / scales**2
    half_logdet_prior = 0.5 * float(np.sum(np.log(prec)))
    lam_v, lam_m = _exponential_grid(s_l, N_LAMBDA) if basis.n_spline else (np.array([s_l]), np.ones(1))
    tau_v, tau_m = _exponential_grid(s_t, N_TAU) if m else (np.zeros(1), np.ones(1))
    # a snake through the grid so that each fit starts from a neighbour's mode
    pairs = [(i, j if i % 2 == 0 else tau_v.size - 1 - j)
             for i in range(lam_v.size) for j in range(tau_v.size)]
    lambdas = np.array([lam_v[i] for i, _ in pairs])
    taus = np.array([tau_v[j] for _, j in pairs])
    mass = np.array([lam_m[i] * tau_m[j] for i, j in pairs])
    post = SmoothPosterior(
        basis=basis, lambdas=lambdas, taus=taus, prior_mass=mass, log_evidence=np.empty(0),
        weights=np.empty(0), modes=np.empty(0), chol=np.empty(0), prior_scales=scales,
        smoothness_scale=s_l, bin_scale=0.0 if s_t is None else s_t, log_marginal=np.nan,
        log_marginal_calibrated=_loglik(x, c, t), grid=atoms.grid, n_atoms=int(atoms.p.size),
    )
    cols = post.column_scale(lambdas, taus)
    p_dim = basis.n_coef
    modes = np.empty((lambdas.size, p_dim))
    chol = np.empty((lambdas.size, p_dim, p_dim))
    log_ev = np.empty(lambdas.size)
    theta = np.zeros(p_dim)
    ks = basis.n_smooth
    for k in range(lambdas.size):
        theta, H, obj = _newton(Ds * cols[k, :ks], taus[k], atoms.bin, starts, nonempty, m,
                                x, c, t, prec, theta)
        L = np.linalg.cholesky(H)
        modes[k], chol[k] = theta, L
        log_ev[k] = obj + half_logdet_prior - float(np.sum(np.log(np.diag(L))))
    log_joint = log_ev + np.log(mass)
    log_marg = float(special.logsumexp(log_joint))
    weights = np.exp(log_joint - log_marg)
    weights /= weights.sum()
    return replace(post, log_evidence=log_ev, weights=weights, modes=modes, chol=chol,
                   log_marginal=log_marg)


def draw_loglik(atoms: Atoms, basis: SmoothBasis, beta: np.ndarray,
                *, chunk_elems: int = 4_000_000) -> np.ndarray:
    """:math:`\\sum_j c_j f(x_j) - t_j \\log(1 + e^{f(x_j)})` for each draw, shape (S,)."""
    c = atoms.successes.astype(np.float64)
    t = atoms.trials.astype(np.float64)
    out = np.empty(beta.shape[0])
    step = max(1, chunk_elems // max(atoms.p.size, 1))
    for a in range(0, beta.shape[0], step):
        f = basis.logits(atoms.x, atoms.bin, beta[a:a + step])
        out[a:a + step] = f @ c - np.logaddexp(0.0, f) @ t
    return out


def importance_draws(atoms: Atoms, post: SmoothPosterior, num_samples: int,
                     rng: np.random.Generator):
    """Laplace-mixture draws corrected by Pareto-smoothed importance resampling.

    ``num_samples`` proposals :math:`(k, \\theta)` from the mixture get log
    weights :math:`\\ell(\\theta, \\eta_k) + \\log[p(\\theta\\mid\\eta_k)\\,
    \\text{mass}_k] - \\log[\\pi_k \\mathcal N(\\theta; \\hat\\theta_k, H_k^{-1})]`,
    smoothed by PSIS (``arviz.psislw``), and ``num_samples`` draws are
    resampled with those weights. The target is the exact posterior on the
    hyper-parameter grid, so what remains of the Laplace approximation's
    error (skewness of the conditional posteriors, which NUTS shows at the
    ends of the curve at n = 2000) is removed as far as the weights allow:
    the Pareto :math:`\\hat k` says how far (below 0.7: reliable). The mean of
    the raw weights estimates the marginal likelihood.

    Returns
    -------
    beta, lam, tau : the resampled draws (as :meth:`SmoothPosterior.sample`)
    post : SmoothPosterior
        With ``log_marginal_is``, ``pareto_k`` and ``is_ess`` filled in.
    """
    from .result import _arviz

    beta, lam, tau, log_ratio = post.sample(num_samples, rng)
    logw = draw_loglik(atoms, post.basis, beta) + log_ratio
    log_marg = float(special.logsumexp(logw) - np.log(num_samples))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # arviz warns about large k itself; we report it
        smoothed, k_hat = _arviz().psislw(logw - logw.max())
    w = np.exp(smoothed - special.logsumexp(smoothed))
    ess = float(1.0 / np.sum(w**2))
    idx = rng.choice(num_samples, size=num_samples, p=w / w.sum())
    post = replace(post, log_marginal_is=log_marg, pareto_k=float(k_hat), is_ess=ess)
    return beta[idx], lam[idx], tau[idx], post


# --------------------------------------------------------------- ECE draws
def ece_draws(atoms: Atoms, basis: SmoothBasis, beta: np.ndarray, rng: np.random.Generator,
              *, chunk_elems: int = 4_000_000):
    """ECE and per-bin summaries for curve draws ``beta`` under Bayesian-bootstrap weights.

    Parameters
    ----------
    atoms : Atoms
    basis : SmoothBasis
    beta : ndarray of shape (S, P)
        Curve coefficients (:meth:`SmoothPosterior.sample`).
    rng : numpy.random.Generator
        Draws the bootstrap weights, one Dirichlet(trials) vector per draw.

    Returns
    -------
    ece : ndarray of shape (S,)
    accuracy, confidence, weight : ndarrays of shape (S, M)
    bound : ndarray of shape (min(S, 200),)
        The grid error bound of each of the first 200 draws (zeros when
        the atoms are exact); it hardly varies between draws, and computing
        it for all would double the cost.
    """
    m = atoms.binning.n_bins
    s_total = beta.shape[0]
    J = atoms.p.size
    nonempty, starts = np.unique(atoms.bin, return_index=True)
    if not atoms.exact:
        xl, xu = logit_confidence(atoms.lower), logit_confidence(atoms.upper)
        h = atoms.upper - atoms.lower
    acc = np.empty((s_total, m))
    conf = np.empty((s_total, m))
    wt = np.zeros((s_total, m))
    ece = np.empty(s_total)
    bound = np.zeros(s_total)
    step = max(1, chunk_elems // max(J, 1))
    edges = atoms.binning.edges
    center = 0.5 * (edges[:-1] + edges[1:])
    empty = np.setdiff1d(np.arange(m), nonempty)
    if empty.size:
        xc = logit_confidence(center[empty])
    for a in range(0, s_total, step):
        b = min(s_total, a + step)
        B = beta[a:b]
        s = special.expit(basis.logits(atoms.x, atoms.bin, B))  # (s, J)
        if atoms.exact:
            g = rng.standard_exponential((b - a, J))
        else:
            g = rng.standard_gamma(atoms.trials.astype(np.float64), size=(b - a, J))
        g /= g.sum(axis=1, keepdims=True)
        wsum = np.add.reduceat(g, starts, axis=1)
        acc_num = np.add.reduceat(g * s, starts, axis=1)
        conf_num = np.add.reduceat(g * atoms.p, starts, axis=1)
        ece[a:b] = np.abs(acc_num - conf_num).sum(axis=1)
        wt[a:b, nonempty] = wsum
        acc[a:b, nonempty] = acc_num / wsum
        conf[a:b, nonempty] = conf_num / wsum
        if empty.size:
            acc[a:b, empty] = special.expit(basis.logits(xc, empty, B))
            conf[a:b, empty] = center[empty]
        if not atoms.exact and a < BOUND_DRAWS:
            e = min(b, BOUND_DRAWS) - a
            osc = np.abs(special.expit(basis.logits(xu, atoms.bin, B[:e]))
                         - special.expit(basis.logits(xl, atoms.bin, B[:e])))
            bound[a:a + e] = (g[:e] * (h + osc)).sum(axis=1)
    return ece, acc, conf, wt, bound[:BOUND_DRAWS] if not atoms.exact else bound


def _curve_grid(p: np.ndarray) -> np.ndarray:
    return np.linspace(float(p.min()), float(p.max()), CURVE_POINTS)


def _curve(basis: SmoothBasis, binning: Binning, grid: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """:math:`P(z=1 \\mid p)` at confidences ``grid`` for each draw, shape (S, G)."""
    xg = logit_confidence(grid)
    return special.expit(basis.logits(xg, binning.index(grid), beta))


# ------------------------------------------------------------------ result
@dataclass(frozen=True, repr=False, eq=False)
class SmoothBayesianECE(BayesianECE):
    """:class:`~bece.result.BayesianECE` of the smooth model, with the curve.

    Extra attributes
    ----------------
    curve_grid : ndarray of shape (G,)
        Confidences (over the observed range) where the curve is drawn.
    curve : ndarray of shape (S, G)
        Posterior draws of :math:`P(z = 1 \\mid p)` at ``curve_grid``
        (bin deviations included, so it may jump at bin edges).
    coefficients : ndarray of shape (S, P)
        :math:`(a, b, \\lambda u, \\tau v)` of each draw.
    smoothness, bin_sd : ndarray of shape (S,)
        :math:`\\lambda` and :math:`\\tau` of each draw.
    """

    curve_grid: np.ndarray = field(default=None)
    curve: np.ndarray = field(default=None)
    coefficients: np.ndarray = field(default=None)
    smoothness: np.ndarray = field(default=None)
    bin_sd: np.ndarray = field(default=None)

    def to_inference_data(self):
        """As :meth:`BayesianECE.to_inference_data`, plus in ``posterior``:
        ``curve`` (chain, draw, curve_confidence — the confidences of
        ``curve_grid``), ``intercept`` (:math:`a`), ``slope`` (:math:`1 + b`),
        ``smoothness`` (:math:`\\lambda`), ``bin_sd`` (:math:`\\tau`), and the
        attributes ``log_bayes_factor_calibrated`` and ``grid_error``."""
        import xarray as xr

        idata = super().to_inference_data()
        post = idata.posterior
        post["curve"] = xr.DataArray(
            self.curve[None], dims=("chain", "draw", "curve_confidence"),
            coords={"curve_confidence": self.curve_grid},
        )
        post["intercept"] = (("chain", "draw"), self.coefficients[None, :, 0])
        post["slope"] = (("chain", "draw"), 1.0 + self.coefficients[None, :, 1])
        post["smoothness"] = (("chain", "draw"), self.smoothness[None])
        post["bin_sd"] = (("chain", "draw"), self.bin_sd[None])
        if isinstance(self.params, SmoothPosterior):
            post.attrs["log_bayes_factor_calibrated"] = self.params.log_bayes_factor
            post.attrs["grid_error"] = self.params.grid_error
        return idata


def _smooth_result(atoms, stats, post, beta, lam, tau, rng, method, grid_points):
    from .metrics import plugin_ece

    ece, acc, conf, wt, bound = ece_draws(atoms, post.basis, beta, rng)
    post = replace(post, grid_error=float(bound.max()) if bound.size else 0.0)
    return SmoothBayesianECE(
        draws=ece, accuracy=acc, confidence=conf, weight=wt, plugin=plugin_ece(stats),
        stats=stats, model="smooth", method=method, preset=None, params=post,
        curve_grid=grid_points, curve=_curve(post.basis, atoms.binning, grid_points, beta),
        coefficients=beta, smoothness=lam, bin_sd=tau,
    )


def _prepare(y_true, y_prob, y_pred, n_bins, binning, grid):
    z, p = as_outcomes(y_true, y_prob, y_pred)
    bins = make_binning(p, n_bins, binning)
    stats = CalibrationStats.from_outcomes(z, p, bins)
    atoms = make_atoms(z, p, bins, _check_grid(grid, p.size))
    # the curve over the atoms' range: the same whether the fine grid came
    # from the predictions or from their statistics
    return atoms, stats, _curve_grid(p if atoms.exact else atoms.p)


def _laplace(atoms, stats, grid_points, rng, num_samples, **model):
    with single_threaded_blas():
        post = fit_smooth(atoms, **model)
        beta, lam, tau, post = importance_draws(atoms, post, num_samples, rng)
        return _smooth_result(atoms, stats, post, beta, lam, tau, rng, "laplace", grid_points)


def smooth_ece(
    y_true: Any,
    y_prob: Any,
    *,
    y_pred: Any = None,
    n_bins: int | None = None,
    binning: Any = "uniform",
    n_knots: int = DEFAULT_N_KNOTS,
    intercept_scale: float = 1.0,
    slope_scale: float = 0.5,
    smoothness_scale: float = 0.5,
    bin_scale: float | None = 0.25,
    grid: Any = "auto",
    num_samples: int = 10_000,
    seed: Any = 0,
) -> SmoothBayesianECE:
    """Posterior over the ECE under the smooth calibration-curve model (Laplace).

    ``bece.bayesian_ece(..., model="smooth")`` calls this with the defaults.

    Parameters
    ----------
    y_true, y_prob, y_pred, n_bins, binning
        As :func:`bece.bayesian_ece`: binary ``P(y=1)``, class probabilities
        (top-label) or the seed's triples; the ECE bins.
    n_knots, intercept_scale, slope_scale, smoothness_scale, bin_scale
        The model and prior; see :func:`fit_smooth`.
    grid : "auto", None or int, default "auto"
        None: one atom per prediction (exact); an int r: r sub-cells per bin
        (module docstring, with the error bound); "auto": exact up to
        2,000 predictions, 128 sub-cells above.
    num_samples : int, default 10_000
    seed : int or numpy.random.Generator, default 0

    Returns
    -------
    SmoothBayesianECE
        ``model="smooth"``, ``method="laplace"``; ``params`` is the
        :class:`SmoothPosterior`.

    Examples
    --------
    >>> import numpy as np
    >>> from bece.smooth import smooth_ece
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = rng.uniform(size=500) < p ** 2          # over-confident on class 1
    >>> r = smooth_ece(y, p, seed=1)
    >>> r.draws.shape, r.accuracy.shape, r.curve.shape
    ((10000,), (10000, 15), (10000, 101))
    >>> lo, hi = r.interval(0.9)
    >>> bool(lo < 1 / 6 < hi)                       # the population ECE is about 1/6
    True
    """
    num_samples = positive_int(num_samples, "num_samples")
    rng = as_generator(seed)
    atoms, stats, grid_points = _prepare(y_true, y_prob, y_pred, n_bins, binning, grid)
    return _laplace(atoms, stats, grid_points, rng, num_samples, n_knots=n_knots,
                    intercept_scale=intercept_scale, slope_scale=slope_scale,
                    smoothness_scale=smoothness_scale, bin_scale=bin_scale)


def smooth_posterior_ece(
    stats: CalibrationStats,
    *,
    n_bins: int | None = None,
    binning: Any = "uniform",
    n_knots: int = DEFAULT_N_KNOTS,
    intercept_scale: float = 1.0,
    slope_scale: float = 0.5,
    smoothness_scale: float = 0.5,
    bin_scale: float | None = 0.25,
    num_samples: int = 10_000,
    seed: Any = 0,
) -> SmoothBayesianECE:
    """Posterior over the ECE under the smooth model, from fine statistics.

    The smooth model's counterpart of :func:`bece.posterior_ece`
    (``bece.posterior_ece(stats, model="smooth")`` calls this). ``stats``
    holds the predictions' counts and confidence sums in bins that refine
    the ECE bins -- collect them with ``binning=fine_binning(n_bins)`` from
    arrays, files read in chunks, Dask or JAX arrays, and add chunks with
    ``+``. Each non-empty fine bin is one atom of the fine grid
    (:func:`atoms_from_stats`; module docstring, "Large n", for the error
    bound, reported as ``params.grid_error``). With the same seed the draws
    are those of :func:`smooth_ece` with ``grid=grid`` on the predictions
    themselves: identical when the statistics come from one pass over the
    same arrays, equal to float64 rounding when chunks are added.

    Parameters
    ----------
    stats : CalibrationStats
        Statistics in fine bins (:func:`fine_binning`).
    n_bins, binning
        The ECE bins (default 15 uniform), which the bins of ``stats`` must
        refine. ``"quantile"`` raises ``ValueError``: pass the edges (from a
        first pass) here and to :func:`fine_binning`.
    n_knots, intercept_scale, slope_scale, smoothness_scale, bin_scale
        The model and prior; see :func:`fit_smooth`.
    num_samples : int, default 10_000
    seed : int or numpy.random.Generator, default 0

    Returns
    -------
    SmoothBayesianECE
        As :func:`smooth_ece`; ``.stats`` holds the statistics added up to
        the ECE bins (for the plug-in ECE and per-bin tables), the curve is
        drawn over the range of the fine bins' mean confidences.

    Raises
    ------
    ValueError
        ``stats`` not a CalibrationStats or empty; its bins do not refine the
        ECE bins (e.g. 100 uniform bins for 15 ECE bins); a bad option.

    Examples
    --------
    >>> import numpy as np
    >>> from bece import CalibrationStats
    >>> from bece.smooth import fine_binning, smooth_ece, smooth_posterior_ece
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=20_000)
    >>> y = rng.uniform(size=20_000) < p ** 2
    >>> fine = fine_binning(15)                      # 15 ECE bins x 128 sub-cells
    >>> parts = [CalibrationStats.from_arrays(y[i:i + 5000], p[i:i + 5000], binning=fine)
    ...          for i in range(0, 20_000, 5000)]
    >>> r = smooth_posterior_ece(sum(parts), n_bins=15, num_samples=2000, seed=1)
    >>> s = smooth_ece(y, p, n_bins=15, grid=128, num_samples=2000, seed=1)
    >>> bool(np.allclose(r.draws, s.draws, rtol=1e-9, atol=0))
    True
    """
    num_samples = positive_int(num_samples, "num_samples")
    rng = as_generator(seed)
    atoms, coarse = _from_stats(stats, n_bins, binning)
    return _laplace(atoms, coarse, _curve_grid(atoms.p), rng, num_samples, n_knots=n_knots,
                    intercept_scale=intercept_scale, slope_scale=slope_scale,
                    smoothness_scale=smoothness_scale, bin_scale=bin_scale)


# -------------------------------------------------------------- NUTS check
def cross_check_smooth(
    y_true: Any,
    y_prob: Any,
    *,
    y_pred: Any = None,
    n_bins: int | None = None,
    binning: Any = "uniform",
    n_knots: int = DEFAULT_N_KNOTS,
    intercept_scale: float = 1.0,
    slope_scale: float = 0.5,
    smoothness_scale: float = 0.5,
    bin_scale: float | None = 0.25,
    grid: Any = "auto",
    num_chains: int = 4,
    num_warmup: int = 1000,
    num_samples: int = 1000,
    seed: int = 0,
    num_closed_form: int = 20_000,
    closed_form: BayesianECE | None = None,
    false_alarm: float = 1e-4,
    progress_bar: bool = False,
    target_accept_prob: float = 0.9,
    curve_points: int = 9,
):
    """NUTS on :func:`bece.models.smooth.smooth_model` against the Laplace path.

    The model's knots, transform, atoms and prior are those of
    :func:`smooth_ece`; NUTS samples :math:`(a, b, \\lambda, u, \\tau, v)`
    (non-centred, so the funnels at :math:`\\lambda, \\tau \\to 0` are no
    problem), and each NUTS draw gets its own Bayesian-bootstrap weights
    (the posterior factorises, see the module docstring). Compared, as in
    :func:`bece.cross_check`, at the Laplace draws' quantiles 0.05, 0.25,
    0.5, 0.75 and 0.95 in probability space with the MCSE of both sides:
    the ECE, each bin's accuracy and the curve at ``curve_points``
    confidences (equally spaced quantiles of the data, ends excluded).
    Agreement: converged (R-hat < 1.01, bulk and tail ESS >= 400) and every
    z-score below the Bonferroni threshold for family-wise false-alarm
    rate ``false_alarm``. NUTS runs in float64 within the call (a scoped
    ``jax.enable_x64``), so its draws do not depend on ``jax_enable_x64``.

    Returns
    -------
    bece.CrossCheck
        ``model="smooth"``; ``closed_form`` holds the Laplace draws
        (``method="laplace"``), ``nuts`` the NUTS ones (``method="nuts"``).
    """
    from .crosscheck import (
        CrossCheck,
        _compare,
        _gap_table,
        check_run_arguments,
        mcmc_inference_data,
        run_nuts,
    )
    from .models.smooth import smooth_model

    check_run_arguments(false_alarm=false_alarm, seed=seed, num_chains=num_chains,
                        num_warmup=num_warmup, num_samples=num_samples,
                        num_closed_form=num_closed_form, curve_points=curve_points)
    atoms, stats, grid_points = _prepare(y_true, y_prob, y_pred, n_bins, binning, grid)
    with single_threaded_blas():
        post = fit_smooth(atoms, n_knots=n_knots, intercept_scale=intercept_scale,
                          slope_scale=slope_scale, smoothness_scale=smoothness_scale,
                          bin_scale=bin_scale)
    basis = post.basis
    if basis.n_spline == 0:
        raise ValueError("cross_check(model='smooth') needs at least 3 distinct confidences")
    rng = np.random.default_rng([seed, 1])
    if closed_form is None:
        with single_threaded_blas():
            beta_c, lam_c, tau_c, post = importance_draws(atoms, post, num_closed_form, rng)
            closed_form = _smooth_result(atoms, stats, post, beta_c, lam_c, tau_c, rng,
                                         "laplace", grid_points)
    data = {"x": atoms.x, "z": atoms.successes}
    if not atoms.exact:
        data["trials"] = atoms.trials
    if basis.n_bins:
        data.update(bins=atoms.bin, n_bins=basis.n_bins, bin_scale=post.bin_scale)
    mcmc = run_nuts(
        smooth_model, basis.knots, basis.transform, num_chains=num_chains, num_warmup=num_warmup,
        num_samples=num_samples, seed=seed, progress_bar=progress_bar,
        target_accept_prob=target_accept_prob, intercept_scale=float(post.prior_scales[0]),
        slope_scale=float(post.prior_scales[1]), smoothness_scale=post.smoothness_scale, **data,
    )
    smp = {k: np.asarray(v, dtype=np.float64) for k, v in mcmc.get_samples(group_by_chain=True).items()}
    flat = {k: v.reshape((num_chains * num_samples,) + v.shape[2:]) for k, v in smp.items()}
    lam = flat["lam"]
    tau = flat["tau"] if basis.n_bins else np.zeros_like(lam)
    theta = [flat["a"][:, None], flat["b"][:, None], flat["u"]]
    if basis.n_bins:
        theta.append(flat["v"])
    beta = np.concatenate(theta, axis=1) * post.column_scale(lam, tau)
    nuts_result = _smooth_result(atoms, stats, post, beta, lam, tau,
                                 np.random.default_rng([seed, 2]), "nuts", grid_points)
    divergences = int(np.asarray(mcmc.get_extra_fields()["diverging"]).sum())
    az = _arviz()
    idata = mcmc_inference_data(mcmc)
    probe = np.quantile(atoms.p, np.linspace(0, 1, curve_points + 2)[1:-1])
    shape = (num_chains, num_samples)
    chains = {
        "ece": nuts_result.draws.reshape(shape),
        "accuracy": nuts_result.accuracy.reshape(shape + (-1,)),
        "curve": _curve(basis, atoms.binning, probe, beta).reshape(shape + (-1,)),
    }
    refs = {
        "ece": closed_form.draws[:, None],
        "accuracy": closed_form.accuracy,
        "curve": _curve(basis, atoms.binning, probe, closed_form.coefficients),
    }
    params = {k: smp[k] for k in ("a", "b", "lam", "u", "tau", "v") if k in smp}
    table, rhat, ess_bulk, ess_tail, max_z, z_threshold, converged = _compare(
        az, chains, refs, num_chains, num_samples, false_alarm, diagnose=params)
    return CrossCheck(
        model="smooth", agree=bool(converged and max_z <= z_threshold), converged=converged,
        max_z=max_z, z_threshold=z_threshold, rhat_max=rhat, ess_bulk_min=ess_bulk,
        ess_tail_min=ess_tail, divergences=divergences, table=table,
        gap=_gap_table(nuts_result, closed_form), nuts=nuts_result, closed_form=closed_form,
        inference_data=idata,
    )
