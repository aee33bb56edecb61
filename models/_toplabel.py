r"""The top-label BECE model in NumPyro, per observation and collapsed.

For L predicted labels and M bins per label with intervals
:math:`I_{l,m} = [l_{l,m}, u_{l,m})` (the same for every label with uniform
bins), the binned model of :mod:`bece.models._binned` runs over the
(label, outcome, bin) cells:

.. math::

    q &\sim \mathrm{Dirichlet}(\alpha), \qquad \alpha \in \mathbb R_{>0}^{L \times 2 \times M}, \\
    \mu_{l,m} &\sim \mathcal N(c_{l,m}, \tau_{l,m}^2) \text{ restricted to } I_{l,m}, \\
    (\ell_i, z_i, b_i) &\sim \mathrm{Categorical}(q)
        \quad\text{(cell } (\ell_i \cdot 2 + z_i) M + b_i\text{)}, \\
    p_i \mid \ell_i = l, b_i = m &\sim \mathcal N(\mu_{l,m}, \sigma_{l,m}^2)
        \quad\text{(conjugate; truncated to } I_{l,m} \text{ if literal)}.

:math:`\ell_i` is the predicted label (argmax), :math:`z_i = [y_i = \ell_i]`
and :math:`p_i` the top confidence. Recorded with ``numpyro.deterministic``:
``weight`` :math:`\pi_{l,m} = q_{l,0,m} + q_{l,1,m}`, ``accuracy``
:math:`q_{l,1,m}/\pi_{l,m}`, ``confidence`` (each cell's mean confidence),
``label_ece``

.. math::

    \mathrm{ECE}_l = \frac{\sum_m |q_{l,1,m} - \pi_{l,m}\,\mathrm{confidence}_{l,m}|}
                          {\sum_m \pi_{l,m}}

(the ECE of label l's predictions, conditional on predicting l) and ``ece``:
the unweighted mean of :math:`\mathrm{ECE}_l` over labels for
``average="label"`` (Gupta & Ramdas' top-label ECE), or
:math:`\sum_{l,m} |q_{l,1,m} - \pi_{l,m}\,\mathrm{confidence}_{l,m}|` for
``average="sample"`` (labels weighted by how often they are predicted).

The model is the binned model with L·M bins whose intervals repeat per
label, so its collapsed likelihood is :func:`bece.models._binned.collapsed_factors`
on the flattened cells, and the closed form of :mod:`bece._binned.conjugate` is exact
for the conjugate version.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist

from ._binned import collapsed_factors, truncnorm_mean

__all__ = ["top_label_model", "top_label_collapsed", "AVERAGES"]

AVERAGES = ("label", "sample")


def _label_edges(edges, n_labels):
    edges = jnp.asarray(edges)
    if edges.ndim == 1:
        edges = jnp.broadcast_to(edges, (n_labels, edges.shape[0]))
    low, high = edges[:, :-1], edges[:, 1:]
    return low, high, 0.5 * (low + high)


def _parameters(edges, alpha, tau, n_labels):
    """q of shape (L, 2, M) and mu of shape (L, M) from the prior."""
    low, high, center = _label_edges(edges, n_labels)
    m = low.shape[1]
    alpha = jnp.broadcast_to(jnp.asarray(alpha), (n_labels, 2, m))
    tau = jnp.broadcast_to(jnp.asarray(tau), (n_labels, m))
    q = numpyro.sample("q", dist.Dirichlet(alpha.reshape(-1))).reshape(n_labels, 2, m)
    with numpyro.plate("label", n_labels, dim=-2), numpyro.plate("bin", m, dim=-1):
        mu = numpyro.sample("mu", dist.TruncatedNormal(center, tau, low=low, high=high))
    return q, mu, low, high


def _record(q, confidence, average):
    if average not in AVERAGES:
        raise ValueError(f"average must be one of {AVERAGES}, got {average!r}")
    weight = numpyro.deterministic("weight", q[:, 0] + q[:, 1])
    numpyro.deterministic("accuracy", q[:, 1] / weight)
    numpyro.deterministic("confidence", confidence)
    gaps = jnp.abs(q[:, 1] - weight * confidence).sum(axis=-1)
    label_ece = numpyro.deterministic("label_ece", gaps / weight.sum(axis=-1))
    numpyro.deterministic("ece", label_ece.mean() if average == "label" else gaps.sum())


def _flat(x):
    """(L, 2, M) -> (2, L M), the layout of collapsed_factors."""
    return jnp.transpose(x, (1, 0, 2)).reshape(2, -1)


def top_label_model(edges, alpha, sigma, tau, *, n_labels, n=None, label=None, z=None, b=None,
                    p=None, average="label", literal=False):
    """Per-observation top-label model.

    Parameters
    ----------
    edges : array of shape (M + 1,) or (L, M + 1)
        Bin edges, shared by all labels or per label.
    alpha : array broadcastable to (L, 2, M)
        Dirichlet concentration per (label, outcome, bin) cell.
    sigma, tau : array broadcastable to (L, M)
        Likelihood and prior scales of the cell means.
    n_labels : int
        L, the number of predicted labels (static).
    n : int, optional
        Observations to simulate when ``label``, ``z``, ``b``, ``p`` are None
        (prior predictive with ``numpyro.infer.Predictive``).
    label : int array of shape (n,), optional
        Index (0 .. L-1) of each observation's predicted label.
    z, b : int arrays of shape (n,), optional
        Correctness and bin index.
    p : array of shape (n,), optional
        Top-label confidences.
    average : {"label", "sample"}, default "label"
        How ``ece`` averages the labels.
    literal : bool, default False
        Truncate each confidence to its bin (the literal BECE model).

    Examples
    --------
    >>> import numpy as np
    >>> from numpyro import handlers
    >>> m = 4
    >>> edges = np.linspace(0.0, 1.0, m + 1)
    >>> alpha, sigma = np.full((2, m), 1 / (2 * m)), np.full(m, 0.25 / np.sqrt(12))   # the defaults
    >>> from bece.models import top_label_model
    >>> q = np.full((3, 2, m), 1 / 24).ravel()    # 3 labels, each half right in every bin
    >>> mu = np.tile([0.125, 0.375, 0.625, 0.875], (3, 1))
    >>> model = handlers.seed(handlers.condition(top_label_model, {"q": q, "mu": mu}), rng_seed=0)
    >>> trace = handlers.trace(model).get_trace(edges, alpha, sigma, sigma, n_labels=3, n=100)
    >>> {name: site["value"].shape for name, site in trace.items() if site["type"] == "sample"}
    {'q': (24,), 'mu': (3, 4), 'cell': (100,), 'p': (100,)}
    >>> trace["label_ece"]["value"].shape, trace["ece"]["value"].shape   # per label, averaged
    ((3,), ())
    """
    q, mu, low, high = _parameters(edges, alpha, tau, n_labels)
    m = low.shape[1]
    sigma = jnp.broadcast_to(jnp.asarray(sigma), (n_labels, m))
    if label is not None and z is not None and b is not None:
        label, z, b = (jnp.asarray(v).astype(jnp.int32) for v in (label, z, b))
        cell_obs = (label * 2 + z) * m + b
        n = cell_obs.shape[0]
    else:
        cell_obs = None
        if n is None:
            n = 0 if p is None else jnp.shape(p)[0]
    with numpyro.plate("obs", n):
        cell = numpyro.sample("cell", dist.Categorical(probs=q.reshape(-1)), obs=cell_obs)
        lab, bin_ = cell // (2 * m), cell % m
        loc, scale = mu[lab, bin_], sigma[lab, bin_]
        if literal:
            conf = dist.TruncatedNormal(loc, scale, low=low[lab, bin_], high=high[lab, bin_])
        else:
            conf = dist.Normal(loc, scale)
        numpyro.sample("p", conf, obs=p)
    _record(q, truncnorm_mean(mu, sigma, low, high) if literal else mu, average)


def top_label_collapsed(edges, alpha, sigma, tau, *, n_labels, counts=None, mean_p=None,
                        ss_p=None, average="label", literal=False):
    """:func:`top_label_model` given sufficient statistics (O(L M) per evaluation).

    Parameters
    ----------
    edges, alpha, sigma, tau, n_labels, average, literal
        As :func:`top_label_model`.
    counts : array of shape (L, 2, M), optional
        Cell counts; None samples the prior.
    mean_p : array of shape (L, M)
        Mean confidence per (label, bin) (any value where empty).
    ss_p : array of shape (L, M)
        Centred sum of squares per (label, bin); enters only a constant.

    Examples
    --------
    >>> import numpy as np
    >>> from numpyro import handlers
    >>> m = 4
    >>> edges = np.linspace(0.0, 1.0, m + 1)
    >>> alpha, sigma = np.full((2, m), 1 / (2 * m)), np.full(m, 0.25 / np.sqrt(12))   # the defaults
    >>> from bece.models import top_label_collapsed
    >>> q = np.full((3, 2, m), 1 / 24).ravel()    # 3 labels, each half right in every bin
    >>> mu = np.tile([0.125, 0.375, 0.625, 0.875], (3, 1))
    >>> model = handlers.condition(top_label_collapsed, {"q": q, "mu": mu})
    >>> trace = handlers.trace(model).get_trace(edges, alpha, sigma, sigma, n_labels=3)
    >>> {name: site["value"].shape for name, site in trace.items() if site["type"] == "deterministic"}
    {'weight': (3, 4), 'accuracy': (3, 4), 'confidence': (3, 4), 'label_ece': (3,), 'ece': ()}
    >>> [round(float(v), 6) for v in trace["label_ece"]["value"]]   # mean |0.5 - mu| = 0.25
    [0.25, 0.25, 0.25]
    """
    q, mu, low, high = _parameters(edges, alpha, tau, n_labels)
    m = low.shape[1]
    sigma = jnp.broadcast_to(jnp.asarray(sigma), (n_labels, m))
    if counts is not None:
        collapsed_factors(
            _flat(q), mu.reshape(-1), low.reshape(-1), high.reshape(-1), sigma.reshape(-1),
            _flat(jnp.asarray(counts)), jnp.asarray(mean_p).reshape(-1), literal,
        )
    _record(q, truncnorm_mean(mu, sigma, low, high) if literal else mu, average)
