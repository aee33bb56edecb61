"""The package's shape: a small public surface over private packages, layered by the data flow.

What users import lives in a handful of public modules: ``bece`` itself,
the namespaces ``bece.smooth``, ``bece.calibrate``, ``bece.metrics``,
``bece.io``, ``bece.plots``, ``bece.regression``, ``bece.sklearn``, ``bece.torch``
(optional: PyTorch) and ``bece.validation``
(modules that only re-export; docs/reference/public_api.txt lists their
names), and ``bece.models``, the NumPyro models. The code lives in private
packages (a leading underscore), ordered by the stages of the data flow,
lowest first. A module may import its own package and any package of a lower
layer; never a package of its own layer or above:

======  ==============================  ========================================
layer   packages                        what they do
======  ==============================  ========================================
0       _base                           helpers every stage uses
1       models                          the NumPyro models (``bece.models``)
2       _stats                          predictions in, statistics out
3       _io, _metrics                   files in; plug-in metrics of statistics
4       _results                        result types and their summaries
5       _binned, _smooth, _calibrate,   the models' posteriors, recalibrators,
        _regression                     regression calibration
6       _validation                     NUTS cross-checks, SBC, literal gap
7       _posteriors                     model objects, ``model=`` resolved, one cross-check
8       _api                            the entry points users call
9       _plots                          figures
10      _cli                            the command line
11      bece and its namespaces         the public names
======  ==============================  ========================================

Every import counts, at module level or inside a function, under
``TYPE_CHECKING`` or not. No module imports a public namespace except
``bece`` itself (the code of the library never depends on its own
surface), and none imports another package's private module (a module whose
name starts with an underscore, such as ``bece.models._smooth``: the
package's ``__init__`` is its interface).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

LAYERS = {
    "_base": 0,
    "models": 1,
    "_stats": 2,
    "_io": 3,
    "_metrics": 3,
    "_results": 4,
    "_binned": 5,
    "_smooth": 5,
    "_calibrate": 5,
    "_regression": 5,
    "_validation": 6,
    "_posteriors": 7,
    "_api": 8,
    "_plots": 9,
    "_cli": 10,
    "": 11,
}
#: A module holds one concept; this many lines at most (a concept that needs
#: more is two). No module is an exception today.
MAX_LINES = 1000

#: The public namespaces: modules of ``bece`` that re-export names users import.
NAMESPACES = {"bece.smooth", "bece.calibrate", "bece.metrics", "bece.io", "bece.plots",
              "bece.sklearn", "bece.torch", "bece.regression", "bece.validation"}


def _modules() -> dict[str, Path]:
    """Module name -> file, for bece/ and models/ (installed as bece.models)."""
    out = {}
    for base, prefix in ((ROOT / "bece", ["bece"]), (ROOT / "models", ["bece", "models"])):
        for path in base.rglob("*.py"):
            parts = prefix + list(path.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


MODULES = _modules()


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _imports(name: str) -> set[str]:
    """The bece modules that module ``name`` imports (anywhere in its body)."""
    tree = ast.parse(MODULES[name].read_text())
    package = name if _is_package(name) else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            # "from pkg import submodule" depends on the submodule
            targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in MODULES else mod for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in MODULES:  # "import bece._io.stream" -> bece._io.stream
                t = t.rpartition(".")[0]
            if t.startswith("bece") and t != name:
                found.add(t)
    return found


GRAPH = {name: _imports(name) for name in MODULES}


def _layer(name: str) -> tuple[str, int]:
    if name in NAMESPACES or name == "bece.__main__":
        return "", LAYERS[""]
    parts = name.split(".")
    group = parts[1] if len(parts) > 1 else ""
    if group not in LAYERS:
        raise AssertionError(
            f"{name}: package {group!r} has no layer; add it to LAYERS in {Path(__file__).name}"
        )
    return group, LAYERS[group]


def test_every_module_has_a_layer():
    for name in MODULES:
        _layer(name)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_import_goes_up_or_sideways(name):
    group, rank = _layer(name)
    bad = []
    for target in sorted(GRAPH[name]):
        tgroup, trank = _layer(target)
        if tgroup == group:
            continue
        if trank >= rank:
            bad.append(f"{target} (layer {trank} {tgroup or 'bece'})")
    assert not bad, f"{name} (layer {rank} {group or 'bece'}) imports {', '.join(bad)}"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles():
    assert _cycles(GRAPH) == []


def test_cycle_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_import_parser_sees_imports_inside_functions():
    # the smooth model object imports its NumPyro model inside a function
    assert "bece.models" in GRAPH["bece._posteriors.smooth"]


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_is_small(name):
    n = len(MODULES[name].read_text().splitlines())
    assert n <= MAX_LINES, f"{MODULES[name]} has {n} lines (> {MAX_LINES}): one concept per module"


def test_no_private_name_crosses_a_module():
    """Helpers shared by modules have public names."""
    bad = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("bece")):
                bad += [f"{name}: {a.name}" for a in node.names if a.name.startswith("_")]
    assert not bad, bad


def test_code_lives_in_private_packages():
    """Every folder of bece/ is a private package (or the data, or models/); every
    module directly in bece/ is a public namespace."""
    for folder in sorted(p for p in (ROOT / "bece").iterdir() if p.is_dir() and p.name != "__pycache__"):
        assert folder.name.startswith("_") or folder.name == "data", (
            f"bece/{folder.name}/: implementation packages are private (bece/_{folder.name}/)")
    for path in sorted((ROOT / "bece").glob("*.py")):
        if path.stem not in ("__init__", "__main__"):
            assert f"bece.{path.stem}" in NAMESPACES, (
                f"{path}: a module of bece is a public namespace (add it to NAMESPACES) or moves "
                "into a private package")


@pytest.mark.parametrize("name", sorted(NAMESPACES))
def test_a_namespace_only_reexports(name):
    """A namespace defines nothing: every public name comes from a private package."""
    tree = ast.parse(MODULES[name].read_text())
    defined = [node.name for node in tree.body
               if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name != "__getattr__"
               and node.name != "__dir__"]
    assert defined == [], f"{name} defines {defined}: define them in a private package"


def _private_module(name: str) -> bool:
    return not _is_package(name) and name.rpartition(".")[2].startswith("_")


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_import_of_another_packages_private_module(name):
    package = name if _is_package(name) else name.rpartition(".")[0]
    bad = [t for t in sorted(GRAPH[name])
           if _private_module(t) and t.rpartition(".")[0] != package]
    assert not bad, f"{name} imports private modules of another package: {bad} (import the package)"


def test_private_module_rule_sees_a_violation():
    assert _private_module("bece.models._smooth")
    assert not _private_module("bece._smooth")
    assert not _private_module("bece._smooth.fit")
