"""Layout of the collaborative VAR: lag sets, the owner-major design and the coefficient layouts.

Internally the engine is owner-major: B_om (n p x n), row i*p + q is owner i's lag ``lags[q]`` (spec
section 1); statsmodels' layout is ``coefs`` (L, n, n) with ``coefs[l-1][j, i]`` the weight of lag l of
series i in the equation of series j. The conversions are index shuffles written here (no library has
this layout). No streamlit here.
"""
from __future__ import annotations

from numbers import Integral

import numpy as np

__all__ = [
    "coefs_from_owner_major",
    "lag_major_to_owner_major",
    "lagged_design",
    "normalise_lags",
    "owner_major_from_coefs",
    "owner_major_to_lag_major",
    "parse_lags",
]


def normalise_lags(lags) -> tuple:
    """``p`` -> (1, .., p); a sequence -> sorted distinct positive ints (e.g. (1, 2, 24))."""
    if isinstance(lags, (Integral, np.integer)) and not isinstance(lags, (bool, np.bool_)):
        if int(lags) < 1:
            raise ValueError(f"lags must be at least 1, got {lags}")
        return tuple(range(1, int(lags) + 1))
    try:
        values = [int(v) for v in lags]
    except (TypeError, ValueError):
        raise ValueError(f"lags must be a positive int or a sequence of positive ints, got {lags!r}") from None
    if not values or min(values) < 1:
        raise ValueError(f"lags must be positive, got {lags!r}")
    if any(float(v) != float(w) for v, w in zip(values, lags, strict=False)):
        raise ValueError(f"lags must be whole numbers, got {lags!r}")
    return tuple(sorted(set(values)))


def lagged_design(Y: np.ndarray, lags) -> tuple[np.ndarray, np.ndarray]:
    """Owner-major design of a VAR: Z (T x n p) and targets (T x n), T = T_total - max(lags).

    Column i*p + q of Z is owner i's series at lag ``lags[q]``; row t (0-based) is the target
    time L + t, L = max(lags). Pre-sample values are the first L rows of ``Y``.
    """
    Y = np.asarray(Y, dtype=float)
    lags = normalise_lags(lags)
    L = max(lags)
    T_total, n = Y.shape
    T = T_total - L
    if T < 1:
        raise ValueError(f"{T_total} time steps leave no row to fit with a largest lag of {L}")
    p = len(lags)
    Z = np.empty((T, n * p))
    for q, ell in enumerate(lags):
        Z[:, q::p] = Y[L - ell:T_total - ell, :]
    return Z, Y[L:, :].copy()


def owner_major_to_lag_major(B_om: np.ndarray, n: int, n_lags: int) -> np.ndarray:
    """Row permutation: owner-major (row i*p + q) -> lag-major (row q*n + i), the paper's (38)."""
    B_om = np.asarray(B_om)
    return B_om.reshape(n, n_lags, -1).transpose(1, 0, 2).reshape(n * n_lags, -1)


def lag_major_to_owner_major(B_lm: np.ndarray, n: int, n_lags: int) -> np.ndarray:
    """Inverse of :func:`owner_major_to_lag_major`."""
    B_lm = np.asarray(B_lm)
    return B_lm.reshape(n_lags, n, -1).transpose(1, 0, 2).reshape(n * n_lags, -1)


def coefs_from_owner_major(B_om: np.ndarray, lags) -> np.ndarray:
    """statsmodels-layout coefficients (L, n, n) from owner-major B (n p x n)."""
    lags = normalise_lags(lags)
    p, L = len(lags), max(lags)
    n = B_om.shape[1]
    blocks = B_om.reshape(n, p, n)  # [source, lag index, target]
    coefs = np.zeros((L, n, n))
    for q, ell in enumerate(lags):
        coefs[ell - 1] = blocks[:, q, :].T  # [target, source]
    return coefs


def owner_major_from_coefs(coefs: np.ndarray, lags) -> np.ndarray:
    """Owner-major B (n p x n) from statsmodels-layout coefficients (only the lags in ``lags``)."""
    lags = normalise_lags(lags)
    coefs = np.asarray(coefs, dtype=float)
    n = coefs.shape[1]
    p = len(lags)
    B = np.empty((n, p, n))
    for q, ell in enumerate(lags):
        B[:, q, :] = coefs[ell - 1].T
    return B.reshape(n * p, n)



def parse_lags(text: str) -> tuple:
    """"1, 2, 24" -> (1, 2, 24); "3" -> (1, 2, 3). Raises ValueError with a readable message."""
    parts = [t for t in str(text).replace(";", ",").replace(" ", ",").split(",") if t]
    if not parts:
        raise ValueError("give at least one lag, e.g. '1, 2, 24' or '2'")
    try:
        values = [int(t) for t in parts]
    except ValueError:
        raise ValueError(f"lags must be whole numbers separated by commas, got {text!r}") from None
    if len(values) == 1:
        return normalise_lags(values[0])
    return normalise_lags(values)
