"""bece._validation.nuts: run_nuts against NumPyro's MCMC and a known posterior,
and NUTS draws that do not depend on jax_enable_x64.

Seeds are fixed, so each run here is deterministic.
"""

from __future__ import annotations

import numpy as np

from bece._base.jaxcompat import enable_x64


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
        " num_closed_form=100, model='conjugate')\n"
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

    from bece._validation.nuts import EXTRA_FIELDS, NutsRun, mcmc_inference_data, run_nuts

    settings = dict(num_chains=2, num_warmup=30, num_samples=20, seed=3,
                    target_accept_prob=0.8)
    run = run_nuts(_toy_model, progress_bar=True, **settings)
    assert isinstance(run, NutsRun)
    mcmc = MCMC(NUTS(_toy_model, target_accept_prob=0.8), num_warmup=30, num_samples=20,
                num_chains=2, chain_method="vectorized", progress_bar=False)
    with enable_x64():
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
    import numpyro
    import numpyro.distributions as dist

    from bece._base.arviz import ess as arviz_ess
    from bece._base.arviz import rhat as arviz_rhat
    from bece._validation.nuts import run_nuts

    loc, scale = np.array([1.0, -2.0, 0.5]), np.array([1.0, 0.1, 3.0])

    def model():
        numpyro.sample("x", dist.Normal(loc, scale))

    run = run_nuts(model, num_chains=4, num_warmup=300, num_samples=500, seed=0,
                   progress_bar=False, target_accept_prob=0.8)
    x = run.get_samples(group_by_chain=True)["x"]
    assert x.shape == (4, 500, 3)
    for j in range(3):
        ess = arviz_ess(x[..., j])
        assert abs(x[..., j].mean() - loc[j]) <= 5 * scale[j] / np.sqrt(ess)
        assert arviz_rhat(x[..., j]) < 1.01
        # sd: relative MCSE of a sample sd ~ 1/sqrt(2 ESS)
        assert abs(x[..., j].std() / scale[j] - 1) <= 5 / np.sqrt(2 * ess)


def test_pilot_seconds_by_hand():
    """A pilot of 100 warm-up transitions at 10 leapfrog steps, 25 adapted
    ones at 4, 100 warm-up ones again at 7 and 25 more at 2, which took
    2.225 s (1,000 + 100 + 700 + 50 = 1,850 steps). Its later transitions
    average (700 + 50) / 125 = 6 steps, so a chain of 1,000 + 1,000
    transitions takes 100 x 10 + 1,900 x 6 = 12,400 steps; with 50 warm-up
    transitions, 50 x 10 + 1,000 x 6 = 6,500. Four chains on two cores or
    more take two rounds, on one core four."""
    import os

    from bece._validation.nuts import PILOT_LENGTH, PILOT_SAMPLES, PILOT_WARMUP, pilot_seconds

    assert (PILOT_WARMUP, PILOT_SAMPLES, PILOT_LENGTH) == (100, 25, 250)
    steps = np.r_[np.full(100, 10), np.full(25, 4), np.full(100, 7), np.full(25, 2)]
    per_step = 2.225 / 1850
    assert np.isclose(pilot_seconds(steps, 2.225, 1, 1000, 1000), 12400 * per_step)
    assert np.isclose(pilot_seconds(steps, 2.225, 1, 50, 1000), 6500 * per_step)
    rounds = 2 if (os.cpu_count() or 1) >= 2 else 4
    assert np.isclose(pilot_seconds(steps, 2.225, 4, 1000, 1000), rounds * 12400 * per_step)


def test_the_pilots_second_mass_matrix_is_numpyros_regularised_diagonal():
    """The inverse mass matrix the pilot's second warm-up starts from: the
    variances of its adapted draws (divided by n), shrunk as NumPyro shrinks
    a window's (n/(n + 5) var + 1e-3 * 5/(n + 5)), in the structure NumPyro keeps it in
    (a dict of one block of every site, or an array; a diagonal matrix where
    the block is dense); and that structure is the one NUTS gives a model
    here, diagonal and dense."""
    import jax
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer import NUTS

    from bece._validation.nuts import _diagonal_like, enable_x64

    draws = np.array([[0.0, 1.0], [2.0, 1.0], [4.0, 1.0], [6.0, 1.0], [8.0, 1.0]])
    expected = np.array([0.5 * 8.0 + 0.5e-3, 0.5e-3])  # var 8 and 0; n/(n + 5) = 1/2
    np.testing.assert_allclose(_diagonal_like(np.ones(2), draws), expected, rtol=1e-15)
    got = _diagonal_like({("a", "b"): np.ones(2)}, draws)
    assert list(got) == [("a", "b")]
    np.testing.assert_allclose(got[("a", "b")], expected, rtol=1e-15)

    def model():
        numpyro.sample("b", dist.Normal(0.0, 1.0))
        numpyro.sample("a", dist.Normal(np.zeros(1), 1.0))

    with enable_x64():  # as in the pilot
        dense = _diagonal_like({("a", "b"): np.eye(2)}, draws)[("a", "b")]
    np.testing.assert_allclose(dense, np.diag(expected), rtol=1e-15)
    for dense_mass in (False, True):
        state = NUTS(model, dense_mass=dense_mass).init(jax.random.PRNGKey(0), 10)
        structure = state.adapt_state.inverse_mass_matrix
        shapes = jax.tree.map(np.shape, _diagonal_like(structure, draws))
        assert shapes == jax.tree.map(np.shape, structure)


def test_announced_runs_a_pilot_that_leaves_the_draws_alone(capsys):
    """progress_bar=None announces the time on stderr before the chains: a run
    of 500 transitions per chain or more timed by a pilot chain, a shorter one
    by the first guess; neither changes the draws (fixed seed, deterministic),
    and a run the pilot finds short shows no bar."""
    from bece._validation.nuts import PILOT_ABOVE, run_nuts

    assert PILOT_ABOVE == 500
    for warmup, pilot in ((300, True), (50, False)):
        settings = dict(num_chains=2, num_warmup=warmup, num_samples=200, seed=5,
                        target_accept_prob=0.8)
        capsys.readouterr()
        announced = run_nuts(_toy_model, progress_bar=None, **settings)
        said = capsys.readouterr().err
        assert f"NUTS: 2 chains x {warmup} + 200 draws, about " in said
        assert ("timed by a pilot chain of 250 transitions" in said) is pilot
        assert "chain 0" not in said  # a toy run takes about a second: no bar
        quiet = run_nuts(_toy_model, progress_bar=False, **settings)
        for k in quiet.samples:
            np.testing.assert_array_equal(announced.samples[k], quiet.samples[k])
        for k in quiet.extra_fields:
            np.testing.assert_array_equal(announced.extra_fields[k], quiet.extra_fields[k])
