"""Validating the fast posteriors: NUTS cross-checks on the same NumPyro
models, simulation-based calibration and the gap to the literal BECE model.

:mod:`~bece.validation.nuts` runs NUTS, :mod:`~bece.validation.agreement`
decides whether two sets of draws agree within Monte Carlo error,
:mod:`~bece.validation.crosscheck` and :mod:`~bece.validation.smooth` check
the binned and smooth closed forms, :mod:`~bece.validation.sbc` and
:mod:`~bece.validation.literal` are the research checks.
"""

from .literal import literal_gap
from .sbc import SBCResult, sbc

__all__ = [
    "SBCResult",
    "literal_gap",
    "sbc",
]
