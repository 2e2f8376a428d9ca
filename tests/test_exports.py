"""Exports on every page (issues #10, #15): the shareable group (run report, model release or the reason there
is none, synthetic data) and the owner's workbook, never mixed; named chart PNGs.

Every page of ``ui.pages`` is run once under AppTest with its defaults. The files are the ones a click would
give: the download buttons' deferred callables are recorded when Streamlit registers them (``add_deferred``)
and called here, so the tests read the very bytes the browser would receive.

Oracles: ``engine.release.manifest.release_problems`` (64-hex tokens, seed keys, the word seed), the page's own
``RunReport`` (exact row count, headline numbers, parameters that are not public must not reach the shareable
report), pandas' XLSX reader for the workbook, and the release's own ledger for the report's status.
"""
from __future__ import annotations

import html
import io
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from downloads import buttons, file_of, recorded_downloads
from engine.methods import registry
from engine.privacy import PrivacyLedger, Release
from engine.release.fingerprint import data_fingerprint, data_sha256, fingerprint_key
from engine.release.manifest import RELEASE_KIND, release_problems
from engine.release.workbook import PRIVATE_NOTICE
from engine.reporting.report import DataInfo, RunReport, _fmt, environment_versions
from tab_helpers import open_tab
from ui.exports import LABELS, chart_config
from ui.pages import TOOL_PAGES, method_pages

# Out of the fast lane (pytest -m 'not slow'): every page run under AppTest with its defaults, then each download.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 180


#: Pages that fit and release nothing, so they have no export bar: "Apply a model" only applies a release someone
#: shared (its one download, the predictions CSV, is tested in tests/test_apply_model.py).
NO_EXPORTS = {"pages/apply_model.py"}


def export_pages() -> tuple[dict, set]:
    """The parametrisation source of these tests, from the registry: page file -> id, and the pages that release no
    model file (the tools, and every registered method whose export format is "none": P3LS has no DP, so its model
    is neither a DP output nor a public input; the calculator computes public things only; the audit uses
    generated data only)."""
    page_id = {p.file: Path(p.file).stem for p in method_pages() + TOOL_PAGES if p.file not in NO_EXPORTS}
    no_model = {"pages/calculator.py", "pages/privacy_audit.py"} | {
        spec.page for spec in registry.METHODS if spec.export_format == "none"}
    return page_id, no_model


PAGE_ID, NO_MODEL = export_pages()
#: Pages without private data (the calculator's public inputs, the audit's generated neighbours): no owner's workbook
#: (nothing private to put in it), their public tables as a CSV instead.
NO_DATA = {"pages/calculator.py", "pages/privacy_audit.py"}
HOSTILE = "<script>alert('x')</script>.csv"
EMBEDDED_PNG = re.compile(r'src="data:image/png;base64,[A-Za-z0-9+/=]+"')
README_SHEET = "PRIVATE read me"


# ---------------------------------------------------------------------------------------- helpers
def run_page(file: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / file), default_timeout=TIMEOUT)
    if file == "pages/pca_gauss.py":  # its exports are a tab; lazy tabs compute only the open one
        at.session_state["pca_gauss_tabs"] = "Export"
    at.run()
    if file == "pages/privacy_audit.py" and not at.exception:  # results only after the button, smallest settings
        at.select_slider(key="audit_trials").set_value(10_000).run()
        at.button(key="audit_run").click().run()
    return at


def text_of(page_html: str) -> str:
    """The visible text of the report (style and script blocks and tags removed, entities kept escaped)."""
    page_html = re.sub(r"<(style|script)\b.*?</\1>", " ", page_html, flags=re.S | re.I)
    return re.sub(r"<[^>]+>", " ", page_html)


def without_embedded_images(page_html: str) -> str:
    """The report with each embedded image's base64 payload cut out (random digits inside a PNG are no leak)."""
    return re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "data:image/png;base64,", page_html)


def standalone(number: str, text: str) -> bool:
    """``number`` occurs in ``text`` as a whole number (not inside a longer number or a name)."""
    return re.search(rf"(?<![\w.\-]){re.escape(number)}(?![\w.]|-\d)", text) is not None


