"""Time series for VAR: a wide or long table -> a (T x sites) panel sorted by time.

``load_timeseries`` reads a file (through ``load_table``), finds or takes the time column, decides
the layout (wide: one numeric column per site; long: time, site and value columns, pivoted) and
refuses what a VAR cannot use, naming the rows: repeated time stamps, repeated (time, site) pairs,
holes in a long table, unreadable dates, constant series.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .frames import _load, _numeric_columns
from .readers import _Meta
from .validate import DataError, check_constant_columns, check_min_rows, quote_list, require_numeric

__all__ = ["TimeSeriesData", "load_timeseries", "timeseries_from_frame"]

_TIME_NAMES = ("time", "date", "datetime", "timestamp", "ds", "period", "t", "hour", "day", "week", "month", "year")


@dataclass(frozen=True, eq=False)
class TimeSeriesData:
    """Multivariate time series for VAR.

    Y : DataFrame (T x n_sites), float64, sorted by time. Index: DatetimeIndex when the time
        column holds dates, the (sorted) numbers of a numeric time column, or RangeIndex
        (file order) when there is no time column.
    sites : list of column names of Y (n_sites,).
    file : file name.
    time_column : name of the time column used, or None.
    layout : "wide" or "long" (as read).
    """

    Y: pd.DataFrame
    sites: list
    file: str
    time_column: str | None = None
    layout: str = "wide"

    @property
    def sources(self) -> tuple:
        """The files the series was read from."""
        return (self.file,)



def _parse_times(values: pd.Series, meta: _Meta, col: str) -> pd.DatetimeIndex:
    """Datetimes of a text column; the first unreadable cell is named by row."""
    s = pd.Series(values, dtype=object).astype(str).str.strip().reset_index(drop=True)
    empty = (s == "").to_numpy()
    if empty.any():
        i = int(np.argmax(empty))
        raise DataError(
            f"{meta.name}: column '{col}', {meta.where(i)}: the time is empty.",
            file=meta.name, row=i + 1, column=col, line=int(meta.lines[i]),
        )
    t = None
    for kwargs in ({}, {"format": "ISO8601"}, {"format": "mixed"}, {"format": "mixed", "utc": True}):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                cand = pd.to_datetime(s, errors="coerce", **kwargs)
        except (ValueError, TypeError, OverflowError):
            continue
        if t is None or cand.isna().sum() < t.isna().sum():
            t = cand
        if not t.isna().any():
            break
    if t is None:
        raise DataError(f"{meta.name}: column '{col}' does not hold dates or times.", file=meta.name, column=col)
    bad = t.isna().to_numpy()
    if bad.any():
        i = int(np.argmax(bad))
        raise DataError(
            f"{meta.name}: column '{col}', {meta.where(i)}: '{s.iloc[i]}' is not a date/time "
            "that can be read (use e.g. 2024-03-01 or 2024-03-01 13:00).",
            file=meta.name, row=i + 1, column=col, line=int(meta.lines[i]),
        )
    return pd.DatetimeIndex(t)


def _share_parsing_as_time(s: pd.Series) -> float:
    head = s.astype(str).str.strip().head(50)
    head = head[head != ""]
    if head.empty:
        return 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            t = pd.to_datetime(head, errors="coerce", format="mixed")
        except (ValueError, TypeError, OverflowError):
            return 0.0
    return float(t.notna().mean())


def _guess_time_column(df: pd.DataFrame) -> str | None:
    lower = {str(c).strip().lower(): c for c in df.columns}
    for key in _TIME_NAMES:
        if key in lower:
            return lower[key]
    for c in df.columns:
        if not pd.api.types.is_numeric_dtype(df[c]) and _share_parsing_as_time(df[c]) >= 0.8:
            return c
    return None


def _time_index(df: pd.DataFrame, col: str, meta: _Meta) -> pd.Index:
    if pd.api.types.is_numeric_dtype(df[col]):
        v = df[col].to_numpy(dtype=float)
        if np.all(v == np.round(v)) and np.all(np.abs(v) < 2**53):
            return pd.Index(v.astype(np.int64), name=col)
        return pd.Index(v, name=col)
    return pd.DatetimeIndex(_parse_times(df[col], meta, col), name=col)


def _fmt_time(t) -> str:
    if isinstance(t, pd.Timestamp):
        if t == t.normalize() and t.tzinfo is None:
            return t.strftime("%Y-%m-%d")
        return str(t)
    return str(t)


def _labels(col: pd.Series) -> np.ndarray:
    """Site names as strings; integral numbers without '.0'."""
    if pd.api.types.is_numeric_dtype(col):
        v = col.to_numpy(dtype=float)
        return np.array([str(int(x)) if x.is_integer() else repr(float(x)) for x in v], dtype=object)
    return col.astype(str).str.strip().to_numpy(dtype=object)



def _check_named_columns(df: pd.DataFrame, file: str, **named) -> None:
    """Every column the caller named (role -> name or None) exists."""
    for role, c in named.items():
        if c is not None and c not in df.columns:
            raise DataError(
                f"{file}: {role} column '{c}' not found. Columns in the file: {quote_list(df.columns)}.",
                file=file, column=c,
            )


def _auto_layout(df: pd.DataFrame, time_column, site_column, value_column) -> tuple[str, str | None]:
    """("long" or "wide", site column) for layout="auto": see :func:`load_timeseries`."""
    if site_column is not None or value_column is not None:
        return "long", site_column
    rest = [c for c in df.columns if c != time_column]
    if time_column is None or len(rest) != 2:
        return "wide", site_column
    text = [c for c in rest if not pd.api.types.is_numeric_dtype(df[c])]
    if len(text) == 1 and df[text[0]].nunique() <= len(df) / 2:
        return "long", site_column
    if not text and df[time_column].duplicated().any():
        # numeric site codes: the times repeat once per site
        a, b = rest
        site = a if df[a].nunique() <= df[b].nunique() else b
        if df[site].nunique() <= len(df) / 2:
            return "long", site
    return "wide", site_column


def _long_roles(df: pd.DataFrame, file: str, time_column, site_column, value_column) -> tuple[str, str]:
    """(site column, value column) of a long table; the defaults are the only text / numeric column."""
    if time_column is None:
        raise DataError(f"{file}: no time column found; name it 'time' (or choose it) for a long table.", file=file)
    rest = [c for c in df.columns if c != time_column]
    if site_column is None:
        cand = [c for c in rest if c != value_column and not pd.api.types.is_numeric_dtype(df[c])]
        if len(cand) != 1:
            raise DataError(
                f"{file}: cannot tell which column names the sites (text columns besides the time: "
                f"{quote_list(cand) or 'none'}); choose the site column.",
                file=file,
            )
        site_column = cand[0]
    if value_column is None:
        cand = [c for c in rest if c != site_column and pd.api.types.is_numeric_dtype(df[c])]
        if len(cand) > 1:
            cand = [c for c in cand if c.strip().lower() in ("value", "values", "y")] or cand
        if len(cand) != 1:
            raise DataError(
                f"{file}: cannot tell which column holds the values (numeric columns: "
                f"{quote_list(cand) or 'none'}); choose the value column.",
                file=file,
            )
        value_column = cand[0]
    return site_column, value_column


def _site_labels(df: pd.DataFrame, site_column: str, meta: _Meta) -> np.ndarray:
    sites = _labels(df[site_column])
    empty = np.flatnonzero(sites == "")
    if empty.size:
        i = int(empty[0])
        raise DataError(
            f"{meta.name}: column '{site_column}', {meta.where(i)}: the site name is empty.",
            file=meta.name, row=i + 1, column=site_column, line=int(meta.lines[i]),
        )
    return sites


def _check_one_value_per_time(times, sites: np.ndarray, site_column: str, meta: _Meta) -> None:
    key = pd.DataFrame({"t": np.asarray(times), "s": sites})
    if not key.duplicated(keep=False).to_numpy().any():
        return
    second = int(np.flatnonzero(key.duplicated(keep="first").to_numpy())[0])
    same = (key["t"] == key["t"].iloc[second]) & (key["s"] == key["s"].iloc[second])
    first = int(np.flatnonzero(same.to_numpy())[0])
    raise DataError(
        f"{meta.name}: site '{sites[second]}' has two values for time "
        f"{_fmt_time(times[second])}: {meta.where(first)} and {meta.where(second)}.",
        file=meta.name, row=second + 1, column=site_column, line=int(meta.lines[second]),
    )


def _long_panel(df: pd.DataFrame, meta: _Meta, time_column: str, site_column: str, value_column: str):
    """(Y (T x sites) pivoted from a long table, site names)."""
    file = meta.name
    require_numeric(df, [value_column], file)
    times = _time_index(df, time_column, meta)
    if site_column == value_column:
        raise DataError(f"{file}: the site and value columns must differ ('{site_column}').", file=file)
    sites_col = _site_labels(df, site_column, meta)
    _check_one_value_per_time(times, sites_col, site_column, meta)
    sites = list(dict.fromkeys(sites_col))
    wide = pd.DataFrame({"t": np.asarray(times), "s": sites_col, "v": df[value_column].to_numpy(dtype=float)})
    Y = wide.pivot(index="t", columns="s", values="v").reindex(columns=sites).sort_index()
    holes = Y.isna().to_numpy()
    if holes.any():
        j = int(np.flatnonzero(holes.any(axis=0))[0])
        miss = np.flatnonzero(holes[:, j])
        raise DataError(
            f"{file}: site '{sites[j]}' has no value for {miss.size} of {len(Y)} times "
            f"(first missing: {_fmt_time(Y.index[miss[0]])}). Every site needs a value at every time.",
            file=file, column=sites[j],
        )
    Y.index.name = time_column
    sites = [str(s) for s in sites]
    Y.columns = pd.Index(sites)
    return Y, sites


def _wide_panel(df: pd.DataFrame, meta: _Meta, time_column: str | None):
    """(Y (T x sites): every numeric column but the time, sorted by time; site names)."""
    file = meta.name
    sites = [c for c in _numeric_columns(df) if c != time_column]
    if not sites:
        raise DataError(f"{file}: no numeric columns besides the time column, so no series.", file=file)
    Y = df[sites].astype(float)
    if time_column is None:
        return Y.reset_index(drop=True), sites
    times = _time_index(df, time_column, meta)
    order = np.argsort(np.asarray(times), kind="stable")
    sorted_times = times[order]
    same = np.flatnonzero(np.asarray(sorted_times[1:] == sorted_times[:-1]))
    if same.size:
        a, b = sorted((int(order[same[0]]), int(order[same[0] + 1])))
        raise DataError(
            f"{file}: column '{time_column}': time {_fmt_time(times[b])} appears twice, "
            f"{meta.where(a)} and {meta.where(b)}.",
            file=file, row=b + 1, column=time_column, line=int(meta.lines[b]),
        )
    Y = Y.iloc[order]
    Y.index = sorted_times
    return Y, sites


def load_timeseries(
    source,
    name: str | None = None,
    layout: str = "auto",
    time_column: str | None = None,
    site_column: str | None = None,
    value_column: str | None = None,
    *,
    sheet=None,
    min_rows: int = 3,
) -> TimeSeriesData:
    """A (T x sites) panel of time series from a wide or long table.

    Parameters
    ----------
    layout : "wide" (a time column and one numeric column per site), "long" (time, site and
        value columns; pivoted) or "auto": long when site/value columns are given, or when
        the table has 3 columns: time, one text column with at most half as many distinct
        values as rows (sites), one numeric column; else wide.
    time_column : default: a column named time/date/datetime/timestamp/... (any case), else the
        first text column that reads as dates. Without one, rows stay in file order.
    site_column, value_column : long layout only; default: the text and numeric column that
        are not the time column.
    min_rows : fewest time steps accepted.

    Rows are sorted by time; a repeated time stamp is rejected (wide) naming both rows, a
    repeated (time, site) pair likewise (long), and in the long layout every site must have
    a value at every time. Extra text columns in a wide table are ignored. Constant site
    series are rejected.
    """
    _check_layout(layout)
    df, meta = _load(source, name, sheet)
    return _panel(df, meta, layout, time_column, site_column, value_column, min_rows)


def timeseries_from_frame(
    df: pd.DataFrame,
    name: str = "the table",
    layout: str = "auto",
    time_column: str | None = None,
    site_column: str | None = None,
    value_column: str | None = None,
    *,
    min_rows: int = 3,
) -> TimeSeriesData:
    """:func:`load_timeseries` on a table already read by ``load_table`` (same checks and messages;
    rows are named as data rows of a CSV file with the header on line 1)."""
    df = df.reset_index(drop=True)
    meta = _Meta(str(name), "text", np.arange(2, len(df) + 2, dtype=np.int64))
    return _panel(df, meta, layout, time_column, site_column, value_column, min_rows)


def _check_layout(layout) -> None:
    if layout not in ("auto", "wide", "long"):
        raise ValueError(f"layout must be 'auto', 'wide' or 'long', not {layout!r}")


def _panel(df: pd.DataFrame, meta: _Meta, layout, time_column, site_column, value_column, min_rows) -> TimeSeriesData:
    """The (T x sites) panel of a typed table; ``meta`` names its rows in messages."""
    _check_layout(layout)
    file = meta.name
    _check_named_columns(df, file, time=time_column, site=site_column, value=value_column)
    if time_column is None:
        time_column = _guess_time_column(df)
    if layout == "auto":
        layout, site_column = _auto_layout(df, time_column, site_column, value_column)
    if layout == "long":
        site_column, value_column = _long_roles(df, file, time_column, site_column, value_column)
        Y, sites = _long_panel(df, meta, time_column, site_column, value_column)
    else:
        Y, sites = _wide_panel(df, meta, time_column)
    check_min_rows(len(Y), min_rows, file, "a time-series model")
    check_constant_columns(Y, file)
    return TimeSeriesData(Y=Y, sites=list(sites), file=file, time_column=time_column, layout=layout)
