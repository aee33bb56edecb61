"""The implementation of :mod:`bece.smooth` (private: import from ``bece.smooth``)."""
