"""Reusable checks on loaded data; each raises :class:`DataError` with a message for a browser user.

Conventions used in every message of ``engine.data``:

* The message starts with the file name (``"corn.csv: ..."``).
* Columns are named by their header text, in single quotes (``column 'oil'``).
* Rows are **data rows, 1-based**: the first row below the header is data row 1. Where the
  file position is known the message adds it, e.g. ``data row 7 (line 8)`` for a CSV/TSV
  (line 8 of the file, the header being line 1: the row number a spreadsheet program shows
  for a plain file) or ``data row 7 (sheet row 8)`` for an XLSX sheet.
  ``DataError.row`` always holds the data row number (7 in these examples).

Nothing here imports streamlit; everything works on plain numpy / pandas objects.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

__all__ = [
    "DataError",
    "check_constant_columns",
    "check_duplicate_columns",
    "check_finite_array",
    "check_matching_rows",
    "check_min_rows",
    "require_numeric",
]

_LIST_MAX = 10  # names listed in one message before "and N more"


class DataError(ValueError):
    """Data that cannot be used, with a message meant for the person who supplied the file.

    Attributes
    ----------
    file : str | None
        File name as the user knows it (no directories).
    row : int | None
        1-based data row number (first row below the header = 1), None if not about one row.
    column : str | None
        Column name (header text), None if not about one column.
    line : int | None
        1-based line of the file (CSV/TSV, header = line 1) or sheet row (XLSX), when known.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        row: int | None = None,
        column: str | None = None,
        line: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.row = row
        self.column = column
        self.line = line

    def __str__(self) -> str:  # plain message, no repr quoting
        return self.message


def quote_list(names: Iterable, limit: int = _LIST_MAX) -> str:
    """``'a', 'b', 'c'`` with at most ``limit`` names, then ``and N more``."""
    names = [str(n) for n in names]
    shown = ", ".join(f"'{n}'" for n in names[:limit])
    if len(names) > limit:
        shown += f" and {len(names) - limit} more"
    return shown


def _as_list(columns) -> list:
    if columns is None:
        return []
    if isinstance(columns, str):
        return [columns]
    return list(columns)


def require_numeric(df: pd.DataFrame, columns: Sequence[str] | str, file: str) -> pd.DataFrame:
    """Check that ``columns`` exist in ``df`` and are numeric; return them as a float frame.

    Parameters
    ----------
    df : DataFrame (n x p), as returned by ``load_table``.
    columns : column names (a single name is accepted).
    file : file name for messages.

    Returns
    -------
    DataFrame (n x len(columns)), dtype float64, in the order given.
    """
    cols = _as_list(columns)
    if not cols:
        raise DataError(f"{file}: no columns were chosen.", file=file)
    present = [str(c) for c in df.columns]
    have = set(df.columns)
    missing = [c for c in cols if c not in have]
    if missing:
        c = missing[0]
        lower = {p.lower(): p for p in present}
        hint = ""
        if str(c).lower() in lower:
            hint = f" Did you mean '{lower[str(c).lower()]}'? (names are case-sensitive)"
        what = "column" if len(missing) == 1 else "columns"
        raise DataError(
            f"{file}: {what} {quote_list(missing)} not found.{hint} "
            f"Columns in the file: {quote_list(present)}.",
            file=file,
            column=str(c),
        )
    numeric = set(df.select_dtypes(include="number").columns)
    text = [c for c in cols if c not in numeric]
    if text:
        raise DataError(
            f"{file}: column {quote_list(text)} holds text, not numbers, so it cannot be used "
            "as a model variable.",
            file=file,
            column=str(text[0]),
        )
    return df[cols].astype(float)


def check_min_rows(n: int, minimum: int, file: str, what: str = "this analysis") -> None:
    """Reject fewer than ``minimum`` data rows; ``what`` names the use (e.g. "spectra for PLS")."""
    if n < minimum:
        raise DataError(
            f"{file}: {what} needs at least {minimum} data rows; the file has {n}.",
            file=file,
        )