def workbook_sheets(data: bytes) -> dict:
    assert data[:2] == b"PK", "an XLSX file is a zip archive"
    return pd.read_excel(io.BytesIO(data), sheet_name=None)


@pytest.fixture(scope="module")
def pages():
    """Every page run once, with its download callables recorded (runs are slow on a shared machine)."""
    with recorded_downloads() as seen:
        runs = {file: run_page(file) for file in PAGE_ID}
        yield runs, seen


def ran(pages, file):
    runs, seen = pages
    at = runs[file]
    assert not at.exception, f"{file} raised: {at.exception[0].message if at.exception else ''}"
    return at, seen


def report_of(at, file) -> RunReport:
    report = at.session_state[f"export_report_{PAGE_ID[file]}"]
    assert isinstance(report, RunReport) and report.page == PAGE_ID[file]
    return report


# ---------------------------------------------------------------------------------------- (a) the two groups
@pytest.mark.parametrize("file", list(PAGE_ID))
def test_every_page_offers_the_shareable_group_and_the_owners_workbook(pages, file):
    at, _ = ran(pages, file)
    page = PAGE_ID[file]
    by_key = buttons(at)
    assert by_key[f"{page}_export_report"].proto.label == LABELS["report"]
    if file in NO_DATA:
        assert f"{page}_export_workbook" not in by_key
        assert by_key[f"{page}_export_tables"].proto.label == LABELS["tables"]
    else:
        assert by_key[f"{page}_export_workbook"].proto.label == LABELS["workbook"]
    captions = [c.value for c in at.caption if c.value.startswith("No shareable model:")]
    if file in NO_MODEL:
        assert f"{page}_export_model" not in by_key
    if f"{page}_export_model" in by_key:
        assert by_key[f"{page}_export_model"].proto.label == LABELS["model"] and not captions
    else:
        assert len(captions) == 1 and len(captions[0]) > 40, (file, captions)  # says why there is none
    if f"{page}_export_synthetic" in by_key:
        assert by_key[f"{page}_export_synthetic"].proto.label == LABELS["synthetic"]
    # nothing from the old bar ("results" CSV of private rows): the export keys are the four kinds only
    kinds = {f"{page}_export_{kind}" for kind in ("model", "report", "synthetic", "workbook", "fingerprint_key",
                                                   "tables")}
    assert not [k for k in by_key if k.startswith(f"{page}_export_") and k not in kinds], by_key
    headings = " ".join(m.value for m in at.markdown)
    assert "Shareable release" in headings and (("do not share" in headings) != (file in NO_DATA))
    report_of(at, file)


@pytest.mark.parametrize("file", list(PAGE_ID))
def test_every_download_button_leaves_the_page_alone(pages, file):
    """on_click="ignore": a download never reruns the page, so one download cannot invalidate the next."""
    at, _ = ran(pages, file)
    downloads = at.get("download_button")
    assert downloads
    for b in downloads:
        assert b.proto.ignore_rerun, f"{file}: {b.proto.label} reruns the page on click"


