r"""Reading a user's file into a grid of strings: CSV/TSV/XLSX bytes -> header, rows, line numbers.

The first stage of ``load_table`` (``engine.data.frames`` types the cells). Everything that can go
wrong with the bytes a person uploads (size, extension, binary content, encoding, ragged rows,
unclosed quotes, damaged or multi-sheet workbooks) raises :class:`DataError` naming the file and,
where it applies, the row and line.

Hand-written because no kept library reads a hostile upload safely *and* names the row: pandas'
``read_csv`` guesses silently and reports C-parser offsets. Security: no pickle; XLSX goes through
openpyxl (read-only, cached values, no macros) after the ZIP directory checks of
``engine.data.containers``; CSV bytes are decoded here and parsed by the ``csv`` module.

Limits and why (issue #20; the XLSX container limits are explained in ``engine.data.containers``).
Every one is checked before or while reading, never on the finished grid:

``MAX_UPLOAD_MB`` = 50
    Streamlit's upload limit (``.streamlit/config.toml``); bounds the bytes of every file.
``MAX_COLUMNS`` = 100,000
    A wide NIR spectrum has a few thousand channels. Checked on the header row (and, for XLSX, on
    every row as it is read).
``MAX_CELLS`` = 10,000,000 (80 MB as float64)
    XLSX: the ``<c>`` elements of the sheet XML are counted before openpyxl parses it
    (``containers.sheet_cells_over``), then the cells are counted row by row, blank ones included. Text:
    at the header row, lines below x header width when each line is one record (no quotes, no blank
    lines), else row by row while reading.
``MAX_ROWS`` = 1,000,000 data rows
    10^7 one-cell rows ("1\n" x 10^7, 20 MB) were read whole before: 24 s and 1.9 GB in
    ``load_table`` (about 2.4 us and 190 bytes per row, whatever the width). A century of hourly
    readings is 876,600 rows. A text file's lines are counted on the raw bytes (numpy, ~0.1 s for
    50 MB) before any parsing, so blank lines count too.
``MAX_LINE_MB`` = 4 MB per line
    100,000 columns of full-precision numbers (~24 characters each) are 2.4 MB. Without it, one 45 MB
    line was decoded and parsed (three times by the delimiter sniffer) before the ``csv`` module gave
    up on a field; line lengths are measured with the line count, before decoding.
Header checks (width, duplicate names) run on the header row, before the rest is read: a workbook
with a duplicated name was refused only after its full parse (98 s for 172 MB of sheet XML).
"""
from __future__ import annotations

import csv
import io
import os
import re
import warnings
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

import numpy as np
from openpyxl.reader.excel import ExcelReader
from openpyxl.worksheet._read_only import ReadOnlyWorksheet

from .containers import MAX_XLSX_UNPACKED_MB, check_xlsx_container, sheet_cells_over
from .validate import DataError, quote_list

