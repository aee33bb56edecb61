"""Which ECE? bece's conventions against each peer library's own number.

For every convention of :func:`bece.metrics.peer_ece` the peer itself is
called on the same inputs: scikit-learn (``calibration_curve``) and MAPIE in
this interpreter (the test extra); torchmetrics, netcal, relplot and Kumar's
``uncertainty-calibration`` (package ``calibration``, which HELM's
``ece_10_bin`` calls) in another interpreter that has them, by subprocess
(``--peers-python``, default ``/tmp/peers-venv/bin/python``). These peers are
not installable in CI (torch is heavy); this benchmark is their comparison,
and the unit tests check the same conventions on hand-computed cases.

Inputs: CIFAR-like softmax outputs (n = 10,000, K = 10, over-confident by a
temperature of 1.5; float64 and float32), binary P(y = 1) (n = 10,000), and
the three-point edge cases of the README's table (a confidence on an inner
edge, at 1.0, at 0.0).

Printed: per input and convention, bece's value, the peer's, and their
difference; the edge cases also with the "bece" value beside them.

Usage: python benchmarks/peer_ece.py [--peers-python PATH]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from bece.metrics import peer_ece

PEER_SCRIPT = r"""
import json, sys, warnings
import numpy as np
warnings.filterwarnings("ignore")
import torch
from torchmetrics.functional.classification import (
    binary_calibration_error, multiclass_calibration_error)
from netcal.metrics import ECE
import relplot
import calibration as cal

data = np.load(sys.argv[1], allow_pickle=False)
names = json.loads(str(data["names"]))
out = {}
for name in names:
    y = data[name + "_y"]; p = data[name + "_p"]; m = json.loads(str(data[name + "_m"]))
    res = {}
    if p.ndim == 1:
        res["torchmetrics"] = float(binary_calibration_error(
            torch.from_numpy(p), torch.from_numpy(y), n_bins=m["torchmetrics"]))
        res["netcal"] = float(ECE(bins=m["netcal"]).measure(p, y))
        conf, corr = p, y
    else:
        res["torchmetrics"] = float(multiclass_calibration_error(
            torch.from_numpy(p), torch.from_numpy(y), num_classes=p.shape[1],
            n_bins=m["torchmetrics"]))
        res["netcal"] = float(ECE(bins=m["netcal"]).measure(p, y))
        conf = p.max(axis=1).astype(np.float64)
        corr = (p.argmax(axis=1) == y).astype(np.int64)
    res["kumar"] = float(cal.get_ece(p, y, num_bins=m["kumar"]))
    res["relplot"] = float(relplot.metrics.binnedECE(conf.astype(np.float64), corr, nbins=m["relplot"]))
    res["helm"] = float(cal.get_ece_em(list(conf.astype(np.float64)), list(corr), num_bins=m["helm"]))
    if len(conf) > 100:  # the other metrics, on the large inputs
        c64, ci = conf.astype(np.float64), np.asarray(corr, dtype=np.int64)
        res["smece"] = float(relplot.smECE(c64, ci))
        res["kumar_bins"] = [float(b) for b in cal.get_equal_bins(list(c64), num_bins=15)]
        res["kumar_l2_debiased"] = float(cal.lower_bound_scaling_ce(
            c64, ci, p=2, debias=True, num_bins=15, binning_scheme=cal.get_equal_bins))
        res["kumar_l2"] = float(cal.lower_bound_scaling_ce(
            c64, ci, p=2, debias=False, num_bins=15, binning_scheme=cal.get_equal_bins))
        res["torchmetrics_l2"] = float(binary_calibration_error(
            torch.from_numpy(c64), torch.from_numpy(ci), n_bins=15, norm="l2"))
    out[name] = res