# ---------------------------------------------------------------------------------------- (b) shareable files
@pytest.mark.parametrize("file", list(PAGE_ID))
def test_shareable_report_holds_no_private_value(pages, file):
    at, seen = ran(pages, file)
    report = report_of(at, file)
    page_html = file_of(at, seen, f"{PAGE_ID[file]}_export_report").decode("utf-8")
    assert page_html == report.to_html()  # the button serves the report of this very run
    visible = text_of(page_html).replace(report.created, "")  # the date's digits are not counts
    assert page_html.startswith("<!DOCTYPE html>") and "<script" not in page_html.lower()
    # no network: the only src= are embedded PNGs (figures), nothing links or imports anything
    assert "src=" not in EMBEDDED_PNG.sub("", page_html), file
    assert "<link" not in page_html and "@import" not in page_html and "url(" not in page_html
    assert release_problems(page_html) == [], (file, release_problems(page_html))
    assert not re.search(r"random_state|\bseed\b", page_html.replace("noise seed is known", ""), re.I), file
    assert release_problems(report.to_json()) == []
    json.loads(report.to_json())  # strict JSON (allow_nan=False inside)
    # the data: no fingerprint, no file name of an upload, no exact row count under add/remove neighbours
    if report.data is not None:
        assert report.data.fingerprint and report.data.fingerprint not in page_html
        add_remove = report.ledger is None or report.ledger.neighbouring != "replace"
        if add_remove and report.data.shape:
            n = str(report.data.shape[0])
            assert not standalone(n, visible), f"{file}: the exact row count {n} is in the shareable report"
    # only the declared-public parameters are listed (the owner's settings stay in the workbook)
    section = page_html.split("<h2>Public parameters</h2>", 1)[1].split("<h2>", 1)[0]
    listed = re.findall(r"<tr><td>(.*?)</td><td>", section)
    assert listed == [html.escape(str(k)) for k in report.public_parameters], (file, listed)
    assert not any(re.search(r"seed|random_state", str(k), re.I) for k in report.public_parameters), file
    # no headline evaluation (computed on private rows without noise)
    public_values = {_fmt(v) for v in report.public_parameters.values()}
    for key, value in report.headline.items():
        if isinstance(value, (float, np.floating)) and math.isfinite(value):
            shown = _fmt(value)
            if len(re.sub(r"\D", "", shown)) >= 4 and shown not in public_values:
                assert shown not in visible, f"{file}: headline value {key}={shown} in the shareable report"


@pytest.mark.parametrize("file", list(PAGE_ID))
def test_report_status_is_the_fits_own_ledger_status(pages, file):
    at, seen = ran(pages, file)
    page = PAGE_ID[file]
    report = report_of(at, file)
    page_html = report.to_html()
    expected = "no privacy" if report.ledger is None or not len(report.ledger) else report.ledger.status
    assert report.status == expected and report.to_dict()["status"] == expected
    assert f"<td>guarantee of this fit</td><td>{expected}</td>" in page_html
    if expected != "proven":  # no overclaim anywhere in the shareable report
        assert "this is a proven guarantee" not in page_html and "is provably" not in page_html, file
    if f"{page}_export_model" in buttons(at):
        release = json.loads(file_of(at, seen, f"{page}_export_model"))
        assert release["ledger_totals"]["status"] == report.status, file
    if report.mode == "strict" and expected == "not proven":
        assert "not proven" in report.guarantee


@pytest.mark.parametrize("file", sorted(set(PAGE_ID) - NO_MODEL))
def test_model_release_is_built_from_a_manifest_and_carries_no_private_token(pages, file):
    at, seen = ran(pages, file)
    page = PAGE_ID[file]
    if f"{page}_export_model" not in buttons(at):
        pytest.skip(f"{file} offers no shareable model at its defaults")
    text = file_of(at, seen, f"{page}_export_model").decode("utf-8")
    assert release_problems(text) == [], (file, release_problems(text))
    release = json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
    assert release["kind"] == RELEASE_KIND and release["format"].startswith("privalab.")
    manifest = {m["field"]: m for m in release["manifest"]}
    assert set(manifest) == set(release["fields"]), "every field has a manifest entry and nothing else is in it"
    released = {e["name"] for e in release["ledger"]["entries"]}
    assert released, "a shareable model comes with the ledger of its noisy releases"
    for name, m in manifest.items():
        assert m["provenance"] in ("dp", "public") and m["from"], (name, m)
        if m["provenance"] == "dp" and m["from"] != "*":
            assert {s.strip() for s in m["from"].split(",")} <= released, (name, m["from"])
    report = report_of(at, file)
    if report.data is not None:
        assert report.data.fingerprint not in text


@pytest.mark.parametrize("file", list(PAGE_ID))
def test_synthetic_data_is_clean_where_a_page_releases_some(pages, file):
    at, seen = ran(pages, file)
    key = f"{PAGE_ID[file]}_export_synthetic"
    if key not in buttons(at):
        pytest.skip(f"{file} releases no synthetic data")
    text = file_of(at, seen, key).decode("utf-8")
    assert release_problems(text) == []
    assert len(pd.read_csv(io.StringIO(text), comment="#")) > 0


