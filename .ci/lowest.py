"""Print the pins of the lowest NumPyro, JAX (with its jaxlib) and ArviZ that
pyproject.toml admits, for CI's lowest-versions leg: `pip install ... $(python .ci/lowest.py)`."""

from __future__ import annotations

import re
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    sys.exit("needs Python >= 3.11 (tomllib)")

PACKAGES = ("numpyro", "jax", "arviz")

deps = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"][
    "dependencies"]
pins = []
for name in PACKAGES:
    spec = next((d for d in deps if re.match(rf"{name}\s*(>=|$)", d)), None)
    found = re.search(r">=\s*([0-9][0-9.]*)", spec or "")
    if found is None:
        sys.exit(f"pyproject.toml gives {name} no lower bound (>=)")
    pins.append(f"{name}=={found.group(1)}")
    if name == "jax":
        pins.append(f"jaxlib=={found.group(1)}")
print(" ".join(pins))
