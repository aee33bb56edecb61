"""Every entry point that takes y_true reads labels of any type (labels=,
pos_label=) and logits (from_logits=) as it reads 0..K-1 and probabilities:
the same numbers, bit for bit, with the same seed."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit, logit

import bece
from bece._smooth.posterior import smooth_ece

from .conftest import simulate_binary, simulate_multiclass

BINARY = [
    ("expected_calibration_error", lambda y, p, **o: bece.expected_calibration_error(y, p, **o)),
    ("maximum_calibration_error", lambda y, p, **o: bece.maximum_calibration_error(y, p, **o)),
    ("bayesian_ece", lambda y, p, **o: bece.bayesian_ece(y, p, num_samples=300, **o).draws),
    ("bayesian_ece smooth",
     lambda y, p, **o: bece.bayesian_ece(y, p, num_samples=300, model="smooth", **o).draws),
    ("from_arrays", lambda y, p, **o: bece.CalibrationStats.from_arrays(y, p, **o).counts),
    ("compare", lambda y, p, **o: bece.compare(y, p, p ** 1.1, num_samples=200, **o).diff_draws),
    ("calibration_test",
     lambda y, p, **o: bece.calibration_test(y, p, num_resamples=50, num_samples=200, **o).p_value),
]


@pytest.mark.parametrize("name,call", BINARY, ids=[b[0] for b in BINARY])
def test_binary_entry_points_read_labels_and_logits(rng, name, call):
    y, p = simulate_binary(300, rng, power=1.4)
    p = np.clip(p, 1e-6, 1 - 1e-6)  # logit(p) finite
    ref = np.asarray(call(y, p))
    text = np.where(y == 1, "spam", "ham")
    for args, options in [((np.where(y == 1, 1, -1), p), {}),
                          ((text, p), {"pos_label": "spam"}),
                          ((text, p), {"labels": ["ham", "spam"]})]:
        np.testing.assert_array_equal(np.asarray(call(*args, **options)), ref)
    if name != "compare":  # compare's second model, p ** 1.1, is not a sigmoid of the logits
        got = np.asarray(call(y, logit(p), from_logits=True))
        # expit(logit(p)) is p to rounding: the statistics' sums may differ in the last bits
        assert np.allclose(got, ref, rtol=1e-9, atol=1e-12) or name == "from_arrays"
    assert np.allclose(expit(logit(p)), p, rtol=1e-12)


MULTICLASS = [
    ("expected_calibration_error", lambda y, p, **o: bece.expected_calibration_error(y, p, **o)),
    ("top_label_ece", lambda y, p, **o: bece.top_label_ece(y, p, **o)),
    ("classwise_ece", lambda y, p, **o: bece.classwise_ece(y, p, **o)),
    ("bayesian_ece", lambda y, p, **o: bece.bayesian_ece(y, p, num_samples=300, **o).draws),
    ("bayesian_top_label_ece",
     lambda y, p, **o: bece.bayesian_top_label_ece(y, p, num_samples=300, **o).draws),
    ("compare", lambda y, p, **o: bece.compare(y, p, p[:, ::-1], num_samples=200,
                                               **o).diff_draws),
    ("calibration_test",
     lambda y, p, **o: bece.calibration_test(y, p, num_resamples=50, num_samples=200, **o).p_value),
]


@pytest.mark.parametrize("name,call", MULTICLASS, ids=[m[0] for m in MULTICLASS])
def test_multiclass_entry_points_read_text_labels_and_labels(rng, name, call):
    y, prob = simulate_multiclass(300, 3, rng, temperature=1.5)
    ref = np.asarray(call(y, prob))
    names = np.array(["setosa", "versicolor", "virginica"])
    np.testing.assert_array_equal(np.asarray(call(names[y], prob)), ref)
    if name != "compare":  # compare's B reverses the columns: its labels would reverse too
        np.testing.assert_array_equal(np.asarray(call(y + 10, prob, labels=[10, 11, 12])), ref)


def test_the_smooth_model_reads_pairs_as_smooth_ece_does(rng):
    """bayesian_ece(model="smooth") reduces the input to (outcome,
    confidence) pairs before the smooth model: the same draws as
    bece.smooth.smooth_ece on the class probabilities themselves."""
    y, prob = simulate_multiclass(400, 4, rng)
    a = bece.bayesian_ece(y, prob, model="smooth", num_samples=500, seed=3)
    b = smooth_ece(y, prob, num_samples=500, seed=3)
    np.testing.assert_array_equal(a.draws, b.draws)
    assert a.kind == "top-label" and a.stats.kind == "top-label"
    s = bece.posterior_ece(bece.CalibrationStats.from_arrays(
        y, prob, binning=bece.smooth.fine_binning(15)), model="smooth", num_samples=200)
    assert s.kind == "top-label"


def test_jax_and_dask_inputs_take_the_options(rng):
    jnp = pytest.importorskip("jax.numpy")
    da = pytest.importorskip("dask.array")
    y, prob = simulate_multiclass(500, 3, rng)
    names = np.array(["a", "b", "c"])[y]
    prob = prob.astype(np.float32)  # as JAX holds it without x64
    ref = bece.CalibrationStats.from_arrays(y, prob)
    for s in (bece.CalibrationStats.from_arrays(names, jnp.asarray(prob)),
              bece.CalibrationStats.from_arrays(names, da.from_array(prob, chunks=(128, 3)),
                                                labels=["a", "b", "c"])):
        assert np.array_equal(s.counts, ref.counts) and s.kind == "top-label"
        np.testing.assert_allclose(s.sum_p, ref.sum_p, rtol=1e-12)
    with pytest.raises(ValueError, match="pass labels= with the class of each column"):
        bece.CalibrationStats.from_arrays(names, da.from_array(prob, chunks=(128, 3)))
    with pytest.raises(ValueError, match="jax.nn.softmax"):
        bece.CalibrationStats.from_arrays(y, jnp.asarray(prob), from_logits=True)
    yb, p = simulate_binary(300, rng)
    pm = np.where(yb == 1, 1, -1)
    assert np.array_equal(bece.CalibrationStats.from_arrays(pm, jnp.asarray(p)).counts,
                          bece.CalibrationStats.from_arrays(yb, p).counts)


def test_the_smooth_top_label_model_names_text_labels(rng):
    """model="smooth" reads the labels before the model: the draws of the
    same classes as indices, with ``labels`` the class names."""
    from bece._smooth.toplabel import smooth_top_label_ece

    y, prob = simulate_multiclass(300, 3, rng)
    names = np.array(["x", "y", "z"])
    a = bece.bayesian_top_label_ece(names[y], prob, model="smooth", num_samples=200, seed=2)
    b = smooth_top_label_ece(y, prob, num_samples=200, seed=2)
    np.testing.assert_array_equal(a.draws, b.draws)
    assert a.labels.tolist() == names[b.labels].tolist() and a.kind == "top-label"
