"""Reading user files (CSV, TSV, XLSX) into checked tables, and the shape loaders on top.

``load_table`` turns a path or an upload into a DataFrame (n rows x p columns) whose numeric
columns are float64 with only finite values and whose other columns are text. Everything that
can go wrong with a file a person uploads raises :class:`DataError` with a message naming the
file and, where it applies, the column (by header text) and the row. Row convention: see
``engine.data.validate`` (data row 1 = first row below the header; the file line or sheet row
is added in brackets).

Shape loaders return small frozen dataclasses:

* ``load_spectra`` / ``load_spectra_pair`` -> :class:`SpectraData` (X: n x m channels, Y: n x k)
* ``load_timeseries`` -> :class:`TimeSeriesData` (Y: T x sites)
* ``load_two_views`` / ``load_two_view_files`` -> :class:`TwoViewData` (X: n x p, Y: n x q)

Security: no pickle anywhere; XLSX goes through openpyxl (read-only, cached values, no macros)
after a ZIP size check; CSV bytes are decoded by us and parsed by the ``csv`` module.
"""
from __future__ import annotations

import csv
import io
import os
import re
import warnings
import zipfile
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

import numpy as np
import pandas as pd

from .validate import (
    DataError,
    check_constant_columns,
    check_duplicate_columns,
    check_matching_rows,
    check_min_rows,
    quote_list,
    require_numeric,
)

__all__ = [
    "MAX_UPLOAD_MB",
    "MAX_COLUMNS",
    "MAX_CELLS",
    "SUPPORTED_EXTENSIONS",
    "load_table",
    "load_spectra",
    "load_spectra_pair",
    "load_timeseries",
    "load_two_views",
    "load_two_view_files",
    "xlsx_sheet_names",
    "SpectraData",
    "TimeSeriesData",
    "TwoViewData",
]

#: Largest accepted file, in MB (1 MB = 1024 * 1024 bytes). Equal to ``server.maxUploadSize``
#: in ``.streamlit/config.toml``.
MAX_UPLOAD_MB = 50
#: Most columns accepted in one table (a wide NIR spectrum has a few thousand).
MAX_COLUMNS = 100_000
#: Most cells (data rows x columns) accepted in one table (80 MB as float64).
MAX_CELLS = 10_000_000
#: Largest total unpacked size of an XLSX (a ZIP archive), in MB: guards against ZIP bombs.
MAX_XLSX_UNPACKED_MB = 400
SUPPORTED_EXTENSIONS = (".csv", ".tsv", ".txt", ".xlsx")

_MB = 1024 * 1024
_DELIM_NAMES = {",": "comma", ";": "semicolon", "\t": "tab"}
# Tokens people write for "no value": treated as missing (never as text) when deciding
# whether a column is numeric.
_NA_TOKENS = frozenset({"nan", "na", "n/a", "#n/a", "null", "none", "-", "--", "?", "missing", "nil", ".", "#num!", "#value!", "#div/0!"})
_DECIMAL_COMMA = r"[+-]?(?:\d+,\d*|,\d+)(?:[eE][+-]?\d+)?"
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")
_TIME_NAMES = ("time", "date", "datetime", "timestamp", "ds", "period", "t", "hour", "day", "week", "month", "year")


# --------------------------------------------------------------------------------------------
# Reading bytes


@dataclass(frozen=True)
class _Meta:
    """Where a loaded table came from: file name, kind ("text" or "xlsx"), line per data row."""

    name: str
    kind: str
    lines: np.ndarray  # (n,) int: file line (text) or sheet row (xlsx) of each data row
    delimiter: str | None = None

    def where(self, i: int) -> str:
        """Location of 0-based data row ``i`` for messages: 'data row 7 (line 8)'."""
        unit = "sheet row" if self.kind == "xlsx" else "line"
        return f"data row {i + 1} ({unit} {int(self.lines[i])})"


def _check_size(nbytes: int, name: str) -> None:
    if nbytes > MAX_UPLOAD_MB * _MB:
        raise DataError(
            f"{name}: the file is {nbytes / _MB:.1f} MB ({nbytes:,} bytes); the limit is "
            f"{MAX_UPLOAD_MB} MB ({MAX_UPLOAD_MB * _MB:,} bytes). "
            "Remove rows or columns you do not need, or split the file.",
            file=name,
        )


