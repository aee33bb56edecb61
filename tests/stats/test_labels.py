"""bece._stats.labels and the reading options of as_outcomes: labels of any
type (pos_label=, labels=), logits (from_logits=) and the row-sum tolerance
(row_sum_tol=), against scikit-learn, scipy and naive loops."""

from __future__ import annotations

import re
import tracemalloc
import warnings

import numpy as np
import pytest
from scipy.special import expit, softmax

import bece
from bece import CalibrationStats
from bece._stats.inputs import Inputs, as_outcomes, softmax_rows
from bece._stats.labels import class_indices, fixed_labels


def outcomes(y_true, y_prob, y_pred=None, **inputs):
    """``as_outcomes`` with the input keywords of the public functions, as
    they build their :class:`~bece._stats.inputs.Inputs`."""
    return as_outcomes(y_true, y_prob, y_pred, Inputs(**inputs))


def _same_stats(a: CalibrationStats, b: CalibrationStats) -> None:
    assert np.array_equal(a.counts, b.counts)
    np.testing.assert_array_equal(a.sum_p, b.sum_p)


@pytest.fixture
def binary(rng):
    p = rng.uniform(size=400)
    y = (rng.uniform(size=400) < p ** 1.3).astype(np.int64)
    return y, p


# ----------------------------------------------------------------- binary
def test_binary_labels_of_any_type_give_the_statistics_of_0_1(binary):
    y, p = binary
    ref = CalibrationStats.from_arrays(y, p, n_bins=10)
    text = np.where(y == 1, "dog", "cat")
    for y_true, options in [
        (np.where(y == 1, 1, -1), {}),  # scikit-learn's default pos_label=1
        (y.astype(bool), {}),
        (text, {"pos_label": "dog"}),
        (text.astype(object), {"pos_label": "dog"}),
        (text, {"labels": ["cat", "dog"]}),  # classes_: the second is y = 1
        (np.where(y == 1, 7, 3), {"pos_label": 7}),
        (1 - y, {"pos_label": 0}),
    ]:
        _same_stats(CalibrationStats.from_arrays(y_true, p, n_bins=10, **options), ref)


def test_pos_label_reads_as_scikit_learns_calibration_curve(binary):
    """Per non-empty bin, the observed frequency of y = 1 and the mean
    P(y = 1) are calibration_curve's (uniform bins; no p on an edge)."""
    from sklearn.calibration import calibration_curve

    y, p = binary
    text = np.where(y == 1, "dog", "cat")
    s = CalibrationStats.from_arrays(text, p, n_bins=10, pos_label="dog")
    freq, mean_p = calibration_curve(text, p, n_bins=10, pos_label="dog")
    full = s.bin_counts > 0
    np.testing.assert_allclose(s.accuracy[full], freq, rtol=1e-12)
    np.testing.assert_allclose(s.confidence[full], mean_p, rtol=1e-12)


