"""The version of bece, the same as pyproject.toml's (a test checks it)."""

__all__ = ["VERSION"]

VERSION = "0.1.0"
