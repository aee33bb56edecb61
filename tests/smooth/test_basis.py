"""bece._smooth.basis: the logit of the confidences, clipped for the curve only."""

from __future__ import annotations

import numpy as np
from scipy import special

from bece._smooth.basis import logit_confidence


def test_logit_clip_only_affects_the_curve():
    x = logit_confidence(np.array([0.0, 0.5, 1.0]))
    np.testing.assert_allclose(x, [special.logit(1e-6), 0.0, special.logit(1 - 1e-6)])
