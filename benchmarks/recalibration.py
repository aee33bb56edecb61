"""Recalibration study and cost (issue 18): prints tables.

Parts (``--part``):

``heldout``
    Public CIFAR network outputs (``../shared/data``, see its SOURCES.md):
    each file split at random into halves (validation, test) for several
    seeds; every calibrator of ``bece.calibrate`` fitted on the validation
    half, held-out NLL and 15-bin top-label ECE (``bece.expected_calibration_error``
    on the recalibrated probabilities) on the test half, averaged over the
    seeds. With ``--peers PYTHON`` (a scratch environment with netcal,
    probmetrics, betacal installed, never the project's), the same splits
    through netcal's ``TemperatureScaling(method="mle")`` and probmetrics'
    ``temp-scaling``, in a subprocess.
``cost``
    Temperature and vector scaling at n = 10^6, K = 1,000 (float32 logits,
    4 GB), matrix and Dirichlet scaling at n = 10^5, K = 100: passes over the
    data and time as a ratio to one softmax pass (float64 blocks, as the
    calibrators run) measured in the same run. ``--quick`` divides n by 10.
``uncertainty``
    Question (a) vs (b) of :mod:`bece.calibrate.bayes_temperature` on
    ResNet-20 CIFAR-100 logits: test half fixed, validation splits of
    n_val = 100, 500, 5000 from the other half.

Run: ``python benchmarks/recalibration.py --part all [--peers /tmp/peers-venv/bin/python]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from scipy import special

import bece
from bece.calibrate import (
    DirichletCalibration,
    MatrixScaling,
    TemperatureScaling,
    TopLabelCalibrator,
    VectorScaling,
    temperature_scaled_ece,
)
from bece.calibrate.scores import as_scores, softmax

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
FILES = ["chenyaofo_cifar100_resnet20.npz", "chenyaofo_cifar100_repvgg_a2.npz",
         "netcal_densenet-bc-100-cifar-100.npz", "netcal_wideresnet-16-4-cifar-100.npz",
         "netcal_lenet-5-cifar-100.npz", "netcal_wideresnet-16-4-cifar-10.npz",
         "netcal_lenet-5-cifar-10.npz"]


def load(name):
    d = np.load(DATA / name)
    if "logits" in d:
        return d["logits"], d["y"].astype(np.int64), "logits"
    return d["probs"], d["y"].astype(np.int64), "probabilities"


def nll(prob, y):
    p = np.maximum(prob[np.arange(y.size), y], np.finfo(np.float64).tiny)
    return float(-np.mean(np.log(p)))


def calibrators(kind):
    return {
        "TS": TemperatureScaling(input=kind),
        "VS": VectorScaling(input=kind),
        "MS-ODIR": MatrixScaling(input=kind),
        "Dir-ODIR": DirichletCalibration(input=kind),
    }


PEER_CODE = r"""
import json, sys, warnings
import numpy as np
warnings.filterwarnings("ignore")
d = np.load(sys.argv[1])
out = {}
x_val, y_val, x_te = d["x_val"], d["y_val"], d["x_te"]
kind = str(d["kind"])
prob_val = x_val if kind == "probabilities" else np.exp(x_val - x_val.max(1, keepdims=True))
prob_val = prob_val / prob_val.sum(1, keepdims=True)
prob_te = x_te if kind == "probabilities" else np.exp(x_te - x_te.max(1, keepdims=True))
prob_te = prob_te / prob_te.sum(1, keepdims=True)
try:
    from netcal.scaling import TemperatureScaling
    ts = TemperatureScaling(method="mle")  # takes probabilities (their log inside)
    ts.fit(prob_val.astype(np.float64), y_val)
    p = ts.transform(prob_te.astype(np.float64))
    out["netcal TS (mle)"] = np.asarray(p, dtype=np.float64).tolist()
except Exception as exc:
    out["netcal TS (mle)"] = "error: " + repr(exc)[:200]
try:
    import torch
    from probmetrics.calibrators import get_calibrator
    cal = get_calibrator("temp-scaling")
    cal.fit(prob_val.astype(np.float32), y_val)
    out["probmetrics TS"] = np.asarray(cal.predict_proba(prob_te.astype(np.float32)), np.float64).tolist()
except Exception as exc:
    out["probmetrics TS"] = "error: " + repr(exc)[:200]
