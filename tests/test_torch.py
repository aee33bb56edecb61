"""bece.torch: torchmetrics metrics whose state is bece's statistics (optional extra:
skipped where PyTorch and torchmetrics are not installed; CI's extras stage runs it)."""

from __future__ import annotations

import json
import os
import socket
import sys
import textwrap

import numpy as np
import pytest

torch = pytest.importorskip("torch")
tm = pytest.importorskip("torchmetrics.classification")

import bece  # noqa: E402
from bece.torch import (  # noqa: E402
    BinaryCalibrationError,
    ClasswiseCalibrationError,
    MulticlassCalibrationError,
)

pytestmark = pytest.mark.extras


def _binary(n=5000, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n)
    return (rng.uniform(size=n) < p**1.3).astype(np.int64), p


def _multiclass(n=4000, k=5, seed=1):
    rng = np.random.default_rng(seed)
    logits = rng.normal(0, 2, size=(n, k))
    prob = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    y = np.array([rng.choice(k, p=r) for r in prob])
    return y, prob, logits


@pytest.mark.parametrize("norm", ["l1", "l2", "max"])
def test_binary_plugin_equals_torchmetrics_and_bece(norm):
    y, p = _binary()
    ours = BinaryCalibrationError(n_bins=15, norm=norm)
    theirs = tm.BinaryCalibrationError(n_bins=15, norm=norm)
    for a, b in ((0, 1700), (1700, 3200), (3200, 5000)):  # three batches
        ours.update(torch.tensor(p[a:b]), torch.tensor(y[a:b]))
        theirs.update(torch.tensor(p[a:b], dtype=torch.float32), torch.tensor(y[a:b]))
    got = float(ours.compute())
    assert got == pytest.approx(float(theirs.compute()), rel=2e-5, abs=1e-6)  # float32 there
    # exact sums: three batches give the array path's bits
    if norm == "l1":
        assert got == bece.expected_calibration_error(y, p)
    if norm == "max":
        assert got == bece.maximum_calibration_error(y, p)


def test_multiclass_top_label_from_probabilities_or_logits():
    y, prob, logits = _multiclass()
    a = MulticlassCalibrationError(num_classes=5)
    b = MulticlassCalibrationError(num_classes=5)
    theirs = tm.MulticlassCalibrationError(num_classes=5, n_bins=15)
    for s in np.array_split(np.arange(y.size), 4):
        a.update(torch.tensor(prob[s]), torch.tensor(y[s]))
        b.update(torch.tensor(logits[s]), torch.tensor(y[s]))  # logits: softmax in float64
        theirs.update(torch.tensor(prob[s], dtype=torch.float32), torch.tensor(y[s]))
    expected = bece.expected_calibration_error(y, prob)  # top-label, bece's array path
    assert float(a.compute()) == expected
    assert float(b.compute()) == pytest.approx(expected, rel=1e-9)
    assert float(a.compute()) == pytest.approx(float(theirs.compute()), rel=2e-5, abs=1e-6)


def test_classwise_equals_bece_classwise_ece_and_a_naive_loop():
    y, prob, logits = _multiclass(n=3000, k=4)
    m = ClasswiseCalibrationError(num_classes=4, n_bins=10)
    by_logits = ClasswiseCalibrationError(num_classes=4, n_bins=10)
    for s in np.array_split(np.arange(y.size), 3):
        m.update(torch.tensor(prob[s]), torch.tensor(y[s]))
        by_logits.update(torch.tensor(logits[s]), torch.tensor(y[s]))
    expected = bece.classwise_ece(y, prob, n_bins=10)
    assert float(m.compute()) == pytest.approx(expected, rel=1e-12)  # classwise_ece sums by class
    assert float(by_logits.compute()) == pytest.approx(expected, rel=1e-9)
    # a naive loop: per class, per bin, |sum [y = k] - sum p_k| / n, averaged over classes
    bins = np.minimum((prob * 10).astype(int), 9)
    naive = np.mean([sum(abs(np.sum(y[bins[:, k] == b] == k) - np.sum(prob[bins[:, k] == b, k]))
                         for b in range(10)) / y.size for k in range(4)])
    assert float(m.compute()) == pytest.approx(naive, rel=1e-9)
    stats = m.class_statistics()
    assert len(stats) == 4 and all(s.n == y.size for s in stats)
    assert stats[2].counts[1].sum() == np.sum(y == 2)
    mce = ClasswiseCalibrationError(num_classes=4, n_bins=10, norm="max")
    mce.update(torch.tensor(prob), torch.tensor(y))
    assert float(mce.compute()) == pytest.approx(np.mean([
        bece.maximum_calibration_error((y == k).astype(int), prob[:, k], n_bins=10)
        for k in range(4)]), rel=1e-12)


