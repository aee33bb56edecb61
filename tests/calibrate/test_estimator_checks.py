"""scikit-learn's estimator checks (``parametrize_with_checks``) on every recalibrator.

Every check runs. The ones listed in :data:`FAILS` are expected to fail
(strict: one that starts passing fails the test, so the list stays exact),
for these reasons, all of them the same fact: ``X`` is the scores of a
classifier, one column per class, not arbitrary features.

* ``labels``: the checks fit random features with labels unrelated to the
  number of columns (3 classes on 2 columns, say). Our labels are the
  columns (``0 .. K-1``) or exactly K distinct values matched to them, so
  such data is refused.
* ``uninformative``: the checks' random features, read as logits, carry no
  information on y; the NLL then decreases towards T = infinity, beyond the
  temperature bounds, which the fit refuses (the scaling families start
  from temperature scaling).
* ``binary``: the binary calibrators take (n,) or (n, 2) scores; the checks
  pass 3 or more columns.
* ``probabilities``: ``TopLabelCalibrator`` takes class probabilities (rows
  summing to one); the checks' features are not.
* ``object``: ``X`` of dtype object is refused, never converted (nothing
  coerced); ``y`` of shape (n, 1) likewise is refused, not raveled.
* ``messages``: empty input, one column and one sample are refused with our
  messages, which speak of classes and rows (K >= 2 classes), not the
  "feature(s)"/"sample" wording the checks look for.
* ``one label``: labels in ``0 .. K-1`` index the columns, so a class absent
  from y is still a class (``classes_ = arange(K)``) and predictions need not
  be the single label seen; the scaling families predict the argmax.
* ``positive only``: the binary calibrators with ``input="auto"`` would read
  positive features as probabilities; the checks use ``input="logits"``, and
  negative features in three columns are refused as ``binary``.

Deterministic; no false-alarm rate.
"""

from __future__ import annotations

import inspect

import pytest
import sklearn
from sklearn.utils.estimator_checks import parametrize_with_checks

from bece.calibrate import (
    BetaCalibration,
    DirichletCalibration,
    IsotonicCalibration,
    MatrixScaling,
    PlattScaling,
    TemperatureScaling,
    TopLabelCalibrator,
    VectorScaling,
)

LABELS = "labels are the columns of X (0..K-1 or K distinct values); the check's are not"
UNINFORMATIVE = ("random features as logits carry no information on y: the NLL decreases beyond the "
                 "temperature bounds, which fit refuses")
BINARY = "binary calibrators take (n,) or (n, 2) scores; the check passes 3 or more columns"
PROBABILITIES = "TopLabelCalibrator takes class probabilities (rows summing to one); the check's X is not"
OBJECT = "X of dtype object and y of shape (n, 1) are refused, never converted"
MESSAGES = "refused with bece's message (K >= 2 classes, rows), not the check's wording"
ONE_LABEL = "labels 0..K-1 index the columns: an absent class is still a class, argmax predicted"

_SCALING = {
    "check_classifier_data_not_an_array": UNINFORMATIVE,
    "check_classifiers_classes": UNINFORMATIVE,
    "check_classifiers_train": UNINFORMATIVE,
    "check_dict_unchanged": UNINFORMATIVE,
    "check_dont_overwrite_parameters": UNINFORMATIVE,
    "check_dtype_object": OBJECT,
    "check_estimators_dtypes": UNINFORMATIVE,
    "check_estimators_empty_data_messages": MESSAGES,
    "check_estimators_fit_returns_self": LABELS,
    "check_estimators_nan_inf": UNINFORMATIVE,
    "check_estimators_overwrite_params": LABELS,
    "check_f_contiguous_array_estimator": UNINFORMATIVE,
    "check_fit2d_1feature": MESSAGES,
    "check_fit2d_predict1d": UNINFORMATIVE,
    "check_methods_sample_order_invariance": UNINFORMATIVE,
    "check_methods_subset_invariance": UNINFORMATIVE,
    "check_n_features_in_after_fitting": UNINFORMATIVE,
    "check_readonly_memmap_input": LABELS,
    "check_supervised_y_2d": OBJECT,
}

