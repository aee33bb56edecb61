"""bece._io.paired: two prediction files read side by side in chunks into PairedStats."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import special

from bece import PairedStats
from bece._io.paired import paired_file_statistics
from bece._stats import make_binning
from bece.smooth import fine_binning


def _files(tmp_path, n=500, k=3, seed=0):
    rng = np.random.default_rng(seed)
    lg = 2.0 * rng.standard_normal((n, k))
    y = np.array([rng.choice(k, p=row) for row in special.softmax(lg, axis=1)])
    qa = special.softmax(lg / 0.7, axis=1)
    qb = special.softmax(lg + rng.standard_normal((n, k)), axis=1)
    a, b = tmp_path / "a.csv", tmp_path / "b.parquet"
    pd.DataFrame({"y_true": y, **{f"p_{j}": qa[:, j] for j in range(k)}}).to_csv(
        a, index=False, float_format="%.17g")
    pd.DataFrame({"y_true": y, **{f"p_{j}": qb[:, j] for j in range(k)}}).to_parquet(
        b, row_group_size=90)
    return y, qa, qb, a, b


@pytest.mark.parametrize("batch_size", [7, 64, 10_000])
def test_chunks_of_two_formats_equal_the_whole_arrays(tmp_path, batch_size):
    """A CSV and a Parquet file (row groups of 90) read in batches that do not
    line up: the joint statistics equal PairedStats.from_arrays on the whole
    arrays, counts exactly and sums to float64 rounding."""
    y, qa, qb, a, b = _files(tmp_path)
    fine = fine_binning(10)
    fs = paired_file_statistics(a, b, binning_a=fine, binning_b=fine, batch_size=batch_size)
    whole = PairedStats.from_arrays(y, qa, qb, binning=fine)
    assert fs.kind == "top-label" and fs.n_classes == 3 and fs.sources == (str(a), str(b))
    np.testing.assert_array_equal(fs.stats.keys, whole.keys)
    np.testing.assert_array_equal(fs.stats.counts, whole.counts)
    for f in ("sum_p_a", "sum_p_b", "sum_p2_a", "sum_p2_b"):
        np.testing.assert_allclose(getattr(fs.stats, f), getattr(whole, f), rtol=1e-12)
    assert (~whole.cells()["same"]).any()


def test_files_that_differ_are_refused(tmp_path):
    y, qa, qb, a, _ = _files(tmp_path)
    bins = make_binning(None, 10)
    y2 = y.copy()
    y2[[130, 400]] = (y2[[130, 400]] + 1) % 3
    c = tmp_path / "c.csv"
    pd.DataFrame({"y_true": y2, **{f"p_{j}": qb[:, j] for j in range(3)}}).to_csv(c, index=False)
    with pytest.raises(ValueError, match=r"y_true differs in 2 of 500 rows \(first at row 130\)"):
        paired_file_statistics(a, c, binning_a=bins, binning_b=bins, batch_size=50)
    pd.DataFrame({"y_true": y[:480], **{f"p_{j}": qb[:480, j] for j in range(3)}}).to_csv(c, index=False)
    with pytest.raises(ValueError, match=f"{a} has 500 rows but {c} has 480"):
        paired_file_statistics(a, c, binning_a=bins, binning_b=bins, batch_size=50)
    with pytest.raises(ValueError, match=f"{c} has 480 rows but {a} has 500"):
        paired_file_statistics(c, a, binning_a=bins, binning_b=bins, batch_size=50)
    pd.DataFrame({"y_true": y, "y_prob": qb[:, 0]}).to_csv(c, index=False)
    with pytest.raises(ValueError, match="holds top-label predictions but .* holds binary"):
        paired_file_statistics(a, c, binning_a=bins, binning_b=bins)
    bad = qb.copy()
    bad[321, 0] = 1.5
    pd.DataFrame({"y_true": y, **{f"p_{j}": bad[:, j] for j in range(3)}}).to_csv(c, index=False)
    with pytest.raises(ValueError, match=rf"{c}: .*row 321"):
        paired_file_statistics(a, c, binning_a=bins, binning_b=bins, batch_size=100)