@pytest.mark.parametrize(
    "y_true,options,message",
    [
        (["cat", "dog", "cat"], {}, "y_true holds the values ['cat', 'dog']; pass pos_label="),
        ([1, 2, 1], {}, "y_true holds the values [1, 2]; pass pos_label="),
        ([0, 1, 2], {}, "y_true holds the values [0, 1, 2]; y_prob of shape (n,) is P(y = 1)"),
        (["a", "b", "c"], {"pos_label": "a"}, "y_true holds 3 distinct values ['a', 'b', 'c']"),
        (["cat", "bird", "cat"], {"pos_label": "dog"},
         "pos_label 'dog' is not among y_true's values ['bird', 'cat']"),
        ([0, 1, 1], {"pos_label": "1"}, "pos_label ['1'] and y_true [0, 1] are of different types"),
        (["cat", "dog", "cat"], {"labels": ["cat", "dog", "emu"]}, "labels has 3 entries"),
        (["cat", "dog", "cat"], {"labels": ["cat", "emu"]},
         "y_true holds 1 label(s) that are not in labels: ['dog']"),
        (["cat", "dog", "cat"], {"labels": ["cat", "dog"], "pos_label": "emu"},
         "pos_label 'emu' is not in labels ['cat', 'dog']"),
        (["cat", None, "cat"], {"pos_label": "cat"}, "y_true contains missing values"),
        (np.array(["cat", 1, "cat"], object), {"pos_label": "cat"}, "y_true mixes text and other"),
    ],
)
def test_binary_label_errors_name_the_values(y_true, options, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        outcomes(y_true, [0.2, 0.7, 0.4], **options)


def test_pos_label_is_for_p_y1_input_only():
    prob = np.array([[0.6, 0.4], [0.3, 0.7]])
    with pytest.raises(ValueError, match=re.escape("pass y_prob[:, 1] with pos_label")):
        outcomes([0, 1], prob, pos_label=1)
    with pytest.raises(ValueError, match="pos_label applies to P"):
        outcomes([0, 1], [0.6, 0.7], y_pred=[0, 1], pos_label=1)


# --------------------------------------------------------- class labels
@pytest.fixture
def multiclass(rng):
    prob = rng.dirichlet(np.full(3, 0.7), size=600)
    y = np.array([rng.choice(3, p=row) for row in prob])
    return y, prob


def _top_label_loop(y_index, prob):
    """z_i = [argmax_i == y_i] and the row maximum, one row at a time."""
    z = np.array([int(np.argmax(r) == t) for r, t in zip(prob, y_index)])
    return z, np.array([r.max() for r in prob])


def test_text_labels_are_sorted_columns_as_scikit_learns_classes(multiclass):
    y, prob = multiclass
    names = np.array(["setosa", "versicolor", "virginica"])  # sorted: classes_ order
    z, conf = outcomes(names[y], prob)
    z_ref, conf_ref = _top_label_loop(y, prob)
    assert np.array_equal(z, z_ref) and np.array_equal(conf, conf_ref)
    assert bece.top_label_ece(names[y], prob) == bece.top_label_ece(y, prob)
    assert bece.classwise_ece(names[y], prob) == bece.classwise_ece(y, prob)


def test_labels_give_the_class_of_each_column(multiclass):
    y, prob = multiclass
    order = np.array([2, 0, 1])  # column j holds class order[j]
    shuffled = prob[:, order]  # shuffled[:, j] is the probability of class order[j]
    labels = np.array(["c0", "c1", "c2"])[order]
    names = np.array(["c0", "c1", "c2"])[y]
    z, conf = outcomes(names, shuffled, labels=labels)
    z_ref, conf_ref = _top_label_loop(y, prob)
    assert np.array_equal(z, z_ref) and np.array_equal(conf, conf_ref)
    assert bece.classwise_ece(names, shuffled, labels=labels) == pytest.approx(
        bece.classwise_ece(y, prob), abs=1e-15)
    # integer class values other than 0..K-1, named by labels (clf.classes_)
    z2, _ = outcomes(y + 1, prob, labels=[1, 2, 3])
    assert np.array_equal(z2, z_ref)
    r = bece.bayesian_top_label_ece(names, shuffled, labels=labels, num_samples=200)
    assert set(r.labels.tolist()) <= set(labels.tolist())


def test_integer_labels_are_column_indices_never_remapped(multiclass):
    y, prob = multiclass
    with pytest.raises(ValueError, match=re.escape("y_true must hold labels in 0..2")) as err:
        outcomes(y + 1, prob)
    assert "pass labels=" in str(err.value)


@pytest.mark.parametrize(
    "y_true,options,message",
    [
        (["a", "b", "b"], {}, "hold 2 distinct text label(s) ['a', 'b'] but y_prob has 3 columns"),
        (["a", "b", "d"], {"labels": ["a", "b", "c"]}, "not in labels: ['d']"),
        (["a", "b", "c"], {"labels": ["a", "b"]}, "labels has 2 entries but y_prob has 3 columns"),
        (["a", "b", "c"], {"labels": ["a", "b", "a"]}, "labels must be distinct; ['a']"),
        ([0, 1, 2], {"labels": ["a", "b", "c"]}, "are of different types: y_true holds numbers"),
        (["a", "b", "c"], {"labels": []}, "labels is empty"),
    ],
)
def test_class_label_errors_name_them(y_true, options, message):
    prob = np.array([[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.1, 0.2, 0.7]])
    with pytest.raises(ValueError, match=re.escape(message)):
        outcomes(y_true, prob, **options)


def test_pandas_object_and_categorical_labels(multiclass):
    pd = pytest.importorskip("pandas")
    y, prob = multiclass
    names = np.array(["x", "y", "z"])[y]
    ref = outcomes(names, prob)
    for col in (pd.Series(names, dtype=object), pd.Series(names, dtype="category"),
                pd.Series(names, dtype="string")):
        z, conf = outcomes(col, prob)
        assert np.array_equal(z, ref[0]) and np.array_equal(conf, ref[1])


def test_triples_with_text_labels(rng):
    y = rng.integers(0, 4, 300)
    pred = np.where(rng.uniform(size=300) < 0.7, y, rng.integers(0, 4, 300))
    conf = rng.uniform(0.25, 1.0, 300)
    names = np.array(["ant", "bee", "cat", "dog"])
    z, p = outcomes(names[y], conf, y_pred=names[pred])
    assert np.array_equal(z, y == pred) and np.array_equal(p, conf)
    with pytest.raises(ValueError, match="y_true holds text but y_pred holds numbers"):
        outcomes(names[y], conf, y_pred=pred)
    assert bece.top_label_ece(names[y], conf, y_pred=names[pred]) == bece.top_label_ece(
        y, conf, y_pred=pred)


def test_fixed_labels_pin_the_first_chunks_classes():
    prob = np.array([[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.1, 0.2, 0.7]])
    assert fixed_labels(["b", "a", "c"], prob, None, None).tolist() == ["a", "b", "c"]
    assert fixed_labels([0, 2, 1], prob, None, None) is None
    assert fixed_labels(["b", "a"], [0.3, 0.4], None, None) is None
    # a later chunk must use them: a new value is refused, named
    with pytest.raises(ValueError, match=re.escape("not in labels: ['d']")):
        class_indices(["a", "d", "c"], None, 3, 3, labels=["a", "b", "c"])


# ------------------------------------------------------------------ logits
def test_from_logits_is_the_float64_softmax_and_sigmoid(rng):
    logits = rng.normal(scale=4.0, size=(700, 6)).astype(np.float32)
    y = rng.integers(0, 6, 700)
    z, conf = outcomes(y, logits, from_logits=True)
    prob = softmax(logits.astype(np.float64), axis=1)
    assert np.array_equal(z, prob.argmax(axis=1) == y)
    np.testing.assert_allclose(conf, prob.max(axis=1), rtol=1e-14)
    # triples: the softmax probability of y_pred
    pred = rng.integers(0, 6, 700)
    _, own = outcomes(y, logits, y_pred=pred, from_logits=True)
    np.testing.assert_allclose(own, prob[np.arange(700), pred], rtol=1e-13)
    # binary: sigmoid, e.g. scikit-learn's decision_function
    x = rng.normal(scale=3.0, size=500)
    yb = (rng.uniform(size=500) < expit(x)).astype(int)
    zb, pb = outcomes(yb, x, from_logits=True)
    assert np.array_equal(pb, expit(x)) and np.array_equal(zb, yb)
    assert bece.classwise_ece(y, logits, from_logits=True) == pytest.approx(
        bece.classwise_ece(y, prob), rel=1e-12)


def test_extreme_logits_warn_of_nothing():
    logits = np.array([[1e4, -1e4, 0.0], [-3e3, 5e3, 5e3]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        z, conf = outcomes([0, 1], logits, from_logits=True)
        _, p = outcomes([0, 1], np.array([-1e4, 1e4]), from_logits=True)
    assert conf.tolist() == [1.0, 0.5] and p.tolist() == [0.0, 1.0]


def test_softmax_of_logits_makes_no_float64_copy_of_the_matrix(rng):
    """20,000 x 500 float32 logits (40 MB): a float64 copy would be 80 MB;
    block by block the peak stays at a few MB."""
    logits = rng.normal(size=(20_000, 500)).astype(np.float32)
    tracemalloc.start()
    try:
        pred, conf, _ = softmax_rows(logits)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8e6, peak
    np.testing.assert_allclose(conf[:50], softmax(logits[:50].astype(np.float64), axis=1).max(1),
                               rtol=1e-14)


@pytest.mark.parametrize(
    "y_prob,message",
    [
        ([-1.2, 0.3], "it looks like logits (scores of any sign): pass from_logits=True"),
        ([[2.0, -1.0], [0.5, 0.5]], "row 0, column 0: 2.0"),
        ([[2.0, -1.0], [0.5, 0.5]], "it looks like logits"),
        ([35.0, 80.0], "if these are logits, pass from_logits=True"),
        ([35.0, 80.0], "if percentages, divide by 100"),
    ],
)
def test_out_of_range_probabilities_get_a_hint(y_prob, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        outcomes([0, 1], y_prob)


def test_nan_logits_are_named():
    with pytest.raises(ValueError, match=re.escape("y_prob (logits) contains NaN: 1 value(s) "
                                                   "(row 1, column 0: nan)")):
        outcomes([0, 1], np.array([[1.0, 2.0], [np.nan, 0.0]]), from_logits=True)


# -------------------------------------------------------- row-sum tolerance
def test_rounded_rows_need_row_sum_tol_and_are_used_as_given(multiclass):
    y, prob = multiclass
    rounded = np.round(prob, 4)
    assert np.abs(rounded.sum(axis=1) - 1).max() > 1e-6  # some rows are off
    with pytest.raises(ValueError, match=r"accept them as they are with row_sum_tol=0\.000"):
        CalibrationStats.from_arrays(y, rounded)
    s = CalibrationStats.from_arrays(y, rounded, row_sum_tol=1e-3)
    # not renormalised: the statistics of the rounded rows' maxima
    z = rounded.argmax(axis=1) == y
    conf = rounded.max(axis=1)
    _same_stats(s, CalibrationStats.from_outcomes(z, conf, s.binning))
    assert s.sum_p.sum() == pytest.approx(conf.sum(), rel=1e-14)


@pytest.mark.parametrize("tol", [-1e-3, 1.0, np.nan, "1e-3", True])
def test_bad_row_sum_tol(tol):
    with pytest.raises(ValueError, match="row_sum_tol must be a number in"):
        outcomes([0, 1], [[0.5, 0.5], [0.4, 0.6]], row_sum_tol=tol)


# -------------------------------------------------------------------- kind
def test_statistics_know_how_the_predictions_were_read(multiclass):
    y, prob = multiclass
    a = CalibrationStats.from_arrays(y[:300], prob[:300])
    b = CalibrationStats.from_arrays(y[300:], prob[300:])
    assert a.kind == b.kind == (a + b).kind == sum([a, b]).kind == "top-label"
    binary = CalibrationStats.from_arrays((y == 0).astype(int), prob[:, 0])
    assert binary.kind == "binary"
    assert CalibrationStats.from_arrays(y, prob.max(1), y_pred=prob.argmax(1)).kind == "triples"
    with pytest.raises(ValueError, match="cannot add CalibrationStats of top-label predictions "
                                         "to binary ones"):
        a + binary
    unknown = CalibrationStats(a.binning, a.counts, a.sum_p, a.sum_p2)
    assert unknown.kind is None and (unknown + a).kind == "top-label"
    with pytest.raises(ValueError, match="kind must be one of"):
        CalibrationStats(a.binning, a.counts, a.sum_p, a.sum_p2, kind="multiclass")
