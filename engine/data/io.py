"""Reading user files (CSV, TSV, XLSX) into checked tables, and the loaders on top: one import path.

The code lives in modules by concern; this module keeps the old import path (notebooks, pages):

* ``engine.data.readers``: bytes -> header and rows of strings (size, extension, encoding,
  delimiter sniffing, XLSX sheets), ``xlsx_sheet_names`` and the limits ``MAX_*`` (why each:
  its docstring; the XLSX container limits in ``engine.data.containers``);
* ``engine.data.frames``: ``load_table``, strings -> a typed DataFrame whose numeric columns are
  float64 with only finite values and whose other columns are text;
* ``engine.data.timeseries``: ``load_timeseries`` -> :class:`TimeSeriesData` (Y: T x sites);
* ``engine.data.two_views``: ``load_two_view_files`` -> :class:`TwoViewData` (X: n x p, Y: n x q).

Everything that can go wrong with a file a person uploads raises :class:`DataError` with a message
naming the file and, where it applies, the column (by header text) and the row.
"""
from __future__ import annotations

from .frames import load_table
from .readers import (
    MAX_CELLS,
    MAX_COLUMNS,
    MAX_LINE_MB,
    MAX_ROWS,
    MAX_UPLOAD_MB,
    MAX_XLSX_UNPACKED_MB,
    SUPPORTED_EXTENSIONS,
    xlsx_sheet_names,
)
from .timeseries import TimeSeriesData, load_timeseries, timeseries_from_frame
from .two_views import TwoViewData, load_two_view_files

__all__ = [
    "MAX_CELLS",
    "MAX_COLUMNS",
    "MAX_LINE_MB",
    "MAX_ROWS",
    "MAX_UPLOAD_MB",
    "MAX_XLSX_UNPACKED_MB",
    "SUPPORTED_EXTENSIONS",
    "TimeSeriesData",
    "TwoViewData",
    "load_table",
    "load_timeseries",
    "load_two_view_files",
    "timeseries_from_frame",
    "xlsx_sheet_names",
]
