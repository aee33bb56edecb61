"""bece cross-check: the posterior a report prints against NUTS on its NumPyro model
(bece._cli.crosscheck), and the reading options of bece.cross_check it uses."""

from __future__ import annotations

import json

import numpy as np
import pytest

import bece
import bece._posteriors
from bece._cli import main
from bece.regression import DirichletPITModel, SmoothPITModel, pit


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _binary_file(tmp_path, rng, n=300):
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p).astype(int)
    path = tmp_path / "binary.csv"
    path.write_text("y_true,y_prob\n" + "\n".join(f"{a},{float(b)!r}" for a, b in zip(y, p)))
    return path, y, p


def _gaussian_file(tmp_path, rng, n=300):
    mean = rng.normal(size=n)
    y = mean + 1.3 * rng.normal(size=n)
    path = tmp_path / "forecasts.csv"
    path.write_text("y,mean,std\n" + "\n".join(f"{float(a)!r},{float(b)!r},1.0" for a, b in zip(y, mean)))
    return path, y, mean


@pytest.fixture
def calls(monkeypatch):
    """bece.cross_check recorded: what the command hands it. The first call of a
    test runs a real check, small, so that the command prints a real result;
    later calls return that result again (their arguments are what is tested)."""
    seen = []
    done = []
    real = bece._posteriors.cross_check

    def record(*args, **kwargs):
        seen.append((args, kwargs))
        if not done:
            small = {**kwargs, "num_chains": 2, "num_warmup": 50, "num_samples": 100}
            done.append(real(*args, **small))
        return done[0]

    monkeypatch.setattr(bece._posteriors, "cross_check", record)
    return seen


def test_a_classifier_file_checks_the_reports_default_with_the_files_predictions(tmp_path, rng,
                                                                                capsys, calls):
    path, y, p = _binary_file(tmp_path, rng)
    code, out, err = run(capsys, "cross-check", path, "--model", "binned", "--n-bins", 10,
                         "--chains", 3, "--warmup", 200, "--draws", 300, "--seed", 4)
    assert code == 0 and err == ""
    (args, kwargs), = calls
    np.testing.assert_array_equal(args[0], y)
    np.testing.assert_array_equal(args[1], p)
    assert kwargs["model"] == "binned" and kwargs["n_bins"] == 10 and not kwargs["top_label"]
    assert (kwargs["num_chains"], kwargs["num_warmup"], kwargs["num_samples"], kwargs["seed"]) == (
        3, 200, 300, 4)
    lines = out.splitlines()
    assert lines[0] == f"bece cross-check: {path}"
    assert lines[1] == ("  300 predictions (binary: y_prob = P(y = 1) against y_true); 3 chains x "
                        "200 + 300 NUTS draws (seed 4)")
    assert lines[2].startswith("NUTS and the fast path (conjugate model): ")
    # the default: the smooth model, 15 uniform bins, 4 chains of 1,000 + 1,000
    calls.clear()
    assert run(capsys, "cross-check", path)[0] == 0
    (_, kwargs), = calls
    assert (kwargs["model"], kwargs["n_bins"], kwargs["binning"]) == ("smooth", 15, "uniform")
    assert (kwargs["num_chains"], kwargs["num_warmup"], kwargs["num_samples"]) == (4, 1000, 1000)


def test_class_probabilities_pooled_by_default_and_per_label_with_top_label(tmp_path, rng, capsys,
                                                                             calls):
    prob = rng.dirichlet(np.ones(3), size=200)
    y = np.array([rng.choice(3, p=r) for r in prob])
    names = np.array(["cat", "dog", "eel"])[y]
    path = tmp_path / "multi.csv"
    path.write_text("y_true,p_0,p_1,p_2\n" + "\n".join(
        f"{a},{float(b)!r},{float(c)!r},{float(d)!r}" for a, (b, c, d) in zip(names, prob)))
    code, out, _ = run(capsys, "cross-check", path, "--labels", "cat,dog,eel", "--model", "binned")
    assert code == 0 and "top-label: confidence = max_k p_k" in out.splitlines()[1]
    (args, kwargs), = calls
    np.testing.assert_array_equal(args[0], names)
    np.testing.assert_array_equal(args[1], prob)
    assert kwargs["labels"] == ["cat", "dog", "eel"] and not kwargs["top_label"]
    calls.clear()
    code, out, _ = run(capsys, "cross-check", path, "--labels", "cat,dog,eel", "--model", "binned",
                       "--top-label", "--json")
    (_, kwargs), = calls
    assert code == 0 and kwargs["top_label"] and "pos_label" not in kwargs
    d = json.loads(out)
    assert d["n"] == 200 and d["input_kind"].startswith("predictions, top-label per predicted label")


