"""Where predictions become statistics.

Predictions enter here: :mod:`~bece._stats.inputs` checks them,
:mod:`~bece._stats.binning` assigns bins, and one pass
(:mod:`~bece._stats.fused`; :mod:`~bece._stats.device` for JAX arrays on their
device, :mod:`~bece._stats.distributed` for Dask) reduces them to the additive
:class:`CalibrationStats` that every metric and posterior reads.
:mod:`~bece._stats.columns` holds the column conventions of tables.
"""

from .binning import DEFAULT_N_BINS, Binning, make_binning
from .calibration_stats import CalibrationStats
from .paired_stats import PairedStats

__all__ = [
    "Binning",
    "CalibrationStats",
    "DEFAULT_N_BINS",
    "PairedStats",
    "make_binning",
]
