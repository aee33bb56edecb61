"""bece._calibrate.scores: what the recalibrators accept (logits, probabilities,
"auto"), how zeros are read, labels, and the errors for bad input.

Deterministic; no false-alarm rate.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse

from bece._calibrate.scores import as_scores, encode_labels
from bece.calibrate import TemperatureScaling


def test_auto_reads_probabilities_and_logits():
    p = np.array([[0.2, 0.8], [0.5, 0.5]])
    s = as_scores(p, "auto")
    assert s.kind == "probabilities" and not s.binary
    np.testing.assert_array_equal(s.block(0, 2), np.log(p))
    z = np.array([[-1.0, 2.0], [0.3, 0.1]])
    assert as_scores(z, "auto").kind == "logits"
    assert as_scores(np.array([0.2, 0.9]), "auto").kind == "probabilities"
    assert as_scores(np.array([-0.2, 3.0]), "auto").kind == "logits"


def test_auto_refuses_what_could_be_either():
    # every value in [0, 1] but rows do not sum to one: unnormalised
    # probabilities or logits? refused, with both remedies
    with pytest.raises(ValueError, match="input='auto' cannot tell what X holds.*rows must sum to 1"):
        as_scores(np.array([[0.2, 0.3], [0.5, 0.9]]), "auto")


def test_binary_inputs_become_two_columns():
    s = as_scores(np.array([0.25, 1.0]), "probabilities")
    tiny = np.finfo(np.float64).tiny
    np.testing.assert_array_equal(s.block(0, 2), np.log([[0.75, 0.25], [tiny, 1.0]]))
    s = as_scores(np.array([-1.5, 2.0]), "logits")
    np.testing.assert_array_equal(s.block(0, 2), [[0.0, -1.5], [0.0, 2.0]])
    assert s.k == 2 and s.n_features == 1


def test_zero_probabilities_read_as_the_dtypes_tiny():
    p32 = np.array([[1.0, 0.0, 0.0]], dtype=np.float32)
    np.testing.assert_array_equal(as_scores(p32, "probabilities").block(0, 1)[0, 1:],
                                  np.log(np.float64(np.finfo(np.float32).tiny)))
    # log(1.1754944e-38) = -87.336..., log(2.2250739e-308) = -708.396...
    assert as_scores(p32, "probabilities").block(0, 1)[0, 1] == pytest.approx(-87.33654475)
    p64 = p32.astype(np.float64)
    assert as_scores(p64, "probabilities").block(0, 1)[0, 1] == pytest.approx(-708.39641853)
    # integer input is float64
    assert as_scores(np.array([[1, 0]]), "probabilities").block(0, 1)[0, 1] == pytest.approx(-708.39641853)


def test_float32_is_not_copied_and_blocks_are_float64():
    z = np.arange(12, dtype=np.float32).reshape(4, 3)
    s = as_scores(z, "logits")
    assert s.data is z
    assert s.block(0, 4).dtype == np.float64


@pytest.mark.parametrize(
    "x,input,message",
    [
        ([[0.0, np.nan]], "logits", r"X \(logits\) must be finite; 1 value\(s\) \(row 0, column 1: nan\)"),
        ([1.0, np.inf], "logits", r"must be finite; 1 value\(s\) \(row 1: inf\)"),
        ([[0.5, 0.6]], "probabilities", "rows must sum to 1"),
        ([[1.5, -0.5]], "probabilities", r"must lie in \[0, 1\]"),
        ([[0.5]], "logits", "K >= 2 classes"),
        (np.zeros((0, 3)), "logits", "empty"),
        (np.zeros((2, 2, 2)), "logits", r"shape \(n,\) or \(n, K\)"),
        ([[0.5, 0.5]], "softmax", "input must be one of"),
        (np.array([[1 + 1j, 0]]), "logits", "Complex data not supported"),
        (np.array([["a", "b"]]), "logits", "real numbers"),
    ],
)
def test_bad_scores(x, input, message):
    with pytest.raises(ValueError, match=message):
        as_scores(x, input)


def test_sparse_refused():
    with pytest.raises(ValueError, match="sparse input is not supported"):
        as_scores(scipy.sparse.csr_matrix(np.eye(3)), "logits")


def test_labels_are_columns_or_k_distinct_values():
    classes, idx = encode_labels([2, 0, 0], 3, 4)  # class 1 and 3 absent: still columns
    assert classes.tolist() == [0, 1, 2, 3] and idx.tolist() == [2, 0, 0]
    classes, idx = encode_labels(["cat", "dog", "ant"], 3, 3)
    assert classes.tolist() == ["ant", "cat", "dog"] and idx.tolist() == [1, 2, 0]
    classes, idx = encode_labels([1, 2, 2], 3, 2)  # {1, 2}: two labels for two columns
    assert classes.tolist() == [1, 2] and idx.tolist() == [0, 1, 1]
    assert encode_labels(np.array([True, False]), 2, 2)[1].tolist() == [1, 0]


@pytest.mark.parametrize(
    "y,n,k,message",
    [
        ([0, 5], 2, 3, r"holds 2 distinct label\(s\) \(0, 5\) for the K = 3 classes"),
        (["a", "b"], 2, 3, "2 distinct label"),
        ([0, 1, 1], 2, 2, "y has 3 entries but X has 2 rows"),
        ([0.5, 1.0], 2, 2, "not continuous values"),
        ([0.0, np.nan], 2, 2, "NaN"),
        ([[0], [1]], 2, 2, r"shape \(n,\)"),
        (None, 2, 2, "requires y to be passed"),
    ],
)
def test_bad_labels(y, n, k, message):
    with pytest.raises(ValueError, match=message):
        encode_labels(y, n, k)


def test_fitted_kind_is_kept():
    """input='auto' decides at fit; new input is read the same way (a batch of
    logits that happens to lie in [0, 1] is not taken for probabilities)."""
    rng = np.random.default_rng(0)
    z = rng.normal(scale=3, size=(200, 2))
    y = (rng.uniform(size=200) < 1 / (1 + np.exp(z[:, 0] - z[:, 1]))).astype(int)
    ts = TemperatureScaling().fit(z, y)
    assert ts.input_ == "logits"
    batch = np.array([[0.2, 0.8]])  # sums to one, but these are logits
    np.testing.assert_allclose(ts.predict_proba(batch),
                               TemperatureScaling(input="logits").fit(z, y).predict_proba(batch))
    with pytest.raises(ValueError, match=r"X has shape \(1, 3\) but the calibrator was fitted on "
                                         r"shape \(n, 2\)"):
        ts.predict_proba([[0.0, 1.0, 2.0]])
