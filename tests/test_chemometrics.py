"""The chemometrics staples (issue #19): engine oracles (scikit-learn, scipy, closed forms worked by hand) for
every function of engine.methods.chemometrics, and the staples rendered on the edPLS and DP-PCR pages under
AppTest on the NIR sample set."""
from __future__ import annotations

import io
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import openpyxl
import pytest
from scipy import stats
from scipy.linalg import hadamard
from scipy.spatial.distance import mahalanobis
from sklearn.cross_decomposition import PLSRegression
from sklearn.metrics import r2_score
from sklearn.model_selection import KFold
from streamlit.testing.v1 import AppTest

from engine.data.catalog import SAMPLE_SETS
from engine.data.io import load_table
from engine.methods.chemometrics import (
    example_rows,
    fit_reference,
    latent_model,
    max_cv_components,
    mean_baseline,
    means_not_beaten,
    metrics_table,
    no_better_than_mean,
    outlier_diagnostics,
    private_k_choice,
    q_limit,
    range_check,
    reference_loadings,
    regression_metrics,
    rmsecv_curve,
    t2_limit,
    vip,
    vip_from_weights,
)
from engine.methods.chemometrics.diagnostics import BOX, JACKSON_MUDHOLKAR
from engine.methods.chemometrics.metrics import DP_MEAN_LABEL, TRAIN_MEAN_LABEL
from engine.methods.edpls import EDPLS
from engine.methods.edpls.pipeline import page_problem, preprocess
from engine.methods.edpls.recommended import make_strict_edpls
from ui.chemometrics import NO_BETTER, TABS

ROOT = Path(__file__).resolve().parents[1]
RNG = np.random.default_rng(19)


def nir_problem():
    sample = SAMPLE_SETS["nir"]
    return page_problem(load_table(sample.path), sample.response_columns[0], sample.response_columns)


def latent_data(n=60, m=25, rank=3, noise=0.0, seed=0):
    """X of exact rank ``rank`` (plus noise) and y linear in its latent factors."""
    rng = np.random.default_rng(seed)
    T, P = rng.normal(size=(n, rank)), rng.normal(size=(m, rank))
    X = T @ P.T + noise * rng.normal(size=(n, m))
    return X, T @ np.arange(1.0, rank + 1) + noise * rng.normal(size=n)


# --------------------------------------------------------------------------------------------- cv
def test_latent_model_is_scikit_learns_pls_or_pcr():
    pls = latent_model("pls", 3)
    assert isinstance(pls, PLSRegression) and pls.n_components == 3 and pls.scale is False
    pcr = latent_model("pcr", 2)
    assert [name for name, _ in pcr.steps] == ["pca", "linearregression"] and pcr[0].n_components == 2
    with pytest.raises(ValueError, match="unknown latent-variable method"):
        latent_model("lasso", 1)


def test_max_cv_components_caps_by_fold_rows_and_channels():
    # 14 rows, 5 folds: the largest test fold has 3 rows, so the smallest training fold 11: k <= 10
    assert max_cv_components(14, 1047, 5, 20) == 10
    assert max_cv_components(100, 6, 5, 20) == 6
    assert max_cv_components(100, 600, 5, 4) == 4
    assert max_cv_components(2, 10, 2, 5) == 0


@pytest.mark.parametrize("method", ["pls", "pcr"])
def test_rmsecv_equals_a_hand_loop_over_the_folds(method):
    """Oracle: the same KFold split, one scikit-learn fit per fold and k, errors pooled by hand."""
    X, y = latent_data(n=40, m=12, rank=3, noise=0.1, seed=1)
    curve = rmsecv_curve(X, y, 6, n_splits=4, method=method, random_state=3)
    kf = KFold(4, shuffle=True, random_state=3)
    for i, k in enumerate(curve.ks):
        err = np.empty_like(y)
        fold_rmse = []
        for tr, te in kf.split(X):
            err[te] = y[te] - np.ravel(latent_model(method, k).fit(X[tr], y[tr]).predict(X[te]))
            fold_rmse.append(math.sqrt(np.mean(err[te] ** 2)))
        assert curve.rmsecv[i] == pytest.approx(math.sqrt(np.mean(err**2)), rel=1e-10)
        np.testing.assert_allclose(curve.fold_rmse[i], fold_rmse, rtol=1e-10)
        assert curve.se[i] == pytest.approx(np.std(fold_rmse, ddof=1) / 2, rel=1e-10)


