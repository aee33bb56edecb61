"""bece._stats.inputs: every bad input raises ValueError naming the argument."""

from __future__ import annotations

import re

import numpy as np
import pytest

import bece
from bece._stats.inputs import as_outcomes

ENTRY_POINTS = [
    bece.expected_calibration_error,
    bece.maximum_calibration_error,
    bece.bayesian_ece,
    bece.CalibrationStats.from_arrays,
]


def test_binary_outcome_is_label():
    z, p = as_outcomes([0, 1, 1], [0.2, 0.7, 0.4])
    assert z.tolist() == [False, True, True]
    assert p.dtype == np.float64 and p.tolist() == [0.2, 0.7, 0.4]


def test_top_label_is_argmax_and_max():
    prob = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6], [0.25, 0.5, 0.25]])
    z, p = as_outcomes([0, 1, 1], prob)
    assert z.tolist() == [True, False, True]
    assert p.tolist() == [0.7, 0.6, 0.5]


def test_triples_with_y_pred():
    z, p = as_outcomes([3, 5, 7], [0.9, 0.8, 0.55], y_pred=[3, 4, 7])
    assert z.tolist() == [True, False, True]
    assert p.tolist() == [0.9, 0.8, 0.55]
    prob = np.array([[0.7, 0.3], [0.4, 0.6]])
    z, p = as_outcomes([1, 1], prob, y_pred=[1, 0])
    assert z.tolist() == [True, False] and p.tolist() == [0.3, 0.4]


def test_float_labels_with_integer_values_are_accepted_bool_too():
    z1, _ = as_outcomes(np.array([0.0, 1.0]), [0.3, 0.6])
    z2, _ = as_outcomes(np.array([False, True]), [0.3, 0.6])
    assert z1.tolist() == z2.tolist() == [False, True]


BAD = [
    # (y_true, y_prob, y_pred, fragment of the message)
    ([0, 1], [0.2, np.nan], None, "y_prob contains NaN"),
    ([0, 1], [0.2, np.inf], None, "y_prob contains infinity"),
    ([0, 1], [0.2, 1.5], None, "y_prob must lie in [0, 1]"),
    ([0, 1], [-0.1, 0.5], None, "y_prob must lie in [0, 1]"),
    ([0, 1], [[0.5, 0.6], [0.5, 0.5]], None, "rows must sum to 1"),
    ([0, 1, 1], [0.2, 0.3], None, "y_true has 3 entries but y_prob has 2"),
    ([], [], None, "y_prob is empty"),
    ([0, 2], [0.2, 0.3], None, "y_true must hold labels in 0..1"),
    ([0, 3], [[0.5, 0.5], [0.5, 0.5]], None, "y_true must hold labels in 0..1"),
    ([0, -1], [[0.5, 0.5], [0.5, 0.5]], None, "y_true must hold labels in 0..1"),
    ([0, 0.5], [0.2, 0.3], None, "y_true must hold integer class labels"),
    (["a", "b"], [0.2, 0.3], None, "pass pos_label= to say which one is y = 1"),
    ([0, np.nan], [0.2, 0.3], None, "y_true contains NaN"),
    ([0, 1], [[1.0], [1.0]], None, "K >= 2"),
    ([0, 1], np.zeros((2, 2, 2)), None, "shape (n,) or (n, K)"),
    ([0, 1], ["a", "b"], None, "y_prob must hold real numbers"),
    ([[0], [1]], [0.2, 0.3], None, "y_true must have shape (n,)"),
    ([0, 1], [0.2, 0.3], [0, 1, 1], "y_pred has 3 entries"),
    ([0, 1], [0.2, 0.3], [0, 1.5], "y_pred must hold integer class labels"),
    ([0, 1], [[0.5, 0.5], [0.5, 0.5]], [0, 2], "y_pred must hold labels in 0..1"),
    (None, [0.2], None, "y_true is required"),
]


