r"""The smooth model of a regression forecaster's PIT distribution, in NumPyro.

A forecaster is calibrated when its PIT :math:`u = F(y)` is uniform on
[0, 1]. The model describes the PIT distribution on the grid of G equal
cells :math:`(k/G, (k+1)/G]` that :class:`bece.regression.PITHistogram`
counts, by its cell probabilities

.. math::

    \pi_k \propto M_k(a, b)\, \exp\big(\lambda\, \psi(c_k)^\top w\big),
    \qquad
    M_k(a, b) = \Phi(a + e^{b} z_{k+1}) - \Phi(a + e^{b} z_k),
    \qquad z_k = \Phi^{-1}(k / G),

    a \sim \mathcal N(0, s_a^2), \quad b \sim \mathcal N(0, s_b^2), \quad
    \lambda \sim \mathrm{Exponential}(\text{mean } s_\lambda), \quad
    w \sim \mathcal N(0, I_K),

    \text{counts} \sim \mathrm{Multinomial}(n, \pi).

The first factor is the probit-normal family
:math:`C(p) = P(u \le p) = \Phi(a + e^{b}\,\Phi^{-1}(p))`: a Gaussian
forecast :math:`N(\mu + a\sigma, (e^{b}\sigma)^2)` of a target
:math:`N(\mu, \sigma^2)` has exactly this PIT distribution, so ``shift``
:math:`a` is the forecast's mean error and ``exp(log_spread)`` its standard
deviation, both in units of the target's standard deviation (:math:`b < 0`:
over-confident, a U-shaped PIT). The second factor tilts the log density by
a smooth function of u: :math:`\psi_k(u) = \sqrt2 \cos(k\pi u)\, d_k`,
k = 1..K, the eigenfunctions of the roughness penalty
:math:`\int h''(u)^2\,du` on [0, 1] (zero slope at the ends), with
:math:`d_k \propto k^{-2}` normalised to :math:`\sum_k d_k^2 = 1`, so
:math:`w \sim \mathcal N(0, I)` is the smoothing-spline prior and
:math:`\lambda` the prior root-mean-square of the tilt over u, in log
density units; its exponential (penalised-complexity) prior shrinks to no
tilt. :math:`c_k` is the centre of cell k. The uniform distribution --
calibration -- is :math:`a = b = 0, w = 0`.

Grouped counts (``share=``; :mod:`bece._regression.cells`). The randomised
PIT of a quantile forecast is uniform between its levels, and the rank of
y among S draws of a sample forecast is Binomial(S, u) given the
continuous PIT u: only the counts :math:`N_j` in the observed cells carry
information. With the matrix :math:`A_{jk}` (the share of fine cell k in
observed cell j, or the binomial probability of rank j averaged over fine
cell k), the likelihood is

.. math::

    N \sim \mathrm{Multinomial}(n, A\pi),

the model :func:`bece.regression.bayesian_calibration_error` fits with
``forecast_levels=`` or ``forecast_draws=``; the fine grid is then
:func:`bece._regression.smooth.model_grid`'s (probit-spaced cells near 0
and 1 for the ranks).

The model depends on numpyro and jax only. The cell probabilities are computed on
the log scale from ``log_ndtr`` (reflected in the upper tail), so that the
model runs in float32 as well as in float64.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist
from jax.scipy.special import log_ndtr, logsumexp

from ._smooth import scaled_standard_normal

__all__ = ["pit_cell_log_mass", "pit_dirichlet_model", "pit_model"]


def _log1mexp(d):
    """log(1 - exp(d)) for d <= 0 (Maechler's two branches)."""
    d = jnp.minimum(d, 0.0)
    return jnp.where(d > -0.6931471805599453, jnp.log(-jnp.expm1(d)), jnp.log1p(-jnp.exp(d)))


def pit_cell_log_mass(z_inner, shift, log_spread):
    r""":math:`\log M_k = \log[\Phi(a + e^b z_{k+1}) - \Phi(a + e^b z_k)]`, k = 0..G-1.

    Parameters
    ----------
    z_inner : array of shape (G - 1,)
        :math:`\Phi^{-1}(k/G)`, k = 1..G-1 (the finite edges; the outer ones
        are :math:`\mp\infty`).
    shift, log_spread : scalars
        :math:`a`, :math:`b`.

    Returns
    -------
    array of shape (G,)
    """
    x = shift + jnp.exp(log_spread) * jnp.asarray(z_inner)
    lo, hi = x[:-1], x[1:]
    upper = lo + hi > 0  # the cell's middle above 0: use the upper tail
    a = jnp.where(upper, -hi, lo)
    c = jnp.where(upper, -lo, hi)
    la, lc = log_ndtr(a), log_ndtr(c)
    middle = lc + _log1mexp(la - lc)
    first = log_ndtr(x[:1])
    last = log_ndtr(-x[-1:])
    return jnp.concatenate([first, middle, last])


def pit_model(
    z_inner,
    tilt,
    *,
    n,
    counts=None,
    share=None,
    shift_scale=0.6,
    spread_scale=0.67,
    smoothness_scale=0.25,
    tilt_information=None,
):
    r"""The smooth PIT model with a multinomial likelihood for the cell counts.

    Parameters
    ----------
    z_inner : array of shape (G - 1,)
        :math:`\Phi^{-1}(k/G)`, k = 1..G-1 (``pit_grid(G).z[1:-1]``), or the
        inner probit edges of another fine grid
        (``bece._regression.smooth.model_grid(hist, cells).z[1:-1]``).
    tilt : array of shape (G, K)
        :math:`\psi_j(c_k)` at the cell centres (``bece._regression.smooth.tilt_basis``,
        or ``model_grid(...).basis``).
    n : int
        Number of PIT values (the multinomial's total).
    counts : int array of shape (G,) or (m,), optional
        The PIT histogram, or with ``share`` the counts of the m observed
        cells; None samples them (prior or posterior predictive).
    share : array of shape (m, G), optional
        :math:`A_{jk}` (``ObservedCells.share`` of :mod:`bece._regression.cells`,
        each column summing to 1): the counts are then those of the observed
        cells, Multinomial(n, A pi) (module docstring).
    shift_scale, spread_scale : float, default 0.6, 0.67
        Prior standard deviations :math:`s_a`, :math:`s_b`.
    smoothness_scale : float, default 0.25
        Prior mean :math:`s_\lambda` of the tilt's scale.
    tilt_information : array of shape (K,), optional
        The data's information :math:`I_k` about each tilt coefficient
        :math:`\lambda w_k` (the negative second derivative of the log
        likelihood). NUTS then samples ``w_scaled`` :math:`= g_k w_k \sim
        \mathcal N(0, g_k^2)`, :math:`g_k = \sqrt{1 + \lambda^2 I_k}`, and
        records ``w`` beside it: given :math:`\lambda`, :math:`w_k`'s
        posterior sd is about :math:`1/g_k` under a Gaussian likelihood, so
        ``w_scaled``'s is about 1 at every :math:`\lambda`, where the model
        as written (None) is a funnel once the data pin :math:`\lambda w`
        down. The posterior is the same; only the geometry NUTS sees changes.

    Sample sites: ``shift`` (a), ``log_spread`` (b), ``lam``, ``w`` (K; with
    ``tilt_information``, ``w_scaled`` and ``w`` recorded beside it) and
    the observed ``counts``. Nothing of size G is recorded.

    Examples
    --------
    At :math:`a = b = 0` and :math:`w = 0` the PIT is uniform: each of the
    G = 100 cells has probability 1/100.

    >>> import numpy as np
    >>> from numpyro import handlers
    >>> from bece.models import pit_model
    >>> from bece._regression.smooth import pit_grid
    >>> grid = pit_grid(100)                        # probit edges and the tilt basis
    >>> calibrated = {"shift": 0.0, "log_spread": 0.0, "lam": 0.25, "w": np.zeros(grid.basis.shape[1])}
    >>> model = handlers.condition(pit_model, calibrated)
    >>> trace = handlers.trace(model).get_trace(grid.z[1:-1], grid.basis, n=500, counts=np.full(100, 5))
    >>> trace["counts"]["is_observed"], bool(np.allclose(trace["counts"]["fn"].probs, 0.01, atol=1e-5))
    (True, True)
    """
    tilt = jnp.asarray(tilt)
    a = numpyro.sample("shift", dist.Normal(0.0, shift_scale))
    b = numpyro.sample("log_spread", dist.Normal(0.0, spread_scale))
    lam = numpyro.sample("lam", dist.Exponential(1.0 / smoothness_scale))
    w = scaled_standard_normal("w", "tilt", tilt.shape[1], lam, tilt_information)
    logits = pit_cell_log_mass(z_inner, a, b) + lam * (tilt @ w)
    if share is not None:  # log P_j = log sum_k A_jk pi_k
        log_pi = logits - logsumexp(logits)
        logits = logsumexp(log_pi[None, :], axis=1, b=jnp.asarray(share))
    numpyro.sample("counts", dist.Multinomial(total_count=n, logits=logits), obs=counts)


def pit_dirichlet_model(alpha, *, n, counts=None):
    r"""The Dirichlet model of the PIT histogram at the levels :math:`p_1 < \dots < p_J`.

    The J + 1 cells :math:`[0, p_1], (p_1, p_2], \dots, (p_J, 1]` have
    probabilities :math:`\pi \sim \mathrm{Dirichlet}(\alpha)` and the counts
    of the PIT values in them are :math:`\mathrm{Multinomial}(n, \pi)`; the
    calibration curve at the levels is :math:`C_j = \sum_{k < j} \pi_k`,
    recorded as ``curve``. Its posterior is Dirichlet(alpha + counts): the
    closed form of ``bece.regression.bayesian_calibration_error(...,
    model="dirichlet")``.

    Parameters
    ----------
    alpha : array of shape (J + 1,)
        Prior concentrations.
    n : int
        Number of PIT values.
    counts : int array of shape (J + 1,), optional
        The counts; None samples them.

    Examples
    --------
    >>> import numpy as np
    >>> from numpyro import handlers
    >>> from bece.models import pit_dirichlet_model
    >>> model = handlers.condition(pit_dirichlet_model, {"pi": np.array([0.1, 0.4, 0.4, 0.1])})
    >>> trace = handlers.trace(model).get_trace(np.ones(4), n=10, counts=np.array([1, 4, 4, 1]))
    >>> [round(float(c), 6) for c in trace["curve"]["value"]]      # C at the three levels
    [0.1, 0.5, 0.9]
    """
    pi = numpyro.sample("pi", dist.Dirichlet(jnp.asarray(alpha)))
    numpyro.deterministic("curve", jnp.cumsum(pi)[:-1])
    numpyro.sample("counts", dist.Multinomial(total_count=n, probs=pi), obs=counts)
