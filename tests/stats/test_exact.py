"""bece._stats.exact: limb sums against exact rational arithmetic
(fractions.Fraction), hand-computed limbs, and the files that carry them."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest

from bece import CalibrationStats, PairedStats
from bece._stats import exact


def _truncated(x: float) -> Fraction:
    """x read to 78 fractional bits, as the limbs read it (x >= 0)."""
    return Fraction(math.floor(Fraction(x) * 2**78), 2**78)


def test_hand_computed_limbs():
    # 0.75 = 0.75 * 2**26 units of the first limb; 1 + 2**-52: integer part 1 and
    # one unit of the second limb (2**-52); 2.5: integer part 2; 2**-60: 2**18
    # units of the third limb (2**-78)
    got = exact.of_floats(np.array([0.75, 1 + 2.0**-52, 2.5, 2.0**-60, 0.0]))
    assert got.T.tolist() == [[0, 3 << 24, 0, 0], [1, 0, 1, 0], [2, 1 << 25, 0, 0],
                              [0, 0, 0, 1 << 18], [0, 0, 0, 0]]
    # the carry: 2**26 in the last limb is one unit of the limb above
    assert exact.normalise(np.array([[0], [0], [0], [1 << 26]])).ravel().tolist() == [0, 0, 1, 0]
    assert exact.normalise(np.array([[0], [0], [0], [-1]])).ravel().tolist() == \
        [-1, (1 << 26) - 1, (1 << 26) - 1, (1 << 26) - 1]


def test_sums_equal_exact_rational_arithmetic(rng):
    """Per cell, the limb sum is the Fraction sum of the terms read to 2**-78,
    and its float value the nearest float64 to it within one unit in the last
    place; permuting or splitting the terms changes nothing."""
    n, cells = 20_000, 5
    x = np.r_[rng.uniform(size=n - 6), 0.0, 1.0, 5e-324, 1e-30, 1 - 2.0**-53, 0.1]
    x[:100] = rng.uniform(size=100) ** 40  # tiny values
    cell = rng.integers(0, cells, x.size)
    got = exact.cell_sums(cell, x, cells)
    for j in range(cells):
        terms = x[cell == j]
        true = sum((_truncated(float(t)) for t in terms), Fraction(0))
        limbs = got[:, j].tolist()
        assert Fraction(limbs[0]) + Fraction(limbs[1], 2**26) + Fraction(limbs[2], 2**52) \
            + Fraction(limbs[3], 2**78) == true
        value = exact.value(got[:, j:j + 1])[0]
        assert abs(Fraction(value) - true) <= Fraction(np.spacing(float(true)))
        assert abs(value - math.fsum(terms)) <= 2 * np.spacing(math.fsum(terms))
    order = rng.permutation(x.size)
    assert np.array_equal(exact.cell_sums(cell[order], x[order], cells), got)
    halves = exact.add(exact.cell_sums(cell[:777], x[:777], cells),
                       exact.cell_sums(cell[777:], x[777:], cells))
    assert np.array_equal(halves, got)


def test_floats_come_back_as_they_were(rng):
    x = np.r_[rng.uniform(0, 1000, size=1000), -rng.uniform(0, 3, size=1000), 0.0, 1.7, -0.2]
    assert np.array_equal(exact.value(exact.of_floats(x)), x)
    with pytest.raises(ValueError, match="below 2\\*\\*62"):
        exact.of_floats(np.array([2.0**63]))


def test_statistics_files_carry_the_exact_sums(rng):
    p = rng.uniform(size=3000)
    y = (rng.uniform(size=3000) < p).astype(int)
    whole = CalibrationStats.from_arrays(y, p, n_bins=10)
    parts = [CalibrationStats.from_dict(json.loads(json.dumps(
        CalibrationStats.from_arrays(y[s], p[s], n_bins=10).to_dict())))
        for s in np.array_split(np.arange(3000), 7)]
    assert sum(parts) == whole  # merged from files: the whole data's bits
    data = whole.to_dict()
    assert np.array(data["exact_sums"]).shape == (2, 4, 10)
    old = {k: v for k, v in data.items() if k != "exact_sums"}  # a file without them still reads
    assert np.array_equal(CalibrationStats.from_dict(old).sum_p, whole.sum_p)
    edited = json.loads(json.dumps(data))
    edited["sum_p"][3] += 1e-9
    with pytest.raises(ValueError, match="exact_sums disagree with the float sums"):
        CalibrationStats.from_dict(edited)
    edited = json.loads(json.dumps(data))
    edited["exact_sums"][0][3][0] += 1 << 26
    with pytest.raises(ValueError, match="exact_sums are not in canonical form"):
        CalibrationStats.from_dict(edited)
    edited["exact_sums"] = [[1.5]]
    with pytest.raises(ValueError, match=r"exact_sums must be integers of shape \(2, 4, 10\)"):
        CalibrationStats.from_dict(edited)


def test_paired_statistics_add_exactly(rng):
    n = 2000
    y = rng.integers(0, 2, n)
    pa, pb = rng.uniform(size=n), rng.uniform(size=n)
    whole = PairedStats.from_arrays(y, pa, pb, n_bins=6)
    parts = [PairedStats.from_dict(json.loads(json.dumps(
        PairedStats.from_arrays(y[s], pa[s], pb[s], n_bins=6).to_dict())))
        for s in np.array_split(rng.permutation(n), 5)]
    assert sum(parts) == whole
    assert whole.stats_a == CalibrationStats.from_arrays(y, pa, n_bins=6)
    assert whole.stats_b == CalibrationStats.from_arrays(y, pb, n_bins=6)
