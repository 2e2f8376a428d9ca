"""Input checks and internal scaling of the collaborative VAR (issue #16).

The collaborative VAR must give the same fit whatever the units of the series (multiply every series
by any c in [1e-150, 1e150]: same coefficients, intercepts times c, residual covariance times c²),
or refuse with a ``ValueError`` that names the series and the problem. This module holds:

* :func:`check_series`: the owners' series (T x n) as floats, or a ``ValueError`` naming the series
  for text, NaN, inf, overflow (|value| above 1e153: squares and sums overflow double precision),
  underflow (a series varying by less than 1e-153: its squares underflow) and constant series
  (also "constant to machine precision": variation below 1e-12 of its level).
* :func:`pow2`, :func:`safe_rms`: scales that are powers of two (dividing by one is exact, so a
  scaled fit equals the unscaled one bit for bit when no overflow happens).
* :func:`check_identified`: the rank of the pooled design (columns normalised): collinear or
  duplicated series (or one series a lagged or scaled copy of another) make the VAR coefficients
  not identified. The fit refuses with a message naming the series involved, in both solvers, so no
  answer can depend on a seed (the ADMM would otherwise converge to a seed-dependent point of the
  solution set).

No streamlit here.
"""
from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
from scipy.linalg import lapack

__all__ = [
    "COLLINEAR_RCOND",
    "CONSTANT_RTOL",
    "OVERFLOW_LIMIT",
    "UNDERFLOW_LIMIT",
    "NotNumericError",
    "check_finite_columns",
    "check_identified",
    "check_series",
    "label",
    "pow2",
    "safe_rms",
    "series_names",
]

#: Largest |value| accepted: its square (1e306) and sums of squares over many rows stay finite.
OVERFLOW_LIMIT = 1e153
#: Smallest variation accepted: below it the squares of the (centred) values underflow.
UNDERFLOW_LIMIT = 1e-153
#: A series whose variation is below this fraction of its level is constant to machine precision.
CONSTANT_RTOL = 1e-12
#: Smallest singular value of the column-normalised design, relative to the largest, below which
#: the design is treated as rank deficient (collinear series). Least squares loses about
#: cond(Z)² × 1e-16 of relative accuracy, so 1e-6 keeps any accepted fit to about 1e-4 at worst.
COLLINEAR_RCOND = 1e-6


def series_names(n: int, names=None) -> list:
    """Display names of the n series: the given names, else "series 1" .. "series n"."""
    if names is not None:
        names = [str(v) for v in names]
        if len(names) == n:
            return names
    return [f"series {i + 1}" for i in range(n)]


_DEFAULT_NAME = re.compile(r"series \d+")


def label(name: str) -> str:
    """How a series is named in messages: "series 3" for a default name, "series 'gdp'" otherwise."""
    return name if _DEFAULT_NAME.fullmatch(name) else f"series {name!r}"


def _where(index, row: int) -> str:
    if index is not None and not (isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1):
        return f"row {row} ({index[row]})"
    return f"row {row}"


class NotNumericError(TypeError, ValueError):
    """A value that is not a number: a ValueError (bad input) that is also the TypeError numpy and
    scikit-learn raise for non-numeric objects."""


def _numeric_column(values, name: str, index) -> np.ndarray:
    """One column as float64, or ValueError naming the series and the first non-numeric value."""
    arr = np.asarray(values)
    if arr.dtype.kind in "biuf":
        return arr.astype(float)
    if arr.dtype.kind == "c":
        raise ValueError(f"{label(name)} is not real-valued: Complex data not supported")
    out = np.empty(arr.shape[0])
    for t, v in enumerate(arr):
        if v is None or v is pd.NA or v is pd.NaT:
            out[t] = np.nan
            continue
        if isinstance(v, (bool, np.bool_)):
            out[t] = float(v)
            continue
        if isinstance(v, (complex, np.complexfloating)):
            raise ValueError(f"{label(name)} is not real-valued at {_where(index, t)}: Complex data not supported")
        try:
            out[t] = float(v)
        except (TypeError, ValueError) as err:
            why = "" if isinstance(v, str) else f" ({err})"
            raise NotNumericError(f"{label(name)} is not numeric: {_where(index, t)} holds {v!r}{why}") from None
        if isinstance(v, str) and v.strip().lower() in ("nan", "inf", "-inf", "+inf", "infinity", "-infinity"):
            continue  # caught below as NaN / inf with its row
    return out


