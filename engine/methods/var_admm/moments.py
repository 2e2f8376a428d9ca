"""The collaborative VAR's design and its moments: the centred design, the per-series scales, Z'Z, Z'Y and Y'Y.

Every solver of :class:`~.estimator.CollaborativeVAR` works from the moments of the centred, standardised design
(the normal-equations floor: one product of the T x (n p + n) buffer [Zc, Yc] with itself); the arrays themselves
are formed only where a solver reads them. Hand-written: the owner-major lagged layout, the checks' figures (each
column's spread and level) and the power-of-two scaling are this project's (no kept library builds them); scipy's
LAPACK wrappers solve.

:func:`centred_lagged` builds the centred buffer straight from the series: a VAR's lag columns are the same series
over row ranges that share all but max(lags) rows, so their means, minima and maxima come from the shared rows
plus a few edge rows (three passes over the T x n series instead of 3 p + 2 over T x n blocks of the design), and
the buffer is written once, column by column (no uncentred T x n p copy). :func:`centred_design` does the same
from a ready design (``fit_design``, a row mask). No streamlit here.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import linalg

from .checks import pow2, safe_rms

__all__ = ["CentredDesign", "ScaledDesign", "centred_design", "centred_lagged", "least_squares", "residual_moment",
           "scales_and_moments"]


@dataclass
class CentredDesign:
    """The centred design Zc (T x n p, owner-major) and targets Yc (T x n) of a fit, with what the checks read.

    ``joint``: the buffer [Zc, Yc] whose column blocks Zc and Yc are (None when they are separate arrays); ``spread``
    and ``level`` (n p,): max |Z - mean| and max |Z| of each design column; ``y_spread`` (n,): max |Yc| of each
    target. Exact: rounding is monotone, so max |fl(z - m)| = max(fl(max z - m), fl(m - min z)).
    """

    joint: np.ndarray | None
    Zc: np.ndarray
    Yc: np.ndarray
    z_mean: np.ndarray
    y_mean: np.ndarray
    spread: np.ndarray
    level: np.ndarray
    y_spread: np.ndarray


def centred_lagged(Y: np.ndarray, lags: tuple, centre: bool) -> CentredDesign | None:
    """The centred owner-major design and targets of a VAR on the checked series Y (T_total x n), built from Y.

    Lag ``ell``'s columns are Y's rows [L - ell, T_total - ell) (L = max(lags); the targets: ell = 0): every range
    holds the core rows [L, T_total - L) and L edge rows, so each column's sum, minimum and maximum are the core's
    (one pass each over Y) combined with its edge rows'. ``centre``: subtract the means (trend "c"), else keep
    the values (trend "n"). None when the ranges share no row (T_total < 2 L + 1): use :func:`centred_design`.
    """
    T_total, n = Y.shape
    L, p = max(lags), len(lags)
    if T_total - 2 * L < 1:
        return None
    T, k = T_total - L, n * p
    offsets = (*lags, 0)  # the p lag blocks, then the targets
    core = Y[L:T_total - L]
    edge_rows = np.array([[*range(L - ell, L), *range(T_total - L, T_total - ell)] for ell in offsets])
    edges = Y[edge_rows]  # (p + 1, L, n)
    lo = np.minimum(core.min(axis=0), edges.min(axis=1))  # (p + 1, n): offset, series
    hi = np.maximum(core.max(axis=0), edges.max(axis=1))
    mean = (core.sum(axis=0) + edges.sum(axis=1)) / T if centre else np.zeros((p + 1, n))
    spread = np.maximum(hi - mean, mean - lo)
    level = np.maximum(np.abs(lo), np.abs(hi))
    joint = np.empty((T, k + n), order="F")  # column by column: 7x faster to write than row by row, same product
    for q, ell in enumerate(offsets):
        np.subtract(Y[L - ell:T_total - ell], mean[q], out=joint[:, q:k:p] if ell else joint[:, k:])

    def owner_major(a):  # (p, n) lag-major rows -> (n p,) owner-major columns
        return np.ascontiguousarray(a[:p].T).reshape(k)

    return CentredDesign(joint, joint[:, :k], joint[:, k:], owner_major(mean), mean[p], owner_major(spread),
                         owner_major(level), spread[p])


def centred_design(Z: np.ndarray, target: np.ndarray, centre: bool) -> CentredDesign:
    """:class:`CentredDesign` of a ready design Z (T x n p) and targets (T x n), centred when ``centre`` (into one
    buffer [Zc, Yc], so one product gives all three moments), else used as they are. No row: spreads 0 (the fit
    refuses it)."""
    T, k = Z.shape
    n = target.shape[1]
    if T == 0:
        zeros = np.zeros(k)
        return CentredDesign(None, Z, target, zeros, np.zeros(n), zeros, zeros, np.zeros(n))
    if centre:
        z_mean, y_mean = Z.mean(axis=0), target.mean(axis=0)
        joint = np.empty((T, k + n), order="F")  # as centred_lagged's
        Zc, Yc = joint[:, :k], joint[:, k:]
        np.subtract(Z, z_mean, out=Zc)
        np.subtract(target, y_mean, out=Yc)
    else:
        z_mean, y_mean = np.zeros(k), np.zeros(n)
        Zc, Yc, joint = Z, target, None
    zlo, zhi = Z.min(axis=0), Z.max(axis=0)
    ylo, yhi = target.min(axis=0), target.max(axis=0)
    return CentredDesign(joint, Zc, Yc, z_mean, y_mean, np.maximum(zhi - z_mean, z_mean - zlo),
                         np.maximum(np.abs(zlo), np.abs(zhi)), np.maximum(yhi - y_mean, y_mean - ylo))


def scales_and_moments(design: CentredDesign, p: int):
    """(d, Z'Z, Z'Y, Y'Y) of the scaled design Z = Zc / d_col and targets Y = Yc / d, d being each series' power
    of two nearest the root mean square of its p lag columns and its target column. From the centred moments
    (the diagonals give the sums of squares; dividing by powers of two is exact), so the design is read once for
    the scales and the moments; where the values are extreme enough for a square to leave float64's range,
    ``safe_rms`` per series (max-abs scaling) and the moments of the scaled arrays instead."""
    Zc, Yc = design.Zc, design.Yc
    n = Yc.shape[1]
    big = np.maximum(design.spread.reshape(n, p).max(axis=1), design.y_spread)
    if np.all((big > 1e-100) & (big < 1e100)):
        k = Zc.shape[1]
        if design.joint is not None:
            W = design.joint.T @ design.joint
            Gc, ZcYc, YcYc = W[:k, :k], W[:k, k:], W[k:, k:]
        else:
            Gc, ZcYc, YcYc = Zc.T @ Zc, Zc.T @ Yc, Yc.T @ Yc
        ss = np.diag(Gc).reshape(n, p).sum(axis=1) + np.diag(YcYc)
        d = np.array([pow2(math.sqrt(v / (Yc.shape[0] * (p + 1)))) for v in ss])
        d_col = np.repeat(d, p)
        return d, Gc / np.outer(d_col, d_col), ZcYc / np.outer(d_col, d), YcYc / np.outer(d, d)
    d = np.array([pow2(safe_rms(np.column_stack([Zc[:, i * p:(i + 1) * p], Yc[:, i]]))) for i in range(n)])
    Zs, Ys = Zc / np.repeat(d, p), Yc / d
    return d, Zs.T @ Zs, Zs.T @ Ys, Ys.T @ Ys


class ScaledDesign:
    """The standardised design and targets (Zc / d_col, Yc / d) of a fit, through their moments (``gram`` Z'Z,
    ``zty`` Z'Y, ``yty`` Y'Y) and ``shape`` (T, n); the arrays are formed on the first call of :meth:`arrays` and
    kept: the central fit and the accelerated scheme work from the moments and most fits never read them (two
    T x (n p + n) passes saved: a fifth of a central fit at 20 sites)."""

    def __init__(self, Zc: np.ndarray, Yc: np.ndarray, d_col: np.ndarray, d: np.ndarray,
                 moments: tuple[np.ndarray, np.ndarray, np.ndarray]):
        self._parts = (Zc, Yc, d_col, d)
        self._arrays: tuple[np.ndarray, np.ndarray] | None = None
        self.gram, self.zty, self.yty = moments
        self.shape = Yc.shape

    @classmethod
    def from_arrays(cls, Z: np.ndarray, Y: np.ndarray) -> ScaledDesign:
        """The design of ready standardised arrays (their moments formed here)."""
        return cls(Z, Y, np.ones(Z.shape[1]), np.ones(Y.shape[1]), (Z.T @ Z, Z.T @ Y, Y.T @ Y))

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(Z, Y): the standardised design and targets, formed on the first call."""
        if self._arrays is None:
            Zc, Yc, d_col, d = self._parts
            self._arrays = (Zc / d_col, Yc / d)
        return self._arrays


#: The normal equations are accepted as they are when cond(Z'Z) eps is below this (their relative error is about
#: cond(Z'Z) eps: 1e-10, the agreement the tests ask of every solver with statsmodels; cond eps is 3e-13, 7e-13 and
#: 1.3e-11 for VAR(2) on 10, 20 and 50 solar sites); up to _REFINE_LIMIT one step of refinement from the data's
#: residual (Bjorck's corrected semi-normal equations) brings them to the accuracy of a QR solve; beyond it, LAPACK's
#: SVD solver (gelsd).
_NORMAL_LIMIT = 1e-10
_REFINE_LIMIT = 1e-4


def least_squares(design: Callable[[], tuple[np.ndarray, np.ndarray]], G: np.ndarray,
                  ZtY: np.ndarray) -> np.ndarray:
    """argmin ||Y - Z B|| from the moments G = Z'Z and Z'Y the fit has already formed: a Cholesky solve (the
    normal-equations floor: ~10x cheaper than gelsd's SVD of the T x n p design), refined once from the residual
    when G's condition number (LAPACK's estimate, dpocon) makes that necessary, gelsd when G is (nearly) singular.
    ``design()`` returns (Z, Y), called only for the refinement or gelsd. Written by hand: scipy's
    ``solve(assume_a="pos")`` neither estimates the condition nor refines from Z."""
    c, info = linalg.lapack.dpotrf(G, lower=False)
    if info == 0:
        rcond, info = linalg.lapack.dpocon(c, float(np.abs(G).sum(axis=0).max()), uplo="U")
        cond_eps = np.inf if info != 0 or rcond <= 0 else float(np.finfo(float).eps) / rcond
        if cond_eps <= _REFINE_LIMIT:
            B = linalg.cho_solve((c, False), ZtY)
            if cond_eps > _NORMAL_LIMIT:
                Z, Y = design()
                B += linalg.cho_solve((c, False), Z.T @ (Y - Z @ B))
            return B
    Z, Y = design()
    B, *_ = linalg.lstsq(Z, Y, lapack_driver="gelsd")
    return B


#: The residual moment R'R is taken from the moments (Y'Y - B'Z'Y - Y'Z B + B'Z'Z B) while every series keeps
#: more than this share of the terms' size in its residual: the moments' rounding is about a few eps times
#: ||y_j||^2 + |b_j|'|G||b_j| (the second term is the fitted part's, large when many coefficients cancel), so against
#: R_jj > 1e-6 of that it stays near 1e-9 relative (the tests ask 1e-8 of sigma_u against statsmodels). A closer
#: fit forms the residual from the design, as before.
_RESIDUAL_SHARE = 1e-6


def residual_moment(scaled: ScaledDesign, B: np.ndarray) -> np.ndarray:
    """R'R of R = Y - Z B in standardised units, from the moments where that is exact enough (one T x n p x n
    product and a T x n pass saved: a quarter of a central fit at 20 sites), from R itself otherwise."""
    G, ZtY, YtY = scaled.gram, scaled.zty, scaled.yty
    BtZtY = B.T @ ZtY
    RtR = YtY - BtZtY - BtZtY.T + B.T @ (G @ B)
    size = np.diag(YtY) + np.einsum("ij,ij->j", np.abs(B), np.abs(G) @ np.abs(B))
    if np.all(np.diag(RtR) > _RESIDUAL_SHARE * size):
        return 0.5 * (RtR + RtR.T)
    Z, Y = scaled.arrays()
    R = Y - Z @ B
    return R.T @ R
