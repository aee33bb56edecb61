"""Execute notebooks/*.ipynb and store the executed copies in docs/notebooks/.

The notebooks of notebooks/ are kept without outputs (the tests execute them);
executing all four at documentation build would take minutes. The docs render
these stored copies instead, without executing them again.

    python docs/execute_notebooks.py            # all notebooks, small sizes
    python docs/execute_notebooks.py --full     # the notebooks' full sizes

Run it after changing a notebook (scripts/make_*notebook.py) and commit the
copies; tests/test_docs.py checks that every copy's cells are the sources of
notebooks/ (so a stale copy fails the tests). Small sizes are those of the
tests (BECE_NOTEBOOK_SMALL=1), and each notebook says which it ran.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "notebooks"
TARGET = ROOT / "docs" / "notebooks"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="notebook file names (default: all)")
    ap.add_argument("--full", action="store_true", help="the notebooks' full sizes")
    args = ap.parse_args(argv)
    if not args.full:
        os.environ["BECE_NOTEBOOK_SMALL"] = "1"
    os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    TARGET.mkdir(exist_ok=True)
    paths = [SOURCE / n for n in args.names] if args.names else sorted(SOURCE.glob("*.ipynb"))
    for path in paths:
        t0 = time.perf_counter()
        nb = nbformat.read(path, as_version=4)
        NotebookClient(nb, timeout=1800, kernel_name="python3",
                       resources={"metadata": {"path": str(SOURCE)}}).execute()
        for cell in nb.cells:  # no execution timestamps: re-running changes only outputs
            cell.get("metadata", {}).pop("execution", None)
        nbformat.write(nb, TARGET / path.name)
        print(f"{path.name}: {time.perf_counter() - t0:.0f} s -> {TARGET.relative_to(ROOT) / path.name}",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
