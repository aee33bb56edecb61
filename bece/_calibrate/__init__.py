"""The implementation of :mod:`bece.calibrate` (private: import from ``bece.calibrate``)."""
