r"""Has calibration drifted from a reference window? A test per window.

Within each ECE bin m, a window's calibration gap is its observed frequency
minus its mean confidence, :math:`g_{wm} = (o_{wm} - s_{wm}) / n_{wm}`
(:math:`o` the count of y = 1, or of correct predictions; :math:`s` the sum
of confidences; :math:`n` the count). If calibration has not changed, a
window's gaps and the reference's differ by outcome noise only:

.. math::

    z_m = \frac{g_{wm} - g_{rm}}{\sqrt{\hat v_m (1/n_{wm} + 1/n_{rm})}},
    \qquad \hat v_m = \hat c_m (1 - \hat c_m), \quad
    \hat c_m = \frac{o_{wm} + o_{rm}}{n_{wm} + n_{rm}},

and :math:`T = \sum_m z_m^2` is approximately :math:`\chi^2_k` over the
:math:`k` bins where both windows hold at least ``min_count`` predictions
(and :math:`\hat v_m > 0`). The window alarms when :math:`P(\chi^2_k \ge T) <
\alpha`. Differences of gaps, not of frequencies: a window whose confidences
move within a bin while staying calibrated does not alarm. The variance is
Bernoulli within the bin at its pooled frequency (the curve taken as flat
within a bin); ``benchmarks/drift_study.py`` measures the false-alarm rate
per window and the run length to a false alarm on stationary streams, and
the detection delay after a drift (documentation: validation, "Drift").
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .._stats.calibration_stats import CalibrationStats

__all__ = ["DEFAULT_ALPHA", "MIN_COUNT", "drift_statistic"]

#: False-alarm rate per window of the default rule.
DEFAULT_ALPHA = 0.01

#: Predictions a bin needs in both windows to count.
MIN_COUNT = 10


def drift_statistic(window: CalibrationStats, reference: CalibrationStats,
                    min_count: int = MIN_COUNT) -> tuple[float, int, float]:
    """:math:`T`, its degrees of freedom k and the p-value :math:`P(\\chi^2_k \\ge T)`
    (module docstring); (0, 0, 1) when no bin has ``min_count`` predictions in both."""
    if window.binning != reference.binning:
        raise ValueError("the window and the reference must share their bins")
    nw, nr = window.bin_counts.astype(np.float64), reference.bin_counts.astype(np.float64)
    ow, orr = window.counts[1].astype(np.float64), reference.counts[1].astype(np.float64)
    c = (ow + orr) / np.maximum(nw + nr, 1.0)
    v = c * (1.0 - c)
    use = (nw >= min_count) & (nr >= min_count) & (v > 0)
    if not use.any():
        return 0.0, 0, 1.0
    gw = (ow[use] - window.sum_p[use]) / nw[use]
    gr = (orr[use] - reference.sum_p[use]) / nr[use]
    z2 = (gw - gr) ** 2 / (v[use] * (1.0 / nw[use] + 1.0 / nr[use]))
    t = float(z2.sum())
    k = int(use.sum())
    return t, k, float(special.chdtrc(k, t))
