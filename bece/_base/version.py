"""The version of bece, the same as pyproject.toml's (a test checks it).

A module of its own, importing nothing: ``import bece`` and the ``bece``
command read it before anything heavy is loaded."""

__all__ = ["VERSION"]

VERSION = "0.1.0"