print(json.dumps(out))
"""


def peers(python, x_val, y_val, x_te, kind):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "split.npz"
        np.savez(path, x_val=x_val, y_val=y_val, x_te=x_te, kind=kind)
        res = subprocess.run([python, "-c", PEER_CODE, str(path)], capture_output=True, text=True,
                             timeout=1200)
    if res.returncode:
        return {"peers": "error: " + res.stderr[-300:]}
    return {k: (np.array(v) if isinstance(v, list) else v)
            for k, v in json.loads(res.stdout.strip().splitlines()[-1]).items()}


def heldout(seeds, peer_python):
    print("## Held-out NLL and top-label ECE (15 bins), half validation / half test, "
          f"mean over {len(seeds)} random splits\n")
    for name in FILES:
        x, y, kind = load(name)
        rows: dict[str, list[tuple[float, float, float]]] = {}
        for seed in seeds:
            perm = np.random.default_rng(seed).permutation(y.size)
            val, te = perm[: y.size // 2], perm[y.size // 2:]
            base = as_scores(x[te], kind)
            p0 = np.vstack([softmax(b) for _, _, b in base.blocks()])
            rows.setdefault("uncalibrated", []).append((nll(p0, y[te]),
                                                        bece.expected_calibration_error(y[te], p0), 0.0))
            for label, cal in calibrators(kind).items():
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    cal.fit(x[val], y[val])
                dt = time.perf_counter() - t0
                p = cal.predict_proba(x[te])
                rows.setdefault(label, []).append((nll(p, y[te]),
                                                   bece.expected_calibration_error(y[te], p), dt))
            prob_val = np.vstack([softmax(b) for _, _, b in as_scores(x[val], kind).blocks()])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tl = TopLabelCalibrator(method="isotonic").fit(prob_val, y[val])
            p = tl.predict_proba(p0)
            rows.setdefault("top-label isotonic", []).append(
                (nll(p, y[te]), bece.top_label_ece(y[te], tl.predict_confidence(p0),
                                                   y_pred=tl.predict(p0), average="sample"), 0.0))
            if peer_python:
                for label, p in peers(peer_python, x[val], y[val], x[te], kind).items():
                    if isinstance(p, str):
                        rows.setdefault(label, []).append((np.nan, np.nan, np.nan))
                        print(f"   {label}: {p}")
                    else:
                        rows.setdefault(label, []).append((nll(p, y[te]),
                                                           bece.expected_calibration_error(y[te], p), 0.0))
        print(f"### {name} ({kind}, n = {y.size}, K = {x.shape[1]})\n")
        print("| calibrator | test NLL | test ECE | fit time (s) |")
        print("|---|---|---|---|")
        for label, vals in rows.items():
            a = np.array(vals)
            print(f"| {label} | {a[:, 0].mean():.4f} | {a[:, 1].mean():.4f} | {a[:, 2].mean():.2f} |")
        print()


def softmax_pass(scores):
    t0 = time.perf_counter()
    total = 0.0
    for _, _, b in scores.blocks():
        total += float(softmax(b)[:, 0].sum())
    return time.perf_counter() - t0


def cost(quick):
    print("## Cost: passes over the data and time / one softmax pass (same run)\n")
    print("| calibrator | n | K | passes | time / softmax pass | L-BFGS iterations |")
    print("|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    for n, k, ests in [
        (10**6 // (10 if quick else 1), 1000, [TemperatureScaling(input="logits"),
                                               VectorScaling(input="logits")]),
        (10**5 // (10 if quick else 1), 100, [MatrixScaling(input="logits", reg_lambda=0.01, reg_mu=0.01),
                                              DirichletCalibration(input="logits", reg_lambda=0.01,
                                                                   reg_mu=0.01),
                                              MatrixScaling(input="logits")]),
    ]:
        z = np.empty((n, k), dtype=np.float32)
        y = np.empty(n, dtype=np.int64)
        rows = max(1, (1 << 20) // k)
        bias = rng.normal(scale=0.5, size=k)
        for s in range(0, n, rows):  # labels from softmax(z / 1.5 + per-class bias)
            b = rng.normal(scale=3.0, size=(min(rows, n - s), k))
            z[s:s + b.shape[0]] = b
            p = special.softmax(b / 1.5 + bias, axis=1)
            y[s:s + b.shape[0]] = np.minimum((rng.uniform(size=(b.shape[0], 1)) > p.cumsum(1)).sum(1), k - 1)
        scores = as_scores(z, "logits")
        ref = min(softmax_pass(scores) for _ in range(2))
        for est in ests:
            t0 = time.perf_counter()
            est.fit(z, y)
            dt = time.perf_counter() - t0
            label = type(est).__name__ + (" (CV)" if getattr(est, "reg_lambda", 0) is None else "")
            print(f"| {label} | {n:,} | {k:,} | {est.n_passes_} | {dt / ref:.1f} | "
                  f"{getattr(est, 'n_iter_', '-')} |")
        print(f"\n(one softmax pass at n = {n:,}, K = {k:,}: {ref:.2f} s on this machine)\n")
        del z


def uncertainty(seed=0):
    print("## ECE after temperature scaling: (a) the deployed calibrator, (b) the procedure\n")
    x, y, _ = load("chenyaofo_cifar100_resnet20.npz")
    perm = np.random.default_rng(seed).permutation(y.size)
    pool, te = perm[:5000], perm[5000:]
    print("ResNet-20 on CIFAR-100 logits; test set: 5,000 images; bece.bayesian_ece (15 bins, "
          "binned model), 90% intervals; (b) with 100 temperatures.\n")
    print("| n_val | T fitted | T 90% posterior | (a) ECE mean [90%] | (b) ECE mean [90%] |")
    print("|---|---|---|---|---|")
    for n_val in (100, 500, 5000):
        val = pool[:n_val]
        r = temperature_scaled_ece(x[val], y[val], x[te], y[te], ece=bece.bayesian_ece, input="logits",
                                   num_temperatures=100, num_samples=10_000, seed=seed)
        lo, hi = r.posterior.interval(0.9)
        a_lo, a_hi = r.deployed.interval(0.9)
        b_lo, b_hi = r.interval(0.9)
        print(f"| {n_val:,} | {r.temperature:.3f} | [{lo:.3f}, {hi:.3f}] | {r.deployed.mean:.4f} "
              f"[{a_lo:.4f}, {a_hi:.4f}] | {r.mean:.4f} [{b_lo:.4f}, {b_hi:.4f}] |")
    print()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["heldout", "cost", "uncertainty", "all"], default="all")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--peers", default=None, help="python of a scratch env with netcal, probmetrics")
    parser.add_argument("--quick", action="store_true", help="cost at n / 10")
    args = parser.parse_args(argv)
    if args.part in ("heldout", "all"):
        heldout(list(range(args.seeds)), args.peers)
    if args.part in ("uncertainty", "all"):
        uncertainty()
    if args.part in ("cost", "all"):
        cost(args.quick)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