def test_rmsecv_finds_the_true_number_of_latent_variables():
    X, y = latent_data(n=60, m=25, rank=3, noise=1e-3, seed=2)
    curve = rmsecv_curve(X, y, 8)
    assert curve.rmsecv[2] < 0.05 * curve.rmsecv[1]  # three factors explain y, two do not
    assert curve.k_one_se == 3 and curve.k_min >= 3
    # the one-SE rule, by hand from the curve
    i = int(np.argmin(curve.rmsecv))
    assert curve.k_one_se == curve.ks[np.flatnonzero(curve.rmsecv <= curve.rmsecv[i] + curve.se[i])[0]]
    table = curve.table()
    assert list(table.columns) == ["latent variables k", "RMSECV", "standard error", "minimum", "one-SE rule"]
    assert table["minimum"].sum() == 1 and table.loc[table["one-SE rule"], "latent variables k"].item() == 3


def test_rmsecv_refuses_too_few_rows():
    with pytest.raises(ValueError, match="too few"):
        rmsecv_curve(RNG.normal(size=(2, 5)), np.arange(2.0), 4, n_splits=2)
    with pytest.raises(ValueError, match="at least 2"):
        rmsecv_curve(np.ones((1, 5)), np.arange(1.0), 4)


def test_private_k_choice_reads_the_fitted_model():
    ridge = private_k_choice(SimpleNamespace(choices_={"k": "ridge", "d": 12, "d_max": 30}))
    assert ridge["k"] is None and "no number of latent variables" in ridge["text"] and "12 of 30" in ridge["text"]
    assert private_k_choice(SimpleNamespace(choices_={"k": 3, "d": 9, "d_max": 30}))["k"] == 3
    assert "constant predictor" in private_k_choice(SimpleNamespace(choices_={"k": 0}))["text"]
    X, y = latent_data(n=30, m=10, rank=6, noise=0.1)
    plain = EDPLS(n_components=4, epsilon=math.inf, mode="paper").fit(X, y)
    assert private_k_choice(plain) == {"k": 4, "text": private_k_choice(plain)["text"]}
    assert "set on the page" in private_k_choice(plain)["text"]
    assert private_k_choice(object())["k"] is None
    # a real recommended fit: the text follows its own choices_
    prob = nir_problem()
    model = make_strict_edpls(1.0, 1e-5, y_range=(0.0, 100.0), random_state=0).fit(prob.X, prob.y)
    got = private_k_choice(model)
    assert got["k"] == (model.choices_["k"] if isinstance(model.choices_["k"], int) and model.choices_["k"] else None)


# ---------------------------------------------------------------------------------------- metrics
def test_regression_metrics_against_sklearn_and_closed_forms():
    y = RNG.normal(10, 2, 50)
    p = y + RNG.normal(0.3, 0.5, 50)
    m = regression_metrics(y, p)
    rmsep = np.sqrt(np.mean((p - y) ** 2))
    assert m["RMSEP"] == pytest.approx(rmsep, rel=1e-12)
    assert m["R²"] == pytest.approx(r2_score(y, p), rel=1e-12)
    assert m["R²"] == pytest.approx(1 - np.sum((y - p) ** 2) / np.sum((y - y.mean()) ** 2), rel=1e-12)
    assert m["RPD"] == pytest.approx(np.std(y, ddof=1) / rmsep, rel=1e-12)
    assert m["bias"] == pytest.approx(np.mean(p - y), rel=1e-12) and m["bias"] > 0
    # a hand case: y = (1, 2, 3), p = (2, 2, 2): RMSEP sqrt(2/3), R² 0, RPD 1 / sqrt(2/3), bias 0
    h = regression_metrics([1, 2, 3], [2, 2, 2])
    assert (h["RMSEP"], h["R²"], h["RPD"], h["bias"]) == pytest.approx((math.sqrt(2 / 3), 0, math.sqrt(1.5), 0))
    assert regression_metrics([1, 2], [1, 2])["RPD"] == math.inf
    with pytest.raises(ValueError):
        regression_metrics([1, 2, 3], [1, 2])


def test_metrics_table_has_one_row_per_model():
    y = np.arange(5.0)
    table = metrics_table(y, {"a": y + 1, "b": y})
    assert list(table["model"]) == ["a", "b"] and list(table.columns) == ["model", "RMSEP", "R²", "RPD", "bias"]
    assert table.loc[0, "bias"] == 1.0 and table.loc[1, "RMSEP"] == 0.0


