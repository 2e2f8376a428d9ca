"""Data intake for PrivaLab: reading user files into checked tables and model-ready shapes.

``load_table`` reads CSV / TSV / XLSX (paths or Streamlit uploads) and raises
:class:`DataError` with a message naming the file, column and row for anything unusable.
The shape loaders return frozen dataclasses: :class:`SpectraData` (PLS),
:class:`TimeSeriesData` (VAR), :class:`TwoViewData` (CCA). No streamlit, no pickle.
"""
from .io import (
    MAX_CELLS,
    MAX_COLUMNS,
    MAX_UPLOAD_MB,
    SUPPORTED_EXTENSIONS,
    SpectraData,
    TimeSeriesData,
    TwoViewData,
    load_spectra,
    load_spectra_pair,
    load_table,
    load_timeseries,
    load_two_view_files,
    load_two_views,
    xlsx_sheet_names,
)
from .usable import KIND_NEEDS, check_usable
from .validate import (
    DataError,
    check_constant_columns,
    check_duplicate_columns,
    check_finite_array,
    check_matching_rows,
    check_min_rows,
    require_numeric,
)

__all__ = [
    "DataError",
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
    "SpectraData",
    "TimeSeriesData",
    "TwoViewData",
    "require_numeric",
    "check_min_rows",
    "check_constant_columns",
    "check_duplicate_columns",
    "check_matching_rows",
    "check_finite_array",
    "check_usable",
    "KIND_NEEDS",
    "xlsx_sheet_names",
]
