"""bece report / compare: how a classifier's file is read (--pos-label,
--labels, --logits, --row-sum-tol, column names), what the header says
about it, the JSON's provenance keys and bin edges that can be told apart."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from scipy.special import softmax

import bece
from bece._cli import main
from bece._cli.common import cli_words, edge_texts

from .conftest import simulate_binary, simulate_multiclass


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _csv(path, columns: dict) -> None:
    names = list(columns)
    rows = zip(*(columns[c] for c in names))
    path.write_text(",".join(names) + "\n" + "\n".join(
        ",".join(repr(float(v)) if isinstance(v, (float, np.floating)) else str(v) for v in r)
        for r in rows) + "\n")


@pytest.fixture
def binary_file(tmp_path, rng):
    """A binary classifier's predict_proba as p_0, p_1 with text labels."""
    y, p = simulate_binary(400, rng, power=1.3)
    path = tmp_path / "spam.csv"
    _csv(path, {"y_true": np.where(y == 1, "spam", "ham"), "p_0": 1 - p, "p_1": p})
    return path, y, p


def test_a_two_column_file_is_top_label_and_says_how_to_read_p_y1(binary_file, capsys):
    path, y, p = binary_file
    code, out, err = run(capsys, "report", path, "--samples", 500)
    assert code == 0 and err == ""
    lines = out.splitlines()
    # the header: the file, which column is which class, how two columns are read
    assert lines[1].strip() == ("classes       p_0 = ham, p_1 = spam (text labels in sorted order, "
                                "as scikit-learn's classes_; --labels sets them)")
    assert "pass --y-prob-col p_1" in lines[2]
    assert lines[3].startswith("  verdict       ")  # then the result's text, the verdict first
    assert any(line.startswith("  predictions ") and "top-label" in line for line in lines)
    # the P(y = 1) reading: the library's on p_1 with pos_label
    code, out, _ = run(capsys, "report", path, "--y-prob-col", "p_1", "--pos-label", "spam",
                       "--samples", 500, "--json")
    d = json.loads(out)
    ref = bece.bayesian_ece(y, p, num_samples=500)
    assert code == 0 and d["input_kind"] == "binary" and d["ece"]["mean"] == ref.mean
    assert d["plugin_ece"] == pytest.approx(ref.plugin, abs=1e-15)


def test_labels_and_logits_and_column_names(tmp_path, rng, capsys):
    y, prob = simulate_multiclass(300, 3, rng)
    logits = np.log(prob) + 1.7
    names = np.array(["setosa", "versicolor", "virginica"])
    order = [2, 0, 1]  # column j holds class order[j]
    path = tmp_path / "iris.csv"
    _csv(path, {"label": names[y], **{f"score_{j}": logits[:, order[j]] for j in range(3)}})
    argv = ["report", path, "--y-true-col", "label", "--prob-prefix", "score_", "--logits",
            "--labels", ",".join(names[order]), "--samples", 400, "--json"]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    d = json.loads(out)
    ref = bece.bayesian_ece(y, softmax(logits, axis=1), num_samples=400)
    assert d["plugin_ece"] == pytest.approx(ref.plugin, rel=1e-12)
    assert d["classes"] == list(names[order]) and d["input_kind"] == "top-label"
    # logits without --logits: one line that says so
    code, out, err = run(capsys, "report", path, "--y-true-col", "label", "--prob-prefix", "score_")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "it looks like logits (scores of any sign): pass --logits" in err
    # a named column that is not there
    code, _, err = run(capsys, "report", path, "--y-true-col", "target", "--prob-prefix", "score_")
    assert code == 2 and "no 'target' column (y_true_col" in err