def _check_extension(name: str) -> str:
    ext = Path(name).suffix.lower()
    if ext in SUPPORTED_EXTENSIONS:
        return ext
    if ext in (".xls", ".xlsm", ".xlsb", ".ods"):
        hint = " Open it in your spreadsheet program and save it as .xlsx or .csv."
    elif ext == "":
        raise DataError(
            f"{name}: the file name has no extension, so its format is unknown; "
            "use a .csv, .tsv, .txt or .xlsx file.",
            file=name,
        )
    else:
        hint = ""
    raise DataError(
        f"{name}: '{ext}' files are not supported; use .csv, .tsv, .txt or .xlsx.{hint}",
        file=name,
    )


def _read_source(source, name: str | None) -> tuple[bytes, str]:
    """Bytes and display name of a path, bytes object or upload-like object (size-checked)."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        name = Path(name).name if name else path.name
        _check_extension(name)
        if not path.exists():
            raise DataError(f"{name}: file not found ({path}).", file=name)
        if not path.is_file():
            raise DataError(f"{name}: this is a folder, not a file.", file=name)
        _check_size(path.stat().st_size, name)
        data = path.read_bytes()
    else:
        if name is None:
            name = getattr(source, "name", None)
        if not name:
            raise DataError("The upload has no file name, so its format (CSV, TSV, XLSX) is unknown.")
        name = Path(str(name)).name
        _check_extension(name)
        if isinstance(source, (bytes, bytearray, memoryview)):
            data = bytes(source)
        else:
            size = getattr(source, "size", None)
            if isinstance(size, (int, np.integer)):
                _check_size(int(size), name)
            if hasattr(source, "getvalue"):
                data = source.getvalue()
            elif hasattr(source, "read"):
                data = source.read()
            else:
                raise TypeError(f"cannot read {type(source).__name__}: give a path, bytes or a file-like object")
            if isinstance(data, str):
                data = data.encode("utf-8")
            data = bytes(data)
    _check_size(len(data), name)
    return data, name


def _binary_error(name: str, data: bytes) -> DataError:
    hint = ""
    if data[:4] == b"PK\x03\x04":
        hint = " It starts like a ZIP archive (an .xlsx workbook is one): if it is a workbook, name it .xlsx."
    elif data[:4] == b"\xd0\xcf\x11\xe0":
        hint = " It starts like an old Excel .xls file: save it as .xlsx or .csv."
    return DataError(
        f"{name}: the file looks like a binary file, not a CSV/TSV text file.{hint}",
        file=name,
    )


def _decode(data: bytes, name: str) -> str:
    """Text of a CSV/TSV file: UTF-8 (BOM removed), UTF-16 with BOM, else Windows-1252/Latin-1."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError:
            raise _binary_error(name, data) from None
    else:
        if b"\x00" in data:
            raise _binary_error(name, data)
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            try:
                text = data.decode("cp1252")
            except UnicodeDecodeError:
                text = data.decode("latin-1")
    text = text.lstrip("\ufeff").rstrip("\x1a")  # stray BOM; DOS end-of-file marker
    sample = text[:1_000_000]
    if sample and len(_CONTROL.findall(sample)) > max(2, 0.01 * len(sample)):
        raise _binary_error(name, data)
    if not text.strip():
        raise DataError(f"{name}: the file is empty.", file=name)
    return text


def _is_blank(rec) -> bool:
    return all(not str(f).strip() for f in rec)


def _sniff_delimiter(text: str, ext: str) -> str:
    """Comma, semicolon or tab: the one giving the same field count (> 1) on the first lines."""
    sample = text[:262_144]
    if len(text) > len(sample):
        # make sure the sample has a few whole lines even when lines are very long
        end = len(sample)
        for _ in range(4):
            nxt = text.find("\n", end + 1)
            if nxt < 0:
                break
            end = nxt
        sample = text[: end + 1]
        cut = sample.rfind("\n")
        sample = sample[: cut + 1] if cut > 0 else sample
    order = ["\t", ",", ";"] if ext == ".tsv" else [",", ";", "\t"]
    best, best_key = order[0], None
    for rank, d in enumerate(order):
        try:
            reader = csv.reader(io.StringIO(sample, newline=""), delimiter=d)
            counts = [len(r) for r in islice((r for r in reader if not _is_blank(r)), 30)]
        except csv.Error:
            continue
        if not counts:
            continue
        header = counts[0]
        rows = counts[1:]
        consistency = (sum(c == header for c in rows) / len(rows)) if rows else 1.0
        key = (header > 1, consistency, -rank)
        if best_key is None or key > best_key:
            best, best_key = d, key
    return best


