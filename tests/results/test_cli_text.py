"""Results own their words: the command line prints a header naming the file
and options, then the result's own text, identical to ``str()`` in Python."""

from __future__ import annotations

import numpy as np
import pytest

import bece
from bece._cli import main


def _files(tmp_path, n=400, seed=1):
    rng = np.random.default_rng(seed)
    t = rng.uniform(size=n)
    y = (rng.uniform(size=n) < t).astype(int)
    paths = []
    for name, p in (("a.csv", t), ("b.csv", t ** 0.7)):
        path = tmp_path / name
        path.write_text("y_true,y_prob\n" + "\n".join(f"{a},{float(b)!r}" for a, b in zip(y, p)))
        paths.append(path)
    return y, t, paths


def _cli(capsys, *args):
    assert main(list(args)) == 0
    return capsys.readouterr().out.rstrip("\n")


@pytest.mark.parametrize("level", [0.05, 0.01])
def test_bece_test_prints_the_tests_own_text(tmp_path, capsys, level):
    y, t, (a, _) = _files(tmp_path)
    out = _cli(capsys, "test", str(a), "--level", str(level))
    test = bece.calibration_test(y, t, seed=0)
    assert out == f"bece test: {a}\n{test.text(level)}"
    if level == 0.05:
        assert out == f"bece test: {a}\n{test}"


def test_bece_compare_prints_the_comparisons_own_text(tmp_path, capsys):
    y, t, (a, b) = _files(tmp_path)
    out = _cli(capsys, "compare", str(a), str(b))
    c = bece.compare(y, t, t ** 0.7, seed=0)
    assert out == f"bece compare: A = {a}, B = {b}; 15 uniform bins\n{c}"


def test_bece_report_prints_the_posteriors_own_text(capsys):
    from bece.io import example_path, read_predictions

    out = _cli(capsys, "report")
    pred = read_predictions(example_path())
    r = bece.bayesian_ece(pred.y_true, pred.y_prob, seed=0)
    test = bece.calibration_test(pred.y_true, pred.y_prob, seed=0)
    reference = bece.posterior_ece(r.stats, model="binned", seed=0)
    header = ("bece report: example.csv (example shipped with bece: a logistic regression's "
              "class probabilities on the 899 held-out images of scikit-learn's digits, 10 classes)")
    assert out == f"{header}\n{r.text(test=test, reference=reference)}"
    out = _cli(capsys, "report", "--no-verdict", "--model", "binned")
    b = bece.bayesian_ece(pred.y_true, pred.y_prob, model="binned", seed=0)
    assert out == f"{header}\n{b}"
