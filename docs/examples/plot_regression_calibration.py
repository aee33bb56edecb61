"""
Calibration of regression forecasts
===================================

Gaussian forecasts whose spread is too small (std 0.8 where the truth has 1):
the probability integral transform (PIT), the Bayesian calibration error of
Kuleshov et al. (2018) with its interval, and the calibration curve with its
90% band.
"""

import matplotlib.pyplot as plt
import numpy as np

from bece.plots import plot_calibration_curve
from bece.regression import bayesian_calibration_error, pit, pit_calibration_test

rng = np.random.default_rng(0)
mu = rng.normal(size=1000)
y = mu + rng.normal(size=1000)  # the truth: N(mu, 1)
u = pit(y, mean=mu, std=0.8)  # the forecasts: N(mu, 0.8^2), too sure

r = bayesian_calibration_error(u, seed=0)
lo, hi = r.interval(0.9)
print(f"calibration error {r.mean:.3f}, 90% interval [{lo:.3f}, {hi:.3f}]")
print(pit_calibration_test(u, seed=0))

# %%
# An S-shaped curve: too few targets below the low quantiles and too many
# below the high ones, the signature of intervals that are too narrow.
plot_calibration_curve(r)
plt.show()