# --------------------------------------------------------------------------------------------
# Text and XLSX grids


def _text_grid(text: str, name: str, ext: str) -> tuple[list, list, list, str]:
    """Header (p names), rows (n lists of p strings), start line of each row, delimiter."""
    delim = _sniff_delimiter(text, ext)
    dname = _DELIM_NAMES[delim]
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delim)
    header = None
    header_len = 0
    rows: list = []
    lines: list = []
    prev_end = 0
    try:
        for rec in reader:
            start, prev_end = prev_end + 1, reader.line_num
            if not rec or _is_blank(rec):
                continue
            if header is None:
                header = [f.strip().lstrip("\ufeff") for f in rec]
                while header and header[-1] == "":
                    header.pop()
                header_len = len(header)
                if header_len > MAX_COLUMNS:
                    raise DataError(
                        f"{name}: the header has {header_len:,} columns; the limit is "
                        f"{MAX_COLUMNS:,} columns. Keep only the columns you need.",
                        file=name,
                    )
                continue
            n = len(rec)
            if n != header_len:
                real = n
                while real > header_len and not rec[real - 1].strip():
                    real -= 1
                if real != header_len:
                    i = len(rows)
                    if any("\n" in f or "\r" in f for f in rec):
                        hint = "a quote (\") opened in that row is never closed, so later lines were read into it"
                    else:
                        hint = "check that row for a missing or extra value or delimiter"
                    fields = "field" if real == 1 else "fields"
                    raise DataError(
                        f"{name}: data row {i + 1} (line {start}) has {real} {fields} but the header "
                        f"has {header_len} columns (read as {dname}-separated); {hint}.",
                        file=name,
                        row=i + 1,
                        line=start,
                    )
                rec = rec[:header_len]
            rows.append(rec)
            lines.append(start)
            if len(rows) * header_len > MAX_CELLS:
                raise DataError(
                    f"{name}: more than {MAX_CELLS:,} cells ({len(rows):,}+ rows x {header_len:,} "
                    "columns); the table is too large to analyse here.",
                    file=name,
                )
    except csv.Error as err:
        raise DataError(
            f"{name}: cannot be read as a {dname}-separated file near line {reader.line_num}: {err}.",
            file=name,
            line=reader.line_num,
        ) from None
    if header is None:
        raise DataError(f"{name}: the file is empty.", file=name)
    return header, rows, lines, delim


