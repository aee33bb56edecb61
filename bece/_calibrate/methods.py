"""The recalibration methods by name: what ``bece.recalibrate(method=...)``
and ``bece recalibrate --method`` accept. A table without imports, so that
the command line's parser reads it without loading the calibrators."""

from __future__ import annotations

__all__ = ["RECALIBRATION_METHODS"]

#: ``method`` of :func:`bece.recalibrate` (and ``bece recalibrate --method``):
#: the calibrator class of :mod:`bece.calibrate` each name fits.
RECALIBRATION_METHODS = {
    "temperature": "TemperatureScaling",
    "vector": "VectorScaling",
    "matrix": "MatrixScaling",
    "dirichlet": "DirichletCalibration",
    "platt": "PlattScaling",
    "isotonic": "IsotonicCalibration",
    "beta": "BetaCalibration",
}
