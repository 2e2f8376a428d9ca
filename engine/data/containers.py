"""ZIP (XLSX) checks made from the archive's directory alone, before openpyxl reads a byte of XML.

An .xlsx workbook is a ZIP archive. Its central directory states, for every member, the name and the
compressed and unpacked sizes; these checks read only that directory (and the end record before it),
so a decompression bomb is refused in milliseconds, whatever it would unpack to. Python's ``zipfile``
stops a member at its stated size, so a directory that understates a size cannot make it unpack more.

Limits and why (measured for issue #20, openpyxl 3.1, Python 3.11, this 2-core machine):

``MAX_XLSX_MEMBERS`` = 1,000 members
    A workbook holds about 10 members plus 2-3 per sheet. ``zipfile`` builds one object per member
    before anything can be counted: 300,000 empty members (26 MB) took over 30 s to open, so the count
    is read from the end record first.
``MAX_XLSX_UNPACKED_MB`` = 400 MB in all, and for one worksheet
    A sheet at the cell limit (10 million cells, ``MAX_CELLS``) is about 300 MB of XML as Excel writes
    it (``<c r="AB123"><v>0.123456</v></c>``, ~30 bytes a cell); anything beyond cannot be a table we
    accept.
``MAX_XLSX_PART_MB`` = 64 MB for any other member (shared strings, styles, workbook, relations)
    openpyxl reads these whole into memory before the first row (a tree or a list of all strings);
    64 MB of shared strings is about 3 million distinct texts, far more than the id or label columns
    of a table at the cell limit.
``MAX_XLSX_RATIO`` = 100 (unpacked / compressed, for members over ``RATIO_GRACE_MB`` = 1 MB)
    Real sheets compress 5-13 times: an all-zero 300 x 1,000 sheet written by openpyxl 12.6, random
    floats 5.5, one-digit integers 9.9 (the cell references differ from cell to cell). Both bombs of the
    issue are over 250 (674 KB -> 172 MB; 1.3 MB -> 16 million cells); under the 400 MB cap they were
    parsed, 97 s and 1.1 GB for the first. 100 is also Apache POI's default bound. Small members (styles
    of a few KB) may compress further and are not checked.
"""
from __future__ import annotations

import io
import re
import struct
import zipfile

from .validate import DataError

__all__ = [
    "MAX_XLSX_MEMBERS",
    "MAX_XLSX_PART_MB",
    "MAX_XLSX_RATIO",
    "MAX_XLSX_UNPACKED_MB",
    "check_xlsx_container",
    "sheet_cells_over",
]

MAX_XLSX_MEMBERS = 1_000
MAX_XLSX_UNPACKED_MB = 400
MAX_XLSX_PART_MB = 64
MAX_XLSX_RATIO = 100
RATIO_GRACE_MB = 1

_MB = 1024 * 1024
_EOCD = b"PK\x05\x06"
_EOCD64_LOCATOR = b"PK\x06\x07"
_EOCD64 = b"PK\x06\x06"


def _not_a_workbook(name: str, why: str = "") -> DataError:
    return DataError(
        f"{name}: not a valid .xlsx workbook{why} (it may be damaged, password-protected, or an old "
        ".xls/CSV file renamed to .xlsx). Save it again as .xlsx or .csv.",
        file=name,
    )


def _stated_member_count(data: bytes) -> int | None:
    """Number of members the end-of-central-directory record states (ZIP64 aware); None if not found."""
    tail_start = max(0, len(data) - (65_535 + 22))
    at = data.rfind(_EOCD, tail_start)
    if at < 0 or at + 22 > len(data):
        return None
    (count,) = struct.unpack_from("<H", data, at + 10)
    if count != 0xFFFF:
        return count
    loc = at - 20
    if loc < 0 or data[loc:loc + 4] != _EOCD64_LOCATOR:
        return count
    (rec,) = struct.unpack_from("<Q", data, loc + 8)
    if rec + 56 > len(data) or data[rec:rec + 4] != _EOCD64:
        return count
    (count64,) = struct.unpack_from("<Q", data, rec + 32)
    return count64


def _is_sheet(member: str) -> bool:
    return member.startswith("xl/worksheets/") and member.endswith(".xml")


