"""Two views for CCA from two files: X (n x p) and Y (n x q) on the same rows.

One file with both views is read with ``load_table`` and split by the method's own frame adapter;
this loader serves the case of two files (rows in the same order), checking what a covariance
needs: matching row counts, no constant columns, no two identical columns within a view.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .frames import _columns_arg, _load, _numeric_columns
from .validate import (
    DataError,
    check_constant_columns,
    check_duplicate_columns,
    check_matching_rows,
    check_min_rows,
    require_numeric,
)

__all__ = ["TwoViewData", "load_two_view_files"]


@dataclass(frozen=True, eq=False)
class TwoViewData:
    """Two blocks of variables on the same rows, for CCA.

    X : DataFrame (n x p), float64.   Y : DataFrame (n x q), float64.
    file : file holding X.   y_file : file holding Y (equal to ``file`` for one file).
    """

    X: pd.DataFrame
    Y: pd.DataFrame
    file: str
    y_file: str | None = None

    @property
    def sources(self) -> tuple:
        """The files the two views were read from, each once."""
        return tuple(dict.fromkeys(f for f in (self.file, self.y_file) if f))


def _view_checks(X: pd.DataFrame, Y: pd.DataFrame, xf: str, yf: str, min_rows: int) -> None:
    check_min_rows(len(X), min_rows, xf, "a two-view analysis")
    check_constant_columns(X, xf)
    check_constant_columns(Y, yf)
    check_duplicate_columns(X, xf)
    check_duplicate_columns(Y, yf)


def load_two_view_files(
    x_source,
    y_source,
    x_name: str | None = None,
    y_name: str | None = None,
    x_columns=None,
    y_columns=None,
    *,
    min_rows: int = 3,
) -> TwoViewData:
    """Two views from two files with rows in the same order: X (n x p), Y (n x q).

    ``x_columns`` / ``y_columns`` default to every numeric column of the file.
    """
    xdf, xmeta = _load(x_source, x_name)
    ydf, ymeta = _load(y_source, y_name)
    xf, yf = xmeta.name, ymeta.name
    xc = _columns_arg(x_columns) or _numeric_columns(xdf)
    yc = _columns_arg(y_columns) or _numeric_columns(ydf)
    if not xc:
        raise DataError(f"{xf}: no numeric columns.", file=xf)
    if not yc:
        raise DataError(f"{yf}: no numeric columns.", file=yf)
    X = require_numeric(xdf, xc, xf)
    Y = require_numeric(ydf, yc, yf)
    check_matching_rows(len(X), len(Y), xf, yf)
    _view_checks(X, Y, xf, yf, min_rows)
    return TwoViewData(X=X, Y=Y, file=xf, y_file=yf)
