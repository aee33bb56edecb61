"""``python -m bece``: the ``bece`` command."""

import sys

from ._cli import main

if __name__ == "__main__":  # not when imported (pytest's --doctest-modules imports every module)
    sys.exit(main())
