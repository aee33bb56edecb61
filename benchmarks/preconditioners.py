"""Preconditioners of matrix scaling's and Dirichlet calibration's Newton-CG
(issue 18): Hessian-vector products per fit, by preconditioner.

The fit is :func:`bece._calibrate.newton.newton_cg` on
:func:`bece._calibrate.newton.full_evaluate` (loss, gradient and exact
Hessian products of the ODIR objective), from the rough temperature, to
``tol`` 1e-8; only the preconditioner ``solve`` changes:

``kronecker``
    bece's (:func:`~bece._calibrate.newton.kronecker_preconditioner`), one
    K x K and one (K+1) x (K+1) factor, from the pass's probabilities.
``blocks``
    exact per-class blocks (block Jacobi): for each class j the
    (K+1) x (K+1) Hessian block :math:`\\frac1n \\sum_i \\hat p_{ij}(1 - \\hat p_{ij})
    \\tilde x_i \\tilde x_i^\\top` plus the penalty's diagonal; costs
    :math:`2 n K^3` flops (K passes' products) per build.
``blocks-sampled``
    the same blocks estimated from entries (i, j) drawn with probability
    :math:`\\min(1, v_{ij}/\\tau)`, weight :math:`\\max(v_{ij}, \\tau)` (unbiased),
    :math:`\\tau` set so that about 8 n entries are drawn (8 passes' products per build),
    with each block's diagonal raised to the exact one (one more product).

"best shift": the objective of :func:`bece._calibrate.newton.full_evaluate`
(ODIR after the best shift of every class's row, which the softmax ignores;
bece's) or ODIR itself ("no"). The loss column is the objective's value
(the same minimum either way). Every variant reaches the same minimum and differs in
Newton iterations, Hessian products and the cost of building the
preconditioner (its share of the time). Data: ``--files`` of
``../shared/data`` (half of the images at random, seed 0), logits.

Run: ``python benchmarks/preconditioners.py [--files F ...] [--reg 1.0]``.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from threadpoolctl import threadpool_limits

from bece._calibrate.newton import full_evaluate, kronecker_preconditioner, newton_cg, rough_temperature
from bece._calibrate.scores import as_scores, log_softmax, softmax
from bece._calibrate.temperature import PassCounter

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from recalibration import load  # noqa: E402


def penalty_diagonal(k, lam, mu):
    d = np.full((k, k + 1), 2 * lam / (k * (k - 1)))
    d[np.arange(k), np.arange(k)] = 0.0
    d[:, k] = 2 * mu / k
    return d


def block_solve(g, lam, mu):
    """``r -> M^{-1} r`` for per-class blocks ``g`` (K, K+1, K+1), theta = [W.ravel(), b]."""
    k = g.shape[0]
    g = g.copy()
    i = np.arange(k + 1)
    g[:, i, i] += penalty_diagonal(k, lam, mu) + 1e-10 * g[:, i, i].mean(axis=1).max()
    inv = np.linalg.inv(g)

    def solve(r):
        rm = np.concatenate([r[:k * k].reshape(k, k), r[k * k:, None]], axis=1)
        out = np.einsum("jab,jb->ja", inv, rm)
        return np.concatenate([out[:, :k].ravel(), out[:, k]])

    return solve


def blocks(p, x, lam, mu):
    n, k = x.shape
    xt = np.c_[x, np.ones(n)]
    v = p * (1 - p)
    g = np.empty((k, k + 1, k + 1))
    for j in range(k):
        xs = xt * np.sqrt(v[:, j])[:, None]
        g[j] = xs.T @ xs / n
    return block_solve(g, lam, mu)


def blocks_sampled(p, x, lam, mu, per_row=8, seed=0):
    n, k = x.shape
    xt = np.c_[x, np.ones(n)]
    v = p * (1 - p)
    rng = np.random.default_rng(seed)
    sub = np.sort(rng.choice(v.ravel(), size=min(v.size, 200_000), replace=False))[::-1]
    tail = np.r_[np.cumsum(sub[::-1])[::-1][1:], 0.0]  # sum of the values after each
    drawn = v.size / sub.size * (np.arange(sub.size) + 1 + tail / np.maximum(sub, 1e-300))
    tau = sub[min(int(np.searchsorted(drawn, per_row * n)), sub.size - 1)]
    keep = v >= tau * rng.random(v.shape)
    cls, rows = np.nonzero(keep.T)
    weight = np.maximum(v[rows, cls], tau)
    edges = np.searchsorted(cls, np.arange(k + 1))
    g = np.zeros((k, k + 1, k + 1))
    for j in range(k):
        s, e = edges[j], edges[j + 1]
        xs = xt[rows[s:e]] * np.sqrt(weight[s:e])[:, None]
        g[j] = xs.T @ xs / n
    i = np.arange(k + 1)
    exact = np.c_[v.T @ (x * x), v.sum(axis=0)] / n
    g[:, i, i] = np.maximum(g[:, i, i], exact)
    return block_solve(g, lam, mu)


def kronecker(p, x, lam, mu):
    n, k = x.shape
    xt = np.c_[x, np.ones(n)]
    a = (np.diag(p.sum(axis=0)) - p.T @ p) / n
    wr = 1 - np.einsum("ij,ij->i", p, p)
    gram = (xt * wr[:, None]).T @ xt / n
    return kronecker_preconditioner(a / np.trace(a), np.linalg.eigh(gram),
                                    2 * (lam + mu) / (k * (k + 1)))


PRECONDITIONERS = {"kronecker": kronecker, "blocks": blocks, "blocks-sampled": blocks_sampled}


def fit(x, y, lam, mu, make, shift):
    n, k = x.shape
    counter = PassCounter()
    t = rough_temperature(as_scores(x, "logits"), y, (1e-2, 1e2), counter)
    inner = full_evaluate(x, y, lam, mu, shift=shift)
    stats = {"hvp": 0, "build": 0.0, "evals": 0}

    def evaluate(theta):
        loss, grad, _, hvp = inner(theta)
        stats["evals"] += 1
        w, b = theta[:k * k].reshape(k, k), theta[k * k:]
        p = softmax(x @ w.T + b)
        kept = []

        def solve(r):
            if not kept:
                t0 = time.perf_counter()
                kept.append(make(p, x, lam, mu))
                stats["build"] += time.perf_counter() - t0
            return kept[0](r)

        def counted(v):
            stats["hvp"] += 1
            return hvp(v)

        return loss, grad, solve, counted

    t0 = time.perf_counter()
    _, it, loss = newton_cg(evaluate, None, np.r_[(np.eye(k) / t).ravel(), np.zeros(k)], tol=1e-8,
                            max_iter=200, name="study")
    return it, stats, loss, time.perf_counter() - t0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", nargs="*", default=["chenyaofo_cifar100_resnet20.npz"])
    parser.add_argument("--reg", type=float, nargs="*", default=[1.0], help="lambda = mu")
    parser.add_argument("--which", nargs="*", default=["kronecker", "blocks", "blocks-sampled"])
    parser.add_argument("--shift", nargs="*", default=["no", "yes"], choices=["no", "yes"])
    args = parser.parse_args(argv)
    print("## Newton-CG of matrix scaling and Dirichlet calibration by preconditioner\n")
    print("machine: 2 shared cores, BLAS limited to 1 thread; times carry the machine's load "
          "(tens of percent); iterations and products are exact.\n")
    print("| data | n | K | calibrator | lambda = mu | best shift | preconditioner | Newton iterations | "
          "Hessian products | loss at the end | time (s) | of which building M (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.files:
        z, y, _ = load(name)
        half = np.random.default_rng(0).permutation(y.size)[: y.size // 2]
        z, y = np.asarray(z[half], dtype=np.float64), y[half]
        for label, x in (("MatrixScaling", z), ("DirichletCalibration", log_softmax(z))):
            for reg in args.reg:
                for shift, which in [(s, w) for s in args.shift for w in args.which]:
                    if shift == "yes" and which == "kronecker":
                        continue  # the Kronecker factor's null direction is the shift's
                    with threadpool_limits(1):
                        it, st, loss, dt = fit(x, y, reg, reg, PRECONDITIONERS[which], shift == "yes")
                    print(f"| {name} | {y.size:,} | {z.shape[1]} | {label} | {reg:g} | {shift} | {which} | "
                          f"{it} | {st['hvp']} | {loss:.10f} | {dt:.1f} | {st['build']:.1f} |", flush=True)
    print()


if __name__ == "__main__":
    from doc_tables import run_main

    run_main(main, __file__)
