"""A lab export in a real browser (issue #19): uploaded on the home page, it is still the chosen data on edPLS,
whose response defaults to a property (not the wavelength "1100"), the other properties are left out of X, the
rows with a missing cell are dropped on request with their count, and a fit runs without an exception box.
Also: the real fermentation sample set (chemotools) fits on edPLS with its published spectra as public input.

The CSV is written in a temporary directory here: ``sample_id`` first, 50 wavelength columns 1100, 1102, ...,
then moisture, oil, protein, starch; two rows have one empty cell.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from browser_harness import assert_no_exception, first_chart, goto_page, screenshot, wait_idle
from test_browser_app import LOAD_MS, assert_texts, choose_upload, metric_value, upload, visible_charts
from test_browser_method_uploads import set_main_number

PROPS = ["moisture", "oil", "protein", "starch"]
N_ROWS, N_WAVES = 60, 50


def write_lab_export(folder) -> bytes:
    """The lab-export-shaped CSV (written to ``folder``); returns its bytes."""
    rng = np.random.default_rng(19)
    scores = rng.normal(size=(N_ROWS, 3))
    X = 0.4 + 0.05 * scores @ rng.normal(size=(3, N_WAVES)) + 0.001 * rng.normal(size=(N_ROWS, N_WAVES))
    frame = pd.DataFrame(X.round(5), columns=[str(1100 + 2 * j) for j in range(N_WAVES)])
    frame.insert(0, "sample_id", np.arange(1, N_ROWS + 1))
    for j, p in enumerate(PROPS):
        frame[p] = (12 + 2 * scores[:, j % 3] + 0.05 * rng.normal(size=N_ROWS)).round(3)
    frame = frame.astype(object)
    frame.loc[6, "1120"] = ""  # data row 7
    frame.loc[20, "1150"] = ""  # data row 21
    path = folder / "lab_export.csv"
    frame.to_csv(path, index=False)
    return path.read_bytes()


def _selectbox_text(page, label: str) -> str:
    """What a selectbox shows: its text and the value of its input (a searchable selectbox shows it there)."""
    box = page.locator('[data-testid="stSelectbox"]').filter(has_text=label).first
    values = box.locator("input").evaluate_all("els => els.map(e => e.value + ' ' + (e.placeholder || ''))")
    return " ".join([box.text_content() or "", *values])


def test_lab_export_from_home_to_edpls(page, app_url, tmp_path):
    data = write_lab_export(tmp_path)
    goto_page(page, app_url, "")
    page.get_by_role("heading", name="PrivaLab").wait_for()
    wait_idle(page)
    choose_upload(page)
    upload(page, "lab_export.csv", data)
    # refused for its missing cells unless the user chooses to drop those rows
    error = page.locator('[data-testid="stAlertContentError"]').filter(has_text="lab_export.csv")
    error.wait_for(timeout=30_000)
    assert "column '1120'" in error.inner_text() and "data row 7" in error.inner_text()
    box = page.get_by_role("checkbox", name="Drop rows with missing values (2 rows)")
    box.wait_for(state="attached", timeout=30_000)
    page.locator('[data-testid="stCheckbox"]').filter(has_text="Drop rows with missing values (2 rows)").first.click()
    page.get_by_text(f"lab_export.csv: {N_ROWS - 2} rows × {N_WAVES + 5} columns").first.wait_for(timeout=30_000)
    wait_idle(page)
    assert_texts(page, ["Left out: 2 data rows (7, 21)"], "home after dropping the rows")
    assert_no_exception(page, "home after the lab export")

    # to edPLS by the sidebar (the same session): the upload is still the chosen data
    page.locator('[data-testid="stSidebarNav"] a[href$="/edpls"]').click()
    page.wait_for_url(re.compile(r"/edpls$"))
    page.locator('[data-testid="stMain"] h1').first.wait_for(state="visible", timeout=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    assert_texts(page, ["Using lab_export.csv, chosen earlier", f"lab_export.csv: {N_ROWS - 2} rows"], "edpls data")
    assert page.get_by_role("radio", name="Upload a file").is_checked()
    assert page.get_by_role("checkbox", name="Drop rows with missing values (2 rows)").is_checked()
    response = _selectbox_text(page, "Response (y)")
    assert "moisture" in response and "1100" not in response, response
    assert_texts(page, ["Left out of X: sample_id, oil, protein, starch"], "edpls X columns")
    # strict mode asks an upload for the public range of y (never read off the file)
    assert_texts(page, ["Enter the public range of y"], "edpls, no range yet")
    set_main_number(page, "Lowest possible y", "0")
    set_main_number(page, "Highest possible y", "100")
    first_chart(page, timeout_ms=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    assert_no_exception(page, "edpls fit on the lab export")
    assert visible_charts(page) >= 2
    assert metric_value(page, "RMSEP, private")
    # one headline guarantee, with its unit and neighbouring relation, from the fit's own ledger
    assert_texts(page, ["Guarantee: (ε = ", "per row (one row added or removed)"], "edpls headline")
    screenshot(page, "edpls_lab_export")
    _staples_and_downloads(page)

    # DP-PCR takes the same upload, with the same column proposals
    page.locator('[data-testid="stSidebarNav"] a[href$="/dp_pcr"]').click()
    page.wait_for_url(re.compile(r"/dp_pcr$"))
    page.locator('[data-testid="stMain"] h1').first.wait_for(state="visible", timeout=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    assert_texts(page, [f"lab_export.csv: {N_ROWS - 2} rows"], "dp_pcr data")
    assert page.get_by_role("radio", name="Upload a file").is_checked()
    response = _selectbox_text(page, "Response (y)")
    assert "moisture" in response and "1100" not in response, response
    assert_no_exception(page, "dp_pcr on the lab export")


def _staples_and_downloads(page) -> None:
    """On the fitted lab export: the owner's diagnostics open (RMSECV, the y-range check) and two downloads
    arrive one after the other."""
    from test_browser_downloads import click_download

    title = "Model diagnostics (owner's view, not private)"
    page.locator('[data-testid="stExpander"]').filter(has_text=title).locator("summary").first.click()
    assert_texts(page, ["RMSECV vs latent variables", "by the one-standard-error rule"], "lab export staples",
                 timeout_ms=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    assert_no_exception(page, "lab export with the staples open")
    for key in ("edpls_export_report", "edpls_export_workbook"):
        name, body = click_download(page, key)
        assert body, f"{key}: empty download {name}"
    wait_idle(page, timeout_ms=LOAD_MS)
    assert page.get_by_text("MediaFileStorageError").count() == 0
    assert_no_exception(page, "lab export after two downloads")


def test_fermentation_sample_set_fits_on_edpls(page, app_url):
    goto_page(page, app_url, "edpls")
    page.locator('[data-testid="stMain"] h1').first.wait_for(state="visible", timeout=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    page.locator('[data-testid="stSelectbox"]').filter(has_text="Sample set").first.click()
    page.get_by_role("option", name="Fermentation MIR spectra with glucose (chemotools)").click()
    assert_texts(page, ["Fermentation MIR spectra with glucose (chemotools): 21 rows"], "edpls fermentation",
                 timeout_ms=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    assert "glucose" in _selectbox_text(page, "Response (y)")
    assert_texts(page, ["Public spectra: 1629 rows", "What the recommended estimator chose, and why",
                        "proven guarantee"], "edpls fermentation fit", timeout_ms=LOAD_MS)
    first_chart(page, timeout_ms=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    assert_no_exception(page, "edpls fit on the fermentation set")
    assert visible_charts(page) >= 2
    screenshot(page, "edpls_fermentation")
