"""Reading a user's file into a grid of strings: CSV/TSV/XLSX bytes -> header, rows, line numbers.

The first stage of ``load_table`` (``engine.data.frames`` types the cells). Everything that can go
wrong with the bytes a person uploads (size, extension, binary content, encoding, ragged rows,
unclosed quotes, damaged or multi-sheet workbooks) raises :class:`DataError` naming the file and,
where it applies, the row and line.

Hand-written because no kept library reads a hostile upload safely *and* names the row: pandas'
``read_csv`` guesses silently and reports C-parser offsets. Security: no pickle; XLSX goes through
openpyxl (read-only, cached values, no macros) after a ZIP size check; CSV bytes are decoded here
and parsed by the ``csv`` module.
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
import openpyxl

from .validate import DataError, quote_list

__all__ = [
    "MAX_UPLOAD_MB",
    "MAX_COLUMNS",
    "MAX_CELLS",
    "MAX_XLSX_UNPACKED_MB",
    "SUPPORTED_EXTENSIONS",
    "xlsx_sheet_names",
]

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
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")


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


def _unpacked_size(data: bytes, name: str) -> int:
    """Total unpacked size of an XLSX (a ZIP archive), in bytes, read from the ZIP directory only."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            return sum(i.file_size for i in zf.infolist())
    except zipfile.BadZipFile:
        raise DataError(
            f"{name}: not a valid .xlsx workbook (it may be damaged, password-protected, or an old "
            ".xls/CSV file renamed to .xlsx). Save it again as .xlsx or .csv.",
            file=name,
        ) from None


def _open_workbook(data: bytes, name: str):
    """The read-only openpyxl workbook, after the ZIP-bomb check."""
    unpacked = _unpacked_size(data, name)
    if unpacked > MAX_XLSX_UNPACKED_MB * _MB:
        raise DataError(
            f"{name}: the workbook unpacks to {unpacked / _MB:.0f} MB, more than the "
            f"{MAX_XLSX_UNPACKED_MB} MB allowed; save the data sheet alone as CSV.",
            file=name,
        )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as err:  # openpyxl raises many types for damaged files
        raise DataError(f"{name}: the workbook cannot be opened ({type(err).__name__}: {err}).", file=name) from None


def _pick_sheet(wb, name: str, sheet):
    """The worksheet chosen by name or 0-based index; the only one when ``sheet`` is None."""
    names = list(wb.sheetnames)
    if sheet is None:
        if len(names) > 1:
            raise DataError(
                f"{name}: the workbook has {len(names)} sheets ({quote_list(names)}); "
                "choose one sheet, or save the workbook with only the data sheet.",
                file=name,
            )
        return wb[names[0]]
    if isinstance(sheet, int) and not isinstance(sheet, bool):
        if not 0 <= sheet < len(names):
            raise DataError(
                f"{name}: there is no sheet number {sheet} (counting from 0); the sheets are "
                f"{quote_list(names)}.",
                file=name,
            )
        return wb[names[sheet]]
    if sheet not in names:
        raise DataError(f"{name}: no sheet '{sheet}'; the sheets are {quote_list(names)}.", file=name)
    return wb[sheet]


def _sheet_cells(ws, name: str) -> tuple[list | None, list, list, int]:
    """Header, rows of cell texts (trailing blanks dropped), their sheet rows, and the widest row."""
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
    return header, rows, lines, width


def _xlsx_grid(data: bytes, name: str, sheet) -> tuple[list, list, list]:
    """Header, rows (lists of strings) and sheet row numbers of one worksheet."""
    wb = _open_workbook(data, name)
    try:
        header, rows, lines, width = _sheet_cells(_pick_sheet(wb, name, sheet), name)
    finally:
        wb.close()
    if header is None:
        raise DataError(f"{name}: the sheet is empty.", file=name)
    header = header + [""] * (width - len(header))
    rows = [row + [""] * (width - len(row)) for row in rows]
    return header, rows, lines


def xlsx_sheet_names(data: bytes) -> list:
    """Sheet names of an XLSX workbook given as bytes, in workbook order; [] when the bytes are
    not a readable workbook (``load_table`` then says why). Lets a UI offer a sheet choice."""
    try:
        wb = _open_workbook(data, "workbook")
    except DataError:  # damaged, too large or not a workbook: load_table gives the message
        return []
    try:
        return [str(n) for n in wb.sheetnames]
    finally:
        wb.close()
