"""The owner's workbook: everything the data owner may want that is NOT covered by the guarantee.

Non-private reference models, test-set values and errors, exact row and clipped-row counts, largest
norms, data ranges, the keyed fingerprint of the data: the owner needs them to judge a fit, and
none of them may leave the owner's machine. They go into one XLSX file whose first sheet, every
sheet's first row and the file name say "contains private information: do not share".

Built with pandas + openpyxl (kept libraries); only the layout is ours.

Examples
--------
>>> import pandas as pd
>>> wb = OwnerWorkbook("edPLS", {"reference model": pd.DataFrame({"coef": [1.0, 2.0]})})
>>> wb.file_name("edpls")
'edpls_owner_workbook_PRIVATE.xlsx'
>>> wb.to_xlsx()[:2]
b'PK'
"""
from __future__ import annotations

import io
import math
import re
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["PRIVATE_NOTICE", "OwnerWorkbook"]

PRIVATE_NOTICE = "Contains private information: do not share."
_README = "PRIVATE read me"


def _as_frame(value: Any) -> pd.DataFrame:
    if isinstance(value, pd.DataFrame):
        return value
    if isinstance(value, pd.Series):
        return value.to_frame()
    if isinstance(value, dict):
        return pd.DataFrame({"item": [str(k) for k in value], "value": [_cell(v) for v in value.values()]})
    if isinstance(value, np.ndarray):
        return pd.DataFrame(np.atleast_2d(value) if value.ndim < 2 else value.reshape(value.shape[0], -1))
    if isinstance(value, (list, tuple)):
        return pd.DataFrame({"value": [_cell(v) for v in value]})
    return pd.DataFrame({"value": [_cell(value)]})


def _cell(v: Any) -> Any:
    if isinstance(v, (np.floating, float)):
        v = float(v)
        return v if math.isfinite(v) else str(v)
    if isinstance(v, (np.integer, int, bool, np.bool_, str)) or v is None:
        return v.item() if isinstance(v, np.generic) else v
    if isinstance(v, np.ndarray) and v.size <= 50:
        return ", ".join(f"{x:.6g}" if isinstance(x, float) else str(x) for x in v.ravel().tolist())
    return str(v)


class OwnerWorkbook:
    """An owner's workbook: named sheets of private results.

    Parameters
    ----------
    title : what the workbook is about (method and run).
    sheets : dict sheet name -> DataFrame, Series, dict (item/value), array or list.
    notes : lines for the read-me sheet (what each sheet holds, why it is private).
    """

    def __init__(self, title: str, sheets: dict[str, Any] | None = None, notes: list[str] | None = None) -> None:
        self.title = str(title)
        self.sheets = dict(sheets or {})
        self.notes = list(notes or [])

    def add(self, name: str, value: Any) -> OwnerWorkbook:
        """Add the sheet ``name``; returns self."""
        self.sheets[str(name)] = value
        return self

    @staticmethod
    def file_name(page: str) -> str:
        """The workbook's file name for the page (it says PRIVATE)."""
        return f"{re.sub(r'[^A-Za-z0-9_-]+', '_', page)}_owner_workbook_PRIVATE.xlsx"

    def _sheet_names(self) -> list[tuple[str, str]]:
        used, out = {_README.lower()}, []
        for name in self.sheets:
            base = re.sub(r"[\[\]:*?/\\]", " ", name)[:28].strip() or "sheet"
            cand, i = base, 2
            while cand.lower() in used:
                cand, i = f"{base[:25]} {i}", i + 1
            used.add(cand.lower())
            out.append((name, cand))
        return out

    def to_xlsx(self) -> bytes:
        """The workbook as XLSX bytes: a read-me sheet first, then one sheet per entry."""
        buf = io.BytesIO()
        readme = pd.DataFrame({"PRIVATE": [PRIVATE_NOTICE.upper(), f"Owner's workbook: {self.title}",
                                           "It holds values computed from the private data without noise. "
                                           "Nothing here is covered by the differential-privacy guarantee.",
                                           *self.notes, "Sheets: " + ", ".join(self.sheets)]})
        with pd.ExcelWriter(buf, engine="openpyxl") as xw:
            readme.to_excel(xw, sheet_name=_README, index=False)
            for name, sheet in self._sheet_names():
                frame = _as_frame(self.sheets[name])
                frame.to_excel(xw, sheet_name=sheet, index=not isinstance(frame.index, pd.RangeIndex), startrow=1)
                xw.sheets[sheet].cell(row=1, column=1, value=f"{PRIVATE_NOTICE} ({name})")
        return buf.getvalue()