# ---------------------------------------------------------------------------------------- (c) owner's workbook
@pytest.mark.parametrize("file", list(PAGE_ID))
def test_owners_workbook_opens_and_says_private_on_every_sheet(pages, file):
    if file in NO_DATA:
        pytest.skip(f"{file} has no data, so no owner's workbook")
    at, seen = ran(pages, file)
    report = report_of(at, file)
    sheets = workbook_sheets(file_of(at, seen, f"{PAGE_ID[file]}_export_workbook"))
    names = list(sheets)
    assert names[0] == README_SHEET, names
    assert PRIVATE_NOTICE.upper() in sheets[README_SHEET].iloc[:, 0].astype(str).tolist()
    assert len(names) >= 3, names
    for name in names[1:]:
        assert str(sheets[name].columns[0]).startswith(PRIVATE_NOTICE), (file, name)
    run = sheets["run"]
    cells = [str(c) for c in run.to_numpy().ravel()]
    if report.data is not None:  # the owner's keyed fingerprint and exact shape are here, not in the report
        assert report.data.fingerprint in cells
        assert report.data.name in cells
        # its key is per session and data set, and in a file of its own (review N5)
        key_text = file_of(at, seen, f"{PAGE_ID[file]}_export_fingerprint_key").decode("utf-8")
        assert report.data.key.hex() in key_text and report.data.fingerprint in key_text
        assert report.data.key.hex() not in " ".join(str(v) for s in sheets.values() for v in s.to_numpy().ravel())
    assert report.status in cells


def test_p3ls_workbook_holds_the_federated_model(pages):
    at, seen = ran(pages, "pages/p3ls.py")
    sheets = workbook_sheets(file_of(at, seen, "p3ls_export_workbook"))
    # sheet names are cut at 28 characters (Excel allows 31)
    for name in ("model coefficients per party", "model coefficients (original", "results per model (test rows",
                 "message log", "leakage", "what each role holds"):
        assert name in sheets, (name, list(sheets))
    coefs = sheets["model coefficients per party"]
    assert coefs.iloc[0].tolist()[:4] == ["party", "variable", "kpi", "coefficient"]
    assert len(coefs) > 10  # one row per (party, variable, KPI)


# ---------------------------------------------------------------------------------------- (d) charts
@pytest.mark.parametrize("file", list(PAGE_ID))
def test_every_chart_downloads_a_named_png(pages, file):
    at, _ = ran(pages, file)
    if file == "pages/pca_gauss.py":  # lazy tabs: its charts are in its first tab, the run opened its Export tab
        open_tab(at, "pca_gauss_tabs", "Real vs synthetic")
    charts = at.get("plotly_chart")
    if file == "pages/pca_gauss.py":
        open_tab(at, "pca_gauss_tabs", "Export")  # back as the other tests read it
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


def test_every_download_button_in_the_source_ignores_the_click():
    """Every st.download_button of pages/ and ui/ passes on_click="ignore" (a rerun would invalidate the
    deferred files of the other buttons: "MediaFileStorageError: Deferred file not found")."""
    calls = 0
    for path in sorted([*(ROOT / "pages").glob("*.py"), *(ROOT / "ui").rglob("*.py"), ROOT / "app.py"]):
        text = path.read_text()
        for match in re.finditer(r"\.download_button\(", text):
            calls += 1
            depth, i = 1, match.end()
            while depth and i < len(text):
                depth += {"(": 1, ")": -1}.get(text[i], 0)
                i += 1
            assert 'on_click="ignore"' in text[match.end():i], f"{path.name}: a download button reruns the page"
    assert calls >= 5


def test_no_page_calls_plotly_chart_directly():
    for f in [*(ROOT / "pages").glob("*.py"), *(ROOT / "ui").glob("*/sections.py")]:  # a page and its body
        assert "st.plotly_chart(" not in f.read_text() and ".plotly_chart(" not in f.read_text(), f


