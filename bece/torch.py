"""PyTorch and Lightning: torchmetrics metrics of calibration with bece's posterior.

:class:`BinaryCalibrationError` and :class:`MulticlassCalibrationError`
(top-label) follow torchmetrics' metrics of the same names (``update(preds, target)``,
``compute()``, ``n_bins``, ``norm``, ``ignore_index``; probabilities or
logits) and keep bece's mergeable statistics as their state, in float64,
summed across processes under DDP: ``compute()`` gives the plug-in
calibration error, ``posterior()`` bece's default posterior of the ECE from
the same synced statistics, ``statistics()`` the statistics themselves.
:class:`ClasswiseCalibrationError` gives the classwise ECE
(:func:`bece.classwise_ece`) from per-class statistics.

Needs the optional extra: ``pip install 'bece[torch]'`` (PyTorch and
torchmetrics); importing this module without them raises ``ImportError``
saying so.
"""

from ._api.torch_metric import (
    BinaryCalibrationError,
    ClasswiseCalibrationError,
    MulticlassCalibrationError,
)

__all__ = ["BinaryCalibrationError", "ClasswiseCalibrationError", "MulticlassCalibrationError"]
