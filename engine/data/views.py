"""Frame-to-arrays adapters for two-view methods (CCA): two views from one table, checked.

``views_from_frame`` takes the X and Y columns of one table, ``columns_with_prefix`` lists the columns whose
name starts with a prefix (the page's "X columns start with"), ``channel_split_views`` cuts one block of
spectral channels into two halves averaged into bands (``bin_columns``: public, data-independent). They
moved here from ``engine.methods.dp_cca`` (which still re-exports them; ``columns_with_prefix`` is
``engine.methods.dp_cca.columns_by_prefix`` there, renamed because P3LS's ``columns_by_prefix`` groups
columns by the text before a separator, a different thing).
"""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_array

from engine.data.validate import (
    DataError,
    check_constant_columns,
    check_duplicate_columns,
    check_finite_array,
    check_min_rows,
    require_numeric,
)

__all__ = ["bin_columns", "channel_split_views", "columns_with_prefix", "views_from_frame"]


def bin_columns(X, n_bins: int, names=None) -> tuple[np.ndarray, list]:
    """Average consecutive columns into ``n_bins`` bands (e.g. spectral channels).

    Data-independent (depends only on the column order), so it costs no privacy; it makes CCA
    of wide spectra on few samples well posed. Returns (X_binned (n, n_bins), band names).
    """
    X = check_array(X, dtype=np.float64)
    m = X.shape[1]
    n_bins = int(n_bins)
    if not 1 <= n_bins <= m:
        raise ValueError(f"n_bins must be in 1..{m}, got {n_bins}")
    edges = np.linspace(0, m, n_bins + 1).round().astype(int)
    names = [str(c) for c in (names if names is not None else range(m))]
    out = np.column_stack([X[:, a:b].mean(axis=1) for a, b in itertools.pairwise(edges)])
    labels = [names[a] if b - a == 1 else f"{names[a]}–{names[b - 1]}" for a, b in itertools.pairwise(edges)]
    return out, labels


def columns_with_prefix(columns, prefix: str) -> list:
    """Column names starting with ``prefix`` (case-sensitive), in table order."""
    prefix = str(prefix)
    return [c for c in columns if prefix and str(c).startswith(prefix)]


def views_from_frame(df: pd.DataFrame, x_columns, y_columns, file: str = "table") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two views (X, Y) from columns of one table, checked for CCA.

    Raises ``engine.data.DataError`` naming the problem: a column in both views, text columns,
    missing or infinite values, constant or duplicate columns, fewer than 3 rows.
    """
    xc, yc = [str(c) for c in (x_columns or [])], [str(c) for c in (y_columns or [])]
    if not xc or not yc:
        raise DataError(f"{file}: choose at least one column for each view (X and Y).", file=file)
    both = [c for c in xc if c in yc]
    if both:
        raise DataError(f"{file}: column '{both[0]}' is in both views; each column can be in one view only.",
                        file=file, column=both[0])
    X = require_numeric(df, xc, file)
    Y = require_numeric(df, yc, file)
    check_min_rows(len(X), 3, file, "a two-view analysis")
    for view in (X, Y):
        check_finite_array(view, file, "the view")
        check_constant_columns(view, file)
        check_duplicate_columns(view, file)
    return X.reset_index(drop=True), Y.reset_index(drop=True)


def channel_split_views(df: pd.DataFrame, channel_columns, n_bands: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two views from one block of spectral channels: the first and second half of the range,
    each averaged into ``n_bands`` bands (``bin_columns``; public, data-independent)."""
    cols = [str(c) for c in channel_columns]
    if len(cols) < 2 * int(n_bands):
        raise ValueError(f"{len(cols)} channels cannot be split into two halves of {n_bands} bands each")
    half = len(cols) // 2
    views = []
    for part in (cols[:half], cols[half:]):
        binned, labels = bin_columns(df[part].to_numpy(dtype=float), n_bands, part)
        views.append(pd.DataFrame(binned, columns=labels))
    return views[0], views[1]