def test_no_page_uses_the_old_export_arguments():
    for f in [*(ROOT / "pages").glob("*.py"), *(ROOT / "ui").glob("*/sections.py"), ROOT / "ui" / "home" / "demo.py"]:
        src = f.read_text()
        for old in ("results_csv=", "model_json=", "no_model_reason="):
            assert old not in src, (f.name, old)


# ---------------------------------------------------------------------------------------- (e) the report itself
def test_hostile_upload_name_stays_out_of_the_shareable_report():
    rng = np.random.default_rng(1)
    df = pd.DataFrame(rng.standard_normal((40, 5)), columns=["a_1", "a_2", "b_1", "b_2", "kpi_1"])
    with recorded_downloads() as seen:
        at = AppTest.from_file(str(ROOT / "pages" / "p3ls.py"), default_timeout=TIMEOUT)
        at.run()
        at.radio(key="p3ls_data_source").set_value("Upload a file").run()
        at.file_uploader(key="p3ls_data_upload").set_value((HOSTILE, df.to_csv(index=False).encode(), "text/csv")).run()
        assert not at.exception, at.exception
        report = at.session_state["export_report_p3ls"]
        assert report.data.name == HOSTILE and report.data.origin == "upload"
        page_html = file_of(at, seen, "p3ls_export_report").decode("utf-8")
        sheets = workbook_sheets(file_of(at, seen, "p3ls_export_workbook"))
    assert "<script" not in page_html.lower()
    assert HOSTILE not in page_html and html.escape(HOSTILE) not in page_html  # an upload's name is the owner's
    assert "the owner&#x27;s file" in page_html or "the owner's file" in page_html
    assert not standalone("40", text_of(page_html).replace(report.created, ""))
    assert HOSTILE in sheets["run"].astype(str).to_numpy().ravel().tolist()


def test_report_escapes_every_user_string_and_keeps_private_settings_out():
    led = PrivacyLedger()
    led.add(Release.gaussian(name="<b>moments</b>", sigma=2.0, sensitivity=1.0, delta=1e-5,
                             note="<img src=x onerror=alert(1)>"))
    led.add(Release(name="counts", mechanism="laplace", sensitivity=1.0, scale=4.0, epsilon=0.25, delta=0.0,
                    sensitivity_source="data"))
    df = pd.DataFrame({"<th>x": np.arange(37.0), "y\"'": np.arange(37.0) ** 2})
    rep = RunReport(page="t", method="<i>m</i>", data=DataInfo.from_frame(df, HOSTILE, "upload"),
                    preprocessing="<svg onload=alert(1)>", parameters={"<p>": "<script>", "random_state": 3},
                    public_parameters={"<p>": "<script>", "epsilon": 0.75},
                    mode="paper", ledger=led, ledger_delta=1e-5, headline={"<u>rmse": 0.123456},
                    notes=["</td><script>alert(1)</script>"])
    out = rep.to_html()
    for bad in ("<script", "<img", "<svg", "<b>moments", "<i>m", "<th>x", "<u>rmse", "</td><script"):
        assert bad not in out, bad
    assert "&lt;th&gt;x" in out and "&lt;script&gt;" in out  # escaped, not dropped
    assert "<td>gaussian</td>" in out and "<td>laplace</td>" in out
    assert f"<td>{led.entries[0].epsilon:.6g}</td>" in out and "<td>0.25</td>" in out and "<td>0.75</td>" in out
    assert "not a proven guarantee" in text_of(out)  # paper mode and a data-dependent sensitivity
    assert "http" not in out and "src=" not in out.replace("&lt;img src=x", "")
    # the owner's view stays out of the shareable form
    assert "random_state" not in out and "0.123456" not in out and "rmse" not in out
    assert rep.data.fingerprint not in out and HOSTILE not in out and html.escape(HOSTILE) not in out
    assert not standalone("37", text_of(out).replace(rep.created, "")) and "not released" in out  # N is private
    assert release_problems(out) == [] and release_problems(rep.to_json()) == []
    d = rep.to_dict()
    assert [r["mechanism"] for r in d["ledger"]["releases"]] == ["gaussian", "laplace"]
    assert d["ledger"]["totals"]["proven"] is False and d["status"] == "not proven"
    owner = rep.owner_sheets()
    assert owner["parameters (all)"]["random_state"] == "3" and owner["run"]["fingerprint (HMAC-SHA256)"] == \
        rep.data.fingerprint


