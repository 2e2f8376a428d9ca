"""Exports through a real browser: the files a user actually gets when clicking the download buttons (issue #15).

Buttons are found by their stable keys (``<page>_export_model``, ``_export_report``, ``_export_synthetic``,
``_export_workbook``: Streamlit puts ``st-key-<key>`` on the element). Every button is a deferred download with
``on_click="ignore"``, so downloads clicked one after the other must all arrive, without a rerun in between
invalidating the next file.

- edPLS (NIR sample, strict mode, ε = 1): the shareable release JSON, the shareable run report and the
  owner's workbook, clicked in a row. The shareable files carry no 64-hex token (no data hash), no seed
  and the same guarantee status; the workbook opens with pandas, read-me sheet first. The chart's own
  plotly modebar camera saves a PNG named after the page and chart.
- P3LS (no DP, no shareable model): report then workbook then report again, in a row; all arrive.
"""
from __future__ import annotations

import io
import json
import re

import pandas as pd

from browser_harness import assert_no_exception, first_chart, goto_page, wait_idle
from browser_harness import download as _download
from test_browser_app import LOAD_MS

HEX64 = re.compile(r"(?<![0-9a-fA-F])[0-9a-fA-F]{64}(?![0-9a-fA-F])")


def download(page, key: str):
    return _download(page, key, timeout_ms=LOAD_MS)


def assert_shareable(text: str, what: str) -> None:
    """What no shareable file may hold (engine.release.manifest.release_problems, plus the raw checks it stands for)."""
    from engine.release.manifest import release_problems

    assert not HEX64.search(text), f"{what}: a 64-hex-digit token (a content hash) is in a shareable file"
    assert not re.search(r"random_state", text, re.I), f"{what}: random_state in a shareable file"
    assert release_problems(text) == [], f"{what}: {release_problems(text)}"


def report_status(report_html: str) -> str:
    match = re.search(r"<td>guarantee of this fit</td><td>(.*?)</td>", report_html)
    assert match, "the report states the guarantee of this fit"
    return match.group(1)


def assert_private_workbook(name: str, body: bytes) -> dict:
    from engine.release.workbook import PRIVATE_NOTICE

    assert name.endswith("_PRIVATE.xlsx"), name
    sheets = pd.read_excel(io.BytesIO(body), sheet_name=None)
    assert list(sheets)[0] == "PRIVATE read me", list(sheets)
    assert all(str(sheets[s].columns[0]).startswith(PRIVATE_NOTICE) for s in list(sheets)[1:])
    return sheets


def test_edpls_release_report_and_workbook_in_a_row_and_chart_png(page, app_url):
    from engine.data.catalog import SAMPLE_SETS

    goto_page(page, app_url, "edpls")
    first_chart(page, timeout_ms=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    nir = SAMPLE_SETS["nir_consortium"]  # the page's default sample (issue #31)

    # three downloads in a row, no wait in between: each must arrive
    model_name, model_body = download(page, "edpls_export_model")
    report_name, report_body = download(page, "edpls_export_report")
    book_name, book_body = download(page, "edpls_export_workbook")

    assert model_name.endswith(".json"), model_name
    model_text = model_body.decode("utf-8")
    assert_shareable(model_text, "edPLS release JSON")
    release = json.loads(model_text)
    assert release["format"].startswith("privalab.edpls") and release["kind"] == "shareable release"
    assert {m["field"] for m in release["manifest"]} == set(release["fields"])

    assert report_name.endswith(".html"), report_name
    report = report_body.decode("utf-8")
    assert_shareable(report, "edPLS run report")
    for text in ("edPLS", nir.title, "moisture", "Analyze-Gauss"):
        assert text in report, f"run report lacks {text!r}"
    assert "<script" not in report.lower(), "the report must be self-contained and script-free"
    assert report_status(report) == release["ledger_totals"]["status"], "report and release: one ledger"

    sheets = assert_private_workbook(book_name, book_body)
    cells = [str(c) for c in sheets["run"].to_numpy().ravel()]
    fingerprints = [c for c in cells if HEX64.fullmatch(c)]
    assert fingerprints, "the owner's workbook holds the keyed fingerprint of the data"
    assert not any(f in report or f in model_text for f in fingerprints)

    # plotly's own download: the modebar camera of the first chart saves edpls_<chart>.png
    chart = page.locator('[data-testid="stPlotlyChart"]').first
    chart.hover()
    camera = page.locator('.modebar-btn[data-title="Download plot as a PNG"]').first
    camera.wait_for(state="visible", timeout=30_000)
    with page.expect_download(timeout=60_000) as info:
        camera.click()
    png = info.value
    assert png.suggested_filename.startswith("edpls_") and png.suggested_filename.endswith(".png"), \
        png.suggested_filename
    with open(png.path(), "rb") as fh:
        assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
    assert_no_exception(page, "edpls after the downloads")


def test_p3ls_two_downloads_in_a_row_both_arrive(page, app_url):
    goto_page(page, app_url, "p3ls")
    first_chart(page, timeout_ms=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)
    assert page.locator(".st-key-p3ls_export_model").count() == 0, "P3LS has no shareable model"
    page.get_by_text("No shareable model: P3LS releases no differentially private output").first.wait_for()

    first_name, first = download(page, "p3ls_export_report")
    book_name, book = download(page, "p3ls_export_workbook")
    again_name, again = download(page, "p3ls_export_report")

    assert first_name == again_name == "p3ls_report.html"
    report = first.decode("utf-8")
    assert_shareable(report, "P3LS run report")
    assert report_status(report) == "no privacy" and "P3LS" in report
    assert again.decode("utf-8") == report, "the same run gives the same report"
    sheets = assert_private_workbook(book_name, book)
    assert "model coefficients per party" in sheets and "message log" in sheets
    assert_no_exception(page, "p3ls after the downloads")
