r"""The smooth calibration-curve model in NumPyro.

The probability that a prediction with confidence :math:`p` is correct is a
smooth function of :math:`x = \operatorname{logit} p`:

.. math::

    \operatorname{logit} P(z = 1 \mid p) = f(x) = x + a + b\,x + \lambda\,\phi(x)^\top u
        + \tau\,v_{m(p)},

    a \sim \mathcal N(0, s_a^2), \qquad b \sim \mathcal N(0, s_b^2), \qquad
    \lambda \sim \mathrm{Exponential}(\text{mean } s_\lambda), \qquad
    u \sim \mathcal N(0, I_{K-2}),

    \tau \sim \mathrm{Exponential}(\text{mean } s_\tau), \qquad v \sim \mathcal N(0, I_M),

    z_j \mid p_j \sim \mathrm{Binomial}(t_j, \sigma(f(x_j)))
    \quad (\mathrm{Bernoulli} \text{ when } t_j = 1).

:math:`f(x) = x` is perfect calibration; :math:`a` and :math:`b` shift and
tilt the curve on the logit scale (temperature scaling is :math:`a = 0`,
:math:`b = 1/T - 1`), and :math:`\phi(x) = [1, x, N(x)]\,T` is the
non-linear part of a natural cubic spline with K knots :math:`\xi_1 <
\dots < \xi_K` (:func:`natural_cubic_basis`, the K - 2 functions
:math:`N_{k+2}` of Hastie, Tibshirani & Friedman, *Elements of Statistical
Learning*, §5.2.1) mapped by ``transform`` :math:`T` of shape (K, K - 2).
The caller (:class:`bece._smooth.basis.SmoothBasis`) builds :math:`T` from the
eigendecomposition :math:`\Omega = U D U^\top` of the roughness penalty
:math:`\Omega_{jk} = \int N_j''(x) N_k''(x)\,dx` (Demmler–Reinsch form):
the functions :math:`N(x) U D^{-1/2}`, less their least-squares linear part
over the data (which leaves the linear trend to :math:`a, b` and changes no
second derivative), divided by their RMS :math:`c` over the data. So
:math:`u \sim \mathcal N(0, I)` is the smoothing-spline prior
:math:`\propto \exp(-c^2 \int g''^2 / (2\lambda^2))` on the non-linear part
:math:`g`, and :math:`\lambda` is its prior RMS over the observed
confidences, in logit units.
The smoothness scale :math:`\lambda` is learned; its exponential prior is
the penalised-complexity prior of Simpson et al. (2017), which shrinks
towards the linear (temperature-scaling) curve.

The optional deviations :math:`\tau v_m`, one per ECE bin m (:math:`m(p)`
is the bin of p), take up what the smooth part cannot follow (a staircase,
a kink): without them the posterior of the binned ECE would concentrate on
a wrong value as n grows whenever the true curve is not in the spline's
span; with them it is consistent for every bin's mean accuracy, while their
PC prior (again shrinking to 0) keeps the pooling of the smooth curve at
small n.

The distribution of the confidences is not modelled here: the ECE is a
functional of it, and :mod:`bece.smooth` gives it its Bayesian-bootstrap
posterior (a Dirichlet-process posterior with vanishing concentration),
which is independent of :math:`(a, b, \lambda, u, \tau, v)` a posteriori because the
two parts of the model share no parameters.

The model depends on numpyro and jax only. ``x`` is passed on the logit
scale (computed in float64 by the caller) so that confidences near 1 keep
their precision in JAX's default float32.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist

__all__ = ["natural_cubic_basis", "smooth_model", "curve_logit"]


def _cube_plus(t):
    return jnp.where(t > 0, t, 0.0) ** 3


def natural_cubic_basis(x, knots):
    r"""The K - 2 non-linear natural cubic spline functions at ``x``.

    .. math::

        N_{k+2}(x) = d_k(x) - d_{K-1}(x), \qquad
        d_k(x) = \frac{(x - \xi_k)_+^3 - (x - \xi_K)_+^3}{\xi_K - \xi_k},
        \qquad k = 1, \dots, K-2.

    Beyond the last knot each :math:`N_{k+2}` is linear (the cubic and
    quadratic terms of :math:`d_k` and :math:`d_{K-1}` cancel); it is
    evaluated there as :math:`N(\xi_K) + N'(\xi_K)(x - \xi_K)`, with
    :math:`d_k` continued by its tangent at :math:`\xi_K` (slope
    :math:`3(\xi_K - \xi_k)`), which has the same differences, so that
    no large cubes cancel in float32.
    Below the first knot they are 0.

    Parameters
    ----------
    x : array of shape (n,)
    knots : array of shape (K,), strictly increasing, K >= 3

    Returns
    -------
    array of shape (n, K - 2)
    """
    x = jnp.asarray(x)
    knots = jnp.asarray(knots)
    last = knots[-1]
    xc = jnp.minimum(x, last)[:, None]
    span = last - knots[:-1]  # (K-1,)
    d = (_cube_plus(xc - knots[:-1]) - _cube_plus(xc - last)) / span  # (n, K-1)
    # derivative at the last knot: 3 (xi_K - xi_k)^2 / (xi_K - xi_k) = 3 (xi_K - xi_k)
    slope = 3.0 * span
    beyond = jnp.maximum(x - last, 0.0)[:, None]
    d = d + beyond * slope
    return d[:, :-1] - d[:, -1:]


def _standard_normal(name, plate, size, scale, centering):
    r"""``size`` standard normals, sampled as :math:`\text{scale}^c` times
    themselves when ``centering`` c is given (see :func:`smooth_model`)."""
    if centering is None:
        with numpyro.plate(plate, size):
            return numpyro.sample(name, dist.Normal(0.0, 1.0))
    power = jnp.broadcast_to(jnp.asarray(centering), (size,))
    with numpyro.plate(plate, size):
        centred = numpyro.sample(f"{name}_centered", dist.Normal(0.0, scale**power))
    return numpyro.deterministic(name, centred / scale**power)


def scaled_standard_normal(name, plate, size, scale, information):
    r"""``size`` standard normals :math:`w`, the coefficients of an effect
    :math:`s\,w` with a learned scale s; with ``information`` I (one value or
    ``size``) NUTS samples :math:`\tilde w = g\,w \sim \mathcal N(0, g^2)`,
    :math:`g = \sqrt{1 + s^2 I}`, as site ``{name}_scaled`` and records
    :math:`w` beside it.

    I is the data's information about :math:`s\,w` (the negative second
    derivative of the log likelihood, read from the Laplace fit). Given s,
    :math:`w`'s posterior sd is then about :math:`1/g` under a Gaussian
    likelihood, so :math:`\tilde w`'s is about 1 at every s, where the
    non-centred coefficients (``information`` None) form a funnel once the
    data pin :math:`s\,w` down. The law of the model is the same; only the
    geometry NUTS sees changes.
    """
    if information is None:
        with numpyro.plate(plate, size):
            return numpyro.sample(name, dist.Normal(0.0, 1.0))
    g = jnp.sqrt(1.0 + scale**2 * jnp.broadcast_to(jnp.asarray(information), (size,)))
    with numpyro.plate(plate, size):
        scaled = numpyro.sample(f"{name}_scaled", dist.Normal(0.0, g))
    return numpyro.deterministic(name, scaled / g)


def curve_logit(x, knots, transform, a, b, lam, u, bins=None, tau=None, v=None):
    r""":math:`f(x) = x + a + b x + \lambda\,N(x) T u\ [+ \tau v_{m(x)}]` for one parameter set."""
    x = jnp.asarray(x)
    f = x + a + b * x
    if jnp.shape(transform)[1]:
        t = jnp.asarray(transform)
        phi = t[0] + x[:, None] * t[1] + natural_cubic_basis(x, knots) @ t[2:]
        f = f + lam * (phi @ u)
    if bins is not None:
        f = f + tau * v[jnp.asarray(bins)]
    return f


def smooth_model(
    knots,
    transform,
    *,
    x,
    z=None,
    trials=None,
    bins=None,
    n_bins=None,
    intercept_scale=1.0,
    slope_scale=0.5,
    smoothness_scale=0.5,
    bin_scale=0.25,
    spline_centering=None,
    bin_centering=None,
):
    r"""Smooth calibration curve with a Bernoulli (or Binomial) likelihood.

    Parameters
    ----------
    knots : array of shape (K,)
        Spline knots on the logit scale, strictly increasing, K >= 3.
    transform : array of shape (K, K - 2)
        :math:`\phi(x) = [1, x, N(x)]\,T` (see the module docstring).
    x : array of shape (n,)
        Logits of the confidences (data: a covariate, always given).
    z : int array of shape (n,), optional
        Outcomes (1 = correct); successes out of ``trials`` when those are
        given. None samples them (prior or posterior predictive).
    trials : int array of shape (n,), optional
        Number of predictions aggregated in each entry (a fine grid of
        confidences); None means one each (Bernoulli).
    bins : int array of shape (n,), optional
        ECE bin of each entry; with ``n_bins`` adds a deviation
        :math:`\tau v_m`, :math:`v_m \sim \mathcal N(0, 1)`,
        :math:`\tau \sim \mathrm{Exponential}(\text{mean } s_\tau)`, to the
        logit of every prediction in bin m (what the smooth part cannot
        follow). None: no bin deviations.
    n_bins : int, optional
        M, required with ``bins``.
    intercept_scale, slope_scale : float, default 1.0, 0.5
        Prior standard deviations :math:`s_a`, :math:`s_b` of the logit
        shift at p = 0.5 and of the change of slope.
    smoothness_scale : float, default 0.5
        Prior mean :math:`s_\lambda` of the smoothness scale.
    bin_scale : float, default 0.25
        Prior mean :math:`s_\tau` of the bin deviations' scale.
    spline_centering, bin_centering : float or array, optional
        Partial centering :math:`c \in [0, 1]` (one value, or one per
        coefficient) of ``u`` and ``v``: NUTS then moves
        :math:`u^c = \lambda^{c} u \sim \mathcal N(0, \lambda^{2c})` (site
        ``u_centered``; ``v_centered`` with :math:`\tau`) and ``u`` is
        recorded as a deterministic site. The law of the model is the same
        for every c; only the geometry NUTS sees changes (Papaspiliopoulos,
        Roberts & Sköld 2007): c = 0 (None, the default) suits coefficients
        the data say little about, c near 1 those they determine, where
        :math:`\lambda u` is pinned and the non-centred pair lies on a
        curved ridge. For a normal likelihood the best c is one minus the
        coefficient's posterior variance in prior units, which
        :func:`bece._validation.smooth.smooth_model_kwargs` takes from the
        Laplace fit.

    Sample sites: ``a``, ``b``, ``lam``, ``u`` (K - 2), with bins ``tau``
    and ``v`` (M), and the observed ``z``. Nothing of size n is recorded
    (NUTS keeps every recorded site).

    Examples
    --------
    >>> import numpy as np
    >>> from numpyro import handlers
    >>> from bece.models import smooth_model
    >>> from bece._smooth.basis import SmoothBasis, logit_confidence
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> z = (rng.uniform(size=500) < p).astype(int)
    >>> x = logit_confidence(p)
    >>> basis = SmoothBasis.from_logits(x, np.ones_like(x), n_knots=6)   # K = 6 knots
    >>> model = handlers.seed(smooth_model, rng_seed=0)
    >>> trace = handlers.trace(model).get_trace(basis.knots, basis.transform, x=x, z=z)
    >>> {name: site["value"].shape for name, site in trace.items() if site["type"] == "sample"}
    {'a': (), 'b': (), 'lam': (), 'u': (4,), 'z': (500,)}
    >>> trace["z"]["is_observed"]
    True
    """
    x = jnp.asarray(x)
    a = numpyro.sample("a", dist.Normal(0.0, intercept_scale))
    b = numpyro.sample("b", dist.Normal(0.0, slope_scale))
    lam = numpyro.sample("lam", dist.Exponential(1.0 / smoothness_scale))
    k2 = jnp.shape(transform)[1]
    u = _standard_normal("u", "spline", k2, lam, spline_centering)
    tau = v = None
    if bins is not None:
        if n_bins is None:
            raise ValueError("smooth_model: bins needs n_bins")
        tau = numpyro.sample("tau", dist.Exponential(1.0 / bin_scale))
        v = _standard_normal("v", "bin", n_bins, tau, bin_centering)
    f = curve_logit(x, knots, transform, a, b, lam, u, bins, tau, v)
    # observed counts as a JAX array: the Binomial's support check compares
    # them with traced trials, which a NumPy array cannot take part in
    z = None if z is None else jnp.asarray(z)
    with numpyro.plate("obs", x.shape[0]):
        if trials is None:
            numpyro.sample("z", dist.Bernoulli(logits=f), obs=z)
        else:
            numpyro.sample("z", dist.Binomial(total_count=jnp.asarray(trials), logits=f), obs=z)
