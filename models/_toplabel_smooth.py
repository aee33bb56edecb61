r"""The hierarchical smooth top-label calibration model in NumPyro.

Each prediction is reduced to its predicted label :math:`\ell`, its top
confidence :math:`p` (:math:`x = \operatorname{logit} p`) and whether it was
right, :math:`z = [y = \ell]`. Every predicted label has its own calibration
curve, a curve shared by all labels (the smooth model of
:mod:`bece.models._smooth`) plus a label deviation whose scale is learned:

.. math::

    \operatorname{logit} P(z = 1 \mid p, \ell = l) &= f(x) + d_l(x), \\
    f(x) &= x + a + b\,x + \lambda\,\phi(x)^\top u \ [+\ \tau\,v_{m(p)}], \\
    d_l(x) &= \kappa\,c_l + \omega\,e_l\,\tilde x, \qquad
        \tilde x = (x - x_0)/s_x, \\
    c_l, e_l &\sim \mathcal N(0, 1) \ \text{(independent over labels)}, \\
    \kappa &\sim \pi_s\,\mathrm{Exp}(\text{mean } r s_\kappa)
        + (1 - \pi_s)\,\mathrm{Exp}(\text{mean } s_\kappa), \quad
    \omega \sim \text{the same with } s_\omega,

with :math:`a, b, \lambda, u, \tau, v` and their priors as in
:func:`bece.models._smooth.smooth_model`. :math:`x_0` and :math:`s_x` are
passed by the caller as data; the fast path uses :math:`x_0 = 0` (p = 1/2)
and :math:`s_x = 1`, so that :math:`\kappa c_l` is the label's logit shift
at p = 1/2 (a per-label bias) and :math:`\omega e_l` its change of logit
slope (a per-label inverse temperature, whose effect grows with
:math:`|x|`); the deviation's prior variance at :math:`x` is
:math:`\kappa^2 + \omega^2 \tilde x^2`. Two scales, because the two are
identified differently: the shift by the low confidences where errors are
common, the tilt mostly by how the curve saturates next to 1; one scale
shared by both lets the well-measured small shifts set the size of the
tilts too, and shrinks the labels' deviations at high confidence. Each
scale's prior is a mixture: a "shared" exponential of mean :math:`r s`
(:math:`r` = ``shared_ratio``, 0.02: deviations of a few hundredths of a
logit, all labels share one curve) with probability :math:`\pi_s`
(``shared_prob``, 1/2), and the penalised-complexity exponential of mean
:math:`s`. A label with few predictions borrows the shared curve, one with
many gets its own shift and tilt; when the data cannot tell the labels
apart, the shared component keeps the prior spread of the deviations out
of the labels' ECE (:mod:`bece._smooth.scale_prior` says why).

Outcomes: :math:`z_j \sim \mathrm{Binomial}(t_j, \sigma(f(x_j) + d_{l_j}(x_j)))`
for entries that aggregate :math:`t_j` predictions of one label in a fine
cell of confidences (Bernoulli when :math:`t_j = 1`): per-(label, cell)
sufficient statistics, so the cost does not grow with n.

As in the smooth model, the distribution of the confidences is not modelled
here (:mod:`bece._smooth.toplabel` gives it a Bayesian-bootstrap posterior,
independent of the curves a posteriori), and ``x`` is passed on the logit
scale, computed in float64 by the caller.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist
from jax.scipy.special import log_ndtr, logsumexp, ndtr

from ._smooth import curve_logit, scaled_standard_normal

__all__ = [
    "scale_prior",
    "scale_prior_quantile",
    "top_label_curve_logit",
    "top_label_smooth_model",
]


def top_label_curve_logit(x, label, knots, transform, a, b, lam, u, kappa, c, e, *, center=0.0,
                          spread=1.0, bins=None, tau=None, v=None, omega=None):
    r""":math:`f(x) + \kappa c_l + \omega e_l (x - x_0)/s_x` for one parameter set.

    ``x`` and ``label`` (indices 0 .. L-1) have shape (n,), ``c`` and ``e``
    shape (L,); ``omega`` None uses ``kappa`` for the tilts too; the rest as
    :func:`bece.models._smooth.curve_logit`.
    """
    x = jnp.asarray(x)
    label = jnp.asarray(label)
    f = curve_logit(x, knots, transform, a, b, lam, u, bins, tau, v)
    omega = kappa if omega is None else omega
    return f + kappa * c[label] + omega * e[label] * (x - center) / spread


def scale_prior(scale, shared_prob=0.5, shared_ratio=0.02):
    r""":math:`\pi_s\,\mathrm{Exp}(\text{mean } r s) + (1 - \pi_s)\,\mathrm{Exp}(\text{mean } s)`
    (``shared_prob`` :math:`\pi_s`, ``shared_ratio`` r, ``scale`` s); the
    exponential alone when ``shared_prob`` is 0."""
    if shared_prob == 0:
        return dist.Exponential(1.0 / scale)
    return dist.MixtureSameFamily(
        dist.Categorical(probs=jnp.array([shared_prob, 1.0 - shared_prob])),
        dist.Exponential(1.0 / (scale * jnp.array([shared_ratio, 1.0]))))


@partial(jax.custom_jvp, nondiff_argnums=(1, 2, 3))
def scale_prior_quantile(xi, scale, shared_prob=0.5, shared_ratio=0.02):
    r"""The scale :math:`F^{-1}(\Phi(\xi))` of :func:`scale_prior`'s law F at
    probit :math:`\xi`: a standard normal :math:`\xi` gives a draw of the prior.

    Solves :math:`S(\kappa) = \Phi(-\xi)` for the survival function
    :math:`S(\kappa) = \pi_s e^{-\kappa/(r s)} + (1 - \pi_s) e^{-\kappa/s}`
    on the log scale by 64 bisections of :math:`\log \kappa` between the
    components' quantiles (which bracket the mixture's), with the CDF below
    the median and the survival function above it, so that both tails are
    exact to rounding; the derivative is :math:`\varphi(\xi) /
    f(\kappa)`, f the prior density. ``scale``, ``shared_prob`` and
    ``shared_ratio`` are constants.
    """
    xi = jnp.asarray(xi)
    lower = xi < 0  # solve F(kappa) = Phi(xi) below the median, S(kappa) = Phi(-xi) above
    log_tail = log_ndtr(jnp.where(lower, xi, -xi))
    ell = jnp.where(lower, jnp.log(-jnp.log1p(-ndtr(xi))), jnp.log(-log_tail))  # Exp(1)'s log quantile
    log_means = jnp.log(scale) + jnp.log(jnp.array([shared_ratio, 1.0]))
    weights = jnp.array([shared_prob, 1.0 - shared_prob])

    def excess(u):  # increasing in u = log kappa; 0 at the quantile
        t = jnp.exp(u[..., None] - log_means)
        below = jnp.log(jnp.sum(-weights * jnp.expm1(-t), axis=-1)) - log_tail
        return jnp.where(lower, below, log_tail - logsumexp(-t, b=weights, axis=-1))

    def bisect(_, bracket):
        lo, hi = bracket
        mid = 0.5 * (lo + hi)
        short = excess(mid) < 0
        return jnp.where(short, mid, lo), jnp.where(short, hi, mid)

    lo, hi = jax.lax.fori_loop(0, 64, bisect, (ell + log_means[0], ell + log_means[1]))
    return jnp.exp(0.5 * (lo + hi))


@scale_prior_quantile.defjvp
def _scale_prior_quantile_jvp(scale, shared_prob, shared_ratio, primals, tangents):
    (xi,), (dxi,) = primals, tangents
    kappa = scale_prior_quantile(xi, scale, shared_prob, shared_ratio)
    means = scale * jnp.array([shared_ratio, 1.0])
    log_density = logsumexp(jnp.log(jnp.array([shared_prob, 1.0 - shared_prob]) / means)
                            - kappa[..., None] / means, axis=-1)
    log_phi = -0.5 * xi**2 - 0.5 * jnp.log(2.0 * jnp.pi)
    return kappa, jnp.exp(log_phi - log_density) * dxi


def _scale(name, scale, shared_prob, shared_ratio, probit):
    """A scale of :func:`scale_prior`'s law, sampled directly or by its probit."""
    if not probit:
        return numpyro.sample(name, scale_prior(scale, shared_prob, shared_ratio))
    xi = numpyro.sample(f"{name}_probit", dist.Normal(0.0, 1.0))
    return numpyro.deterministic(name, scale_prior_quantile(xi, scale, shared_prob, shared_ratio))


