"""Data picker shared by all pages: a sample set or an upload, with a preview.

A bad upload shows the engine's message (file, row, column) and the previously selected
data stays selected: the valid choice lives in ``st.session_state["pl_dataset"]`` and is
only replaced by data that loaded cleanly.
"""
from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Callable

import pandas as pd
import streamlit as st

from engine.data import MAX_UPLOAD_MB, DataError, check_usable, load_table, xlsx_sheet_names
from engine.data.catalog import SAMPLE_SETS, sample_sets
from ui.state import init_state


@dataclass
class Dataset:
    name: str
    df: pd.DataFrame
    origin: str  # "sample" | "upload"
    kind: str | None = None
    response_columns: tuple = field(default_factory=tuple)
    # picker key -> message of the page's check (None: usable there); filled by data_picker
    checks: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def numeric_columns(self) -> list:
        return [c for c in self.df.columns if pd.api.types.is_numeric_dtype(self.df[c])]


@st.cache_data(show_spinner=False, max_entries=32)
def _try_load(data: bytes, name: str, sheet: str | None = None):
    """(DataFrame, None) or (None, the engine's message), cached per content: a refused file
    (e.g. a million columns) is parsed once, not on every rerun or page."""
    buf = io.BytesIO(data)
    buf.name, buf.size = name, len(data)
    try:
        return load_table(buf, name=name, sheet=sheet), None
    except DataError as err:
        return None, (str(err), err.row, err.column, err.line)


@st.cache_data(show_spinner=False, max_entries=16)
def _sheets(data: bytes) -> list:
    return xlsx_sheet_names(data)


def _check(ds_or_df, name: str, kind: str | None, check: Callable | None) -> None:
    """The table must suit the page: ``check_usable`` for its kind, then the page's own ``check``."""
    df = ds_or_df.df if isinstance(ds_or_df, Dataset) else ds_or_df
    check_usable(df, name, kind)
    if check is not None:
        check(df, name)


def _usable_here(ds: Dataset, kind: str | None, check: Callable | None, key: str) -> str | None:
    """None when ``ds`` suits this page, else the reason (checked once per data set and page)."""
    if key not in ds.checks:
        try:
            _check(ds, ds.name, kind, check)
        except DataError as err:
            ds.checks[key] = str(err)
        else:
            ds.checks[key] = None
    return ds.checks[key]


@st.cache_data(show_spinner=False)
def _load_sample(key: str) -> pd.DataFrame:
    return load_table(SAMPLE_SETS[key].path)


MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * 1024 * 1024


class _ChooseSheet(Exception):
    """A workbook with several sheets and none chosen yet."""


def _store(ds: Dataset, slot: str) -> None:
    st.session_state[slot] = ds


def _still_using(current: Dataset | None) -> None:
    """After a refused or not yet usable upload: say which data stay selected."""
    if current is not None:
        st.info(f"Still using the previous data: {current.name}.")


def data_picker(kind: str | None = None, *, key: str = "data", slot: str = "pl_dataset",
                check: Callable | None = None) -> Dataset | None:
    """Render the picker and return the selected data set (or None when none is valid yet).

    kind: restrict sample sets to one kind ("spectra", "timeseries", "two_views", "process");
    None offers all of them. An upload must also pass ``engine.data.check_usable`` for the kind
    and the page's ``check(df, name)`` (raising DataError) before it replaces the selection; a
    refused upload shows the engine's message and the previous data stay selected. An upload
    chosen on another page that does not suit this one is set aside with a message.
    """
    init_state()
    current = _current_for_page(kind, check, key, slot)
    source = st.radio("Data source", ("Sample data", "Upload a file"), horizontal=True, key=f"{key}_source")
    if source == "Sample data":
        current = _sample_choice(kind, current, key, slot)
    else:
        current = _upload_choice(kind, check, current, key, slot)
    if current is not None:
        _preview(current)
    return current


def _current_for_page(kind: str | None, check: Callable | None, key: str, slot: str) -> Dataset | None:
    """The data chosen earlier (on any page), or None when they do not suit this page."""
    current: Dataset | None = st.session_state.get(slot)
    if current is not None and kind is not None and current.kind not in (kind, None):
        return None  # a data set of another kind does not fit this page
    if current is not None and current.origin == "upload":
        reason = _usable_here(current, kind, check, key)
        if reason is not None:
            st.warning(f"{current.name}, chosen earlier, cannot be used on this page: {reason}",
                       icon=":material/warning:")
            return None
    return current


