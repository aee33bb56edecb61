"""Semi-synthetic study of the top-label ECE posteriors on real network outputs.

Run (repository root; needs ../shared/data, the public CIFAR-10/100 outputs):

    python benchmarks/toplabel_smooth_study.py --reps 200            # the study
    python benchmarks/toplabel_smooth_study.py --quick               # 20 replications, 2 networks
    python benchmarks/toplabel_smooth_study.py --timing              # K = 1,000, n = 10^6 ratios
    python benchmarks/toplabel_smooth_study.py --summarise A.csv ...  # tables from --out files

The table also goes to docs/tables/toplabel_smooth_study.md (``--markdown PATH``);
with ``--summarise``, under the paragraph of
benchmarks/results/toplabel_smooth_study-provenance.md, which names the runs
that wrote the replications (add a run there when its rows go into the CSVs).

Population: one network's 10,000 CIFAR test predictions (predicted label =
argmax, top confidence p as observed). Each replication resamples n of them
with replacement (the networks' real confidences) and redraws every
outcome from a known calibration map g(prediction) = P(correct):

* ``identity``: g = p (calibrated; true ECE 0, which no continuous
  posterior covers: reported, not judged);
* ``temp1.15``, ``temp1.5``: the truth is the softmax at temperature T of
  the network's logits (log-probabilities for the netcal files), g =
  softmax(z / T)[argmax]: a mildly (T = 1.15, the nearly calibrated regime)
  and a clearly over-confident network;
* ``top1.25``: an over-confident map of the top confidence alone, logit g =
  logit p / 1.25 (needs no logits: the K = 1,000 populations);
* ``label``: a label-dependent map, logit g = a_l + b_l logit p with a_l ~
  N(0, 0.5^2) and log b_l ~ N(0, 0.2^2) drawn once per label (seed 0).

K = 1,000 (``--networks k1000:<network>``): no public K = 1,000 outputs are in
the data folder, so the population is semi-synthetic: 10^6 predictions, each
top confidence drawn from the named network's 10,000 and each predicted label
uniform over 1,000 labels (seed 0; :func:`synthetic`). The study ran
``--networks k1000:netcal_densenet-bc-100-cifar-100 --maps identity top1.25
label --n 100000 --reps 100`` twice, with ``--seed 1`` and ``--seed 2``
(one process each, about 13 s per replication alone on one core).

Truth: the population top-label ECE (15 uniform bins) of the map over the
population (a network's 10,000 test predictions; 10^6 at K = 1,000), per
label ECE_l = sum_m |sum_{i in (l, m)} (g_i - p_i)| / n_l;
``label`` averages ECE_l over the labels predicted in the replication (the
posterior is conditional on them), ``sample`` weights them by their
population frequency. Each replication runs the hierarchical smooth
posterior (``model="smooth"``: both averages from one fit) and the binned
top-label posterior (``model="binned"``), 1,000 draws each, and records
whether each 90% equal-tailed interval covers the truth, its width and the
posterior mean; the plug-in is the top-label ECE of the sample.

Printed per (network, map, n): the true ECE, coverage of each posterior
(Monte Carlo standard error sqrt(c (1 - c) / R)), mean width, and the bias
of the posterior means and of the plug-in (mean over replications minus the
truth, with its standard error).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy import special

import bece
from bece._base.laplace import single_threaded_blas
from bece._smooth.average import DEFAULT_PRIOR_ODDS, prob_calibrated
from bece._smooth.toplabel import label_posterior_draws, prepare_label_atoms
from bece._smooth.toplabel_fit import fit_top_label_smooth

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doc_tables import add_markdown_option, meets_coverage_rule, write  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
if not DATA.is_dir():  # a worktree two levels below the shared folder's parent
    DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
#: The commands that wrote the replications in results/ (edited when a run is added)
PROVENANCE = Path(__file__).resolve().parent / "results" / "toplabel_smooth_study-provenance.md"
N_BINS = 15
LEVEL = 0.9
NETWORKS = {
    10: ["netcal_lenet-5-cifar-10", "netcal_wideresnet-16-4-cifar-10"],
    100: ["netcal_densenet-bc-100-cifar-100", "chenyaofo_cifar100_resnet20",
          "netcal_lenet-5-cifar-100"],
}
MAPS = ("identity", "temp1.15", "temp1.5", "top1.25", "label")
MAP_NAMES = {"identity": "identity (calibrated)", "temp1.15": "T = 1.15", "temp1.5": "T = 1.5",
             "top1.25": "logit p / 1.25 (over-confident)",
             "label": "per-label logit shift and slope"}
#: Prefix of the semi-synthetic K = 1,000 populations: "k1000:<network>"
SYNTHETIC = "k1000:"
SYNTHETIC_K = 1000
SYNTHETIC_SIZE = 10**6


def load(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, int]:
    """Predicted label, top confidence, logits (log-probabilities) and K of a
    network's outputs, or of a semi-synthetic population (``"k1000:<network>"``,
    :func:`synthetic`; no logits)."""
    if name.startswith(SYNTHETIC):
        pred, conf = synthetic(name.removeprefix(SYNTHETIC))
        return pred, conf, None, SYNTHETIC_K
    d = np.load(DATA / f"{name}.npz")
    if "logits" in d:
        z = d["logits"].astype(np.float64)
    else:
        z = np.log(np.maximum(d["probs"].astype(np.float64), np.finfo(np.float64).tiny))
    z -= z.max(axis=1, keepdims=True)
    prob = np.exp(z)
    prob /= prob.sum(axis=1, keepdims=True)
    return prob.argmax(axis=1), prob.max(axis=1), z, z.shape[1]


def synthetic(network: str) -> tuple[np.ndarray, np.ndarray]:
    """A K = 1,000 population of 10^6 predictions whose top confidences match a
    real network's: each confidence drawn with replacement from the network's
    10,000 top confidences, each predicted label uniform over the 1,000 labels
    (as on a balanced test set such as ImageNet's), both with seed 0."""
    _, conf, _, _ = load(network)
    rng = np.random.default_rng(0)
    return (rng.integers(0, SYNTHETIC_K, SYNTHETIC_SIZE),
            conf[rng.integers(0, conf.size, SYNTHETIC_SIZE)])


def calibration_map(kind: str, pred: np.ndarray, conf: np.ndarray, z: np.ndarray | None,
                    k: int) -> np.ndarray:
    """P(correct) of each prediction under map ``kind``."""
    if kind == "identity":
        return conf.copy()
    if kind.startswith("top"):
        t = float(kind[3:])
        return special.expit(special.logit(np.clip(conf, 1e-6, 1 - 1e-6)) / t)
    if kind.startswith("temp"):
        if z is None:
            raise ValueError(f"map {kind!r} needs the network's logits")
        t = float(kind[4:])
        zt = z / t
        zt -= zt.max(axis=1, keepdims=True)
        pt = np.exp(zt)
        return pt[np.arange(pred.size), pred] / pt.sum(axis=1)
    if kind == "label":
        rng = np.random.default_rng(0)
        a, b = rng.normal(0.0, 0.5, k), np.exp(rng.normal(0.0, 0.2, k))
        x = special.logit(np.clip(conf, 1e-6, 1 - 1e-6))
        return special.expit(a[pred] + b[pred] * x)
    raise ValueError(kind)


def label_gaps(pred: np.ndarray, conf: np.ndarray, g: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per label: sum_m |sum_{i in (l, m)} (g_i - p_i)| and n_l (population)."""
    b = np.minimum((conf * N_BINS).astype(np.int64), N_BINS - 1)
    cell = pred * N_BINS + b
    s = np.bincount(cell, weights=g - conf, minlength=k * N_BINS).reshape(k, N_BINS)
    return np.abs(s).sum(axis=1), np.bincount(pred, minlength=k).astype(np.float64)


def truth(gaps: np.ndarray, counts: np.ndarray, present: np.ndarray) -> dict[str, float]:
    return {"label": float(np.mean(gaps[present] / counts[present])),
            "sample": float(gaps[present].sum() / counts[present].sum())}


def smooth_both(y, conf, pred, seed):
    atoms, _, _ = prepare_label_atoms(y, conf, pred, N_BINS, "uniform", "auto")
    post = fit_top_label_smooth(atoms)
    e, post = label_posterior_draws(atoms, post, 1000, np.random.default_rng(seed), False)
    return {a: e[a] for a in ("label", "sample")}, post


def averaged(draws: dict, post, seed) -> dict:
    """The draws averaged with exact calibration at the default prior odds (the
    default model): a fraction pi_0 of them set to 0, as
    bece._smooth.average.average_top_label_with_calibrated does."""
    pi0 = prob_calibrated(post.log_bayes_factor, DEFAULT_PRIOR_ODDS)
    pick = np.random.default_rng([seed, 7]).random(next(iter(draws.values())).size) < pi0
    return {a: np.where(pick, 0.0, d) for a, d in draws.items()}, pi0


def binned_both(y, conf, pred, seed):
    return {a: bece.bayesian_top_label_ece(y, conf, y_pred=pred, n_bins=N_BINS, average=a,
                                           num_samples=1000, seed=seed, model="binned").draws
            for a in ("label", "sample")}


def replications(name: str, kind: str, n: int, reps: int, seed: int):
    """The replications of one (network, map, n): for each, its index, labels
    y, confidences, predicted labels, the truths (:func:`truth`) and K."""
    pred, conf, z, k = load(name)
    g = calibration_map(kind, pred, conf, z, k)
    gaps, counts = label_gaps(pred, conf, g, k)
    rng = np.random.default_rng([seed, n, MAPS.index(kind)])
    for r in range(reps):
        idx = rng.integers(0, pred.size, n)
        correct = rng.uniform(size=n) < g[idx]
        p, lab = conf[idx], pred[idx]
        yield r, np.where(correct, lab, (lab + 1) % k), p, lab, truth(gaps, counts, np.unique(lab)), k


def run_row(name: str, kind: str, n: int, reps: int, seed: int) -> list[dict]:
    rows = []
    for r, y, p, lab, tr, k in replications(name, kind, n, reps, seed):
        with single_threaded_blas():
            sm, post = smooth_both(y, p, lab, r)
        av, pi0 = averaged(sm, post, r)
        bn = binned_both(y, p, lab, r)
        for avg in ("label", "sample"):
            plug = bece.top_label_ece(y, p, y_pred=lab, n_bins=N_BINS, average=avg)
            row = {"network": name, "K": k, "map": kind, "n": n, "rep": r, "average": avg,
                   "truth": tr[avg], "plugin": plug, "pareto_k": post.pareto_k, "pi0": pi0}
            for meth, d in (("smooth", sm[avg]), ("binned", bn[avg]), ("default", av[avg])):
                lo, hi = np.quantile(d, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
                row.update({f"{meth}_cover": float(lo <= tr[avg] <= hi), f"{meth}_width": hi - lo,
                            f"{meth}_mean": float(d.mean()), f"{meth}_zero": float(lo == 0.0)})
            rows.append(row)
    return rows


def summarise(rows: list[dict]) -> None:
    keys = sorted({(r["K"], r["network"], r["map"], r["n"], r["average"]) for r in rows},
                  key=lambda t: (t[0], t[1], MAPS.index(t[2]), t[4], t[3]))
    print("90% intervals of the top-label ECE, 15 bins; coverage +- its Monte Carlo s.e.; "
          "bias = mean estimate - truth (+- s.e.)")
    head = (f"{'network':34s} {'map':9s} {'avg':6s} {'n':>6s} {'R':>4s} {'truth':>7s} | "
            f"{'cov default':>12s} {'from 0':>6s} {'P(cal)':>6s} {'cov smooth':>12s} {'cov binned':>12s} | "
            f"{'width d':>7s} {'width s':>7s} {'width b':>7s} | "
            f"{'bias default':>15s} {'bias smooth':>15s} {'bias binned':>15s} {'bias plug-in':>15s}")
    print(head)
    print("-" * len(head))
    for key in keys:
        sel = [r for r in rows if (r["K"], r["network"], r["map"], r["n"], r["average"]) == key]
        big_r = len(sel)
        tr = np.array([r["truth"] for r in sel])

        def cov(m):
            c = np.mean([r[f"{m}_cover"] for r in sel])
            return f"{c:.2f}+-{np.sqrt(c * (1 - c) / big_r):.2f}"

        def bias(col):
            d = np.array([r[col] for r in sel]) - tr
            return f"{d.mean():+.4f}+-{d.std(ddof=1) / np.sqrt(big_r):.4f}"

        def avg(col):
            return np.mean([r.get(col, np.nan) for r in sel])

        print(f"{key[1]:34s} {key[2]:9s} {key[4]:6s} {key[3]:6d} {big_r:4d} {tr.mean():7.4f} | "
              f"{cov('default') if 'default_cover' in sel[0] else '-':>12s} "
              f"{avg('default_zero'):6.2f} {avg('pi0'):6.2f} {cov('smooth'):>12s} {cov('binned'):>12s} | "
              f"{avg('default_width'):7.4f} {avg('smooth_width'):7.4f} {avg('binned_width'):7.4f} | "
              f"{bias('default_mean') if 'default_mean' in sel[0] else '-':>15s} "
              f"{bias('smooth_mean'):>15s} {bias('binned_mean'):>15s} {bias('plugin'):>15s}")


def markdown(rows: list[dict]) -> str:
    """The table of :func:`summarise` in Markdown: coverage and bias with their
    Monte Carlo standard errors, one row per (network, map, average, n)."""
    keys = sorted({(r["K"], r["network"], r["map"], r["n"], r["average"]) for r in rows},
                  key=lambda t: (t[0], t[1], MAPS.index(t[2]), t[4], t[3]))
    out = ["| network (K) | map | average | n | R | true ECE | cover, default | rule | from 0 | "
           "mean P(calibrated) | cover, hierarchical alone | cover, binned | width, default | "
           "bias default | bias binned | bias plug-in |",
           "|---|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for key in keys:
        sel = [r for r in rows if (r["K"], r["network"], r["map"], r["n"], r["average"]) == key]
        big_r = len(sel)
        tr = np.array([r["truth"] for r in sel])

        def cov(m: str) -> str:
            c = float(np.mean([r[f"{m}_cover"] for r in sel]))
            return f"{c:.2f} ± {np.sqrt(c * (1 - c) / big_r):.2f}"

        def bias(col: str) -> str:
            d = np.array([r[col] for r in sel]) - tr
            return f"{d.mean():+.4f} ± {d.std(ddof=1) / np.sqrt(big_r):.4f}".replace("-", "−")

        def avg(col: str) -> float:
            return float(np.mean([r[col] for r in sel]))

        def rule() -> str:
            """The validation rule on the default's coverage c: c + 2 sqrt(c (1 - c) / R)
            >= 0.85 with R >= 200 (a true ECE of 0 is covered by the intervals from 0)."""
            c = avg("default_cover")
            if big_r < 200:
                return "R < 200"
            return "met" if meets_coverage_rule(c, big_r) else "**not met**"

        net = key[1].removeprefix(SYNTHETIC).removeprefix("netcal_").removeprefix("chenyaofo_")
        if key[1].startswith(SYNTHETIC):
            net = f"semi-synthetic, {net} confidences"
        out.append(f"| {net} ({key[0]}) | {MAP_NAMES[key[2]]} | {key[4]} | {key[3]:,} | {big_r} | "
                   f"{tr.mean():.4f} | {cov('default')} | {rule()} | {avg('default_zero'):.2f} | "
                   f"{avg('pi0'):.2f} | {cov('smooth')} | {cov('binned')} | "
                   f"{avg('default_width'):.4f} | {bias('default_mean')} | {bias('binned_mean')} | "
                   f"{bias('plugin')} |")
    note = ("90% equal-tailed intervals of the top-label ECE (15 uniform bins); coverage ± its Monte "
            "Carlo standard error sqrt(c(1 − c)/R); bias = mean over replications of the posterior "
            "mean (or plug-in) minus the truth, ± its standard error. \"default\": the hierarchical "
            "smooth model averaged with exact calibration (prior odds 0.02); \"rule\": whether the "
            "default's coverage c meets c + 2 sqrt(c(1 − c)/R) >= 0.85 with R >= 200; "
            "\"from 0\": share of default intervals whose lower end is 0.")
    return "\n".join(out) + "\n\n" + note


def timing(scale: float, n: int = 10**6, k: int = 1000, repeat: int = 3) -> None:
    """Smooth top-label posterior (default draws) against the binned one (its 1,333
    draws) at K = 1,000, n = 10^6, alternating, best of ``repeat``; from the
    (n, K) float32 matrix (statistics included) and from the labels and
    confidences alone. Softmax of N(0, scale^2) logits: scale 3 spreads the
    top confidences over [0.1, 0.7], scale 8 piles them next to 1 as trained
    networks do (more atoms: the sub-cells next to 1 are cut in logit)."""
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((n, k), dtype=np.float32) * np.float32(scale)
    logits -= logits.max(axis=1, keepdims=True)
    np.exp(logits, out=logits)
    logits /= logits.sum(axis=1, keepdims=True)
    prob = logits
    pred, conf = prob.argmax(axis=1), prob.max(axis=1).astype(np.float64)
    x = special.logit(conf)
    shift = rng.normal(0.0, 0.4, k)
    correct = rng.uniform(size=n) < special.expit(0.8 * x + shift[pred])
    y = np.where(correct, pred, (pred + 1) % k)
    print(f"K = {k}, n = {n}: top confidence quantiles 5/50/95% "
          f"{np.quantile(conf, [0.05, 0.5, 0.95]).round(3).tolist()}")
    for label, args in (("from the (n, K) matrix", (y, prob)),
                        ("from (y_pred, confidence)", (y, conf))):
        kw = {} if label.startswith("from the") else {"y_pred": pred}
        times = {"binned": [], "smooth": []}
        for _ in range(repeat):
            for model in ("binned", "smooth"):
                t0 = time.perf_counter()
                r = bece.bayesian_top_label_ece(*args, model=model, **kw)
                times[model].append(time.perf_counter() - t0)
        b, s = min(times["binned"]), min(times["smooth"])
        print(f"{label:28s} binned {b:6.2f} s ({r.num_samples if model == 'binned' else 1333} draws)"
              f"  smooth {s:6.2f} s ({r.num_samples} draws, {r.params.n_atoms} atoms, "
              f"{r.params.n_evaluated} grid points)  ratio {s / b:.2f}  target <= 2")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--timing", type=float, nargs="*", default=None, metavar="SCALE",
                    help="time K = 1,000, n = 10^6 (logit scales, default 3 and 8)")
    ap.add_argument("--n", type=int, nargs="*", default=[300, 1000, 3000, 10000])
    ap.add_argument("--maps", nargs="*", default=list(MAPS))
    ap.add_argument("--networks", nargs="*", default=None)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=None,
                    help="append every replication to this CSV as rows finish")
    ap.add_argument("--summarise", type=Path, nargs="*", default=None, metavar="CSV",
                    help="print the tables from CSV files written by --out, and stop")
    add_markdown_option(ap, __file__)
    args = ap.parse_args(argv)
    if args.summarise:
        import csv

        rows = []
        for path in args.summarise:
            with path.open() as fh:
                for rec in csv.DictReader(fh):
                    rows.append({k: (v if k in ("network", "map", "average") else float(v))
                                 for k, v in rec.items()})
        for r in rows:
            r["K"], r["n"] = int(r["K"]), int(r["n"])
        summarise(rows)
        # which runs wrote the replications: kept beside the CSV files, printed above the table
        said = PROVENANCE.read_text().strip() + "\n\n" if PROVENANCE.exists() else ""
        write(args.markdown, said + markdown(rows), __file__, argv)
        return 0
    if args.timing is not None:
        for scale in args.timing or [3.0, 8.0]:
            timing(scale)
        return 0
    if not DATA.is_dir():
        print(f"no data folder {DATA}", file=sys.stderr)
        return 2
    nets = args.networks or ([NETWORKS[10][0], NETWORKS[100][0]] if args.quick
                             else NETWORKS[10] + NETWORKS[100])
    reps = 20 if args.quick else args.reps
    rows: list[dict] = []
    t0 = time.perf_counter()
    for name in nets:
        for kind in args.maps:
            for n in args.n:
                new = run_row(name, kind, n, reps, args.seed)
                rows += new
                if args.out is not None:
                    import csv

                    fresh = not args.out.exists()
                    with args.out.open("a", newline="") as fh:
                        w = csv.DictWriter(fh, fieldnames=list(new[0]))
                        if fresh:
                            w.writeheader()
                        w.writerows(new)
                print(f"# {name} {kind} n={n}: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    summarise(rows)
    write(args.markdown, markdown(rows), __file__, argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