@pytest.mark.parametrize("func", ENTRY_POINTS, ids=lambda f: f.__qualname__)
@pytest.mark.parametrize("y_true,y_prob,y_pred,message", BAD)
def test_bad_input_raises_value_error_naming_argument(func, y_true, y_prob, y_pred, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        func(y_true, y_prob, y_pred=y_pred)


def test_row_sum_tolerance_accepts_float32_softmax_of_many_classes(rng):
    logits = rng.normal(size=(200, 1000)).astype(np.float32)
    prob = np.exp(logits - logits.max(axis=1, keepdims=True))
    prob = (prob / prob.sum(axis=1, keepdims=True)).astype(np.float32)
    y = rng.integers(0, 1000, size=200)
    assert 0 <= bece.expected_calibration_error(y, prob) <= 1


def test_rows_off_by_1e3_are_rejected_not_renormalised():
    prob = np.array([[0.5, 0.501], [0.3, 0.7]])
    with pytest.raises(ValueError, match="row 0 sums to 1.001"):
        bece.expected_calibration_error([0, 1], prob)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"n_bins": 0}, "n_bins must be a positive integer"),
        ({"n_bins": 2.5}, "n_bins must be a positive integer"),
        ({"n_bins": True}, "n_bins must be a positive integer"),
        ({"binning": "log"}, "binning must be 'uniform', 'quantile'"),
        ({"binning": [0.0, 0.5, 0.3, 1.0]}, "non-decreasing"),
        ({"binning": [0.0, 1.2]}, "must lie in"),
        ({"binning": [0.0, 0.5, 1.0], "n_bins": 3}, "does not match"),
        ({"alpha": 0.0}, "alpha must be finite and > 0"),
        ({"alpha": -1.0}, "alpha must be finite and > 0"),
        ({"alpha": np.ones(7)}, "alpha must be a scalar or have shape"),
        ({"sigma": 0.0}, "sigma must be finite and > 0"),
        ({"sigma": -0.1}, "sigma must be finite and > 0"),
        ({"tau": np.nan}, "tau must be finite and > 0"),
        ({"preset": "tf"}, "preset must be one of"),
        ({"preset": "uncertainty-metrics", "alpha": 1.0}, "do not also pass alpha"),
        ({"num_samples": 0}, "num_samples must be a positive integer"),
        ({"seed": -1}, "seed must be a non-negative int"),
        ({"seed": "x"}, "seed must be a non-negative int"),
        ({"model": "smoothish"}, "model must be"),
    ],
)
def test_bad_options_raise(kwargs, message):
    with pytest.raises(ValueError, match=message):
        bece.bayesian_ece([0, 1, 1], [0.2, 0.6, 0.9], **{"model": "binned", **kwargs})


def test_confidence_outside_explicit_edges_raises():
    with pytest.raises(ValueError, match="outside the bin edges"):
        bece.expected_calibration_error([0, 1], [0.2, 0.9], binning=[0.5, 0.75, 1.0])


def test_inputs_are_not_modified():
    p = np.array([0.2, 0.6, 1.0])
    y = np.array([0, 1, 1])
    before = p.copy(), y.copy()
    bece.bayesian_ece(y, p, num_samples=10, model="binned")
    assert np.array_equal(p, before[0]) and np.array_equal(y, before[1])


# ----------------------------------------------------------- robustness #1
@pytest.mark.parametrize(
    "dtype,k,total",
    [(np.float16, 100, 1.5), (np.float32, 100_000, 1.05), (np.float32, 100, 1.001),
     (np.float64, 100_000, 1.00001)],
)
def test_row_sum_tolerance_is_bounded_whatever_k(dtype, k, total):
    """Robustness #1: max(1e-6, 8 K eps) accepted float16 rows summing to 1.5
    (K = 100) and float32 rows summing to 1.05 (K = 1e5)."""
    prob = np.full((3, k), total / k, dtype=dtype)
    with pytest.raises(ValueError, match="rows must sum to 1"):
        bece.top_label_ece(np.zeros(3, dtype=int), prob)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("k", [2, 100, 100_000])
def test_softmax_rows_computed_in_their_dtype_pass(rng, dtype, k):
    n = 20 if k == 100_000 else 300
    for scale in (1.0, 3.0):
        logits = (rng.normal(size=(n, k)) * scale).astype(dtype)
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        prob = e / e.sum(axis=1, keepdims=True)
        assert prob.dtype == dtype
        assert 0 <= bece.top_label_ece(rng.integers(0, k, size=n), prob) <= 1


def test_row_sum_tolerance_values():
    from bece._stats.inputs import row_sum_tolerance

    eps32 = np.finfo(np.float32).eps
    assert row_sum_tolerance(np.float64, 2) == row_sum_tolerance(np.float64, 10**9) == 1e-6
    assert row_sum_tolerance(np.int64, 10**5) == 1e-6
    assert row_sum_tolerance(np.float32, 2) == 1e-6
    assert row_sum_tolerance(np.float32, 10**5) == pytest.approx(4 * np.sqrt(1e5) * eps32)
    assert row_sum_tolerance(np.float32, 10**8) == 1e-3  # the cap
    assert row_sum_tolerance(np.float16, 2) == row_sum_tolerance(np.float16, 10**5) == 1e-3


