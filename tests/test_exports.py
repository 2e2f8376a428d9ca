"""Exports on every page (issue #10): results CSV, model JSON, run report HTML, named chart PNGs."""
from __future__ import annotations

import html
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from engine.export import estimator_to_dict
from engine.privacy import PrivacyLedger, Release
from engine.report import DataInfo, RunReport, data_sha256, environment_versions
from ui.budget import MODE_TEXT
from ui.exports import LABELS, chart_config
from ui.pages import METHOD_PAGES, TOOL_PAGES

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 180
PAGE_ID = {p.file: Path(p.file).stem for p in METHOD_PAGES + TOOL_PAGES}
NO_MODEL = {"pages/calculator.py", "pages/privacy_audit.py"}
HOSTILE = "<script>alert('x')</script>.csv"


def run_page(file: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / file), default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, at.exception
    if file == "pages/privacy_audit.py":  # results only after the button, with the smallest settings
        at.select_slider(key="audit_trials").set_value(10_000).run()
        at.button(key="audit_run").click().run()
        assert not at.exception, at.exception
    return at


def labels(at) -> list:
    return [b.proto.label for b in at.get("download_button")]


def text_of(page_html: str) -> str:
    """The visible text of the report (tags removed, entities kept escaped)."""
    return re.sub(r"<[^>]+>", "", page_html)


def unmarked(markdown: str) -> str:
    return markdown.replace("*", "")


@pytest.fixture(scope="module")
def pages():
    """Every page run once (shared by the tests below: runs are slow on a shared machine)."""
    return {file: run_page(file) for file in PAGE_ID}


# ---------------------------------------------------------------------------------------- (a) buttons
@pytest.mark.parametrize("file", list(PAGE_ID))
def test_every_page_offers_results_model_and_report(pages, file):
    at = pages[file]
    page = PAGE_ID[file]
    shown = labels(at)
    assert LABELS["results"] in shown and LABELS["report"] in shown, (file, shown)
    keys = {b.proto.id for b in at.get("download_button")}
    assert any(f"{page}_export_report" in k for k in keys), keys  # stable key per page
    if file in NO_MODEL:
        assert LABELS["model"] not in shown
        assert any(c.value.startswith("No model to download:") and len(c.value) > 30 for c in at.caption), file
    else:
        assert LABELS["model"] in shown, (file, shown)
    report = at.session_state[f"export_report_{page}"]
    assert isinstance(report, RunReport) and report.page == page


@pytest.mark.parametrize("file", list(PAGE_ID))
def test_every_chart_downloads_a_named_png(pages, file):
    charts = pages[file].get("plotly_chart")
    assert charts, f"{file} draws no chart"
    for chart in charts:
        config = json.loads(chart.proto.config)
        opts = config["toImageButtonOptions"]
        assert opts["format"] == "png" and opts["scale"] == 2
        assert opts["filename"].startswith(PAGE_ID[file] + "_") and len(opts["filename"]) > len(PAGE_ID[file]) + 1
        assert config["displaylogo"] is False


def test_chart_config_carries_the_file_name():
    cfg = chart_config("dp_cca", "sweep epsilon/δ")
    assert cfg["toImageButtonOptions"]["filename"] == "dp_cca_sweep_epsilon"
    assert chart_config("edpls", "coefficients")["toImageButtonOptions"]["filename"] == "edpls_coefficients"


def test_no_page_calls_plotly_chart_directly():
    for f in (ROOT / "pages").glob("*.py"):
        assert "st.plotly_chart(" not in f.read_text() and ".plotly_chart(" not in f.read_text(), f


