"""Which columns of a lab export are the response, which are X, which are ids: proposals for a page's defaults.

A spectrometer export is usually laid out as ``sample_id, 1100, 1102, ..., 2498, moisture, oil, protein``: an
id column first, one column per wavelength (named by the number), the reference values last. The helpers
here read that layout off the column *names and types* only (never off the values of a response), so a
default they give reveals nothing about the private rows:

* :func:`parses_as_number`: a name like ``"1100"`` or ``"428.5"`` (a wavelength / wavenumber / channel);
* :func:`id_columns`: numeric columns that are a row index (named like id / sample / index, integer,
  strictly monotone, no repeats);
* :func:`response_candidates`: named numeric columns (not a number, not an id), the declared responses of a
  sample set first;
* :func:`x_columns`: the wavelength columns when there are at least two, else the other numeric columns,
  without the ids, the response and the other candidate responses;
* :func:`wavelength_order`: wavelength columns sorted by their number (for a range slider);
* :func:`drop_missing_rows`: rows with a missing value left out on request, with their count and row numbers.

No streamlit here.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .blocks import group_columns_by_prefix
from .validate import DataError, quote_list

__all__ = ["MissingRows", "drop_missing_rows", "id_columns", "is_id_like", "missing_rows", "numeric_columns",
           "parses_as_number", "response_candidates", "wavelength_order", "x_columns"]

_ID_NAME = re.compile(r"(^|[^a-z])(id|ids|sample|samples|index|idx|no|nr|num|number|row|rownum|obs|#)([^a-z]|$)|"
                      r"^(sampleid|sample_no|sampleno|rowid|obsid|unnamed: ?0)$", re.IGNORECASE)

#: A name that says "this is the response" (``y``, ``target``, ``response``, ``label``, ``outcome``, ``y_true``):
#: proposed before the other named columns, so a table ``x1, ..., x5, y`` proposes ``y`` and not ``x1``.
_RESPONSE_NAME = re.compile(r"^(y|target|response|label|outcome|kpi)([ _-]?(true|value|values|var))?$",
                            re.IGNORECASE)


def parses_as_number(name) -> bool:
    """True for a column name that is a finite number (``"1100"``, ``"428.5"``, ``" 1.1e3 "``): a wavelength,
    wavenumber or channel index, not a property."""
    try:
        return math.isfinite(float(str(name).strip()))
    except ValueError:
        return False


def numeric_columns(df: pd.DataFrame) -> list:
    """The numeric columns, in file order.

    Read off ``df.dtypes`` (one dtype per column) rather than ``df[c]`` per column: on a spectra table each
    ``df[c]`` builds a Series, 10 ms for 354 columns against 1 ms, and a page run asks several times. With
    repeated column names ``df[c]`` is a frame (never numeric), so that case keeps the per-column reading.
    """
    if not df.columns.is_unique:
        return [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])]
    return [c for c, dtype in zip(df.columns, df.dtypes, strict=True) if pd.api.types.is_numeric_dtype(dtype)]


def is_id_like(df: pd.DataFrame, column) -> bool:
    """A numeric row index: named like an id (id, sample, index, no, ...), whole numbers, strictly monotone
    (increasing or decreasing, so no repeats) and no missing values."""
    if not _ID_NAME.search(str(column)) or not pd.api.types.is_numeric_dtype(df[column]):  # the name first: cheap
        return False
    v = df[column].to_numpy(dtype=float)
    if v.size < 2 or not np.isfinite(v).all() or not np.all(v == np.round(v)):
        return False
    d = np.diff(v)
    return bool(np.all(d > 0) or np.all(d < 0))


def id_columns(df: pd.DataFrame) -> list:
    """The numeric columns that are a row index (:func:`is_id_like`), in file order."""
    return [c for c in numeric_columns(df) if is_id_like(df, c)]


def response_candidates(df: pd.DataFrame, declared=()) -> list:
    """Numeric columns that can be the response, the likeliest first.

    The declared responses of a public sample set (``declared``) that are numeric columns of ``df`` come
    first; then the columns named like a response (``y``, ``target``, ``response``, ``label``, ``outcome``,
    ``kpi``); then every other named numeric column (a name that is not a number: not a wavelength like
    ``"1100"``) that is not an id (:func:`is_id_like`), in file order, those that share a name prefix with
    another column (``sup_t1, sup_t2``: one party's or one unit's variables) after the ones that do not
    (``Qualität`` beside ``lief_*, werk_*``). Empty when every numeric column is named by a number (a table of
    spectra alone).
    """
    numeric = numeric_columns(df)
    ids = set(id_columns(df))
    first = [c for c in declared if c in numeric]
    named = [c for c in numeric if not parses_as_number(c) and c not in ids and c not in first]
    said = [c for c in named if _RESPONSE_NAME.match(str(c).strip())]
    grouped = {c for cols in group_columns_by_prefix(named).values() if len(cols) > 1 for c in cols}
    rest = [c for c in named if c not in said]
    return first + said + [c for c in rest if c not in grouped] + [c for c in rest if c in grouped]


def x_columns(df: pd.DataFrame, response, responses=(), *, keep_ids: bool = False) -> list:
    """The default X columns for ``response``, in file order.

    The numeric columns named by numbers (wavelengths) when there are at least two of them; else every other
    numeric column. Never the response, nor (by default) the id columns (``keep_ids=True`` keeps them), nor the
    other candidate responses ``responses``, unless leaving those out would leave fewer than two columns (a
    table of named process variables, where every column is a candidate): then X is every other column.
    """
    numeric = numeric_columns(df)
    ids = set() if keep_ids else set(id_columns(df))
    out = {response, *responses} | ids
    waves = [c for c in numeric if parses_as_number(c) and c not in out]
    if len(waves) >= 2:
        return waves
    rest = [c for c in numeric if c not in out]
    if len(rest) >= 2:
        return rest
    # a table of named process variables (every column a candidate response): X is the other columns
    return [c for c in numeric if c != response and c not in ids]


def wavelength_order(columns) -> list:
    """The columns named by numbers, sorted by that number (the axis of a range slider)."""
    return sorted((c for c in columns if parses_as_number(c)), key=lambda c: float(str(c).strip()))


@dataclass(frozen=True)
class MissingRows:
    """Rows with a missing value: ``rows`` are 1-based data row numbers (the first row below the header is 1),
    ``count`` their number, ``columns`` the columns holding a missing value."""

    rows: tuple
    columns: tuple

    @property
    def count(self) -> int:
        """The number of rows with a missing value."""
        return len(self.rows)

    def describe(self, limit: int = 10) -> str:
        """A sentence naming the rows (the first ``limit``) and the columns with missing values."""
        shown = ", ".join(str(r) for r in self.rows[:limit])
        if self.count > limit:
            shown += f" and {self.count - limit} more"
        word = "row" if self.count == 1 else "rows"
        return f"{self.count} data {word} ({shown}) with a missing value in {quote_list(self.columns)}"


def missing_rows(df: pd.DataFrame, columns=None) -> MissingRows:
    """The rows of ``df`` with a missing (NaN) value in ``columns`` (default: every numeric column)."""
    cols = numeric_columns(df) if columns is None else list(columns)
    if not cols:
        return MissingRows((), ())
    block = df[cols].isna().to_numpy()
    rows = tuple(int(i) + 1 for i in np.flatnonzero(block.any(axis=1)))
    where = tuple(c for c, has in zip(cols, block.any(axis=0), strict=False) if has)
    return MissingRows(rows, where)


def drop_missing_rows(df: pd.DataFrame, columns=None, *, file: str = "the table",
                      min_rows: int = 1) -> tuple[pd.DataFrame, MissingRows]:
    """``df`` without the rows that have a missing value in ``columns`` (default: every numeric column),
    re-indexed 0..n-1, and which rows were left out (:class:`MissingRows`: count and 1-based row numbers).

    Raises DataError (naming ``file``) when fewer than ``min_rows`` rows would remain.
    """
    gone = missing_rows(df, columns)
    if not gone.count:
        return df, gone
    keep = np.ones(len(df), dtype=bool)
    keep[np.asarray(gone.rows) - 1] = False
    if keep.sum() < min_rows:
        raise DataError(f"{file}: leaving out the {gone.describe()} leaves {int(keep.sum())} rows; at least "
                        f"{min_rows} are needed.", file=file)
    return df.loc[keep].reset_index(drop=True), gone
