"""DP-PCR (issue #17): oracle scikit-learn at ε = ∞, the one release and its ledger, the sensitivity, the
shareable release, the method contract, the audit case and the page under AppTest."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.decomposition import PCA
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import make_pipeline
from streamlit.testing.v1 import AppTest

from downloads import file_of, recorded_downloads
from engine.methods.audit_catalog import make_case
from engine.methods.contract import Comparison
from engine.methods.dp_pcr import (
    CURVE_COLUMNS,
    DPPCR,
    compare,
    estimator_from_release,
    owner_sheets,
    rmsep_vs_epsilon,
    shareable_release,
    to_json,
)
from engine.methods.dp_pcr.audit_case import dp_pcr_case
from engine.methods.registry import method
from engine.privacy import SEED_KNOWN_CAVEAT, analytic_gaussian_sigma
from engine.privacy.audit import run_case
from engine.privacy.moments import add_remove_sensitivity
from engine.release.manifest import release_problems
from engine.release.travel import ModelCard

ROOT = Path(__file__).resolve().parents[1]
NIR = ROOT / "sample_data" / "nir_spectra.csv"


@pytest.fixture(scope="module")
def nir():
    df = pd.read_csv(NIR)
    X = df.drop(columns=["moisture", "oil", "protein", "starch"]).to_numpy(float)
    return X, df["moisture"].to_numpy(float)


def small(n=80, m=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m)) @ np.diag(np.linspace(2.0, 0.2, m)) + 3.0
    y = X @ np.linspace(1.0, -1.0, m) + 0.1 * rng.normal(size=n) + 5.0
    return X, y


# ----------------------------------------------------------------------------- oracle: scikit-learn
@pytest.mark.parametrize("k", [1, 3, 5])
@pytest.mark.parametrize("centre", ["private", "public"])
def test_no_noise_equals_sklearn_pca_linear_regression(nir, k, centre):
    X, y = nir
    extra = dict(x_center=X.mean(axis=0), y_center=float(y.mean())) if centre == "public" else {}
    model = DPPCR(k, epsilon=np.inf, x_bound=100.0, y_bound=100.0, **extra).fit(X, y)
    ref = make_pipeline(PCA(k), LinearRegression()).fit(X, y)
    assert model.n_clipped_ == 0
    np.testing.assert_allclose(model.predict(X), ref.predict(X), rtol=0, atol=1e-8)
    np.testing.assert_allclose(model.components_, ref[0].components_, atol=1e-8)
    np.testing.assert_allclose(model.explained_variance_ratio_, ref[0].explained_variance_ratio_, rtol=1e-10)
    np.testing.assert_allclose(model.explained_variance_ / (len(y) - 1), ref[0].explained_variance_, rtol=1e-10)
    assert len(model.privacy_ledger_) == 0 and model.privacy_ledger_.status == "no privacy"


def test_all_components_is_least_squares():
    X, y = small()
    model = DPPCR(None, epsilon=np.inf, x_bound=100.0, y_bound=100.0).fit(X, y)
    ref = LinearRegression().fit(X, y)
    assert model.n_components_ == X.shape[1]
    np.testing.assert_allclose(model.predict(X), ref.predict(X), atol=1e-8)


# ----------------------------------------------------------------------------- the release and its ledger
def test_one_release_with_the_exact_sensitivity_and_sigma():
    X, y = small()
    model = DPPCR(3, epsilon=1.0, delta=1e-5, x_bound=30.0, y_bound=40.0).fit(X, y)
    (rel,) = model.privacy_ledger_.entries
    a = math.hypot(30.0, 40.0)  # private centring: the constant weighs as much as the data
    assert rel.name == "Z'Z" and rel.sensitivity_source == "public"
    assert rel.sensitivity == pytest.approx(add_remove_sensitivity([30.0, 40.0], a))
    assert rel.sensitivity <= math.sqrt(3) / 2
    assert rel.scale == pytest.approx(analytic_gaussian_sigma(1.0, 1e-5, rel.sensitivity))
    assert model.privacy_ledger_.status == "proven"
    public = DPPCR(3, epsilon=1.0, x_bound=30.0, y_bound=40.0, x_center=np.zeros(6), y_center=0.0,
                   private_intercept=False).fit(X, y)
    assert public.privacy_ledger_.entries[0].sensitivity == pytest.approx(add_remove_sensitivity([30.0, 40.0]))
    # the default learns the intercept privately around the public centre: the constant column's sensitivity
    both = DPPCR(3, epsilon=1.0, x_bound=30.0, y_bound=40.0, x_center=np.zeros(6), y_center=0.0).fit(X, y)
    assert both.privacy_ledger_.entries[0].sensitivity == pytest.approx(rel.sensitivity)


def test_epsilon_inf_without_bounds_is_sklearn_pcr_and_the_intercept_is_private():
    from sklearn.decomposition import PCA
    from sklearn.linear_model import LinearRegression
    from sklearn.pipeline import make_pipeline

    X, y = small()
    X, y = 50.0 * X + 7.0, y + 100.0  # no bound given: nothing is clipped
    model = DPPCR(3, epsilon=np.inf).fit(X, y)
    ref = make_pipeline(PCA(3), LinearRegression()).fit(X, y)
    np.testing.assert_allclose(model.predict(X), ref.predict(X), rtol=1e-8)
    with pytest.raises(ValueError, match="public bounds"):
        DPPCR(3, epsilon=1.0).fit(X, y)
    # a public centre far from the data: the private intercept still finds the offset at epsilon = inf
    far = DPPCR(3, epsilon=np.inf, x_center=np.zeros(X.shape[1]), y_center=0.0).fit(X, y)
    np.testing.assert_allclose(far.predict(X), ref.predict(X), rtol=1e-8)


def test_known_seed_data_bounds_and_caveats_are_not_proven():
    X, y = small()
    seeded = DPPCR(2, epsilon=1.0, x_bound=30.0, y_bound=40.0, random_state=0).fit(X, y)
    assert SEED_KNOWN_CAVEAT in seeded.privacy_ledger_.caveats and seeded.privacy_ledger_.status == "not proven"
    data = DPPCR(2, epsilon=1.0, x_bound=30.0, y_bound=40.0, sensitivity_source="data").fit(X, y)
    assert data.privacy_ledger_.status == "not proven"
    why = DPPCR(2, epsilon=1.0, x_bound=30.0, y_bound=40.0, caveats=("msc fitted on the rows",)).fit(X, y)
    assert why.privacy_ledger_.caveats == ["not proven: msc fitted on the rows"]


def test_seeded_fits_repeat_and_replicates_match_sequential_fits():
    X, y = small()
    est = DPPCR(2, epsilon=2.0, x_bound=30.0, y_bound=40.0)
    a = est.set_params(random_state=7).fit(X, y).coef_.copy()
    np.testing.assert_array_equal(a, est.fit(X, y).coef_)
    g = np.random.default_rng(3)
    batch = est.sample_releases(X, y, 3, g)
    g = np.random.default_rng(3)
    first = DPPCR(2, epsilon=2.0, x_bound=30.0, y_bound=40.0, random_state=g).fit(X, y)
    np.testing.assert_allclose(batch["coef"][0], first.coef_, rtol=1e-12)
    assert not np.allclose(batch["coef"][0], batch["coef"][1])


def test_clipping_counts_rows_beyond_the_bounds():
    X, y = small()
    model = DPPCR(2, epsilon=np.inf, x_bound=1.0, y_bound=40.0).fit(X, y)
    assert model.n_clipped_ == len(y)


@pytest.mark.parametrize("params, match", [
    (dict(), "public bounds"),
    (dict(x_bound=1.0, y_bound=1.0, x_center=np.zeros(6)), "both x_center and y_center"),
    (dict(x_bound=1.0, y_bound=1.0, x_center=np.zeros(6), y_center=0.0, centring=False), "need centring"),
    (dict(x_bound=1.0, y_bound=1.0, calibration="classic", epsilon=2.0), "classic"),
    (dict(x_bound=1.0, y_bound=1.0, epsilon=0.0), "epsilon"),
    (dict(x_bound=-1.0, y_bound=1.0), "x_bound"),
    (dict(x_bound=1.0, y_bound=1.0, n_components=7), "exceeds"),
])
def test_parameters_are_refused_with_a_reason(params, match):
    X, y = small()
    with pytest.raises(ValueError, match=match):
        DPPCR(**params).fit(X, y)


# ----------------------------------------------------------------------------- shareable release
def test_release_holds_dp_and_public_fields_only():
    X, y = small()
    model = DPPCR(2, epsilon=1.0, x_bound=30.0, y_bound=40.0).fit(X, y)
    rel = shareable_release(model, card=ModelCard(response="y"))  # the response name travels on the card
    prov = {m["field"]: m["provenance"] for m in rel["manifest"]}
    assert prov["coef_"] == prov["x_mean_"] == prov["intercept_"] == "dp"
    assert prov["x_bound"] == prov["epsilon"] == "public"
    assert not ({"random_state", "n_clipped_", "caveats"} & set(rel["fields"]))
    assert release_problems(rel) == []
    rebuilt = estimator_from_release(to_json(model))
    np.testing.assert_allclose(rebuilt.predict(X), model.predict(X))


def test_release_leaves_out_data_derived_bounds_and_centre():
    X, y = small()
    model = DPPCR(2, epsilon=1.0, x_bound=30.0, y_bound=40.0, x_center=X.mean(axis=0), y_center=float(y.mean()),
                  sensitivity_source="data").fit(X, y)
    fields = set(shareable_release(model)["fields"])
    assert not ({"x_bound", "y_bound", "x_center", "y_center", "x_mean_", "intercept_"} & fields)
    with pytest.raises(ValueError, match="no shareable release"):
        shareable_release(DPPCR(2, epsilon=np.inf, x_bound=30.0, y_bound=40.0).fit(X, y))


# ----------------------------------------------------------------------------- the method contract
def test_compare_returns_the_contract_and_owner_sheets(nir):
    X, y = nir
    tr, te = np.arange(84), np.arange(84, 120)
    spec = method("dp_pcr")
    assert spec.compare is compare and spec.estimator is DPPCR
    res = compare((X[tr], y[tr]), (X[te], y[te]), epsilon=np.inf, delta=1e-5, n_components=3, x_bound=100.0,
                  y_bound=100.0)
    assert isinstance(res, Comparison) and res.status == "no privacy"
    assert res.headline["RMSEP (private)"] == pytest.approx(res.headline["RMSEP (non-private)"], abs=1e-8)
    private = compare((X[tr], y[tr]), (X[te], y[te]), epsilon=1.0, delta=1e-5, n_components=3, x_bound=19.0,
                      y_bound=100.0)
    assert private.status == "proven" and "proven guarantee" in private.guarantee
    sheets = owner_sheets(private, (X[te], y[te]), feature_names=range(X.shape[1]))
    assert {"reference model", "test set", "private statistics", "exact ledger"} <= set(sheets)
    with pytest.raises(ValueError, match="strict"):
        compare((X[tr], y[tr]), (X[te], y[te]), epsilon=1.0, delta=1e-5, mode="paper", x_bound=1.0, y_bound=1.0)


def test_rmsep_vs_epsilon_has_both_methods_and_ends_at_the_non_private_fit(nir):
    X, y = nir
    tr, te = np.arange(84), np.arange(84, 120)
    df = rmsep_vs_epsilon(X[tr], y[tr], X[te], y[te], [1.0, np.inf], 3, 4, random_state=0, x_bound=19.0,
                          y_bound=100.0, calibration="auto")
    assert list(df.columns) == CURVE_COLUMNS and len(df) == 4
    assert set(df["method"]) == {"DP-PCR", "edPLS (strict)"}
    at_inf = df[np.isinf(df["epsilon"])]
    np.testing.assert_allclose(at_inf["median"], at_inf["nonprivate"], rtol=1e-12)
    assert set(at_inf["status"]) == {"no privacy"}
    assert set(df[df["epsilon"] == 1.0]["status"]) == {"not proven"}  # a known seed


# ----------------------------------------------------------------------------- audit
def test_audit_case_holds_and_the_planted_bug_is_caught():
    case = make_case("dp_pcr", "strict", 1.0, 1e-5)
    assert case.method == "dp_pcr" and "change of the released numbers 0.829156" in case.note
    assert run_case(case, 40_000, 1)["ok"]
    assert run_case(make_case("dp_pcr", "strict", 1.0, 1e-5, "noise_halved"), 100_000, 1)["ok"]  # in production
    assert dp_pcr_case().note == case.note


# ----------------------------------------------------------------------------- the page
@pytest.mark.slow  # among the suite's slowest (pytest --durations): out of the fast lane
def test_page_opens_fits_sweeps_and_exports():
    at = AppTest.from_file(str(ROOT / "pages" / "dp_pcr.py"), default_timeout=120)
    with recorded_downloads() as seen:
        at.run()
        assert not at.exception, at.exception
        assert at.title and "DP-PCR" in at.title[0].value
        assert {m.label for m in at.metric} >= {"RMSEP, private", "RMSEP, non-private"}
        release = json.loads(file_of(at, seen, "dp_pcr_export_model", deferred=True))
        assert release["method"] == "dp_pcr" and release_problems(release) == []
        assert file_of(at, seen, "dp_pcr_export_workbook", deferred=True)[:2] == b"PK"
    at.number_input(key="dp_pcr_reps").set_value(5).run()
    at.text_input(key="dp_pcr_eps_grid").set_value("1, 100").run()
    at.button(key="dp_pcr_run_sweep").click().run()
    assert not at.exception, at.exception
    curves = at.session_state["dp_pcr_curves"]
    assert set(curves["method"]) == {"DP-PCR", "edPLS (strict)"}


def test_figures_follow_the_shared_layout(nir):
    from ui.dp_pcr.figures import dp_pcr_coef_figure, dp_pcr_pred_figure, dp_pcr_rmsep_figure, dp_pcr_variance_figure

    X, y = nir
    curves = rmsep_vs_epsilon(X[:84], y[:84], X[84:], y[84:], [1.0, 10.0, np.inf], 2, 3, random_state=0,
                              x_bound=19.0, y_bound=100.0)
    figs = [dp_pcr_coef_figure(np.arange(3.0), [1, 2, 3], [1, 2, 2], axis_label="channel", private_label="DP-PCR"),
            dp_pcr_pred_figure(np.arange(4.0), np.arange(4.0) + 1, np.arange(4.0), response="y", private_label="p"),
            dp_pcr_variance_figure([0.5, 0.2], [0.6, 0.1]), dp_pcr_rmsep_figure(curves, sigma_y=0.4)]
    for fig in figs:
        assert fig.layout.meta["privalab_height"] == fig.layout.height  # finished by ui.figures._finish
    names = {t.name for t in figs[-1].data if t.name}
    assert {"DP-PCR (median, IQR)", "edPLS (strict) (median, IQR)"} <= names
