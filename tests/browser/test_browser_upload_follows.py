"""An upload is never lost (issue 31 item 7), in a real browser: a workbook uploaded on Home and followed, while it
is still being read, by a click on the edPLS card is waited for on edPLS and used there, not replaced by the
sample set Home had chosen.

The workbook (1,500 rows x 500 wavelengths and a response ``moisture``) is written here; reading it in the app's
worker takes seconds (openpyxl), so the click lands while Home shows "Reading big.xlsx" (shown after a second).
"""
from __future__ import annotations

import io
import re

import numpy as np

from browser_harness import assert_no_exception, goto_page, wait_idle
from test_browser_app import LOAD_MS, PICKER_INPUT, choose_upload

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
N_ROWS, N_WAVES = 1500, 500  # 750,000 cells: openpyxl reads them in ~4 s on an idle 2-core machine


def _workbook() -> bytes:
    """Written row by row (openpyxl's write-only mode: ~5 s, pandas' to_excel takes several times as long)."""
    from openpyxl import Workbook

    rng = np.random.default_rng(31)
    book = Workbook(write_only=True)
    sheet = book.create_sheet("data")
    sheet.append([str(1100 + 2 * j) for j in range(N_WAVES)] + ["moisture"])
    for row in (0.4 + 0.05 * rng.normal(size=(N_ROWS, N_WAVES + 1))).round(5).tolist():
        sheet.append(row)
    buf = io.BytesIO()
    book.save(buf)
    return buf.getvalue()


def test_an_upload_still_being_read_on_home_is_used_on_the_edpls_page_clicked_at_once(page, app_url):
    data = _workbook()
    goto_page(page, app_url, "")
    page.get_by_role("heading", name="PrivaLab").wait_for()
    wait_idle(page)
    choose_upload(page)
    wait_idle(page)
    page.locator(PICKER_INPUT).first.set_input_files(files=[{"name": "big.xlsx", "mimeType": XLSX, "buffer": data}])
    page.get_by_text("Reading big.xlsx").first.wait_for(timeout=LOAD_MS)  # Home is still reading it
    page.locator('[data-testid="stPageLink"]').filter(has_text="edPLS").first.click()
    page.get_by_role("heading", name="edPLS").first.wait_for(timeout=LOAD_MS)
    page.get_by_text(re.compile(r"\d+ rows × \d+ columns")).first.wait_for(timeout=LOAD_MS)  # the data preview
    wait_idle(page)
    assert_no_exception(page, "edPLS after a click mid-read")
    main = page.locator('[data-testid="stMain"]').inner_text()
    assert f"big.xlsx: {N_ROWS} rows × {N_WAVES + 1} columns" in main, main[:2000]
    assert "NIR spectra (synthetic)" not in main
    radio = page.locator('[data-testid="stRadio"]').filter(has_text="Data source").first
    assert radio.get_by_role("radio", name="Upload a file").is_checked()
