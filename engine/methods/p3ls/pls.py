"""Algorithm 1 of P3LS: SVD-based PLS, its sign convention and ddof=1 standardisation (spec ``p3ls.md``).

Written by hand because it *is* the paper's Algorithm 1 (the CSP runs it on masked, uncentred data, which
scikit-learn's ``PLSRegression`` cannot take); linear algebra is scipy's, and the tests' oracle is
scikit-learn's ``PLSRegression``. The centralised model (the paper's CenPLS/LocalPLS) is
:class:`~engine.methods.p3ls.svdpls.SVDPLS`, apart: this module is what the parties' processes import, and
scikit-learn's estimator base took 1.8 s of CPU in each of them (Flower 1.42 starts one process per message).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg

from engine.numerics import pow2_exponent

__all__ = [
    "PLSComponents",
    "component_signs",
    "mean_squared_distance",
    "orient_components",
    "rotations",
    "standardise_columns",
    "svd_pls",
]


@dataclass(frozen=True)
class PLSComponents:
    """The components of one PLS model (standardised units).

    W (n, k) X-weights, T (m, k) X-scores, U (m, k) Y-scores, P (n, k) X-loadings,
    Q (l, k) Y-loadings, R (n, k) X-rotations W (P^T W)^-1, B (n, l) coefficients R Q^T.
    """

    W: np.ndarray
    T: np.ndarray
    U: np.ndarray
    P: np.ndarray
    Q: np.ndarray
    R: np.ndarray
    B: np.ndarray

    @property
    def n_components(self) -> int:
        """The number of components k."""
        return self.W.shape[1]

    def truncate(self, k: int) -> PLSComponents:
        """The k-component model: PLS components are nested (spec Sec. 1), R is recomputed."""
        if not 1 <= k <= self.n_components:
            raise ValueError(f"k must be in 1..{self.n_components}, got {k}")
        W, P, Q = self.W[:, :k], self.P[:, :k], self.Q[:, :k]
        R = rotations(W, P)
        return PLSComponents(W, self.T[:, :k], self.U[:, :k], P, Q, R, R @ Q.T)


def rotations(W: np.ndarray, P: np.ndarray) -> np.ndarray:
    """R = W (P^T W)^-1 by a linear solve (P^T W is unit upper triangular in exact arithmetic)."""
    return linalg.solve((P.T @ W).T, W.T, check_finite=False).T


def _as_2d_response(Y) -> tuple[np.ndarray, bool]:
    from sklearn.utils.validation import check_array  # here: the parties' processes import this module

    Y = check_array(Y, ensure_2d=False, dtype=np.float64, input_name="Y")
    one_d = Y.ndim == 1
    return (Y.reshape(-1, 1) if one_d else Y), one_d


def svd_pls(X, Y, n_components: int) -> PLSComponents:
    """SVD-based PLS (paper Algorithm 1) on data that are already centred and scaled.

    X: (m, n), Y: (m, l) or (m,). No centring or scaling is done here: the CSP runs this function
    on masked data A X H, which is not column-centred. Every component: S = E^T F, (w, v) = the
    dominant singular pair of S, t = E w, u = F v, p = E^T t / t^T t, q = F^T t / t^T t, and both
    blocks are deflated with t. Signs are those of the SVD; use :func:`orient_components` for a
    reproducible convention. Returns :class:`PLSComponents`.
    """
    from sklearn.utils.validation import check_array  # here: the parties' processes import this module

    X = check_array(X, dtype=np.float64, input_name="X", ensure_min_samples=2)
    Y, _ = _as_2d_response(Y)
    if Y.shape[0] != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but Y has {Y.shape[0]}")
    m, n = X.shape
    l = Y.shape[1]
    k = int(n_components)
    if not 1 <= k <= min(m, n):
        raise ValueError(f"n_components must be in 1..min(rows, columns) = 1..{min(m, n)}, got {n_components}")
    E, F = X.copy(), Y.copy()
    W, T, U, P, Q = (np.empty((n, k)), np.empty((m, k)), np.empty((m, k)), np.empty((n, k)), np.empty((l, k)))
    first_strength = None
    for j in range(k):
        S = E.T @ F
        if l == 1:
            strength = float(np.linalg.norm(S[:, 0]))
            w = S[:, 0] / strength if strength > 0 else np.zeros(n)
            v = np.ones(1)
        else:
            left, singular, right_t = linalg.svd(S, full_matrices=False, check_finite=False)
            strength, w, v = float(singular[0]), left[:, 0], right_t[0]
        first_strength = strength if first_strength is None else first_strength
        if strength <= 1e-12 * max(first_strength, 1e-300):
            raise ValueError(
                f"No X-Y covariance is left after {j} components: ask for at most {j} components."
            )
        t = E @ w
        u = F @ v
        tt = float(t @ t)
        p = E.T @ t / tt
        q = F.T @ t / tt
        E -= np.outer(t, p)
        F -= np.outer(t, q)
        W[:, j], T[:, j], U[:, j], P[:, j], Q[:, j] = w, t, u, p, q
    R = rotations(W, P)
    return PLSComponents(W, T, U, P, Q, R, R @ Q.T)


def component_signs(T: np.ndarray) -> np.ndarray:
    """+-1 per column so that the entry of t_j with the largest |value| becomes positive.

    Every party can evaluate this because T is shared (spec Sec. 1, sign convention).
    """
    T = np.asarray(T, dtype=float)
    idx = np.argmax(np.abs(T), axis=0)
    signs = np.sign(T[idx, np.arange(T.shape[1])])
    signs[signs == 0] = 1.0
    return signs


def orient_components(components: PLSComponents) -> tuple[PLSComponents, np.ndarray]:
    """Apply the sign convention; returns the flipped components and the signs (B is unchanged)."""
    d = component_signs(components.T)
    c = components
    return PLSComponents(c.W * d, c.T * d, c.U * d, c.P * d, c.Q * d, c.R * d, c.B), d


def standardise_columns(X) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(Z, mean, scale): columns centred and divided by their ddof=1 standard deviation.

    A constant column keeps scale 1 (as scikit-learn's PLSRegression does), so it becomes zeros. Each
    column is first divided by the power of two of its largest |value| (exact in float64), so the squares
    of the deviations neither overflow nor underflow: data in any units give the same Z.
    """
    X = np.asarray(X, dtype=np.float64)
    absmax = np.abs(X).max(axis=0) if X.shape[0] else np.zeros(X.shape[1])
    e = np.array([pow2_exponent(v) if np.isfinite(v) else 0 for v in absmax], dtype=int)
    Xs = np.ldexp(X, -e)
    mean_s = Xs.mean(axis=0)
    scale_s = Xs.std(axis=0, ddof=1)
    constant = scale_s == 0.0
    Z = (Xs - mean_s) / np.where(constant, 1.0, scale_s)
    mean = np.ldexp(mean_s, e)
    scale = np.where(constant, 1.0, np.ldexp(scale_s, e))
    return Z, mean, scale


def mean_squared_distance(Z1, Z2) -> float:
    """MSD(Z1, Z2) = mean((Z1 - Z2)^2), the paper's losslessness metric (Sec. 6, Fig. 3)."""
    Z1, Z2 = np.asarray(Z1, float), np.asarray(Z2, float)
    return float(np.mean((Z1 - Z2) ** 2))
