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
``vector``
    Vector scaling on every file and split: Guo et al.'s (``features="scores"``)
    unregularised and with its penalty chosen by cross-validation, the default
    (``features="tempered"``, log softmax(z / T) as svs, cross-validated), and probmetrics' ``svs``
    (regularised vector scaling; ``--peers`` needed), beside temperature scaling:
    the held-out NLL, averaged over the splits.
``matrix``
    Matrix scaling and Dirichlet calibration on every file and split: their
    defaults (cross-validated strength and diagonal penalty), Kull et al.'s ODIR
    alone (``reg_diagonal=0``; ``--skip-odir`` leaves it out), and probmetrics'
    ``sms`` (``--peers`` needed), beside temperature scaling: the held-out NLL,
    averaged over the splits.
``cost``
    Temperature and vector scaling (unregularised, ``reg_lambda=0``: one fit)
    at n = 10^6, K = 1,000 (float32 logits,
    4 GB), matrix and Dirichlet scaling at n = 10^5, K = 10, 30, 100: passes over the
    data and time as a ratio to one softmax pass (float64 blocks, as the
    calibrators run; the median of five) measured in the same run, with BLAS
    limited to ``--threads`` threads (default 1: on a shared machine
    OpenBLAS's threads wait on each other, and the softmax is one thread).
    ``--quick`` divides n by 10 (``--matrix-n`` sets the matrix rows' n).
``uncertainty``
    Question (a) vs (b) of :mod:`bece._calibrate.bayes_temperature` on
    ResNet-20 CIFAR-100 logits: test half fixed, validation splits of
    n_val = 100, 500, 5000 from the other half.

Run: ``python benchmarks/recalibration.py --part all [--peers /tmp/peers-venv/bin/python]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from scipy import optimize, special

import bece
from bece._calibrate.linear import REG_GRID
from bece._calibrate.scores import as_scores, softmax
from bece.calibrate import (
    BetaCalibration,
    DirichletCalibration,
    IsotonicCalibration,
    MatrixScaling,
    PlattScaling,
    TemperatureScaling,
    TopLabelCalibrator,
    VectorScaling,
    temperature_scaled_ece,
)

#: ``shared/data`` beside the checkout or above it (a worktree one level deeper), or $BECE_DATA
DATA = next((p / "shared" / "data" for p in Path(__file__).resolve().parents[1:]
             if (p / "shared" / "data").is_dir()), Path(os.environ.get("BECE_DATA", "../shared/data")))
if "BECE_DATA" in os.environ:
    DATA = Path(os.environ["BECE_DATA"])
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


#: ``--skip-peer NAME``: peers left out (``netcal-vs``: netcal's vector scaling, slow at K = 100)
SKIP: list[str] = []

#: ``--odir X``: fixed ODIR strength (lambda = mu = X) instead of the cross-validation
ODIR: list[float] = []


def calibrators(kind):
    odir = {"reg_lambda": ODIR[0], "reg_mu": ODIR[0]} if ODIR else {}
    tag = f" (lambda = mu = {ODIR[0]:g})" if ODIR else " (CV)"
    return {
        "TS": TemperatureScaling(input=kind),
        "VS (unregularised)": VectorScaling(input=kind, features="scores", reg_lambda=0),
        "VS (CV)": VectorScaling(input=kind),
        "MS" + tag: MatrixScaling(input=kind, **odir),
        "Dir" + tag: DirichletCalibration(input=kind, **odir),
    }


PEER_CODE = r"""
import json, sys, time, warnings
import numpy as np
warnings.filterwarnings("ignore")
d = np.load(sys.argv[1])
x_val, y_val, x_te = d["x_val"], d["y_val"], d["x_te"]
kind, task = str(d["kind"]), str(d["task"])
out = {}


def probs(x):
    if kind == "probabilities":
        return np.asarray(x, np.float64)
    e = np.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def run(label, make):
    t0 = time.perf_counter()
    try:
        p = np.asarray(make(), dtype=np.float64)
        if p.ndim == 1:
            p = np.column_stack([1 - p, p])
        out[label] = {"p": p.tolist(), "time": time.perf_counter() - t0}
    except Exception as exc:
        out[label] = "error: " + repr(exc)[:200]


import contextlib, io
from netcal.scaling import TemperatureScaling, LogisticCalibration, BetaCalibration
from probmetrics.calibrators import get_calibrator


def netcal(cls, **kw):
    def make():
        with contextlib.redirect_stdout(io.StringIO()):
            cal = cls(method="mle", **kw)
            cal.fit(pv, y_val)
            return cal.transform(pt)
    return make


def pm(name, **cfg):
    def make():
        with contextlib.redirect_stdout(io.StringIO()):
            cal = get_calibrator(name, **cfg)
            cal.fit(pv2.astype(np.float32), y_val)
            return cal.predict_proba(pt2.astype(np.float32))
    return make


if task == "multiclass":
    pv, pt = probs(x_val), probs(x_te)
    pv2, pt2 = pv, pt
    run("netcal TemperatureScaling(mle)", netcal(TemperatureScaling))
    if "netcal-vs" not in sys.argv[2:]:
        run("netcal LogisticCalibration(mle) [VS]", netcal(LogisticCalibration))
    run("probmetrics temp-scaling", pm("temp-scaling"))
    run("probmetrics svs", pm("svs", svs_print_init_info=False))
    run("probmetrics sms", pm("sms", sms_print_init_info=False))
else:  # binary: x = P(y=1), shape (n,)
    pv, pt = np.asarray(x_val, np.float64), np.asarray(x_te, np.float64)
    pv2, pt2 = np.column_stack([1 - pv, pv]), np.column_stack([1 - pt, pt])
    run("netcal LogisticCalibration(mle) [Platt]", netcal(LogisticCalibration))
    run("netcal BetaCalibration(mle)", netcal(BetaCalibration))
    def betacal():
        from betacal import BetaCalibration as B
        b = B(parameters="abm")
        b.fit(pv.reshape(-1, 1), y_val)
        return b.predict(pt.reshape(-1, 1))
    run("betacal abm", betacal)
    run("probmetrics platt", pm("platt"))
    run("probmetrics isotonic", pm("isotonic"))
    run("probmetrics beta", pm("beta"))
print(json.dumps(out))
"""


#: where the peers' outputs are kept between runs (``--peer-cache``), keyed by file, split and task
PEER_CACHE: list[Path] = []


def peers(python, x_val, y_val, x_te, kind, task, key=""):
    cache = PEER_CACHE[0] / f"{key}-{task}.json" if PEER_CACHE and key else None
    if cache is not None and cache.exists():
        res_text = cache.read_text()
    else:
        res_text = _run_peers(python, x_val, y_val, x_te, kind, task)
        if cache is not None and not res_text.startswith("error"):
            cache.write_text(res_text)
    if res_text.startswith("error"):
        return {"peers": res_text}
    out = {}
    for k, v in json.loads(res_text).items():
        out[k] = v if isinstance(v, str) else (np.array(v["p"]), v["time"])
    return out


def _run_peers(python, x_val, y_val, x_te, kind, task):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "split.npz"
        np.savez(path, x_val=x_val, y_val=y_val, x_te=x_te, kind=kind, task=task)
        res = subprocess.run(["nice", "-n", "5", python, "-c", PEER_CODE, str(path), *SKIP],
                             capture_output=True, text=True, timeout=3600)
    if res.returncode:
        return "error: " + res.stderr[-300:]
    return res.stdout.strip().splitlines()[-1]


def scipy_temperature(x, y, kind):
    """T minimising the NLL by scipy alone (bounded Brent on log T, xatol 1e-12)."""
    lz = np.asarray(x, np.float64)
    if kind == "probabilities":
        lz = np.log(np.maximum(lz, np.finfo(x.dtype).tiny))
    rows = np.arange(y.size)

    def f(v):
        return -float(special.log_softmax(lz / np.exp(v), axis=1)[rows, y].sum())

    res = optimize.minimize_scalar(f, bounds=(np.log(1e-2), np.log(1e2)), method="bounded",
                                   options={"xatol": 1e-12, "maxiter": 500})
    return float(np.exp(res.x))


def table(rows, title="calibrator"):
    print(f"| {title} | test NLL | test ECE | fit time (s) |")
    print("|---|---|---|---|")
    for label, vals in rows.items():
        a = np.array(vals, dtype=np.float64)
        print(f"| {label} | {a[:, 0].mean():.4f} | {a[:, 1].mean():.4f} | {a[:, 2].mean():.2f} |")
    print()


def _fit_timed(cal, x, y):
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cal.fit(x, y)
    return time.perf_counter() - t0


def heldout(seeds, peer_python, files):
    print("## Held-out NLL and ECE (15 bins, top-label), half validation / half test, "
          f"mean over {len(seeds)} random splits\n")
    for name in files:
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
                dt = _fit_timed(cal, x[val], y[val])
                p = cal.predict_proba(x[te])
                rows.setdefault(label, []).append((nll(p, y[te]),
                                                   bece.expected_calibration_error(y[te], p), dt))
            prob_val = np.vstack([softmax(b) for _, _, b in as_scores(x[val], kind).blocks()])
            tl = TopLabelCalibrator(method="isotonic")
            dt = _fit_timed(tl, prob_val, y[val])
            p = tl.predict_proba(p0)
            rows.setdefault("top-label isotonic", []).append(
                (nll(p, y[te]), bece.top_label_ece(y[te], tl.predict_confidence(p0),
                                                   y_pred=tl.predict(p0), average="sample"), dt))
            if peer_python:
                for label, res in peers(peer_python, x[val], y[val], x[te], kind, "multiclass",
                                          f"{name}-{seed}").items():
                    if isinstance(res, str):
                        rows.setdefault(label, []).append((np.nan, np.nan, np.nan))
                        print(f"   {label}: {res}")
                    else:
                        p, dt = res
                        rows.setdefault(label, []).append((nll(p, y[te]),
                                                           bece.expected_calibration_error(y[te], p), dt))
        print(f"### {name} ({kind}, n = {y.size}, K = {x.shape[1]})\n")
        table(rows, f"calibrator ({name})" if len(files) > 1 else "calibrator")  # tables name their file
        sys.stdout.flush()


def split_nlls(name, seeds, make, peer_python, peer, chosen, timed):
    """Held-out NLL of calibrators on random half splits of one file, each fitted on the
    validation half: ``make(kind, k, n_val)`` gives ``{label: calibrator}`` per split;
    ``chosen`` maps labels to a function of the fitted calibrator (a string, e.g. its
    strength); ``peer`` is the label of one peer's result (``--peers``). Returns ``(K,
    mean NLL by label and "peer", chosen strings by label, mean fit time of ``timed``)``."""
    x, y, kind = load(name)
    rows: dict[str, list[float]] = {}
    picks: dict[str, list[str]] = {label: [] for label in chosen}
    times = []
    for seed in seeds:
        perm = np.random.default_rng(seed).permutation(y.size)
        val, te = perm[: y.size // 2], perm[y.size // 2:]
        for label, cal in make(kind, x.shape[1], val.size).items():
            dt = _fit_timed(cal, x[val], y[val])
            rows.setdefault(label, []).append(nll(cal.predict_proba(x[te]), y[te]))
            if label in chosen:
                picks[label].append(chosen[label](cal))
            if label == timed:
                times.append(dt)
        res = (peers(peer_python, x[val], y[val], x[te], kind, "multiclass", f"{name}-{seed}")
               if peer_python else {}).get(peer, "missing")
        rows.setdefault("peer", []).append(np.nan if isinstance(res, str) else nll(res[0], y[te]))
    means = {k: float(np.mean(v)) for k, v in rows.items()}
    return x.shape[1], means, picks, float(np.mean(times))


def vector(seeds, peer_python, files):
    """Vector scaling on every file: unregularised, cross-validated, and probmetrics' svs."""
    print("## Vector scaling: held-out NLL, half validation / half test, "
          f"mean over {len(seeds)} random splits (lambda: the CV's choice on each split). "
          "VS (default): features='tempered', 5-fold CV; VS (scores): features='scores' "
          "(Guo et al.'s), the same CV\n")
    print("| file | K | TS | VS (scores, unregularised) | VS (scores, CV) | lambda (scores) | "
          "VS (default) | lambda (default) | probmetrics svs | VS (default) - svs | "
          "VS (default) - TS | VS (scores, CV) - svs | VS (default) fit (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")

    def make(kind, k, n_val):
        return {"TS": TemperatureScaling(input=kind),
                "VS0": VectorScaling(input=kind, features="scores", reg_lambda=0),
                "VSS": VectorScaling(input=kind, features="scores"),
                "VS": VectorScaling(input=kind)}

    strength = {"VSS": lambda cal: f"{cal.reg_lambda_:g}", "VS": lambda cal: f"{cal.reg_lambda_:g}"}
    for name in files:
        k, m, lams, fit = split_nlls(name, seeds, make, peer_python, "probmetrics svs", strength, "VS")
        print(f"| {name} | {k} | {m['TS']:.4f} | {m['VS0']:.4f} | {m['VSS']:.4f} | "
              f"{', '.join(lams['VSS'])} | {m['VS']:.4f} | {', '.join(lams['VS'])} | {m['peer']:.4f} | "
              f"{m['VS'] - m['peer']:+.4f} | {m['VS'] - m['TS']:+.4f} | {m['VSS'] - m['peer']:+.4f} | "
              f"{fit:.1f} |")
        sys.stdout.flush()
    print()


def matrix(seeds, peer_python, files, kull=True):
    """Matrix scaling and Dirichlet calibration on every file: the defaults (the
    cross-validation choosing the strength and between nu = 0 and nu = lambda),
    Kull et al.'s ODIR alone (``reg_diagonal=0``), and probmetrics' sms."""
    print("## Matrix scaling and Dirichlet calibration: held-out NLL, half validation / half test, "
          f"mean over {len(seeds)} random splits (lambda / nu: the CV's choice on each split). "
          "MS: the default (features='tempered', 5-fold CV over the ODIR path, mu = lambda and nu = 0, "
          "and the path mu = nu = lambda / (K-1)^2), which Dirichlet calibration's default equals; "
          "MS (ODIR), Dir (ODIR): Kull et al.'s (features='scores', reg_diagonal=0, 3-fold CV); "
          "MS at sms's strengths: the default features with lambda = (K(K-1))^2/n, mu = nu = K^2/n "
          "(n: validation rows), probmetrics sms's objective in bece's units\n")
    print("| file | K | TS | MS | lambda / nu (MS) | MS (ODIR) | Dir (ODIR) | "
          "probmetrics sms | MS - sms | MS (ODIR) - sms | Dir (ODIR) - sms | "
          "MS at sms's strengths - sms | MS fit (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")

    def make(kind, k, n_val):
        cals = {"TS": TemperatureScaling(input=kind), "MS": MatrixScaling(input=kind)}
        if kull:  # probmetrics sms's fixed strengths, in bece's units
            cals["sms-like"] = MatrixScaling(input=kind, reg_lambda=(k * (k - 1)) ** 2 / n_val,
                                             reg_mu=k**2 / n_val, reg_diagonal=k**2 / n_val)
            cals["ODIR"] = MatrixScaling(input=kind, features="scores", reg_diagonal=0, cv=3)
            cals["Dir ODIR"] = DirichletCalibration(input=kind, features="scores", reg_diagonal=0,
                                                    cv=3)
        return cals

    strength = {"MS": lambda cal: f"{cal.reg_lambda_:g}/{cal.reg_diagonal_:.3g}"}
    for name in files:
        k, m, chosen, fit = split_nlls(name, seeds, make, peer_python, "probmetrics sms", strength,
                                       "MS")
        odir, dodir = m.get("ODIR", np.nan), m.get("Dir ODIR", np.nan)
        print(f"| {name} | {k} | {m['TS']:.4f} | {m['MS']:.4f} | {', '.join(chosen['MS'])} | "
              f"{odir:.4f} | {dodir:.4f} | {m['peer']:.4f} | {m['MS'] - m['peer']:+.4f} | "
              f"{odir - m['peer']:+.4f} | {dodir - m['peer']:+.4f} | "
              f"{m.get('sms-like', np.nan) - m['peer']:+.4f} | {fit:.1f} |")
        sys.stdout.flush()
    print()


def temperature_check(seeds, files):
    """T of bece against scipy's NLL minimiser on each validation half."""
    print("## Temperature: bece against scipy's NLL minimiser (bounded Brent on log T, xatol 1e-12)\n")
    print("| file | split | T (bece) | T (scipy) | relative difference |")
    print("|---|---|---|---|---|")
    worst = 0.0
    for name in files:
        x, y, kind = load(name)
        for seed in seeds:
            val = np.random.default_rng(seed).permutation(y.size)[: y.size // 2]
            t = TemperatureScaling(input=kind).fit(x[val], y[val]).temperature_
            t_ref = scipy_temperature(x[val], y[val], kind)
            worst = max(worst, abs(t - t_ref) / t_ref)
            print(f"| {name} | {seed} | {t:.8f} | {t_ref:.8f} | {abs(t - t_ref) / t_ref:.1e} |")
            sys.stdout.flush()
    print(f"\nlargest relative difference: {worst:.1e}\n")


def binary(seeds, peer_python, files):
    print("## Binary calibrators on the top-label confidence: X = max softmax, y = [argmax == label]; "
          f"half validation / half test, mean over {len(seeds)} random splits\n")
    for name in files:
        x, y, kind = load(name)
        p_all = np.vstack([softmax(b) for _, _, b in as_scores(x, kind).blocks()])
        conf = p_all.max(axis=1)
        z = (p_all.argmax(axis=1) == y).astype(np.int64)
        rows: dict[str, list[tuple[float, float, float]]] = {}
        for seed in seeds:
            perm = np.random.default_rng(seed).permutation(y.size)
            val, te = perm[: y.size // 2], perm[y.size // 2:]
            p0 = np.column_stack([1 - conf[te], conf[te]])
            ece0 = bece.expected_calibration_error(z[te], conf[te])
            rows.setdefault("uncalibrated", []).append((nll(p0, z[te]), ece0, 0.0))
            for label, cal in {"Platt": PlattScaling(input="probabilities"),
                               "isotonic": IsotonicCalibration(input="probabilities"),
                               "beta": BetaCalibration(input="probabilities")}.items():
                dt = _fit_timed(cal, conf[val], z[val])
                p = cal.predict_proba(conf[te])
                rows.setdefault(label, []).append((nll(p, z[te]),
                                                   bece.expected_calibration_error(z[te], p[:, 1]), dt))
            if peer_python:
                for label, res in peers(peer_python, conf[val], z[val], conf[te], kind, "binary",
                                          f"{name}-{seed}").items():
                    if isinstance(res, str):
                        rows.setdefault(label, []).append((np.nan, np.nan, np.nan))
                        print(f"   {label}: {res}")
                    else:
                        p, dt = res
                        ece = bece.expected_calibration_error(z[te], p[:, 1])
                        rows.setdefault(label, []).append((nll(p, z[te]), ece, dt))
        print(f"### {name}: confidence calibration (n = {y.size}, accuracy {z.mean():.3f})\n")
        table(rows)
        sys.stdout.flush()


def softmax_pass(scores):
    """Seconds of one softmax over the matrix, block by block in float64 (as the calibrators read it)."""
    t0 = time.perf_counter()
    total = 0.0
    for _, _, b in scores.blocks():
        total += float(softmax(b)[:, 0].sum())
    return time.perf_counter() - t0


def reference_pass(scores, repeat=5):
    """The median of ``repeat`` softmax passes (s): the unit of the cost table."""
    return float(np.median([softmax_pass(scores) for _ in range(repeat)]))


def synthetic(n, k, rng):
    """float32 logits N(0, 3^2) and labels drawn from softmax(z / 1.5 + per-class bias)."""
    z = np.empty((n, k), dtype=np.float32)
    y = np.empty(n, dtype=np.int64)
    rows = max(1, (1 << 20) // k)
    bias = rng.normal(scale=0.5, size=k)
    for s in range(0, n, rows):
        b = rng.normal(scale=3.0, size=(min(rows, n - s), k))
        z[s:s + b.shape[0]] = b
        p = special.softmax(b / 1.5 + bias, axis=1)
        y[s:s + b.shape[0]] = np.minimum((rng.uniform(size=(b.shape[0], 1)) > p.cumsum(1)).sum(1), k - 1)
    return z, y


def cost(quick, matrix_n=None, threads=1):
    from threadpoolctl import threadpool_limits

    print("## Cost as K grows: passes over the data, and time as a ratio to one softmax pass "
          "over the same matrix (float64 blocks, as the calibrators run), measured in the same run\n")
    import platform

    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, shared. "
          f"BLAS limited to {threads} thread(s) (threadpoolctl), as the softmax (numpy's ufuncs) "
          "runs; 'softmax pass (s)': the median of 5 passes over that row's matrix, in seconds, "
          "measured before its fits. Matrix and Dirichlet scaling on the scores with lambda = mu = "
          f"0.01, nu = 0 (CV: the default, {len(REG_GRID)} candidates x 2 paths x 5 folds, "
          "on the tempered features).\n")
    print("| calibrator | n | K | passes | time / softmax pass | Newton iterations | "
          "softmax pass (s) | fit (s) |")
    print("|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    div = 10 if quick else 1
    matrix_n = matrix_n or 10**5 // div
    odir = {"features": "scores", "reg_lambda": 0.01, "reg_mu": 0.01}
    plan = [(10**6 // div, k, [TemperatureScaling(input="logits"),
                               VectorScaling(input="logits", features="scores", reg_lambda=0)])
            for k in (10, 100, 1000)]
    plan += [(matrix_n, k, [MatrixScaling(input="logits", **odir),
                            DirichletCalibration(input="logits", **odir)]
              + [MatrixScaling(input="logits")])  # the default: tempered features, CV
             for k in (10, 30, 100)]
    with threadpool_limits(threads):
        for n, k, ests in plan:
            z, y = synthetic(n, k, rng)
            scores = as_scores(z, "logits")
            ref = reference_pass(scores)
            for est in ests:
                dt = _fit_timed(est, z, y)
                label = type(est).__name__ + (" (CV)" if getattr(est, "reg_lambda", 0) is None else "")
                print(f"| {label} | {n:,} | {k:,} | {est.n_passes_} | {dt / ref:.1f} | "
                      f"{getattr(est, 'n_iter_', '-')} | {ref:.4f} | {dt:.2f} |")
                sys.stdout.flush()
            del z
    print()


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
    parser.add_argument("--part", choices=["heldout", "vector", "matrix", "binary", "temperature", "cost",
                                           "uncertainty", "all"],
                        default="all")
    parser.add_argument("--files", nargs="*", default=FILES, help="files of ../shared/data")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--peers", default=None, help="python of a scratch env with netcal, probmetrics")
    parser.add_argument("--odir", type=float, default=None,
                        help="fixed ODIR strength of MS and Dir (default: cross-validation)")
    parser.add_argument("--skip-peer", nargs="*", default=[], choices=["netcal-vs"])
    parser.add_argument("--skip-odir", action="store_true",
                        help="matrix part: leave out MS with reg_diagonal=0 (slow at K = 100)")
    parser.add_argument("--peer-cache", default=None, help="folder keeping the peers' outputs")
    parser.add_argument("--quick", action="store_true", help="cost at n / 10")
    parser.add_argument("--matrix-n", type=int, default=None,
                        help="rows of the matrix/Dirichlet cost rows (default 10^5, 10^4 with --quick)")
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads of the cost part")
    args = parser.parse_args(argv)
    SKIP.extend(args.skip_peer)
    if args.odir is not None:
        ODIR.append(args.odir)
    if args.peer_cache:
        PEER_CACHE.append(Path(args.peer_cache))
        PEER_CACHE[0].mkdir(parents=True, exist_ok=True)
    if args.part in ("heldout", "all"):
        heldout(list(range(args.seeds)), args.peers, args.files)
    if args.part in ("vector", "all"):
        vector(list(range(args.seeds)), args.peers, args.files)
    if args.part in ("matrix", "all"):
        matrix(list(range(args.seeds)), args.peers, args.files, kull=not args.skip_odir)
    if args.part in ("temperature", "all"):
        temperature_check(list(range(args.seeds)), args.files)
    if args.part in ("binary", "all"):
        binary(list(range(args.seeds)), args.peers, args.files)
    if args.part in ("uncertainty", "all"):
        uncertainty()
    if args.part in ("cost", "all"):
        cost(args.quick, args.matrix_n, args.threads)
    sys.stdout.flush()


if __name__ == "__main__":
    from doc_tables import run_main  # --markdown PATH: the tables for docs/tables/

    run_main(main, __file__, part_option="--part")