def _cell_text(v) -> str:
    """Text form of an openpyxl cell value (numbers round-trip exactly)."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v.is_integer() and abs(v) < 1e15:
            return str(int(v))
        return repr(v)
    if hasattr(v, "isoformat"):
        try:
            return v.isoformat(sep=" ")
        except TypeError:
            return v.isoformat()
    return str(v)


def _xlsx_grid(data: bytes, name: str, sheet) -> tuple[list, list, list]:
    """Header, rows (lists of strings) and sheet row numbers of one worksheet."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            unpacked = sum(i.file_size for i in zf.infolist())
    except zipfile.BadZipFile:
        raise DataError(
            f"{name}: not a valid .xlsx workbook (it may be damaged, password-protected, or an old "
            ".xls/CSV file renamed to .xlsx). Save it again as .xlsx or .csv.",
            file=name,
        ) from None
    if unpacked > MAX_XLSX_UNPACKED_MB * _MB:
        raise DataError(
            f"{name}: the workbook unpacks to {unpacked / _MB:.0f} MB, more than the "
            f"{MAX_XLSX_UNPACKED_MB} MB allowed; save the data sheet alone as CSV.",
            file=name,
        )
    import openpyxl  # only needed for XLSX

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            wb = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as err:  # openpyxl raises many types for damaged files
        raise DataError(f"{name}: the workbook cannot be opened ({type(err).__name__}: {err}).", file=name) from None
    try:
        names = list(wb.sheetnames)
        if sheet is None:
            if len(names) > 1:
                raise DataError(
                    f"{name}: the workbook has {len(names)} sheets ({quote_list(names)}); "
                    "choose one sheet, or save the workbook with only the data sheet.",
                    file=name,
                )
            ws = wb[names[0]]
        elif isinstance(sheet, int) and not isinstance(sheet, bool):
            if not 0 <= sheet < len(names):
                raise DataError(
                    f"{name}: there is no sheet number {sheet} (counting from 0); the sheets are "
                    f"{quote_list(names)}.",
                    file=name,
                )
            ws = wb[names[sheet]]
        else:
            if sheet not in names:
                raise DataError(f"{name}: no sheet '{sheet}'; the sheets are {quote_list(names)}.", file=name)
            ws = wb[sheet]
        header = None
        rows: list = []
        lines: list = []
        width = 0
        for r, values in enumerate(ws.iter_rows(values_only=True), start=1):
            cells = [_cell_text(v) for v in values]
            while cells and not cells[-1].strip():
                cells.pop()
            if not cells:
                continue
            if header is None:
                header = [c.strip() for c in cells]
                width = len(header)
                if width > MAX_COLUMNS:
                    raise DataError(
                        f"{name}: the header has {width:,} columns; the limit is {MAX_COLUMNS:,}.", file=name
                    )
                continue
            width = max(width, len(cells))
            if width > MAX_COLUMNS:
                raise DataError(f"{name}: more than {MAX_COLUMNS:,} columns; the limit is {MAX_COLUMNS:,}.", file=name)
            rows.append(cells)
            lines.append(r)
            if len(rows) * width > MAX_CELLS:
                raise DataError(
                    f"{name}: more than {MAX_CELLS:,} cells; the table is too large to analyse here.", file=name
                )
    finally:
        wb.close()
    if header is None:
        raise DataError(f"{name}: the sheet is empty.", file=name)
    header = header + [""] * (width - len(header))
    rows = [row + [""] * (width - len(row)) for row in rows]
    return header, rows, lines


# --------------------------------------------------------------------------------------------
# Grid -> typed DataFrame


