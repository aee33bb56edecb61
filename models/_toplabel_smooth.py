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

import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist

from ._smooth import curve_logit

__all__ = ["scale_prior", "top_label_curve_logit", "top_label_smooth_model"]


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

    Sample sites: ``a``, ``b``, ``lam``, ``u`` (K - 2), with bins ``tau`` and
    ``v`` (M), ``kappa``, ``omega``, ``c`` and ``e`` (L), and the observed ``z``.

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
    with numpyro.plate("spline", jnp.shape(transform)[1]):
        u = numpyro.sample("u", dist.Normal(0.0, 1.0))
    tau = v = None
    if bins is not None:
        if n_bins is None:
            raise ValueError("top_label_smooth_model: bins needs n_bins")
        tau = numpyro.sample("tau", dist.Exponential(1.0 / bin_scale))
        with numpyro.plate("bin", n_bins):
            v = numpyro.sample("v", dist.Normal(0.0, 1.0))
    kappa = numpyro.sample("kappa", scale_prior(label_scale, shared_prob, shared_ratio))
    omega = numpyro.sample("omega", scale_prior(tilt_scale, shared_prob, shared_ratio))
    with numpyro.plate("label", n_labels):
        c = numpyro.sample("c", dist.Normal(0.0, 1.0))
        e = numpyro.sample("e", dist.Normal(0.0, 1.0))
    f = top_label_curve_logit(x, label, knots, transform, a, b, lam, u, kappa, c, e,
                              center=center, spread=spread, bins=bins, tau=tau, v=v, omega=omega)
    with numpyro.plate("obs", x.shape[0]):
        if trials is None:
            numpyro.sample("z", dist.Bernoulli(logits=f), obs=z)
        else:
            numpyro.sample("z", dist.Binomial(total_count=jnp.asarray(trials), logits=f), obs=z)
