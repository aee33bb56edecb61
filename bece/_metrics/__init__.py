"""The implementation of :mod:`bece.metrics` (private: import from ``bece.metrics``)."""