def _grid_to_frame(header: list, rows: list, meta: _Meta) -> pd.DataFrame:
    """Typed DataFrame (n x p) from string cells; raises DataError on any unusable cell."""
    name = meta.name
    p = len(header)
    n = len(rows)
    if n == 0:
        raise DataError(f"{name}: the file has a header row but no data rows.", file=name)
    cells = np.empty((n, p), dtype=object)
    cells[:] = rows
    flat = cells.ravel()  # row-major
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        vals = np.array(pd.to_numeric(pd.Series(flat, dtype=object), errors="coerce"), dtype=float)
    nan_idx = np.flatnonzero(np.isnan(vals))
    if meta.delimiter == ";" and nan_idx.size:
        sub = pd.Series(flat[nan_idx], dtype=object).astype(str).str.strip()
        is_dec = sub.str.fullmatch(_DECIMAL_COMMA).to_numpy(dtype=bool, na_value=False)
        if is_dec.any():
            fixed = sub[is_dec].str.replace(",", ".", regex=False)
            vals[nan_idx[is_dec]] = pd.to_numeric(fixed, errors="coerce").to_numpy(dtype=float)
            nan_idx = nan_idx[~is_dec]
    # cell codes: 0 number, 1 empty, 2 "no value" token, 3 other text,
    # 4 decimal-comma number outside a semicolon file (counts as a number when typing columns)
    code = np.zeros(n * p, dtype=np.int8)
    dec = re.compile(_DECIMAL_COMMA)
    for k in nan_idx:
        s = str(flat[k]).strip()
        if not s:
            code[k] = 1
        elif s.lower() in _NA_TOKENS:
            code[k] = 2
        elif dec.fullmatch(s):
            code[k] = 4
        else:
            code[k] = 3
    code = code.reshape(n, p)
    vals = vals.reshape(n, p)
    n_num = ((code == 0) | (code == 4)).sum(axis=0)
    n_text = (code == 3).sum(axis=0)

    keep = []
    numeric = np.zeros(p, dtype=bool)
    for j, col in enumerate(header):
        informative = n_num[j] + n_text[j]
        if col == "":
            if informative == 0:
                continue  # trailing / spare empty column without a name: ignore it
            i = int(np.argmax(code[:, j] != 1))
            raise DataError(
                f"{name}: column {j + 1} has no name in the header but holds values, e.g. at "
                f"{meta.where(i)}. Give it a name, or delete it if it is a row index.",
                file=name,
                row=i + 1,
                line=int(meta.lines[i]),
            )
        if informative == 0:
            raise DataError(f"{name}: column '{col}' has no values.", file=name, column=col)
        keep.append(j)
        numeric[j] = n_num[j] >= 1 and n_num[j] >= 0.5 * informative

    dup = _duplicates([header[j] for j in keep])
    if dup:
        parts = [f"'{c}' (columns {' and '.join(str(j + 1) for j, h in enumerate(header) if h == c)})" for c in dup]
        raise DataError(
            f"{name}: duplicate column names: {', '.join(parts[:10])}. Every column needs a distinct name.",
            file=name,
            column=dup[0],
        )

    num_cols = [j for j in keep if numeric[j]]
    if num_cols:
        block = vals[:, num_cols]
        bad = ~np.isfinite(block)
        if bad.any():
            k = int(np.argmax(bad.ravel()))
            i, jj = divmod(k, len(num_cols))
            j = num_cols[jj]
            col = header[j]
            raw = str(cells[i, j]).strip()
            c = code[i, j]
            if c == 1:
                what = "the cell is empty; a numeric column needs a number in every row"
            elif c == 2 or raw.lower() == "nan":
                what = (
                    f"'{raw}' is not a number (it marks a missing value); a numeric column needs "
                    "a number in every row"
                )
            elif c == 3:
                what = f"'{raw}' is not a number"
            elif c == 4:
                what = (
                    f"'{raw}' is not a number here: decimal commas are only read in "
                    "semicolon-separated files; use decimal points or save the file with ';' "
                    "between values"
                )
            else:
                what = f"'{raw}' is infinite; a numeric column needs finite numbers"
            more = int(bad.sum()) - 1
            tail = ""
            if more:
                tail = f" ({more} more {'cell' if more == 1 else 'cells'} in numeric columns "
                tail += "has a problem too)" if more == 1 else "have problems too)"
            raise DataError(
                f"{name}: column '{col}', {meta.where(i)}: {what}.{tail}",
                file=name,
                row=i + 1,
                column=col,
                line=int(meta.lines[i]),
            )
    frames = []
    if num_cols:
        frames.append(pd.DataFrame(vals[:, num_cols], columns=[header[j] for j in num_cols]))
    text_cols = [j for j in keep if not numeric[j]]
    if text_cols:
        frames.append(
            pd.DataFrame({header[j]: [str(v).strip() for v in cells[:, j]] for j in text_cols})
        )
    df = frames[0] if len(frames) == 1 else pd.concat(frames, axis=1)
    order = [header[j] for j in keep]
    if list(df.columns) != order:
        df = df[order]
    return df


def _duplicates(names: list) -> list:
    seen, dup = set(), []
    for c in names:
        if c in seen and c not in dup:
            dup.append(c)
        seen.add(c)
    return dup


def _load(source, name=None, sheet=None) -> tuple[pd.DataFrame, _Meta]:
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
    return _grid_to_frame(header, rows, meta), meta


def xlsx_sheet_names(data: bytes) -> list:
    """Sheet names of an XLSX workbook given as bytes, in workbook order; [] when the bytes are
    not a readable workbook (``load_table`` then says why). Lets a UI offer a sheet choice."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            if sum(i.file_size for i in zf.infolist()) > MAX_XLSX_UNPACKED_MB * _MB:
                return []
        import openpyxl

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            wb = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
        try:
            return [str(n) for n in wb.sheetnames]
        finally:
            wb.close()
    except Exception:  # damaged or not a workbook: load_table gives the message
        return []


def load_table(source, name: str | None = None, *, sheet: str | int | None = None) -> pd.DataFrame:
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
        file over ``MAX_UPLOAD_MB``, more than ``MAX_COLUMNS`` columns or ``MAX_CELLS``
        cells, unsupported extension, several sheets without ``sheet``.
    """
    return _load(source, name, sheet)[0]


# --------------------------------------------------------------------------------------------
# Shape loaders


