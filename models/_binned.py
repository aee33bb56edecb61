r"""The binned BECE model in NumPyro: literal and conjugate, per observation and collapsed.

For M bins with intervals :math:`I_m = [l_m, u_m)`, centres :math:`c_m`:

.. math::

    q &\\sim \\mathrm{Dirichlet}(\\alpha), \\qquad \\alpha \\in \\mathbb R_{>0}^{2 \\times M}, \\\\
    \\mu_m &\\sim \\mathcal N(c_m, \\tau_m^2) \\text{ restricted to } I_m, \\\\
    (z_i, b_i) &\\sim \\mathrm{Categorical}(q) \\quad\\text{(cell } z_i M + b_i\\text{)}, \\\\
    p_i \\mid b_i = m &\\sim
    \\begin{cases}
      \\mathrm{TruncatedNormal}(\\mu_m, \\sigma_m^2, I_m) & \\text{literal (the BECE paper's model)} \\\\
      \\mathcal N(\\mu_m, \\sigma_m^2) & \\text{conjugate (closed form exact)}
    \\end{cases}

Each model records, with ``numpyro.deterministic``, the bin mass
``weight`` :math:`\\pi_m = q_{0,m} + q_{1,m}`, the bin ``accuracy``
:math:`q_{1,m}/\\pi_m`, the bin's mean ``confidence`` (:math:`\\mu_m` in the
conjugate model, the truncated-Normal mean :math:`E[p \\mid \\mu_m]` in the
literal one) and the population binned ``ece``
:math:`\\sum_m |q_{1,m} - \\pi_m\\,\\mathrm{confidence}_m|`.

The *collapsed* versions take the sufficient statistics instead of the
observations, so one log-density evaluation costs O(M) whatever n is. With
:math:`n_m` points in bin m, mean :math:`\\bar p_m` and centred sum of
squares :math:`SS_m = \\sum (p_i - \\bar p_m)^2`,

.. math::

    \\sum_{i \\in m} \\log \\mathcal N(p_i; \\mu_m, \\sigma_m^2)
    = -\\frac{n_m}{2}\\log(2\\pi\\sigma_m^2)
      - \\frac{SS_m + n_m(\\bar p_m - \\mu_m)^2}{2\\sigma_m^2},

and the literal model subtracts :math:`n_m \\log Z_m(\\mu_m)` with
:math:`Z_m(\\mu) = \\Phi((u_m-\\mu)/\\sigma_m) - \\Phi((l_m-\\mu)/\\sigma_m)`.
The categorical part is :math:`\sum_{z,m} c_{z,m}\log q_{z,m}`. The collapsed
log density equals the per-observation one up to a constant (it depends on
the data, not on the parameters): the collapsed models subtract each term's
value at the data's maximum-likelihood point (:math:`\sum c \log(c/n)`,
the sum of squares, :math:`n_m \log Z_m(\bar p_m)`, the normalising
constants), so that the log density stays of order M near the mode and JAX's
default float32 keeps the precision NUTS needs at n = 10^7. The statistics
are passed centred (:math:`\bar p_m`, :math:`SS_m`, computed in float64 by
the caller); ``ss_p`` is accepted for completeness and enters only that
constant.

All array arguments are plain arrays; the models depend on numpyro and jax
only.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist
from jax.scipy.special import log_ndtr

__all__ = [
    "conjugate_model",
    "literal_model",
    "conjugate_collapsed",
    "literal_collapsed",
    "truncnorm_log_normalizer",
    "truncnorm_mean",
]

_LOG_SQRT_2PI = 0.9189385332046727


def _log1mexp(x):
    """log(1 - exp(x)) for x <= 0, accurate near 0 and far below it."""
    return jnp.where(x > -0.6931471805599453, jnp.log(-jnp.expm1(x)), jnp.log1p(-jnp.exp(x)))


def _mirrored(a, b):
    # Put both standardised bounds on the lower side, where log_ndtr is exact.
    flip = a > 0
    return jnp.where(flip, -b, a), jnp.where(flip, -a, b)


def truncnorm_log_normalizer(mu, sigma, low, high):
    """:math:`\\log(\\Phi((u-\\mu)/\\sigma) - \\Phi((l-\\mu)/\\sigma))`, stable in the tails."""
    a, b = _mirrored((low - mu) / sigma, (high - mu) / sigma)
    lb = log_ndtr(b)
    return lb + _log1mexp(log_ndtr(a) - lb)


def truncnorm_mean(mu, sigma, low, high):
    """Mean of N(mu, sigma^2) restricted to [low, high]:
    :math:`\\mu + \\sigma\\,(\\varphi(\\alpha) - \\varphi(\\beta))/Z`."""
    alpha = (low - mu) / sigma
    beta = (high - mu) / sigma
    log_z = truncnorm_log_normalizer(mu, sigma, low, high)
    log_phi_a = -0.5 * alpha**2 - _LOG_SQRT_2PI
    log_phi_b = -0.5 * beta**2 - _LOG_SQRT_2PI
    mean = mu + sigma * (jnp.exp(log_phi_a - log_z) - jnp.exp(log_phi_b - log_z))
    return jnp.clip(mean, low, high)  # round-off only: the exact mean lies inside


def _bins(edges):
    edges = jnp.asarray(edges)
    low, high = edges[:-1], edges[1:]
    return low, high, 0.5 * (low + high)


def _parameters(edges, alpha, tau):
    """q and mu from the prior; returns (q of shape (2, M), mu, low, high)."""
    low, high, center = _bins(edges)
    alpha = jnp.asarray(alpha)
    m = low.shape[0]
    q = numpyro.sample("q", dist.Dirichlet(alpha.reshape(-1))).reshape(2, m)
    with numpyro.plate("bin", m):
        mu = numpyro.sample(
            "mu", dist.TruncatedNormal(center, jnp.asarray(tau), low=low, high=high)
        )
    return q, mu, low, high


def _record(q, confidence):
    weight = numpyro.deterministic("weight", q[0] + q[1])
    numpyro.deterministic("accuracy", q[1] / weight)
    numpyro.deterministic("confidence", confidence)
    numpyro.deterministic("ece", jnp.sum(jnp.abs(q[1] - weight * confidence)))


def _per_observation(edges, alpha, sigma, tau, n, z, b, p, literal):
    q, mu, low, high = _parameters(edges, alpha, tau)
    sigma = jnp.asarray(sigma)
    m = low.shape[0]
    if z is not None and b is not None:
        z, b = jnp.asarray(z), jnp.asarray(b)
        cell_obs = z.astype(jnp.int32) * m + b.astype(jnp.int32)
        n = cell_obs.shape[0]
    else:
        cell_obs = None
        if n is None:
            n = 0 if p is None else jnp.shape(p)[0]
    with numpyro.plate("obs", n):
        cell = numpyro.sample("cell", dist.Categorical(probs=q.reshape(-1)), obs=cell_obs)
        bin_ = cell % m
        if literal:
            conf_dist = dist.TruncatedNormal(mu[bin_], sigma[bin_], low=low[bin_], high=high[bin_])
        else:
            conf_dist = dist.Normal(mu[bin_], sigma[bin_])
        numpyro.sample("p", conf_dist, obs=p)
    confidence = truncnorm_mean(mu, sigma, low, high) if literal else mu
    _record(q, confidence)


def literal_model(edges, alpha, sigma, tau, *, n=None, z=None, b=None, p=None):
    """The literal BECE model: each confidence a truncated Normal within its bin.

    Parameters
    ----------
    edges : array of shape (M + 1,)
        Strictly increasing bin edges.
    alpha : array of shape (2, M)
        Dirichlet concentration per cell (row 0 incorrect, row 1 correct).
    sigma, tau : array of shape (M,)
        Likelihood and prior scales of the bin means.
    n : int, optional
        Number of observations to simulate when ``z``, ``b`` and ``p`` are
        None (prior predictive with ``numpyro.infer.Predictive``).
    z, b : int arrays of shape (n,), optional
        Observed correctness and bin index.
    p : array of shape (n,), optional
        Observed confidences.

    Examples
    --------
    Simulate 100 predictions given the bins' parameters (seeded):

    >>> import numpy as np
    >>> from numpyro import handlers
    >>> m = 4
    >>> edges = np.linspace(0.0, 1.0, m + 1)
    >>> alpha, sigma = np.full((2, m), 1 / (2 * m)), np.full(m, 0.25 / np.sqrt(12))   # the defaults
    >>> from bece.models import literal_model
    >>> q = np.array([0.2, 0.1, 0.05, 0.0, 0.05, 0.15, 0.2, 0.25])   # (incorrect, correct) x bin
    >>> mu = np.array([0.125, 0.375, 0.625, 0.875])                 # the bins' mean confidences
    >>> model = handlers.seed(handlers.condition(literal_model, {"q": q, "mu": mu}), rng_seed=0)
    >>> trace = handlers.trace(model).get_trace(edges, alpha, sigma, sigma, n=100)
    >>> {name: site["value"].shape for name, site in trace.items() if site["type"] == "sample"}
    {'q': (8,), 'mu': (4,), 'cell': (100,), 'p': (100,)}
    >>> p, b = trace["p"]["value"], trace["cell"]["value"] % m   # confidences and their bins
    >>> bool(np.all((edges[b] <= p) & (p <= edges[b + 1])))      # each within its bin
    True
    """
    _per_observation(edges, alpha, sigma, tau, n, z, b, p, literal=True)


def conjugate_model(edges, alpha, sigma, tau, *, n=None, z=None, b=None, p=None):
    """The conjugate model: truncation on the prior of mu only, Normal
    likelihood for the confidences. Arguments as :func:`literal_model`.

    Examples
    --------
    >>> import numpy as np
    >>> from numpyro import handlers
    >>> m = 4
    >>> edges = np.linspace(0.0, 1.0, m + 1)
    >>> alpha, sigma = np.full((2, m), 1 / (2 * m)), np.full(m, 0.25 / np.sqrt(12))   # the defaults
    >>> from bece.models import conjugate_model
    >>> q = np.array([0.2, 0.1, 0.05, 0.0, 0.05, 0.15, 0.2, 0.25])   # (incorrect, correct) x bin
    >>> mu = np.array([0.125, 0.375, 0.625, 0.875])                 # the bins' mean confidences
    >>> model = handlers.seed(handlers.condition(conjugate_model, {"q": q, "mu": mu}), rng_seed=0)
    >>> trace = handlers.trace(model).get_trace(edges, alpha, sigma, sigma, n=100)
    >>> {name: site["value"].shape for name, site in trace.items() if site["type"] == "sample"}
    {'q': (8,), 'mu': (4,), 'cell': (100,), 'p': (100,)}
    >>> round(float(trace["ece"]["value"]), 6)                   # a deterministic site
    0.15
    """
    _per_observation(edges, alpha, sigma, tau, n, z, b, p, literal=False)


def collapsed_factors(q, mu, low, high, sigma, counts, mean_p, literal):
    """Add the collapsed log likelihood of the statistics as ``numpyro.factor`` sites.

    ``q`` and ``counts`` have shape (2, B), the others (B,) for B bins (the
    top-label model passes its (label, bin) cells flattened). See the module
    docstring for the terms and the constants subtracted.
    """
    counts = jnp.asarray(counts).astype(q.dtype)  # int counts have no gradient type
    n_m = counts.sum(axis=0)
    # sum c log(q / c_hat), c_hat = c / n: the multinomial log likelihood
    # less its value at the maximum, so that it stays O(M) near the mode
    # and float32 keeps its precision at n = 10^7 (sum c log q alone is
    # ~10^7 there, with a rounding error of ~1 in float32). The double
    # `where` keeps the gradient finite where q underflows to 0 in a cell
    # without data.
    seen = counts > 0
    safe_c = jnp.where(seen, counts, 1.0)
    log_ratio = jnp.log(jnp.where(seen, q, 1.0)) - jnp.log(safe_c / counts.sum())
    numpyro.factor("cells", jnp.sum(jnp.where(seen, counts * log_ratio, 0.0)))
    mean_p = jnp.asarray(mean_p)
    # the Normal likelihood in mu, less the terms that do not depend on
    # it (-n_m log(sqrt(2 pi) sigma) - SS_m / (2 sigma^2))
    loglik = -n_m * (mean_p - mu) ** 2 / (2 * sigma**2)
    if literal:
        # -n_m log Z(mu), less its value at the bin's mean confidence
        anchor = jnp.clip(mean_p, low, high)
        loglik = loglik - n_m * (
            truncnorm_log_normalizer(mu, sigma, low, high)
            - truncnorm_log_normalizer(anchor, sigma, low, high)
        )
    numpyro.factor("confidences", jnp.sum(loglik))


def _collapsed(edges, alpha, sigma, tau, counts, mean_p, ss_p, literal):
    q, mu, low, high = _parameters(edges, alpha, tau)
    sigma = jnp.asarray(sigma)
    if counts is not None:
        collapsed_factors(q, mu, low, high, sigma, counts, mean_p, literal)
    confidence = truncnorm_mean(mu, sigma, low, high) if literal else mu
    _record(q, confidence)


def literal_collapsed(edges, alpha, sigma, tau, *, counts=None, mean_p=None, ss_p=None):
    """:func:`literal_model` given sufficient statistics (O(M) per evaluation).

    Parameters
    ----------
    edges, alpha, sigma, tau
        As :func:`literal_model`.
    counts : array of shape (2, M), optional
        Cell counts; None samples the prior.
    mean_p : array of shape (M,)
        Mean confidence per bin (any value for empty bins).
    ss_p : array of shape (M,)
        :math:`\\sum (p_i - \\bar p_m)^2` per bin (0 for empty bins).

    Examples
    --------
    A bin's mean confidence is that of its confidences, truncated Normals
    around ``mu``: at the bin's centre by symmetry, pulled inwards elsewhere:

    >>> import numpy as np
    >>> from numpyro import handlers
    >>> from bece.models import literal_collapsed
    >>> m = 4
    >>> edges = np.linspace(0.0, 1.0, m + 1)
    >>> alpha, sigma = np.full((2, m), 1 / (2 * m)), np.full(m, 0.25 / np.sqrt(12))   # the defaults
    >>> q = np.full(2 * m, 1 / (2 * m))
    >>> mu = np.array([0.125, 0.375, 0.625, 0.99])    # the last one near its bin's upper edge
    >>> model = handlers.condition(literal_collapsed, {"q": q, "mu": mu})
    >>> conf = handlers.trace(model).get_trace(edges, alpha, sigma, sigma)["confidence"]["value"]
    >>> [round(float(c), 4) for c in conf[:3]], bool(0.875 < conf[3] < 0.99)
    ([0.125, 0.375, 0.625], True)
    """
    _collapsed(edges, alpha, sigma, tau, counts, mean_p, ss_p, literal=True)


def conjugate_collapsed(edges, alpha, sigma, tau, *, counts=None, mean_p=None, ss_p=None):
    """:func:`conjugate_model` given sufficient statistics. Arguments as
    :func:`literal_collapsed`.

    Examples
    --------
    NUTS on this model is what :func:`bece.cross_check` runs. Given the
    parameters, its deterministic sites are the bins' summaries and the ECE
    :math:`\\sum_m |q_{1,m} - (q_{0,m} + q_{1,m})\\mu_m|`:

    >>> import numpy as np
    >>> from numpyro import handlers
    >>> from bece.models import conjugate_collapsed
    >>> m = 4
    >>> edges = np.linspace(0.0, 1.0, m + 1)
    >>> alpha, sigma = np.full((2, m), 1 / (2 * m)), np.full(m, 0.25 / np.sqrt(12))   # the defaults
    >>> q = np.array([0.2, 0.1, 0.05, 0.0,       # P(incorrect, bin m)
    ...               0.05, 0.15, 0.2, 0.25])    # P(correct, bin m)
    >>> mu = np.array([0.125, 0.375, 0.625, 0.875])
    >>> model = handlers.condition(conjugate_collapsed, {"q": q, "mu": mu})
    >>> trace = handlers.trace(model).get_trace(edges, alpha, sigma, sigma)
    >>> trace["accuracy"]["value"].tolist()
    [0.2, 0.6, 0.8, 1.0]
    >>> round(float(trace["ece"]["value"]), 6)   # 0.01875 + 0.05625 + 0.04375 + 0.03125
    0.15

    With ``counts``, ``mean_p`` and ``ss_p`` (e.g. from a
    :class:`bece.CalibrationStats`) it adds the factors ``cells`` and
    ``confidences``, the collapsed likelihood.
    """
    _collapsed(edges, alpha, sigma, tau, counts, mean_p, ss_p, literal=False)
