"""Hostile uploads and a cancelled sweep in a real browser (issue #10).

P3LS page: a Latin-1 file with semicolons and decimal commas loads and is fitted; then a binary file
renamed .csv, a NaN cell, duplicate headers and a file over the upload limit are refused with a
message naming the file (and the column and row) while the previous data and its chart stay.
edPLS page: a long RMSEP sweep is cancelled with its Cancel button; the page says so, shows no
exception, keeps the previous sweep's chart and still runs a new sweep.
"""
from __future__ import annotations

import re

import numpy as np

from browser_harness import (
    PLOTLY_CHART,
    assert_no_exception,
    first_chart,
    goto_page,
    screenshot,
    wait_idle,
)
from test_browser_app import (
    PICKER_INPUT,
    assert_texts,
    choose_upload,
    metric_value,
    open_tab,
    set_number,
    upload,
    visible_charts,
)

LOAD_MS = 120_000
SWEEP_MS = 240_000


def _latin1_semicolon_chain(n: int = 60) -> bytes:
    """Two companies' columns (prefixes 'lief', 'werk') and a KPI; Latin-1, ';' and decimal commas."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(n, 4))
    kpi = X @ np.array([1.0, -0.6, 0.8, 0.4]) + 0.05 * rng.normal(size=n)
    header = "lief_Feuchte;lief_Größe_µm;werk_Temp_°C;werk_Druck;Qualität"
    rows = [";".join(f"{v:.5f}".replace(".", ",") for v in (*x, k)) for x, k in zip(X, kpi)]
    return ("\r\n".join([header, *rows]) + "\r\n").encode("latin-1")


def _error(page, name: str) -> str:
    box = page.locator('[data-testid="stAlertContentError"]').filter(has_text=name)
    box.first.wait_for(timeout=60_000)
    wait_idle(page, timeout_ms=LOAD_MS)
    return box.first.inner_text()


def test_hostile_uploads_on_the_p3ls_page(page, app_url, tmp_path):
    goto_page(page, app_url, "p3ls")
    first_chart(page, timeout_ms=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    choose_upload(page)

    # hostile but valid: Latin-1 header, semicolons, decimal commas, CRLF -> loads and is fitted
    upload(page, "werte_latin1.csv", _latin1_semicolon_chain())
    page.get_by_text("werte_latin1.csv: 60 rows × 5 columns").wait_for(timeout=60_000)
    wait_idle(page, timeout_ms=LOAD_MS)
    first_chart(page, timeout_ms=LOAD_MS)
    assert_texts(page, ["company lief", "company werk"], "p3ls latin-1 upload")
    open_tab(page, "Coefficients per party")  # lazy tabs: the column names are drawn in the open tab's chart
    assert_texts(page, ["Größe_µm"], "p3ls latin-1 upload, coefficients")
    open_tab(page, "Messages")  # back to the first tab, whose charts the checks below count
    assert float(metric_value(page, "Test R² P3LS (federated)")) > 0.9  # decimals read as decimals
    assert_no_exception(page, "p3ls after the Latin-1 upload")
    charts = visible_charts(page)
    assert charts >= 1

    kept = "Still using the previous data: werte_latin1.csv"
    cases = [
        ("picture.csv", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10" + bytes(range(256)) * 8,
         ["looks like a binary file"]),
        ("nan_cell.csv", b"a_x,a_y,b_x,kpi\n1,2,3,4\n2,3,4,5\n3,NaN,5,6\n4,5,6,7\n5,6,7,9\n",
         ["column 'a_y'", "data row 3", "'NaN'"]),
        ("dup_headers.csv", b"a_x,b_x,a_x,kpi\n1,2,3,4\n2,3,4,5\n3,4,5,6\n4,5,6,7\n5,6,7,9\n",
         ["duplicate column names", "'a_x'", "columns 1 and 3"]),
    ]
    for name, data, words in cases:
        upload(page, name, data)
        message = _error(page, name)
        for w in words:
            assert w in message, f"{name}: {w!r} not in {message!r}"
        assert_texts(page, [kept, "werte_latin1.csv: 60 rows × 5 columns"], f"p3ls after {name}")
        assert visible_charts(page) == charts, f"{name}: the previous results' charts should stay"
        assert_no_exception(page, f"p3ls after {name}")

    # over the limit: a sparse file on disk costs nothing; the browser's uploader refuses it itself
    big = tmp_path / "huge.csv"
    with open(big, "wb") as f:
        f.truncate(51 * 1024 * 1024)
    # the page's data uploader (the sidebar also holds "Open session"'s uploader)
    page.locator(PICKER_INPUT).first.set_input_files(str(big))
    page.locator('[data-testid="stMain"]').get_by_text(re.compile(r"must be 50(\.0)?\s?MB or smaller")).first.wait_for(
        timeout=30_000)
    wait_idle(page, timeout_ms=LOAD_MS)
    assert_texts(page, ["werte_latin1.csv: 60 rows × 5 columns"], "p3ls after the over-limit file")
    assert visible_charts(page) == charts
    assert_no_exception(page, "p3ls after the over-limit file")
    screenshot(page, "p3ls_hostile_uploads")


def _cancel_button(page):
    return page.locator(".st-key-edpls_sweep_cancel button >> visible=true")


def test_cancel_a_long_edpls_sweep(page, app_url):
    goto_page(page, app_url, "edpls")
    first_chart(page, timeout_ms=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    run = page.get_by_role("button", name="Run RMSEP sweep")
    # a short sweep first: its chart is the "previous result"
    set_number(page, "Replicates per ε", "5")
    before = visible_charts(page)
    run.click()
    page.wait_for_function(
        "([sel, n]) => Array.from(document.querySelectorAll(sel)).filter(e => e.offsetParent !== null).length > n",
        arg=[PLOTLY_CHART, before], timeout=SWEEP_MS)
    wait_idle(page, timeout_ms=SWEEP_MS)
    with_curve = visible_charts(page)
    assert _cancel_button(page).count() == 0  # only while a sweep runs

    # a long sweep: Cancel is shown while it runs and stops it
    set_number(page, "Replicates per ε", "500")
    run.click()
    cancel = _cancel_button(page).first
    cancel.wait_for(state="visible", timeout=60_000)
    page.wait_for_timeout(500)
    cancel.click()
    page.get_by_text("The RMSEP sweep was cancelled before it finished").wait_for(timeout=60_000)
    wait_idle(page, timeout_ms=LOAD_MS)
    assert_no_exception(page, "edpls after Cancel")
    assert _cancel_button(page).count() == 0
    assert visible_charts(page) == with_curve, "the previous sweep's chart should stay"
    screenshot(page, "edpls_sweep_cancelled")

    # the page still works: a short sweep runs to its end
    set_number(page, "Replicates per ε", "6")
    run.click()
    page.wait_for_timeout(1000)
    wait_idle(page, timeout_ms=SWEEP_MS)
    assert_no_exception(page, "edpls after a new sweep")
    assert visible_charts(page) == with_curve
    assert page.get_by_text("was cancelled").count() == 0