def check_constant_columns(X_df: pd.DataFrame, file: str) -> None:
    """Reject numeric columns with the same value in every row (they cannot be scaled).

    X_df : DataFrame (n x p) of numeric columns.
    """
    if X_df.shape[0] == 0 or X_df.shape[1] == 0:
        return
    a = np.asarray(X_df, dtype=float)
    with np.errstate(invalid="ignore"):
        const = np.nanmax(a, axis=0) == np.nanmin(a, axis=0)
    if const.any():
        names = [str(c) for c, k in zip(X_df.columns, const, strict=True) if k]
        word = "column has" if len(names) == 1 else "columns have"
        raise DataError(
            f"{file}: {len(names)} {word} the same value in every row: {quote_list(names)}. "
            "A constant column carries no information and cannot be scaled; remove it.",
            file=file,
            column=names[0],
        )


def check_duplicate_columns(X_df: pd.DataFrame, file: str) -> None:
    """Reject columns whose contents are identical to an earlier column (pairs are named).

    X_df : DataFrame (n x p). Identical columns make covariance matrices singular (CCA).
    """
    seen: dict = {}
    pairs = []
    numeric = set(X_df.select_dtypes(include="number").columns)
    num_cols = [c for c in X_df.columns if c in numeric]
    keys = {}
    if num_cols:
        block = np.ascontiguousarray(X_df[num_cols].to_numpy(dtype=float).T)  # (p_num, n)
        keys = {c: ("num", row.tobytes()) for c, row in zip(num_cols, block, strict=False)}
    for c in X_df.columns:
        key = keys.get(c)
        if key is None:
            key = ("text", tuple(X_df[c].astype(str)))
        if key in seen:
            pairs.append((seen[key], c))
        else:
            seen[key] = c
    if pairs:
        shown = "; ".join(f"'{a}' and '{b}'" for a, b in pairs[:_LIST_MAX])
        if len(pairs) > _LIST_MAX:
            shown += f"; and {len(pairs) - _LIST_MAX} more pairs"
        raise DataError(
            f"{file}: columns with identical contents: {shown}. Keep only one of each pair.",
            file=file,
            column=str(pairs[0][1]),
        )


def check_matching_rows(n1: int, n2: int, file1: str, file2: str) -> None:
    """Reject two files whose data row counts differ (rows must pair up one to one)."""
    if n1 != n2:
        raise DataError(
            f"{file1} has {n1} data rows but {file2} has {n2}; the two files must have the same "
            "samples in the same order, one row each.",
            file=file2,
        )


def check_finite_array(
    a,
    file: str,
    what: str = "the data",
    columns: Sequence[str] | None = None,
) -> None:
    """Reject NaN or infinite entries in a 1-D (n,) or 2-D (n x p) array or frame.

    The first offending entry (row-major order) is named by data row (1-based) and column
    (by name when ``columns`` is given or ``a`` is a DataFrame, else by 1-based position).
    """
    if isinstance(a, pd.DataFrame):
        columns = [str(c) for c in a.columns] if columns is None else columns
    arr = np.asarray(a, dtype=float)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise DataError(f"{file}: {what} must be a table (2-D), got {arr.ndim} dimensions.", file=file)
    # a NaN or inf makes its column's sum one: the column sums first (0.4x the CPU of isfinite on every entry)
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(np.add.reduce(arr, axis=0)).all():
            return
    bad = ~np.isfinite(arr)
    if not bad.any():  # finite numbers whose sum overflowed
        return
    flat = int(np.argmax(bad.ravel()))
    i, j = divmod(flat, arr.shape[1])
    col = str(columns[j]) if columns is not None else None
    where = f"column '{col}'" if col is not None else f"column {j + 1}"
    kind = "NaN (missing)" if np.isnan(arr[i, j]) else "infinite"
    more = int(bad.sum()) - 1
    tail = f" ({more} more such {'value' if more == 1 else 'values'})" if more else ""
    raise DataError(
        f"{file}: {what} has a {kind} value at {where}, data row {i + 1}{tail}.",
        file=file,
        row=i + 1,
        column=col,
    )