def _refuse_series(v: np.ndarray, name: str, index) -> None:
    """The ValueError for a series that fails ``check_series``'s value checks (NaN/inf, overflow, constant,
    underflow), with the row where there is one."""
    bad = ~np.isfinite(v)
    if bad.any():
        t = int(np.flatnonzero(bad)[0])
        kind = "a missing value (NaN)" if np.isnan(v[t]) else "an infinite value (inf)"
        raise ValueError(f"{label(name)} has {kind} at {_where(index, t)}: remove or fill it")
    big = float(np.max(np.abs(v)))
    if big > OVERFLOW_LIMIT:
        raise ValueError(f"{label(name)} has values up to {big:.3g}: overflow, their squares and "
                         f"sums exceed double precision (limit |value| <= {OVERFLOW_LIMIT:.0e}); "
                         "rescale it (other units)")
    spread = float(np.max(v) - np.min(v))
    if spread == 0.0:
        raise ValueError(f"{label(name)} is constant (every value is {v[0]:.6g}): it carries no "
                         "information and its coefficients are not identified")
    if spread < UNDERFLOW_LIMIT:
        raise ValueError(f"{label(name)} varies only by {spread:.3g}: underflow, its squares are "
                         f"below the smallest double (limit {UNDERFLOW_LIMIT:.0e}); rescale it "
                         "(other units)")
    if spread < CONSTANT_RTOL * big:
        raise ValueError(f"{label(name)} is constant to machine precision: it varies by "
                         f"{spread:.3g} around {big:.6g}; remove it or subtract its level first")


def check_series(Y, names=None, *, min_rows: int = 1, what: str = "Y") -> tuple[np.ndarray, list]:
    """The owners' series as a float array (T, n) and their names, or a ValueError naming the series.

    Parameters
    ----------
    Y : array-like or DataFrame (T, n): one column per owner, rows in time order.
    names : display names (default: the DataFrame's columns, else "series 1" ..).
    min_rows : fewest rows accepted.
    what : the argument's name in messages.

    Raises
    ------
    ValueError for: not 2-D, too few rows, no column, text (names the row and value), NaN or inf
    (names the row), |value| > 1e153 (overflow), variation < 1e-153 (underflow), constant series
    (exactly, or to machine precision).
    """
    index = None
    if hasattr(Y, "toarray") or type(Y).__module__.startswith("scipy.sparse"):
        raise NotNumericError(f"Sparse data was passed for {what}, but dense data is required: use .toarray()")
    if isinstance(Y, pd.DataFrame):
        cols = [str(c) for c in Y.columns]
        index = Y.index
        names = series_names(Y.shape[1], names if names is not None else cols)
        columns = [Y.iloc[:, j].to_numpy() for j in range(Y.shape[1])]
        shape = Y.shape
    else:
        if isinstance(Y, pd.Series):
            raise ValueError(f"{what} must be 2-D (time steps x series): got one series; pass a DataFrame "
                             "or reshape(-1, 1)")
        arr = np.asarray(Y, dtype=object) if not isinstance(Y, np.ndarray) else Y
        if arr.ndim != 2:
            raise ValueError(f"{what} must be 2-D (time steps x series), got an array with {arr.ndim} "
                             f"dimension{'s' if arr.ndim != 1 else ''}"
                             + ("; for one series use reshape(-1, 1)" if arr.ndim == 1 else ""))
        shape = arr.shape
        names = series_names(shape[1], names)
        columns = [arr[:, j] for j in range(shape[1])]
    T, n = shape
    if n < 1:
        raise ValueError(f"{what} has no series: 0 feature(s) (shape=({T}, 0)) while a minimum of 1 is required.")
    if T < min_rows:
        raise ValueError(f"{what} has {T} time step{'s' if T != 1 else ''} (n_samples = {T}); the model needs at "
                         f"least {min_rows}")
    if isinstance(Y, np.ndarray) and Y.dtype.kind in "biuf":
        out = Y.astype(float)  # every column numeric: one conversion (a copy) instead of one per column
    else:
        out = np.empty((T, n))
        for j, col in enumerate(columns):
            out[:, j] = _numeric_column(col, names[j], index)
    # every column's checks at once; the first column with a problem is then examined alone for its message
    with np.errstate(invalid="ignore"):
        lo, hi = out.min(axis=0), out.max(axis=0)
        big = np.maximum(np.abs(lo), np.abs(hi))
        spread = hi - lo
        problem = ~(np.isfinite(lo) & np.isfinite(hi)) | (big > OVERFLOW_LIMIT) | (spread < UNDERFLOW_LIMIT) | (
            spread < CONSTANT_RTOL * big)
    for j in np.flatnonzero(problem)[:1]:
        _refuse_series(out[:, j], names[j], index)
    return out, names


def check_finite_columns(A, what: str, labels) -> np.ndarray:
    """A 2-D float array whose columns are finite and not overflowing, else ValueError naming the column."""
    A = np.asarray(A)
    if A.ndim != 2:
        raise ValueError(f"{what} must be 2-D, got {A.ndim} dimension(s)")
    try:
        A = A.astype(float)
    except (TypeError, ValueError):
        raise ValueError(f"{what} is not numeric") from None
    # every column at once (max |value| is NaN or inf where a value is); the first bad column is examined alone
    with np.errstate(invalid="ignore"):
        big_all = np.abs(A).max(axis=0) if A.shape[0] else np.zeros(A.shape[1])
    for j in np.flatnonzero(~np.isfinite(big_all) | (big_all > OVERFLOW_LIMIT))[:1]:
        v = A[:, j]
        bad = ~np.isfinite(v)
        if bad.any():
            t = int(np.flatnonzero(bad)[0])
            kind = "a missing value (NaN)" if np.isnan(v[t]) else "an infinite value (inf)"
            raise ValueError(f"{what}: {labels[j]} has {kind} at row {t}")
        big = float(np.max(np.abs(v))) if v.size else 0.0
        if big > OVERFLOW_LIMIT:
            raise ValueError(f"{what}: {labels[j]} has values up to {big:.3g}: overflow (limit {OVERFLOW_LIMIT:.0e}); "
                             "rescale it")
    return A


