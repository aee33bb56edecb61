"""Simulation-based calibration (SBC) of BECE posteriors.

Talts, Betancourt, Simpson, Vehtari & Gelman (2018), "Validating Bayesian
inference algorithms with simulation-based calibration", arXiv:1804.06788.

For each of ``num_simulations`` replications: draw parameters
:math:`\\theta^\\ast = (q, \\mu)` from the prior and a data set of ``n``
observations given them, both with the NumPyro model (``Predictive``); draw
``L`` posterior samples :math:`\\theta_1..\\theta_L` from the posterior under
test; record the rank :math:`r = \\#\\{l : f(\\theta_l) < f(\\theta^\\ast)\\}
\\in \\{0, .., L\\}` for each scalar quantity :math:`f` (every cell
probability :math:`q_{z,m}`, every bin's mean confidence and the ECE). If
the posterior is correct, each rank is uniform on :math:`\\{0, .., L\\}`.

Uniformity is tested per quantity with a chi-square test on a histogram of
the ranks in ``num_hist_bins`` equal groups of rank values; the result
reports the smallest p-value and its Bonferroni adjustment over quantities,
so that ``uniform`` has a family-wise false-alarm rate of at most
``false_alarm`` (up to the chi-square approximation: keep at least 5
expected counts per histogram bin).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._base.checks import positive_int
from .._base.random import sample_dirichlet
from .._binned.conjugate import conjugate_posterior, ece_of_draws, sample_posterior
from .._binned.literal import sample_bin_confidence
from .._results.html import HTMLDisplay
from .._stats.binning import Binning, make_binning
from .._stats.calibration_stats import CalibrationStats

__all__ = [
    "closed_form_draws",
    "literal_draws",
    "sbc",
    "SBCResult",
    "stats_from_cells",
]


@dataclass(frozen=True, repr=False, eq=False)
class SBCResult(HTMLDisplay):
    """Ranks and uniformity tests of an SBC run.

    Attributes
    ----------
    ranks : dict of str to ndarray of shape (num_simulations,), int64
        Rank of the truth among the posterior draws, per scalar quantity
        (``"q[z,m]"``, ``"confidence[m]"``, ``"ece"``).
    num_draws : int
        Posterior draws per replication L (ranks lie in 0..L).
    pvalues : dict of str to float
        Chi-square p-value of uniformity per quantity.
    false_alarm : float
    model, method : str

    Examples
    --------
    A posterior whose ECE draws are half what they should be puts the true
    ECE above nearly all of them:

    >>> from bece.validation import sbc
    >>> from bece._validation.sbc import closed_form_draws
    >>> def overconfident(stats, num_draws, rng):
    ...     draws = closed_form_draws(stats, num_draws, rng)
    ...     return {**draws, "ece": 0.5 * draws["ece"]}
    >>> r = sbc(num_simulations=100, method=overconfident, seed=0)
    >>> r.method, r.uniform, min(r.pvalues, key=r.pvalues.get)
    ('overconfident', False, 'ece')
    >>> bool(r.histogram("ece")[-1] > 50)      # most ranks in the top group
    True
    """

    ranks: dict[str, np.ndarray]
    num_draws: int
    num_hist_bins: int
    pvalues: dict[str, float]
    false_alarm: float
    model: str
    method: str

    @property
    def num_simulations(self) -> int:
        return int(next(iter(self.ranks.values())).shape[0])

    @property
    def min_pvalue(self) -> float:
        return float(min(self.pvalues.values()))

    @property
    def adjusted_pvalue(self) -> float:
        """Bonferroni-adjusted smallest p-value over all quantities."""
        return float(min(1.0, self.min_pvalue * len(self.pvalues)))

    @property
    def uniform(self) -> bool:
        """No quantity's ranks reject uniformity at family-wise rate ``false_alarm``."""
        return self.adjusted_pvalue > self.false_alarm

    def histogram(self, name: str) -> np.ndarray:
        """Counts of the ranks of ``name`` in ``num_hist_bins`` equal groups."""
        return _hist(self.ranks[name], self.num_draws, self.num_hist_bins)

    def to_dict(self) -> dict[str, Any]:
        """Plain Python (JSON): ``model``, ``method``, ``num_simulations``,
        ``num_draws``, ``num_hist_bins``, ``false_alarm``, ``uniform``,
        ``adjusted_pvalue`` and, per quantity, its ``pvalue`` and rank
        ``histogram``."""
        return {
            "model": self.model, "method": self.method, "num_simulations": self.num_simulations,
            "num_draws": self.num_draws, "num_hist_bins": self.num_hist_bins,
            "false_alarm": self.false_alarm, "uniform": self.uniform,
            "adjusted_pvalue": self.adjusted_pvalue,
            "quantities": {name: {"pvalue": self.pvalues[name],
                                  "histogram": self.histogram(name).tolist()}
                           for name in self.pvalues},
        }

    def summary(self) -> Any:  # pandas.DataFrame
        """One row per quantity: the chi-square p-value of its ranks'
        uniformity and the Bonferroni-adjusted one."""
        from .._results.summaries import numbers_table

        k = len(self.pvalues)
        return numbers_table({name: {"pvalue": p, "adjusted_pvalue": min(1.0, p * k)}
                              for name, p in self.pvalues.items()})

    def text(self) -> str:
        """The lines a person reads: the answer, the run and the worst quantities."""
        worst = sorted(self.pvalues, key=self.pvalues.__getitem__)[:3]
        answer = ("ranks uniform: no sign of a miscalibrated posterior" if self.uniform else
                  "ranks not uniform: the posterior is not calibrated on its model")
        return "\n".join([
            f"SBC of the {self.method} posterior on the {self.model} model: {answer}",
            f"  {self.num_simulations:,} simulations, {self.num_draws} draws each, ranks in "
            f"{self.num_hist_bins} groups; chi-square per quantity, Bonferroni over "
            f"{len(self.pvalues)} at family-wise rate {self.false_alarm:g}",
            f"  adjusted p-value {self.adjusted_pvalue:.3g}; smallest p-values: "
            + ", ".join(f"{n} {self.pvalues[n]:.2g}" for n in worst),
        ])

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        worst = min(self.pvalues, key=self.pvalues.__getitem__)
        return (
            f"SBCResult(model={self.model!r}, method={self.method!r}, "
            f"num_simulations={self.num_simulations}, num_draws={self.num_draws}, "
            f"uniform={self.uniform}, adjusted_pvalue={self.adjusted_pvalue:.3g} (worst: {worst}))"
        )