def test_range_check_declared_training_and_both():
    pred = np.array([-1.0, 5.0, 12.0, 101.0])
    declared = range_check(pred, declared=(0, 100), y_train=[4.0, 11.0])
    assert declared["outside"].tolist() == [True, False, False, True] and declared["n_outside"] == 2
    assert declared["source"] == "the declared public y range" and declared["n_outside_train"] == 3
    train = range_check(pred, y_train=[4.0, 11.0])
    assert train["range"] == (4.0, 11.0) and train["n_outside"] == 3 and "owner's view" in train["source"]
    with pytest.raises(ValueError):
        range_check(pred)
    with pytest.raises(ValueError):
        range_check(pred, declared=(5, 5))


def test_mean_baseline_and_the_badge_rule():
    y_test, y_train = np.array([1.0, 2.0, 3.0]), np.array([0.0, 4.0])
    rmsep, label = mean_baseline(y_test, y_train=y_train)  # predicts 2 everywhere
    assert rmsep == pytest.approx(math.sqrt(2 / 3)) and label == TRAIN_MEAN_LABEL
    rmsep, label = mean_baseline(y_test, dp_pred=[3.0, 3.0, 3.0], y_train=y_train)  # the DP mean wins
    assert rmsep == pytest.approx(math.sqrt(5 / 3)) and label == DP_MEAN_LABEL
    with pytest.raises(ValueError):
        mean_baseline(y_test)
    assert no_better_than_mean(1.0, 1.0) and no_better_than_mean(2.0, 1.0) and not no_better_than_mean(0.9, 1.0)
    # the private model at RMSEP 1.2: beats the DP mean at sqrt(5/3) = 1.29, not the training mean at sqrt(2/3)
    private = y_test + np.array([1.2, -1.2, 1.2])
    assert means_not_beaten(y_test, private, dp_pred=[3.0] * 3, y_train=y_train) == [
        (TRAIN_MEAN_LABEL, pytest.approx(math.sqrt(2 / 3)))]
    assert means_not_beaten(y_test, y_test + 2, dp_pred=[3.0] * 3) == [(DP_MEAN_LABEL, pytest.approx(math.sqrt(5 / 3)))]
    assert means_not_beaten(y_test, y_test + 0.1, dp_pred=[3.0] * 3, y_train=y_train) == []


# ------------------------------------------------------------------------------------ diagnostics
def test_vip_hand_computed_two_components():
    """W = [e1, e2] (3 channels), t't = (4, 1), q = (1, 2): SS = (4, 4), VIP = sqrt(3 * 4 / 8) for channels 1 and 2,
    0 for channel 3."""
    W = np.array([[2.0, 0.0], [0.0, 5.0], [0.0, 0.0]])  # normalised inside
    T = np.array([[2.0, 1.0], [0.0, 0.0]])
    got = vip_from_weights(W, T, [1.0, 2.0])
    np.testing.assert_allclose(got, [math.sqrt(1.5), math.sqrt(1.5), 0.0])
    with pytest.raises(ValueError):
        vip_from_weights(W, T, [0.0, 0.0])


def test_vip_of_one_component_is_the_normalised_covariance():
    """One component: w = X'y / ||X'y||, so VIP_j = sqrt(p) |X'y|_j / ||X'y||. Here X'y = (3, 4) by hand."""
    X = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    y = np.array([1.5, -1.5, 2.0, -2.0])
    np.testing.assert_allclose(vip(PLSRegression(1, scale=False).fit(X, y)), [0.84852814, 1.13137085], rtol=1e-7)


@pytest.mark.parametrize("k", [1, 2, 4, 7])
def test_mean_of_vip_squared_is_one(k):
    X, y = latent_data(n=50, m=30, rank=8, noise=0.1, seed=k)
    v = vip(fit_reference(X, y, k))
    assert v.shape == (30,) and np.mean(v**2) == pytest.approx(1.0, rel=1e-10)


def test_reference_loadings_pls_and_pcr():
    X, y = latent_data(n=40, m=10)
    pls, pcr = fit_reference(X, y, 3), fit_reference(X, y, 2, "pcr")
    np.testing.assert_array_equal(reference_loadings(pls), pls.x_loadings_)
    np.testing.assert_array_equal(reference_loadings(pcr), pcr[0].components_.T)


