"""bece._results.ece: BayesianECE's ArviZ layer and repr."""

from __future__ import annotations

import numpy as np


def test_inference_data_layout(result):
    idata = result.to_inference_data()
    post = idata.posterior
    assert set(post.data_vars) == {"ece", "accuracy", "confidence", "weight"}
    assert post["ece"].dims == ("chain", "draw")
    assert post["accuracy"].dims == ("chain", "draw", "bin")
    assert post.sizes["bin"] == 8 and post.sizes["draw"] == 4000
    np.testing.assert_array_equal(post["ece"].values[0], result.draws)
    np.testing.assert_array_equal(post["confidence"].values[0], result.confidence)
    const = idata.constant_data
    np.testing.assert_array_equal(const["count_correct"].values, result.stats.counts[1])
    np.testing.assert_array_equal(const["count_incorrect"].values, result.stats.counts[0])
    np.testing.assert_array_equal(const["edges"].values, result.stats.edges)
    assert post.attrs["model"] == "binned" and post.attrs["n"] == 400
    # weights are the bin masses of each draw: they sum to one
    np.testing.assert_allclose(post["weight"].sum("bin").values, 1.0, rtol=1e-12)


def test_repr_is_short(result):
    text = repr(result)
    assert text.startswith("BayesianECE(mean=") and "interval90" in text and len(text) < 250