def _sample_choice(kind: str | None, current: Dataset | None, key: str, slot: str) -> Dataset | None:
    choices = sample_sets(kind) or sample_sets()
    titles = [s.title for s in choices]
    default = 0
    if current is not None and current.origin == "sample" and current.name in titles:
        default = titles.index(current.name)
    title = st.selectbox("Sample set", titles, index=default, key=f"{key}_sample")
    chosen = choices[titles.index(title)]
    if current is None or current.name != chosen.title:
        try:
            df = _load_sample(chosen.key)
        except (DataError, OSError) as err:
            st.error(
                f"Sample set '{chosen.title}' could not be read ({err}). "
                "Regenerate the samples with `python -m engine.data.samples`."
            )
        else:
            current = Dataset(chosen.title, df, "sample", chosen.kind, chosen.response_columns)
            _store(current, slot)
    if current is not None and chosen.description:
        st.caption(chosen.description)
    return current


def _too_large(up, current: Dataset | None) -> bool:
    """A file over the size limit is refused on its size before reading (the engine's message)."""
    if up.size <= MAX_UPLOAD_BYTES:
        return False
    try:
        load_table(up)
    except DataError as err:
        st.error(f"Upload rejected: {err}")
        _still_using(current)
        return True
    return False


def _load_upload(data: bytes, name: str, sheet: str | None, display: str, kind: str | None,
                 check: Callable | None, sheets: list, verdict: tuple, key: str) -> pd.DataFrame:
    """The upload's table, or DataError / _ChooseSheet. A refused file stays in the uploader: its verdict is
    remembered instead of checking it on every rerun."""
    if len(sheets) > 1 and sheet is None:
        raise _ChooseSheet(f"{name}: the workbook has {len(sheets)} sheets "
                           f"({', '.join(repr(s) for s in sheets)}); choose the sheet with the data.")
    refused = st.session_state.get(f"{key}_refused")
    if refused is not None and refused[0] == verdict:
        raise DataError(refused[1], file=name)
    try:
        df, problem = _try_load(data, name, sheet)
        if problem is not None:
            message, row, column, line = problem
            raise DataError(message, file=name, row=row, column=column, line=line)
        _check(df, display, kind, check)
    except DataError as err:
        st.session_state[f"{key}_refused"] = (verdict, str(err))
        raise
    return df


def _upload_choice(kind: str | None, check: Callable | None, current: Dataset | None, key: str,
                   slot: str) -> Dataset | None:
    up = st.file_uploader(
        "CSV, TSV or XLSX: one row per sample (or per time step), one column per variable",
        type=None, key=f"{key}_upload",  # any name: the engine names a wrong format (e.g. .xls) itself
    )
    if up is None or _too_large(up, current):
        return current
    data = up.getvalue()
    sheet = None
    sheets = _sheets(data) if up.name.lower().endswith(".xlsx") and len(data) <= MAX_UPLOAD_BYTES else []
    if len(sheets) > 1:
        sheet = st.selectbox(f"Sheet of {up.name}", sheets, index=None, placeholder="Choose the data sheet",
                             key=f"{key}_sheet_{up.name}")
    display = up.name if sheet is None else f"{up.name} [{sheet}]"
    verdict = (up.file_id, up.name, len(data), sheet)
    try:
        df = _load_upload(data, up.name, sheet, display, kind, check, sheets, verdict, key)
    except _ChooseSheet as note:
        st.warning(str(note), icon=":material/table_view:")
        _still_using(current)
    except DataError as err:
        st.error(f"Upload rejected: {err}")
        _still_using(current)
    else:
        if current is None or current.name != display or not current.df.equals(df):
            current = Dataset(display, df, "upload", kind)
            current.checks[key] = None
            _store(current, slot)
    return current


def _preview(ds: Dataset) -> None:
    n_rows, n_cols = ds.df.shape
    n_num = len(ds.numeric_columns)
    st.markdown(
        f"**{ds.name}**: {n_rows} rows × {n_cols} columns ({n_num} numeric, {n_cols - n_num} text)."
    )
    with st.expander("Preview", expanded=False):
        st.dataframe(ds.df.head(20).iloc[:, :40], width="stretch")
        if n_cols > 40:
            st.caption(f"First 40 of {n_cols} columns shown.")


def usable_dataset(kind: str, *, key: str, hint: str, needs: str, min_numeric: int = 3) -> Dataset:
    """The data picker, and the page stops here (with a message) until a data set it can use is chosen.

    hint : what to do when nothing is chosen yet (an info box). needs : what the page needs, shown with the file's
    name and its number of numeric columns when it has fewer than ``min_numeric``.
    """
    ds = data_picker(kind, key=key)
    if ds is None:
        st.info(hint)
        st.stop()
    n = len(ds.numeric_columns)
    if n < min_numeric:
        st.error(f"{ds.name}: {needs}; the file has {n} numeric column(s).")
        st.stop()
    return ds