# ---------------------------------------------------------------------------------------- (b) reports
def _check_report(report: RunReport, page_html: str) -> None:
    visible = text_of(page_html)
    assert page_html.startswith("<!DOCTYPE html>") and "<script" not in page_html.lower()
    assert "src=" not in page_html and "<link" not in page_html and "@import" not in page_html  # no network
    # data and its hash
    assert report.data is not None and re.fullmatch(r"[0-9a-f]{64}", report.data.sha256)
    assert report.data.sha256 in visible
    assert html.escape(report.data.name) in visible
    # every parameter, by name and value
    assert report.parameters
    for key, value in report.parameters.items():
        assert html.escape(str(key)) in visible, key
        if isinstance(value, str):
            assert f"<td>{html.escape(value)}</td>" in page_html, (key, value)
        elif isinstance(value, float) and np.isfinite(value):
            assert f"<td>{value:.6g}</td>" in page_html, (key, value)
        elif isinstance(value, int) and not isinstance(value, bool):
            assert f"<td>{value}</td>" in page_html, (key, value)
    assert "random_state" in report.parameters or "seed" in report.parameters
    # the mode's guarantee, in the dashboard's words
    if report.mode in MODE_TEXT:
        assert html.escape(unmarked(MODE_TEXT[report.mode])) in visible
    # each ledger row: mechanism and epsilon
    if report.ledger is not None:
        for r in report.ledger.entries:
            assert f"<td>{r.mechanism}</td>" in page_html
            assert f"<td>{r.epsilon:.6g}</td>" in page_html, r
        if len(report.ledger):
            assert "Totals" in visible and "basic composition" in visible
    # headline numbers and versions
    for key in report.headline:
        assert html.escape(str(key)) in visible, key
    for name in ("python", "numpy", "scikit-learn", "streamlit", "privalab git commit"):
        assert f"<td>{name}</td>" in page_html


@pytest.mark.parametrize("file", [p.file for p in METHOD_PAGES])
def test_method_report_states_data_parameters_ledger_and_guarantee(pages, file):
    at = pages[file]
    report = at.session_state[f"export_report_{PAGE_ID[file]}"]
    page_html = report.to_html()
    _check_report(report, page_html)
    if file in ("pages/p3ls.py", "pages/var_admm.py"):  # neither model is DP: no mode's guarantee applies
        assert report.mode is None
    else:
        assert report.mode in ("strict", "paper")
    if file == "pages/var_admm.py":
        assert "is not differentially private" in report.guarantee
        assert "provably" not in report.guarantee
    if file in ("pages/edpls.py", "pages/dp_cca.py", "pages/pca_gauss.py"):
        assert report.ledger is not None and len(report.ledger) >= 1
    if file == "pages/p3ls.py":
        from engine.methods.p3ls import NOT_DP_STATEMENT

        assert report.mode is None and html.escape(NOT_DP_STATEMENT) in text_of(page_html)
    as_dict = report.to_dict()
    json.dumps(as_dict, allow_nan=False)
    assert as_dict["data"]["sha256"] == report.data.sha256


def test_edpls_report_hash_is_the_hash_of_the_data_shown(pages):
    at = pages["pages/edpls.py"]
    report = at.session_state["export_report_edpls"]
    assert report.data.sha256 == data_sha256(at.session_state["pl_dataset"].df)
    assert report.data.origin == "sample"
    assert report.parameters["epsilon"] == at.session_state["pl_epsilon"]
    assert f"<td>epsilon</td><td>{report.parameters['epsilon']:.6g}</td>" in report.to_html()


def test_hostile_upload_name_is_escaped_in_the_report():
    nir = (ROOT / "sample_data").glob("*nir*.csv")
    path = next(iter(nir), None)
    if path is None:
        pytest.skip("no NIR sample CSV")
    at = AppTest.from_file(str(ROOT / "pages" / "edpls.py"), default_timeout=TIMEOUT)
    at.run()
    at.sidebar.radio(key="edpls_mode").set_value("paper").run()
    at.radio(key="edpls_data_source").set_value("Upload a file").run()
    at.file_uploader(key="edpls_data_upload").set_value((HOSTILE, path.read_bytes(), "text/csv")).run()
    assert not at.exception, at.exception
    report = at.session_state["export_report_edpls"]
    assert report.data.name == HOSTILE and report.data.origin == "upload"
    page_html = report.to_html()
    assert "<script" not in page_html.lower()
    assert html.escape(HOSTILE) in page_html
    assert html.escape(unmarked(MODE_TEXT["paper"])) in text_of(page_html)


