"""The owners' sub-problems of the collaborative VAR: LASSO by cyclic coordinate descent and cached solves.

Hand-written: the coordinate descent is vectorised over owners and targets with one weight per
coefficient (scikit-learn's ``Lasso`` solves one target at a time with one weight), and is also the
central LASSO so both solvers solve the same problem. No streamlit here.
"""
from __future__ import annotations

import numpy as np

__all__ = ["lasso_coordinate_descent"]


def _soft(x, t):
    return np.sign(x) * np.maximum(np.abs(x) - t, 0.0)


def lasso_coordinate_descent(G: np.ndarray, C: np.ndarray, threshold, B0: np.ndarray | None = None,
                             tol: float = 1e-12, max_sweeps: int = 100_000) -> tuple[np.ndarray, int]:
    """argmin_B 1/2 tr(B'GB) - tr(B'C) + sum threshold * |B| by cyclic coordinate descent.

    Batched: G (m, m) or (k, m, m); C and B0 (m, n) or (k, m, n), k independent problems
    (one per owner) each with n independent targets. ``threshold``: a number, or an array
    broadcastable to C's shape (a weight per coefficient). With G = Z'Z and C = Z'Y this is
    1/2 ||Y - Z B||^2 + threshold ||B||_1. Warm start from ``B0``; stops when a whole sweep
    changes no entry by more than ``tol`` (spec 4.2: 1e-12). Returns (B, sweeps).
    """
    single = G.ndim == 2
    G3 = G[None] if single else G
    C3 = C[None] if single else C
    B = np.zeros_like(C3) if B0 is None else np.array(B0[None] if single else B0, dtype=float, copy=True)
    thr = np.asarray(threshold, dtype=float)
    thr3 = np.broadcast_to(thr[None] if (single and thr.ndim >= 2) else thr, C3.shape)
    diag = np.einsum("kmm->km", G3)
    if np.any(diag <= 0):
        raise ValueError("a covariate column is identically zero: its coefficient is not identified")
    m = G3.shape[1]
    sweeps = 0
    for sweeps in range(1, max_sweeps + 1):  # noqa: B007 (the count of sweeps is returned after the loop)
        biggest = 0.0
        for j in range(m):
            old = B[:, j, :].copy()
            # partial residual correlation without coordinate j
            r = C3[:, j, :] - np.einsum("km,kmn->kn", G3[:, j, :], B) + diag[:, j, None] * old
            new = _soft(r, thr3[:, j, :]) / diag[:, j, None]
            B[:, j, :] = new
            change = float(np.max(np.abs(new - old))) if new.size else 0.0
            biggest = max(biggest, change)
        if biggest <= tol:
            break
    return (B[0] if single else B), sweeps


def _quad(A: np.ndarray, G: np.ndarray) -> float:
    """sum_i tr(A_i' G_i A_i) = sum_i ||Z_i A_i||² (owner-local Grams)."""
    return float(np.einsum("opn,opq,oqn->", A, G, A))


def _owner_solver(G, penalty, lam, rho, inner_tol):
    """The owners' update C -> B (cached factorisation: explicit p x p inverses), or LASSO by CD."""
    n, p, _ = G.shape
    lam = np.asarray(lam, dtype=float)
    if penalty == "lasso" and np.any(lam > 0):
        thr = lam / rho

        def solve(C, B_warm):
            return lasso_coordinate_descent(G, C, thr, B0=B_warm, tol=inner_tol)[0]

        return solve
    if penalty == "ridge" and np.any(lam > 0):
        ridge = np.broadcast_to(lam, (n,)) if lam.ndim <= 1 else lam
        mats = np.linalg.inv(G + (np.asarray(ridge, float).reshape(-1, 1, 1) / rho) * np.eye(p)[None])
    else:
        mats = np.linalg.inv(G)

    def solve(C, B_warm):
        return np.einsum("opq,oqn->opn", mats, C)

    return solve
