"""XLSX workbooks made at test time (never committed): one builder for the data-intake and page tests."""
from __future__ import annotations

import io


def workbook_bytes(sheets: dict) -> bytes:
    """An .xlsx file with one sheet per entry of ``sheets`` (title -> list of rows), as bytes."""
    import openpyxl

    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    for title, rows in sheets.items():
        ws = wb.create_sheet(title)
        for r in rows:
            ws.append(r)
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()