def test_report_escapes_every_user_string_and_needs_no_network():
    led = PrivacyLedger()
    led.add(Release.gaussian("<b>moments</b>", 2.0, 1.0, 1e-5, note="<img src=x onerror=alert(1)>"))
    led.add(Release("counts", "laplace", 1.0, 4.0, 0.25, 0.0, sensitivity_source="data"))
    df = pd.DataFrame({"<th>x": [1.0, 2.0], "y\"'": [3.0, 4.0]})
    rep = RunReport(page="t", method="<i>m</i>", data=DataInfo.from_frame(df, HOSTILE, "upload"),
                    preprocessing="<svg onload=alert(1)>", parameters={"<p>": "<script>", "random_state": 3},
                    mode="paper", ledger=led, ledger_delta=1e-5, headline={"<u>rmse": 0.5},
                    notes=["</td><script>alert(1)</script>"])
    out = rep.to_html()
    for bad in ("<script", "<img", "<svg", "<b>moments", "<i>m", "<th>x", "<u>rmse", "</td><script"):
        assert bad not in out, bad
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;.csv" in out
    assert "<td>gaussian</td>" in out and "<td>laplace</td>" in out
    assert f"<td>{led.entries[0].epsilon:.6g}</td>" in out and "<td>0.25</td>" in out
    assert "not a proven guarantee" in text_of(out)  # paper mode and a data-dependent sensitivity
    assert html.escape(unmarked(MODE_TEXT["paper"])) in text_of(out)
    assert "http" not in out and "src=" not in out.replace("&lt;img src=x", "")
    d = rep.to_dict()
    assert [r["mechanism"] for r in d["ledger"]["releases"]] == ["gaussian", "laplace"]
    assert d["ledger"]["totals"]["proven"] is False


def test_data_hash_depends_on_contents_only():
    a = pd.DataFrame({"x": [1.0, 2.0], "y": ["a", "b"]})
    b = pd.DataFrame({"x": [1.0, 2.0], "y": ["a", "b"]}, index=[10, 11])
    assert data_sha256(a) == data_sha256(b)
    assert data_sha256(a) != data_sha256(a.assign(x=[1.0, 2.5]))
    assert data_sha256(a) != data_sha256(a.rename(columns={"x": "z"}))
    assert data_sha256(np.arange(3.0)) != data_sha256(np.arange(3.0).reshape(3, 1))


def test_versions_survive_without_git(monkeypatch):
    import engine.report as report_mod

    report_mod._git_commit.cache_clear()
    monkeypatch.setattr(report_mod.subprocess, "run", lambda *a, **k: (_ for _ in ()).throw(FileNotFoundError("git")))
    try:
        v = environment_versions()
        assert v["privalab git commit"] == "unavailable"
        assert v["numpy"] == np.__version__ and {"python", "scikit-learn", "streamlit"} <= set(v)
    finally:
        report_mod._git_commit.cache_clear()


# ---------------------------------------------------------------------------------------- (c) model JSON
def _strict_loads(text: str):
    def refuse(const):
        raise ValueError(f"non-standard JSON constant {const}")

    return json.loads(text, parse_constant=refuse)


