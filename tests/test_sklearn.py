"""bece.sklearn: scorers inside cross_val_score and GridSearchCV, and the display in
scikit-learn's convention, against scikit-learn's own readings."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from sklearn.calibration import CalibrationDisplay, calibration_curve  # noqa: E402
from sklearn.datasets import load_breast_cancer, load_iris  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

import bece  # noqa: E402
import bece.metrics as bm  # noqa: E402
from bece._api.scorers import SCORER_METRICS  # noqa: E402
from bece.sklearn import (  # noqa: E402
    BayesianCalibrationDisplay,
    ece_scorer,
    make_calibration_scorer,
    posterior_ece_scorer,
)


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    return X, y


def _model(c=1.0):
    return make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=2000))


def _folds(X, y, cv):
    """What cross_val_score does, by hand: fit on each training part, score the rest."""
    for train, test in cv.split(X, y):
        yield _model().fit(X[train], y[train]), X[test], y[test]


def test_ece_scorer_in_cross_val_score_is_minus_the_ece_of_predict_proba_column_1(cancer):
    X, y = cancer
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    scores = cross_val_score(_model(), X, y, cv=cv, scoring=ece_scorer)
    by_hand = [-bece.expected_calibration_error(yt, m.predict_proba(Xt)[:, 1])
               for m, Xt, yt in _folds(X, y, cv)]
    np.testing.assert_allclose(scores, by_hand, rtol=1e-12)
    assert np.all(scores <= 0)
    # the same reading as scikit-learn's binary scorers: its neg_brier_score
    brier = cross_val_score(_model(), X, y, cv=cv, scoring=make_calibration_scorer("brier"))
    np.testing.assert_allclose(brier, cross_val_score(_model(), X, y, cv=cv,
                                                      scoring="neg_brier_score"), rtol=1e-12)
    loss = cross_val_score(_model(), X, y, cv=cv, scoring=make_calibration_scorer("log_loss"))
    np.testing.assert_allclose(loss, cross_val_score(_model(), X, y, cv=cv,
                                                     scoring="neg_log_loss"), rtol=1e-10)


def test_text_labels_read_as_p_of_classes_1(cancer):
    X, y = cancer
    names = np.array(["benign", "malignant"])[1 - y]  # classes_ = [benign, malignant]
    model = _model().fit(X[::2], names[::2])
    p = model.predict_proba(X[1::2])[:, 1]
    expected = bece.expected_calibration_error(names[1::2], p, pos_label="malignant")
    assert ece_scorer(model, X[1::2], names[1::2]) == pytest.approx(-expected, rel=1e-12)
    # scikit-learn's calibration_curve reads the same column: its bins match ours
    prob_true, prob_pred = calibration_curve(names[1::2] == "malignant", p, n_bins=15)
    disp = BayesianCalibrationDisplay.from_estimator(model, X[1::2], names[1::2],
                                                     num_samples=500)
    keep = ~np.isnan(disp.prob_true)
    np.testing.assert_allclose(disp.prob_true[keep], prob_true, rtol=1e-12)
    np.testing.assert_allclose(disp.prob_pred[keep], prob_pred, rtol=1e-12)
    assert disp.pos_label == "malignant"


def test_grid_search_picks_by_the_scorer_and_multi_metric_scoring_works(cancer):
    X, y = cancer
    cv = StratifiedKFold(3, shuffle=True, random_state=1)
    grid = {"logisticregression__C": [1e-3, 1.0]}
    search = GridSearchCV(_model(), grid, cv=cv, scoring=ece_scorer).fit(X, y)
    means = search.cv_results_["mean_test_score"]
    assert search.best_index_ == int(np.argmax(means))
    for c, mean in zip(grid["logisticregression__C"], means):
        by_hand = np.mean([-bece.expected_calibration_error(
            yt, _model(c).fit(X[tr], y[tr]).predict_proba(Xt)[:, 1])
            for (tr, te) in cv.split(X, y) for Xt, yt in [(X[te], y[te])]])
        assert mean == pytest.approx(by_hand, rel=1e-12)
    multi = GridSearchCV(_model(), grid, cv=cv, refit="ece",
                         scoring={"ece": ece_scorer, "l2": make_calibration_scorer("l2"),
                                  "accuracy": "accuracy"}).fit(X, y)
    assert {"mean_test_ece", "mean_test_l2", "mean_test_accuracy"} <= set(multi.cv_results_)


def test_posterior_scorer_is_minus_the_default_posterior_mean(cancer):
    X, y = cancer
    model = _model().fit(X[::2], y[::2])
    p = model.predict_proba(X[1::2])[:, 1]
    mean = bece.bayesian_ece(y[1::2], p, num_samples=2000, seed=0).mean
    assert posterior_ece_scorer(model, X[1::2], y[1::2]) == pytest.approx(-mean, rel=1e-12)
    scores = cross_val_score(_model(), X, y, cv=2, scoring=posterior_ece_scorer)
    assert scores.shape == (2,) and np.all(scores < 0)


def test_more_classes_read_top_label(cancer):
    X, y = load_iris(return_X_y=True)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    model = _model().fit(X[::2], names[::2])
    prob = model.predict_proba(X[1::2])
    expected = bece.expected_calibration_error(names[1::2], prob, labels=model.classes_)
    # top-label by hand: confidence max_k p_k, correct [argmax == y]
    conf = prob.max(axis=1)
    correct = (model.classes_[prob.argmax(axis=1)] == names[1::2]).astype(int)
    assert expected == pytest.approx(bece.expected_calibration_error(correct, conf), rel=1e-12)
    assert ece_scorer(model, X[1::2], names[1::2]) == pytest.approx(-expected, rel=1e-12)
    disp = BayesianCalibrationDisplay.from_estimator(model, X[1::2], names[1::2],
                                                     num_samples=300)
    assert disp.result.stats.kind == "top-label"


@pytest.mark.parametrize("metric", SCORER_METRICS)
def test_every_metric_scores_as_its_function(cancer, metric):
    X, y = cancer
    model = _model().fit(X[::2], y[::2])
    p = model.predict_proba(X[1::2])[:, 1]
    function = {"ece": bece.expected_calibration_error, "mce": bece.maximum_calibration_error,
                "l2": bm.l2_calibration_error, "smooth_ece": bm.smooth_calibration_error,
                "ece_sweep": bm.ece_sweep, "brier": bm.brier_score, "log_loss": bm.log_loss,
                "ks": bm.ks_calibration_error,
                "debiased_l2": lambda a, b, **k: bm.l2_calibration_error(a, b, debiased=True, **k),
                "posterior_ece": lambda a, b, **k: bece.bayesian_ece(
                    a, b, num_samples=2000, seed=0, **k).mean}[metric]
    scorer = make_calibration_scorer(metric)
    assert scorer(model, X[1::2], y[1::2]) == pytest.approx(-function(y[1::2], p, pos_label=1),
                                                           rel=1e-12)
    assert repr(scorer) == f"make_calibration_scorer({metric!r})"


def test_scorer_options_and_bad_input(cancer):
    X, y = cancer
    model = _model().fit(X[::2], y[::2])
    p = model.predict_proba(X[1::2])[:, 1]
    ten = make_calibration_scorer("ece", n_bins=10, binning="quantile")
    assert ten(model, X[1::2], y[1::2]) == pytest.approx(
        -bece.expected_calibration_error(y[1::2], p, n_bins=10, binning="quantile"), rel=1e-12)
    with pytest.raises(ValueError, match="metric must be one of"):
        make_calibration_scorer("accuracy")
    with pytest.raises(ValueError, match="pos_label: set from the estimator's classes_"):
        make_calibration_scorer("ece", pos_label=1)
    from sklearn.linear_model import LinearRegression

    with pytest.raises(ValueError, match="estimator must have predict_proba"):
        ece_scorer(LinearRegression().fit(X, y), X, y)


def test_display_follows_calibration_display(cancer, tmp_path):
    """from_predictions / from_estimator / plot(ax=) as sklearn's CalibrationDisplay:
    prob_true and prob_pred are its calibration_curve's (non-empty bins), the axes
    and figure are kept, and the title carries the estimator's name."""
    import matplotlib.pyplot as plt

    X, y = cancer
    model = _model().fit(X[::2], y[::2])
    p = model.predict_proba(X[1::2])[:, 1]
    theirs = CalibrationDisplay.from_predictions(y[1::2], p, n_bins=10)
    ours = BayesianCalibrationDisplay.from_predictions(y[1::2], p, n_bins=10, num_samples=500,
                                                       name="logistic")
    keep = ~np.isnan(ours.prob_true)
    np.testing.assert_allclose(ours.prob_true[keep], theirs.prob_true, rtol=1e-12)
    np.testing.assert_allclose(ours.prob_pred[keep], theirs.prob_pred, rtol=1e-12)
    assert ours.ax_ is not None and ours.figure_ is ours.ax_.figure
    assert ours.ax_.get_title().startswith("logistic: ")
    fig, ax = plt.subplots()
    again = ours.plot(ax=ax, name="again")
    assert again is ours and ours.ax_ is ax and ax.get_title().startswith("again: ")
    est = BayesianCalibrationDisplay.from_estimator(model, X[1::2], y[1::2], n_bins=10,
                                                    num_samples=500, strategy="quantile")
    assert est.ax_.get_title().startswith("Pipeline: ") and est.result.stats.n == p.size
    assert est.result.plugin == pytest.approx(
        bece.expected_calibration_error(y[1::2], p, n_bins=10, binning="quantile"), rel=1e-12)
    fig.savefig(tmp_path / "display.png")
    with pytest.raises(ValueError, match="strategy must be"):
        BayesianCalibrationDisplay.from_predictions(y, np.full(y.size, 0.5), strategy="kmeans")
    with pytest.raises(ValueError, match="pos_label=2 is not one of the classes"):
        BayesianCalibrationDisplay.from_estimator(model, X, y, pos_label=2)
    plt.close("all")
