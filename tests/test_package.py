"""Packaging: a light import, the models package, the shipped example's recipe."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_import_bece_loads_only_its_table_of_names():
    """``import bece`` and ``import bece.regression`` load their tables of
    names (PEP 562) and bece._base (numpy); each name imports its module on
    first use."""
    code = ("import sys; before = set(sys.modules); import bece, bece.regression; "
            "print(' '.join(sorted(set(sys.modules) - before)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = out.stdout.split()
    ours = {m for m in loaded if m.split(".")[0] == "bece"}
    assert {m for m in ours if not m.startswith("bece._base.")} == {"bece", "bece._base",
                                                                   "bece.regression"}
    third_party = {m.split(".")[0] for m in loaded} - set(sys.stdlib_module_names) - {"bece"}
    assert {m for m in third_party if not m.startswith("_")} <= {"numpy", "cython_runtime"}


@pytest.mark.parametrize("name", ["bece", "bece.regression"])
def test_the_lazy_tables_name_every_public_name(name):
    import importlib

    module = importlib.import_module(name)
    assert set(module._WHERE) | ({"regression"} if name == "bece" else set()) == set(module.__all__)
    for public in module.__all__:
        assert getattr(module, public) is not None
    assert set(module.__all__) <= set(dir(module))
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        module.nope  # noqa: B018


def test_import_bece_is_light():
    """``import bece`` loads numpy and scipy's special functions (and, for
    now, scipy.linalg), never the libraries of the slow paths: scipy.stats
    alone took 59% of the import when a module pulled it in for one quantile."""
    code = (
        "import sys, bece; heavy = [m for m in ('jax', 'numpyro', 'arviz', 'matplotlib', 'pandas', "
        "'scipy.stats', 'scipy.optimize', 'scipy.integrate', 'scipy.sparse', 'sklearn', 'pyarrow', "
        "'dask', 'numba') if m in sys.modules]; print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_the_binned_report_loads_no_slow_path(tmp_path):
    """A cold ``bece report --model binned`` (its verdict included) reads the
    file and fits the smooth model's test without ArviZ, JAX, matplotlib or
    the scipy modules of other paths: the command line's parser once loaded
    every model for one table of names, and scipy.stats (0.7 s) came in
    for one chi-squared tail."""
    rng = np.random.default_rng(0)
    p = rng.uniform(size=3000)
    pd.DataFrame({"y_true": (rng.uniform(size=p.size) < p).astype(int), "y_prob": p}).to_parquet(
        tmp_path / "p.parquet")
    code = (
        "import sys; from bece._cli import main; main(['report', sys.argv[1], '--model', 'binned', "
        "'--samples', '200']); heavy = [m for m in ('jax', 'numpyro', 'arviz', 'matplotlib', "
        "'scipy.stats', 'scipy.optimize', 'scipy.integrate', 'sklearn', 'dask') "
        "if m in sys.modules]; print('loaded:', ','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "p.parquet")],
                         capture_output=True, text=True, check=True)
    assert "Verdict" in out.stdout or "verdict" in out.stdout
    assert out.stdout.strip().splitlines()[-1] == "loaded:"


def test_models_importable_as_bece_models():
    import bece.models

    assert Path(bece.models.__file__).parent.name == "models"


def test_example_is_reproduced_by_its_script(tmp_path):
    pytest.importorskip("sklearn")
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from make_example import make_example
    finally:
        sys.path.pop(0)
    fresh = make_example()
    shipped = pd.read_csv(ROOT / "bece" / "data" / "example.csv")
    assert list(fresh.columns) == list(shipped.columns)
    # the split: NumPy's legacy RandomState stream, which NumPy keeps fixed
    np.testing.assert_array_equal(fresh["y_true"], shipped["y_true"])
    # Both fits meet the script's ||gradient|| <= GRAD_TOL, so each is within
    # error_bound (= ||g|| / (2 mu) * max ||(x, 1)||, about 3e-6; see the
    # script's docstring) of the unique optimum; 10 significant digits in the
    # file add 5e-11. Independent of the scikit-learn, scipy or BLAS version.
    bound = fresh.attrs["error_bound"]
    assert 0 < bound < 1e-4
    np.testing.assert_allclose(fresh.iloc[:, 1:], shipped.iloc[:, 1:], rtol=0, atol=2 * bound + 5e-11)


def _packages() -> list[str]:
    """Every package of the source tree: bece/**/ with an __init__.py, and bece.models."""
    found = [".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "bece").rglob("__init__.py")]
    return sorted(found + ["bece.models"])


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    # built from a copy of what the wheel is made of: setuptools writes build/
    # and bece.egg-info/ into the tree it builds, and the tests run in parallel
    # (pytest-xdist), so two workers building in the repository would collide
    out = tmp_path_factory.mktemp("wheel")
    source = tmp_path_factory.mktemp("source")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("bece", "models"):
        shutil.copytree(ROOT / name, source / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(source)],
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("bece-*.whl")
    return built


@pytest.mark.skipif(not (ROOT / "pyproject.toml").exists(), reason="needs the source tree")
def test_wheel_holds_every_package_and_the_data(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert top == {"bece"}
    packages = _packages()
    assert {"bece", "bece._stats", "bece._smooth", "bece.models"} <= set(packages)
    for package in packages:
        assert package.replace(".", "/") + "/__init__.py" in names, f"{package} is not in the wheel"
    # the public namespaces are modules of bece
    for namespace in ("smooth", "calibrate", "metrics", "io", "plots", "regression", "validation"):
        assert f"bece/{namespace}.py" in names, f"bece.{namespace} is not in the wheel"
    assert "bece/data/example.csv" in names and "bece/py.typed" in names
    # bece/models.pyi serves mypy in the source tree only: installed, it would
    # point type checkers at a top-level `models` package that is not there
    assert "bece/models.pyi" not in names


@pytest.mark.skipif(not (ROOT / "pyproject.toml").exists(), reason="needs the source tree")
def test_wheel_ships_the_license(wheel):
    """pyproject's license = "Apache-2.0" with the license text as
    license-files: the wheel's metadata names it and carries it."""
    text = (ROOT / "LICENSE").read_text()
    assert text.split()[:4] == ["Apache", "License", "Version", "2.0,"]
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    assert "END OF TERMS AND CONDITIONS" in text
    with zipfile.ZipFile(wheel) as whl:
        (meta,) = [n for n in whl.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = whl.read(meta).decode()
        shipped = whl.read(meta.replace("METADATA", "licenses/LICENSE")).decode()
    assert "License-Expression: Apache-2.0" in metadata.splitlines()
    assert "License-File: LICENSE" in metadata.splitlines()
    assert shipped == text


@pytest.mark.skipif(not (ROOT / "pyproject.toml").exists(), reason="needs the source tree")
def test_installed_wheel_imports_each_package_outside_the_source_tree(wheel, tmp_path):
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel)],
        check=True,
        capture_output=True,
    )
    packages = _packages()
    code = (
        "import importlib, sys\n"
        f"site = {str(site)!r}\n"
        f"for name in {packages!r}:\n"
        "    module = importlib.import_module(name)\n"
        "    assert module.__file__.startswith(site), (name, module.__file__)\n"
        "import bece, bece.io\n"
        "assert bece.io.example_path().is_file()\n"
        "print(len(sys.modules))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_pyproject_lists_every_package():
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11

    listed = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    # bece.data holds the example's data and no Python; it is listed all the
    # same, since setuptools warns on every install about a data folder
    # inside a package that `packages` leaves out
    assert sorted(listed) == sorted(_packages() + ["bece.data"])


def test_ci_runs_exactly_the_readme_quick_start():
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Quick start", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    commands = [line.strip() for line in block.strip().splitlines()]
    assert len(commands) == 2
    ci = (ROOT / ".ci" / "run").read_text()
    # one section per leg of the matrix (Python 3.11, 3.13, and 3.11 on the
    # lowest NumPyro, JAX and ArviZ admitted), each running both commands as
    # the README writes them
    sections = ci.split('echo "== Python ')[1:]
    assert [s.split(" ", 1)[0] for s in sections] == ["3.11", "3.13", "3.11"]
    assert "lowest" in sections[2].splitlines()[0] and "python .ci/lowest.py" in sections[2]
    for section in sections:
        lines = section.splitlines()
        for command in commands:
            assert command in lines


def test_version_matches_pyproject():
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    import bece

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert bece.__version__ == project["version"]
