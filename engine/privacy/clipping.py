"""Clipping to public bounds, with a report of how many rows were changed.

Strict mode clips every row to a bound fixed *before* seeing the data (public), which is
what makes a sensitivity bound hold. The report says how many rows the bound cut, so a
user can see whether the bound was sensible (counts are themselves not released privately:
show them to the data owner, not to the public).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from engine.numerics import safe_scale_exponent

__all__ = ["ClipReport", "clip_abs", "clip_factors", "clip_rows_l2", "row_norms"]


@dataclass(frozen=True)
class ClipReport:
    """What a clipping step did. ``n_clipped`` of ``n_rows`` rows exceeded ``bound``."""

    bound: float
    n_rows: int
    n_clipped: int
    max_norm_before: float

    @property
    def fraction_clipped(self) -> float:
        """The fraction of rows clipped (0 for no rows)."""
        return self.n_clipped / self.n_rows if self.n_rows else 0.0

    def describe(self, what: str = "rows") -> str:
        """One sentence: how many rows were clipped to which bound, and the largest norm before."""
        return (
            f"{self.n_clipped} of {self.n_rows} {what} clipped to the public bound {self.bound:g} "
            f"(largest before clipping: {self.max_norm_before:.4g})"
        )


def _check_bound(bound: float) -> float:
    bound = float(bound)
    if not (np.isfinite(bound) and bound > 0):
        raise ValueError(f"clipping bound must be a finite number > 0, got {bound}")
    return bound


def row_norms(A: ArrayLike) -> NDArray[np.float64]:
    """Euclidean row norms without overflow or underflow (exact power-of-two rescaling when needed).

    Parameters
    ----------
    A : array (n, d)

    Returns
    -------
    array (n,)
    """
    A = np.asarray(A, dtype=float)
    if A.size == 0:
        return np.zeros(A.shape[0])
    if safe_scale_exponent(float(np.abs(A).max())) == 0:
        out: NDArray[np.float64] = np.sqrt(np.einsum("ij,ij->i", A, A))  # einsum is typed Any
        return out
    # a value outside the safe range: each row brought to [0.5, 1) by its own power of two (one exponent for the
    # whole array would flush an ordinary row beside a 1e300 row to norm 0)
    top = np.abs(A).max(axis=1)
    e = np.frexp(top)[1]
    e[~np.isfinite(top)] = 0
    B = np.ldexp(A, -e[:, None])
    scaled: NDArray[np.float64] = np.sqrt(np.einsum("ij,ij->i", B, B))
    return np.ldexp(scaled, e)


def clip_factors(norms: ArrayLike, bound: float) -> tuple[NDArray[np.float64], ClipReport]:
    """min(1, bound / norm) per row, and the clip report (rows beyond the bound are scaled onto it)."""
    norms = np.asarray(norms, dtype=float)
    over = norms > bound
    f = np.ones_like(norms)
    f[over] = bound / norms[over]
    return f, ClipReport(float(bound), norms.size, int(over.sum()), float(norms.max()) if norms.size else 0.0)


def clip_rows_l2(X: ArrayLike, bound: float) -> tuple[NDArray[np.float64], ClipReport]:
    """Scale each row of X down to L2 norm <= bound (rows inside the ball are unchanged).

    Parameters
    ----------
    X : array (n, m)
    bound : float > 0, public.

    Returns
    -------
    X_clipped : array (n, m)
    report : ClipReport
    """
    bound = _check_bound(bound)
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n, m), got shape {X.shape}")
    factors, report = clip_factors(row_norms(X), bound)
    return X * factors[:, None], report


def clip_abs(y: ArrayLike, bound: float) -> tuple[NDArray[np.float64], ClipReport]:
    """Clip each entry of y into [-bound, bound].

    Parameters
    ----------
    y : array (n,) or (n, k); for 2-D, a row counts as clipped if any entry was.
    bound : float > 0, public.

    Returns
    -------
    y_clipped : array, same shape
    report : ClipReport
    """
    bound = _check_bound(bound)
    y = np.asarray(y, dtype=float)
    over = np.abs(y) > bound
    rows = over if y.ndim == 1 else over.any(axis=tuple(range(1, y.ndim)))
    n = y.shape[0] if y.ndim else 1
    report = ClipReport(bound, n, int(rows.sum()), float(np.abs(y).max()) if y.size else 0.0)
    return np.clip(y, -bound, bound), report