_BINARY = {
    "check_classifiers_classes": OBJECT,
    "check_classifiers_train": LABELS,
    "check_dict_unchanged": BINARY,
    "check_dont_overwrite_parameters": BINARY,
    "check_dtype_object": OBJECT,
    "check_estimators_dtypes": BINARY,
    "check_estimators_empty_data_messages": MESSAGES,
    "check_estimators_fit_returns_self": LABELS,
    "check_estimators_nan_inf": BINARY,
    "check_estimators_overwrite_params": LABELS,
    "check_estimators_pickle": BINARY,
    "check_f_contiguous_array_estimator": BINARY,
    "check_fit2d_1feature": MESSAGES,
    "check_fit2d_1sample": MESSAGES,
    "check_fit2d_predict1d": BINARY,
    "check_fit_score_takes_y": BINARY,
    "check_methods_sample_order_invariance": BINARY,
    "check_methods_subset_invariance": BINARY,
    "check_n_features_in_after_fitting": BINARY,
    "check_pipeline_consistency": BINARY,
    "check_positive_only_tag_during_fit": BINARY,
    "check_readonly_memmap_input": LABELS,
    "check_supervised_y_2d": BINARY,
}

_TOPLABEL = {name: PROBABILITIES for name in (
    "check_classifier_data_not_an_array", "check_classifiers_classes", "check_classifiers_one_label",
    "check_classifiers_regression_target", "check_classifiers_train", "check_dict_unchanged",
    "check_dont_overwrite_parameters", "check_estimators_dtypes", "check_estimators_fit_returns_self",
    "check_estimators_nan_inf", "check_estimators_overwrite_params", "check_estimators_pickle",
    "check_f_contiguous_array_estimator", "check_fit2d_1sample", "check_fit2d_predict1d",
    "check_fit_check_is_fitted", "check_fit_idempotent", "check_fit_score_takes_y",
    "check_methods_sample_order_invariance", "check_methods_subset_invariance", "check_n_features_in",
    "check_n_features_in_after_fitting", "check_pipeline_consistency",
    "check_positive_only_tag_during_fit", "check_readonly_memmap_input", "check_requires_y_none",
    "check_supervised_y_2d")}
_TOPLABEL.update({"check_dtype_object": OBJECT, "check_estimators_empty_data_messages": MESSAGES,
                  "check_fit2d_1feature": MESSAGES})

#: run by default: the scaling base and the top-label calibrator
ESTIMATORS = [TemperatureScaling(input="logits"), TopLabelCalibrator()]

#: the same checks on the others, marked slow (about 2 minutes on 2 shared cores)
MORE_ESTIMATORS = [
    # tol 1e-4: the checks test the protocol, not the optimum (and run faster)
    VectorScaling(input="logits", tol=1e-4),
    MatrixScaling(input="logits", reg_lambda=0.01, reg_mu=0.01, tol=1e-4),
    DirichletCalibration(input="logits", reg_lambda=0.01, reg_mu=0.01, tol=1e-4),
    PlattScaling(input="logits"),
    IsotonicCalibration(input="logits"),
    BetaCalibration(input="logits"),
]

FAILS = {
    "TemperatureScaling": {**_SCALING, "check_classifiers_one_label": ONE_LABEL},
    "VectorScaling": _SCALING,
    "MatrixScaling": _SCALING,
    "DirichletCalibration": _SCALING,
    "PlattScaling": _BINARY,
    "IsotonicCalibration": _BINARY,
    "BetaCalibration": _BINARY,
    "TopLabelCalibrator": _TOPLABEL,
}


def expected_failed_checks(estimator):
    return FAILS[type(estimator).__name__]


_OPTIONS = inspect.signature(parametrize_with_checks).parameters
if "expected_failed_checks" not in _OPTIONS or "xfail_strict" not in _OPTIONS:
    pytest.skip(f"scikit-learn {sklearn.__version__} lacks parametrize_with_checks' "
                "expected_failed_checks/xfail_strict (1.8+)", allow_module_level=True)


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks, xfail_strict=True)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.slow
@parametrize_with_checks(MORE_ESTIMATORS, expected_failed_checks=expected_failed_checks, xfail_strict=True)
def test_sklearn_compatible_more(estimator, check):
    check(estimator)
