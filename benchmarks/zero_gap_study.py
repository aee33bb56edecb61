"""Study of the per-bin spike at zero gap (``zero_gap_prior``) of the default ECE posterior.

Run (repository root):

    python benchmarks/zero_gap_study.py --problems step --n 10000 --reps 200 --out A.csv
    python benchmarks/zero_gap_study.py --summarise A.csv B.csv ...   # tables from --out files

The table also goes to docs/tables/zero_gap_study.md (``--markdown PATH``).

The problems and their true binned ECE are those of
``benchmarks/validation_study.py`` (15 uniform bins). Each replication draws
one data set and fits the smooth model once (``bece.smooth.smooth_ece`` with
``prior_odds=0, zero_gap_prior=0``, 1,000 draws); from that one fit every
prior probability ``omega`` in ``--omegas`` gets its own posterior, exactly
as ``bece.bayesian_ece`` builds its default: the draws averaged with a zero
gap per bin (``bece._smooth.zero_gaps.average_bins_with_zero_gap``, omega),
then with exact calibration (``average_with_calibrated``, prior odds 0.02).
``omega = 0`` is the default (no spike). So the rows of different
omega are paired: same data, same curve draws.

Printed per (problem, n, omega): coverage of the 90% equal-tailed interval
(± its Monte Carlo standard error sqrt(c(1 - c)/R)), mean width, bias of
the posterior mean (± its standard error) and of the plug-in, and whether
the goal holds (n >= 300 and true ECE >= 0.01: coverage >= 0.85 - 2 MC s.e.
of 0.85, and the posterior mean no more biased than the plug-in where the
plug-in's bias is resolvable, >= 3 s.e.).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from bece._metrics.binned import plugin_ece
from bece._smooth.average import DEFAULT_PRIOR_ODDS, average_with_calibrated
from bece._smooth.posterior import prepare_atoms, smooth_ece
from bece._smooth.zero_gaps import average_bins_with_zero_gap

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doc_tables import add_markdown_option, write  # noqa: E402
from validation_study import N_BINS, PROBLEMS  # noqa: E402

LEVEL = 0.9


def run(problems, ns, reps, omegas, seed=0, num_samples=1000, progress=True, out=None, gates=(None,)):
    """Every replication as a DataFrame; with ``out``, also written there every
    20 replications (a run stopped early keeps what it did)."""
    import pandas as pd

    rows = []
    for name in problems:
        i, prob = next((i, p) for i, p in enumerate(PROBLEMS) if p.name == name)
        truth = prob.true_ece()
        for n in ns:
            t0 = time.perf_counter()
            for r in range(reps):
                rng = np.random.default_rng([seed, i, n, r, 15])
                y, p = prob.sample(n, rng)
                alone = smooth_ece(y, p, n_bins=N_BINS, num_samples=num_samples, seed=rng,
                                   prior_odds=0.0, zero_gap_prior=0.0)
                atoms = prepare_atoms(y, p, None, N_BINS, "uniform", "auto")[0]
                plug = plugin_ece(alone.stats)
                for om in omegas:
                    for gate in (gates if om else (None,)):
                        sub = np.random.default_rng([seed, i, n, r, 16])
                        res = average_with_calibrated(
                            average_bins_with_zero_gap(alone, atoms, om, sub, tau_gate=gate),
                            DEFAULT_PRIOR_ODDS, sub)
                        lo, hi = np.quantile(res.draws, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
                        rows.append({"problem": name, "n": n, "seed": seed, "rep": r, "omega": om,
                                     "gate": np.nan if gate is None else gate, "truth": truth,
                                     "lo": lo, "hi": hi, "mean": res.mean, "plugin": plug})
                if out and (r + 1) % 20 == 0:
                    pd.DataFrame(rows).to_csv(out, index=False)
            if progress:
                print(f"  {name} n={n}: {reps} reps in {time.perf_counter() - t0:.0f} s",
                      file=sys.stderr, flush=True)
    return pd.DataFrame(rows)


def summarise(records):
    import pandas as pd

    out = []
    if "seed" not in records:
        records = records.assign(seed=0)
    if "gate" not in records:  # runs before the gate: ungated
        records = records.assign(gate=np.nan)
    records = records.assign(gate=records["gate"].fillna(-1.0))  # -1: ungated (groupby drops NaN)
    # runs that repeat a replication (omega = 0 in several files: the same seeds, the same fit)
    records = records.drop_duplicates(subset=["problem", "n", "seed", "rep", "omega", "gate"])
    for (prob, n, seed, om, gate), g in records.groupby(["problem", "n", "seed", "omega", "gate"],
                                                        sort=False):
        truth = float(g["truth"].iloc[0])
        R = len(g)
        cov = float(((g["lo"] <= truth) & (truth <= g["hi"])).mean())
        err, perr = g["mean"] - truth, g["plugin"] - truth
        row = {"problem": prob, "n": n, "seed": seed, "omega": om, "gate": gate, "reps": R,
               "truth": truth,
               "cov": cov,
               "cov_se": np.sqrt(cov * (1 - cov) / R), "width": float((g["hi"] - g["lo"]).mean()),
               "from0": float((g["lo"] == 0).mean()),
               "bias": err.mean(), "bias_se": err.std(ddof=1) / np.sqrt(R),
               "bias_plugin": perr.mean(), "bias_plugin_se": perr.std(ddof=1) / np.sqrt(R)}
        applies = n >= 300 and (truth == 0 or truth >= 0.01)
        resolvable = abs(row["bias_plugin"]) >= 3 * row["bias_plugin_se"]
        if truth == 0:
            met = row["from0"] >= 0.85 - 2 * np.sqrt(0.85 * 0.15 / R)
        else:
            met = (cov >= 0.85 - 2 * np.sqrt(0.85 * 0.15 / R)
                   and (not resolvable or abs(row["bias"]) <= abs(row["bias_plugin"])))
        row["goal"] = ("met" if met else "**not met**") if applies else "n/a"
        out.append(row)
    order = {p.name: i for i, p in enumerate(PROBLEMS)}
    table = pd.DataFrame(out)
    return table.sort_values(["n", "seed", "problem", "gate", "omega"],
                             key=lambda c: c.map(order) if c.name == "problem" else c,
                             kind="stable").reset_index(drop=True)


def markdown(summary) -> str:
    lines = ["| problem | n | seed | omega | gate | R | true ECE | coverage | interval from 0 | width "
             "| bias (± MC se) | bias plug-in | goal |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for _, r in summary.iterrows():
        gate = "-" if r["omega"] == 0 else ("none" if r["gate"] < 0 else f"{r['gate']:g}")
        lines.append(f"| {r['problem']} | {r['n']:,} | {r['seed']} | {r['omega']:g} | {gate} | {r['reps']} "
                     f"| {r['truth']:.4f} | {r['cov']:.3f} ± {r['cov_se']:.3f} | {r['from0']:.2f} "
                     f"| {r['width']:.4f} | {r['bias']:+.4f} ± {r['bias_se']:.4f} "
                     f"| {r['bias_plugin']:+.4f} | {r['goal']} |")
    lines += ["", "90% equal-tailed intervals of the default posterior (smooth model, a zero gap "
              "per bin with prior probability omega, averaged with exact calibration at prior "
              "odds 0.02); omega = 0 is the default (no spike); rows of one (problem, n, seed) "
              "share data sets and curve draws; coverage ± its Monte Carlo standard error "
              "sqrt(c(1 - c)/R); bias = mean posterior mean (or plug-in) minus the truth."]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--problems", nargs="+", default=[p.name for p in PROBLEMS])
    ap.add_argument("--n", type=int, nargs="+", default=[300, 10_000])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--omegas", type=float, nargs="+", default=[0.0, 0.05])
    ap.add_argument("--gates", nargs="+", default=["none"],
                    help="tau_0 of the spike's gate (omega x P(tau > tau_0)), or 'none' (ungated)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="write every replication to this CSV")
    ap.add_argument("--summarise", nargs="+", default=None, metavar="CSV",
                    help="print the table of CSVs written by --out instead of running")
    add_markdown_option(ap, __file__)
    args = ap.parse_args(argv)
    import pandas as pd

    if args.summarise:
        records = pd.concat([pd.read_csv(f) for f in args.summarise], ignore_index=True)
    else:
        gates = tuple(None if g == "none" else float(g) for g in args.gates)
        records = run(args.problems, args.n, args.reps, args.omegas, seed=args.seed, out=args.out,
                      gates=gates)
        if args.out:
            records.to_csv(args.out, index=False)
    body = markdown(summarise(records))
    print(body)
    write(args.markdown, body, __file__, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
