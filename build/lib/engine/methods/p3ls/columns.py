"""Which columns of one table X each P3LS party holds: :func:`resolve_column_split` of ``column_split``."""
from __future__ import annotations

from numbers import Integral

import numpy as np

__all__ = ["resolve_column_split"]


def resolve_column_split(column_split, n_features: int, feature_names=None) -> list[np.ndarray]:
    """Each party's column indices in X, from :class:`P3LSRegressor`'s ``column_split``.

    Parameters
    ----------
    column_split : int g (g contiguous blocks of near-equal width, as ``numpy.array_split``), a list of
        ints (contiguous block widths, summing to n_features) or a list of index arrays (each party's
        columns, any order; every column exactly once). With a DataFrame X the arrays may hold column names.
    n_features : int, the number of columns of X.
    feature_names : array (n_features,) of str or None, X's column names (``feature_names_in_``).

    Returns
    -------
    list of g int arrays (n_i,), party i's columns of X.
    """
    if _is_int(column_split):
        return _equal_blocks(int(column_split), n_features)
    if isinstance(column_split, str) or not hasattr(column_split, "__iter__"):
        raise ValueError("column_split must be a number of parties, a list of block widths or a list of column "
                         f"index arrays, got {column_split!r}")
    parts = list(column_split)
    if not parts:
        raise ValueError("column_split is empty: give at least one party's columns")
    if all(_is_int(v) for v in parts):
        return _blocks_of_widths([int(v) for v in parts], n_features)
    names = None if feature_names is None else {str(c): j for j, c in enumerate(feature_names)}
    cols = [_party_columns(i, part, names) for i, part in enumerate(parts)]
    _check_partition(np.concatenate(cols), n_features)
    return cols


def _is_int(v) -> bool:
    return isinstance(v, (Integral, np.integer)) and not isinstance(v, bool)


def _equal_blocks(g: int, n_features: int) -> list[np.ndarray]:
    """g contiguous blocks of near-equal width (as ``numpy.array_split``)."""
    if g < 1:
        raise ValueError(f"column_split must be at least 1 party, got {g}")
    if g > n_features:
        raise ValueError(f"column_split={g} parties need at least {g} columns; X has n_features = {n_features}")
    return [np.asarray(c, dtype=np.intp) for c in np.array_split(np.arange(n_features), g)]


def _blocks_of_widths(widths: list[int], n_features: int) -> list[np.ndarray]:
    """Contiguous blocks of the given widths, which must cover X exactly."""
    if min(widths) < 1:
        raise ValueError(f"column_split: every party needs at least one column, got widths {widths}")
    if sum(widths) != n_features:
        raise ValueError(f"column_split widths {widths} sum to {sum(widths)} columns; X has n_features = "
                         f"{n_features}")
    bounds = np.cumsum([0, *widths])
    return [np.arange(bounds[i], bounds[i + 1], dtype=np.intp) for i in range(len(widths))]


def _party_columns(i: int, part, names: dict | None) -> np.ndarray:
    """Party i's column indices from its list of indices or (for a DataFrame X) column names."""
    a = np.asarray(part)
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"column_split[{i}] must be a non-empty list of columns, got {part!r}")
    if a.dtype.kind in "USO":
        if names is None:
            raise ValueError(f"column_split[{i}] names columns, but X has no column names (pass a DataFrame)")
        unknown = [str(c) for c in a if str(c) not in names]
        if unknown:
            raise ValueError(f"column_split[{i}]: column {unknown[0]!r} is not a column of X")
        a = np.array([names[str(c)] for c in a])
    elif a.dtype.kind not in "iu":
        raise ValueError(f"column_split[{i}] must hold column indices (integers) or names, got {part!r}")
    return a.astype(np.intp)


def _check_partition(every: np.ndarray, n_features: int) -> None:
    """Every column of X belongs to exactly one party."""
    if every.min() < 0 or every.max() >= n_features:
        bad = int(every[(every < 0) | (every >= n_features)][0])
        raise ValueError(f"column_split holds column {bad}, outside 0..{n_features - 1} (n_features = {n_features})")
    counts = np.bincount(every, minlength=n_features)
    if np.any(counts > 1):
        raise ValueError(f"column_split gives column {int(np.flatnonzero(counts > 1)[0])} to more than one party")
    if np.any(counts == 0):
        raise ValueError(f"column_split leaves column {int(np.flatnonzero(counts == 0)[0])} to no party (every "
                         "column must belong to exactly one party)")
