"""Every public name has a docstring example that runs as a doctest.

The examples run under ``pytest`` itself (``--doctest-modules`` in the
pyproject's ``addopts``, over its ``testpaths``); this file checks that
each name of :data:`tests.test_public_api.PUBLIC` has an "Examples" section
with ``>>>`` lines, that its file is among the paths pytest collects, and
that :class:`doctest.DocTestFinder`, as pytest's doctest collection does,
finds those examples in the module that defines the name.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from .test_public_api import PUBLIC, import_public

ROOT = Path(__file__).resolve().parents[1]

#: a numpydoc "Examples" header: the word, then a line of dashes
EXAMPLES = re.compile(r"^Examples\n-{8,}\n", flags=re.M)
#: the next numpydoc section header after it (a line, then dashes of its length or more)
NEXT_SECTION = re.compile(r"^\w[\w ]*\n-{3,}\n", flags=re.M)

NAMES = [(module, name) for module, names in PUBLIC.items() for name in names]


def examples_section(doc: str | None) -> str:
    """The text of the numpydoc "Examples" section of ``doc`` ('' when none)."""
    text = inspect.cleandoc(doc or "")
    found = EXAMPLES.search(text)
    if found is None:
        return ""
    rest = text[found.end():]
    following = NEXT_SECTION.search(rest)
    return rest if following is None else rest[: following.start()]


def defining_module(obj: Any) -> ModuleType:
    if isinstance(obj, ModuleType):
        return obj
    return importlib.import_module(obj.__module__)


def doctest_name(obj: Any) -> str:
    """The name DocTestFinder gives the test of ``obj``'s own docstring."""
    if isinstance(obj, ModuleType):
        return obj.__name__
    return f"{obj.__module__}.{obj.__qualname__}"


def _pyproject_option(key: str) -> str:
    text = (ROOT / "pyproject.toml").read_text()
    section = text.split("[tool.pytest.ini_options]", 1)[1].split("\n[", 1)[0]
    found = re.search(rf"^{key}\s*=\s*(.+)$", section, flags=re.M)
    assert found, f"[tool.pytest.ini_options] has no {key}"
    return found.group(1)


def collected_roots() -> list[Path]:
    """The paths pytest collects by default, when it collects doctests from them."""
    assert "--doctest-modules" in _pyproject_option("addopts"), "doctests are not collected"
    return [ROOT / p for p in re.findall(r'"([^"]+)"', _pyproject_option("testpaths"))]


def test_examples_section_reads_numpydoc():
    """The section parser itself: found, bounded by the next section, absent."""
    doc = """Summary.

    Examples
    --------
    >>> 1 + 1
    2

    See Also
    --------
    >>> not part of the examples
    """
    assert examples_section(doc).strip() == ">>> 1 + 1\n2"
    assert examples_section("Summary.\n\nNotes\n-----\n>>> 1\n1\n") == ""
    assert examples_section(None) == ""


@pytest.mark.parametrize("module, name", NAMES)
def test_public_name_has_a_running_example(module, name):
    obj = getattr(import_public(module), name)
    section = examples_section(obj.__doc__)
    assert ">>>" in section, f"{module}.{name}: its docstring has no Examples section with >>> lines"
    assert "+SKIP" not in section, f"{module}.{name}: an example is skipped"

    home = defining_module(obj)
    path = Path(inspect.getsourcefile(home) or "").resolve()
    roots = collected_roots()
    assert any(path.is_relative_to(r.resolve()) for r in roots), (
        f"{module}.{name} is defined in {path}, outside pytest's testpaths {roots}: "
        "its example would never run"
    )

    tests = {t.name: t for t in doctest.DocTestFinder().find(home)}
    own = tests.get(doctest_name(obj))
    assert own is not None and own.examples, (
        f"doctest finds no example of {module}.{name} in {home.__name__}"
    )
