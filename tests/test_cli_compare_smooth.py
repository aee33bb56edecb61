"""``bece compare --model smooth``."""

from __future__ import annotations

import json

import numpy as np

import bece
from bece.cli import main


def _files(tmp_path, n=300):
    rng = np.random.default_rng(0)
    t = rng.uniform(0.05, 0.95, size=n)
    y = (rng.uniform(size=n) < t).astype(int)
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    for path, p in ((a, t), (b, t**0.6)):
        path.write_text("y_true,y_prob\n" + "\n".join(f"{u},{float(v)!r}" for u, v in zip(y, p)))
    return y, t, t**0.6, a, b


def test_compare_smooth_json_and_text_match_the_library(tmp_path, capsys):
    y, pa, pb, a, b = _files(tmp_path)
    lib = bece.compare(y, pa, pb, n_bins=10, num_samples=300, seed=4, model="smooth")
    code = main(["compare", str(a), str(b), "--model", "smooth", "--n-bins", "10", "--samples",
                 "300", "--seed", "4", "--json"])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    d = json.loads(out)
    assert d["model"] == "smooth" and d["n"] == 300 and d["n_bins"] == 10
    assert d["diff"]["mean"] == lib.mean and d["prob_a_better"] == lib.prob_a_better
    assert d["a"]["ece"]["mean"] == lib.a.mean
    code = main(["compare", str(a), str(b), "--model", "smooth", "--n-bins", "10", "--samples",
                 "300", "--seed", "4"])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    assert "smooth calibration curves (Laplace), paired" in out
    assert f"{lib.mean:+.4f}" in out


def test_compare_default_model_is_smooth(tmp_path, capsys):
    *_, a, b = _files(tmp_path, n=100)
    assert main(["compare", str(a), str(b), "--samples", "200", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["model"] == "smooth"


def test_compare_unknown_model_exits_2(tmp_path, capsys):
    *_, a, b = _files(tmp_path, n=50)
    try:
        code = main(["compare", str(a), str(b), "--model", "literal"])
    except SystemExit as exc:  # argparse's own exit
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and "invalid choice: 'literal'" in err
