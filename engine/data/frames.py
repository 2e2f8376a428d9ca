"""From a grid of strings to a checked DataFrame: ``load_table``, the one entry point for user files.

``engine.data.readers`` turns the bytes into a header and rows of strings; this module decides
which columns are numeric, converts them to float64 and names the first unusable cell (file,
column, data row and line). Row convention: see ``engine.data.validate`` (data row 1 = first row
below the header; the file line or sheet row is added in brackets).

Hand-written because pandas' own typing accepts a column of mixed numbers and text silently and
cannot name the offending cell; the messages are written for the person who made the file.
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd

from .readers import _check_extension, _decode, _Meta, _read_source, _text_grid, _xlsx_grid
from .validate import DataError

__all__ = ["load_table"]

# Tokens people write for "no value": treated as missing (never as text) when deciding
# whether a column is numeric.
_NA_TOKENS = frozenset({
    "nan", "na", "n/a", "#n/a", "null", "none", "-", "--", "?", "missing", "nil", ".", "#num!", "#value!", "#div/0!",
})
_DECIMAL_COMMA = r"[+-]?(?:\d+,\d*|,\d+)(?:[eE][+-]?\d+)?"

# Cell codes: what a cell that is not a plain number holds.
_NUMBER, _EMPTY, _NA, _TEXT, _COMMA_NUMBER = 0, 1, 2, 3, 4


# pandas < 3 parses numbers with its own fast routine, which is not correctly rounded: 374 of the
# 56,000 corn cells came out 1 ulp off (pandas 2.2.2). pandas 3's is exact (0 of 2,000,000 random
# repr and %.7g strings differ from float()). Below 3 the numeric text cells are parsed again with
# float(), about 0.4 s per million cells.
_PANDAS_PARSES_EXACTLY = int(pd.__version__.split(".")[0]) >= 3


def _reparse_exactly(flat: np.ndarray, vals: np.ndarray) -> None:
    """Replace ``vals`` at the finite text cells of ``flat`` by Python's correctly rounded parse."""
    for k in np.flatnonzero(np.isfinite(vals)):
        cell = flat[k]
        if isinstance(cell, str):
            try:
                vals[k] = float(cell)
            except ValueError:  # a form pandas reads and float() does not: keep pandas' value
                pass


