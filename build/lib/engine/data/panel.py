"""Frame -> arrays for time-series panels: a (T x sites) panel from a table already read by ``load_table``.

The fast path reads the common wide file (one time column of increasing ISO stamps, numeric sites)
directly; anything else goes through :func:`engine.data.io.load_timeseries`, the project's checked
loader. Used by the VAR-ADMM page (``engine.methods.var_admm.load_panel`` is this function).
No streamlit here.
"""
from __future__ import annotations

import pandas as pd

from .io import TimeSeriesData, load_timeseries
from .validate import check_constant_columns, check_min_rows

__all__ = ["load_panel"]


def load_panel(df: pd.DataFrame, name: str = "data.csv"):
    """A (T x sites) panel from a wide or long table already read by ``load_table``, via
    ``engine.data.load_timeseries`` (the project's checked loader; it sorts by time and rejects
    duplicate stamps, holes in a long table and constant series)."""
    stem = str(name).rsplit(".", 1)[0] or "data"
    # Fast path for the common wide file (a 'time' column of increasing ISO stamps, numeric sites);
    # anything else goes through the full loader.
    time_cols = [c for c in df.columns if str(c).strip().lower() in ("time", "date", "datetime", "timestamp")]
    if len(time_cols) == 1:
        tc = time_cols[0]
        sites = [c for c in df.columns if c != tc]
        if sites and all(pd.api.types.is_numeric_dtype(df[c]) for c in sites):
            try:
                times = pd.DatetimeIndex(pd.to_datetime(df[tc], format="ISO8601"), name=str(tc))
            except (ValueError, TypeError):
                times = None
            if times is not None and not times.hasnans and times.is_monotonic_increasing and times.is_unique:
                Y = df[sites].astype(float)
                Y.index = times
                check_min_rows(len(Y), 3, name, "a time-series model")
                check_constant_columns(Y, name)
                return TimeSeriesData(Y=Y, sites=[str(c) for c in sites], file=name, time_column=str(tc), layout="wide")
    return load_timeseries(df.to_csv(index=False).encode("utf-8"), name=f"{stem}.csv")
