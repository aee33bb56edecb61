"""The implementation of :mod:`bece.plots` (private: import from ``bece.plots``)."""
