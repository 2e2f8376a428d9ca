"""Exports shared by every page: charts with a named PNG download, and the two kinds of export.

- :func:`show_chart` draws a plotly figure so that the modebar camera saves ``<page>_<name>.png``.
- :func:`export_bar` renders two groups that are never mixed (issue #15):
  the **shareable release** (model JSON built by :func:`engine.release.manifest.build_release`, the shareable
  run report, and synthetic data where the page makes some: DP outputs and declared-public inputs
  only) and the **owner's workbook** (XLSX, "contains private information: do not share": the
  reference model, test values, results on private rows, exact counts, the keyed fingerprint).
  Stable keys ``<page>_export_model``, ``<page>_export_report``, ``<page>_export_synthetic``,
  ``<page>_export_workbook`` and ``<page>_export_fingerprint_key`` (the key of the workbook's data fingerprint,
  a file of its own: never beside the HMAC it keys); labels :data:`LABELS`. Every file is built only when
  clicked and every button uses ``on_click="ignore"``, so one download never invalidates another. The report of the
  current run is kept in ``st.session_state["export_report_<page>"]`` (a :class:`engine.reporting.report.RunReport`).
"""
from __future__ import annotations

import re

import streamlit as st

from engine.release.fingerprint import new_owner_secret
from engine.release.workbook import OwnerWorkbook
from engine.reporting.report import RunReport

LABELS = {"model": "Model (JSON, shareable)", "report": "Run report (HTML, shareable)",
          "synthetic": "Synthetic data (CSV, shareable)", "workbook": "Owner's workbook (XLSX, private)",
          "fingerprint_key": "Fingerprint key (TXT, private, keep apart)",
          "tables": "Tables (CSV, shareable)"}
SHAREABLE_HEADING = ("**Shareable release**: differentially private outputs and inputs you declared public only "
                     "(each file lists where every field comes from).")
PRIVATE_HEADING = ":red[**Owner's workbook: contains private information, do not share.**] Reference model, " \
                  "results on your private rows, exact counts and the data's keyed fingerprint."


def owner_secret() -> bytes:
    """This browser session's owner secret (32 random bytes, in ``st.session_state`` only): with the data it
    gives the fingerprint key of this owner and data set (``engine.release.fingerprint.fingerprint_key``). Another
    session, even on the same server process, has another secret."""
    return st.session_state.setdefault("pl_owner_secret", new_owner_secret())


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


def tables_csv(tables: dict) -> str:
    """A page's tables in one CSV, one block per table (for pages without private data: no owner's workbook)."""
    return "\n".join(f"# {name}\n{frame.to_csv(index=False)}" for name, frame in tables.items())


def export_bar(report: RunReport, *, release_json=None, no_release_reason: str | None = None, synthetic_csv=None,
               owner_sheets=None, where=None, key: str | None = None, public_tables=None) -> None:
    """The shareable downloads and the owner's workbook, in two labelled groups.

    release_json: the shareable model release (text, or a zero-argument callable returning it).
    no_release_reason: shown instead of the model button when there is no shareable model.
    synthetic_csv: shareable synthetic data (text or callable), for pages that release some.
    owner_sheets: dict of extra private sheets (or a callable returning one) for the owner's workbook.
    public_tables: for a page without data (the calculator): its tables as a shareable CSV (text or callable),
    offered instead of the owner's workbook, which such a page has no private content for.
    """
    where = st if where is None else where
    page = key or report.page
    st.session_state[f"export_report_{page}"] = report
    where.markdown(SHAREABLE_HEADING)
    cols = where.columns(3)
    if release_json is not None:
        cols[0].download_button(LABELS["model"], release_json, file_name=f"{_slug(page)}_release.json",
                                mime="application/json", key=f"{page}_export_model", on_click="ignore",
                                icon=":material/data_object:",
                                help="The DP model: its released fields, the manifest naming the ledger release "
                                     "or public declaration behind each, the ledger and the guarantee.")
    else:
        cols[0].caption(f"No shareable model: {no_release_reason or 'this page fits none.'}")
    cols[1].download_button(LABELS["report"], report.to_html, file_name=report.file_name("html"),
                            mime="text/html", key=f"{page}_export_report", on_click="ignore",
                            icon=":material/description:",
                            help="One self-contained page: method, public parameters, privacy mode, the ledger and "
                                 "the guarantee of this fit. No data hash, no seed, no private evaluation.")
    if synthetic_csv is not None:
        cols[2].download_button(LABELS["synthetic"], synthetic_csv, file_name=f"{_slug(page)}_synthetic.csv",
                                mime="text/csv", key=f"{page}_export_synthetic", on_click="ignore",
                                icon=":material/table:")
    if public_tables is not None:
        cols[2].download_button(LABELS["tables"], public_tables, file_name=f"{_slug(page)}_tables.csv",
                                mime="text/csv", key=f"{page}_export_tables", on_click="ignore",
                                icon=":material/table:", help="This page's tables: computed from public inputs only.")
        return
    where.markdown(PRIVATE_HEADING)

    def workbook() -> bytes:
        extra = owner_sheets() if callable(owner_sheets) else owner_sheets
        return report.owner_workbook(extra).to_xlsx()

    where.download_button(LABELS["workbook"], workbook, file_name=OwnerWorkbook.file_name(page),
                          mime="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
                          key=f"{page}_export_workbook", on_click="ignore", icon=":material/lock:",
                          help="For you only: everything computed from your private data without noise.")
    if report.data is not None and report.data.key:
        where.download_button(LABELS["fingerprint_key"], report.fingerprint_key_file,
                              file_name=report.key_file_name(), mime="text/plain",
                              key=f"{page}_export_fingerprint_key", on_click="ignore", icon=":material/key:",
                              help="The key of the data fingerprint in the workbook (same key id). Keep it apart "
                                   "from the workbook: with both, anyone can test a candidate table against it.")