def _chisquare(*args):
    from scipy import stats  # here, not at import: scipy.stats costs ~1 s

    return stats.chisquare(*args)


def _hist(ranks: np.ndarray, num_draws: int, num_hist_bins: int) -> np.ndarray:
    group = (num_draws + 1) // num_hist_bins
    return np.bincount(ranks // group, minlength=num_hist_bins)


def stats_from_cells(binning: Binning, cell: np.ndarray, p: np.ndarray) -> CalibrationStats:
    """Statistics of simulated cells ``z * M + b`` and confidences ``p``.

    The bin comes from the cell, not from ``p``: under the conjugate model a
    simulated confidence may fall outside its bin (or outside [0, 1]).
    """
    m = binning.n_bins
    cell = np.asarray(cell, dtype=np.int64)
    p = np.asarray(p, dtype=np.float64)
    b = cell % m
    counts = np.bincount(cell, minlength=2 * m).reshape(2, m)
    # confidences outside [0, 1] make sums that real predictions cannot have
    return CalibrationStats.from_simulation(
        binning,
        counts,
        np.bincount(b, weights=p, minlength=m),
        np.bincount(b, weights=p * p, minlength=m),
    )


def closed_form_draws(
    stats: CalibrationStats, num_draws: int, rng: np.random.Generator, **prior: Any
) -> dict[str, np.ndarray]:
    """Closed-form posterior draws: ``q`` (L, 2, M), ``confidence`` (L, M), ``ece`` (L,)."""
    q, mu, ece = sample_posterior(conjugate_posterior(stats, **prior), num_draws, rng)
    return {"q": q, "confidence": mu, "ece": ece}


def literal_draws(
    stats: CalibrationStats, num_draws: int, rng: np.random.Generator, **prior: Any
) -> dict[str, np.ndarray]:
    """Exact draws of the literal model's posterior (:mod:`bece._binned.literal`):
    ``q`` (L, 2, M), ``confidence`` (L, M; truncated-Normal means), ``ece`` (L,)."""
    post = conjugate_posterior(stats, **prior)
    q = sample_dirichlet(post.concentration, num_draws, rng)
    conf = sample_bin_confidence(post, num_draws, rng, "literal")
    return {"q": q, "confidence": conf, "ece": ece_of_draws(q, conf, post.weighting)}


def _nuts_draws_factory(prior, literal, warmup, thin, seed):
    import jax
    from numpyro.infer import MCMC, NUTS

    from .crosscheck import collapsed_data, nuts_model

    key = iter(jax.random.split(jax.random.PRNGKey(seed), 1_000_000))

    def draws(stats, num, rng):
        post = conjugate_posterior(stats, **prior)
        fn = nuts_model(stats, post, "literal" if literal else "conjugate")
        mcmc = MCMC(NUTS(fn), num_warmup=warmup, num_samples=num * thin, progress_bar=False)
        mcmc.run(next(key), stats.edges, post.alpha, post.sigma, post.tau, **collapsed_data(stats))
        s = mcmc.get_samples()
        m = stats.n_bins
        return {
            "q": np.asarray(s["q"], dtype=np.float64)[::thin].reshape(-1, 2, m),
            "confidence": np.asarray(s["confidence"], dtype=np.float64)[::thin],
            "ece": np.asarray(s["ece"], dtype=np.float64)[::thin],
        }

    return draws


def sbc(
    *,
    model: Any = "conjugate",
    n: int = 50,
    num_simulations: int = 200,
    num_draws: int = 99,
    method: str | Callable[..., dict[str, np.ndarray]] = "conjugate",
    num_hist_bins: int = 10,
    false_alarm: float = 1e-4,
    nuts_warmup: int = 300,
    nuts_thin: int = 4,
    seed: int = 0,
) -> SBCResult:
    """Simulation-based calibration of a BECE posterior.

    Parameters
    ----------
    model : {"conjugate", "literal"} or BinnedModel, default "conjugate"
        The NumPyro model that simulates the truth and the data, with its
        bins and prior: a :class:`bece.BinnedModel` (its ``form``,
        ``n_bins`` uniform bins, default 15, and ``alpha``, ``sigma``,
        ``tau``, the same prior simulating and assumed by the posterior), or
        the name of a form with M = 4 uniform bins and the default prior.
    n : int, default 50
        Observations per simulated data set.
    num_simulations : int, default 200
        Replications (each a prior draw and a data set).
    num_draws : int, default 99
        Posterior draws L per replication; ``num_draws + 1`` must be a
        multiple of ``num_hist_bins``.
    method : {"conjugate", "literal", "nuts"} or callable, default "conjugate"
        Posterior under test: the conjugate closed form, the literal
        model's exact sampler (:func:`literal_draws`), or NUTS on the
        collapsed version of ``model`` (one chain, ``nuts_warmup`` warm-up
        iterations, every ``nuts_thin``-th draw kept); or a function
        ``posterior(stats, num_draws, rng) -> {"q": (L, 2, M),
        "confidence": (L, M), "ece": (L,)}`` (to test a deliberately wrong
        posterior, for instance).
    num_hist_bins : int, default 10
    false_alarm : float, default 1e-4
        Family-wise false-alarm rate of :attr:`SBCResult.uniform`.
    seed : int, default 0

    Returns
    -------
    SBCResult

    Notes
    -----
    Under the literal form with ``method="conjugate"`` the posterior is
    the conjugate form's approximation of the literal model; non-uniform
    ranks there measure that approximation, not a bug. ``method="literal"``
    is exact for ``model="literal"``.

    Examples
    --------
    >>> from bece.validation import sbc
    >>> r = sbc(n=50, num_simulations=100, seed=0)   # the closed form, 4 bins
    >>> r.num_simulations, r.ranks["ece"].shape, r.uniform
    (100, (100,), True)
    >>> int(r.histogram("ece").sum())          # ranks of the true ECE in 10 groups
    100
    """
    import jax
    from numpyro.infer import Predictive

    from ..models import conjugate_model, literal_model

    if isinstance(model, str):
        form, m, prior = model, 4, {"alpha": None, "sigma": None, "tau": None}
    elif all(hasattr(model, a) for a in ("form", "n_bins", "alpha", "sigma", "tau")):
        form, m = model.form, 15 if model.n_bins is None else model.n_bins
        prior = {"alpha": model.alpha, "sigma": model.sigma, "tau": model.tau}
    else:
        raise ValueError(f"model must be 'conjugate', 'literal' or a bece.BinnedModel, "
                         f"got {type(model).__name__}")
    n = positive_int(n, "n")
    m = positive_int(m, "n_bins")
    num_simulations = positive_int(num_simulations, "num_simulations")
    num_draws = positive_int(num_draws, "num_draws")
    num_hist_bins = positive_int(num_hist_bins, "num_hist_bins")
    if (num_draws + 1) % num_hist_bins:
        raise ValueError(
            f"num_draws + 1 = {num_draws + 1} must be a multiple of num_hist_bins = {num_hist_bins}"
        )
    if form not in ("conjugate", "literal"):
        raise ValueError(f"model must be 'conjugate', 'literal' or a bece.BinnedModel, got {model!r}")
    if not callable(method) and method not in ("conjugate", "literal", "nuts"):
        raise ValueError(f"method must be 'conjugate', 'literal' or 'nuts', got {method!r}")
    if not 0 < false_alarm < 1:
        raise ValueError(f"false_alarm must be in (0, 1), got {false_alarm!r}")
    binning = make_binning(None, m, "uniform")
    # prior parameters as arrays, from the closed form's own defaults
    empty = CalibrationStats(binning, np.zeros((2, m)), np.zeros(m), np.zeros(m))
    base = conjugate_posterior(empty, **prior)
    model_fn = literal_model if form == "literal" else conjugate_model
    sim = Predictive(model_fn, num_samples=num_simulations)(
        jax.random.PRNGKey(seed), binning.edges, base.alpha, base.sigma, base.tau, n=n
    )
    sim = {k: np.asarray(v, dtype=np.float64) for k, v in sim.items()}
    truth = {
        "q": sim["q"].reshape(num_simulations, 2, m),
        "confidence": sim["confidence"],
        "ece": sim["ece"],
    }
    if callable(method):
        posterior, label = method, getattr(method, "__name__", "custom")
    elif method in ("conjugate", "literal"):
        draws_of = closed_form_draws if method == "conjugate" else literal_draws

        def posterior(stats, num, rng):
            return draws_of(stats, num, rng, **prior)
        label = method
    else:
        posterior = _nuts_draws_factory(prior, form == "literal", nuts_warmup, nuts_thin, seed)
        label = method
    rng = np.random.default_rng([seed, 2])
    names = [f"q[{z},{j}]" for z in range(2) for j in range(m)]
    names += [f"confidence[{j}]" for j in range(m)] + ["ece"]
    ranks = np.empty((num_simulations, len(names)), dtype=np.int64)
    for s in range(num_simulations):
        stats = stats_from_cells(binning, sim["cell"][s], sim["p"][s])
        d = posterior(stats, num_draws, rng)
        draws = np.concatenate(
            [d["q"].reshape(num_draws, -1), d["confidence"], d["ece"][:, None]], axis=1
        )
        true = np.concatenate([truth["q"][s].ravel(), truth["confidence"][s], [truth["ece"][s]]])
        ranks[s] = (draws < true).sum(axis=0)
    expected = num_simulations / num_hist_bins
    pvalues = {}
    for k, name in enumerate(names):
        hist = _hist(ranks[:, k], num_draws, num_hist_bins)
        pvalues[name] = float(_chisquare(hist, np.full(num_hist_bins, expected)).pvalue)
    return SBCResult(
        ranks={name: ranks[:, k] for k, name in enumerate(names)},
        num_draws=num_draws,
        num_hist_bins=num_hist_bins,
        pvalues=pvalues,
        false_alarm=false_alarm,
        model=form,
        method=label,
    )