def top_label_smooth_model(
    knots,
    transform,
    *,
    x,
    label,
    n_labels,
    z=None,
    trials=None,
    bins=None,
    n_bins=None,
    center=0.0,
    spread=1.0,
    intercept_scale=1.0,
    slope_scale=0.5,
    smoothness_scale=0.5,
    bin_scale=0.25,
    label_scale=0.5,
    tilt_scale=0.25,
    shared_prob=0.5,
    shared_ratio=0.02,
    spline_information=None,
    bin_information=None,
    shift_information=None,
    tilt_information=None,
    probit_scales=False,
):
    r"""Shared smooth curve plus per-label shift and tilt, with learned scales.

    Parameters
    ----------
    knots, transform
        The shared curve's spline, as :func:`bece.models._smooth.smooth_model`.
    x : array of shape (n,)
        Logits of the confidences (one per prediction, or the mean
        confidence of a (label, cell) entry).
    label : int array of shape (n,)
        Index 0 .. L-1 of each entry's predicted label.
    n_labels : int
        L (static).
    z : int array of shape (n,), optional
        Correct predictions (out of ``trials`` when given); None samples them.
    trials : int array of shape (n,), optional
        Predictions aggregated in each entry; None means one each.
    bins : int array of shape (n,), optional
        ECE bin of each entry; with ``n_bins`` adds the shared per-bin
        deviations :math:`\tau v_m` of the smooth model. None: none.
    n_bins : int, optional
        M, required with ``bins``.
    center, spread : float, default 0.0, 1.0
        :math:`x_0` and :math:`s_x` of the label tilt (module docstring).
    intercept_scale, slope_scale, smoothness_scale, bin_scale : float
        The shared curve's prior, as :func:`bece.models._smooth.smooth_model`.
    label_scale : float, default 0.5
        Mean :math:`s_\kappa` of the exponential component of the label
        shifts' scale.
    tilt_scale : float, default 0.25
        Mean :math:`s_\omega` of the same for the label tilts' scale.
    shared_prob, shared_ratio : float, default 0.5, 0.02
        Weight :math:`\pi_s` and relative mean :math:`r` of the scales'
        "shared" component (:func:`scale_prior`).
    spline_information, bin_information, shift_information, tilt_information : array, optional
        The data's information about :math:`\lambda u_k` (K - 2),
        :math:`\tau v_m` (M), :math:`\kappa c_l` and :math:`\omega e_l` (L
        each). Given, NUTS samples ``u_scaled`` :math:`= \sqrt{1 +
        \lambda^2 I_k}\,u_k` (and likewise ``v_scaled``, ``c_scaled``,
        ``e_scaled``) and records ``u`` beside it, so that the coefficients
        the data pin down do not form a funnel with their scale
        (:func:`bece.models._smooth.scaled_standard_normal`). The law of the
        model is the same; None (the default) samples them non-centred.
    probit_scales : bool, default False
        Sample :math:`\kappa` and :math:`\omega` through the probit of
        their prior's CDF F: NUTS moves ``kappa_probit`` :math:`\xi \sim
        \mathcal N(0, 1)` and :math:`\kappa = F^{-1}(\Phi(\xi))`
        (:func:`scale_prior_quantile`) is recorded; the same for
        :math:`\omega`. The two-part prior makes :math:`\log \kappa`'s
        posterior bimodal when the data cannot tell whether the labels share
        one curve (a mode near :math:`r s` and one near s, with a trough
        between that NUTS seldom crosses); in :math:`\xi` the prior is one
        standard normal and the trough is gone. The law of the model is the same.

    Sample sites: ``a``, ``b``, ``lam``, ``u`` (K - 2), with bins ``tau`` and
    ``v`` (M), ``kappa``, ``omega``, ``c`` and ``e`` (L), and the observed
    ``z``; with an information, ``u_scaled`` (and so on) in place of ``u``,
    which is recorded as a deterministic site; with ``probit_scales``,
    ``kappa_probit`` and ``omega_probit`` in place of ``kappa`` and ``omega``.

    Examples
    --------
    >>> import numpy as np
    >>> from numpyro import handlers
    >>> from bece.models import top_label_smooth_model
    >>> from bece._smooth.basis import SmoothBasis, logit_confidence
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(0.3, 1.0, size=600)            # top-label confidences
    >>> label = rng.integers(0, 3, size=600)           # predicted labels, L = 3
    >>> z = (rng.uniform(size=600) < p).astype(int)    # correct or not
    >>> x = logit_confidence(p)
    >>> basis = SmoothBasis.from_logits(x, np.ones_like(x), n_knots=5)
    >>> model = handlers.seed(top_label_smooth_model, rng_seed=0)
    >>> trace = handlers.trace(model).get_trace(basis.knots, basis.transform, x=x, label=label,
    ...                                         n_labels=3, z=z)
    >>> {name: site["value"].shape for name, site in trace.items() if site["type"] == "sample"}
    {'a': (), 'b': (), 'lam': (), 'u': (3,), 'kappa': (), 'omega': (), 'c': (3,), 'e': (3,), 'z': (600,)}
    """
    x = jnp.asarray(x)
    # a JAX array: a NumPy one fails the Binomial's support check against traced trials
    z = None if z is None else jnp.asarray(z)
    a = numpyro.sample("a", dist.Normal(0.0, intercept_scale))
    b = numpyro.sample("b", dist.Normal(0.0, slope_scale))
    lam = numpyro.sample("lam", dist.Exponential(1.0 / smoothness_scale))
    u = scaled_standard_normal("u", "spline", jnp.shape(transform)[1], lam, spline_information)
    tau = v = None
    if bins is not None:
        if n_bins is None:
            raise ValueError("top_label_smooth_model: bins needs n_bins")
        tau = numpyro.sample("tau", dist.Exponential(1.0 / bin_scale))
        v = scaled_standard_normal("v", "bin", n_bins, tau, bin_information)
    kappa = _scale("kappa", label_scale, shared_prob, shared_ratio, probit_scales)
    omega = _scale("omega", tilt_scale, shared_prob, shared_ratio, probit_scales)
    c = scaled_standard_normal("c", "label", n_labels, kappa, shift_information)
    e = scaled_standard_normal("e", "label", n_labels, omega, tilt_information)
    f = top_label_curve_logit(x, label, knots, transform, a, b, lam, u, kappa, c, e,
                              center=center, spread=spread, bins=bins, tau=tau, v=v, omega=omega)
    with numpyro.plate("obs", x.shape[0]):
        if trials is None:
            numpyro.sample("z", dist.Bernoulli(logits=f), obs=z)
        else:
            numpyro.sample("z", dist.Binomial(total_count=jnp.asarray(trials), logits=f), obs=z)
