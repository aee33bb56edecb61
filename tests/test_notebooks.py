"""Every notebook runs: executed on small sizes (BECE_NOTEBOOK_SMALL=1)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes(path, monkeypatch, tmp_path):
    monkeypatch.setenv("BECE_NOTEBOOK_SMALL", "1")
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    nb = nbformat.read(path, as_version=4)
    resources = {"metadata": {"path": str(tmp_path)}}
    NotebookClient(nb, timeout=900, kernel_name="python3", resources=resources).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    errors = [o for o in outputs if o.output_type == "error"]
    assert not errors
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert images, "the notebook should draw its figures"


def test_there_are_notebooks():
    assert any(p.name == "model_checking.ipynb" for p in NOTEBOOKS)
