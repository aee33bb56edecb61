"""NUTS cross-check of the closed form.

``cross_check`` declares agreement when every z-score (probability-space
comparison at 5 quantiles of each quantity) is below the Bonferroni threshold
for a family-wise false-alarm rate of 1e-4. Measured once with
benchmarks/crosscheck_false_alarm.py (20 seeds, n = 1000, 15 bins, 155
comparisons per run): the largest z per run had median 2.9 and maximum 3.7,
as 155 independent N(0, 1) variables give, against a threshold of 4.98, and
no run diverged. Seeds are fixed, so each run here is deterministic.
"""

from __future__ import annotations

import numpy as np
import pytest

import bece
from bece import CalibrationStats, posterior_ece
from bece.validation.crosscheck import cross_check_stats
from bece.binned.conjugate import conjugate_posterior, ece_of_draws
from bece.base.random import sample_dirichlet
from bece.results.ece import BayesianECE

from ..conftest import simulate_binary


def _beta_data(n, seed):
    rng = np.random.default_rng(seed)
    p = rng.beta(5, 1, size=n)
    y = (rng.uniform(size=n) < p**1.2).astype(int)
    return y, p


@pytest.mark.parametrize(
    "n,n_bins",
    [(25, 10), (1000, 15), (1_000_000, 15)],
    ids=["small-n-empty-bins", "medium", "large-n"],
)
def test_agrees_on_the_conjugate_model(n, n_bins):
    y, p = _beta_data(n, seed=n)
    cc = bece.cross_check(y, p, n_bins=n_bins, seed=1)
    if n == 25:
        assert (cc.closed_form.stats.bin_counts == 0).any()
    assert cc.converged, cc
    assert cc.agree, cc.table.sort_values("z").tail()
    assert cc.divergences <= 4  # at most 0.1% of the draws (0 to 3 seen over seeds)
    assert len(cc.table) == 5 * (1 + 2 * n_bins)
    assert cc.nuts.draws.shape == (4000,) and cc.nuts.method == "nuts"
    assert cc.inference_data.posterior.sizes["chain"] == 4
    assert "ece" in cc.closed_form_inference_data.posterior
    assert abs(cc.ece_gap["mean"]) <= 5 * cc.closed_form.std / np.sqrt(cc.ess_min) + 1e-6


@pytest.fixture(scope="module")
def small():
    y, p = _beta_data(30, seed=3)
    return CalibrationStats.from_arrays(y, p, n_bins=5)


def test_alpha_off_by_one_is_detected(small):
    wrong = posterior_ece(small, alpha=1 / 10 + 1, num_samples=20_000, seed=2)
    cc = cross_check_stats(small, closed_form=wrong, seed=4)
    assert cc.converged and not cc.agree
    assert cc.max_z > 3 * cc.z_threshold


def test_untruncated_mu_is_detected(small):
    post = conjugate_posterior(small)
    rng = np.random.default_rng(5)
    size = 20_000
    q = sample_dirichlet(post.concentration, size, rng)
    mu = post.loc + post.scale * rng.standard_normal((size, small.n_bins))  # no truncation
    weight = q.sum(axis=1)
    wrong = BayesianECE(
        draws=ece_of_draws(q, mu), accuracy=q[:, 1] / weight, confidence=mu, weight=weight,
        plugin=0.0, stats=small,
    )
    cc = cross_check_stats(small, closed_form=wrong, seed=6)
    assert cc.converged and not cc.agree
    worst = cc.table.loc[cc.table["z"].idxmax()]
    assert worst["variable"] == "confidence"


def test_literal_model_reports_the_gap():
    # few points per bin and a wide sigma: the truncation normaliser matters
    y, p = simulate_binary(40, np.random.default_rng(8), power=2.0)
    stats = CalibrationStats.from_arrays(y, p, n_bins=4)
    cc = cross_check_stats(stats, model="literal", sigma=0.5, tau=0.5, seed=7)
    assert cc.model == "literal" and cc.converged
    assert cc.nuts.model == "binned-literal"
    gap = cc.gap
    assert list(gap.index) == ["bin 0", "bin 1", "bin 2", "bin 3", "ece"]
    # the literal model's mean confidence is pulled towards the bin centre
    centre = 0.5 * (stats.edges[:-1] + stats.edges[1:])
    nonempty = stats.bin_counts > 0
    lit = gap["confidence_nuts"].to_numpy()[:4][nonempty]
    closed = gap["confidence_closed_form"].to_numpy()[:4][nonempty]
    assert np.all(np.abs(lit - centre[nonempty]) <= np.abs(closed - centre[nonempty]) + 1e-3)
    assert not cc.agree  # at this sigma the closed form is visibly off


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"model": "bogus"}, "model must be one of"),
        ({"num_chains": 0}, "num_chains must be a positive integer"),
        ({"num_warmup": 0}, "num_warmup must be a positive integer"),
        ({"false_alarm": 1.5}, "false_alarm must be in"),
        ({"seed": -2}, "seed must be a non-negative int"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        bece.cross_check([0, 1, 1], [0.2, 0.7, 0.9], **kwargs)


def test_zero_width_bins_are_refused():
    p = np.array([0.7] * 8 + [0.1, 0.9])
    with pytest.raises(ValueError, match="bins of positive width"):
        bece.cross_check(np.ones(10, int), p, n_bins=5, binning="quantile")


def test_nuts_draws_do_not_depend_on_jax_enable_x64():
    """NUTS runs in a scoped float64 context: a process with JAX_ENABLE_X64=1
    gives the same draws as one without (short chains, tiny data)."""
    import os
    import subprocess
    import sys

    code = (
        "import numpy as np, bece\n"
        "y = np.array([0, 1, 1, 0, 1, 1, 1, 0, 1, 1]); p = np.linspace(0.35, 0.95, 10)\n"
        "cc = bece.cross_check(y, p, n_bins=3, num_chains=1, num_warmup=30, num_samples=20,"
        " num_closed_form=100)\n"
        "print(repr(cc.nuts.draws.tolist()))\n"
    )
    out = []
    for flag in ("0", "1"):
        env = dict(os.environ, JAX_ENABLE_X64=flag, JAX_PLATFORMS="cpu")
        res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                             check=True)
        out.append(res.stdout.strip().splitlines()[-1])
    assert out[0] == out[1]