def test_rounded_probabilities_need_row_sum_tol(tmp_path, rng, capsys):
    y, prob = simulate_multiclass(400, 5, rng)
    rounded = np.round(prob, 4)
    path = tmp_path / "rounded.csv"
    _csv(path, {"y_true": y, **{f"p_{k}": rounded[:, k] for k in range(5)}})
    code, out, err = run(capsys, "report", path)
    assert code == 2 and re.search(r"accept them as they are with --row-sum-tol 0\.000\d", err)
    code, out, err = run(capsys, "report", path, "--row-sum-tol", "1e-3", "--json", "--samples", 300)
    assert code == 0
    ref = bece.bayesian_ece(y, rounded, row_sum_tol=1e-3, num_samples=300)
    assert json.loads(out)["ece"]["mean"] == ref.mean
    code, _, err = run(capsys, "report", path, "--row-sum-tol", "2")
    assert code == 2 and "invalid tolerance '2'" in err


def test_compare_takes_the_input_options(binary_file, tmp_path, capsys):
    path, y, p = binary_file
    other = tmp_path / "other.csv"
    _csv(other, {"y_true": np.where(y == 1, "spam", "ham"), "p_0": 1 - p ** 1.5, "p_1": p ** 1.5})
    code, out, err = run(capsys, "compare", path, other, "--y-prob-col", "p_1", "--pos-label",
                         "spam", "--samples", 300, "--json")
    assert code == 0, err
    d = json.loads(out)
    ref = bece.compare(y, p, p ** 1.5, num_samples=300)
    assert d["diff"]["mean"] == ref.mean and d["input_kind"] == "binary"
    assert {"model", "seed", "bece_version"} <= set(d) and d["seed"] == 0
    code, out, _ = run(capsys, "compare", path, other, "--samples", 300)
    assert code == 0 and "pass --y-prob-col p_1" in out


def test_input_options_are_refused_for_regression_forecasts(tmp_path, capsys):
    path = tmp_path / "reg.csv"
    path.write_text("y,mean,std\n" + "\n".join(f"{i * 0.1},{i * 0.1},1.0" for i in range(20)))
    code, out, err = run(capsys, "report", path, "--pos-label", "1")
    assert code == 2 and "--pos-label applies only to a classifier's predictions" in err


def test_quantile_bin_edges_are_told_apart(tmp_path, rng, capsys):
    """Confidences piled near 1: quantile edges 0.99991, 0.99994, ... printed
    with three decimals all read 1.000."""
    y, prob = simulate_multiclass(2000, 10, rng)
    conf = 1 - rng.exponential(1e-4, size=2000)
    path = tmp_path / "sharp.csv"
    _csv(path, {"y_true": (rng.uniform(size=2000) < conf).astype(int), "y_prob": conf})
    code, out, err = run(capsys, "report", path, "--binning", "quantile", "--samples", 200)
    assert code == 0, err
    ranges = re.findall(r"^\s+\d+\s+(\[\S+, \S+[\])])", out, flags=re.M)
    assert len(ranges) == 15 and len(set(ranges)) == 15
    assert edge_texts([0.0, 0.5, 1.0]) == ["0.000", "0.500", "1.000"]
    assert edge_texts([0.99991, 0.99994, 1.0]) == ["0.99991", "0.99994", "1.00000"]
    assert edge_texts([0.2, 0.2, 0.3]) == ["0.200", "0.200", "0.300"]  # equal edges stay equal


def test_library_words_become_options():
    assert cli_words("pass from_logits=True (softmax)") == "pass --logits (softmax)"
    assert cli_words("with row_sum_tol=0.0002") == "with --row-sum-tol 0.0002"
    assert cli_words("pass pos_label= to say") == "pass --pos-label to say"
    assert cli_words("pass labels= (e.g. labels=clf.classes_)") == (
        "pass --labels (e.g. --labels L0,L1,...)")
    assert cli_words("pass y_prob[:, 1]") == "pass --y-prob-col p_1"


def test_json_is_strict_with_provenance(capsys):
    code, out, _ = run(capsys, "report", "--model", "smooth", "--samples", 300, "--seed", 4,
                       "--json")
    assert code == 0 and "NaN" not in out
    d = json.loads(out)
    assert (d["model"], d["input_kind"], d["seed"]) == ("smooth", "top-label", 4)
    assert d["bece_version"] == bece._cli.version()