@dataclass(frozen=True, eq=False)
class SpectraData:
    """Spectra and reference values for PLS.

    X : DataFrame (n x m), one column per channel, float64.
    Y : DataFrame (n x k), response columns, float64.
    x_axis : ndarray (m,), channel positions (e.g. wavelengths) parsed from the channel
        names when all are numbers, else 0..m-1.
    file : name of the file holding X.
    ids : DataFrame (n x r) of text columns (sample ids), or None.
    y_file : name of the file holding Y (equal to ``file`` for a single file).
    """

    X: pd.DataFrame
    Y: pd.DataFrame
    x_axis: np.ndarray
    file: str
    ids: pd.DataFrame | None = None
    y_file: str | None = None

    @property
    def sources(self) -> tuple:
        return tuple(dict.fromkeys(f for f in (self.file, self.y_file) if f))

    @property
    def response_columns(self) -> list:
        return list(self.Y.columns)


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
        return (self.file,)


@dataclass(frozen=True, eq=False)
class TwoViewData:
    """Two blocks of variables on the same rows, for CCA.

    X : DataFrame (n x p), float64.   Y : DataFrame (n x q), float64.
    file : file holding X.   y_file : file holding Y (equal to ``file`` for one file).
    """

    X: pd.DataFrame
    Y: pd.DataFrame
    file: str
    y_file: str | None = None

    @property
    def sources(self) -> tuple:
        return tuple(dict.fromkeys(f for f in (self.file, self.y_file) if f))


def _columns_arg(cols) -> list:
    if cols is None:
        return []
    if isinstance(cols, str):
        return [cols]
    return [str(c) for c in cols]


def _numeric_columns(df: pd.DataFrame) -> list:
    return list(df.select_dtypes(include="number").columns)


def _text_frame(df: pd.DataFrame, exclude=()) -> pd.DataFrame | None:
    num = set(_numeric_columns(df))
    cols = [c for c in df.columns if c not in exclude and c not in num]
    return df[cols].reset_index(drop=True) if cols else None


def _x_axis(names: list) -> np.ndarray:
    try:
        axis = np.array([float(c.replace(",", ".") if isinstance(c, str) else c) for c in names], dtype=float)
    except (TypeError, ValueError):
        return np.arange(len(names), dtype=float)
    if not np.all(np.isfinite(axis)):
        return np.arange(len(names), dtype=float)
    return axis


def load_spectra(
    source,
    response_columns,
    name: str | None = None,
    min_rows: int = 3,
    *,
    id_columns=None,
    sheet=None,
) -> SpectraData:
    """Spectra and responses from one file: responses named, every other numeric column a channel.

    Parameters
    ----------
    source, name, sheet : as for :func:`load_table`.
    response_columns : column name(s) of the reference values (Y, k >= 1 columns).
    min_rows : fewest samples accepted.
    id_columns : numeric columns to treat as sample ids rather than channels (text columns
        are always ids).

    Returns
    -------
    SpectraData with X (n x m channels), Y (n x k), x_axis (m,), ids (n x r or None).

    Constant channels or responses are rejected (scaling would divide by zero).
    """
    df, meta = _load(source, name, sheet)
    file = meta.name
    resp = _columns_arg(response_columns)
    if not resp:
        raise DataError(f"{file}: choose at least one response column.", file=file)
    ids_num = _columns_arg(id_columns)
    Y = require_numeric(df, resp, file)
    for c in ids_num:
        if c not in df.columns:
            raise DataError(f"{file}: id column '{c}' not found.", file=file, column=c)
    skip = set(resp) | set(ids_num)
    channels = [c for c in _numeric_columns(df) if c not in skip]
    if not channels:
        raise DataError(
            f"{file}: no spectral channels: every numeric column is a response column.", file=file
        )
    X = df[channels].astype(float)
    check_min_rows(len(df), min_rows, file, "PLS on spectra")
    check_constant_columns(X, file)
    check_constant_columns(Y, file)
    ids = _text_frame(df, exclude=resp)
    if ids_num:
        extra = df[ids_num]
        ids = extra if ids is None else pd.concat([extra, ids], axis=1)
    return SpectraData(X=X, Y=Y, x_axis=_x_axis(channels), file=file, ids=ids, y_file=file)


