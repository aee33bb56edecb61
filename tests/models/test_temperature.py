"""bece.models.temperature_model: its log density against scipy, and NUTS
on it against the quadrature posterior of bece.calibrate.temperature_posterior.

The NUTS comparison uses Z = 5 Monte Carlo standard errors per quantile
(two-sided false-alarm rate 5.7e-7 each; three quantiles, < 2e-6 per run).
A quantile's standard error is sqrt(q (1 - q) / ESS) / f(x_q), with ESS
that of the indicator of draws below x_q (ArviZ's mean ESS) and f the
posterior density of log T, known from the quadrature.
"""

from __future__ import annotations

import numpy as np
from numpyro.infer.util import log_density
from scipy import special, stats

from bece._base.arviz import ess
from bece._base.jaxcompat import enable_x64
from bece._validation.nuts import run_nuts
from bece.calibrate import temperature_posterior
from bece.models import temperature_model

Z = 5.0


def _data(n=120, k=3, t=1.6, seed=5):
    rng = np.random.default_rng(seed)
    z = rng.normal(scale=3.0, size=(n, k))
    p = special.softmax(z / t, axis=1)
    y = np.minimum((rng.uniform(size=(n, 1)) > p.cumsum(axis=1)).sum(axis=1), k - 1)
    return z, y


def test_log_density_is_prior_plus_categorical():
    z, y = _data(n=20)
    u = 0.3
    with enable_x64():
        lp, _ = log_density(temperature_model, (z, y), {"prior_loc": 0.1, "prior_scale": 0.7},
                            {"log_temperature": u})
    ref = (stats.norm.logpdf(u, 0.1, 0.7)
           + special.log_softmax(z / np.exp(u), axis=1)[np.arange(20), y].sum())
    assert abs(float(lp) - ref) < 1e-10


def test_nuts_matches_the_quadrature():
    z, y = _data()
    post = temperature_posterior(z, y, input="logits")
    run = run_nuts(temperature_model, z, y, num_chains=2, num_warmup=500, num_samples=2000, seed=0,
                   progress_bar=False, target_accept_prob=0.8)
    u = np.asarray(run.get_samples(group_by_chain=True)["log_temperature"], dtype=np.float64)
    for q in (0.05, 0.5, 0.95):
        x = np.log(post.quantile(q))
        below = (u <= x).astype(np.float64)
        n_eff = ess(below, method="mean")
        f = np.interp(x, post.log_t, post.density)
        se = np.sqrt(q * (1 - q) / n_eff) / f
        assert abs(np.quantile(u, q) - x) < Z * se, (q, np.quantile(u, q), x, se)
