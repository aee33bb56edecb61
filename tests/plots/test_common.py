"""bece._plots.common: matplotlib is imported when a figure is drawn, not with bece.plots."""

from __future__ import annotations

import subprocess
import sys


def test_importing_bece_plots_does_not_import_matplotlib():
    code = "import sys, bece.plots, bece._binned.compare; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