def test_fingerprint_is_keyed_and_the_cache_hash_depends_on_contents_only():
    a = pd.DataFrame({"x": [1.0, 2.0], "y": ["a", "b"]})
    b = pd.DataFrame({"x": [1.0, 2.0], "y": ["a", "b"]}, index=[10, 11])
    assert data_sha256(a) == data_sha256(b)  # the in-process cache key (ui.progress.cached_sweep)
    assert data_sha256(a) != data_sha256(a.assign(x=[1.0, 2.5]))
    assert data_sha256(a) != data_sha256(a.rename(columns={"x": "z"}))
    assert data_sha256(np.arange(3.0)) != data_sha256(np.arange(3.0).reshape(3, 1))
    # the exported fingerprint is an HMAC: without the key, the plain hash of a candidate table does not match it
    key = b"k" * 32
    assert data_fingerprint(a, key=key) == data_fingerprint(b, key=key) != data_sha256(a)
    assert data_fingerprint(a, key=b"k1") != data_fingerprint(a, key=b"k2")
    info = DataInfo.from_frame(a, "a.csv", "upload", owner_secret=key)
    assert info.fingerprint == data_fingerprint(a, key=fingerprint_key(key, a)) == data_fingerprint(a, key=info.key)


def test_versions_survive_without_git(monkeypatch):
    import engine.reporting.report as report_mod

    report_mod._git_commit.cache_clear()
    monkeypatch.setattr(report_mod.subprocess, "run", lambda *a, **k: (_ for _ in ()).throw(FileNotFoundError("git")))
    try:
        v = environment_versions()
        assert v["privalab git commit"] == "unavailable"
        assert v["numpy"] == np.__version__ and {"python", "scikit-learn", "streamlit"} <= set(v)
    finally:
        report_mod._git_commit.cache_clear()


# ---------------------------------------------------------------------------------------- (f) the one JSON encoder
def _strict_loads(text: str):
    def refuse(const):
        raise ValueError(f"non-standard JSON constant {const}")

    return json.loads(text, parse_constant=refuse)


def _views(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    Y = X[:, :2] @ rng.normal(size=(2, 3)) + 0.5 * rng.normal(size=(n, 3))
    return X, Y


def test_json_encoder_is_nan_and_inf_safe_and_refuses_the_wrong_format():
    from engine.methods import p3ls
    from engine.release.export import dumps, estimator_from_dict, estimator_to_dict

    X, Y = _views()
    m = p3ls.P3LS(n_components=2, random_state=0).fit([X[:, :2], X[:, 2:]], Y)
    m.extra_ = np.array([np.nan, np.inf, -np.inf, 1.5])
    m.scalar_ = float("nan")
    text = dumps(estimator_to_dict(m, "x/1", exclude=("x_scores_", "y_scores_")))
    assert "NaN" not in text and "Infinity" not in text
    back = estimator_from_dict(_strict_loads(text), p3ls.P3LS, "x/1")
    np.testing.assert_array_equal(back.extra_, m.extra_)
    assert np.isnan(back.scalar_)
    with pytest.raises(ValueError, match="not an exported"):
        p3ls.model_from_dict(text)


def test_estimator_to_dict_lists_what_it_leaves_out():
    from engine.methods.p3ls import P3LS
    from engine.release.export import estimator_to_dict

    X, Y = _views()
    m = P3LS(n_components=1, random_state=np.random.default_rng(0)).fit([X[:, :2], X[:, 2:]], Y)
    d = estimator_to_dict(m, "x/1", exclude=("x_scores_",))
    assert "params.random_state" in d["not_exported"] and "x_scores_" in d["not_exported"]
    assert "x_scores_" not in d["attributes"]
