"""Validating the fast posteriors: NUTS cross-checks on the same NumPyro
models, simulation-based calibration and the gap to the literal BECE model.

:mod:`~bece._validation.nuts` runs NUTS, :mod:`~bece._validation.agreement`
decides whether two sets of draws agree within Monte Carlo error,
:mod:`~bece._validation.crosscheck` and :mod:`~bece._validation.smooth` check
the binned and smooth closed forms, :mod:`~bece._validation.sbc` and
:mod:`~bece._validation.literal` are the research checks.
"""

from ._validation.literal import literal_gap
from ._validation.sbc import SBCResult, sbc

__all__ = [
    "SBCResult",
    "literal_gap",
    "sbc",
]