def load_spectra_pair(
    x_source,
    y_source,
    x_name: str | None = None,
    y_name: str | None = None,
    response_columns=None,
    *,
    min_rows: int = 3,
) -> SpectraData:
    """Spectra (X file) and reference values (Y file) with rows in the same order.

    X file: every numeric column is a channel (n x m); its header gives the x axis.
    Y file: ``response_columns`` (default: every numeric column) (n x k).
    Text columns of either file are kept as ``ids``; a text column present in both files
    (e.g. 'sample') must match row by row.
    """
    xdf, xmeta = _load(x_source, x_name)
    ydf, ymeta = _load(y_source, y_name)
    xf, yf = xmeta.name, ymeta.name
    channels = _numeric_columns(xdf)
    if not channels:
        raise DataError(f"{xf}: no numeric columns, so no spectral channels.", file=xf)
    resp = _columns_arg(response_columns) or _numeric_columns(ydf)
    if not resp:
        raise DataError(f"{yf}: no numeric columns, so no response values.", file=yf)
    Y = require_numeric(ydf, resp, yf)
    check_matching_rows(len(xdf), len(ydf), xf, yf)
    check_min_rows(len(xdf), min_rows, xf, "PLS on spectra")
    X = xdf[channels].astype(float)
    check_constant_columns(X, xf)
    check_constant_columns(Y, yf)
    xid, yid = _text_frame(xdf), _text_frame(ydf)
    if xid is not None and yid is not None:
        for c in xid.columns:
            if c in yid.columns:
                diff = np.flatnonzero(xid[c].to_numpy() != yid[c].to_numpy())
                if diff.size:
                    i = int(diff[0])
                    raise DataError(
                        f"{xf} and {yf} do not list the same samples: column '{c}' differs at "
                        f"data row {i + 1} ('{xid[c].iloc[i]}' vs '{yid[c].iloc[i]}'). "
                        "Put both files in the same sample order.",
                        file=yf,
                        row=i + 1,
                        column=c,
                    )
        ids = pd.concat([xid, yid[[c for c in yid.columns if c not in xid.columns]]], axis=1)
    else:
        ids = xid if xid is not None else yid
    return SpectraData(X=X, Y=Y, x_axis=_x_axis(channels), file=xf, ids=ids, y_file=yf)


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
    if layout not in ("auto", "wide", "long"):
        raise ValueError(f"layout must be 'auto', 'wide' or 'long', not {layout!r}")
    df, meta = _load(source, name, sheet)
    file = meta.name
    for role, c in (("time", time_column), ("site", site_column), ("value", value_column)):
        if c is not None and c not in df.columns:
            raise DataError(
                f"{file}: {role} column '{c}' not found. Columns in the file: {quote_list(df.columns)}.",
                file=file, column=c,
            )
    if time_column is None:
        time_column = _guess_time_column(df)
    rest = [c for c in df.columns if c != time_column]
    if layout == "auto":
        layout = "wide"
        if site_column is not None or value_column is not None:
            layout = "long"
        elif time_column is not None and len(rest) == 2:
            text = [c for c in rest if not pd.api.types.is_numeric_dtype(df[c])]
            if len(text) == 1 and df[text[0]].nunique() <= len(df) / 2:
                layout = "long"
            elif not text and df[time_column].duplicated().any():
                # numeric site codes: the times repeat once per site
                a, b = rest
                site_column = a if df[a].nunique() <= df[b].nunique() else b
                if df[site_column].nunique() <= len(df) / 2:
                    layout = "long"
                else:
                    site_column = None

    if layout == "long":
        if time_column is None:
            raise DataError(
                f"{file}: no time column found; name it 'time' (or choose it) for a long table.", file=file
            )
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
        require_numeric(df, [value_column], file)
        times = _time_index(df, time_column, meta)
        if site_column == value_column:
            raise DataError(f"{file}: the site and value columns must differ ('{site_column}').", file=file)
        sites_col = _labels(df[site_column])
        empty = np.flatnonzero(sites_col == "")
        if empty.size:
            i = int(empty[0])
            raise DataError(
                f"{file}: column '{site_column}', {meta.where(i)}: the site name is empty.",
                file=file, row=i + 1, column=site_column, line=int(meta.lines[i]),
            )
        key = pd.DataFrame({"t": np.asarray(times), "s": sites_col})
        dup = key.duplicated(keep=False).to_numpy()
        if dup.any():
            second = int(np.flatnonzero(key.duplicated(keep="first").to_numpy())[0])
            same = (key["t"] == key["t"].iloc[second]) & (key["s"] == key["s"].iloc[second])
            first = int(np.flatnonzero(same.to_numpy())[0])
            raise DataError(
                f"{file}: site '{sites_col[second]}' has two values for time "
                f"{_fmt_time(times[second])}: {meta.where(first)} and {meta.where(second)}.",
                file=file, row=second + 1, column=site_column, line=int(meta.lines[second]),
            )
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
    else:
        sites = [c for c in _numeric_columns(df) if c != time_column]
        if not sites:
            raise DataError(f"{file}: no numeric columns besides the time column, so no series.", file=file)
        Y = df[sites].astype(float)
        if time_column is not None:
            times = _time_index(df, time_column, meta)
            order = np.argsort(np.asarray(times), kind="stable")
            st = times[order]
            same = np.flatnonzero(np.asarray(st[1:] == st[:-1]))
            if same.size:
                a, b = sorted((int(order[same[0]]), int(order[same[0] + 1])))
                raise DataError(
                    f"{file}: column '{time_column}': time {_fmt_time(times[b])} appears twice, "
                    f"{meta.where(a)} and {meta.where(b)}.",
                    file=file, row=b + 1, column=time_column, line=int(meta.lines[b]),
                )
            Y = Y.iloc[order]
            Y.index = st
        else:
            Y = Y.reset_index(drop=True)
    check_min_rows(len(Y), min_rows, file, "a time-series model")
    check_constant_columns(Y, file)
    return TimeSeriesData(Y=Y, sites=list(sites), file=file, time_column=time_column, layout=layout)


