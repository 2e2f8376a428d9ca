"""Can a loaded table be used for a kind of analysis? One check per kind, messages for the user.

``load_table`` accepts any well-formed table. A page needs more: edPLS needs a response and
channels, DP-CCA two views of non-constant, non-identical columns, and so on. ``check_usable``
raises :class:`DataError` (naming the file and, where it applies, the column) when the table
cannot serve the kind at all, so a page can refuse an upload up front and keep the data it had,
instead of accepting it and failing later. Page-specific parsing (e.g. the time index of a
time-series page) is left to the page's own loader.
"""
from __future__ import annotations

import pandas as pd

from .validate import DataError, check_constant_columns, check_duplicate_columns

__all__ = ["KIND_NEEDS", "check_usable"]

#: kind -> (fewest data rows, fewest numeric columns, what the data are used for, why)
KIND_NEEDS = {
    None: (2, 1, "any analysis here", ""),
    "spectra": (5, 3, "PLS on spectra", " (a response and at least two channels; 5 rows allow a train/test split)"),
    "timeseries": (3, 1, "a time-series model",
                   " (a wide table has one numeric column per series, a long one a value column)"),
    "two_views": (3, 2, "a two-view analysis", " (at least one column per view)"),
    "pls_attack": (10, 3, "the PLS attack",
                   " (a response and at least two variables; two parties with 5 training rows each)"),
    "process": (5, 3, "a federated PLS", " (at least two variables and one response; 5 rows allow a train/test split)"),
}


def check_usable(df: pd.DataFrame, name: str, kind: str | None = None) -> None:
    """Raise DataError when ``df`` (n x p, from ``load_table``) cannot be used for ``kind``.

    kind None: any page (at least 2 rows and one numeric column: a single row has no variation).
    Other kinds: KIND_NEEDS's rows and numeric columns; no constant numeric column (it cannot
    be scaled); for "two_views" also no two identical numeric columns (singular covariance).
    """
    if kind not in KIND_NEEDS:
        raise ValueError(f"unknown kind {kind!r}; one of {sorted(k for k in KIND_NEEDS if k)} or None")
    min_rows, min_numeric, what, why = KIND_NEEDS[kind]
    n = len(df)
    if kind is None and n < min_rows:
        raise DataError(
            f"{name}: the file has {n} data row{'s' if n != 1 else ''}, so no column varies; every "
            "analysis here needs several rows (at least 3).",
            file=name,
        )
    if n < min_rows:
        raise DataError(f"{name}: {what} needs at least {min_rows} data rows{why}; the file has {n}.", file=name)
    numeric = [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])]
    if len(numeric) < min_numeric:
        text = [str(c) for c in df.columns if c not in numeric]
        shown = ", ".join(f"'{c}'" for c in text[:5]) + (" ..." if len(text) > 5 else "")
        raise DataError(
            f"{name}: {what} needs at least {min_numeric} numeric column{'s' if min_numeric > 1 else ''}{why}; "
            f"the table has {len(numeric)}" + (f" (text columns: {shown})." if text else "."),
            file=name,
        )
    if kind is None:
        return
    if kind != "timeseries":  # the time-series loader names constant series itself
        check_constant_columns(df[numeric], name)
    if kind == "two_views":
        check_duplicate_columns(df[numeric], name)