def test_a_row_near_the_tolerance_is_judged_by_its_float64_sum():
    """BLAS sums in float32; rows it puts near the limit are re-summed in float64."""
    from bece._stats.inputs import row_sum_tolerance

    k = 1000
    tol = row_sum_tolerance(np.float32, k)
    ok = np.full((2, k), np.float32(1.0 / k))
    ok[:, 0] += np.float32(0.8 * tol)
    bece.top_label_ece([0, 1], ok)  # within the tolerance
    bad = np.full((2, k), np.float32(1.0 / k))
    bad[:, 0] += np.float32(1.3 * tol)
    with pytest.raises(ValueError, match="2 row"):
        bece.top_label_ece([0, 1], bad)


# -------------------------------------------------- robustness #7, #9, #10, #11
def test_masked_arrays_with_masked_values_are_refused():
    """Robustness #7: the mask was silently ignored and masked entries used."""
    p = np.ma.masked_array([0.9, 0.5, 0.6], mask=[1, 0, 0])
    for func in ENTRY_POINTS:
        with pytest.raises(ValueError, match=r"y_prob is a masked array with 1 masked value\(s\)"):
            func([0, 1, 1], p)
    with pytest.raises(ValueError, match="y_true is a masked array"):
        bece.top_label_ece(np.ma.masked_array([0, 1], mask=[0, 1]), [[0.6, 0.4], [0.3, 0.7]])
    clean = np.ma.masked_array([0.9, 0.5, 0.6], mask=False)
    assert bece.expected_calibration_error([0, 1, 1], clean, n_bins=2) == \
        bece.expected_calibration_error([0, 1, 1], [0.9, 0.5, 0.6], n_bins=2)


def test_missing_values_in_object_labels_are_named():
    """Robustness #9: pandas nullable booleans with pd.NA said 'got dtype object'."""
    pd = pytest.importorskip("pandas")
    p = [0.2, 0.3, 0.4, 0.5]
    with pytest.raises(ValueError, match=r"y_true contains missing values .* \(index 2: <NA>\)"):
        bece.expected_calibration_error(pd.array([False, True, None, True], "boolean"), p)
    with pytest.raises(ValueError, match=r"y_pred contains missing values .*index 1: None"):
        bece.expected_calibration_error([0, 1, 1, 0], p, y_pred=np.array([0, None, 1, 0], object))
    with pytest.raises(ValueError, match="y_prob contains missing values"):
        bece.expected_calibration_error([0, 1], np.array([0.2, None], dtype=object))
    with pytest.raises(ValueError, match=r"y_true holds the values \['a', 'b'\]; pass pos_label="):
        bece.expected_calibration_error(np.array(["a", "b"], object), [0.2, 0.3])


@pytest.mark.parametrize(
    "labels,shown",
    [(np.array([0, 1, 2**63 + 1, 1], dtype=np.uint64), "index 2: 9223372036854775809"),
     (np.array([0.0, 1.0, 1e20, 1.0]), "index 2: 1e+20"),
     (np.array([0.0, 1.0, -1e20, 1.0]), "index 2: -1e+20")],
)
def test_labels_beyond_int64_are_shown_as_given(labels, shown):
    """Robustness #10: messages showed the value after a wrapping int64 cast
    (-9223372036854775807, -9223372036854775808)."""
    outside = rf"must hold labels in 0..1; 1 value\(s\) \({re.escape(shown)}\)"
    for func in ENTRY_POINTS:
        with pytest.raises(ValueError, match=outside):
            func(labels, [0.2, 0.3, 0.4, 0.5])
    beyond = f"y_pred must hold class labels in the int64 range.*{re.escape(shown)}"
    with pytest.raises(ValueError, match=beyond):
        bece.expected_calibration_error([0, 1, 2, 1], [0.2, 0.3, 0.4, 0.5], y_pred=labels)


def test_float_labels_beyond_int64_do_not_wrap_into_equality():
    """Robustness #11: y_true = 2.0**63 wrapped to -2**63 and 'equalled' y_pred = -2**63."""
    with pytest.raises(ValueError, match=r"y_true must hold class labels in the int64 range"):
        bece.expected_calibration_error([0, 1, 2.0**63], [0.6, 0.7, 0.8], y_pred=[0, 1, -(2**63)])
    with pytest.raises(ValueError, match=r"y_pred must hold class labels in the int64 range"):
        bece.expected_calibration_error([0, 1, 2], [0.6, 0.7, 0.8], y_pred=[0, 1, 2.0**64])
    # -2**63 itself is an int64
    z, _ = as_outcomes([0, -(2.0**63)], [0.6, 0.7], y_pred=[0, -(2**63)])
    assert z.tolist() == [True, True]
