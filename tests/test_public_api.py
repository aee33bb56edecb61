"""The public names: everything users import keeps importing from where the README shows it."""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import pytest

import bece

ROOT = Path(__file__).resolve().parents[1]

#: The one list of the public API (docs/reference/public_api.txt): module -> names.
API_FILE = ROOT / "docs" / "reference" / "public_api.txt"


def _api_file() -> dict[str, list[str]]:
    api: dict[str, list[str]] = {}
    section = None
    for line in API_FILE.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            section = line.strip("[]")
            api[section] = []
        else:
            assert section is not None, f"{API_FILE}: {line} before any [module]"
            api[section].append(line)
    return api


#: What users call, by the module they import it from; the reference pages
#: render exactly these (tests/test_docs.py).
PUBLIC = _api_file()

#: Namespaces of an optional extra, and the package it needs: checked where it is
#: installed (CI's extras stage), skipped elsewhere.
OPTIONAL = {"bece.torch": "torchmetrics"}


def import_public(module: str):
    if module in OPTIONAL:
        pytest.importorskip(OPTIONAL[module])
    return importlib.import_module(module)


def installed(module: str) -> bool:
    return module not in OPTIONAL or importlib.util.find_spec(OPTIONAL[module]) is not None


def test_the_api_file_is_the_public_packages_all():
    for module, names in PUBLIC.items():
        assert len(set(names)) == len(names), f"{module}: a name listed twice"
        if installed(module):
            assert set(names) == set(importlib.import_module(module).__all__), module
    assert sum(len(names) for names in PUBLIC.values()) <= 200


def test_the_api_file_names_the_readme_names():
    """The names the README shows, in the modules it shows them from."""
    for module, names in {
        "bece": ["bayesian_ece", "calibration_test", "compare", "cross_check", "SmoothModel"],
        "bece.regression": ["pit", "bayesian_calibration_error", "pit_calibration_test"],
        "bece.io": ["read_predictions", "read_statistics"],
    }.items():
        assert set(names) <= set(PUBLIC[module]), module


def test_all_is_exactly_the_listed_top_level_names():
    assert sorted(bece.__all__) == sorted(PUBLIC["bece"])


@pytest.mark.parametrize("module, name", [(m, n) for m, names in PUBLIC.items() for n in names])
def test_public_name_imports_from_its_module(module, name):
    mod = import_public(module)
    assert hasattr(mod, name), f"{module}.{name} is missing"
    if module != "bece" or name != "regression":
        assert name in mod.__all__, f"{name} is not in {module}.__all__"


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_every_name_in_all_exists(module):
    mod = import_public(module)
    missing = [n for n in mod.__all__ if not hasattr(mod, n)]
    assert not missing


def _readme_code() -> str:
    text = (ROOT / "README.md").read_text()
    return "\n".join(re.findall(r"```python\n(.*?)```", text, flags=re.S))


def test_readme_imports_are_listed_and_import():
    """Each `from bece... import ...` of the README's code is in PUBLIC and runs."""
    code = _readme_code()
    statements = re.findall(r"^from (bece[\w.]*) import \(?([\w ,\n]+?)\)?$", code, flags=re.M)
    assert statements, "no import statement found in the README's code blocks"
    for module, names in statements:
        mod = importlib.import_module(module)
        for name in (n.strip() for n in names.replace("\n", ",").split(",")):
            if not name:
                continue
            assert hasattr(mod, name), f"README: from {module} import {name} fails"
            assert name in PUBLIC.get(module, []), f"README shows {module}.{name}: list it in PUBLIC"


def test_readme_dotted_names_resolve():
    """Each `bece.x.y` the README writes resolves by attribute access after importing."""
    text = (ROOT / "README.md").read_text()
    names = sorted(set(re.findall(r"\bbece(?:\.[A-Za-z_]\w*)+", text)))
    assert names
    for dotted in names:
        if any(dotted.split(".")[:2] == m.split(".") and not installed(m) for m in OPTIONAL):
            continue  # an optional extra's namespace, where it is absent
        parts = dotted.split(".")
        # import the longest module prefix, then walk attributes
        for i in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:i]))
            except ImportError:
                continue
            break
        for attr in parts[i:]:
            assert hasattr(obj, attr), f"README names {dotted}, which does not resolve"
            obj = getattr(obj, attr)