def test_ignore_index_leaves_those_predictions_out():
    y, p = _binary(2000)
    target = torch.tensor(np.where(np.arange(2000) % 7 == 0, -100, y))
    m = BinaryCalibrationError(ignore_index=-100)
    m.update(torch.tensor(p), target)
    keep = np.arange(2000) % 7 != 0
    assert float(m.compute()) == pytest.approx(
        bece.expected_calibration_error(y[keep], p[keep]), rel=1e-12)
    assert m.statistics().n == keep.sum()


def test_posterior_is_the_default_model_on_the_same_statistics():
    y, p = _binary(3000)
    m = BinaryCalibrationError()
    for s in np.array_split(np.arange(3000), 3):
        m.update(torch.tensor(p[s]), torch.tensor(y[s]))
    model = bece.SmoothModel(n_bins=15)
    direct = model.posterior(model.statistics(y, p), num_samples=2000, seed=3)
    r = m.posterior(num_samples=2000, seed=3)
    assert r.model == direct.model and r.stats.n == 3000
    assert r.stats == direct.stats  # exact sums: batches give the whole data's statistics
    np.testing.assert_array_equal(r.draws, direct.draws)


def test_state_size_is_constant_over_many_updates():
    """10^4 updates of 100 predictions each (10^6 in all): the state is the same
    tensors, of the same size, as after the first."""
    rng = np.random.default_rng(4)
    m = BinaryCalibrationError()

    def size():
        return sum(getattr(m, name).numel() for name in m._defaults)

    m.update(torch.tensor(rng.uniform(size=100)), torch.tensor(rng.integers(0, 2, 100)))
    first = size()
    for _ in range(10_000 - 1):
        m.update(torch.tensor(rng.uniform(size=100)), torch.tensor(rng.integers(0, 2, 100)))
    assert size() == first and m.statistics().n == 1_000_000
    assert all(getattr(m, name).dtype == torch.int64 for name in m._defaults)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="norm must be one of"):
        BinaryCalibrationError(norm="l3")
    with pytest.raises(ValueError, match="n_bins must be a positive integer"):
        BinaryCalibrationError(n_bins=0)
    with pytest.raises(ValueError, match="num_classes must be an integer >= 2"):
        MulticlassCalibrationError(num_classes=1)
    m = MulticlassCalibrationError(num_classes=3)
    with pytest.raises(ValueError, match=r"preds must have shape \(n, 3\)"):
        m.update(torch.rand(4, 2), torch.tensor([0, 1, 2, 0]))
    with pytest.raises(ValueError, match="target must hold class indices in 0..2"):
        m.update(torch.softmax(torch.rand(2, 3), 1), torch.tensor([0, 3]))
    b = BinaryCalibrationError()
    with pytest.raises(ValueError, match="as many elements"):
        b.update(torch.rand(3), torch.tensor([0, 1]))
    with pytest.raises(ValueError, match="preds"):
        b.update(torch.tensor([0.2, float("nan")]), torch.tensor([0, 1]))
    with pytest.raises(ValueError, match="target"):
        b.update(torch.tensor([0.2, 0.3]), torch.tensor([0, 2]))
    with pytest.raises(ValueError, match="no predictions yet"):
        BinaryCalibrationError().posterior()


_WORKER = textwrap.dedent("""
    import json, sys
    import numpy as np
    import torch
    import torch.distributed as dist
    from bece.torch import BinaryCalibrationError

    rank, world, port, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world)
    rng = np.random.default_rng(0)
    p = rng.uniform(size=6000)
    y = (rng.uniform(size=6000) < p ** 1.3).astype(np.int64)
    m = BinaryCalibrationError()
    part = np.array_split(np.arange(6000), world)[rank]
    for s in np.array_split(part, 3):
        m.update(torch.tensor(p[s]), torch.tensor(y[s]))
    value = float(m.compute())
    post = m.posterior(num_samples=1000, seed=5)
    if rank == 0:
        json.dump({"value": value, "n": post.stats.n, "mean": post.mean}, open(out, "w"))
    dist.destroy_process_group()
""")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_processes_with_gloo_equal_one(tmp_path):
    """DDP on CPU: two processes, each with half the predictions; the synced
    compute() and posterior equal one process with all of them, to the last bit."""
    import subprocess

    script = tmp_path / "worker.py"
    script.write_text(_WORKER)
    out = tmp_path / "out.json"
    port = str(_free_port())
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    procs = [subprocess.Popen([sys.executable, str(script), str(r), "2", port, str(out)], env=env)
             for r in range(2)]
    assert all(p.wait(timeout=600) == 0 for p in procs)
    got = json.loads(out.read_text())
    rng = np.random.default_rng(0)
    p = rng.uniform(size=6000)
    y = (rng.uniform(size=6000) < p**1.3).astype(np.int64)
    one = BinaryCalibrationError()
    one.update(torch.tensor(p), torch.tensor(y))
    assert got["value"] == float(one.compute())
    assert got["n"] == 6000
    assert got["mean"] == one.posterior(num_samples=1000, seed=5).mean
