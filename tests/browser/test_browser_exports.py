"""Exports through a real browser: the files a user actually gets when clicking the download buttons.

On the edPLS page (NIR sample, strict mode, ε = 1): "Run report (HTML)", "Model (JSON)" and "Results (CSV)"
each produce a download whose contents are checked (the report names the data by its SHA-256 and states the
proven guarantee and the ledger; the model JSON carries the ledger at the budget in force; the CSV has one
row per test sample), and the chart's own plotly modebar camera saves a PNG named after the page and chart.
"""
from __future__ import annotations

import io
import json

import pandas as pd

from browser_harness import assert_no_exception, first_chart, goto_page, wait_idle
from test_browser_app import LOAD_MS


def download(page, button_label: str):
    """Click a download button in the main area; return (suggested file name, bytes)."""
    button = page.locator('[data-testid="stMain"]').get_by_role("button", name=button_label, exact=True).first
    button.wait_for(state="visible", timeout=LOAD_MS)
    with page.expect_download(timeout=LOAD_MS) as info:
        button.click()
    dl = info.value
    with open(dl.path(), "rb") as fh:
        return dl.suggested_filename, fh.read()


def test_edpls_downloads_report_model_results_and_chart_png(page, app_url):
    from engine.data import load_table
    from engine.data.catalog import SAMPLE_SETS
    from engine.report import DataInfo

    goto_page(page, app_url, "edpls")
    first_chart(page, timeout_ms=LOAD_MS)
    wait_idle(page, timeout_ms=LOAD_MS)

    name, body = download(page, "Run report (HTML)")
    assert name.endswith(".html"), name
    report = body.decode("utf-8")
    nir = SAMPLE_SETS["nir"]
    df = load_table(nir.path)
    channels = [c for c in df.select_dtypes("number").columns if c not in nir.response_columns]
    sha = DataInfo.from_frame(df, nir.title, "sample", ["moisture", *channels]).sha256
    assert sha in report, "the report must name the data by its SHA-256"
    for text in ("edPLS", nir.title, "moisture", "Analyze-Gauss", "proven guarantee", "RMSEP, private"):
        assert text in report, f"run report lacks {text!r}"
    assert "<script" not in report.lower(), "the report must be self-contained and script-free"

    name, body = download(page, "Model (JSON)")
    assert name.endswith(".json"), name
    model = json.loads(body)
    assert model["format"].startswith("privalab.edpls"), model.get("format")
    assert len(model["coef"]) == len(channels), "one coefficient per channel"
    assert model["params"]["epsilon"] == 1.0 and model["ledger_totals"]["proven"] is True

    name, body = download(page, "Results (CSV)")
    results = pd.read_csv(io.BytesIO(body))
    assert len(results) == 36, f"one row per test sample (30 % of 120), got {len(results)}"
    assert {"y_test", "pred_private", "pred_nonprivate"} <= set(results.columns)

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
