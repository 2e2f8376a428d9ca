"""Human column headers for the tables the pages show (display only: the owner's workbook keeps the engine's
field names, which its readers match by name).

One place: every ``st.dataframe`` of a page passes its frame through :func:`human_headers`. Known field names
get their wording (``HEADERS``); any other lower-case name gets its underscores replaced by spaces and a capital
first letter. User data columns (the data preview) are shown as the user named them and do not come here.
"""
from __future__ import annotations

import re

import pandas as pd

#: Field names whose human header is not just the name with spaces.
HEADERS = {
    "rmsep": "RMSEP", "rmsep_private": "RMSEP, private", "rmsep_plain": "RMSEP, non-private",
    "rmsep_median": "RMSEP (median)", "rmsep_q25": "RMSEP (25th percentile)", "rmsep_q75": "RMSEP (75th percentile)",
    "epsilon": "ε", "delta": "δ", "sigma": "σ", "sigma_y": "σ_y", "sigma_y_test": "σ_y (test)",
    "epsilon_total_basic": "ε total (basic sum)", "delta_total_basic": "δ total (basic sum)",
    "claimed_epsilon": "Claimed ε", "claimed_delta": "Claimed δ", "n": "Rows", "k": "Components",
    "n_train": "Training rows", "n_test": "Test rows", "kpi": "KPI", "r2": "R²", "q2": "Q²", "id": "ID",
}
_SNAKE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")


def human(name) -> object:
    """The header shown for one field name (non-string names, e.g. wavelengths, are kept)."""
    if not isinstance(name, str):
        return name
    if name in HEADERS:
        return HEADERS[name]
    if _SNAKE.match(name):
        text = name.replace("_", " ")
        return text[0].upper() + text[1:]
    return name


def human_headers(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` with human column headers (and index name)."""
    out = frame.rename(columns=human)
    if isinstance(out.index.name, str):
        out.index.name = human(out.index.name)
    return out

