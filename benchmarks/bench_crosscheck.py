"""Benchmark of bece.cross_check(model="conjugate"): 4 chains x (1000 warm-up + 1000 draws), M = 15.

Run:  python benchmarks/bench_crosscheck.py

Each case runs in a fresh Python process (cold: imports and JAX compilation
included, as a user meets them). The baseline, measured in the same run, is
NumPyro's NUTS with the same settings on a 31-dimensional standard Normal —
the floor that compilation and the sampler loop set on this machine. The
collapsed model's cost per leapfrog step does not depend on n: compare the
n = 10^3 and 10^7 rows (the column "import + data" is the part spent
importing bece and simulating the data, 1.5 s more at n = 10^7). The load
average before and after the run says how busy the shared machine was;
compare ratios, not seconds, between runs.
"""

from __future__ import annotations

import os
import subprocess
import sys

CASE = """
import time, numpy as np
t0 = time.perf_counter()
{body}
print('SECONDS', time.perf_counter() - t0)
"""

BASELINE = """
import jax, numpyro, numpyro.distributions as dist
from numpyro.infer import MCMC, NUTS
def model():
    numpyro.sample('x', dist.Normal(0, 1).expand([31]))
mcmc = MCMC(NUTS(model), num_warmup=1000, num_samples=1000, num_chains=4,
            chain_method='vectorized', progress_bar=False)
mcmc.run(jax.random.PRNGKey(0))
"""

CROSS = """
import bece
rng = np.random.default_rng(0)
n = {n}
p = rng.beta(5, 1, size=n)
y = (rng.uniform(size=n) < p ** 1.2).astype(np.int64)
t1 = time.perf_counter()
cc = bece.cross_check(y, p, n_bins=15, model='conjugate', progress_bar=False)
print('STATS', t1 - t0, 'AGREE', cc.agree)
"""


def run(body: str) -> tuple[float, float | None]:
    """(seconds, seconds before cross_check started or None) of one fresh process."""
    out = subprocess.run([sys.executable, "-c", CASE.format(body=body)], capture_output=True,
                         text=True, check=True).stdout
    seconds = float(out.split("SECONDS")[1].split()[0])
    if "AGREE" in out and "True" not in out.split("AGREE")[1].split()[0]:
        raise RuntimeError(f"cross_check disagreed:\n{out}")
    before = float(out.split("STATS")[1].split()[0]) if "STATS" in out else None
    return seconds, before


def main() -> None:
    from bench_core import machine

    load_before = os.getloadavg()[0]
    rows = []
    base, _ = run(BASELINE)
    rows.append(("NUTS on a 31-dim Normal (baseline)", base, None, 1.0))
    for n in (10**3, 10**7):
        t, before = run(CROSS.format(n=n))
        rows.append((f"cross_check, n = 10^{len(str(n)) - 1}", t, before, t / base))
    print(f"machine: {machine()}; load average {load_before:.2f} before, "
          f"{os.getloadavg()[0]:.2f} after")
    print()
    print("| case | seconds (cold) | of which import + data | ratio to baseline | target |")
    print("|---|---:|---:|---:|---|")
    for name, t, before, r in rows:
        target = "< 15 s" if name.startswith("cross") else ""
        part = "" if before is None else f"{before:.1f}"
        print(f"| {name} | {t:.1f} | {part} | {r:.2f} | {target} |")


if __name__ == "__main__":
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    from doc_tables import run_main  # --markdown PATH: the tables for docs/tables/

    run_main(main, __file__)
