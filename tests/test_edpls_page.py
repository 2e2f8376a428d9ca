"""The edPLS page end to end under AppTest: fit, both modes, sweep, strict sample-size simulation, fresh
noise, and the two kinds of export (shareable release, owner's workbook)."""
import io
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest

from engine.release import release_problems
from engine.workbook import PRIVATE_NOTICE
from ui.exports import LABELS

PAGE = str(Path(__file__).resolve().parents[1] / "pages" / "edpls.py")


@pytest.fixture()
def deferred(monkeypatch):
    """The zero-argument callables behind deferred download buttons, by file id (AppTest's runtime keeps them
    only while the script runs)."""
    seen = {}
    original = MediaFileManager.add_deferred

    def record(self, data_callable, *args, **kwargs):
        file_id = original(self, data_callable, *args, **kwargs)
        seen[file_id] = data_callable
        return file_id

    monkeypatch.setattr(MediaFileManager, "add_deferred", record)
    return seen


def download(at, deferred, key):
    """The bytes (or text) a download button of ``at`` would serve."""
    (button,) = [b for b in at.get("download_button") if b.proto.id.endswith(key)]
    return deferred[button.proto.deferred_file_id]()


@pytest.fixture()
def page():
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    return at


def metrics(at):
    return {m.label: m.value for m in at.metric}


def test_strict_fit_shows_figures_ledger_and_downloads(page):
    m = metrics(page)
    assert float(m["RMSEP, non-private"]) < 0.1  # the NIR sample is easy without privacy
    assert "of 84" in m["Rows clipped"]
    assert len(page.get("plotly_chart")) == 2
    text = " ".join(x.value for x in page.markdown)
    assert "proven guarantee" in text and "Strict mode" in text
    labels = [b.proto.label for b in page.get("download_button")]
    assert labels == [LABELS["model"], LABELS["report"], LABELS["workbook"]]  # no CSV outside the two groups


def test_paper_mode_states_its_flaws_and_unproven_total(page):
    page.sidebar.radio(key="edpls_mode").set_value("paper").run()
    assert not page.exception
    text = " ".join(x.value for x in page.markdown)
    assert "not** a proven guarantee" in text and "depends on the private data" in text
    assert "cond(P'W)" in metrics(page)


def test_sweep_draws_rmsep_curves(page):
    page.number_input(key="edpls_reps").set_value(5).run()
    page.button(key="edpls_run_sweep").click().run()
    assert not page.exception
    assert len(page.get("plotly_chart")) == 3
    curves = page.session_state["edpls_curves"]
    assert set(curves["epsilon"]) == {0.5, 1, 2, 5, 10, 50, 100}
    assert (curves["median"] >= curves["nonprivate"] * 0.5).all()


def test_bad_epsilon_grid_is_reported_not_crashing(page):
    page.text_input(key="edpls_eps_grid").set_value("1, banana").run()
    assert not page.exception
    assert any("ε grid" in e.value for e in page.error)


def test_strict_samples_needed_simulation(page):
    page.button(key="edpls_samples").click().run()
    assert not page.exception
    assert len(page.get("plotly_chart")) == 3
    assert any("strict mode" in x.value and "rows" in x.value for x in page.markdown)


def test_the_same_sweep_in_a_second_session_is_served_from_the_shared_cache():
    """With the teaching switch (the same known noise seed) two sessions run the same sweep: the second gets the
    stored curves (no replay of the first one's progress bar, which st.cache_data would attempt and fail on) and
    draws the same chart. With fresh noise (the default) two sessions never share a noise draw."""
    curves = {}
    for repro in (True, True, False, False):
        at = AppTest.from_file(PAGE, default_timeout=120)
        at.run()
        if repro:
            at.sidebar.checkbox(key="edpls_repro").check().run()
        at.number_input(key="edpls_reps").set_value(5).run()
        at.button(key="edpls_run_sweep").click().run()
        assert not at.exception, at.exception
        assert len(at.get("plotly_chart")) == 3
        curves.setdefault(repro, []).append(at.session_state["edpls_curves"])
    assert curves[True][0].equals(curves[True][1])
    assert set(curves[True][0]["status"]) == {"not proven"}  # the noise seed is known
    a, b = curves[False]
    assert not a["median"].equals(b["median"]) and set(a["status"]) == {"proven"}