def test_regression_forecasts_check_the_smooth_pit_model_on_the_reports_pit(tmp_path, rng, capsys,
                                                                           calls):
    path, y, mean = _gaussian_file(tmp_path, rng)
    code, out, err = run(capsys, "cross-check", path, "--json", "--levels", "0.1,0.5,0.9")
    assert code == 0 and err == ""
    (args, kwargs), = calls
    np.testing.assert_allclose(args[0], pit(y, mean=mean, std=1.0), rtol=0, atol=0)
    assert kwargs["model"] == SmoothPITModel(levels=[0.1, 0.5, 0.9])
    d = json.loads(out)
    assert d["model"] == "smooth-pit" and d["input_kind"] == "Gaussian forecasts (PIT values)"
    assert set(d) >= {"agree", "converged", "reasons", "rule", "table", "mcmc", "seed",
                      "bece_version", "evidence"}
    calls.clear()
    assert run(capsys, "cross-check", path, "--model", "dirichlet")[0] == 0
    assert calls[0][1]["model"] == DirichletPITModel()


@pytest.mark.parametrize("argv, message", [
    (("--n-bins", "5"), "--n-bins applies only to a classifier's predictions"),
    (("--top-label",), "--top-label applies only to a classifier's predictions"),
    (("--model", "binned"), "--model binned is not a model of regression forecasts"),
])
def test_options_of_the_other_kind_of_file_are_refused(tmp_path, rng, capsys, argv, message):
    path, _, _ = _gaussian_file(tmp_path, rng, n=20)
    code, out, err = run(capsys, "cross-check", path, *argv)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1


def test_bad_classifier_options_are_refused_before_nuts(tmp_path, rng, capsys):
    path, _, _ = _binary_file(tmp_path, rng, n=20)
    for argv, message in ((("--model", "dirichlet"), "not a model of a classifier's predictions"),
                          (("--top-label",), "--top-label needs class probabilities"),
                          (("--y-col", "t"), "--y-col applies only to regression forecasts"),
                          (("--chains", "0"), "invalid count '0'"),
                          (("--draws", "x"), "invalid count 'x'")):
        code, out, err = run(capsys, "cross-check", path, *argv)
        assert code == 2 and out == "" and message in err, (argv, err)


def test_too_few_draws_for_the_evidence_are_named_in_the_commands_words(tmp_path, rng, capsys):
    """The smooth model's evidence of exact calibration is bridge-sampled from half
    the NUTS draws: with fewer draws than dimensions its Normal proposal would be
    singular (numpy's LinAlgError before); a ValueError names what to raise."""
    path, _, _ = _binary_file(tmp_path, rng, n=200)
    code, out, err = run(capsys, "cross-check", path, "--chains", 1, "--warmup", 50, "--draws", 20)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "too few NUTS draws for bridge sampling" in err and "(--chains x --draws), got 1 x 20" in err


def test_a_real_check_of_the_binned_model_prints_the_results_own_words(tmp_path, rng, capsys):
    """End to end, NUTS included (2 chains of 300 + 300 draws on the conjugate binned
    model at n = 300, 5 bins): the text is the CrossCheck's text and the JSON its
    to_dict(), under one header. Convergence itself is not asserted (300 draws)."""
    path, y, p = _binary_file(tmp_path, rng)
    small = ("--model", "binned", "--n-bins", 5, "--chains", 2, "--warmup", 300, "--draws", 300)
    code, out, _ = run(capsys, "cross-check", path, *small, "--json")
    d = json.loads(out)
    cc = bece.cross_check(y, p, model="binned", n_bins=5, num_chains=2, num_warmup=300,
                          num_samples=300, seed=0, progress_bar=False)
    assert code == 0 and {k: d[k] for k in cc.to_dict()} == json.loads(json.dumps(cc.to_dict()))
    code, out, _ = run(capsys, "cross-check", path, *small)
    assert code == 0 and out.split("\n", 2)[2] == cc.text() + "\n"


def test_cross_check_reads_predictions_as_bayesian_ece_does():
    """pos_label, labels and from_logits read the predictions into the same
    statistics as the plain arrays (the binned model's own, checked by NUTS);
    with statistics or a result they are refused."""
    rng = np.random.default_rng(5)
    p = rng.uniform(0.01, 0.99, size=300)
    y = (rng.uniform(size=300) < p).astype(int)
    tiny = {"model": "binned", "n_bins": 5, "num_chains": 1, "num_warmup": 50, "num_samples": 50,
            "progress_bar": False}
    plain = bece.cross_check(y, p, **tiny).closed_form.stats
    named = bece.cross_check(np.where(y == 1, "dog", "cat"), p, pos_label="dog", **tiny)
    assert named.closed_form.stats == plain
    logits = bece.cross_check(y, np.log(p) - np.log1p(-p), from_logits=True, **tiny)
    np.testing.assert_array_equal(logits.closed_form.stats.counts, plain.counts)
    np.testing.assert_allclose(logits.closed_form.stats.sum_p, plain.sum_p, rtol=1e-12)
    prob = rng.dirichlet(np.ones(3), size=300)
    k = np.array([rng.choice(3, p=r) for r in prob])
    top = bece.cross_check(k, prob, top_label=True, **tiny).closed_form
    text = bece.cross_check(np.array(["a", "b", "c"])[k], prob, top_label=True,
                            labels=["a", "b", "c"], **tiny).closed_form
    np.testing.assert_array_equal(top.draws, text.draws)
    for given in ({"pos_label": 1}, {"from_logits": True}):
        with pytest.raises(ValueError, match="say how predictions are read"):
            bece.cross_check(bece.BinnedModel(n_bins=5).statistics(y, p), **given, **tiny)
