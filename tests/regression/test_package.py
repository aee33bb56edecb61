"""bece.regression: a light import, and its code shipped by setuptools."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[2]


# ================================================================ package
def test_import_is_light():
    code = (
        "import sys, bece.regression; print(','.join(m for m in "
        "('sklearn', 'arviz', 'matplotlib', 'jax', 'numpyro', 'pandas') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_pyproject_ships_the_regression_package():
    """bece.regression is a namespace module over the private package bece._regression;
    setuptools' explicit package list must name the package."""
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "bece._regression" in cfg["tool"]["setuptools"]["packages"]
    assert (ROOT / "bece" / "regression.py").is_file()
