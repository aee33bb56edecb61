"""The plug-in ECE under the posterior predictive: its expected bias.

The plug-in ECE of a test set, :math:`\\frac1n\\sum_c |C_c - S_c|` over the
cells :math:`c` (bins, or (label, bin) pairs for the top-label ECE) with
:math:`C_c` correct predictions out of :math:`n_c` and confidence sum
:math:`S_c`, is biased upwards: noise in :math:`C_c` never cancels inside
the absolute value. For the data at hand the bias is read off the
posterior. Keep the predictions (so :math:`n_c` and :math:`S_c`) and redraw
the outcomes from a posterior draw, whose cell accuracy is :math:`a_c`:
:math:`C_c \\sim \\mathrm{Binomial}(n_c, a_c)`. Then, exactly,

.. math::

    E|C - S| = (n a - S) + 2\\,E[(S - C)_+], \\qquad
    E[(S - C)_+] = S\\,F_{n,a}(k) - n a\\,F_{n-1,a}(k - 1),

with :math:`k = \\lceil S \\rceil - 1` the largest count below :math:`S` and
:math:`F_{n,a}` the Binomial(n, a) distribution function
(``scipy.special.betainc``); the second form uses
:math:`c\\,\\Pr_{n,a}(c) = n a \\Pr_{n-1,a}(c - 1)`. Averaging over posterior
draws gives the expected plug-in, and

    expected bias = E[plug-in ECE | posterior predictive] - posterior mean ECE,

the amount by which the plug-in is expected to exceed the ECE the posterior
reports (:meth:`bece.BayesianECE.plugin_bias`). It explains a plug-in that
lies above the credible interval: with few predictions per cell (many
labels, many bins) the bias is of the order of
:math:`\\sqrt{2 a (1 - a) / (\\pi n_c)}` per cell.

The binomial count is the binned model's own likelihood. Under the smooth
models the predictions of a cell have accuracies that vary a little along
the curve; drawing them at the cell's accuracy adds
:math:`\\sum_j (f_j - a)^2` to the count's variance, small against
:math:`n a (1 - a)` within a bin.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import special

from .._stats.calibration_stats import CalibrationStats

__all__ = [
    "PREDICTIVE_CELLS",
    "PREDICTIVE_DRAWS",
    "expected_absolute_gap",
    "label_cells",
    "label_expected_plugin",
    "predictive_draws",
]

#: Posterior draws the expected plug-in averages over (the first ones: the
#: draws are independent); its Monte Carlo error is well below the
#: posterior sd of the ECE.
PREDICTIVE_DRAWS = 1000
#: At most about this many (draw, cell) terms: with many cells (K = 100
#: labels x 15 bins) fewer draws, never below 100.
PREDICTIVE_CELLS = 500_000


def predictive_draws(num_samples: int, n_cells: int) -> int:
    """How many of ``num_samples`` draws the expected plug-in uses for
    ``n_cells`` non-empty cells."""
    return int(min(num_samples, PREDICTIVE_DRAWS, max(100, PREDICTIVE_CELLS // max(n_cells, 1))))


def expected_absolute_gap(count: np.ndarray, sum_p: np.ndarray,
                          accuracy: np.ndarray) -> np.ndarray:
    """:math:`E|C - S|` for :math:`C \\sim \\mathrm{Binomial}(n, a)`, elementwise
    (module docstring); 0 for an empty cell (n = 0), whatever its accuracy.

    Parameters
    ----------
    count : array_like of int
        :math:`n`, the cell's predictions.
    sum_p : array_like of float
        :math:`S`, their confidence sum (:math:`0 \\le S \\le n`).
    accuracy : array_like of float
        :math:`a`, the cell's accuracy in [0, 1] (NaN allowed where n = 0).
    """
    n, s, a = np.broadcast_arrays(np.asarray(count, dtype=np.float64),
                                  np.asarray(sum_p, dtype=np.float64),
                                  np.asarray(accuracy, dtype=np.float64))
    full = n > 0
    a = np.where(full, np.clip(np.nan_to_num(a), 0.0, 1.0), 0.5)
    k = np.ceil(s) - 1.0  # the largest count below S (-1 when S = 0)
    short = s * _cdf(k, n, a) - n * a * _cdf(k - 1.0, n - 1.0, a)
    return np.where(full, (n * a - s) + 2.0 * short, 0.0)


def _cdf(k: np.ndarray, n: np.ndarray, a: np.ndarray) -> np.ndarray:
    """:math:`F_{n,a}(k)`, the Binomial(n, a) distribution function, for
    integer-valued float arrays: 0 below 0, 1 from n on, else the regularised
    incomplete beta :math:`I_{1-a}(n - k, k + 1)` (``scipy.special.betainc``;
    ``bdtr`` computes the same, six times slower on float arrays)."""
    inside = (k >= 0) & (k < n)
    kk = np.where(inside, k, 0.0)
    nn = np.where(inside, n, 1.0)
    return np.where(inside, special.betainc(nn - kk, kk + 1.0, 1.0 - a),
                    np.where(k >= n, 1.0, 0.0))


def label_cells(label_stats: Sequence[CalibrationStats]) -> tuple[np.ndarray, ...]:
    """The non-empty (label, bin) cells of per-label statistics: their label,
    bin, count and confidence sum, each of shape (C,), labels in order."""
    counts = np.stack([s.bin_counts for s in label_stats])
    lab, bins = np.nonzero(counts)
    return lab, bins, counts[lab, bins], np.stack([s.sum_p for s in label_stats])[lab, bins]


def label_expected_plugin(accuracy: np.ndarray, count: np.ndarray, sum_p: np.ndarray,
                          label: np.ndarray, n_labels: int) -> np.ndarray:
    r"""Each label's expected plug-in ECE, :math:`\frac1{n_l}\sum_{c \in l} E|C_c - S_c|`,
    for each posterior draw.

    Parameters
    ----------
    accuracy : ndarray of shape (S, C)
        Each draw's accuracy of the C cells.
    count, sum_p : ndarray of shape (C,)
        The data's cells: predictions and confidence sum.
    label : ndarray of int, shape (C,)
        The label (0 .. ``n_labels`` - 1) of each cell; one label for the
        pooled ECE.
    n_labels : int

    Returns
    -------
    ndarray of shape (S, n_labels)
        NaN for a label without predictions.
    """
    gaps = expected_absolute_gap(count[None], sum_p[None], accuracy)
    out = np.zeros((gaps.shape[0], n_labels))
    np.add.at(out.T, np.asarray(label, dtype=np.int64), gaps.T)
    n_l = np.bincount(label, weights=np.asarray(count, dtype=np.float64), minlength=n_labels)
    with np.errstate(invalid="ignore", divide="ignore"):
        return out / n_l