def _toy_model():
    import numpyro
    import numpyro.distributions as dist

    x = numpyro.sample("x", dist.Normal(0.0, 1.0).expand([2]))
    s = numpyro.sample("s", dist.LogNormal(0.0, 0.5))
    numpyro.deterministic("y", s * x.sum())


def test_run_nuts_follows_numpyro_mcmc():
    """run_nuts (one compiled program per chain) gives NumPyro MCMC's draws,
    sample sites constrained, deterministic sites and NUTS fields, for the
    same seed; its progress bar does not change them. Deterministic: fixed
    seeds. The programs are compiled differently, so values may differ by
    rounding that grows along the chains (equal here against the vectorised
    MCMC, 4e-11 against chain_method="sequential" after 50 steps)."""
    import jax
    from numpyro.infer import MCMC, NUTS

    from bece.validation.nuts import EXTRA_FIELDS, NutsRun, mcmc_inference_data, run_nuts

    settings = dict(num_chains=2, num_warmup=30, num_samples=20, seed=3,
                    target_accept_prob=0.8)
    run = run_nuts(_toy_model, progress_bar=True, **settings)
    assert isinstance(run, NutsRun)
    mcmc = MCMC(NUTS(_toy_model, target_accept_prob=0.8), num_warmup=30, num_samples=20,
                num_chains=2, chain_method="vectorized", progress_bar=False)
    with jax.enable_x64(True):
        mcmc.run(jax.random.PRNGKey(3), extra_fields=EXTRA_FIELDS)
    for group in (True, False):
        ours, theirs = run.get_samples(group), mcmc.get_samples(group)
        assert set(ours) == set(theirs) == {"x", "s", "y"}
        for k in ours:
            np.testing.assert_allclose(ours[k], np.asarray(theirs[k]), rtol=1e-7, atol=1e-9)
        ours, theirs = run.get_extra_fields(group), mcmc.get_extra_fields(group)
        assert set(ours) == set(theirs)
        for k in ours:
            np.testing.assert_allclose(ours[k], np.asarray(theirs[k]), rtol=1e-7, atol=1e-9)
    assert run.get_samples(group_by_chain=True)["x"].shape == (2, 20, 2)
    assert run.get_samples()["x"].shape == (40, 2)
    idata = mcmc_inference_data(run)
    assert idata.posterior["x"].shape == (2, 20, 2)
    assert {"diverging", "lp", "step_size", "tree_depth"} <= set(idata.sample_stats)


def test_run_nuts_samples_a_known_posterior():
    """Moments of a 3-dim Normal (means 1, -2, 0.5; sds 1, 0.1, 3) within
    5 Monte Carlo standard errors per coordinate (ESS from ArviZ): false-alarm
    rate about 6e-7 per coordinate if the draws are right; fixed seed."""
    import arviz as az
    import numpyro
    import numpyro.distributions as dist

    from bece.validation.nuts import run_nuts

    loc, scale = np.array([1.0, -2.0, 0.5]), np.array([1.0, 0.1, 3.0])

    def model():
        numpyro.sample("x", dist.Normal(loc, scale))

    run = run_nuts(model, num_chains=4, num_warmup=300, num_samples=500, seed=0,
                   progress_bar=False, target_accept_prob=0.8)
    x = run.get_samples(group_by_chain=True)["x"]
    assert x.shape == (4, 500, 3)
    for j in range(3):
        ess = float(az.ess(x[..., j]))
        assert abs(x[..., j].mean() - loc[j]) <= 5 * scale[j] / np.sqrt(ess)
        assert float(az.rhat(x[..., j])) < 1.01
        # sd: relative MCSE of a sample sd ~ 1/sqrt(2 ESS)
        assert abs(x[..., j].std() / scale[j] - 1) <= 5 / np.sqrt(2 * ess)