def _cell_values(flat: np.ndarray, semicolon: bool) -> tuple[np.ndarray, np.ndarray]:
    """Float value (NaN when not a number) and code of each cell of ``flat`` (row-major).

    Codes: 0 number, 1 empty, 2 "no value" token, 3 other text, 4 decimal-comma number outside a
    semicolon file (counts as a number when typing columns, but is refused as a value).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        vals = np.array(pd.to_numeric(pd.Series(flat, dtype=object), errors="coerce"), dtype=float)
    if not _PANDAS_PARSES_EXACTLY:
        _reparse_exactly(flat, vals)
    nan_idx = np.flatnonzero(np.isnan(vals))
    if semicolon and nan_idx.size:
        sub = pd.Series(flat[nan_idx], dtype=object).astype(str).str.strip()
        is_dec = sub.str.fullmatch(_DECIMAL_COMMA).to_numpy(dtype=bool, na_value=False)
        if is_dec.any():
            fixed = sub[is_dec].str.replace(",", ".", regex=False)
            vals[nan_idx[is_dec]] = pd.to_numeric(fixed, errors="coerce").to_numpy(dtype=float)
            nan_idx = nan_idx[~is_dec]
    code = np.zeros(flat.size, dtype=np.int8)
    dec = re.compile(_DECIMAL_COMMA)
    for k in nan_idx:
        s = str(flat[k]).strip()
        if not s:
            code[k] = _EMPTY
        elif s.lower() in _NA_TOKENS:
            code[k] = _NA
        elif dec.fullmatch(s):
            code[k] = _COMMA_NUMBER
        else:
            code[k] = _TEXT
    return vals, code


def _type_columns(header: list, code: np.ndarray, meta: _Meta) -> tuple[list, np.ndarray]:
    """Columns kept (indices) and which are numeric: at least half of the filled cells are numbers."""
    n_num = ((code == _NUMBER) | (code == _COMMA_NUMBER)).sum(axis=0)
    n_text = (code == _TEXT).sum(axis=0)
    keep = []
    numeric = np.zeros(len(header), dtype=bool)
    for j, col in enumerate(header):
        informative = n_num[j] + n_text[j]
        if col == "":
            if informative == 0:
                continue  # trailing / spare empty column without a name: ignore it
            i = int(np.argmax(code[:, j] != _EMPTY))
            raise DataError(
                f"{meta.name}: column {j + 1} has no name in the header but holds values, e.g. at "
                f"{meta.where(i)}. Give it a name, or delete it if it is a row index.",
                file=meta.name,
                row=i + 1,
                line=int(meta.lines[i]),
            )
        if informative == 0:
            raise DataError(f"{meta.name}: column '{col}' has no values.", file=meta.name, column=col)
        keep.append(j)
        numeric[j] = n_num[j] >= 1 and n_num[j] >= 0.5 * informative
    return keep, numeric


def _duplicates(names: list) -> list:
    seen, dup = set(), []
    for c in names:
        if c in seen and c not in dup:
            dup.append(c)
        seen.add(c)
    return dup


def _check_distinct_names(header: list, keep: list, name: str) -> None:
    dup = _duplicates([header[j] for j in keep])
    if dup:
        parts = [f"'{c}' (columns {' and '.join(str(j + 1) for j, h in enumerate(header) if h == c)})" for c in dup]
        raise DataError(
            f"{name}: duplicate column names: {', '.join(parts[:10])}. Every column needs a distinct name.",
            file=name,
            column=dup[0],
        )


def _what_is_wrong(raw: str, c: int) -> str:
    """Why one cell of a numeric column is unusable, for the message."""
    if c == _EMPTY:
        return "the cell is empty; a numeric column needs a number in every row"
    if c == _NA or raw.lower() == "nan":
        return f"'{raw}' is not a number (it marks a missing value); a numeric column needs a number in every row"
    if c == _TEXT:
        return f"'{raw}' is not a number"
    if c == _COMMA_NUMBER:
        return (
            f"'{raw}' is not a number here: decimal commas are only read in "
            "semicolon-separated files; use decimal points or save the file with ';' "
            "between values"
        )
    return f"'{raw}' is infinite; a numeric column needs finite numbers"


def _check_numeric_cells(header, cells, vals, code, num_cols: list, meta: _Meta, keep_missing: bool = False) -> None:
    """Name the first cell of a numeric column that is not a finite number (and count the others).

    keep_missing: empty cells and "no value" tokens are accepted (they stay NaN); text, decimal commas
    outside a semicolon file and infinite values are still refused."""
    bad = ~np.isfinite(vals[:, num_cols])
    if keep_missing:
        sub = code[:, num_cols]
        bad &= ~((sub == _EMPTY) | (sub == _NA))
    if not bad.any():
        return
    k = int(np.argmax(bad.ravel()))
    i, jj = divmod(k, len(num_cols))
    j = num_cols[jj]
    col = header[j]
    what = _what_is_wrong(str(cells[i, j]).strip(), code[i, j])
    more = int(bad.sum()) - 1
    tail = ""
    if more:
        tail = f" ({more} more {'cell' if more == 1 else 'cells'} in numeric columns "
        tail += "has a problem too)" if more == 1 else "have problems too)"
    raise DataError(
        f"{meta.name}: column '{col}', {meta.where(i)}: {what}.{tail}",
        file=meta.name,
        row=i + 1,
        column=col,
        line=int(meta.lines[i]),
    )


def _grid_to_frame(header: list, rows: list, meta: _Meta, keep_missing: bool = False) -> pd.DataFrame:
    """Typed DataFrame (n x p) from string cells; raises DataError on any unusable cell (a missing one
    stays NaN with ``keep_missing``)."""
    p = len(header)
    n = len(rows)
    if n == 0:
        raise DataError(f"{meta.name}: the file has a header row but no data rows.", file=meta.name)
    cells = np.empty((n, p), dtype=object)
    cells[:] = rows
    vals, code = _cell_values(cells.ravel(), meta.delimiter == ";")
    code = code.reshape(n, p)
    vals = vals.reshape(n, p)
    keep, numeric = _type_columns(header, code, meta)
    _check_distinct_names(header, keep, meta.name)
    num_cols = [j for j in keep if numeric[j]]
    if num_cols:
        _check_numeric_cells(header, cells, vals, code, num_cols, meta, keep_missing)
    frames = []
    if num_cols:
        frames.append(pd.DataFrame(vals[:, num_cols], columns=[header[j] for j in num_cols]))
    text_cols = [j for j in keep if not numeric[j]]
    if text_cols:
        frames.append(pd.DataFrame({header[j]: [str(v).strip() for v in cells[:, j]] for j in text_cols}))
    df = frames[0] if len(frames) == 1 else pd.concat(frames, axis=1)
    order = [header[j] for j in keep]
    if list(df.columns) != order:
        df = df[order]
    return df


def _load(source, name=None, sheet=None, keep_missing: bool = False) -> tuple[pd.DataFrame, _Meta]:
    """The checked table and where its rows came from (for loaders that name rows in messages)."""
    data, name = _read_source(source, name)
    ext = _check_extension(name)
    if ext == ".xlsx":
        if not data.strip(b"\x00 \t\r\n"):
            raise DataError(f"{name}: the file is empty.", file=name)
        header, rows, lines = _xlsx_grid(data, name, sheet)
        meta = _Meta(name, "xlsx", np.asarray(lines, dtype=np.int64))
    else:
        if not data.strip():
            raise DataError(f"{name}: the file is empty.", file=name)
        text = _decode(data, name)
        header, rows, lines, delim = _text_grid(text, name, ext)
        meta = _Meta(name, "text", np.asarray(lines, dtype=np.int64), delim)
    return _grid_to_frame(header, rows, meta, keep_missing), meta


def load_table(source, name: str | None = None, *, sheet: str | int | None = None,
               missing: str = "refuse") -> pd.DataFrame:
    """Read a CSV, TSV or XLSX file into a checked DataFrame.

    Parameters
    ----------
    source : str | Path | bytes | file-like
        A path, raw bytes (then ``name`` is required), or an upload-like object with ``.name``
        and ``.getvalue()`` or ``.read()`` (Streamlit's ``UploadedFile``); ``.size`` is
        checked before reading when present.
    name : str, optional
        File name used in messages and for the format (by extension: .csv, .tsv, .txt, .xlsx).
    sheet : str | int, optional
        XLSX sheet name or 0-based index. Required when the workbook has several sheets.
    missing : "refuse" (default) or "keep"
        What an empty cell or a "no value" token (``NA``, ``n/a``, ``NaN``, ``-``, ...) in a numeric column
        does: "refuse" raises DataError naming the file, column and row; "keep" (an explicit choice, e.g.
        before dropping those rows with ``engine.data.columns.drop_missing_rows``) keeps it as NaN. Text,
        decimal commas outside a semicolon file and infinite values are refused either way.

    Returns
    -------
    DataFrame (n data rows x p columns), RangeIndex, columns named by the header text (str).
    A column is numeric when at least half of its filled cells are numbers; numeric columns
    are float64 and must hold a finite number in every row. Other columns are kept as text
    (stripped strings), e.g. sample ids, site names or time stamps. Columns without a name
    and without values (trailing delimiters) are dropped.

    Text files: UTF-8 (with or without BOM) or UTF-16 with BOM; otherwise Windows-1252 /
    Latin-1. Delimiter: comma, semicolon or tab, detected from the first lines. In
    semicolon-separated files, numbers written with a decimal comma (``1,23``) are read as
    decimals.

    Raises
    ------
    DataError
        Empty file, header without data rows, binary content, ragged rows, duplicate or
        missing column names, non-numeric / missing / infinite cells in a numeric column,
        file over ``MAX_UPLOAD_MB``, more than ``MAX_COLUMNS`` columns, ``MAX_CELLS`` cells or
        ``MAX_ROWS`` data rows, a text line over ``MAX_LINE_MB``, an XLSX archive over the limits of
        ``engine.data.containers`` (a decompression bomb), unsupported extension, several sheets
        without ``sheet``. Every limit is checked before or while reading, never on the finished grid.
    """
    if missing not in ("refuse", "keep"):
        raise ValueError(f"missing must be 'refuse' or 'keep', not {missing!r}")
    return _load(source, name, sheet, keep_missing=missing == "keep")[0]



def _columns_arg(cols) -> list:
    """Column names given as one name, a list or None, as a list of str."""
    if cols is None:
        return []
    if isinstance(cols, str):
        return [cols]
    return [str(c) for c in cols]


def _numeric_columns(df: pd.DataFrame) -> list:
    return list(df.select_dtypes(include="number").columns)
