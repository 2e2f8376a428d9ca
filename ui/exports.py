"""Exports shared by every page: charts with a named PNG download, and the download bar
(results CSV, model JSON, run report HTML).

- :func:`show_chart` draws a plotly figure so that the modebar camera saves ``<page>_<name>.png``.
- :func:`export_bar` renders the three download buttons with stable keys
  ``<page>_export_results``, ``<page>_export_model``, ``<page>_export_report`` and labels
  :data:`LABELS`. Model and report are built only when clicked (Streamlit's deferred downloads),
  so a rerun costs nothing; the report of the current run is kept in
  ``st.session_state["export_report_<page>"]`` (a :class:`engine.report.RunReport`).
"""
from __future__ import annotations

import re

import streamlit as st

from engine.report import RunReport

LABELS = {"results": "Results (CSV)", "model": "Model (JSON)", "report": "Run report (HTML)"}


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "_", str(text)).strip("_") or "chart"


def chart_config(page: str, name: str) -> dict:
    """Plotly config: the modebar camera downloads ``<page>_<name>.png`` at twice the screen resolution."""
    return {"toImageButtonOptions": {"format": "png", "filename": f"{_slug(page)}_{_slug(name)}", "scale": 2},
            "displaylogo": False}


def show_chart(where, fig, name: str, *, page: str, **kwargs):
    """``where.plotly_chart(fig)`` full width with :func:`chart_config` (``where``: ``st`` or a container).

    Extra keyword arguments (``key``, ``on_select``, ...) go to ``plotly_chart``.
    """
    return where.plotly_chart(fig, width="stretch", config=chart_config(page, name), **kwargs)


def export_bar(report: RunReport, *, results_csv=None, model_json=None, no_model_reason: str | None = None,
               where=None, key: str | None = None) -> None:
    """Download buttons "Results (CSV)", "Model (JSON)" and "Run report (HTML)" in one row.

    results_csv / model_json: text, or a zero-argument callable returning it (built on click).
    Without a model, ``no_model_reason`` says why there is none (shown instead of the button).
    """
    where = st if where is None else where
    page = key or report.page
    st.session_state[f"export_report_{page}"] = report
    cols = where.columns(3)
    if results_csv is not None:
        cols[0].download_button(LABELS["results"], results_csv, file_name=f"{_slug(page)}_results.csv",
                                mime="text/csv", key=f"{page}_export_results", on_click="ignore",
                                icon=":material/table:")
    else:
        cols[0].caption("No results table yet.")
    if model_json is not None:
        cols[1].download_button(LABELS["model"], model_json, file_name=f"{_slug(page)}_model.json",
                                mime="application/json", key=f"{page}_export_model", on_click="ignore",
                                icon=":material/data_object:",
                                help="The fitted model's parameters, fitted attributes and privacy ledger as plain "
                                     "JSON (no pickle).")
    else:
        cols[1].caption(f"No model to download: {no_model_reason or 'this page fits none.'}")
    cols[2].download_button(LABELS["report"], report.to_html, file_name=report.file_name("html"),
                            mime="text/html", key=f"{page}_export_report", on_click="ignore",
                            icon=":material/description:",
                            help="One self-contained page: data (with its SHA-256), preprocessing, every "
                                 "parameter, the privacy mode and ledger, the headline numbers and the versions.")