def test_t2_limit_against_the_f_table():
    # F_0.95(2, 18) = 3.5546 (printed tables): 2 * 19 / 18 * 3.5546 = 7.504
    assert t2_limit(20, 2, 0.95) == pytest.approx(2 * 19 / 18 * 3.5546, rel=1e-4)
    assert t2_limit(20, 2, 0.95, new=True) == pytest.approx(2 * 19 * 21 / (20 * 18) * 3.5546, rel=1e-4)
    assert t2_limit(20, 2, 0.99) > t2_limit(20, 2, 0.95)
    assert math.isnan(t2_limit(3, 3, 0.95))


@pytest.mark.parametrize("alpha", [0.95, 0.99])
def test_q_limit_with_equal_eigenvalues_is_wilson_hilferty(alpha):
    """r equal eigenvalues lam: h0 = 1/3 and Jackson-Mudholkar reduces to lam r (1 - 2/(9r) + z sqrt(2/(9r)))^3,
    the Wilson-Hilferty form of lam chi2_r (Box's approximation is then exact: g = lam, h = r)."""
    lam, r = 8 / 7, 6
    got, method = q_limit(np.full(r, lam), alpha)
    z = stats.norm.ppf(alpha)
    assert method == JACKSON_MUDHOLKAR
    assert got == pytest.approx(lam * r * (1 - 2 / (9 * r) + z * math.sqrt(2 / (9 * r))) ** 3, rel=1e-12)
    assert got == pytest.approx(lam * stats.chi2.ppf(alpha, r), rel=0.02)


def test_q_limit_falls_back_to_box_where_jackson_mudholkar_breaks():
    lam = np.array([1.0] + [0.01] * 100)  # theta1 = 2, theta2 = 1.01, theta3 = 1.0001: h0 < 0
    got, method = q_limit(lam, 0.95)
    t1, t2 = lam.sum(), (lam**2).sum()
    assert method == BOX and got == pytest.approx(t2 / t1 * stats.chi2.ppf(0.95, t1**2 / t2), rel=1e-12)
    assert math.isnan(q_limit([0.0, 0.0], 0.95)[0])


@pytest.mark.parametrize("method", ["pls", "pcr"])
def test_outlier_diagnostics_on_a_hadamard_design(method):
    """8 rows, 7 orthogonal +-1 columns, the first scaled by 10, y = that column: one latent variable is the first
    column. By hand: T² = 100 / (100 * 8 / 7) = 7/8 for every row, Q = 6 (the other six squared entries), the
    residual eigenvalues are six times 8/7."""
    H = hadamard(8).astype(float)[:, 1:]
    X = H * np.r_[10.0, np.ones(6)]
    model = fit_reference(X, H[:, 0], 1, method)
    new = np.array([[0.0] * 7, [10.0, 3, 0, 0, 0, 0, 0]])
    d = outlier_diagnostics(model, X, new, train_rows=np.arange(10, 18), test_rows=[40, 41])
    tr, te = d.table[d.table["set"] == "training"], d.table[d.table["set"] == "test"]
    np.testing.assert_allclose(tr["T²"], 7 / 8)
    assert tr["T²"].sum() == pytest.approx(1 * (8 - 1))  # sum of T² over the training rows = A (n - 1)
    np.testing.assert_allclose(tr["Q"], 6.0)
    np.testing.assert_allclose(te["Q"], [0.0, 9.0])
    np.testing.assert_allclose(te["T²"], [0.0, 7 / 8])  # its first entry is a training row's: the same score
    assert list(tr["row"]) == list(range(10, 18)) and list(te["row"]) == [40, 41]
    for a in (0.95, 0.99):
        assert d.t2_limits[a] == pytest.approx(t2_limit(8, 1, a)) and d.t2_limits_new[a] == t2_limit(8, 1, a, new=True)
        assert d.q_limits[a] == pytest.approx(q_limit(np.full(6, 8 / 7), a)[0], rel=1e-9)
    assert d.q_method == JACKSON_MUDHOLKAR and d.n_components == 1 and d.n_train == 8
    assert d.counts[("test", "Q", 0.95)] == int(9.0 > d.q_limits[0.95])
    assert not d.table["T² over 95%"].any()


