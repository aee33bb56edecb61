"""The public names: everything users import keeps importing from where the README shows it."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

import bece

ROOT = Path(__file__).resolve().parents[1]

#: What users call, by the module they import it from (the README's names and bece.__all__).
PUBLIC = {
    "bece": [
        "BayesianECE", "BayesianTopLabelECE", "Binning", "CalibrationStats", "CalibrationTest",
        "Comparison", "CrossCheck", "SmoothBayesianECE", "bayesian_ece", "bayesian_top_label_ece",
        "calibration_test", "classwise_ece", "compare", "cross_check", "expected_calibration_error",
        "maximum_calibration_error", "posterior_ece", "posterior_top_label_ece", "regression",
        "top_label_ece",
        "recalibrate", "Recalibration", "PairedStats", "posterior_compare",
        "BinnedModel", "SmoothModel", "SmoothTopLabelModel", "MCMCSettings", "LabelStats",
    ],
    "bece.calibrate": [
        "TopLabelCalibrator", "CalibrationWarning", "TemperatureScaling", "VectorScaling", "MatrixScaling",
        "DirichletCalibration", "PlattScaling", "IsotonicCalibration", "BetaCalibration",
        "ScoreCalibrator", "from_json", "temperature_posterior", "temperature_scaled_ece",
        "TemperaturePosterior", "TemperatureScaledECE",
    ],
    "bece.regression": [
        "pit", "calibration_curve", "calibration_error", "Recalibrator", "bayesian_calibration_error",
        "BayesianCalibrationError", "mean_absolute_calibration_error",
        "root_mean_squared_calibration_error", "miscalibration_area", "sharpness", "forecast_quantiles",
        "pit_calibration_test", "RegressionCalibrationTest", "PITHistogram", "DiscretePITWarning",
        "SmoothPITModel", "DirichletPITModel",
    ],
    "bece.models": [
        "conjugate_model", "literal_model", "conjugate_collapsed", "literal_collapsed",
        "top_label_model", "top_label_collapsed", "smooth_model", "DirichletGammaReparam", "pit_model",
        "temperature_model", "pit_dirichlet_model",
    ],
    "bece.io": ["read_predictions", "read_statistics", "example_path", "iter_chunks"],
    "bece.smooth": ["smooth_posterior_ece", "fine_binning", "SmoothBayesianECE"],
    "bece.validation": ["sbc", "literal_gap", "SBCResult"],
    "bece.metrics": [
        "peer_ece", "l2_calibration_error", "ece_sweep", "smooth_calibration_error",
        "smooth_calibration_error_at", "brier_score", "log_loss", "brier_decomposition",
        "corp_decomposition", "calibration_slope", "calibration_in_the_large", "spiegelhalter_z",
        "hosmer_lemeshow",
        "ks_calibration_error", "l2_ece_draws", "bootstrap_interval",
    ],
    "bece.plots": ["reliability_diagram", "plot_ece_posterior", "plot_comparison", "plot_calibration_curve"],
}


def test_all_is_exactly_the_listed_top_level_names():
    assert sorted(bece.__all__) == sorted(PUBLIC["bece"])


@pytest.mark.parametrize("module, name", [(m, n) for m, names in PUBLIC.items() for n in names])
def test_public_name_imports_from_its_module(module, name):
    mod = importlib.import_module(module)
    assert hasattr(mod, name), f"{module}.{name} is missing"
    if module != "bece" or name != "regression":
        assert name in mod.__all__, f"{name} is not in {module}.__all__"


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_every_name_in_all_exists(module):
    mod = importlib.import_module(module)
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