def _check_members(infos: list, name: str) -> None:
    total = 0
    for info in infos:
        size = info.file_size
        total += size
        limit = MAX_XLSX_UNPACKED_MB if _is_sheet(info.filename) else MAX_XLSX_PART_MB
        if size > limit * _MB:
            raise DataError(
                f"{name}: the member '{info.filename}' of the workbook unpacks to {size / _MB:,.0f} MB; "
                f"the limit is {limit} MB for {'a sheet' if limit == MAX_XLSX_UNPACKED_MB else 'that part'}. "
                "Save the data sheet alone as CSV.",
                file=name,
            )
        if size > RATIO_GRACE_MB * _MB and size > MAX_XLSX_RATIO * max(info.compress_size, 1):
            ratio = size / max(info.compress_size, 1)
            raise DataError(
                f"{name}: the member '{info.filename}' unpacks {ratio:,.0f} times its packed size "
                f"({info.compress_size / _MB:.2f} MB -> {size / _MB:,.0f} MB); real workbooks compress "
                f"at most about {MAX_XLSX_RATIO} times, so it is refused as a decompression bomb. "
                "Save the data sheet alone as CSV.",
                file=name,
            )
    if total > MAX_XLSX_UNPACKED_MB * _MB:
        raise DataError(
            f"{name}: the workbook unpacks to {total / _MB:,.0f} MB, more than the "
            f"{MAX_XLSX_UNPACKED_MB} MB allowed; save the data sheet alone as CSV.",
            file=name,
        )
    names = [i.filename for i in infos]
    if len(set(names)) != len(names):
        seen: set[str] = set()
        for dup in names:  # the first name met a second time (there is one: the set is smaller)
            if dup in seen:
                break
            seen.add(dup)
        raise _not_a_workbook(name, f": the member '{dup}' appears twice in the archive")
    if "[Content_Types].xml" not in names:
        raise _not_a_workbook(name, ": it is a ZIP archive without the part list [Content_Types].xml")


def check_xlsx_container(data: bytes, name: str) -> None:
    """Refuse an XLSX whose ZIP directory states too many members, too large or too compressible
    members, or no workbook part; reads the directory only (no member is unpacked)."""
    stated = _stated_member_count(data)
    if stated is not None and stated > MAX_XLSX_MEMBERS:
        raise DataError(
            f"{name}: the archive states {stated:,} members; a workbook has a few dozen and the limit is "
            f"{MAX_XLSX_MEMBERS:,}. Save the data sheet alone as .xlsx or CSV.",
            file=name,
        )
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            infos = zf.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, struct.error, EOFError):
        raise _not_a_workbook(name) from None
    if len(infos) > MAX_XLSX_MEMBERS:
        raise DataError(
            f"{name}: the archive has {len(infos):,} members; the limit is {MAX_XLSX_MEMBERS:,}.", file=name
        )
    _check_members(infos, name)


def sheet_cells_over(data: bytes, member: str, limit: int) -> int:
    """Cells (``<c>`` elements) in the sheet XML ``member``, counted on the unpacked bytes without parsing;
    stops as soon as the count passes ``limit`` (and returns it). About 100-150 MB of XML a second here
    (zlib ~0.44 s for 160 MB, the three counts the rest) against ~5 MB for openpyxl's row parse: 16 million
    random one-digit cells (19 MB file, compressed 12 times, so the ZIP checks pass it) took 84 s and 0.7 GB
    to reach the budget in the parse, 1 s and 19 MB here; a sheet of 1 million cells pays 0.26 s for the
    count (its parse: 6 s). Empty cells count too; a ``<c`` inside a text value may be counted (the count
    errs high, never low)."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf, zf.open(member) as f:
        first = f.read(1 << 20)
        found = re.search(rb"<([A-Za-z_][\w.-]*:)?sheetData\b", first)
        prefix = (found.group(1) or b"") if found else b""
        pats = [b"<" + prefix + b"c" + end for end in (b" ", b">", b"/")]
        n, tail, chunk = 0, b"", first
        while chunk:
            buf = tail + chunk
            n += sum(buf.count(p) - tail.count(p) for p in pats)
            if n > limit:
                return n
            tail = buf[-4:]
            chunk = f.read(4 << 20)
    return n
