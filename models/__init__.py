"""NumPyro models of calibration, importable as ``bece.models``.

They depend on numpyro and jax only; ``bece`` imports them lazily.
"""
