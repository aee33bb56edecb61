"""JSON Lines input (bece._io.jsonl): a table of flat records, and the samples
lm-evaluation-harness writes with --log_samples."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import special

import bece
from bece._cli import main
from bece.io import read_predictions


def _w(value, strings):
    """A number as lm-eval 0.4.x writes it (str, through sanitize_list), or as is."""
    return str(float(value)) if strings and not isinstance(value, bool) else (
        str(value) if strings else value)


def _samples(path, n=60, seed=7, strings=True):
    """``n`` multiple-choice documents in the format
    lm-evaluation-harness 0.4.x writes with ``--log_samples``
    (lm_eval/loggers/evaluation_tracker.py, ``save_results_samples``: ``arguments`` as
    ``gen_args_i``/``arg_j``, ``resps`` and ``filtered_resps`` through
    lm_eval/utils.py ``sanitize_list``, which writes every number with ``str``;
    ``target`` with ``str``), from log-likelihoods drawn here, with ``acc`` and
    ``acc_norm`` scored as lm-eval's ``ConfigurableTask.process_results`` scores a
    multiple-choice document (argmax of the log-likelihoods; of the log-likelihoods
    over the choices' lengths in characters)."""
    rng = np.random.default_rng(seed)
    lines = []
    for doc_id in range(n):
        k = 4
        choices = [f"answer {chr(65 + j)}{'x' * int(rng.integers(0, 12))}" for j in range(k)]
        gold = int(rng.integers(k))
        ll = -np.abs(rng.normal(8.0, 3.0, size=k)) - 0.05
        ll[gold] = min(ll[gold] + 2.0, -0.01)
        lengths = np.array([len(c) for c in choices], float)
        pred, pred_n = int(np.argmax(ll)), int(np.argmax(ll / lengths))
        sample = {
            "doc_id": doc_id,
            "doc": {"question": f"question {doc_id}", "choices": choices, "label": gold},
            "target": str(gold),
            "arguments": {f"gen_args_{j}": {"arg_0": f"Question: question {doc_id}\nAnswer:",
                                            "arg_1": " " + c} for j, c in enumerate(choices)},
            "resps": [[[_w(x, strings), _w(False, strings)]] for x in ll],
            "filtered_resps": [[_w(x, strings), _w(False, strings)] for x in ll],
            "filter": "none",
            "metrics": ["acc", "acc_norm"],
            "doc_hash": "0" * 64, "prompt_hash": "1" * 64, "target_hash": "2" * 64,
            "acc": 1.0 if pred == gold else 0.0,
            "acc_norm": 1.0 if pred_n == gold else 0.0,
        }
        lines.append(json.dumps(sample, ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _read_lines(path):
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def test_lm_eval_samples_read_as_lm_eval_scores_them(tmp_path):
    """Each document: the gold index, the argmax of the log-likelihoods (what acc
    scores) and its softmax probability (scipy); the length-normalised pair is
    acc_norm's choice. Independent check: lm-eval's own acc and acc_norm fields."""
    path = _samples(tmp_path / "samples_demo.jsonl")
    pred = read_predictions(path)
    assert pred.kind == "triples" and pred.y_true.dtype == np.int64
    records = _read_lines(path)
    lls = np.array([[float(r[0]) for r in rec["filtered_resps"]] for rec in records])
    np.testing.assert_array_equal(pred.y_true, [rec["doc"]["label"] for rec in records])
    np.testing.assert_array_equal(pred.y_pred, lls.argmax(axis=1))
    np.testing.assert_allclose(pred.y_prob, special.softmax(lls, axis=1).max(axis=1), rtol=1e-12)
    np.testing.assert_array_equal(pred.y_pred == pred.y_true, [rec["acc"] == 1.0 for rec in records])
    norm = read_predictions(path, y_prob_col="y_prob_norm", y_pred_col="y_pred_norm")
    np.testing.assert_array_equal(norm.y_pred == norm.y_true,
                                  [rec["acc_norm"] == 1.0 for rec in records])
    lengths = np.array([[len(c) for c in rec["doc"]["choices"]] for rec in records], float)
    np.testing.assert_allclose(norm.y_prob, special.softmax(lls / lengths, axis=1).max(axis=1),
                               rtol=1e-12)
    # numbers written as numbers (older files) read the same
    plain = read_predictions(_samples(tmp_path / "plain.jsonl", strings=False))
    np.testing.assert_array_equal(plain.y_prob, pred.y_prob)
    # the ECE is that of the (gold, argmax, confidence) triples
    assert bece.expected_calibration_error(pred.y_true, pred.y_prob, y_pred=pred.y_pred) == \
        pytest.approx(bece.expected_calibration_error((pred.y_pred == pred.y_true).astype(int),
                                                      pred.y_prob), rel=1e-12)


def test_target_as_choice_text_and_a_misread_gold_is_refused(tmp_path):
    path = _samples(tmp_path / "s.jsonl", n=20)
    records = _read_lines(path)
    for rec in records:  # the gold answer written as its text (doc_to_target returning a str)
        rec["target"] = rec["doc"]["choices"][int(rec["target"])]
    text = tmp_path / "text.jsonl"
    text.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    np.testing.assert_array_equal(read_predictions(text).y_true, read_predictions(path).y_true)
    for rec in records:  # a gold index off by one: lm-eval's acc disagrees
        rec["target"] = str((rec["doc"]["label"] + 1) % 4)
    text.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    with pytest.raises(ValueError, match="does not give the file's acc"):
        read_predictions(text)
    records[0]["target"] = "[0, 1]"
    text.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    with pytest.raises(ValueError, match="neither a choice index in 0..3 nor the text"):
        read_predictions(text)


def test_stated_confidences_as_a_table_of_records(tmp_path, capsys):
    """A plain JSON Lines table: one answer per line, its stated confidence and whether
    it was correct; columns named by the report's options."""
    rng = np.random.default_rng(3)
    conf = rng.uniform(0.3, 1.0, size=200)
    correct = rng.uniform(size=200) < conf ** 1.5
    path = tmp_path / "verbal.jsonl"
    path.write_text("\n".join(json.dumps({"question": f"q{i}", "confidence": float(c),
                                          "correct": bool(k)})
                              for i, (c, k) in enumerate(zip(conf, correct))) + "\n")
    code = main(["report", str(path), "--y-true-col", "correct", "--y-prob-col", "confidence",
                 "--json", "--samples", "500", "--no-verdict"])
    d = json.loads(capsys.readouterr().out)
    assert code == 0 and d["n"] == 200
    assert d["plugin_ece"] == pytest.approx(
        bece.expected_calibration_error(correct.astype(int), conf), rel=1e-12)


@pytest.mark.parametrize("content, message", [
    ("", "no records"),
    ('{"y_true": 1, "y_prob": 0.5}\nnot json\n', "line 2 is not JSON"),
    ('[1, 2]\n', "line 1 is not a JSON object"),
    ('{"y_true": 1, "y_prob": 0.5}\n{"y_true": 1}\n', "every line must have the same keys"),
    ('{"y_true": 1, "y_prob": null}\n', "must be a number, a boolean or a string"),
])
def test_bad_json_lines_are_named(tmp_path, content, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(ValueError, match=message):
        read_predictions(path)


def test_report_of_an_lm_eval_file_says_which_probabilities(tmp_path, capsys):
    path = _samples(tmp_path / "samples_demo.jsonl")
    code = main(["report", str(path), "--samples", "500", "--no-verdict"])
    out = capsys.readouterr().out
    assert code == 0
    assert out.splitlines()[0] == (f"bece report: {path} (lm-evaluation-harness samples: y_prob = "
                                   "softmax of the raw per-choice log-likelihoods at their argmax "
                                   "(acc's); length-normalised (acc_norm's): --y-prob-col "
                                   "y_prob_norm --y-pred-col y_pred_norm)")
    code = main(["report", str(path), "--samples", "500", "--no-verdict", "--y-prob-col",
                 "y_prob_norm", "--y-pred-col", "y_pred_norm"])
    assert "length-normalised" in capsys.readouterr().out.splitlines()[0]
    code = main(["report", str(path), "--samples", "500", "--json"])  # with the verdict
    d = json.loads(capsys.readouterr().out)
    assert code == 0 and d["n"] == 60 and d["input_kind"] == "triples"