def test_t2_is_the_mahalanobis_distance_of_the_scores():
    X, y = latent_data(n=40, m=15, rank=5, noise=0.2, seed=4)
    model = fit_reference(X[:30], y[:30], 3)
    d = outlier_diagnostics(model, X[:30], X[30:])
    T = model.transform(X[:30])
    VI = np.linalg.inv(np.cov(T, rowvar=False))
    expect = [mahalanobis(t, np.zeros(3), VI) ** 2 for t in model.transform(X)]
    np.testing.assert_allclose(d.table["T²"], expect, rtol=1e-8)
    # Q: squared distance to the reconstruction from the k scores
    np.testing.assert_allclose(d.table["Q"], np.sum((X - model.inverse_transform(model.transform(X))) ** 2, axis=1))
    for a in (0.95, 0.99):
        flags = d.table["Q"] > d.q_limits[a]
        assert (d.table[f"Q over {a:.0%}"] == flags).all()
        assert d.counts[("training", "Q", a)] == int(flags[:30].sum())
    assert outlier_diagnostics(model, X[:30]).table["set"].eq("training").all()


def test_example_rows_spread_over_the_training_rows():
    np.testing.assert_array_equal(example_rows(np.arange(100, 200), 5), [100, 125, 150, 174, 199])
    np.testing.assert_array_equal(example_rows([7, 9], 5), [7, 9])
    assert example_rows([], 5).size == 0


# ----------------------------------------------------------------------------------- the pages
def open_staples(page: str, key: str, sample: str | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / page), default_timeout=180)
    at.run()
    assert not at.exception, at.exception
    if sample is not None:  # a page whose default sample set is not the one the test's numbers are from
        at.selectbox(key=f"{page.removesuffix('.py')}_data_sample").set_value(SAMPLE_SETS[sample].title).run()
        assert not at.exception, at.exception
    charts = len(at.get("plotly_chart"))
    at.session_state[key] = True  # open the expander (it computes only when open)
    at.run()
    assert not at.exception, at.exception
    at.charts_before = charts
    return at


def text_of(at) -> str:
    return " ".join(x.value for x in at.markdown) + " " + " ".join(x.value for x in at.caption)


@pytest.mark.slow  # 15 s (pytest --durations, load 7-15, 2026-11-27): out of the fast lane
def test_edpls_page_shows_the_staples_on_the_nir_sample(deferred):
    at = open_staples("edpls.py", "edpls_staples", sample="nir")  # the page opens on the consortium set
    assert [t.label for t in at.tabs][-len(TABS):] == list(TABS)
    assert len(at.get("plotly_chart")) == at.charts_before + 6
    text = text_of(at)
    prob = nir_problem()
    Xp = preprocess(prob.X, "+".join(at.multiselect(key="edpls_chain_steps").value) or "none", prob.train)
    curve = rmsecv_curve(Xp[prob.train], prob.y[prob.train], 20)
    assert f"Suggested: **k = {curve.k_one_se}** by the one-standard-error rule" in text
    assert f"minimum RMSECV is at k = {curve.k_min}" in text
    assert "Private choice of k, as the private fit made it:" in text and "owner's view" in text.lower()
    # the non-private row of the metrics table is scikit-learn's PLS on the page's chain and k
    table = next(df.value for df in at.dataframe if "RPD" in df.value.columns)
    ref = PLSRegression(5, scale=False).fit(Xp[prob.train], prob.y[prob.train]).predict(Xp[prob.test]).ravel()
    row = table[table["model"] == "non-private PLS1 (k = 5)"].iloc[0]
    assert row["R²"] == pytest.approx(r2_score(prob.y[prob.test], ref), rel=1e-6)
    assert row["RPD"] == pytest.approx(np.std(prob.y[prob.test], ddof=1) / np.sqrt(np.mean((ref - prob.y[prob.test])
                                                                                            ** 2)), rel=1e-6)
    assert {"private constant predictor (DP mean)", "training mean of y (owner's view)"} <= set(table["model"])
    mean_row = table[table["model"] == "training mean of y (owner's view)"].iloc[0]
    assert mean_row["bias"] == pytest.approx(prob.y[prob.train].mean() - prob.y[prob.test].mean(), rel=1e-9)
    assert "test predictions outside the declared public y range [0, 100]" in text
    assert "Over the 95 % / 99 % limits:" in text and ("Jackson-Mudholkar" in text or "Box" in text)
    # the owner's workbook carries the diagnostics' tables
    (button,) = [b for b in at.get("download_button") if b.proto.id.endswith("edpls_export_workbook")]
    book = openpyxl.load_workbook(io.BytesIO(deferred[button.proto.deferred_file_id]()))
    assert {"diagnostics RMSECV", "diagnostics VIP", "diagnostics T2 and Q"} <= set(book.sheetnames)


