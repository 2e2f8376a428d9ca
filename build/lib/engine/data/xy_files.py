"""X and Y as two files: a spectra file and a reference values file joined into one table for a regression page.

Rows are matched by row order (the two files list the same samples in the same order) or by a shared id column
(each id once in each file, every id in both files). Anything that does not pair up one to one raises
:class:`DataError` naming both files. The joined table has the id column (when matched by one) first, then the
spectra file's columns, then the reference file's: the layout of a lab export, so the column proposals of
``engine.data.columns`` apply, and the reference file's numeric columns are its declared responses.
No streamlit here.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .frames import _load
from .validate import DataError, check_matching_rows, quote_list

__all__ = ["join_xy", "load_xy_files", "shared_columns"]


def shared_columns(x_df: pd.DataFrame, y_df: pd.DataFrame) -> list:
    """Columns present in both files (candidates for the id column matching the rows), in the X file's order."""
    return [c for c in x_df.columns if c in set(y_df.columns)]


def _id_keys(col: pd.Series) -> list:
    """Ids as text, so that 7, 7.0 and "7" match across files (whole numbers written without decimals)."""
    if pd.api.types.is_numeric_dtype(col):
        v = col.to_numpy(dtype=float)
        return [str(int(a)) if np.isfinite(a) and a == round(a) else repr(float(a)) for a in v]
    return [str(a).strip() for a in col]


def _unique_ids(keys: list, file: str, on: str) -> None:
    seen: dict = {}
    for i, k in enumerate(keys):
        if k in seen:
            raise DataError(f"{file}: id '{k}' of column '{on}' appears twice (data rows {seen[k] + 1} and {i + 1}); "
                            "each sample needs one row to match the two files.", file=file, row=i + 1, column=on)
        seen[k] = i


def join_xy(x_df: pd.DataFrame, y_df: pd.DataFrame, x_name: str, y_name: str, *, on: str | None = None
            ) -> pd.DataFrame:
    """One table (n x (p + q)) from the spectra file ``x_df`` (n x p) and the reference file ``y_df`` (n x q).

    on : None to match rows by order (both files need the same number of rows), or the name of a column both
        files hold (each id once per file, the same ids in both); the rows keep the spectra file's order.
    Raises DataError naming both files for mismatched row counts or ids, and for a column name both files use
    (other than ``on``).
    """
    clash = [c for c in shared_columns(x_df, y_df) if c != on]
    if clash:
        raise DataError(f"{x_name} and {y_name} both have column {quote_list(clash)}; rename it in one file"
                        + (" or match the rows by it." if on is None and len(clash) == 1 else "."),
                        file=y_name, column=str(clash[0]))
    if on is None:
        check_matching_rows(len(x_df), len(y_df), x_name, y_name)
        return pd.concat([x_df.reset_index(drop=True), y_df.reset_index(drop=True)], axis=1)
    for df, name in ((x_df, x_name), (y_df, y_name)):
        if on not in df.columns:
            raise DataError(f"{name} has no column '{on}' to match the rows of {x_name} and {y_name}.",
                            file=name, column=on)
    xk, yk = _id_keys(x_df[on]), _id_keys(y_df[on])
    _unique_ids(xk, x_name, on)
    _unique_ids(yk, y_name, on)
    only_x = [k for k in xk if k not in set(yk)]
    only_y = [k for k in yk if k not in set(xk)]
    if only_x or only_y:
        parts = []
        if only_x:
            parts.append(f"{len(only_x)} id(s) of {x_name} are not in {y_name} ({quote_list(only_x, 5)})")
        if only_y:
            parts.append(f"{len(only_y)} id(s) of {y_name} are not in {x_name} ({quote_list(only_y, 5)})")
        raise DataError(f"{x_name} and {y_name} do not list the same samples in column '{on}': "
                        + "; ".join(parts) + ".", file=y_name, column=on)
    order = {k: i for i, k in enumerate(yk)}
    y_rows = y_df.drop(columns=[on]).iloc[[order[k] for k in xk]].reset_index(drop=True)
    x_part = x_df.reset_index(drop=True)
    return pd.concat([x_part[[on]], x_part.drop(columns=[on]), y_rows], axis=1)


def load_xy_files(x_source, y_source, x_name: str | None = None, y_name: str | None = None, *,
                  on: str | None = None) -> tuple[pd.DataFrame, tuple]:
    """Read both files (``load_table``'s checks and messages) and join them (:func:`join_xy`).

    Returns the joined table and the reference file's numeric columns (the declared responses).
    """
    x_df, xmeta = _load(x_source, x_name)
    y_df, ymeta = _load(y_source, y_name)
    joined = join_xy(x_df, y_df, xmeta.name, ymeta.name, on=on)
    responses = tuple(c for c in y_df.columns if c != on and pd.api.types.is_numeric_dtype(y_df[c]))
    return joined, responses
