"""Which ECE? bece's conventions against each peer library's own number.

For every convention of :func:`bece.metrics.peer_ece` the peer itself is
called on the same inputs: scikit-learn (``calibration_curve``) and MAPIE in
this interpreter (the test extra); torchmetrics, netcal, relplot and Kumar's
``uncertainty-calibration`` (package ``calibration``, which HELM's
``ece_10_bin`` calls) and probmetrics (Brier, log loss, KS) in another
interpreter that has them, by subprocess
(``--peers-python``, default ``/tmp/peers-venv/bin/python``: an interpreter
with the packages of bece's ``peers`` extra in pyproject.toml). These peers
are not installed in CI (torch is heavy); this benchmark is their comparison,
and the unit tests check the same conventions on hand-computed cases.

Inputs: the public CIFAR-10/100 network outputs of ``--data`` (default
``../shared/data`` beside the repository; SOURCES.md there: the netcal
records' float32 softmax rows as stored, the chenyaofo logits through a
float32 softmax), CIFAR-like softmax outputs (n = 10,000, K = 10,
over-confident by a temperature of 1.5; float64 and float32), binary
P(y = 1) (n = 10,000), and the three-point edge cases of the "Which ECE?"
table (a confidence on an inner edge, at 1.0, at 0.0).

Printed (Markdown; written to ``--markdown``, default
docs/tables/peer_ece.md): the peers' versions; per input and convention,
bece's value, the peer's, and their difference; the largest difference per
convention; the edge cases with the "bece" value beside them; the other
metrics against their peers.

Usage: python benchmarks/peer_ece.py [--peers-python PATH] [--data DIR]
       [--markdown PATH]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bece.metrics import peer_ece  # noqa: E402
from doc_tables import add_markdown_option, printed_tables  # noqa: E402

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
from importlib.metadata import version

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
        from probmetrics.metrics import BrierLoss, KolmogorovSmirnovCalibrationMetric, LogLoss
        two = torch.from_numpy(np.stack([1.0 - c64, c64], axis=1))
        lab = torch.from_numpy(ci)
        res["pm_brier"] = float(BrierLoss().compute_from_labels_probs(lab, two))
        res["pm_brier_1d"] = float(BrierLoss(binary_as_multiclass=False).compute_from_labels_probs(
            lab, two))
        res["pm_logloss"] = float(LogLoss().compute_from_labels_probs(lab, two))
        res["pm_ks"] = float(KolmogorovSmirnovCalibrationMetric().compute_from_labels_probs(lab, two))
    out[name] = res
out["_versions"] = {p: version(p) for p in ("torch", "torchmetrics", "netcal", "relplot",
                                             "uncertainty-calibration", "probmetrics")}
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


def public_outputs(data: Path) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The CIFAR networks' outputs: (labels, float32 softmax rows)."""
    out = {}
    for path in sorted(data.glob("*.npz")):
        with np.load(path) as f:
            y = f["y"].astype(np.int64)
            if "probs" in f.files:
                prob = f["probs"].astype(np.float32)
            else:
                logits = f["logits"].astype(np.float32)
                e = np.exp(logits - logits.max(axis=1, keepdims=True))
                prob = (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
        out[path.stem.replace("_", " ")] = (y, prob)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--peers-python", default="/tmp/peers-venv/bin/python")
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[1].parent / "shared"
                                          / "data"))
    add_markdown_option(ap, __file__)
    args = ap.parse_args()
    with printed_tables(args.markdown, __file__):
        run(args)