def _assert_same(a, b, where=""):
    if isinstance(a, PrivacyLedger):
        assert isinstance(b, PrivacyLedger) and a.neighbouring == b.neighbouring, where
        pd.testing.assert_frame_equal(a.to_frame(), b.to_frame(), obj=where)
    elif isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True), check_dtype=False, obj=where)
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape, where
        np.testing.assert_array_equal(a, b, err_msg=where)
    elif isinstance(a, dict):
        assert set(map(str, a)) == set(map(str, b)), where
        for k in a:
            _assert_same(a[k], b[str(k)] if str(k) in b else b[k], f"{where}.{k}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and np.isnan(a):
        assert np.isnan(b), where
    elif hasattr(a, "__dataclass_fields__"):
        _assert_same({f: getattr(a, f) for f in a.__dataclass_fields__}, b, where)
    else:
        assert a == b, (where, a, b)


def _round_trip(module, model):
    text = module.to_json(model)
    data = _strict_loads(text)
    assert data["format"] == module.MODEL_FORMAT and data["class"] == type(model).__name__
    back = module.model_from_dict(text)
    exported = set(data["attributes"])
    assert exported, "no fitted attribute exported"
    for name in exported:
        _assert_same(getattr(model, name), getattr(back, name), name)
    for name, value in model.get_params(deep=False).items():
        if f"params.{name}" not in data["not_exported"]:
            _assert_same(value, back.get_params(deep=False)[name], f"params.{name}")
    assert "ledger" in data and "entries" in data["ledger"]
    return data, back


def _views(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    Y = X[:, :2] @ rng.normal(size=(2, 3)) + 0.5 * rng.normal(size=(n, 3))
    return X, Y


def test_dp_cca_json_round_trip():
    from engine.methods import dp_cca

    X, Y = _views()
    m = dp_cca.DPCCA(n_components=2, epsilon=1.0, delta=1e-5, mode="strict", x_bound=4.0, y_bound=6.0,
                     random_state=0).fit(X, Y)
    data, back = _round_trip(dp_cca, m)
    assert len(data["ledger"]["entries"]) == 1 and data["ledger"]["entries"][0]["mechanism"] == "gaussian"
    np.testing.assert_array_equal(back.transform(X, Y)[0], m.transform(X, Y)[0])
    plain = dp_cca.DPCCA(n_components=2, epsilon=np.inf).fit(X, Y)  # non-finite parameter
    data, back = _round_trip(dp_cca, plain)
    assert data["params"]["epsilon"] == "inf" and back.epsilon == np.inf


def test_pca_gauss_json_round_trip():
    from engine.methods import pca_gauss

    X, Y = _views()
    m = pca_gauss.PCAGauss(n_components=2, epsilon=1.0, task="regression", pca_source="laplace",
                           random_state=0).fit(X, Y[:, 0])
    data, back = _round_trip(pca_gauss, m)
    assert len(data["ledger"]["entries"]) == len(m.privacy_ledger_) >= 2
    np.testing.assert_allclose(back.transform(X[:5]), m.transform(X[:5]))
    Z_back, y_back = back.sample(20, random_state=3)
    Z_orig, y_orig = m.sample(20, random_state=3)
    np.testing.assert_array_equal(Z_back, Z_orig)
    np.testing.assert_array_equal(y_back, y_orig)


def test_p3ls_json_round_trip():
    from engine.methods import p3ls

    X, Y = _views()
    m = p3ls.P3LS(n_components=2, random_state=0).fit([X[:, :2], X[:, 2:]], Y)
    data, back = _round_trip(p3ls, m)
    assert data["privacy"] == p3ls.NOT_DP_STATEMENT and data["ledger"]["entries"] == []
    assert {"holders_", "authority_", "server_", "log_", "x_scores_", "y_scores_"} <= set(data["not_exported"])
    np.testing.assert_array_equal(back.coef_, m.coef_)
    assert back.column_slices_ == m.column_slices_


def test_var_admm_json_round_trip_leaves_out_the_private_series():
    from engine.methods import var_admm

    rng = np.random.default_rng(1)
    Y = rng.normal(size=(150, 3))
    m = var_admm.CollaborativeVAR(2, solver="admm", max_iter=30, random_state=0).fit(Y)
    led = var_admm.noise_ledger("laplace", 0.5, 1.2, 3)
    text = var_admm.to_json(m, led)
    data = _strict_loads(text)
    assert "design_" in data["not_exported"] and "trace_" in data["not_exported"]
    assert "design_" not in data["attributes"] and data["ledger"]["entries"][0]["mechanism"] == "laplace"
    assert not any(repr(float(v)) in text for v in Y[5:15, 0])  # no training value is written out
    back = var_admm.model_from_dict(text)
    for name in data["attributes"]:
        _assert_same(getattr(m, name), getattr(back, name), name)
    np.testing.assert_array_equal(back.forecast(Y, steps=3), m.forecast(Y, steps=3))
    _round_trip(var_admm, m)


def test_json_export_is_nan_and_inf_safe():
    from engine.methods import dp_cca

    X, Y = _views(200)
    m = dp_cca.DPCCA(n_components=1, epsilon=2.0, random_state=1).fit(X, Y)
    m.extra_ = np.array([np.nan, np.inf, -np.inf, 1.5])
    m.scalar_ = float("nan")
    text = dp_cca.to_json(m)
    assert "NaN" not in text and "Infinity" not in text
    back = dp_cca.model_from_dict(_strict_loads(text))
    np.testing.assert_array_equal(back.extra_, m.extra_)
    assert np.isnan(back.scalar_)


def test_json_refuses_the_wrong_format():
    from engine.methods import dp_cca, p3ls

    X, Y = _views(200)
    text = dp_cca.to_json(dp_cca.DPCCA(n_components=1, random_state=0).fit(X, Y))
    with pytest.raises(ValueError, match="not an exported"):
        p3ls.model_from_dict(text)


def test_estimator_to_dict_lists_what_it_leaves_out():
    from engine.methods.dp_cca import DPCCA

    X, Y = _views(200)
    m = DPCCA(n_components=1, random_state=np.random.default_rng(0)).fit(X, Y)
    d = estimator_to_dict(m, "x/1", exclude=("released_moments_",))
    assert "params.random_state" in d["not_exported"] and "released_moments_" in d["not_exported"]
    assert "released_moments_" not in d["attributes"]
