r"""The literal BECE model's posterior by exact one-dimensional sampling.

The literal model (:func:`bece.models.literal_model`) writes each confidence
in bin m as a Normal truncated to the bin, :math:`p_i \mid \mu_m \sim
\mathcal N(\mu_m, \sigma_m^2)` restricted to :math:`I_m = [l_m, u_m]`,
with the prior :math:`\mu_m \sim \mathcal N(c_m, \tau_m^2)` restricted to
:math:`I_m` and :math:`q \sim \mathrm{Dirichlet}(\alpha)` as in the
conjugate model. Given the data the posterior factorises: :math:`q \mid
\text{data} \sim \mathrm{Dirichlet}(\alpha + c)` exactly as in
:mod:`bece._binned.conjugate`, and each bin mean has the one-dimensional
density

.. math::

    g_m(\mu) \propto \mathcal N(\mu;\, \bar\mu_m, s_m^2)\;
        Z_m(\mu)^{-n_m}\; \mathbb 1[\mu \in I_m],
    \qquad Z_m(\mu) = \Phi\Big(\frac{u_m - \mu}{\sigma_m}\Big)
                    - \Phi\Big(\frac{l_m - \mu}{\sigma_m}\Big),

where :math:`\bar\mu_m, s_m` are the conjugate posterior's location and
scale (they use only :math:`n_m` and the bin's sum of confidences; the sum of
squares cancels). The bin's mean confidence is the truncated-Normal mean
:math:`E[p \mid \mu_m] = \mu_m + \sigma_m(\varphi(a) - \varphi(b))/Z_m(\mu_m)`,
:math:`a = (l_m - \mu_m)/\sigma_m`, :math:`b = (u_m - \mu_m)/\sigma_m`, and a
draw's ECE is :math:`\sum_m |q_{1,m} - \pi_m E[p \mid \mu_m]|`.

**Exact sampler.** :math:`\log g_m` is strictly concave on :math:`I_m`:

.. math::

    \frac{d^2}{d\mu^2}\log g_m = -\frac1{\tau_m^2}
        - n_m\,\frac{\mathrm{Var}(p \mid \mu)}{\sigma_m^4} < 0,

because :math:`\frac{d^2}{d\mu^2}\log Z_m = (\mathrm{Var}(p\mid\mu) -
\sigma_m^2)/\sigma_m^4` (the log-partition function of the truncated
Normal). A concave log density lies below each of its tangents, so the
minimum of K tangents is an envelope, and rejection sampling from the
piecewise-exponential density it defines gives *exact* independent draws
(Gilks & Wild 1992, adaptive rejection sampling without the adaptation):
K = 15 tangents at the mode and at 0.45 to 6 standard deviations either
side (clipped to the bin), the mode found by bisection on the derivative;
the segment is drawn by Walker's alias method, and a squeeze (on each
segment, the smallest gap between the log density and its tangent, at one
of the segment's ends since the gap is concave) accepts most proposals
without evaluating the density.
Everything is evaluated in float64 in log space, with the standardised
bounds mirrored to the lower tail where ``log_ndtr`` keeps full relative
precision (as :func:`bece._binned.conjugate.sample_truncated_normal`), so
it is stable for bins tens of standard deviations from the data. Where
and how tangents are placed changes only the acceptance rate (measured
above 0.85 at every n tried, see the tests), never the distribution: the
envelope is a tangent of a concave function whatever its abscissae. Bins
without data sample the truncated-Normal prior directly.

References
----------
Gilks & Wild (1992), "Adaptive rejection sampling for Gibbs sampling",
Applied Statistics 41(2).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .conjugate import ConjugatePosterior, sample_truncated_normal

__all__ = [
    "FORMS",
    "REFERENCE_FORM",
    "binned_form",
    "literal_log_density",
    "log_normalizer",
    "sample_bin_confidence",
    "sample_literal_mu",
    "truncated_mean",
]

#: the two forms of the binned BECE model (``model=`` of the binned entry points)
FORMS = ("conjugate", "literal")
#: the form ``model="binned"`` means (documentation: explanation, "Which binned model")
REFERENCE_FORM = "conjugate"

_LOG_SQRT_2PI = 0.9189385332046727
#: tangent abscissae, in standard deviations of the posterior at its mode
_OFFSETS = np.array([-6.0, -4.0, -2.8, -2.0, -1.4, -0.9, -0.45, 0.0,
                     0.45, 0.9, 1.4, 2.0, 2.8, 4.0, 6.0])
_MAX_ROUNDS = 200


def _log1mexp(x: np.ndarray) -> np.ndarray:
    """log(1 - exp(x)) for x <= 0, accurate near 0 and far below it."""
    with np.errstate(divide="ignore"):
        return np.where(x > -0.6931471805599453, np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def log_normalizer(mu: np.ndarray, sigma: np.ndarray, lower: np.ndarray,
                   upper: np.ndarray) -> np.ndarray:
    """:math:`\\log Z = \\log(\\Phi((u-\\mu)/\\sigma) - \\Phi((l-\\mu)/\\sigma))`,
    stable in the tails (the NumPy twin of :func:`bece.models._binned.truncnorm_log_normalizer`)."""
    a = (lower - mu) / sigma
    b = (upper - mu) / sigma
    flip = a > 0
    lo, hi = np.where(flip, -b, a), np.where(flip, -a, b)
    log_hi = special.log_ndtr(hi)
    return log_hi + _log1mexp(special.log_ndtr(lo) - log_hi)


def _phi_ratios(mu: np.ndarray, sigma: np.ndarray, lower: np.ndarray,
                upper: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """a, b, phi(a)/Z and phi(b)/Z of the truncated Normal N(mu, sigma^2) on [lower, upper]."""
    a = (lower - mu) / sigma
    b = (upper - mu) / sigma
    log_z = log_normalizer(mu, sigma, lower, upper)
    ra = np.exp(-0.5 * a * a - _LOG_SQRT_2PI - log_z)
    rb = np.exp(-0.5 * b * b - _LOG_SQRT_2PI - log_z)
    return a, b, ra, rb


def truncated_mean(mu: np.ndarray, sigma: np.ndarray, lower: np.ndarray,
                   upper: np.ndarray) -> np.ndarray:
    """Mean of N(mu, sigma^2) restricted to [lower, upper]:
    :math:`\\mu + \\sigma(\\varphi(a) - \\varphi(b))/Z`.

    For mu inside the interval (a <= 0 <= b) and Z >= 1/8,
    :math:`Z = 1 - \\Phi(a) - \\Phi(-b)` has both terms at most 1/2 and
    loses at most 3 bits; elsewhere Z comes from the log-space
    :func:`log_normalizer`.
    """
    mu, sigma = np.asarray(mu, dtype=np.float64), np.asarray(sigma, dtype=np.float64)
    a = (lower - mu) / sigma
    b = (upper - mu) / sigma
    z = 1.0 - special.ndtr(a) - special.ndtr(-b)
    inside = (a <= 0) & (b >= 0) & (z >= 0.125)
    diff = np.exp(-0.5 * a * a) - np.exp(-0.5 * b * b)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = mu + sigma * diff / (z * np.sqrt(2 * np.pi))
    if not np.all(inside):  # the tails: phi / Z in log space
        _, _, ra, rb = _phi_ratios(mu, sigma, lower, upper)
        mean = np.where(inside, mean, mu + sigma * (ra - rb))
    return np.clip(mean, lower, upper)  # round-off only


class _Cells:
    """The active cells' constants: bounds, scales, counts and conjugate part."""

    def __init__(self, post: ConjugatePosterior, n_m: np.ndarray, idx: np.ndarray) -> None:
        self.low = post.lower[idx]
        self.high = post.upper[idx]
        self.sigma = post.sigma[idx]
        self.tau = post.tau[idx]
        self.loc = post.loc[idx]
        self.scale = post.scale[idx]
        self.n = n_m[idx]

    def take(self, j: np.ndarray) -> _Cells:
        out = object.__new__(_Cells)
        for k, v in vars(self).items():
            setattr(out, k, v[j])
        return out

    def log_density(self, x: np.ndarray) -> np.ndarray:
        """log g(x) up to a constant (the same constant for every x of a cell)."""
        return (-0.5 * ((x - self.loc) / self.scale) ** 2
                - self.n * log_normalizer(x, self.sigma, self.low, self.high))

    def slope(self, x: np.ndarray) -> np.ndarray:
        """d/dx log g(x) = -(x - loc)/scale^2 - n (E[p|x] - x)/sigma^2."""
        _, _, ra, rb = _phi_ratios(x, self.sigma, self.low, self.high)
        return -(x - self.loc) / self.scale**2 - self.n * (ra - rb) / self.sigma

    def mode(self) -> np.ndarray:
        """The maximiser of the concave log g on [low, high] (bisection on the slope)."""
        lo, hi = self.low.copy(), self.high.copy()
        at_low = self.slope(lo) <= 0
        at_high = self.slope(hi) >= 0
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if np.all((mid == lo) | (mid == hi)):
                break
            up = self.slope(mid) > 0
            lo = np.where(up, mid, lo)
            hi = np.where(up, hi, mid)
        mode = 0.5 * (lo + hi)
        return np.where(at_low, self.low, np.where(at_high, self.high, mode))

    def sd_at(self, x: np.ndarray) -> np.ndarray:
        """Curvature scale (-d^2/dx^2 log g)^(-1/2) at x: 1/sqrt(1/tau^2 + n Var(p|x)/sigma^4)."""
        a, b, ra, rb = _phi_ratios(x, self.sigma, self.low, self.high)
        # only the tangents' placement depends on it, not the draws' law
        var = self.sigma**2 * np.clip(1 + a * ra - b * rb - (ra - rb) ** 2, 1e-12, 1.0)
        return 1.0 / np.sqrt(1.0 / self.tau**2 + self.n * var / self.sigma**4)


