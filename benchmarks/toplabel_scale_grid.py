"""The top-label fast path's quadrature of the label scales, judged against one NUTS run.

The top-label default's fast path integrates the label scales (kappa,
omega) over a grid, one Laplace fit per point, each point standing for the
prior mass of its cell, and corrects every fit by importance weights. The
weights correct each Gaussian to the exact conditional posterior at its
grid point; they cannot correct the quadrature of the scales themselves.
This study measures that error where it showed, on DenseNet-BC-100's
CIFAR-100 test outputs (10^4 rows, K = 100, the shared data):

1. one ``bece.cross_check(y, prob, top_label=True, seed=0)`` gives NUTS's
   5%, 50% and 95% quantiles of every compared quantity (the top-label ECE,
   each label's ECE, each label's curve at 5 confidences: 1,803 quantities)
   and the agreement rule's tolerance of each;
2. the fast path is recomputed under each grid, with ``--draws``
   importance-weighted draws (the cross-check's 20,000) from each of
   ``--seeds`` seeds, and judged by those tolerances: the quantities beyond
   tolerance and the worst ratio (the median over seeds), and the 5%
   quantiles of the curves that disagreed under the unrefined grid, minus
   NUTS's.

``--paired R``: the replications of the semi-synthetic top-label study
(benchmarks/toplabel_smooth_study.py, whose table was made before the
refinement) on DenseNet-BC-100's outputs with the per-label map, n = 1,000
and 10^4, R of each, the default's 90% interval computed with and without
the refinement on the same data and draws' seeds: how far its ends move
(in interval widths) and how coverage changes (table ``-paired``).

Grids: 16 values of each scale (a ratio of 1.58), unrefined (the fast
path before the refinement); today's default (16, with the cells of the
points holding at least 0.2% of the posterior cut in three along each
scale, ``bece._smooth.toplabel_fit.REFINE_WEIGHT``); 32 and 48 values of
each, unrefined. Fit times are ratios to the 16-value fit measured in the
same run (the machine is shared).

Run:  python benchmarks/toplabel_scale_grid.py [--seeds 3] [--draws 20000] [--reuse-nuts]
          [--markdown PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy import special

sys.path.insert(0, str(Path(__file__).resolve().parent))

from crosscheck_agreement import network  # noqa: E402
from doc_tables import add_markdown_option, write  # noqa: E402

NETWORK = "netcal_densenet-bc-100-cifar-100"
RESULTS = Path(__file__).resolve().parent / "results"
#: the NUTS run's comparison table and its summary, kept for --reuse-nuts
NUTS_TABLE = RESULTS / "toplabel_scale_grid-nuts.csv"
NUTS_SUMMARY = RESULTS / "toplabel_scale_grid-nuts.json"
#: (label, grid values per scale, refined)
GRIDS = (("16, unrefined", 16, False), ("16, heaviest cells refined (default)", 16, True),
         ("32, unrefined", 32, False), ("48, unrefined", 48, False))


def fast_quantities(atoms, post, num_samples: int, seed: int, probe_x, probe_label) -> dict:
    """The cross-check's quantities from the fast path's importance-corrected draws."""
    from bece._smooth.basis import logit_confidence
    from bece._smooth.toplabel import label_posterior_draws

    e, post = label_posterior_draws(atoms, post, num_samples, np.random.default_rng([seed, 1]), False)
    curve = special.expit(post.logits(logit_confidence(probe_x), probe_label, None, e["beta"],
                                      e["label_beta"]))
    return {"ece": e["label"][:, None], "label_ece": e["label_ece"], "curve": curve,
            "pareto_k": post.pareto_k, "is_ess": post.is_ess}


def paired(reps: int, sizes: tuple[int, ...] = (1000, 10_000), kind: str = "label") -> str:
    """The ``--paired`` table (module docstring)."""
    from bece._base.laplace import single_threaded_blas
    from bece._smooth import toplabel_fit
    from toplabel_smooth_study import LEVEL, MAP_NAMES, averaged, replications, smooth_both

    default = toplabel_fit.REFINE_WEIGHT
    lines = ["| n | average | R | cover, unrefined | cover, refined (default) | reps whose verdict "
             "changed | bias, unrefined | bias, refined | ends moved, mean (in widths) | ends moved, "
             "largest | width ratio, median | time ratio, median |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for n in sizes:
        out: dict[str, list] = {a: [] for a in ("label", "sample")}
        for r, y, p, lab, tr, _ in replications(NETWORK, kind, n, reps, seed=1):  # the study's seed
            intervals, means, seconds = [], [], []
            for weight in (np.inf, default):
                toplabel_fit.REFINE_WEIGHT = weight
                t0 = time.perf_counter()
                with single_threaded_blas():
                    sm, post = smooth_both(y, p, lab, r)
                seconds.append(time.perf_counter() - t0)
                av, _ = averaged(sm, post, r)
                intervals.append({a: np.quantile(av[a], [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
                                  for a in out})
                means.append({a: float(av[a].mean()) - tr[a] for a in out})
            toplabel_fit.REFINE_WEIGHT = default
            for a in out:
                (lo0, hi0), (lo1, hi1) = intervals[0][a], intervals[1][a]
                out[a].append((lo0 <= tr[a] <= hi0, lo1 <= tr[a] <= hi1,
                               max(abs(lo1 - lo0), abs(hi1 - hi0)) / (hi0 - lo0),
                               (hi1 - lo1) / (hi0 - lo0), seconds[1] / seconds[0],
                               means[0][a], means[1][a]))
        for a, rows in out.items():
            c0, c1, moved, width, ratio, b0, b1 = (np.array(v, dtype=np.float64) for v in zip(*rows))
            se = np.sqrt(reps)
            lines.append(f"| {n:,} | {a} | {reps} | {c0.mean():.2f} | {c1.mean():.2f} | "
                         f"{int((c0 != c1).sum())} | {b0.mean():+.4f} ± {b0.std() / se:.4f} | "
                         f"{b1.mean():+.4f} ± {b1.std() / se:.4f} | {moved.mean():.3f} | "
                         f"{moved.max():.3f} | {np.median(width):.3f} | {np.median(ratio):.2f} |")
        print(lines[-2], lines[-1], sep="\n", flush=True)
    return "\n".join([
        f"{NETWORK} (K = 100), map: {MAP_NAMES[kind]}; the default's 90% interval (1,000 draws, "
        "averaged with exact calibration, as the top-label study computes it) on each "
        "replication, with the label scales' grid unrefined and refined:", "", *lines, "",
        "Bias: the posterior mean minus the truth, averaged over the replications (± its "
        "standard error). Ends moved: the larger of the two ends' shifts over the unrefined "
        "interval's width. Time: the whole smooth posterior (fit and draws), refined over "
        "unrefined."])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=3, help="fast-path seeds per grid (default 3)")
    ap.add_argument("--draws", type=int, default=20_000, help="draws per fast path (default 20,000)")
    ap.add_argument("--reuse-nuts", action="store_true",
                    help=f"judge against the NUTS run saved in {Path(NUTS_TABLE).name} by an earlier run")
    ap.add_argument("--paired", type=int, default=None, metavar="R",
                    help="the paired replications instead (table -paired)")
    add_markdown_option(ap, __file__)
    args = ap.parse_args()
    if args.paired is not None:
        text = paired(args.paired)
        print(text)
        write(str(Path(args.markdown).with_name(Path(args.markdown).stem + "-paired.md"))
              if args.markdown else "", text, __file__)
        return

    import bece
    from bece._base.laplace import single_threaded_blas
    from bece._smooth import toplabel_fit
    from bece._smooth.toplabel import prepare_label_atoms

    y, prob = network(NETWORK)
    if args.reuse_nuts and NUTS_TABLE.exists():
        import pandas as pd

        table = pd.read_csv(NUTS_TABLE)
        summary = json.loads(NUTS_SUMMARY.read_text())
    else:
        from bece._base.files import atomic_output

        load = os.getloadavg()[0]
        start = time.perf_counter()
        cc = bece.cross_check(y, prob, top_label=True, seed=0, progress_bar=False)
        table = cc.table
        summary = {
            "agree": bool(cc.agree), "max_ratio": float(cc.max_ratio), "rhat": float(cc.rhat_max),
            "ess": float(min(cc.ess_bulk_min, cc.ess_tail_min)),
            "seconds": time.perf_counter() - start, "load": load}
        NUTS_TABLE.parent.mkdir(parents=True, exist_ok=True)
        with atomic_output(NUTS_TABLE) as tmp:  # renamed when whole
            table.to_csv(tmp, index=False)
        with atomic_output(NUTS_SUMMARY) as tmp:
            tmp.write_text(json.dumps(summary))
    atoms, _, _ = prepare_label_atoms(y, prob, None, None, "uniform", "auto")  # the check's
    curve_points = 5
    probe = np.quantile(atoms.p, np.linspace(0, 1, curve_points + 2)[1:-1])
    probe_x = np.tile(probe, atoms.n_labels)
    probe_label = np.repeat(np.arange(atoms.n_labels), curve_points)

    defaults = (toplabel_fit.N_KAPPA, toplabel_fit.N_OMEGA, toplabel_fit.REFINE_WEIGHT)
    results = {}
    for name, size, refined in GRIDS:
        toplabel_fit.N_KAPPA = toplabel_fit.N_OMEGA = size
        toplabel_fit.REFINE_WEIGHT = defaults[2] if refined else np.inf
        with single_threaded_blas():
            t0 = time.perf_counter()
            post = toplabel_fit.fit_top_label_smooth(atoms)
            fit_seconds = time.perf_counter() - t0
            runs = [fast_quantities(atoms, post, args.draws, seed, probe_x, probe_label)
                    for seed in range(args.seeds)]
        results[name] = (post, fit_seconds, runs)
        print(f"{name}: fit {fit_seconds:.1f} s, {post.n_evaluated} Newton solves", flush=True)
    toplabel_fit.N_KAPPA, toplabel_fit.N_OMEGA, toplabel_fit.REFINE_WEIGHT = defaults

    # the quantities of draws (not the probability of exact calibration), in table order
    judged = table[table.variable.isin(["ece", "label_ece", "curve"])].reset_index(drop=True)

    def judge(run: dict) -> np.ndarray:
        return np.array([abs(row.nuts - np.quantile(run[row.variable][:, max(row.bin, 0)],
                                                      row.quantile)) / row.tolerance
                         for row in judged.itertuples()])

    ratios = {name: [judge(r) for r in runs] for name, (_, _, runs) in results.items()}
    base_name = GRIDS[0][0]
    curve_q05 = ((judged.variable == "curve") & (judged["quantile"] == 0.05)).to_numpy()
    flagged = sorted({int(judged.bin[i]) for r in ratios[base_name]
                      for i in np.flatnonzero(curve_q05 & (r > 1))})
    nuts_q05 = dict(zip(judged.bin[curve_q05], judged.nuts[curve_q05]))
    lines = [f"| grid (values per label scale) | Newton solves | fit time / 16 unrefined | Pareto k "
             f"| IS ESS (of {args.draws:,}) | beyond tolerance (median) | worst ratio (median) | "
             + " | ".join(f"curve[{b}] q0.05 − NUTS" for b in flagged) + " |",
             "|---|---|---|---|---|---|---|" + "---|" * len(flagged)]
    base_fit = results[base_name][1]
    for name, _, _ in GRIDS:
        post, fit_seconds, runs = results[name]
        diffs = []
        for b in flagged:
            d = [np.quantile(r["curve"][:, b], 0.05) - nuts_q05[b] for r in runs]
            diffs.append(f"{np.mean(d):+.4f} ({min(d):+.4f} to {max(d):+.4f})")
        lines.append(
            f"| {name} | {post.n_evaluated:,} | {fit_seconds / base_fit:.2f} | "
            f"{np.median([r['pareto_k'] for r in runs]):.2f} | "
            f"{np.median([r['is_ess'] for r in runs]):,.0f} | "
            f"{np.median([int((x > 1).sum()) for x in ratios[name]]):.0f} of {len(judged):,} | "
            f"{np.median([x.max() for x in ratios[name]]):.2f} | " + " | ".join(diffs) + " |")
    text = "\n".join([
        f"NUTS: one `bece.cross_check(y, prob, top_label=True, seed=0)` on {NETWORK} "
        f"(10^4 rows, K = 100): {'agree' if summary['agree'] else 'do not agree'} with today's "
        f"default, worst ratio {summary['max_ratio']:.2f}, R-hat {summary['rhat']:.3f}, smallest "
        f"ESS {summary['ess']:.0f}, {summary['seconds']:.0f} s at load {summary['load']:.1f}.",
        "",
        *lines,
        "",
        f"Each grid's fast path: {args.seeds} seeds of {args.draws:,} importance-weighted draws, "
        "judged by the rule's tolerances of the NUTS run (quantities: the top-label ECE, 100 label "
        "ECEs and 500 curve points, 3 quantiles each). The curves: the 5% quantiles at confidence "
        f"{probe[-1]:.5f} (the last probe) of the labels whose quantile the unrefined grid put "
        "beyond tolerance in some seed; their mean over seeds (range) minus NUTS's, whose own "
        "Monte Carlo error is in the tolerance.",
    ])
    print(text)
    write(args.markdown, text, __file__)



if __name__ == "__main__":
    main()
