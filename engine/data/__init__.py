"""Data intake for PrivaLab: reading user files into checked tables and model-ready shapes.

``load_table`` reads CSV / TSV / XLSX (paths or Streamlit uploads) and raises
:class:`DataError` with a message naming the file, column and row for anything unusable
(``missing="keep"`` keeps empty cells as NaN, for ``drop_missing_rows`` on the user's request).
``engine.data.columns`` proposes a lab export's response and X columns; ``load_xy_files`` joins a
spectra file and a reference values file.
``open_dataset`` opens a data set larger than memory (a Parquet folder, a CSV glob, a dask DataFrame) lazily,
checked chunk by chunk (``engine.data.large``).
The shape loaders return frozen dataclasses: :class:`TimeSeriesData` (VAR) and
:class:`TwoViewData` (CCA from two files). No streamlit, no pickle.
"""
from .columns import drop_missing_rows, response_candidates, x_columns
from .io import (
    MAX_CELLS,
    MAX_COLUMNS,
    MAX_UPLOAD_MB,
    SUPPORTED_EXTENSIONS,
    TimeSeriesData,
    TwoViewData,
    load_table,
    load_timeseries,
    load_two_view_files,
    timeseries_from_frame,
    xlsx_sheet_names,
)
from .large import DATA_ROOT_ENV, DatasetShape, data_root, dataset_shape, open_dataset, resolve_under_root
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
from .xy_files import join_xy, load_xy_files

__all__ = [
    "DATA_ROOT_ENV",
    "KIND_NEEDS",
    "MAX_CELLS",
    "MAX_COLUMNS",
    "MAX_UPLOAD_MB",
    "SUPPORTED_EXTENSIONS",
    "DataError",
    "DatasetShape",
    "TimeSeriesData",
    "TwoViewData",
    "check_constant_columns",
    "check_duplicate_columns",
    "check_finite_array",
    "check_matching_rows",
    "check_min_rows",
    "check_usable",
    "data_root",
    "dataset_shape",
    "drop_missing_rows",
    "join_xy",
    "load_table",
    "load_timeseries",
    "load_two_view_files",
    "load_xy_files",
    "open_dataset",
    "require_numeric",
    "resolve_under_root",
    "response_candidates",
    "timeseries_from_frame",
    "x_columns",
    "xlsx_sheet_names",
]