print(json.dumps(out))
"""


def _sklearn(y, p, m):
    from sklearn.calibration import calibration_curve

    if p.ndim == 2:
        y = (p.argmax(axis=1) == y).astype(np.int64)
        p = p.max(axis=1).astype(np.float64)
    prob_true, prob_pred = calibration_curve(y, p, n_bins=m, strategy="uniform")
    ids = np.searchsorted(np.linspace(0, 1, m + 1)[1:-1], p)
    counts = np.bincount(ids, minlength=m)
    counts = counts[counts > 0]
    return float(np.sum(counts / counts.sum() * np.abs(prob_true - prob_pred)))


def _mapie(y, p, m):
    from mapie.metrics.calibration import expected_calibration_error

    if p.ndim == 2:
        y = (p.argmax(axis=1) == y).astype(np.int64)
        p = p.max(axis=1).astype(np.float64)
    return float(expected_calibration_error(y, p, num_bins=m))


def cases(rng):
    n, k = 10_000, 10
    logits = rng.normal(scale=3.0, size=(n, k))
    prob = np.exp(logits - logits.max(axis=1, keepdims=True))
    prob /= prob.sum(axis=1, keepdims=True)
    truth = np.exp(logits / 1.5 - (logits / 1.5).max(axis=1, keepdims=True))
    truth /= truth.sum(axis=1, keepdims=True)
    y = np.minimum((rng.uniform(size=(n, 1)) > truth.cumsum(axis=1)).sum(axis=1), k - 1)
    p32 = prob.astype(np.float32)
    p32 /= p32.sum(axis=1, keepdims=True, dtype=np.float32)
    pb = rng.beta(2, 2, size=n)
    yb = (rng.uniform(size=n) < pb**1.3).astype(np.int64)
    out = {
        "cifar-like float64": (y, prob),
        "cifar-like float32": (y, p32),
        "binary float64": (yb, pb),
        "binary float32": (yb, pb.astype(np.float32)),
        "F: p = 1.0 in float32": (np.array([1, 0, 0]), np.array([1.0, 0.5, 0.3], np.float32)),
    }
    edge = {  # each a three-point example of one difference (README, "Which ECE?")
        "A: p on an inner edge, 0.2 (M=5)": ([1, 0, 0], [0.2, 0.2, 0.3], 5),
        "B: p = 1.0 (M=5)": ([1, 1, 0], [0.9, 0.9, 1.0], 5),
        "C: p = 0.0 (M=5)": ([1, 0, 0], [0.0, 0.1, 0.1], 5),
        "D: p = 0.3 (M=10): floor(pM) vs edges": ([1, 0, 0], [0.3, 0.35, 0.25], 10),
        "E: the same 3 points, each default M": ([1, 0, 0], [0.12, 0.18, 0.3], None),
    }
    return out, edge


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--peers-python", default="/tmp/peers-venv/bin/python")
    args = ap.parse_args()
    from bece.metrics.conventions import CONVENTIONS

    big, edge = cases(np.random.default_rng(20261126))
    allc: dict[str, tuple[np.ndarray, np.ndarray, dict[str, int]]] = {}
    for name, (y, p) in big.items():
        allc[name] = (np.asarray(y, np.int64), p, dict(CONVENTIONS))
    for name, (y, p, m) in edge.items():
        ms = dict(CONVENTIONS) if m is None else {c: m for c in CONVENTIONS}
        allc[name] = (np.asarray(y, np.int64), np.asarray(p, np.float64), ms)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cases.npz"
        arrays = {"names": json.dumps(list(allc))}
        for i, (name, (y, p, ms)) in enumerate(allc.items()):
            arrays[name + "_y"], arrays[name + "_p"] = y, p
            arrays[name + "_m"] = json.dumps(ms)
        np.savez(path, **arrays)
        run = subprocess.run([args.peers_python, "-c", PEER_SCRIPT, str(path)],
                             capture_output=True, text=True, check=False)
    if run.returncode != 0:
        sys.exit(f"peer interpreter failed:\n{run.stderr[-3000:]}")
    peers = json.loads(run.stdout.strip().splitlines()[-1])
    order = ["torchmetrics", "netcal", "sklearn", "mapie", "kumar", "relplot", "helm"]
    print(f"{'input':40s} {'convention':13s} {'M':>3s} {'bece':>12s} {'peer':>12s} {'bece-peer':>10s}")
    worst: dict[str, float] = {}
    for name, (y, p, ms) in allc.items():
        for conv in order:
            ours = peer_ece(y, p, convention=conv, n_bins=ms[conv])
            if conv == "sklearn":
                ref = _sklearn(y, p, ms[conv])
            elif conv == "mapie":
                ref = _mapie(y, p, ms[conv])
            else:
                ref = peers[name][conv]
            d = ours - ref
            f32 = conv == "torchmetrics" and (p.ndim == 2 or p.dtype == np.float32)
            key = conv + (" (float32)" if f32 else "")
            worst[key] = max(worst.get(key, 0.0), abs(d))
            print(f"{name:40s} {conv:13s} {ms[conv]:3d} {ours:12.9f} {ref:12.9f} {d:10.1e}")
        print()
    print("three-point cases, each convention's value (bece's reproduction, equal to the peer's "
          "as above):")
    convs = ["bece"] + order
    print(f"{'case':40s} " + " ".join(f"{c[:12]:>12s}" for c in convs))
    for name, (y, p, ms) in allc.items():
        if name[:2] in ("A:", "B:", "C:", "D:", "E:"):
            vals = [peer_ece(y, p, convention=c, n_bins=ms[c]) for c in convs]
            print(f"{name:40s} " + " ".join(f"{v:12.4f}" for v in vals))
    print()
    print("largest |bece - peer| per convention:")
    for key, v in worst.items():
        print(f"  {key:24s} {v:.1e}")
    print()
    other_metrics(allc, peers)


def other_metrics(allc, peers) -> None:
    """smooth ECE vs relplot.smECE; debiased and plug-in l2 on Kumar's equal-mass
    bins vs uncertainty-calibration; l2 on 15 uniform bins vs torchmetrics
    (float64 (n,) input); all on the (confidence, correct) pairs."""
    from bece.metrics import l2_calibration_error, smooth_calibration_error

    print("other metrics against the peers (on top-label pairs of the large inputs):")
    print(f"{'input':24s} {'metric':34s} {'bece':>14s} {'peer':>14s} {'bece-peer':>10s}")
    for name, (y, p, _) in allc.items():
        res = peers[name]
        if "smece" not in res:
            continue
        if p.ndim == 2:
            z = (p.argmax(axis=1) == y).astype(np.int64)
            c = p.max(axis=1).astype(np.float64)
        else:
            z, c = y, p.astype(np.float64)
        edges = np.r_[0.0, res["kumar_bins"]]
        rows = [
            ("smooth ECE / relplot.smECE", smooth_calibration_error(z, c), res["smece"]),
            ("debiased l2 / Kumar (equal mass)",
             l2_calibration_error(z, c, binning=edges, debiased=True), res["kumar_l2_debiased"]),
            ("l2 / Kumar (equal mass)", l2_calibration_error(z, c, binning=edges),
             res["kumar_l2"]),
            ("l2 15 bins / torchmetrics float64", l2_calibration_error(z, c),
             res["torchmetrics_l2"]),
        ]
        for metric, ours, ref in rows:
            print(f"{name:24s} {metric:34s} {ours:14.11f} {ref:14.11f} {ours - ref:10.1e}")


if __name__ == "__main__":
    main()
