"""Validating the fast posteriors: NUTS cross-checks on the same NumPyro
models, simulation-based calibration and the gap to the literal BECE model.

:mod:`~bece.validation.nuts` runs NUTS, :mod:`~bece.validation.agreement`
decides whether two sets of draws agree within Monte Carlo error,
:mod:`~bece.validation.crosscheck` and :mod:`~bece.validation.smooth` check
the binned and smooth closed forms, :mod:`~bece.validation.sbc` and
:mod:`~bece.validation.literal` are the research checks.
"""

from .agreement import CrossCheck
from .literal import literal_gap
from .nuts import NutsRun, run_nuts
from .sbc import SBCResult, closed_form_draws, sbc, stats_from_cells

__all__ = [
    "closed_form_draws",
    "CrossCheck",
    "literal_gap",
    "NutsRun",
    "run_nuts",
    "sbc",
    "SBCResult",
    "stats_from_cells",
]