__all__ = [
    "MAX_CELLS",
    "MAX_COLUMNS",
    "MAX_LINE_MB",
    "MAX_ROWS",
    "MAX_UPLOAD_MB",
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
#: Most data rows accepted in one table (text files: most lines, header included, is this + 1).
MAX_ROWS = 1_000_000
#: Longest line of a text file, in MB.
MAX_LINE_MB = 4
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


def _check_lines(data: bytes, name: str) -> None:
    """Refuse more than ``MAX_ROWS`` + 1 lines or a line over ``MAX_LINE_MB``, from the raw bytes
    (numpy, no decoding or parsing): line breaks are LF, or CR alone in old Mac files."""
    unit = 1
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):  # UTF-16 with BOM: look at 2-byte code units
        unit = 2
        arr = np.frombuffer(data, dtype="<u2" if data[:2] == b"\xff\xfe" else ">u2", count=len(data) // 2)
    else:
        arr = np.frombuffer(data, dtype=np.uint8)
    is_end = arr == 10
    n_breaks = int(np.count_nonzero(is_end))
    if n_breaks == 0:
        is_end = arr == 13
        n_breaks = int(np.count_nonzero(is_end))
    n_lines = n_breaks + (1 if arr.size and not is_end[-1] else 0)
    if n_lines > MAX_ROWS + 1:
        raise DataError(
            f"{name}: the file has {n_lines:,} lines; the limit is {MAX_ROWS + 1:,} lines (a header and "
            f"{MAX_ROWS:,} data rows). Keep only the rows you need, or split the file.",
            file=name,
        )
    ends = np.append(np.flatnonzero(is_end), arr.size)
    lengths = np.diff(ends, prepend=-1) - 1
    k = int(np.argmax(lengths))
    longest = int(lengths[k]) * unit
    if longest <= MAX_LINE_MB * _MB:
        return
    start, stop = int(ends[k] - lengths[k]), int(ends[k])
    counts = {d: data.count(d.encode(), start, stop) if unit == 1 else 0 for d in _DELIM_NAMES}
    delim = max(counts, key=counts.__getitem__)
    cols = ""
    if counts[delim]:
        cols = f" with about {counts[delim] + 1:,} columns if {_DELIM_NAMES[delim]}-separated"
    raise DataError(
        f"{name}: line {k + 1:,} is {longest / _MB:.1f} MB long{cols}; the limits are {MAX_LINE_MB} MB per "
        f"line and {MAX_COLUMNS:,} columns. Check that the file has line breaks, and keep only the columns "
        "you need.",
        file=name,
        line=k + 1,
    )


def _decode(data: bytes, name: str) -> str:
    """Text of a CSV/TSV file: UTF-8 (BOM removed), UTF-16 with BOM, else Windows-1252/Latin-1.
    Line count and line length are checked on the bytes first (``_check_lines``)."""
    _check_lines(data, name)
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


def _check_cells_ahead(text: str, line_num: int, width: int, name: str) -> None:
    """At the header row: refuse when the lines below it, one record each, exceed ``MAX_CELLS``.

    Only applied when that is exact, in files without quotes or blank lines; otherwise the budget is
    counted row by row. (A 51 MB CSV of 2,500 columns took 3.2 s and 0.9 GB to reach the budget.)"""
    breaks = "\n" if "\n" in text else "\r"
    below = text.count(breaks) + (0 if text.endswith(breaks) else 1) - line_num
    if below * width <= MAX_CELLS or '"' in text or any(b in text for b in ("\n\n", "\n\r\n", "\r\r")):
        return
    raise DataError(
        f"{name}: {below:,} lines below a header of {width:,} columns make {below * width:,} cells; the limit "
        f"is {MAX_CELLS:,} cells. Keep only the rows and columns you need, or split the file.",
        file=name,
    )


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
                _check_header(header, name)
                _check_cells_ahead(text, reader.line_num, header_len, name)
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


class _UnsizedSheet(ReadOnlyWorksheet):
    """openpyxl's read-only sheet, without the size lookup on opening: a sheet without a ``<dimension>``
    element was parsed whole to find one (for 1 million cells, 2.5 s more on top of the 5.8 s the rows
    take), and every sheet of the workbook was, chosen or not. The stated size is not used here."""

    def _get_size(self):
        return None


class _StreamingReader(ExcelReader):
    """``openpyxl.load_workbook(read_only=True)``, with :class:`_UnsizedSheet` for its worksheets (the
    loop of openpyxl 3.1's ``read_worksheets`` in read-only mode; chart sheets are read as there)."""

    def read_worksheets(self):
        for sheet, rel in self.parser.find_sheets():
            if rel.target not in self.valid_files:
                continue
            if "chartsheet" in rel.Type:
                self.read_chartsheet(sheet, rel)
                continue
            ws = _UnsizedSheet(self.wb, sheet.name, rel.target, self.shared_strings)
            ws.sheet_state = sheet.state
            self.wb._sheets.append(ws)


def _open_workbook(data: bytes, name: str):
    """The read-only openpyxl workbook (cached values, no macros), after the ZIP directory checks
    (``check_xlsx_container``)."""
    check_xlsx_container(data, name)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reader = _StreamingReader(io.BytesIO(data), read_only=True, keep_vba=False, data_only=True)
            reader.read()
            return reader.wb
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


def _check_header(header: list, name: str) -> None:
    """Width and distinct names of a header row, before any data row is read."""
    if len(header) > MAX_COLUMNS:
        raise DataError(
            f"{name}: the header has {len(header):,} columns; the limit is "
            f"{MAX_COLUMNS:,} columns. Keep only the columns you need.",
            file=name,
        )
    seen: dict = {}
    for j, h in enumerate(header):
        if h and h in seen:
            cols = [str(k + 1) for k, g in enumerate(header) if g == h]
            raise DataError(
                f"{name}: duplicate column names: '{h}' (columns {' and '.join(cols)}). "
                "Every column needs a distinct name.",
                file=name,
                column=h,
            )
        seen[h] = j


def _sheet_cells(ws, name: str) -> tuple[list | None, list, list, int]:
    """Header, rows of cell texts (trailing blanks dropped), their sheet rows, and the widest row.

    Streamed: openpyxl hands over one row at a time, the stated sheet size is ignored (with a stated
    A1:XFD1048576 openpyxl padded every row to 16,384 cells: 100,000 one-cell rows were 1.6 billion cells
    to convert), and the limits are checked on each row before its cells are converted."""
    ws.reset_dimensions()  # already unsized (_UnsizedSheet); also for a sheet opened elsewhere
    header = None
    rows: list = []
    lines: list = []
    width = 0
    seen_cells = 0
    for r, values in enumerate(ws.iter_rows(values_only=True), start=1):
        seen_cells += len(values)
        if seen_cells > MAX_CELLS:
            raise DataError(
                f"{name}: the sheet holds more than {MAX_CELLS:,} cells (at sheet row {r:,}, counting blank "
                "cells up to the last filled one of each row); the table is too large to analyse here.",
                file=name,
            )
        end = len(values)
        while end and (values[end - 1] is None or (isinstance(values[end - 1], str) and not values[end - 1].strip())):
            end -= 1
        if not end:
            continue
        if end > MAX_COLUMNS:
            raise DataError(
                f"{name}: sheet row {r:,} has {end:,} columns; the limit is {MAX_COLUMNS:,}.", file=name
            )
        cells = [_cell_text(v) for v in values[:end]]
        if header is None:
            header = [c.strip() for c in cells]
            _check_header(header, name)
            width = len(header)
            continue
        width = max(width, end)
        rows.append(cells)
        lines.append(r)
        if len(rows) > MAX_ROWS:
            raise DataError(
                f"{name}: more than {MAX_ROWS:,} data rows (at sheet row {r:,}); the limit is {MAX_ROWS:,}.",
                file=name,
            )
        if len(rows) * width > MAX_CELLS:
            raise DataError(
                f"{name}: more than {MAX_CELLS:,} cells ({len(rows):,}+ rows x {width:,} columns, at sheet row "
                f"{r:,}); the table is too large to analyse here.",
                file=name,
            )
    return header, rows, lines, width


def _xlsx_grid(data: bytes, name: str, sheet) -> tuple[list, list, list]:
    """Header, rows (lists of strings) and sheet row numbers of one worksheet."""
    wb = _open_workbook(data, name)
    try:
        ws = _pick_sheet(wb, name, sheet)
        if sheet_cells_over(data, ws._worksheet_path, MAX_CELLS) > MAX_CELLS:
            raise DataError(
                f"{name}: the sheet holds more than {MAX_CELLS:,} cells (counted in its XML before reading); the "
                "table is too large to analyse here.",
                file=name,
            )
        header, rows, lines, width = _sheet_cells(ws, name)
    except DataError:
        raise
    except Exception as err:  # damaged sheet XML, or a member that does not match its stated size or CRC
        raise DataError(f"{name}: the sheet cannot be read ({type(err).__name__}: {err}).", file=name) from None
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
