"""The implementation of :mod:`bece.io` (private: import from ``bece.io``)."""
