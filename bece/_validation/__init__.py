"""The implementation of :mod:`bece.validation` (private: import from ``bece.validation``)."""
