"""DP-CCA: utility metrics of canonical weights on held-out rows (post-processing; no noise, no ledger).

Utility (spec): captured correlation = sum_k corr(X_test u_k, Y_test v_k) of the private U, V on
held-out rows divided by the same sum for non-private CCA of the same training rows; subspace
similarity = mean cosine of the principal angles (``scipy.linalg.subspace_angles``) between the
private and non-private U (and V). Sweeps over eps, N and delta draw R replicates at once
(``sample_symmetric_gaussian(..., n_replicates=R)``) from one prepared data set; every row of a
sweep carries the ``status`` of its own ledger ("proven", "not proven", or "no privacy" at eps = inf).

"""
from __future__ import annotations

import math

import numpy as np
from scipy.linalg import subspace_angles
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_array, check_is_fitted

from engine.methods.dp_cca.core import as_view

__all__ = ["captured_correlation", "first_pair_weights", "held_out_correlations", "subspace_similarity"]


def _cov_blocks(X, Y) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    X = check_array(X, dtype=np.float64, ensure_min_samples=2)
    Y = check_array(as_view(Y, "Y")[0], dtype=np.float64, ensure_min_samples=2, input_name="Y")
    if X.shape[0] != Y.shape[0]:
        raise ValueError("X and Y must have the same number of rows")
    Xc, Yc = X - X.mean(0), Y - Y.mean(0)
    n = X.shape[0]
    return Xc.T @ Xc / n, Yc.T @ Yc / n, Xc.T @ Yc / n


def _pair_correlations(U, V, Sxx, Syy, Sxy) -> np.ndarray:
    num = np.einsum("...ik,ij,...jk->...k", U, Sxy, V)
    vx = np.einsum("...ik,ij,...jk->...k", U, Sxx, U)
    vy = np.einsum("...ik,ij,...jk->...k", V, Syy, V)
    with np.errstate(all="ignore"):
        r = num / np.sqrt(vx * vy)
    return np.where(np.isfinite(r), r, 0.0)


def held_out_correlations(U, V, X, Y) -> np.ndarray:
    """corr(X u_k, Y v_k) for every pair k (signed), on rows X (n, Dx), Y (n, Dy).

    U : (Dx, K) or (R, Dx, K); V likewise. Returns (K,) or (R, K).
    """
    Sxx, Syy, Sxy = _cov_blocks(X, Y)
    return _pair_correlations(np.asarray(U, float), np.asarray(V, float), Sxx, Syy, Sxy)


def _weights(model_or_weights):
    """(U, V) of a fitted model (any estimator with x_weights_, y_weights_: DPCCA) or of a (U, V) tuple."""
    if isinstance(model_or_weights, BaseEstimator):
        check_is_fitted(model_or_weights, "x_weights_")
        return model_or_weights.x_weights_, model_or_weights.y_weights_
    U, V = model_or_weights
    return np.asarray(U, float), np.asarray(V, float)


def captured_correlation(private, reference, X_test, Y_test) -> float:
    """Spec's captured correlation: sum_k corr of the private pairs on held-out rows / same for reference.

    private, reference : fitted DPCCA models or (U, V) tuples (reference = non-private CCA).
    """
    Up, Vp = _weights(private)
    Ur, Vr = _weights(reference)
    num = held_out_correlations(Up, Vp, X_test, Y_test).sum()
    den = held_out_correlations(Ur, Vr, X_test, Y_test).sum()
    return float(num / den)


def _mean_cos(A: np.ndarray, B: np.ndarray) -> float:
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(B))):
        return math.nan
    return float(np.mean(np.cos(subspace_angles(A, B))))


def subspace_similarity(private, reference) -> dict:
    """Mean cosine of the principal angles between private and reference U, and V, and their mean."""
    Up, Vp = _weights(private)
    Ur, Vr = _weights(reference)
    cx, cy = _mean_cos(Up, Ur), _mean_cos(Vp, Vr)
    return {"angle_cos_x": cx, "angle_cos_y": cy, "angle_cos": 0.5 * (cx + cy)}



def first_pair_weights(private, reference) -> dict:
    """First canonical weight vectors for display: each scaled to max |.| = 1, and the private
    pair's sign aligned to the reference pair (the sign of a canonical pair is arbitrary).

    Returns dict u_private, u_nonprivate (Dx,), v_private, v_nonprivate (Dy,).
    """
    def unit(a):
        a = np.asarray(a, dtype=float)
        top = np.max(np.abs(a))
        return a / top if top > 0 else a

    up, ur = unit(private.x_weights_[:, 0]), unit(reference.x_weights_[:, 0])
    vp, vr = unit(private.y_weights_[:, 0]), unit(reference.y_weights_[:, 0])
    if float(up @ ur + vp @ vr) < 0:
        up, vp = -up, -vp
    return {"u_private": up, "u_nonprivate": ur, "v_private": vp, "v_nonprivate": vr}

