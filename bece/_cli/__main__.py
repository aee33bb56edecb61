"""``python -m bece._cli``: the ``bece`` command."""

import sys

from . import main

if __name__ == "__main__":  # not when imported (pytest's --doctest-modules imports every module)
    sys.exit(main())
