"""JSON Lines files: a table of flat records, or lm-evaluation-harness samples.

A ``.jsonl`` file holds one JSON object per line. Two kinds are read:

* **A table**: every line an object with the same keys, each value a
  number, a boolean or a string; each key is a column (as a CSV header
  names one). A file of stated (verbalised) confidences, one answer per
  line with its correctness, is read this way: ``{"y_true": 1, "y_prob":
  0.8}``, or other names with ``--y-true-col correct --y-prob-col
  confidence``.
* **lm-evaluation-harness samples**, the ``samples_TASK_*.jsonl`` that
  ``lm_eval --log_samples`` writes (0.4.x,
  ``lm_eval/loggers/evaluation_tracker.py``: ``save_results_samples``):
  one line per document with ``doc_id``, ``target`` (the gold answer,
  written with ``str``), ``arguments`` (``{"gen_args_i": {"arg_0":
  context, "arg_1": continuation}}``, one per choice) and
  ``filtered_resps`` (one ``[log-likelihood, is_greedy]`` pair per choice,
  each written with ``str`` by ``lm_eval.utils.sanitize_list``, so
  ``["-4.25", "False"]``; numbers in older files). A multiple-choice
  document becomes one row: ``y_true`` the gold index, ``y_pred`` the
  argmax of the log-likelihoods (the choice lm-eval's ``acc`` scores) and
  ``y_prob`` its probability under the **softmax of the raw per-choice
  log-likelihoods** :math:`\\ell_k`, :math:`\\exp(\\ell_k) / \\sum_j
  \\exp(\\ell_j)`. ``y_pred_norm`` and ``y_prob_norm`` are the same for the
  length-normalised log-likelihoods :math:`\\ell_k / L_k` (:math:`L_k` the
  choice's length in characters, its continuation less the leading space
  lm-eval puts before it), the choice ``acc_norm`` scores; the two calibrate
  differently, so the report says which it reads.

The gold answer is ``target`` read as a choice index, or else the choice
whose text it is. Where a line carries lm-eval's ``acc``, the argmax must
score it (1.0 when it is the gold index): a file whose gold answers were
read wrongly is refused, not reported.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["is_lm_eval", "jsonl_table", "lm_eval_file", "lm_eval_words"]

def lm_eval_words(y_prob_col: str | None) -> str:
    """How an lm-evaluation-harness file is read, in the report's header."""
    if y_prob_col == "y_prob_norm":
        return ("lm-evaluation-harness samples: y_prob_norm = softmax of the length-normalised "
                "per-choice log-likelihoods (acc_norm's) at their argmax")
    return ("lm-evaluation-harness samples: y_prob = softmax of the raw per-choice "
            "log-likelihoods at their argmax (acc's); length-normalised (acc_norm's): "
            "--y-prob-col y_prob_norm --y-pred-col y_pred_norm")

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf|nan", re.I)


def _records(path: Path) -> list[dict[str, Any]]:
    source = str(path)
    out = []
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{source}: line {i} is not JSON ({exc.msg})") from None
            if not isinstance(record, dict):
                raise ValueError(f"{source}: line {i} is not a JSON object")
            out.append(record)
    if not out:
        raise ValueError(f"{source}: no records (an empty JSON Lines file)")
    return out


def is_lm_eval(record: dict[str, Any]) -> bool:
    """Whether a record is one of lm-evaluation-harness's logged samples."""
    return "doc_id" in record and "target" in record and (
        "filtered_resps" in record or "resps" in record)


def lm_eval_file(path: str | Path) -> bool:
    """Whether ``path`` is a JSON Lines file of lm-evaluation-harness samples (its
    first record is one)."""
    path = Path(path)
    if path.suffix.lower() != ".jsonl" or not path.is_file():
        return False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                try:
                    first = json.loads(line)
                except json.JSONDecodeError:
                    return False
                return isinstance(first, dict) and is_lm_eval(first)
    return False


def jsonl_table(path: Path) -> tuple[list[str], Callable[[str], np.ndarray]]:
    """Column names of a JSON Lines file and a function reading one column."""
    records = _records(path)
    columns = (_lm_eval_columns(records, str(path)) if is_lm_eval(records[0])
               else _flat_columns(records, str(path)))

    def get(name: str) -> np.ndarray:
        if name not in columns:
            raise ValueError(f"{path}: no column {name!r}")
        return columns[name]

    return list(columns), get


def _flat_columns(records: list[dict[str, Any]], source: str) -> dict[str, np.ndarray]:
    keys = list(records[0])
    for i, record in enumerate(records, start=1):
        if set(record) != set(keys):
            raise ValueError(f"{source}: record {i} has the keys {sorted(record)}, the first "
                             f"{sorted(keys)}; every line must have the same keys")
    out = {}
    for key in keys:
        values = [r[key] for r in records]
        bad = next((v for v in values if isinstance(v, (dict, list)) or v is None), "ok")
        if bad != "ok":
            raise ValueError(f"{source}: column {key!r} holds {json.dumps(bad)[:40]}; each value "
                             "must be a number, a boolean or a string")
        out[key] = np.asarray(values)
    return out


