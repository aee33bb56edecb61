"""ArviZ, imported when first needed, and quiet about notes that concern MCMC."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = [
    "load_arviz",
    "quiet_arviz",
]


def load_arviz() -> Any:  # the arviz module
    with warnings.catch_warnings():
        # arviz 0.2x announces its 1.0 refactor on import; it is not ours to show
        warnings.simplefilter("ignore", FutureWarning)
        import arviz

    return arviz


@contextmanager
def quiet_arviz() -> Iterator[None]:
    """Silence ArviZ's notes that one chain is too few for R-hat and that an
    array holds NaN.

    Our draws are independent, stored as one chain; the note is about MCMC.
    NaN is an empty bin's accuracy when both its cells underflow (handled by
    the callers).
    """
    # arviz 0.2x logs through its own ``arviz._log`` (a Logger outside the
    # logging registry) as well as the registered "arviz" logger
    loggers = [logging.getLogger("arviz")]
    own = getattr(load_arviz(), "_log", None)
    if isinstance(own, logging.Logger):
        loggers.append(own)
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)