def _log_segment_mass(top: np.ndarray, slope: np.ndarray, length: np.ndarray) -> np.ndarray:
    """log of the integral over a segment of length L of exp(top - |slope| y), y in [0, L]:
    the segment's mass measured from its higher end (value ``top``)."""
    g = np.abs(slope)
    gl = g * length
    with np.errstate(divide="ignore", invalid="ignore"):
        tiny = gl < 1e-12
        val = np.where(tiny, np.log(length), np.log(-np.expm1(-gl)) - np.log(g))
    return top + val


def _envelope(cells: _Cells) -> dict[str, np.ndarray]:
    """The piecewise-exponential envelope of each cell (arrays of shape (B, K)).

    ``x``, ``t``, ``g``: tangent abscissae, log density (less ``ref``) and
    slope; segment k is ``[a_k, a_k + length_k]``, measured from its higher
    end ``start_k``; ``prob``/``alias`` the alias tables of the segments'
    masses; ``squeeze`` each segment's smallest log density minus envelope;
    ``ref`` (B,) each cell's largest log density at the abscissae.
    """
    mode = cells.mode()
    sd = cells.sd_at(mode)
    x = np.clip(mode[:, None] + sd[:, None] * _OFFSETS, cells.low[:, None], cells.high[:, None])
    x = np.maximum.accumulate(x, axis=1)  # sorted after clipping (round-off)
    col = _Cells.take(cells, np.repeat(np.arange(cells.n.size), x.shape[1]))
    t = col.log_density(x.ravel()).reshape(x.shape)
    g = col.slope(x.ravel()).reshape(x.shape)
    ref = t.max(axis=1)
    t = t - ref[:, None]
    # intersections of consecutive tangents, kept inside [x_k, x_k+1]: any
    # tangent bounds a concave function, so the envelope stays valid even
    # where round-off puts the crossing elsewhere
    dg = g[:, :-1] - g[:, 1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (t[:, 1:] - t[:, :-1] + g[:, :-1] * x[:, :-1] - g[:, 1:] * x[:, 1:]) / dg
    mid = 0.5 * (x[:, :-1] + x[:, 1:])
    z = np.where(np.isfinite(z) & (dg > 0), z, mid)
    z = np.clip(z, x[:, :-1], x[:, 1:])
    edges = np.concatenate([cells.low[:, None], z, cells.high[:, None]], axis=1)
    a, b = edges[:, :-1], edges[:, 1:]
    length = np.maximum(b - a, 0.0)
    start = np.where(g > 0, b, a)  # the segment's higher end
    top = t + g * (start - x)  # the envelope at the segment's higher end
    logm = _log_segment_mass(top, g, length)
    logm = np.where(length > 0, logm, -np.inf)
    w = np.exp(logm - logm.max(axis=1, keepdims=True))
    prob, alias = _alias_table(w / w.sum(axis=1, keepdims=True))
    # squeeze: t - tangent_k is concave, so its minimum over segment k is at
    # an end; below it a proposal is accepted without evaluating t
    col_ends = _Cells.take(cells, np.repeat(np.arange(x.shape[0]), x.shape[1] + 1))
    t_edges = col_ends.log_density(edges.ravel()).reshape(edges.shape) - ref[:, None]
    gap_a = t_edges[:, :-1] - (t + g * (a - x))
    gap_b = t_edges[:, 1:] - (t + g * (b - x))
    squeeze = np.minimum(np.minimum(gap_a, gap_b), 0.0)
    return {
        "prob": prob.ravel(), "alias": alias.ravel(),
        "em": np.expm1(-np.abs(g) * length).ravel(),
        # per segment: |slope|, length, direction away from the higher end,
        # the higher end, the envelope there and the squeeze; per abscissa: x, t
        "gabs": np.abs(g).ravel(), "length": length.ravel(),
        "direction": np.where(g > 0, -1.0, 1.0).ravel(), "start": start.ravel(),
        "top": top.ravel(), "squeeze": np.where(np.isfinite(squeeze), squeeze, -np.inf).ravel(),
        "x": x.ravel(), "t": t.ravel(), "ref": ref,
    }


def _alias_table(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Walker's alias tables for the rows of ``w`` (B, K; rows sum to 1).

    Column k keeps itself with probability ``prob[:, k]`` and otherwise
    gives its ``alias``; drawing k uniformly then gives P(k) = w[:, k].
    Built by pairing, K - 1 times, the smallest unfinished scaled weight
    with the largest (Vose 1991), every row at once.
    """
    b, kk = w.shape
    q = w * kk
    prob = np.ones((b, kk))
    alias = np.broadcast_to(np.arange(kk), (b, kk)).copy()
    done = np.zeros((b, kk), dtype=bool)
    rows = np.arange(b)
    for _ in range(kk - 1):
        small = np.argmin(np.where(done, np.inf, q), axis=1)
        done[rows, small] = True
        large = np.argmax(np.where(done, -np.inf, q), axis=1)
        qs = q[rows, small]
        prob[rows, small] = np.minimum(qs, 1.0)
        alias[rows, small] = large
        q[rows, large] -= 1.0 - qs
    return prob, alias


def _propose(env: dict[str, np.ndarray], todo: np.ndarray, rng: np.random.Generator
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One envelope draw for each entry of ``todo`` (cell indices), the
    envelope's log value there and the segment's squeeze (its smallest
    log density minus envelope), both less the cell's ``ref``, and the log
    of a uniform."""
    kk = _OFFSETS.size
    u = rng.random((2, todo.size))
    first = todo * kk
    # the segment, by the alias method: column i, kept or replaced by its alias
    scaled = u[0] * kk
    col = np.minimum(scaled.astype(np.int64), kk - 1)
    cell_col = first + col
    keep = (scaled - col) < env["prob"].take(cell_col)
    flat = np.where(keep, cell_col, first + env["alias"].take(cell_col))
    gabs, lk = env["gabs"].take(flat), env["length"].take(flat)
    # distance from the segment's higher end: inverse CDF of exp(-|g| d) on [0, L]
    with np.errstate(divide="ignore", invalid="ignore"):
        dist = np.log1p(u[1] * env["em"].take(flat))
        dist /= -gabs
    flat_seg = gabs * lk < 1e-12
    if flat_seg.any():
        dist = np.where(flat_seg, u[1] * lk, dist)
    np.clip(dist, 0.0, lk, out=dist)
    draw = env["start"].take(flat) + env["direction"].take(flat) * dist
    bound = env["top"].take(flat) - gabs * dist
    # log of a uniform: minus a standard exponential (ziggurat, no log)
    return draw, bound, env["squeeze"].take(flat), -rng.standard_exponential(todo.size)


def sample_literal_mu(post: ConjugatePosterior, size: int, rng: np.random.Generator) -> np.ndarray:
    """Exact draws of shape ``(size, B)`` of each bin mean under the literal model.

    Parameters
    ----------
    post : ConjugatePosterior
        The conjugate posterior of the same statistics and prior (its
        ``loc``/``scale`` are the Normal part of :math:`g_m`, its
        ``concentration - alpha`` the counts).
    size : int
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of shape (size, B)
        Draws of :math:`\\mu_m` (module docstring); bins without data get
        draws of their truncated-Normal prior, zero-width bins their point.
    """
    n_m = np.rint((post.concentration - post.alpha).sum(axis=0))
    active = (n_m > 0) & (post.scale > 0)
    out = np.empty((size, n_m.size))
    rest = np.flatnonzero(~active)
    if rest.size:
        out[:, rest] = sample_truncated_normal(post.loc[rest], post.scale[rest], post.lower[rest],
                                               post.upper[rest], size, rng)
    idx = np.flatnonzero(active)
    if idx.size == 0:
        return out
    cells = _Cells(post, n_m, idx)
    env = _envelope(cells)
    ba = idx.size
    # first round over all (draw, cell) entries in draw-major order; then the
    # rejected entries again until every one is filled
    todo = np.tile(np.arange(ba), size)
    accept, draw = _round(env, cells, todo, rng)
    block = np.where(accept, draw, np.nan).reshape(size, ba)
    rejected = np.flatnonzero(~accept)
    where, todo = np.divmod(rejected, ba)
    rounds = 1
    while todo.size:
        rounds += 1
        if rounds > _MAX_ROUNDS:  # acceptance is above 0.85; this cannot happen by chance
            raise RuntimeError("the literal model's rejection sampler did not finish")
        accept, draw = _round(env, cells, todo, rng)
        block[where[accept], todo[accept]] = draw[accept]
        todo, where = todo[~accept], where[~accept]
    out[:, idx] = block
    return out


def _round(env: dict[str, np.ndarray], cells: _Cells, todo: np.ndarray,
           rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One proposal per entry of ``todo`` and whether it is accepted."""
    draw, bound, squeeze, log_u = _propose(env, todo, rng)
    log_w = log_u + bound
    # accept below the squeeze without evaluating the density
    accept = log_u <= squeeze
    check = np.flatnonzero(~accept)
    cell = todo[check]
    target = _Cells.take(cells, cell).log_density(draw[check]) - env["ref"][cell]
    accept[check] = log_w[check] <= target
    return accept, draw


def literal_log_density(mu: np.ndarray, post: ConjugatePosterior) -> np.ndarray:
    """Unnormalised log density of each bin mean under the literal model.

    ``mu`` of shape (..., B); returns the same shape, :math:`-\\infty` outside
    the bins. For tests and plots (the sampler uses the same terms).
    """
    n_m = np.rint((post.concentration - post.alpha).sum(axis=0))
    mu = np.asarray(mu, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        val = (-0.5 * ((mu - post.loc) / post.scale) ** 2
               - n_m * log_normalizer(mu, post.sigma, post.lower, post.upper))
    inside = (mu >= post.lower) & (mu <= post.upper)
    return np.where(inside, val, -np.inf)


def binned_form(model: str, *, argument: str = "model") -> str:
    """The form (``"conjugate"`` or ``"literal"``) that a binned ``model=`` names:
    ``"binned"`` is :data:`REFERENCE_FORM`."""
    if model == "binned":
        return REFERENCE_FORM
    if model in FORMS:
        return model
    raise ValueError(f"{argument} must be one of {('binned', *FORMS)}, got {model!r}")


def sample_bin_confidence(post: ConjugatePosterior, size: int, rng: np.random.Generator,
                          form: str) -> np.ndarray:
    r"""Draws of shape ``(size, B)`` of each bin's mean confidence.

    ``form="conjugate"``: :math:`\mu_m` from its restricted Normal (the
    closed form); ``"literal"``: the truncated-Normal mean
    :math:`E[p \mid \mu_m]` of exact draws of :math:`\mu_m`
    (:func:`sample_literal_mu`).
    """
    if form == "conjugate":
        return sample_truncated_normal(post.loc, post.scale, post.lower, post.upper, size, rng)
    if form != "literal":
        raise ValueError(f"form must be one of {FORMS}, got {form!r}")
    mu = sample_literal_mu(post, size, rng)
    wide = np.flatnonzero(post.upper > post.lower)  # a zero-width bin's mean is its point
    mu[:, wide] = truncated_mean(mu[:, wide], post.sigma[wide], post.lower[wide], post.upper[wide])
    return mu