def test_strict_mode_with_a_chain_fitted_on_the_private_rows_is_not_called_proven(page):
    page.selectbox(key="edpls_chain").set_value("msc").run()
    assert not page.exception
    text = " ".join(x.value for x in page.markdown)
    assert "not** a proven guarantee" in text
    assert "proven guarantee." not in text.replace("not** a proven guarantee", "")
    report = page.session_state["export_report_edpls"]
    assert "not a proven guarantee" in report.guarantee and "msc" in report.guarantee
    assert not report.ledger.proven


def test_two_fresh_sessions_draw_different_noise_and_a_rerun_keeps_the_release():
    runs = []
    for _ in range(2):
        at = AppTest.from_file(PAGE, default_timeout=120)
        at.run()
        assert not at.exception, at.exception
        runs.append(metrics(at))
        ledger = at.session_state["export_report_edpls"].ledger
        assert ledger.status == "proven" and not ledger.caveats  # fresh noise, public bounds, chain "none"
        at.number_input(key="edpls_reps").set_value(6).run()  # an unrelated widget: the same release is shown
        assert metrics(at)["RMSEP, private"] == runs[-1]["RMSEP, private"]
    assert runs[0]["RMSEP, private"] != runs[1]["RMSEP, private"]
    assert runs[0]["RMSEP, non-private"] == runs[1]["RMSEP, non-private"]  # same split, same plain model


def test_reproducible_noise_switch_is_recorded_as_not_proven(page):
    page.sidebar.checkbox(key="edpls_repro").check().run()
    assert not page.exception
    report = page.session_state["export_report_edpls"]
    assert report.status == "not proven" and "noise seed is known" in report.guarantee
    first = metrics(page)["RMSEP, private"]
    again = AppTest.from_file(PAGE, default_timeout=120)
    again.run()
    again.sidebar.checkbox(key="edpls_repro").check().run()
    assert metrics(again)["RMSEP, private"] == first  # the known seed reproduces the noise


def test_shareable_exports_and_owner_workbook(deferred):
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.run()
    at.number_input(key="edpls_reps").set_value(5).run()
    at.button(key="edpls_run_sweep").click().run()
    assert not at.exception, at.exception
    from engine.data.catalog import SAMPLE_SETS
    from engine.data.io import load_table
    from engine.methods.edpls_pipeline import page_problem

    sample = SAMPLE_SETS["nir"]
    prob = page_problem(load_table(sample.path), sample.response_columns[0], sample.response_columns)
    Xtr, ytr = prob.X[prob.train], prob.y[prob.train]
    fit = {"max_row_norm_train": float(np.linalg.norm(Xtr, axis=1).max()), "max_abs_y_train": float(np.abs(ytr).max()),
           "y_test": prob.y[prob.test]}
    release = download(at, deferred, "edpls_export_model")
    html = download(at, deferred, "edpls_export_report")
    for text in (release, html):
        assert release_problems(text) == []
        assert "random_state" not in text
    data = json.loads(release)
    assert data["format"] == "privalab.edpls.release/1" and data["ledger_totals"]["status"] == "proven"
    assert {f["field"] for f in data["manifest"] if f["provenance"] == "public" and f["role"] == "param"} >= {
        "epsilon", "delta", "x_bound", "y_bound", "n_components"}
    assert "clip" not in release.lower() or "clipped to" in release  # the ledger note names the bounds, no count
    for private_number in (fit["max_row_norm_train"], fit["max_abs_y_train"]):
        assert f"{private_number:.6g}" not in release and repr(private_number) not in release
    n_train = re.compile(r"(?<![\d.e-])84(?![\d.])")  # the exact training row count, as a number of its own
    assert not n_train.search(json.dumps(data["fields"])) and not n_train.search(html)
    assert not n_train.search(json.dumps(data["ledger"]))
    xlsx = download(at, deferred, "edpls_export_workbook")
    sheets = pd.read_excel(io.BytesIO(xlsx), sheet_name=None)
    names = list(sheets)
    assert names[0] == "PRIVATE read me" and PRIVATE_NOTICE.upper() in sheets[names[0]].to_string().upper()
    assert {"reference model", "test set", "private statistics", "RMSEP sweep"} <= set(names)
    test = pd.read_excel(io.BytesIO(xlsx), sheet_name="test set", header=1)  # row 1: the private notice
    assert list(test.columns) == ["row", "y_test", "pred_private", "pred_nonprivate"] and len(test) == 36
    assert test["y_test"].to_numpy() == pytest.approx(fit["y_test"])
    stats = sheets["private statistics"].to_string()
    assert "n_train (exact)" in stats and "rows clipped" in stats
