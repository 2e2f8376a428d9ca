"""Decompression and size bombs made at test time (never committed): the generated part of the hostile corpus.

Each maker returns the file's bytes, small on disk (a few MB at most) but costly to read naively. ``BOMBS``
maps the file name used in tests to (maker, words the refusal must contain). Used by tests/test_bombs.py
and tests/test_hostile_pages.py (issue #20).
"""
from __future__ import annotations

import io
import zipfile

_CT = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
    '<Override PartName="/xl/worksheets/sheet1.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
    "</Types>"
)
_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
    'officeDocument" Target="xl/workbook.xml"/></Relationships>'
)
_WB = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
    '<sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>'
)
_WB_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
    'worksheet" Target="worksheets/sheet1.xml"/></Relationships>'
)
_SHEET_HEAD = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
)
_SHEET_TAIL = "</sheetData></worksheet>"


def _text_cell(s: str) -> str:
    return f'<c t="inlineStr"><is><t>{s}</t></is></c>'


def xlsx_from_rows(header: list, row_xml: str, n_rows: int, level: int = 9) -> bytes:
    """A minimal valid .xlsx: one sheet, ``header`` (text cells) then ``n_rows`` copies of ``row_xml``
    (the XML of one ``<row>``), written as a stream so the sheet XML never sits in memory."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as zf:
        zf.writestr("[Content_Types].xml", _CT)
        zf.writestr("_rels/.rels", _RELS)
        zf.writestr("xl/workbook.xml", _WB)
        zf.writestr("xl/_rels/workbook.xml.rels", _WB_RELS)
        with zf.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as f:
            f.write(_SHEET_HEAD.encode())
            f.write(("<row>" + "".join(_text_cell(h) for h in header) + "</row>").encode())
            chunk = (row_xml * 1000).encode()
            for _ in range(n_rows // 1000):
                f.write(chunk)
            f.write((row_xml * (n_rows % 1000)).encode())
            f.write(_SHEET_TAIL.encode())
    return buf.getvalue()


def zip_bomb(unpacked_mb: int = 512) -> bytes:
    """A ZIP archive (to be named .xlsx) with one member of ``unpacked_mb`` MB of zeros: about 1 MB on disk."""
    buf = io.BytesIO()
    zeros = bytes(1024 * 1024)
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        with zf.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as f:
            for _ in range(unpacked_mb):
                f.write(zeros)
    return buf.getvalue()


def xlsx_172mb_sheet() -> bytes:
    """The workbook of issue #20: ~170 MB of sheet XML (duplicate column names, 7 million number cells) in
    well under 1 MB; it took 98 s and 1.2 GB before it was refused for its duplicate names."""
    header = ["a", "b", "a"] + [f"c{j}" for j in range(47)]
    row = "<row>" + "<c><v>1.5</v></c>" * 50 + "</row>"  # 861 bytes, 50 cells
    return xlsx_from_rows(header, row, 200_000)


def xlsx_16m_cells() -> bytes:
    """16 million one-digit cells (4,000 columns x 4,000 rows), about 1 MB on disk."""
    header = [f"c{j}" for j in range(4000)]
    row = "<row>" + "<c><v>1</v></c>" * 4000 + "</row>"
    return xlsx_from_rows(header, row, 3999)


def xlsx_16m_random_cells(seed: int = 0) -> bytes:
    """16 million random one-digit cells (4,000 x 4,000): ~19 MB on disk, compressed only ~12 times, so the
    ZIP checks pass it; the cell count in the sheet XML refuses it (94 s and 0.7 GB in the row parse before)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    cell = np.frombuffer(b"<c><v>0</v></c>", dtype=np.uint8)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for member, body in (("[Content_Types].xml", _CT), ("_rels/.rels", _RELS), ("xl/workbook.xml", _WB),
                             ("xl/_rels/workbook.xml.rels", _WB_RELS)):
            zf.writestr(member, body)
        with zf.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as f:
            f.write(_SHEET_HEAD.encode())
            f.write(("<row>" + "".join(_text_cell(f"c{j}") for j in range(4000)) + "</row>").encode())
            for _ in range(40):  # 40 x 100 rows
                cells = np.tile(cell, (100, 4000, 1))
                cells[:, :, 6] = rng.integers(48, 58, (100, 4000))
                f.write(b"".join(b"<row>" + r.tobytes() + b"</row>" for r in cells))
            f.write(_SHEET_TAIL.encode())
    return buf.getvalue()


def csv_long_line(mb: int = 45) -> bytes:
    """A valid header, then one line of ``mb`` MB with no line break (under the 50 MB upload limit)."""
    return b"a,b\n1,2\n" + b"9" * (mb * 1024 * 1024) + b"\n"


def csv_million_columns() -> bytes:
    """A header of 10^6 column names and two rows (about 11 MB)."""
    n = 1_000_000
    rows = [",".join(f"c{i}" for i in range(n)), ",".join(["1"] * n), ",".join(["2"] * n)]
    return ("\n".join(rows) + "\n").encode()


def csv_ten_million_rows() -> bytes:
    """10^7 lines of one tiny cell ("1\\n" x 10^7 = 20 MB)."""
    return b"x\n" + b"1\n" * (10_000_000 - 1)


#: file name -> (maker, words the DataError must contain besides the file name)
BOMBS = {
    "zip_bomb.xlsx": (zip_bomb, ["unpack"]),
    "sheet_172mb.xlsx": (xlsx_172mb_sheet, ["unpack"]),
    "cells_16m.xlsx": (xlsx_16m_cells, ["unpack"]),
    "cells_16m_random.xlsx": (xlsx_16m_random_cells, ["more than 10,000,000 cells"]),
    "long_line.csv": (csv_long_line, ["line 3", "long"]),
    "columns_1e6.csv": (csv_million_columns, ["1,000,000 columns"]),
    "rows_1e7.csv": (csv_ten_million_rows, ["10,000,000 lines"]),
}
