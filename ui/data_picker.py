"""Data picker shared by all pages: a sample set or an upload, with a preview.

A bad upload shows the engine's message (file, row, column) and the previously selected
data stays selected: the valid choice lives in ``st.session_state["pl_dataset"]`` and is
only replaced by data that loaded cleanly.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd
import streamlit as st

from engine.data import DataError, load_table
from engine.data.catalog import SAMPLE_SETS, sample_sets


@dataclass
class Dataset:
    name: str
    df: pd.DataFrame
    origin: str  # "sample" | "upload"
    kind: str | None = None
    response_columns: tuple = field(default_factory=tuple)

    @property
    def numeric_columns(self) -> list:
        return [c for c in self.df.columns if pd.api.types.is_numeric_dtype(self.df[c])]


@st.cache_data(show_spinner=False, max_entries=16)
def _load_bytes(data: bytes, name: str) -> pd.DataFrame:
    """Parse uploaded bytes once per content (cache key: bytes and name)."""
    import io

    class _Upload(io.BytesIO):
        pass

    buf = _Upload(data)
    buf.name = name
    buf.size = len(data)
    return load_table(buf, name=name)


@st.cache_data(show_spinner=False)
def _load_sample(key: str) -> pd.DataFrame:
    return load_table(SAMPLE_SETS[key].path)


def _store(ds: Dataset, slot: str) -> None:
    st.session_state[slot] = ds


def data_picker(kind: str | None = None, *, key: str = "data", slot: str = "pl_dataset") -> Dataset | None:
    """Render the picker and return the selected data set (or None when none is valid yet).

    kind: restrict sample sets to one kind ("spectra", "timeseries", "two_views", "process");
    None offers all of them.
    """
    current: Dataset | None = st.session_state.get(slot)
    if current is not None and kind is not None and current.kind not in (kind, None):
        current = None  # a data set of another kind does not fit this page
    choices = sample_sets(kind) or sample_sets()
    source = st.radio("Data source", ("Sample data", "Upload a file"), horizontal=True, key=f"{key}_source")
    if source == "Sample data":
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
    else:
        up = st.file_uploader(
            "CSV, TSV or XLSX: one row per sample (or per time step), one column per variable",
            type=["csv", "tsv", "txt", "xlsx"], key=f"{key}_upload",
        )
        if up is not None:
            try:
                df = _load_bytes(up.getvalue(), up.name)
            except DataError as err:
                st.error(f"Upload rejected: {err}")
                if current is not None:
                    st.info(f"Still using the previous data: {current.name}.")
            else:
                if current is None or current.name != up.name or not current.df.equals(df):
                    current = Dataset(up.name, df, "upload", kind)
                    _store(current, slot)
    if current is not None:
        _preview(current)
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
