"""The implementation of :mod:`bece.regression` (private: import from ``bece.regression``)."""