def pow2(x: float) -> float:
    """The power of two nearest to x > 0 in log scale (1.0 for x = 0 or non-finite x)."""
    if not (x > 0 and math.isfinite(x)):
        return 1.0
    m, e = math.frexp(x)  # x = m 2^e, 0.5 <= m < 1
    return math.ldexp(1.0, e if m >= math.sqrt(0.5) else e - 1)


def safe_rms(A) -> float:
    """Root mean square of the entries of A without overflow or underflow (max-abs scaling first)."""
    A = np.asarray(A, dtype=float)
    if A.size == 0:
        return 0.0
    big = float(np.max(np.abs(A)))
    if big == 0.0:
        return 0.0
    return big * math.sqrt(float(np.mean(np.square(A / big))))


#: The Frobenius bound below must clear the refusal's threshold (condition number 1 / COLLINEAR_RCOND² = 1e12) by
#: this factor, far above the inverse's rounding (relative error about cond eps <= 1e-6 where it is used).
_BOUND_MARGIN = 100.0


def _clearly_identified(C: np.ndarray) -> bool:
    """True when the symmetric positive definite C's condition number is provably far below 1 / COLLINEAR_RCOND²:
    lambda_max / lambda_min <= ||C||_F ||C^-1||_F, from a Cholesky factorisation and its inverse (LAPACK dpotrf,
    dpotri: a tenth of the eigendecomposition's cost). False when C is not positive definite or the bound is not
    conclusive: the caller then decides by the eigenvalues, as before."""
    c, info = lapack.dpotrf(C, lower=False)
    if info != 0:
        return False
    inv, info = lapack.dpotri(c, lower=False)  # the upper triangle of C^-1
    if info != 0:
        return False
    upper = np.triu(inv)
    inv_f2 = 2.0 * float(np.vdot(upper, upper)) - float(np.vdot(np.diag(inv), np.diag(inv)))
    bound = float(np.linalg.norm(C)) * np.sqrt(max(inv_f2, 0.0))
    return bool(np.isfinite(bound) and bound * _BOUND_MARGIN < 1.0 / COLLINEAR_RCOND ** 2)


def check_identified(G: np.ndarray, n: int, lags: tuple, names: list) -> None:
    """Refuse a rank-deficient pooled design: collinear or duplicated series.

    Parameters
    ----------
    G : (n p, n p) Gram matrix Z'Z of the centred owner-major design (any common scale).
    n, lags : number of series and the lag set (p = len(lags)).
    names : the series' names.

    Raises
    ------
    ValueError naming the series involved when the smallest singular value of the
    column-normalised design is below ``COLLINEAR_RCOND`` times the largest.
    """
    p = len(lags)
    d = np.sqrt(np.diag(G))
    if np.any(d <= 0):
        return  # a constant column is reported by the caller with its series and lag
    C = G / np.outer(d, d)
    if _clearly_identified(C):
        return
    w, V = np.linalg.eigh((C + C.T) / 2.0)
    top = float(w[-1])
    if top <= 0:
        return
    ratio = math.sqrt(max(float(w[0]), 0.0) / top)
    if ratio >= COLLINEAR_RCOND:
        return
    small = w <= (COLLINEAR_RCOND ** 2) * top
    weights = np.sqrt((V[:, small] ** 2).sum(axis=1)).reshape(n, p).max(axis=1)
    involved = [names[i] for i in np.flatnonzero(weights >= 0.1 * weights.max())]
    measure = (f"smallest singular value of the normalised design {ratio:.1e} of the largest "
               f"(rank {int(np.sum(~small))} of {n * p})")
    if len(involved) == 1:
        raise ValueError(f"the lags of {label(involved[0])} are collinear: the series follows an exact "
                         f"linear recurrence over the fitted rows, so its coefficients are not identified "
                         f"({measure}); use fewer lags or penalty='ridge'")
    listed = ", ".join(label(s) for s in involved[:-1]) + f" and {label(involved[-1])}"
    raise ValueError(f"{listed} are collinear: a combination of their lags is (numerically) zero, "
                     f"so the VAR coefficients are not identified ({measure}); a duplicated series, or one "
                     "series a scaled or lagged copy of the others, does this. Drop or merge one of them, or "
                     "use penalty='ridge'")
