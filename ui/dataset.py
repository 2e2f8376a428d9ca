"""The chosen data set (``Dataset``, kept in ``st.session_state``) and the two helpers that store it and say which
one stays selected; shared by the data picker (``ui.data_picker``) and the large-data choice (``ui.large_data``)."""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd
import streamlit as st

from engine.data.columns import MissingRows, numeric_columns

__all__ = ["Dataset", "still_using", "store_dataset"]


@dataclass
class Dataset:
    name: str
    df: pd.DataFrame
    origin: str  # "sample" | "upload"
    kind: str | None = None
    response_columns: tuple = field(default_factory=tuple)
    # picker key -> message of the page's check (None: usable there); filled by data_picker
    checks: dict = field(default_factory=dict, compare=False, repr=False)
    key: str | None = None  # the sample set's catalog key (None for an upload)
    label_column: str | None = None  # a text column of class labels (a sample set's declaration)
    # an upload refused for missing cells: its frame with NaN, the engine's refusal, the rows left out
    raw: pd.DataFrame | None = field(default=None, compare=False, repr=False)
    refusal: str | None = None
    dropped: MissingRows | None = None
    drop_missing: bool = field(default=True, compare=False)  # the user's tick (kept with the data set)
    files: tuple = ()  # (spectra file, reference file) when joined from two files
    # a large data set on the server (origin "server", ui.large_data): its DatasetShape; df holds its first rows
    large: object = field(default=None, compare=False, repr=False)

    @property
    def numeric_columns(self) -> list:
        return numeric_columns(self.df)


def store_dataset(ds: Dataset, slot: str) -> None:
    st.session_state[slot] = ds


def still_using(current: Dataset | None) -> None:
    """After a refused or not yet usable upload: say which data stay selected."""
    if current is not None:
        st.info(f"Still using the previous data: {current.name}.")
