r"""A smooth-curve Bayesian ECE: a spline calibration curve and a Bayesian bootstrap.

The binned posterior (:mod:`bece._binned.conjugate`) estimates each bin's accuracy
separately; with a few hundred predictions most bins hold a handful, and the
absolute value in :math:`|\mathrm{acc}_m - \mathrm{conf}_m|` turns their noise
into an upward bias and intervals that miss the truth. Here the calibration
curve is modelled smoothly across bins, which pools their information.

Model (written out in NumPyro in :mod:`bece.models._smooth`). With
:math:`x = \operatorname{logit} p` (confidences clipped to
:math:`[10^{-6}, 1 - 10^{-6}]` *for the curve only*, so that a confidence of
exactly 0 or 1 has a finite logit) and :math:`m(p)` the ECE bin of p,

.. math::

    \operatorname{logit} P(z = 1 \mid p) = f(x) = x + a + b x + \lambda\,\phi(x)^\top u
        + \tau\,v_{m(p)},

    a \sim \mathcal N(0, s_a^2),\ b \sim \mathcal N(0, s_b^2),\
    u \sim \mathcal N(0, I),\ v \sim \mathcal N(0, I_M),\
    \lambda \sim \mathrm{Exp}(\text{mean } s_\lambda),\
    \tau \sim \mathrm{Exp}(\text{mean } s_\tau),

with :math:`\phi` the K - 2 non-linear functions of a natural cubic spline
with knots at quantiles of the observed logits, in Demmler–Reinsch form
(:func:`roughness_penalty`) and scaled so that :math:`\lambda` is the prior
RMS over the observed confidences of the curve's non-linear part in logit
units. :math:`f(x) = x` is perfect calibration. The per-bin deviations
:math:`\tau v_m` take up what a smooth curve cannot follow (a staircase):
without them the posterior would concentrate on a wrong ECE as n grows for
such curves; their exponential (penalised-complexity) prior shrinks them
to 0, so that at small n the smooth curve pools the bins.

Distribution of the confidences: the Bayesian bootstrap (Rubin 1981): the
population distribution of :math:`p` is a discrete distribution on the
observed confidences with weights :math:`w \sim \mathrm{Dirichlet}(1, \dots,
1)` — the posterior of a Dirichlet process as its concentration goes to 0.
It is chosen over a parametric or mixture model of :math:`p` because the
binned ECE depends on that distribution only through integrals over bins,
which the bootstrap estimates without assumptions about its shape (point
masses at p = 1, several modes, a bounded support such as
:math:`[1/K, 1]`), at no cost beyond drawing the weights, and it is
asymptotically correct: its posterior matches the sampling distribution of
the empirical bin integrals to first order. What it cannot do is put mass on
confidences never observed; with very few points per bin this understates
the uncertainty about the bin masses, which the curve's uncertainty
dominates there anyway. Because the curve and the distribution of :math:`p`
share no parameters, they are independent a posteriori, and each ECE draw is

.. math::

    \mathrm{ECE} = \sum_{m=1}^M \Big|\sum_{j \in \text{bin } m} w_j\,
        \big(\sigma(f(x_j)) - p_j\big)\Big|,

the population binned ECE (the bins of :mod:`bece._stats.binning`) of a draw of the
curve under a draw of the distribution of confidences. The result reports,
per bin, ``weight`` :math:`\sum_{j\in m} w_j`, ``accuracy``
:math:`\sum_{j\in m} w_j\sigma(f(x_j))/\text{weight}` and ``confidence``
:math:`\sum_{j\in m} w_j p_j/\text{weight}`, so that it compares bin by bin
with the binned posterior (an empty bin has weight 0, its confidence is its
centre and its accuracy the curve there).

Fast path: Laplace. For fixed :math:`\eta = (\lambda, \tau)` the log posterior
of :math:`\theta = (a, b, u, v)` is concave (logistic likelihood, Gaussian
prior); Newton's method finds its mode :math:`\hat\theta_\eta` and Hessian
:math:`H_\eta`, giving :math:`\theta \mid \eta \approx \mathcal N(\hat\theta_\eta,
H_\eta^{-1})` and the Laplace evidence :math:`\log p(\text{data}\mid \eta)
\approx \ell(\hat\theta_\eta) - \tfrac12\hat\theta_\eta^\top P\hat\theta_\eta +
\tfrac12\log|P| - \tfrac12\log|H_\eta|` (P the prior precision). The
hyper-parameters are integrated out on a product grid, 16 values of
:math:`\lambda` and 12 of :math:`\tau` log-spaced over :math:`[10^{-2},
10]` times their prior means, each standing for the prior mass between its
geometric neighbours (the first and last also for the tails, so the masses
sum to one): the posterior is the mixture :math:`\sum_k \pi_k\,\mathcal
N(\hat\theta_{\eta_k}, H_{\eta_k}^{-1})` with :math:`\pi_k \propto
\text{mass}_k\, p(\text{data}\mid \eta_k)` (integrated nested Laplace, Rue et
al. 2009). We integrate rather than take the MAP of :math:`\eta` because at
small n its posterior is wide — often piled against 0, the linear curve —
and plugging in one value would understate the curve's uncertainty exactly
where the binned posterior already fails. The same mixture gives the
marginal likelihood used by :func:`bece.calibration_test`.
The Laplace draws are then corrected by Pareto-smoothed importance
resampling (:func:`importance_draws`): with weights
:math:`p(\text{data}, \theta \mid \eta_k)\,\text{mass}_k / q(k, \theta)`
the resampled draws target the exact posterior on the hyper-parameter grid;
the Pareto :math:`\hat k` and the effective sample size are reported
(``params.pareto_k``, ``params.is_ess``; :math:`\hat k` was 0.2–0.5 from
n = 100 to 10^6 in our tests). Without the correction, NUTS showed the
Laplace mixture's tails at the ends of the curve 0.2 posterior sd too short
at n = 2000. :func:`cross_check_smooth` (``bece.cross_check(...,
model="smooth")``) compares the corrected draws with NUTS on the same model.

Large n: a fine grid of confidences. Up to ``EXACT_MAX_N`` predictions every
observation is an atom (exact). Above, each bin is cut into ``grid``
equal-width sub-cells (default 128), and the sub-cells next to 0 and 1 are
cut further so that none spans more than 1/32 in :math:`\operatorname{logit}
p` (:data:`~bece._smooth.atoms.END_LOGIT_WIDTH`; the clip points
:math:`10^{-6}` and :math:`1 - 10^{-6}` are edges, beyond which the curve is
constant): network confidences pile up next to 1, where one equal-width
sub-cell spans logits 7.6 to 13.8 and one atom at its mean would stand for
curve values far from its own. A sub-cell with :math:`t_g` predictions,
:math:`c_g` of them correct and mean confidence :math:`\bar p_g` becomes one
atom: likelihood :math:`c_g f(\bar x_g) - t_g \log(1 + e^{f(\bar x_g)})`
with :math:`\bar x_g = \operatorname{logit}\bar p_g`, and bootstrap weight
:math:`W \sim \mathrm{Dirichlet}(t_1, \dots, t_G)` — the exact law of the
sub-cell totals of the Bayesian bootstrap. In an ECE bin with at least 1,000
predictions the bin's bootstrap total is drawn exactly and its two
bootstrap means (of the curve and of the confidences) from their normal
approximation with the Dirichlet's exact mean and covariance
(:mod:`bece._smooth.bootstrap`, which states the error). The spline's knots are the
quantiles of the predictions' logits as the cells tell them
(:func:`~bece._smooth.atoms.cell_knots`), close to the exact path's.
Replacing the sub-cell's points by its mean changes an ECE draw by at most
(:mod:`bece._smooth.grid_error`)

.. math::

    |\Delta\mathrm{ECE}| \le \sum_g W_g\,\big(|s'(\bar p_g) - 1|\,d_g
        + \tfrac12 K_g d_g^2\big), \qquad s(p) = \sigma(f(\operatorname{logit} p)),

for sub-cells :math:`[l_g, u_g)`, :math:`d_g = \max(\bar p_g - l_g, u_g -
\bar p_g)` and :math:`K_g` a bound on :math:`|s''|` over the cell, whatever
the bootstrap weights inside the cells: the slope of the miscalibration
:math:`s(p) - p` times the distance to the cell's far end. The result's
``params.grid_error`` is the largest of these bounds over the first 200
draws: about :math:`|s' - 1|\,h/2` with :math:`h = 1/(128 M)`: 1.2e-4 to 3.4e-4
on the CIFAR-10/100 network outputs of ``benchmarks/grid_error.py``
(n = 10^4: 1.7% to 5.5% of the 90% interval's half-width; the former bound,
:math:`\sum_g W_g(h_g + |s(u_g) - s(l_g)|)` on equal-width sub-cells, was
1e-3 to 3.7e-2 there, up to 9 times the half-width, because of the
top sub-cell). The typical error is far smaller (the first-order terms
average out over the bootstrap weights); the whole difference between the
grid and exact paths, fitting included, measured 1e-6 to 7e-5 there. The
bound does not shrink with n while the posterior does: at n = 10^6 it is
10% to 19% of the half-width (p ~ Beta(4, 1.5), Beta(0.3, 0.3)); a larger
``grid`` shrinks it in proportion.

From statistics. These atoms are exactly what
:class:`~bece._stats.CalibrationStats` holds in bins that refine the ECE bins
(:func:`fine_binning`: ``M * grid`` sub-cells cut further next to 0 and 1,
as explicit edges; statistics in ``M * grid`` uniform bins, as earlier
versions collected them, are taken too, with the looser bound that their
wide end cells give): per cell the count :math:`t_g`,
the correct count :math:`c_g` and :math:`t_g \bar p_g`. Such statistics add
across chunks, files read in batches, Dask partitions and device arrays, and
:func:`smooth_posterior_ece` (``bece.posterior_ece(stats, model="smooth")``)
runs the model on them (:func:`atoms_from_stats`). :func:`make_atoms` builds
its grid atoms through the same statistics, so ``smooth_ece(..., grid=r)``
and the statistics route give the same draws for the same seed. Quantile
ECE bins have data-dependent edges: pass them explicitly (a first pass).

References
----------
Rubin (1981), "The Bayesian bootstrap", Ann. Statist. 9(1).
Hastie, Tibshirani & Friedman (2009), *The Elements of Statistical Learning*, §5.2.
Rue, Martino & Chopin (2009), "Approximate Bayesian inference for latent
Gaussian models by using integrated nested Laplace approximations", JRSS B.
Simpson et al. (2017), "Penalising model component complexity", Stat. Sci.
Roelofs et al. (2022), "Mitigating bias in calibration error estimation", AISTATS.
"""

# the result type of the smooth model lives with the other result types
from ._results.ece import SmoothBayesianECE
from ._smooth.atoms import fine_binning
from ._smooth.posterior import smooth_posterior_ece

__all__ = [
    "SmoothBayesianECE",
    "fine_binning",
    "smooth_posterior_ece",
]
