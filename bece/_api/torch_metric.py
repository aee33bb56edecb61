"""torchmetrics metrics whose state is bece's mergeable statistics.

A deep-learning evaluation loop sees its predictions batch by batch, often
split over processes. These metrics follow torchmetrics' conventions
(``update(preds, target)``, ``compute()``, ``n_bins``, ``norm``,
``ignore_index``; probabilities or logits, told apart as torchmetrics tells
them: values outside [0, 1] are logits, passed through a sigmoid or a
softmax in float64), and keep as state the statistics bece's models read,
in int64 tensors (counts, and sums as exact limbs, :mod:`bece._stats.exact`)
whose size grows with the number of bins, never with the number of
predictions:

* per ECE bin, the counts of correct and incorrect predictions and the sums
  of the confidences and of their squares (:class:`bece.CalibrationStats`
  in the bins of ``n_bins``), from which :meth:`compute` gives the plug-in
  calibration error as torchmetrics' ``BinaryCalibrationError`` and
  ``MulticlassCalibrationError`` define it (``norm``: ``"l1"`` the ECE,
  ``"l2"`` the root of the weighted mean squared gap, ``"max"`` the MCE);
* the same in the fine sub-cells of the smooth model
  (:meth:`bece.SmoothModel.fine_binning`), from which :meth:`posterior`
  gives bece's default posterior of the ECE.

Every state is summed across processes (``dist_reduce_fx="sum"``), so the
metrics work under DDP: the synced statistics are those of all the
predictions, counts and sums exactly, whatever the number of processes and
the order of the batches. A batch is copied to host memory and binned by
bece's own statistics pass (the array path), so ``compute()`` equals
``bece.expected_calibration_error`` on all the predictions, to the last bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

try:
    import torch
    from torchmetrics import Metric
except ImportError as exc:  # pragma: no cover - the default install has no torch
    raise ImportError("bece.torch needs PyTorch and torchmetrics: pip install 'bece[torch]'"
                      ) from exc

from .._metrics.binned import plugin_ece, plugin_mce
from .._metrics.l2 import l2_from_bin_means
from .._posteriors import BinnedModel, SmoothModel
from .._stats import exact
from .._stats.binning import make_binning
from .._stats.calibration_stats import CalibrationStats

__all__ = ["BinaryCalibrationError", "ClasswiseCalibrationError", "MulticlassCalibrationError"]

NORMS = ("l1", "l2", "max")


def _check_options(n_bins: Any, norm: Any, ignore_index: Any) -> None:
    """``ValueError`` naming ``n_bins``, ``norm`` or ``ignore_index`` when bad."""
    if isinstance(n_bins, bool) or not isinstance(n_bins, int) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}")
    if norm not in NORMS:
        raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
    if ignore_index is not None and (isinstance(ignore_index, bool)
                                     or not isinstance(ignore_index, int)):
        raise ValueError(f"ignore_index must be an integer or None, got {ignore_index!r}")


def _check_classes(num_classes: Any) -> int:
    if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 2:
        raise ValueError(f"num_classes must be an integer >= 2, got {num_classes!r}")
    return num_classes


def _class_probabilities(preds: Any, target: Any, k: int,
                         ignore_index: int | None) -> tuple[np.ndarray, np.ndarray]:
    """A batch of (n, K) ``preds`` and (n,) ``target`` on the host: rows of
    ``ignore_index`` left out, logits (any value outside [0, 1]) through a
    softmax in float64, targets checked as class indices."""
    prob = _as_host(preds, "preds").astype(np.float64)
    y = _as_host(target, "target").reshape(-1)
    if prob.ndim != 2 or prob.shape[1] != k or prob.shape[0] != y.size:
        raise ValueError(f"preds must have shape (n, {k}) with n = {y.size} targets, got "
                         f"{tuple(prob.shape)}")
    if ignore_index is not None:
        keep = y != ignore_index
        prob, y = prob[keep], y[keep]
    if np.any((prob < 0) | (prob > 1)) and np.all(np.isfinite(prob)):
        z = prob - prob.max(axis=1, keepdims=True)  # logits: softmax in float64
        prob = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    bad = (y < 0) | (y >= k)
    if bad.any():
        raise ValueError(f"target must hold class indices in 0..{k - 1}, got {y[bad][:5].tolist()}")
    return prob, y


def _plugin(stats: CalibrationStats, norm: str) -> float:
    """torchmetrics' calibration error of the bins, by bece's plug-in of statistics:
    l1 the ECE, l2 the root of the weighted mean squared gap, max the MCE (0 with
    no predictions, as an empty sum)."""
    if stats.n == 0:
        return 0.0
    if norm == "l1":
        return plugin_ece(stats)
    if norm == "max":
        return plugin_mce(stats)
    counts = stats.bin_counts
    full = counts > 0
    return l2_from_bin_means(counts[full] / stats.n, stats.confidence[full],
                             stats.accuracy[full], counts[full].astype(np.float64))


class _StatisticsMetric(Metric):
    """The states and their use, shared by the binary and multiclass metrics."""

    is_differentiable = False
    higher_is_better = False
    full_state_update = False
    #: how the statistics read the predictions (:attr:`bece.CalibrationStats.kind`)
    _kind = "binary"

    def __init__(self, n_bins: int = 15, norm: str = "l1", ignore_index: int | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        _check_options(n_bins, norm, ignore_index)
        self.n_bins, self.norm, self.ignore_index = n_bins, norm, ignore_index
        self._binned = BinnedModel(n_bins=n_bins)
        self._smooth = SmoothModel(n_bins=n_bins)
        self._binnings = {"bins": make_binning(None, n_bins, "uniform"),
                          "fine": self._smooth.fine_binning()}
        for name, binning in self._binnings.items():
            size = binning.n_bins
            self.add_state(f"{name}_counts", torch.zeros(2, size, dtype=torch.int64),
                           dist_reduce_fx="sum")
            self.add_state(f"{name}_sums", torch.zeros(2, exact.N_LIMBS, size, dtype=torch.int64),
                           dist_reduce_fx="sum")

    def _add(self, y: np.ndarray, p: np.ndarray) -> None:
        try:
            both = [(name, model.statistics(y, p))
                    for name, model in (("bins", self._binned), ("fine", self._smooth))]
        except ValueError as exc:  # bece's message, in the metric's argument names
            raise ValueError(str(exc).replace("y_prob", "preds").replace("y_true", "target")
                             ) from None
        for name, s in both:
            for part, value in (("counts", s.counts), ("sums", s._exact)):
                state = getattr(self, f"{name}_{part}")
                state += torch.from_numpy(np.array(value, dtype=np.int64)).to(state.device)

    def _stats(self, name: str) -> CalibrationStats:
        return CalibrationStats._computed(self._binnings[name],
                                          _host(getattr(self, f"{name}_counts")),
                                          _host(getattr(self, f"{name}_sums")), self._kind)

    def statistics(self) -> CalibrationStats:
        """The synced statistics in the ECE bins (a :class:`bece.CalibrationStats`)."""
        return self._stats("bins")

    def compute(self) -> Any:  # torch.Tensor
        """The plug-in calibration error (``norm``) of every prediction so far, as a
        float64 scalar tensor."""
        return torch.tensor(_plugin(self.statistics(), self.norm), dtype=torch.float64)

    def posterior(self, *, num_samples: int = 10_000, seed: int = 0) -> Any:
        """bece's default posterior of the ECE (:func:`bece.bayesian_ece`'s smooth model,
        from the fine statistics), on the synced statistics of every prediction so far."""
        with self.sync_context():  # every process's statistics, then the local ones back
            fine = self._stats("fine")
        if fine.n == 0:
            raise ValueError("no predictions yet: call update() first")
        return self._smooth.posterior(fine, num_samples=num_samples, seed=seed)


def _host(t: Any) -> np.ndarray:
    """An int64 state on the host."""
    return t.detach().to("cpu", torch.int64).numpy()


def _as_host(x: Any, name: str) -> np.ndarray:
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    return x.detach().to("cpu").numpy()


class BinaryCalibrationError(_StatisticsMetric):
    """Calibration error of P(y = 1), torchmetrics' ``BinaryCalibrationError`` with bece's posterior.

    Parameters
    ----------
    n_bins : int, default 15
        Equal-width bins of [0, 1].
    norm : {"l1", "l2", "max"}, default "l1"
        The plug-in :meth:`compute` gives (torchmetrics' ``norm``).
    ignore_index : int, optional
        Predictions whose target is this value are left out.
    **kwargs
        torchmetrics' ``Metric`` options (``dist_sync_on_step``, ...).

    Notes
    -----
    ``update(preds, target)``: ``preds`` of shape (n,) (or any shape, flattened
    with ``target``) holding P(y = 1), or logits when any lies outside [0, 1];
    ``target`` 0/1. ``compute()``: the plug-in; ``posterior()``: bece's.

    Examples
    --------
    >>> import numpy as np, torch
    >>> from bece.torch import BinaryCalibrationError
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p).astype(np.int64)
    >>> metric = BinaryCalibrationError(n_bins=10)
    >>> for part in np.array_split(np.arange(2000), 4):      # four batches
    ...     metric.update(torch.tensor(p[part]), torch.tensor(y[part]))
    >>> import bece
    >>> bool(abs(float(metric.compute()) - bece.expected_calibration_error(y, p, n_bins=10)) < 1e-12)
    True
    >>> metric.posterior(num_samples=1000).stats.n
    2000
    """

    def update(self, preds: Any, target: Any) -> None:
        """Add a batch: ``preds`` P(y = 1) or logits, ``target`` 0/1, same number of elements."""
        p = _as_host(preds, "preds").astype(np.float64).reshape(-1)
        y = _as_host(target, "target").reshape(-1)
        if p.size != y.size:
            raise ValueError(f"preds and target must have as many elements, got {p.size} and "
                             f"{y.size}")
        if self.ignore_index is not None:
            keep = y != self.ignore_index
            p, y = p[keep], y[keep]
        if p.size == 0:
            return
        if np.any((p < 0) | (p > 1)) and np.all(np.isfinite(p)):
            p = 1.0 / (1.0 + np.exp(-p))  # logits, as torchmetrics reads them
        self._add(y, p)


class MulticlassCalibrationError(_StatisticsMetric):
    """Top-label calibration error, torchmetrics' ``MulticlassCalibrationError`` with bece's posterior.

    Parameters
    ----------
    num_classes : int
        K, the columns of ``preds``.
    n_bins, norm, ignore_index, **kwargs
        As :class:`BinaryCalibrationError`.

    Notes
    -----
    ``update(preds, target)``: ``preds`` of shape (n, K), probabilities or
    logits (softmax applied, in float64, when any lies outside [0, 1]);
    ``target`` class indices 0..K-1. The confidence is the largest
    probability, correct when its class is the target (top-label, as
    torchmetrics and :func:`bece.bayesian_ece` read (n, K) input).

    Examples
    --------
    >>> import torch
    >>> from bece.torch import MulticlassCalibrationError
    >>> metric = MulticlassCalibrationError(num_classes=3, n_bins=5)
    >>> logits = torch.tensor([[2.0, 0.1, -1.0], [0.2, 0.3, 1.5], [1.0, 1.0, 0.0]])
    >>> metric.update(logits, torch.tensor([0, 2, 1]))      # logits: softmax in float64
    >>> # one prediction per bin: (|1 - 0.834| + |1 - 0.635| + |0 - 0.422|) / 3
    >>> metric.statistics().n, round(float(metric.compute()), 4)
    (3, 0.3177)
    """

    _kind = "top-label"

    def __init__(self, num_classes: int, n_bins: int = 15, norm: str = "l1",
                 ignore_index: int | None = None, **kwargs: Any) -> None:
        super().__init__(n_bins=n_bins, norm=norm, ignore_index=ignore_index, **kwargs)
        self.num_classes = _check_classes(num_classes)

    def update(self, preds: Any, target: Any) -> None:
        """Add a batch: ``preds`` (n, K) probabilities or logits, ``target`` (n,) class indices."""
        prob, y = _class_probabilities(preds, target, self.num_classes, self.ignore_index)
        if y.size == 0:
            return
        conf = prob.max(axis=1)
        correct = (prob.argmax(axis=1) == y).astype(np.int64)
        self._add(correct, conf)


class ClasswiseCalibrationError(Metric):
    """Classwise calibration error (Kull et al. 2019), as :func:`bece.classwise_ece`.

    The mean over the K classes of the calibration error of :math:`p_k`
    against :math:`[y = k]` in ``n_bins`` equal-width bins, every prediction
    counting in every class. The state is, per class and bin, the count, the
    number of targets of that class and the sums of :math:`p_k` and
    :math:`p_k^2` (int64, the sums as exact limbs; summed across processes).

    Parameters
    ----------
    num_classes : int
        K, the columns of ``preds``.
    n_bins : int, default 15
    norm : {"l1", "l2", "max"}, default "l1"
        Each class's error as torchmetrics' ``norm`` (l1: the ECE), then the
        mean over the classes.
    ignore_index : int, optional
        Predictions whose target is this value are left out.
    **kwargs
        torchmetrics' ``Metric`` options.

    Notes
    -----
    There is no posterior here: bece's models are of one confidence per
    prediction. :meth:`class_statistics` gives each class's one-vs-rest
    statistics, whose binned posterior :func:`bece.posterior_ece` gives.

    Examples
    --------
    >>> import numpy as np, torch
    >>> import bece
    >>> from bece.torch import ClasswiseCalibrationError
    >>> prob = np.array([[0.9, 0.1], [0.8, 0.2], [0.3, 0.7]])
    >>> metric = ClasswiseCalibrationError(num_classes=2, n_bins=2)
    >>> metric.update(torch.tensor(prob), torch.tensor([0, 1, 1]))
    >>> round(float(metric.compute()), 12), round(bece.classwise_ece([0, 1, 1], prob, n_bins=2), 12)
    (0.333333333333, 0.333333333333)
    """

    is_differentiable = False
    higher_is_better = False
    full_state_update = False

    def __init__(self, num_classes: int, n_bins: int = 15, norm: str = "l1",
                 ignore_index: int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        _check_options(n_bins, norm, ignore_index)
        self.num_classes, self.n_bins, self.norm = _check_classes(num_classes), n_bins, norm
        self.ignore_index = ignore_index
        self._binning = make_binning(None, n_bins, "uniform")
        for name in ("count", "hits"):
            self.add_state(name, torch.zeros(num_classes, n_bins, dtype=torch.int64),
                           dist_reduce_fx="sum")
        self.add_state("sums", torch.zeros(2, num_classes, exact.N_LIMBS, n_bins,
                                           dtype=torch.int64), dist_reduce_fx="sum")

    def update(self, preds: Any, target: Any) -> None:
        """Add a batch: ``preds`` (n, K) probabilities or logits, ``target`` (n,) class indices."""
        k, m = self.num_classes, self.n_bins
        prob, y = _class_probabilities(preds, target, k, self.ignore_index)
        if y.size == 0:
            return
        if not np.all((prob >= 0) & (prob <= 1)):
            raise ValueError("preds must be probabilities in [0, 1] or finite logits")
        cell = ((np.arange(k) * m)[None, :]
                + self._binning.index(prob.ravel()).reshape(prob.shape)).ravel()
        hit = (y[:, None] == np.arange(k)[None, :]).ravel()
        p = prob.ravel()
        adds = {
            "count": np.bincount(cell, minlength=k * m).reshape(k, m),
            "hits": np.bincount(cell[hit], minlength=k * m).reshape(k, m),
            "sums": np.stack([exact.cell_sums(cell, v, k * m).reshape(exact.N_LIMBS, k, m)
                              .transpose(1, 0, 2) for v in (p, p * p)]),
        }
        for name, add in adds.items():
            state = getattr(self, name)
            state += torch.from_numpy(add.astype(np.int64)).to(state.device)

    def class_statistics(self) -> tuple[CalibrationStats, ...]:
        """Each class's one-vs-rest statistics: :math:`p_k` against :math:`[y = k]`."""
        count, hits, sums = _host(self.count), _host(self.hits), _host(self.sums)
        return tuple(CalibrationStats._computed(self._binning,
                                                np.stack([count[j] - hits[j], hits[j]]),
                                                sums[:, j], "binary")
                     for j in range(self.num_classes))

    def compute(self) -> Any:  # torch.Tensor
        """The mean over the classes of each class's calibration error (``norm``)."""
        stats = self.class_statistics()
        if stats[0].n == 0:
            raise ValueError("no predictions yet: call update() first")
        return torch.tensor(float(np.mean([_plugin(s, self.norm) for s in stats])),
                            dtype=torch.float64)