@pytest.mark.slow  # 13 s (pytest --durations, load 7-15, 2026-11-27): out of the fast lane
def test_edpls_plain_and_paper_branches_show_the_staples():
    at = open_staples("edpls.py", "edpls_staples")
    at.radio(key="edpls_strict_estimator").set_value("plain").run()
    assert not at.exception, at.exception
    text = text_of(at)
    assert "k = 5: the number of latent variables set on the page" in text
    assert "outside the declared public bound on |y| [-100, 100]" in text
    at.sidebar.radio(key="edpls_mode").set_value("paper").run()
    assert not at.exception, at.exception
    assert "outside the training y range (owner's view, not private)" in text_of(at)


@pytest.mark.slow  # among the suite's slowest (pytest --durations): out of the fast lane
def test_dp_pcr_page_shows_the_staples_with_pcr():
    at = open_staples("dp_pcr.py", "dp_pcr_staples")
    assert len(at.get("plotly_chart")) == at.charts_before + 4  # no VIP, no preprocessing on this page
    assert [t.label for t in at.tabs][-5:] == [*TABS[:3], "Loadings", TABS[4]]
    text = text_of(at)
    assert "cross-validation of non-private PCR" in text
    assert any("VIP (variable importance in projection) is defined for PLS" in x.value for x in at.info)


def _badge_app(pred_offset: float, dp: str):
    import numpy as np

    from ui.chemometrics import Staples, mean_badge

    y = np.linspace(0.0, 10.0, 20)
    train, test = np.arange(0, 20, 2), np.arange(1, 20, 2)
    mean_badge(Staples(page="t", X_raw=np.zeros((20, 3)), X_model=np.zeros((20, 3)), y=y, train=train, test=test,
                       axis=np.arange(3), axis_label="c", response="y", k_page=1,
                       pred_private=y[test] + pred_offset, pred_reference=y[test], private_label="p",
                       private_model=None,
                       dp_mean_pred={"none": None, "five": np.full(10, 5.0), "exact": y[test]}[dp]))


@pytest.mark.parametrize(("offset", "dp", "shown", "which"), [
    (0.1, "none", False, ()), (4.0, "none", True, ("training mean",)), (2.0, "five", False, ()),
    (4.0, "five", True, ("DP mean", "training mean")), (0.1, "exact", True, ("DP mean",))])
def test_the_badge_shows_exactly_when_no_better_than_the_mean(offset, dp, shown, which):
    """Test y = 10 (2i + 1) / 19: predicting 5 (a DP mean) or the training mean (4.74) gives RMSEP about 3;
    a DP mean equal to the test values ("exact") is beaten by nothing."""
    at = AppTest.from_function(_badge_app, kwargs={"pred_offset": offset, "dp": dp}).run()
    assert not at.exception, at.exception
    markdown = " ".join(x.value for x in at.markdown)
    assert (NO_BETTER in markdown) is shown
    caption = " ".join(x.value for x in at.caption)
    for label in which:
        assert label in caption
    if "training mean" not in which:
        assert "training mean" not in caption


def _tiny_app():
    import numpy as np

    from ui.chemometrics import Staples, staples_section

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(4, 12)), np.array([1.0, 2.0, 3.0, 4.0])
    staples_section(Staples(page="tiny", X_raw=X, X_model=X, y=y, train=np.arange(3), test=np.array([3]),
                            axis=np.arange(12), axis_label="c", response="y", k_page=2, pred_private=np.array([2.0]),
                            pred_reference=np.array([3.5]), private_label="p", private_model=None, chain="snv"))


def test_staples_on_too_few_rows_say_so_without_an_exception():
    """Three training rows and one test row: no metrics of one row (a message in its tab), the rest drawn."""
    at = AppTest.from_function(_tiny_app)
    at.session_state["tiny_staples"] = True
    at.run()
    assert not at.exception, at.exception
    infos = " ".join(x.value for x in at.info)
    assert "Metrics: not available on these rows" in infos
    assert len(at.get("plotly_chart")) >= 3
