"""Column checks of numeric input for the estimators (issue #16): a named ``ValueError`` or nothing.

Every estimator that uses these checks refuses input it cannot fit correctly with a ``ValueError``
whose message names the column (by its header when the input is a DataFrame or a named Series,
otherwise by its 0-based index) and the problem:

- non-numeric: a cell that is not a number (text, an object); the row is named too. A non-string
  object keeps numpy's ``TypeError`` (scikit-learn's ``check_dtype_object`` expects that type);
- missing / infinite: NaN, +inf or -inf, with the row;
- overflow: the sum of squares of the matrix overflows float64 (> 1.8e308), so row norms and
  moments in the data's units cannot be represented; the column holding the largest values is named;
- underflow: a non-zero column whose sum of squares is below the smallest normal float64
  (2.2e-308), so its squares vanish;
- constant: every value equal, or equal up to the last digits (spread <= 4 eps |value|);
- duplicate: two columns with identical contents (collinear), both named.

Scale: a column of values of size v passes the overflow and underflow checks when n v^2 lies between
2.2e-308 and 1.8e308 (roughly 1e-154 < v < 1e154 for n in the thousands), so data in any units
within a factor 1e150 of ordinary ones pass; the estimators then standardise by exact powers of two.

One pass over row blocks of about 4 MB (no full-size temporaries) takes each column's min and max, which
also reveal NaN and inf (located by a second pass only then); the sum of squares is only computed when the
largest value makes an overflow or underflow possible; duplicate candidates are columns sharing their
min and max, fingerprinted (sum and a fixed random projection) and then compared exactly.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from sklearn.utils.validation import check_array

from engine.numerics import pow2_exponent

__all__ = [
    "ColumnStats",
    "check_columns",
    "column_label",
    "frame_names",
    "raise_if_non_numeric",
    "read_y",
    "series_name",
]

_EPS = float(np.finfo(float).eps)
_LOG2_MAX = math.log2(float(np.finfo(float).max))  # ~ 1024
_LOG2_TINY = math.log2(float(np.finfo(float).tiny))  # -1022
_BLOCK_BYTES = 1 << 22


def frame_names(A, n_columns: int | None = None) -> list[str] | None:
    """Column headers of a DataFrame (as text), else None."""
    cols = getattr(A, "columns", None)
    if cols is None:
        return None
    names = [str(c) for c in cols]
    return names if n_columns is None or len(names) == n_columns else None


def series_name(y) -> str | None:
    """The name of a pandas Series (or of the one column of a DataFrame), else None."""
    name = getattr(y, "name", None)
    if name is not None:
        return str(name)
    names = frame_names(y)
    return names[0] if names and len(names) == 1 else None


def column_label(what: str, j: int, names=None, single: bool = False) -> str:
    """``X column 'oil'`` / ``X column 3`` (0-based), or ``y 'yield'`` / ``y`` for a single vector."""
    name = names[j] if names is not None and j < len(names) and names[j] is not None else None
    if single:
        return f"{what} '{name}'" if name is not None else what
    return f"{what} column '{name}'" if name is not None else f"{what} column {j}"


def raise_if_non_numeric(A, what: str, names=None, single: bool = False, cause: Exception | None = None) -> None:
    """Find the first cell of A that is not a number and raise a named error for it.

    ValueError for text (and anything ``float()`` refuses with ValueError); TypeError for other
    objects (numpy's message is kept: "float() argument must be a string or a real number ...").
    Returns silently when every cell converts (the caller then re-raises its own error).
    """
    if hasattr(A, "iloc"):
        frame = A.to_frame() if getattr(A, "ndim", 2) == 1 else A
        columns = [frame.iloc[:, j].to_numpy(dtype=object) for j in range(frame.shape[1])]
    else:
        try:
            obj = np.asarray(A, dtype=object)
        except Exception:  # noqa: BLE001 - ragged input: nothing to locate
            return
        if obj.ndim == 1:
            obj = obj[:, None]
        if obj.ndim != 2:
            return
        columns = [obj[:, j] for j in range(obj.shape[1])]
    for j, col in enumerate(columns):
        label = column_label(what, j, names, single)
        if np.iscomplexobj(col) and col.dtype != object:
            raise ValueError(f"{label} holds complex numbers: Complex data not supported") from cause
        try:
            np.asarray(col, dtype=np.float64)
            continue
        except (ValueError, TypeError):
            pass
        for i, v in enumerate(col):
            if isinstance(v, (complex, np.complexfloating)):
                raise ValueError(f"{label} holds a complex number in row {i}: Complex data not supported") from cause
            try:
                float(v)
            except (ValueError, TypeError) as exc:
                shown = repr(v) if len(repr(v)) <= 40 else repr(v)[:37] + "..."
                msg = f"{label} is non-numeric: row {i} holds {shown}, which is not a number ({exc})"
                if isinstance(exc, TypeError):
                    raise TypeError(msg) from cause
                raise ValueError(msg) from cause


@dataclass
class ColumnStats:
    """Per-column summaries from :func:`check_columns` (data units)."""

    absmax: np.ndarray  # (m,) largest |value| per column
    minimum: np.ndarray  # (m,)
    maximum: np.ndarray  # (m,)

    @property
    def largest(self) -> float:
        """The largest absolute value over the columns checked (0 when there are none)."""
        return float(self.absmax.max()) if self.absmax.size else 0.0


def read_y(y, min_samples: int) -> np.ndarray:
    """y as a float64 array (scikit-learn's ``check_array``, 1-D or 2-D, finiteness not checked here:
    ``check_columns`` names the cell), or the ``ValueError`` naming y's column and row when it holds text."""
    try:
        return check_array(y, ensure_2d=False, dtype=np.float64, ensure_all_finite=False, input_name="y",
                           ensure_min_samples=min_samples)
    except (ValueError, TypeError) as exc:
        raise_if_non_numeric(y, "y", [series_name(y)], single=True, cause=exc)
        raise


def _blocks(n: int, m: int):
    step = max(1, _BLOCK_BYTES // (8 * max(m, 1)))
    for a in range(0, n, step):
        yield a, min(n, a + step)


def _first_bad(B: np.ndarray, a: int, what, names, single):
    bad = ~np.isfinite(B)
    i, j = np.argwhere(bad)[0]
    v = B[i, j]
    kind = "NaN (a missing value)" if np.isnan(v) else ("+inf" if v > 0 else "-inf")
    return ValueError(f"{column_label(what, int(j), names, single)} has {kind} in row {a + int(i)}: "
                      "every value must be a finite number (NaN and inf are refused)")


def check_columns(A: np.ndarray, what: str = "X", names=None, *, single: bool = False, constant: bool = True,
                  duplicates: bool = True) -> ColumnStats:
    """Refuse a float64 matrix A (n, m) that cannot be fitted correctly, naming the column.

    Parameters
    ----------
    A : ndarray (n, m), float64 (already converted; see :func:`raise_if_non_numeric`).
    what : name of the input ("X", "Y", "y").
    names : column names (length m) or None (0-based indices are used).
    single : A is one named vector (messages say ``y 'name'``).
    constant, duplicates : run those checks.

    Returns
    -------
    ColumnStats of A.

    Raises
    ------
    ValueError naming the column and the problem: NaN / inf (with the row), overflow, underflow,
    constant, duplicate (module docstring).
    """
    n, m = A.shape
    lo = np.full(m, np.inf)
    hi = np.full(m, -np.inf)
    for a, b in _blocks(n, m):  # one pass, two reductions: NaN and inf show up in the min or the max
        B = A[a:b]
        np.minimum(lo, B.min(axis=0), out=lo)
        np.maximum(hi, B.max(axis=0), out=hi)
    if n and not (np.isfinite(lo).all() and np.isfinite(hi).all()):
        for a, b in _blocks(n, m):
            if not np.isfinite(A[a:b]).all():
                raise _first_bad(A[a:b], a, what, names, single)
    absmax = np.maximum(np.abs(lo), np.abs(hi)) if n else np.zeros(m)
    stats = ColumnStats(absmax, lo, hi)
    if n == 0 or m == 0:
        return stats
    _check_range(A, stats, what, names, single)
    if constant:
        spread = hi - lo
        flat = spread <= 4.0 * _EPS * absmax
        if flat.any():
            j = int(np.argmax(flat))
            detail = ("every value is" if spread[j] == 0 else "its values differ only in the last digits, about")
            raise ValueError(f"{column_label(what, j, names, single)} is constant ({detail} {hi[j]:.6g}): "
                             "a column without variation cannot be used; drop it")
    if duplicates and m > 1:
        _check_duplicates(A, stats, what, names)
    return stats


def _check_range(A, stats: ColumnStats, what, names, single) -> None:
    n, m = A.shape
    top = stats.largest
    if top == 0:
        return
    # Overflow: the total sum of squares (row norms, moments) must be finite in data units.
    if 2.0 * math.log2(top) + math.log2(n * m) >= _LOG2_MAX - 1.0:
        e = pow2_exponent(top)
        ss = np.zeros(m)
        for a, b in _blocks(n, m):
            B = np.ldexp(A[a:b], -e)
            ss += np.einsum("ij,ij->j", B, B)
        if math.log2(float(ss.sum())) + 2 * e >= _LOG2_MAX:
            j = int(np.argmax(ss))
            i = int(np.argmax(np.abs(A[:, j])))
            raise ValueError(
                f"{column_label(what, j, names, single)} overflows float64: its values (up to {A[i, j]:.3g}, "
                f"row {i}) are too large in magnitude; their squares sum past 1.8e308. Rescale it (other units) "
                "or correct the value")
    # Underflow: a non-zero column whose squares vanish (sum below the smallest normal float64).
    nz = stats.absmax > 0
    maybe = nz & (2.0 * np.log2(np.where(nz, stats.absmax, 1.0)) + math.log2(n) < _LOG2_TINY + 2.0)
    for j in np.flatnonzero(maybe).tolist():
        e = pow2_exponent(stats.absmax[j])
        col = np.ldexp(A[:, j], -e)
        if math.log2(float(col @ col)) + 2 * e < _LOG2_TINY:
            raise ValueError(
                f"{column_label(what, int(j), names, single)} underflows float64: its values are at most "
                f"{stats.absmax[j]:.3g} in magnitude, too small to square (their squares sum below 2.2e-308). "
                "Rescale it (other units)")


def _check_duplicates(A, stats: ColumnStats, what, names) -> None:
    """Identical columns have the same min and max (exactly): only columns sharing both with another are
    fingerprinted (sum and a fixed random projection, equal up to the summation order) and then compared."""
    n, m = A.shape
    order = np.lexsort((stats.maximum, stats.minimum))
    lo, hi = stats.minimum[order], stats.maximum[order]
    same = (lo[1:] == lo[:-1]) & (hi[1:] == hi[:-1])
    if not same.any():
        return
    cand = np.unique(np.concatenate([order[1:][same], order[:-1][same]]))
    r = np.random.default_rng(20_160_516).standard_normal((2, n))
    r[0] = 1.0
    fp = np.zeros((2, m))
    for a, b in _blocks(n, cand.size):
        fp[:, cand] += r[:, a:b] @ A[a:b][:, cand]
    start = 0
    while start < m:
        stop = start + 1
        while stop < m and lo[stop] == lo[start] and hi[stop] == hi[start]:
            stop += 1
        group = order[start:stop]
        for x, i0 in enumerate(group):
            for i1 in group[x + 1:]:
                tol = 1e-9 * n * (stats.absmax[i0] + 1e-300)
                if np.abs(fp[:, i0] - fp[:, i1]).max() <= tol and np.array_equal(A[:, i0], A[:, i1]):
                    a, b = sorted((int(i0), int(i1)))
                    la, lb = column_label(what, a, names), column_label(what, b, names)
                    raise ValueError(f"{la} and {lb.replace(what + ' column ', 'column ', 1)} are identical: "
                                     "duplicate columns are collinear; drop one of them")
        start = stop
