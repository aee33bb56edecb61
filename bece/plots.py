"""Pictures of calibration posteriors (matplotlib, imported when called).

* :func:`reliability_diagram` -- the posterior calibration curve with its
  credible band (smooth results, the default model), or per-bin bands;
  per-bin dots from the same posterior, sized by count; the diagonal, the
  plug-in points and a strip of bin counts; small multiples of the most
  predicted labels for top-label results.
* :func:`plot_ece_posterior` -- the ECE posteriors of several models side by
  side (forest or density).
* :func:`plot_groups` -- each group's ECE with its interval (``by=``),
  pooled and alone.
* :func:`plot_over_time` -- each window's ECE over time with its band and
  the drift rule's alarms (:func:`bece.drift_test`).
* :func:`plot_comparison` -- a paired :class:`~bece.Comparison`:
  both reliability diagrams and the posterior of the difference.
* :func:`plot_calibration_curve` -- the regression calibration curve
  (observed :math:`P(\\mathrm{PIT} \\le p_j)` against :math:`p_j`) with its band.
* :func:`html_report` -- one self-contained HTML file of a result: its
  text, numbers, figure and the versions that made it.

What the band of a bin is, and why. Bootstrap bands collapse to zero width
on a bin holding one label (every resample has the same accuracy). The
model's own per-bin posterior does nearly the same on sparse bins: its
Dirichlet prior spreads a total weight of one observation over all cells
(:math:`\\alpha = 1/(2M)` per cell, :math:`1/(2LM)` for top-label), so a
priori each bin's accuracy is :math:`\\mathrm{Beta}(\\alpha, \\alpha)`, piled
up at 0 and 1, and one correct label gives a 90% band of [0.80, 1] with 15
bins and [1.00, 1] with 10 labels x 15 bins. That prior is harmless for the
ECE (sparse bins weigh little) but misleading in a picture of per-bin
accuracies. By default (``band_prior=0.5``) the band of bin m is therefore
the equal-tailed ``prob`` interval of

.. math::

    \\mathrm{Beta}(\\tfrac12 + c_{1,m},\\ \\tfrac12 + c_{0,m}),

the Jeffreys interval for a binomial proportion, with its lower end set to 0
when :math:`c_{1,m} = 0` and its upper end to 1 when :math:`c_{0,m} = 0`
(Brown, Cai & DasGupta 2001, whose coverage is close to nominal for any
number of labels): one correct label gives [0.23, 1]. Empty bins get no
band; the count strip shows their 0. Where bins hold many labels this band
and the model's coincide. ``band_prior=None`` draws the model's own band
instead: the quantiles of the posterior draws ``result.accuracy`` of
:math:`q_{1,m}/(q_{0,m}+q_{1,m})`. Results with a calibration curve (the
smooth model) draw the curve's band instead of per-bin bands. Whichever
band is drawn, the dots are medians of the same posterior.

References
----------
Brown, Cai & DasGupta (2001), "Interval estimation for a binomial
proportion", Statistical Science 16(2).

Every function returns the matplotlib object it drew on (an ``Axes``, or a
``Figure`` for multi-panel pictures); pass ``ax=`` to draw into your own
figure. Artists carry labels (``Artist.get_label()``) and the count strip is
the Axes labelled ``"bece counts"`` so that tests and users can find them.
"""

from ._plots.groups import plot_groups, plot_over_time
from ._plots.html_report import html_report
from ._plots.posterior import plot_comparison, plot_ece_posterior
from ._plots.regression import plot_calibration_curve
from ._plots.reliability import reliability_diagram

__all__ = [
    "html_report",
    "plot_calibration_curve",
    "plot_comparison",
    "plot_ece_posterior",
    "plot_groups",
    "plot_over_time",
    "reliability_diagram",
]
