"""The data-transformation defences of spec 2.2, as centralised what-ifs.

Records-split transformation (5)/(6) (an orthogonal or compressing M on the rows) and features-split
post-multiplication (7)/(8) (Z_Ai N_i, c_i y_i): hand-written demonstrations of the paper's argument
that such masks either change nothing (least squares is invariant) or are inverted with every owner's
secret. Not differentially private. No streamlit here.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import linalg

from engine.privacy import as_generator
from engine.threads import one_blas_thread

from .estimator import CollaborativeVAR
from .layout import normalise_lags

__all__ = ["orthogonal_rows_demo", "post_multiplication_demo"]


def _random_orthogonal(rng, size: int) -> np.ndarray:
    Q, R = np.linalg.qr(rng.standard_normal((size, size)))
    return Q * np.sign(np.diag(R))


@one_blas_thread()
def orthogonal_rows_demo(Z, target, lags, *, rows_kept: int | None = None, penalty="none", alpha=0.0,
                         block: int = 256, random_state=None) -> dict:
    """Records-split transformation (5)/(6): fit on (M Z, M Y) instead of (Z, Y).

    Z (T x n p owner-major), target (T x n): a design from :func:`lagged_design` (centred when
    the model has an intercept). rows_kept=None: M orthogonal (T x T; block-diagonal with
    random orthogonal blocks after a random row permutation, orthogonal all the same): LS,
    ridge and LASSO are all unchanged because M'M = I. rows_kept=k < T: a random k x T
    Gaussian compression (Zhou et al.), which changes the fit (same lambda). In a VAR
    (features split) no party can apply M, since each row mixes owners: a centralised what-if.
    """
    Z = np.asarray(Z, dtype=float)
    target = np.asarray(target, dtype=float)
    T = Z.shape[0]
    rng = as_generator(random_state)
    if rows_kept is None:
        perm = rng.permutation(T)
        MZ, MY = np.empty_like(Z), np.empty_like(target)
        for start in range(0, T, block):
            rows = perm[start:start + block]
            Q = _random_orthogonal(rng, len(rows))
            MZ[start:start + len(rows)] = Q @ Z[rows]
            MY[start:start + len(rows)] = Q @ target[rows]
    else:
        k = int(rows_kept)
        if not 1 <= k <= T:
            raise ValueError(f"rows_kept must be in [1, {T}]")
        M = rng.standard_normal((k, T)) / math.sqrt(k)
        MZ, MY = M @ Z, M @ target
    plain = CollaborativeVAR(lags, penalty=penalty, alpha=alpha, trend="n").fit_design(Z, target)
    # the same lambda on the transformed rows: alpha is per row
    masked_alpha = alpha * T / MZ.shape[0] if penalty != "none" else alpha
    masked = CollaborativeVAR(lags, penalty=penalty, alpha=masked_alpha, trend="n").fit_design(MZ, MY)
    return {"coef_plain": plain.coef_owner_major_, "coef_transformed": masked.coef_owner_major_,
            "max_abs_difference": float(np.max(np.abs(plain.coef_owner_major_ - masked.coef_owner_major_)))}


@one_blas_thread()
def post_multiplication_demo(Z, target, lags, *, penalty="none", alpha=0.0, random_state=None) -> dict:
    """Features-split transformation (7)/(8): owner i shares Z_Ai N_i (N_i p x p invertible) and
    c_i y_i; regressing Y N_y on Z N_z gives B' = N_z^-1 B N_y (N_z = blockdiag(N_i),
    N_y = diag(c_i)) for least squares. Recovering B needs N_z and N_y, i.e. every owner's
    secret (exposure). A penalty breaks the identity (the penalty acts on B', not on B).
    Returns B, B', B recovered with the N's, and the identity's error."""
    lags_t = normalise_lags(lags)
    Z = np.asarray(Z, dtype=float)
    target = np.asarray(target, dtype=float)
    n = target.shape[1]
    p = len(lags_t)
    rng = as_generator(random_state)
    blocks = [rng.normal(size=(p, p)) + 2.0 * np.eye(p) for _ in range(n)]
    Nz = linalg.block_diag(*blocks)
    ny = rng.uniform(0.5, 2.0, n) * rng.choice([-1.0, 1.0], n)
    plain = CollaborativeVAR(lags_t, penalty=penalty, alpha=alpha, trend="n").fit_design(Z, target)
    masked = CollaborativeVAR(lags_t, penalty=penalty, alpha=alpha, trend="n").fit_design(Z @ Nz, target * ny)
    B_prime = masked.coef_owner_major_
    B_back = Nz @ B_prime / ny
    return {"coef_plain": plain.coef_owner_major_, "coef_transformed": B_prime, "coef_recovered": B_back,
            "N_z": Nz, "N_y": np.diag(ny),
            "identity_error": float(np.max(np.abs(B_prime - np.linalg.solve(Nz, plain.coef_owner_major_) * ny))),
            "max_abs_difference": float(np.max(np.abs(B_back - plain.coef_owner_major_)))}
