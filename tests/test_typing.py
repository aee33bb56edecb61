"""Type hints of the public API resolve at runtime and say what is accepted.

Every public callable (functions, classes, their ``__init__`` and public
methods and properties) of ``bece.__all__`` and of the public subpackages'
``__all__`` must have annotations that ``typing.get_type_hints`` evaluates:
names used in annotations are importable in their module at runtime (not
only under ``TYPE_CHECKING``). Objects of the lazily imported libraries
(ArviZ, matplotlib, pandas, NumPyro, scipy.stats distributions) are
annotated ``Any`` so that resolving the hints imports none of them.
"""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import ArrayLike

import bece
from bece._base.typing import BinningSpec, PriorParam, Seed

PUBLIC = [
    "bece",
    "bece._binned",
    "bece.calibrate",
    "bece.io",
    "bece.metrics",
    "bece.plots",
    "bece.sklearn",
    "bece.regression",
    "bece._results",
    "bece.smooth",
    "bece._stats",
    "bece.validation",
]

#: parameters that always name user data or options with a known type
KEY_PARAMETERS = {
    "y_true", "y_prob", "y_pred", "y_prob_a", "y_prob_b", "y_pred_a", "y_pred_b",
    "seed", "binning", "n_bins", "alpha", "sigma", "tau", "num_samples", "pit", "levels",
    "stats", "result", "comparison",
}


def _functions_of(cls: type) -> dict[str, Any]:
    """``__init__`` and the public methods, properties, static and class methods
    that ``cls`` defines or inherits from bece classes."""
    out: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        if not klass.__module__.startswith("bece"):
            continue
        for name, value in vars(klass).items():
            if name.startswith("_") and name != "__init__":
                continue
            if isinstance(value, property):
                value = value.fget
            elif isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            if inspect.isfunction(value):
                out[name] = value
    return out


def _public_callables() -> dict[str, Any]:
    found: dict[str, Any] = {}
    for modname in PUBLIC:
        module = importlib.import_module(modname)
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj):
                found[f"{modname}.{name}"] = obj
                for fname, fn in _functions_of(obj).items():
                    found[f"{modname}.{name}.{fname}"] = fn
            elif inspect.isfunction(obj):
                found[f"{modname}.{name}"] = obj
    return found


CALLABLES = _public_callables()


def test_the_public_api_is_found():
    assert len(CALLABLES) > 150
    assert "bece.bayesian_ece" in CALLABLES
    assert "bece.BayesianECE.interval" in CALLABLES  # inherited from DrawSummaries
    assert "bece.CalibrationStats.from_arrays" in CALLABLES
    assert "bece.regression.Recalibrator.__init__" in CALLABLES


@pytest.mark.parametrize("name", sorted(CALLABLES))
def test_type_hints_resolve_and_are_complete(name):
    obj = CALLABLES[name]
    hints = typing.get_type_hints(obj)
    if inspect.isclass(obj):  # its fields; __init__ and methods are checked on their own
        return
    params = [p for p in inspect.signature(obj).parameters if p not in ("self", "cls")]
    missing = [p for p in params if p not in hints] + ([] if "return" in hints else ["return"])
    assert not missing, f"{name}: no annotation for {', '.join(missing)}"
    loose = sorted(p for p in KEY_PARAMETERS & hints.keys() if hints[p] is Any)
    assert not loose, f"{name}: {', '.join(loose)} annotated Any"


def test_bayesian_ece_hints():
    hints = typing.get_type_hints(bece.bayesian_ece)
    assert hints["y_true"] == ArrayLike
    assert hints["y_prob"] == ArrayLike
    assert hints["y_pred"] == ArrayLike | None
    assert hints["n_bins"] == int | None
    assert hints["seed"] == Seed == int | np.integer | np.random.Generator
    assert hints["binning"] == BinningSpec | bece.Binning | None
    # the model's options live on the model object
    assert bece.BinnedModel.__dataclass_fields__["alpha"].type in ("PriorParam", PriorParam)
    # by= gives each group's posterior: the overloads say which comes back
    assert hints["return"] == bece.BayesianECE | bece.GroupECE
    returns = [typing.get_type_hints(f)["return"] for f in typing.get_overloads(bece.bayesian_ece)]
    assert returns == [bece.BayesianECE, bece.GroupECE]


def test_result_types_are_returned():
    from bece import io, regression, smooth

    expected = {
        bece.bayesian_top_label_ece: bece.BayesianTopLabelECE,
        bece.compare: bece.Comparison,
        bece.calibration_test: bece.CalibrationTest,
        bece.cross_check: bece.CrossCheck,
        smooth.smooth_posterior_ece: bece.SmoothBayesianECE,
        regression.bayesian_calibration_error: regression.BayesianCalibrationError,
        io.read_statistics: io.FileStatistics,
        io.read_predictions: io.Predictions,
    }
    for fn, cls in expected.items():
        assert typing.get_type_hints(fn)["return"] is cls, fn.__qualname__
    hints = typing.get_type_hints(bece.posterior_ece)
    assert hints["stats"] == bece.CalibrationStats | bece.GroupStats
    assert hints["return"] == bece.BayesianECE | bece.GroupECE
    returns = [typing.get_type_hints(f)["return"] for f in typing.get_overloads(bece.posterior_ece)]
    assert returns == [bece.BayesianECE, bece.GroupECE]
    assert typing.get_type_hints(regression.pit)["seed"] == Seed | None
    assert typing.get_type_hints(bece.BayesianECE.interval)["return"] == tuple[float, float]


def test_resolving_hints_keeps_heavy_imports_lazy():
    # bece.calibrate's recalibrators are scikit-learn estimators (subclasses of
    # sklearn.base.BaseEstimator), so importing that module loads scikit-learn
    # by design; what is checked is that resolving the hints loads nothing more
    code = (
        "import sys, typing\n"
        "from tests.test_typing import _public_callables\n"
        "heavy = ('arviz', 'matplotlib', 'pandas', 'numpyro', 'jax', 'dask', 'sklearn', 'pyarrow')\n"
        "def loaded():\n"
        "    return {m for m in sys.modules if m.split('.')[0] in heavy}\n"
        "fns = _public_callables()\n"
        "before = loaded()\n"
        "for fn in fns.values():\n"
        "    typing.get_type_hints(fn)\n"
        "print(sorted(loaded() - before))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1])
    assert out.stdout.strip() == "[]", out.stdout


def test_the_models_stub_reexports_exactly_bece_models():
    """bece/models.pyi gives mypy the types of bece.models (installed from
    models/ by a package-dir mapping mypy cannot follow): it re-exports each
    name of bece.models.__all__ from the package mypy checks as `models`,
    and nothing else."""
    import ast

    import bece.models

    root = Path(__file__).resolve().parents[1]
    tree = ast.parse((root / "bece" / "models.pyi").read_text())
    imported = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            assert node.module == "models" and node.level == 0
            for alias in node.names:
                assert alias.asname == alias.name, "an explicit re-export: `import x as x`"
                imported[alias.name] = node.module
    declared = next(ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                    and getattr(n.targets[0], "id", None) == "__all__")
    assert sorted(imported) == sorted(declared) == sorted(bece.models.__all__)
