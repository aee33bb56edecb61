"""Is the ODIR strength chosen by cross-validation a tie? (issue 18)

On one network's public CIFAR outputs (``../shared/data``), split at random
into a validation half and a test half (splits 0, 1, 2 as in
``recalibration.py --part heldout``), matrix scaling with lambda = mu = each
candidate: the 3-fold cross-validated NLL on the validation half and the
NLL on the test half, and for each the paired difference to lambda = 10
(mean per image, ± one standard error over the images).

Run: ``python benchmarks/odir_cv_noise.py [--file netcal_lenet-5-cifar-10.npz]``.
"""

from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np
from sklearn.model_selection import KFold

from bece.calibrate import MatrixScaling
from recalibration import load


def per_image_nll(model, x, y):
    return -np.log(model.predict_proba(x)[np.arange(y.size), y])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", default="netcal_lenet-5-cifar-10.npz")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--grid", type=float, nargs="*", default=[0.1, 0.3, 1.0, 3.0, 10.0])
    parser.add_argument("--reference", type=float, default=10.0)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    x, y, kind = load(args.file)
    grid = sorted(set(args.grid) | {args.reference})
    print(f"## Cross-validated against test-half NLL of matrix scaling (ODIR), {args.file}\n")
    print(f"Differences: candidate minus lambda = {args.reference:g}, mean per image ± one "
          "standard error.\n")
    print("| split | lambda = mu | CV NLL (3-fold) | CV difference | test NLL | test difference |")
    print("|---|---|---|---|---|---|")
    for seed in range(args.seeds):
        perm = np.random.default_rng(seed).permutation(y.size)
        val, te = perm[: y.size // 2], perm[y.size // 2:]
        xv, yv = x[val], y[val]
        cv = {g: np.zeros(val.size) for g in grid}
        for train, held in KFold(3, shuffle=True, random_state=0).split(xv):
            for g in grid:
                m = MatrixScaling(input=kind, features="scores", reg_lambda=g,
                                  reg_mu=g).fit(xv[train], yv[train])
                cv[g][held] = per_image_nll(m, xv[held], yv[held])
        test = {g: per_image_nll(MatrixScaling(input=kind, features="scores", reg_lambda=g,
                                               reg_mu=g).fit(xv, yv),
                                 x[te], y[te]) for g in grid}
        for g in grid:
            d, t = cv[g] - cv[args.reference], test[g] - test[args.reference]
            print(f"| {seed} | {g:g} | {cv[g].mean():.5f} | {d.mean():+.5f} ± "
                  f"{d.std() / np.sqrt(d.size):.5f} | {test[g].mean():.5f} | {t.mean():+.5f} ± "
                  f"{t.std() / np.sqrt(t.size):.5f} |")
        sys.stdout.flush()
    print()


if __name__ == "__main__":
    from doc_tables import run_main  # --markdown PATH: the tables for docs/tables/

    run_main(main, __file__)
