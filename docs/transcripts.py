"""The command-line transcripts the documentation shows, run at each build.

Every ``$ bece ...`` block on a page is a ``literalinclude`` of a file this
module writes into ``docs/_generated/transcripts/`` (``conf.py`` calls
:func:`write_all`), so a transcript is always what the installed bece prints
and cannot go stale; ``tests/test_docs.py`` refuses a hand-written one. Each
session makes its input files in a fresh folder (simulated data, or
scikit-learn's breast cancer data) and runs its commands there.

Run by hand::

    python docs/transcripts.py [NAME ...]      # all sessions, or the named ones
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent / "_generated" / "transcripts"


def _calibrated(folder: Path) -> None:
    """5,000 predictions of a calibrated binary classifier."""
    rng = np.random.default_rng(0)
    p = rng.uniform(size=5000)
    y = (rng.uniform(size=5000) < p).astype(int)
    _csv(folder / "calibrated.csv", {"y_true": y, "y_prob": p})


def _forecasts(folder: Path) -> None:
    """1,000 Gaussian forecasts with a predictive sd of 0.8 for a truth of sd 1."""
    rng = np.random.default_rng(0)
    mu = rng.normal(size=1000)
    y = mu + rng.normal(size=1000)
    _csv(folder / "forecasts.csv", {"y": y, "mean": mu, "std": np.full(1000, 0.8)})


def _logits(folder: Path) -> None:
    """Logits of a 10-class network, over-confident by a temperature of 1.5:
    5,000 validation and 5,000 test rows, one NPZ array per column."""
    rng = np.random.default_rng(0)
    logits = rng.normal(scale=3.0, size=(10_000, 10))
    truth = np.exp(logits / 1.5 - (logits / 1.5).max(axis=1, keepdims=True))
    truth /= truth.sum(axis=1, keepdims=True)
    y = np.minimum((rng.uniform(size=(10_000, 1)) > truth.cumsum(axis=1)).sum(axis=1), 9)
    for name, rows in (("val_logits.npz", slice(0, 5000)), ("test_logits.npz", slice(5000, None))):
        np.savez(folder / name, y_true=y[rows], **{f"p_{k}": logits[rows, k] for k in range(10)})


def _lm_eval(folder: Path) -> None:
    """300 documents of a 4-choice benchmark in the format ``lm_eval --log_samples``
    writes (lm-evaluation-harness 0.4.x: ``arguments`` as ``gen_args_i``, every
    log-likelihood written as a string), from an over-confident model: the gold
    answer's log-likelihood is raised by 1.5 nats, its probability by less."""
    import json

    rng = np.random.default_rng(0)
    lines = []
    for doc_id in range(300):
        choices = [f"option {c}{' and more' * int(rng.integers(0, 3))}" for c in "ABCD"]
        gold = int(rng.integers(4))
        ll = -np.abs(rng.normal(6.0, 2.5, size=4)) - 0.05
        truth = np.exp(ll / 2.0) / np.exp(ll / 2.0).sum()  # the model is too sure: T = 2
        gold = int(rng.choice(4, p=truth))
        pred = int(np.argmax(ll))
        lines.append(json.dumps({
            "doc_id": doc_id, "doc": {"choices": choices, "label": gold}, "target": str(gold),
            "arguments": {f"gen_args_{j}": {"arg_0": f"Q{doc_id}", "arg_1": " " + c}
                          for j, c in enumerate(choices)},
            "resps": [[[str(float(x)), "False"]] for x in ll],
            "filtered_resps": [[str(float(x)), "False"] for x in ll],
            "filter": "none", "metrics": ["acc"], "acc": 1.0 if pred == gold else 0.0,
        }))
    (folder / "samples_demo.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _groups(folder: Path) -> None:
    """A binary classifier's predictions in five regions: four of 3,000
    calibrated, one of 100 ("island") whose outcomes follow logit slope 2.5."""
    rng = np.random.default_rng(0)
    names = np.repeat(["north", "south", "east", "west", "island"], [3000] * 4 + [100])
    p = rng.beta(2, 2, size=names.size)
    slope = np.where(names == "island", 2.5, 1.0)
    y = (rng.uniform(size=p.size) < 1 / (1 + (p / (1 - p)) ** -slope)).astype(int)
    _csv(folder / "regions.csv", {"y_true": y, "y_prob": p, "region": names})


def _drift(folder: Path) -> None:
    """Three weeks of a binary classifier's predictions, 2,000 a day, with
    timestamps; from 2026-11-15 its outcomes follow logit slope 0.6 (it has
    become over-confident)."""
    rng = np.random.default_rng(1)
    minutes = np.sort(rng.integers(0, 21 * 24 * 60, size=42_000))
    ts = np.datetime64("2026-11-01T00:00") + minutes.astype("timedelta64[m]")
    p = rng.beta(2, 2, size=ts.size)
    slope = np.where(ts >= np.datetime64("2026-11-15"), 0.6, 1.0)
    y = (rng.uniform(size=p.size) < 1 / (1 + (p / (1 - p)) ** -slope)).astype(int)
    _csv(folder / "scores.csv", {"ts": ts.astype(str), "y_true": y, "y_prob": p})


def _cancer(folder: Path) -> None:
    """scikit-learn's breast cancer data: a logistic regression fitted on 60%,
    its class probabilities on the rest, with the diagnosis as text."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = load_breast_cancer(return_X_y=True)
    X_fit, X_test, y_fit, y_test = train_test_split(X, y, test_size=0.4, random_state=0)
    clf = make_pipeline(StandardScaler(), LogisticRegression()).fit(X_fit, y_fit)
    prob = clf.predict_proba(X_test)  # scikit-learn's coding: column 0 malignant, 1 benign
    diagnosis = np.where(y_test == 0, "malignant", "benign")
    # bece sorts text labels, as scikit-learn's classes_: p_0 = benign, p_1 = malignant
    _csv(folder / "cancer.csv", {"diagnosis": diagnosis, "p_0": prob[:, 1], "p_1": prob[:, 0]})


def _csv(path: Path, columns: dict[str, np.ndarray]) -> None:
    names = list(columns)
    rows = zip(*(columns[n] for n in names))
    with path.open("w") as f:
        f.write(",".join(names) + "\n")
        for row in rows:
            f.write(",".join(v if isinstance(v, str) else f"{v:.6g}" for v in row) + "\n")


@dataclass(frozen=True)
class Session:
    """Commands run in one folder after ``setup`` wrote their inputs there;
    with ``head``, each command's first ``head`` lines and ``...`` (and its
    last ``tail`` lines after them). ``status`` is the exit status every
    command must end with; one other than 0 is shown after the output."""

    commands: tuple[str, ...]
    setup: Callable[[Path], None] | None = None
    head: int | None = None
    tail: int = 0
    status: int = 0


SESSIONS: dict[str, Session] = {
    "report_example": Session(("bece report",), head=10),
    "report_calibrated": Session(("bece report calibrated.csv --no-verdict",), _calibrated, head=8),
    "report_forecasts": Session(("bece report forecasts.csv",), _forecasts),
    "recalibrate": Session(("bece recalibrate --method temperature val_logits.npz test_logits.npz "
                            "--logits --out test_ts.csv",), _logits),
    "cross_check": Session(("bece cross-check calibrated.csv --chains 2 --warmup 500 "
                            "--draws 1000",), _calibrated),
    "report_groups": Session(("bece report regions.csv --by region --samples 4000",), _groups),
    "report_drift": Session(("bece report scores.csv --by ts --window 1D --reference 7 "
                             "--fail-on-drift --samples 2000",), _drift, status=3),
    "report_lm_eval": Session(("bece report samples_demo.jsonl --no-verdict",), _lm_eval, head=9),
    "report_html": Session(("bece report calibrated.csv --no-verdict --html report.html",),
                           _calibrated, head=3, tail=2),
    "report_cancer": Session(("bece report cancer.csv --y-true-col diagnosis",
                              "bece report cancer.csv --y-true-col diagnosis --y-prob-col p_1 "
                              "--pos-label malignant"), _cancer, head=13),
}


def run(name: str) -> str:
    """The transcript of session ``name``: each command after ``$``, then what
    it printed (stdout and stderr, as a terminal shows them)."""
    session = SESSIONS[name]
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if session.setup is not None:
            session.setup(folder)
        for command in session.commands:
            argv = shlex.split(command)
            done = subprocess.run([sys.executable, "-m", "bece", *argv[1:]], cwd=folder,
                                  capture_output=True, text=True, check=False)
            if done.returncode != session.status:
                raise RuntimeError(f"transcript {name!r}: {command!r} exited with {done.returncode}:\n"
                                   f"{done.stderr}")
            lines = f"{done.stdout}{done.stderr}".rstrip("\n").splitlines()
            if session.head is not None and len(lines) > session.head + session.tail:
                end = lines[len(lines) - session.tail:] if session.tail else []
                lines = [*lines[:session.head], "  ...", *end]
            if session.status:
                lines += ["$ echo $?", str(session.status)]
            out.append("\n".join([f"$ {command}", *lines]))
    return "\n\n".join(out) + "\n"


def write_all(names: list[str] | None = None, out: Path = OUT) -> None:
    """Write every session's transcript (or those ``names``) to ``out/NAME.txt``."""
    out.mkdir(parents=True, exist_ok=True)
    for name in names or list(SESSIONS):
        (out / f"{name}.txt").write_text(run(name))


if __name__ == "__main__":
    write_all(sys.argv[1:] or None)