def run(args: argparse.Namespace) -> None:
    from bece._metrics.conventions import CONVENTIONS

    big, edge = cases(np.random.default_rng(20261126))
    data = Path(args.data)
    if not data.is_dir():
        sys.exit(f"--data {data}: no such folder (the public CIFAR outputs)")
    big = {**public_outputs(data), **big}
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
    import mapie
    import sklearn

    versions = {**peers.pop("_versions"), "scikit-learn": sklearn.__version__,
                "mapie": mapie.__version__}
    print("| peer | version |\n|---|---|")
    for name, v in versions.items():
        print(f"| {name} | {v} |")
    print()
    order = ["torchmetrics", "netcal", "sklearn", "mapie", "kumar", "relplot", "helm"]
    print("| input | " + " | ".join(f"{c} (M)" for c in order) + " |\n|"
          + "---|" * (len(order) + 1))
    worst: dict[str, float] = {}
    for name, (y, p, ms) in allc.items():
        cells = []
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
            cells.append(f"{d:.1e} ({ms[conv]})")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print()
    print("| convention | largest \\|bece - peer\\| over the inputs above |\n|---|---|")
    for key, v in worst.items():
        print(f"| {key} | {v:.1e} |")
    print()
    convs = ["bece"] + order
    print("| three-point case | " + " | ".join(convs) + " |\n|" + "---|" * (len(convs) + 1))
    for name, (y, p, ms) in allc.items():
        if name[:2] in ("A:", "B:", "C:", "D:", "E:"):
            vals = [peer_ece(y, p, convention=c, n_bins=ms[c]) for c in convs]
            print(f"| {name} | " + " | ".join(f"{v:.4f}" for v in vals) + " |")
    print()
    other_metrics(allc, peers)


def other_metrics(allc, peers) -> None:
    """smooth ECE vs relplot.smECE; debiased and plug-in l2 on Kumar's equal-mass
    bins (right-closed, as Kumar's) vs uncertainty-calibration; l2 on 15 uniform bins vs torchmetrics
    (float64 (n,) input); all on the (confidence, correct) pairs."""
    from sklearn.metrics import brier_score_loss
    from sklearn.metrics import log_loss as sk_log_loss

    from bece.metrics import (
        brier_score,
        ks_calibration_error,
        l2_calibration_error,
        log_loss,
        smooth_calibration_error,
    )

    print("| input (top-label pairs) | metric / peer | bece | peer | bece - peer |\n"
          "|---|---|---|---|---|")
    for name, (y, p, _) in allc.items():
        res = peers[name]
        if "smece" not in res:
            continue
        if p.ndim == 2:
            z = (p.argmax(axis=1) == y).astype(np.int64)
            c = p.max(axis=1).astype(np.float64)
        else:
            z, c = y, p.astype(np.float64)
        # Kumar's bins are right-closed, (e_{m-1}, e_m] with the upper edges
        # e_m (data values, so ties sit on them); bece's are left-closed:
        # the same bins are bece's edges moved up by one ulp
        upper = np.asarray(res["kumar_bins"])
        edges = np.r_[0.0, np.nextafter(upper[:-1], np.inf), 1.0]
        rows = [
            ("smooth ECE / relplot.smECE", smooth_calibration_error(z, c), res["smece"]),
            ("debiased l2 / Kumar (equal mass)",
             l2_calibration_error(z, c, binning=edges, debiased=True), res["kumar_l2_debiased"]),
            ("l2 / Kumar (equal mass)", l2_calibration_error(z, c, binning=edges),
             res["kumar_l2"]),
            ("l2 15 bins / torchmetrics float64", l2_calibration_error(z, c),
             res["torchmetrics_l2"]),
            ("Brier / scikit-learn brier_score_loss", brier_score(z, c), brier_score_loss(z, c)),
            ("log loss / scikit-learn log_loss", log_loss(z, c), sk_log_loss(z, c)),
            ("2 x Brier / probmetrics brier (2 classes)", 2 * brier_score(z, c), res["pm_brier"]),
            ("n x Brier / probmetrics brier-binary-as-1d", z.size * brier_score(z, c),
             res["pm_brier_1d"]),
            ("log loss / probmetrics logloss", log_loss(z, c), res["pm_logloss"]),
            ("KS / probmetrics kolmogorov-smirnov (float32)", ks_calibration_error(z, c),
             res["pm_ks"]),
        ]
        for metric, ours, ref in rows:
            diff = ours - ref if np.isfinite(ours) or np.isfinite(ref) else 0.0
            print(f"| {name} | {metric} | {ours:.12f} | {ref:.12f} | {diff:.1e} |")


if __name__ == "__main__":
    main()
