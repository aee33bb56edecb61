r"""A reparameterisation of Dirichlet sites that NUTS can sample at small concentration.

NumPyro samples ``Dirichlet`` through a stick-breaking transform. With the
BECE default concentration :math:`\\alpha = 1/(2M)` a cell without data has
posterior concentration 1/30, whose logit has an exponential tail of scale
30: NUTS then needs hundreds of leapfrog steps and still diverges.
:class:`DirichletGammaReparam` replaces the site with independent Gamma
variables (:math:`q = g / \\sum g`, :math:`g_k \\sim \\mathrm{Gamma}(\\alpha_k)`,
which has exactly the Dirichlet law) and

* for the cells in ``boost`` writes :math:`g_k = g'_k\\,U_k^{1/\\alpha_k}` with
  :math:`g'_k \\sim \\mathrm{Gamma}(\\alpha_k + 1)` and
  :math:`-\\log U_k \\sim \\mathrm{Exponential}(1)` (Marsaglia & Tsang's
  boost, again exactly :math:`\\mathrm{Gamma}(\\alpha_k)`), so that the
  sampled coordinates are well scaled;
* replaces the law of the total :math:`T = \\sum_k g_k`, which is independent
  of :math:`q` and :math:`\\mathrm{Gamma}(\\sum\\alpha)` under the prior, by
  :math:`\\log T \\sim \\mathcal N(0, s^2)` through a ``numpyro.factor``.
  Because :math:`q \\perp T`, this leaves the distribution of :math:`q`
  unchanged (prior and posterior) and removes the long ridge along which all
  :math:`\\log g_k` move together.

Choose :math:`s` near the posterior scale of :math:`\log q_k` for the cells
with most data (about :math:`1/\sqrt{n}`): a much wider :math:`\log T` is
again a long direction (at n = 10^6, NUTS needed 250 leapfrog steps per
draw with s = 0.1 and 15 to 30 with s = 0.001 to 0.01; ``bece.cross_check``
uses :math:`1/\sqrt n`, at least 0.01 where a cell is boosted: boosted cells
diverge more often at the larger step sizes a smaller s allows).

Boost the cells with little or no data (those whose posterior concentration
is below 1); boosting cells with many counts creates a ridge of its own.
Forward sampling (``Predictive``) ignores factors and draws :math:`q` from
the exact Dirichlet.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from jax.scipy.special import gammaln
from numpyro.infer.reparam import Reparam

__all__ = ["DirichletGammaReparam"]


class DirichletGammaReparam(Reparam):
    """Reparameterise a ``Dirichlet`` latent site by normalised Gamma variables.

    Parameters
    ----------
    boost : array_like of bool, shape (K,), optional
        Cells sampled through the boosted representation (default none).
        A static (numpy) array: it decides which latent sites exist.
    log_total_scale : float, default 0.1
        Standard deviation :math:`s` of the replacement law of :math:`\\log T`.

    Examples
    --------
    >>> from numpyro.handlers import reparam
    >>> from bece.models import conjugate_collapsed, DirichletGammaReparam
    >>> model = reparam(conjugate_collapsed, config={"q": DirichletGammaReparam()})
    """

    def __init__(self, boost=None, log_total_scale: float = 0.1):
        self.boost = None if boost is None else np.asarray(boost, dtype=bool)
        self.log_total_scale = float(log_total_scale)

    def __call__(self, name, fn, obs):
        assert obs is None, "DirichletGammaReparam does not support observed sites"
        fn, expand_shape, event_dim = self._unwrap(fn)
        if not isinstance(fn, dist.Dirichlet) or expand_shape:
            raise ValueError(f"site {name!r}: DirichletGammaReparam needs an unbatched Dirichlet")
        a = fn.concentration
        k = a.shape[-1]
        boost = np.zeros(k, dtype=bool) if self.boost is None else self.boost.reshape(-1)
        if boost.shape != (k,):
            raise ValueError(f"boost must have {k} entries, got {boost.shape}")
        with numpyro.plate(f"{name}_cells", k):
            g = numpyro.sample(f"{name}_gamma", dist.Gamma(a + boost.astype(np.float32)))
            log_g = jnp.log(g)
            if boost.any():
                e = numpyro.sample(f"{name}_boost", dist.Exponential(jnp.ones(k)))
                log_g = log_g - jnp.where(boost, e / a, 0.0)
        log_t = jax.nn.logsumexp(log_g)
        total = jnp.sum(a)
        # density of log T under the prior: Gamma(total) density of T times T
        log_prior_t = total * log_t - jnp.exp(log_t) - gammaln(total)
        numpyro.factor(
            f"{name}_total",
            dist.Normal(0.0, self.log_total_scale).log_prob(log_t) - log_prior_t,
        )
        return None, jnp.exp(log_g - log_t)
