r"""The temperature of temperature scaling as a parameter with a posterior.

.. math::

    \log T \sim \mathcal N(m_0, s_0^2), \qquad
    y_i \mid z_i, T \sim \operatorname{Categorical}\big(\operatorname{softmax}(z_i / T)\big),
    \quad i = 1, \dots, n,

with :math:`z_i` the validation logits (data, always given) and :math:`y_i`
their labels. The default prior, :math:`m_0 = 0`, :math:`s_0 = 1`, is weakly
informative: its median is T = 1 (the network as it is) and its central 90%
interval :math:`[e^{-1.645}, e^{1.645}] = [0.19, 5.2]` holds the temperatures
reported for deep networks (Guo et al. 2017 fit T between about 1 and 3),
so a few hundred labels outweigh it.

:func:`bece.calibrate.temperature_posterior` computes the same posterior by
one-dimensional quadrature; this model is its MCMC cross-check. Logits are
passed as given: run it in float64 (``jax.enable_x64`` as a context) for
the log-likelihood of large n to keep its precision.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist

__all__ = ["temperature_model"]


def temperature_model(logits, y=None, *, prior_loc=0.0, prior_scale=1.0):
    r"""Categorical likelihood of ``y`` under :math:`\operatorname{softmax}(z / T)`.

    Parameters
    ----------
    logits : array of shape (n, K)
        Validation logits :math:`z` (log-probabilities serve too).
    y : int array of shape (n,), optional
        Labels in ``0 .. K-1``; None samples them (prior or posterior
        predictive).
    prior_loc, prior_scale : float, default 0.0, 1.0
        :math:`m_0`, :math:`s_0` of the Normal prior on :math:`\log T`.

    Sample sites: ``log_temperature``, the deterministic ``temperature``
    and the observed ``y``.

    Examples
    --------
    >>> import numpy as np
    >>> from numpyro import handlers
    >>> from bece.models import temperature_model
    >>> logits = np.random.default_rng(0).normal(size=(50, 3))
    >>> trace = handlers.trace(handlers.seed(temperature_model, rng_seed=0)).get_trace(logits)
    >>> [(name, site["type"], site["value"].shape) for name, site in trace.items() if site["type"] != "plate"]
    [('log_temperature', 'sample', ()), ('temperature', 'deterministic', ()), ('y', 'sample', (50,))]
    >>> t, log_t = trace["temperature"]["value"], trace["log_temperature"]["value"]
    >>> bool(abs(float(t) - float(np.exp(log_t))) < 1e-5 * float(t))
    True
    """
    logits = jnp.asarray(logits)
    log_t = numpyro.sample("log_temperature", dist.Normal(prior_loc, prior_scale))
    t = numpyro.deterministic("temperature", jnp.exp(log_t))
    with numpyro.plate("obs", logits.shape[0]):
        numpyro.sample("y", dist.Categorical(logits=logits / t), obs=y)