def _log_likelihoods(record: dict[str, Any], source: str) -> np.ndarray:
    """The per-choice log-likelihoods of a sample, from ``filtered_resps`` (or ``resps``)."""
    resps = record.get("filtered_resps", record.get("resps"))
    where = f"{source}: doc_id {record.get('doc_id')!r}"
    if not isinstance(resps, list) or len(resps) < 2:
        raise ValueError(f"{where}: filtered_resps holds {json.dumps(resps)[:60]}; a "
                         "multiple-choice sample has one [log-likelihood, is_greedy] per choice")
    out = []
    for r in resps:
        while isinstance(r, list) and r and isinstance(r[0], list):  # resps: [[pair]]
            r = r[0]
        first = r[0] if isinstance(r, list) and r else r
        if isinstance(first, bool) or not isinstance(first, (int, float, str)):
            raise ValueError(f"{where}: cannot read a log-likelihood from {json.dumps(r)[:60]}")
        if isinstance(first, str):
            m = _NUMBER.search(first)
            if m is None:
                raise ValueError(f"{where}: cannot read a log-likelihood from {first[:60]!r}")
            first = float(m.group(0))
        value = float(first)
        if math.isnan(value) or value > 0:
            raise ValueError(f"{where}: log-likelihood {value} is not a number <= 0")
        out.append(value)
    return np.asarray(out, dtype=np.float64)


def _continuations(record: dict[str, Any], k: int) -> list[str] | None:
    args = record.get("arguments")
    if not isinstance(args, dict):
        return None
    conts = []
    for i in range(k):
        arg = args.get(f"gen_args_{i}")
        if not isinstance(arg, dict) or not isinstance(arg.get("arg_1"), str):
            return None
        conts.append(arg["arg_1"])
    return conts


def _gold(record: dict[str, Any], k: int, conts: list[str] | None, source: str) -> int:
    target = record["target"]
    text = str(target).strip()
    if re.fullmatch(r"\d+", text) and int(text) < k:
        return int(text)
    if conts is not None:
        choices = [c[1:] if c.startswith(" ") else c for c in conts]
        if text in choices:
            return choices.index(text)
    raise ValueError(f"{source}: doc_id {record.get('doc_id')!r}: target {str(target)[:40]!r} is "
                     f"neither a choice index in 0..{k - 1} nor the text of a choice")


def _softmax(x: np.ndarray) -> np.ndarray:
    z = np.exp(x - x.max())
    return z / z.sum()


def _lm_eval_columns(records: list[dict[str, Any]], source: str) -> dict[str, np.ndarray]:
    n = len(records)
    y = np.empty(n, dtype=np.int64)
    pred = np.empty(n, dtype=np.int64)
    conf = np.empty(n, dtype=np.float64)
    pred_n = np.empty(n, dtype=np.int64)
    conf_n = np.empty(n, dtype=np.float64)
    lengths_known = True
    doc = []
    for i, record in enumerate(records):
        if not is_lm_eval(record):
            raise ValueError(f"{source}: line {i + 1} is not an lm-evaluation-harness sample "
                             "(doc_id, target, filtered_resps)")
        ll = _log_likelihoods(record, source)
        conts = _continuations(record, ll.size)
        y[i] = _gold(record, ll.size, conts, source)
        p = _softmax(ll)
        pred[i] = int(np.argmax(ll))
        conf[i] = p[pred[i]]
        acc = record.get("acc")
        if isinstance(acc, (int, float)) and not isinstance(acc, bool) \
                and (acc == 1.0) != (pred[i] == y[i]):
            raise ValueError(f"{source}: doc_id {record.get('doc_id')!r}: the argmax of the "
                             f"log-likelihoods ({pred[i]}) against the gold answer ({y[i]}) does "
                             f"not give the file's acc {acc}: the gold answer was not read as "
                             "lm-eval read it")
        if conts is None:
            lengths_known = False
        else:
            lengths = np.array([max(len(c[1:] if c.startswith(" ") else c), 1) for c in conts],
                               dtype=np.float64)
            normed = ll / lengths
            pred_n[i] = int(np.argmax(normed))
            conf_n[i] = _softmax(normed)[pred_n[i]]
        doc.append(record.get("doc_id"))
    out = {"y_true": y, "y_pred": pred, "y_prob": conf}
    if lengths_known:
        out.update({"y_pred_norm": pred_n, "y_prob_norm": conf_n})
    out["doc_id"] = np.asarray(doc)
    return out