def _view_checks(X: pd.DataFrame, Y: pd.DataFrame, xf: str, yf: str, min_rows: int) -> None:
    check_min_rows(len(X), min_rows, xf, "a two-view analysis")
    check_constant_columns(X, xf)
    check_constant_columns(Y, yf)
    check_duplicate_columns(X, xf)
    check_duplicate_columns(Y, yf)


def load_two_views(
    source,
    x_columns,
    y_columns,
    name: str | None = None,
    *,
    sheet=None,
    min_rows: int = 3,
) -> TwoViewData:
    """Two blocks of numeric columns from one file: X (n x p) and Y (n x q), for CCA.

    A column may not be in both lists; constant columns and identical columns within a
    view are rejected (they make the covariance matrix singular).
    """
    df, meta = _load(source, name, sheet)
    file = meta.name
    xc, yc = _columns_arg(x_columns), _columns_arg(y_columns)
    if not xc or not yc:
        raise DataError(f"{file}: choose at least one column for each view (X and Y).", file=file)
    both = [c for c in xc if c in yc]
    if both:
        raise DataError(
            f"{file}: column {quote_list(both)} is chosen for both X and Y; each column can be in one view only.",
            file=file, column=both[0],
        )
    X = require_numeric(df, xc, file)
    Y = require_numeric(df, yc, file)
    _view_checks(X, Y, file, file, min_rows)
    return TwoViewData(X=X, Y=Y, file=file, y_file=file)


def load_two_view_files(
    x_source,
    y_source,
    x_name: str | None = None,
    y_name: str | None = None,
    x_columns=None,
    y_columns=None,
    *,
    min_rows: int = 3,
) -> TwoViewData:
    """Two views from two files with rows in the same order: X (n x p), Y (n x q).

    ``x_columns`` / ``y_columns`` default to every numeric column of the file.
    """
    xdf, xmeta = _load(x_source, x_name)
    ydf, ymeta = _load(y_source, y_name)
    xf, yf = xmeta.name, ymeta.name
    xc = _columns_arg(x_columns) or _numeric_columns(xdf)
    yc = _columns_arg(y_columns) or _numeric_columns(ydf)
    if not xc:
        raise DataError(f"{xf}: no numeric columns.", file=xf)
    if not yc:
        raise DataError(f"{yf}: no numeric columns.", file=yf)
    X = require_numeric(xdf, xc, xf)
    Y = require_numeric(ydf, yc, yf)
    check_matching_rows(len(X), len(Y), xf, yf)
    _view_checks(X, Y, xf, yf, min_rows)
    return TwoViewData(X=X, Y=Y, file=xf, y_file=yf)
