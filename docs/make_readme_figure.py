"""Run the README's example and keep its figure as docs/_static/reliability.png.

The README shows the figure its own example draws: this script executes the
README's first Python block (in a temporary folder) and copies the
``reliability.png`` it writes. Run it after changing the example, and commit
the picture.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

import matplotlib

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    matplotlib.use("Agg")
    readme = (ROOT / "README.md").read_text()
    code = re.findall(r"```python\n(.*?)```", readme, flags=re.S)[0]
    here = Path.cwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            exec(compile(code, "README.md", "exec"), {"__name__": "__main__"})
            shutil.copyfile("reliability.png", ROOT / "docs" / "_static" / "reliability.png")
        finally:
            os.chdir(here)
    print("docs/_static/reliability.png written")


if __name__ == "__main__":
    main()
