"""Simulated VAR processes of the spec (6.1) and the statsmodels macrodata panel (8.2).

Hand-written: the paper's VAR_2(2), the spec's VAR_10(3) stand-in (the paper's Fig. 4 is an image) and
random stationary VARs by Ansley & Kohn (1986) as in gmvarkit's ``random_coefmats2`` (an R package, not
a kept Python library). scipy does the Cholesky factors. No streamlit here.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import linalg

from engine.privacy import as_generator
from engine.threads import one_blas_thread

__all__ = [
    "companion_radius",
    "macrodata_growth",
    "random_stationary_var",
    "simulate_var",
    "var10_3_coefs",
    "var22_coefs",
]


def _row_form_to_coefs(B_rows: list) -> np.ndarray:
    return np.stack([np.asarray(b, dtype=float).T for b in B_rows])


def var22_coefs() -> np.ndarray:
    """The paper's VAR_2(2) in statsmodels layout (2, 2, 2): B^(1) = [[.5, .3], [.3, .75]],
    B^(2) = [[-.3, -.05], [-.1, -.4]] in row form (row = source)."""
    return _row_form_to_coefs([[[0.5, 0.3], [0.3, 0.75]], [[-0.3, -0.05], [-0.1, -0.4]]])


def var10_3_coefs() -> np.ndarray:
    """The spec's stand-in for the paper's VAR_10(3) (Fig. 4 is an image), statsmodels layout
    (3, 10, 10): own lags .5, -.2 (and .1 at lag 3 for odd owners), 26 cross terms; targets
    8-10 are pure AR. 42 nonzeros of 300."""
    B = np.zeros((3, 10, 10))  # row form B[lag][source, target], 0-based
    for i in range(10):
        B[0, i, i] = 0.5
        B[1, i, i] = -0.2
    for i in (1, 3, 5, 7, 9):
        B[2, i - 1, i - 1] = 0.1
    cross = {1: [(2, 1, .40), (3, 1, .30), (4, 2, .25)], 2: [(1, 1, .20), (5, 1, .15)],
             3: [(2, 1, .20), (6, 2, .15)], 4: [(1, 1, .15), (7, 1, .20), (8, 3, .15)],
             5: [(9, 1, .20), (3, 2, .15)], 6: [(10, 1, .25), (5, 1, .15)],
             7: [(8, 1, .20), (9, 2, .15), (6, 3, .10)]}
    for target, terms in cross.items():
        for source, lag, value in terms:
            B[lag - 1, source - 1, target - 1] = value
    return np.stack([B[q].T for q in range(3)])


@one_blas_thread()
def random_stationary_var(p: int, d: int, random_state=None, ar_scale: float = 1.0) -> np.ndarray:
    """A random stationary VAR_d(p) by Ansley & Kohn (1986), as gmvarkit's ``random_coefmats2``
    (spec 6.1). Returns statsmodels-layout coefficients (p, d, d) (column convention A_k)."""
    rng = as_generator(random_state)
    I = np.eye(d)
    P = []
    for _ in range(p):
        A = rng.normal(0.0, ar_scale, (d, d))
        Lc = linalg.cholesky(I + A @ A.T, lower=True)
        P.append(linalg.solve_triangular(Lc, A, lower=True))
    L = Ls = Sigma = Sigmas = I.copy()
    phi, phis = {}, {}
    for s in range(p):
        phi[s + 1, s + 1] = L @ P[s] @ np.linalg.inv(Ls)
        phis[s + 1, s + 1] = Ls @ P[s].T @ np.linalg.inv(L)
        for k in range(1, s + 1):
            phi[s + 1, k] = phi[s, k] - phi[s + 1, s + 1] @ phis[s, s - k + 1]
            phis[s + 1, k] = phis[s, k] - phis[s + 1, s + 1] @ phi[s, s - k + 1]
        if s < p - 1:
            Sigma_new = Sigma - phi[s + 1, s + 1] @ Sigmas @ phi[s + 1, s + 1].T
            Sigmas = Sigmas - phis[s + 1, s + 1] @ Sigma @ phis[s + 1, s + 1].T
            Ls = linalg.cholesky(Sigmas, lower=True)
            Sigma = Sigma_new
            L = linalg.cholesky(Sigma, lower=True)
    return np.stack([phi[p, k] for k in range(1, p + 1)])


def companion_radius(coefs: np.ndarray) -> float:
    """Spectral radius of the companion matrix (stationary iff < 1)."""
    coefs = np.asarray(coefs, dtype=float)
    L, n, _ = coefs.shape
    comp = np.zeros((n * L, n * L))
    comp[:n, :] = np.hstack(list(coefs))
    if L > 1:
        comp[n:, :-n] = np.eye(n * (L - 1))
    return float(np.max(np.abs(np.linalg.eigvals(comp))))


def simulate_var(coefs: np.ndarray, T: int, intercept=None, noise_cov=None, burn: int = 1000,
                 random_state=None) -> np.ndarray:
    """Simulate y_t = c + sum_l coefs[l-1] y_{t-l} + eps_t, eps_t ~ N(0, noise_cov) (default I).

    Returns (T, n) after ``burn`` discarded steps (spec 6.1: burn-in 1000).
    """
    coefs = np.asarray(coefs, dtype=float)
    L, n, _ = coefs.shape
    rng = as_generator(random_state)
    total = int(T) + int(burn) + L
    eps = rng.standard_normal((total, n))
    if noise_cov is not None:
        eps = eps @ linalg.cholesky(np.asarray(noise_cov, dtype=float), lower=True).T
    c = np.zeros(n) if intercept is None else np.asarray(intercept, dtype=float)
    y = np.zeros((total, n))
    lags = [ell for ell in range(1, L + 1) if np.any(coefs[ell - 1])]
    At = {ell: coefs[ell - 1].T for ell in lags}
    for t in range(L, total):
        v = c + eps[t]
        for ell in lags:
            v = v + y[t - ell] @ At[ell]
        y[t] = v
    return y[-int(T):]


def macrodata_growth(demean: bool = True) -> pd.DataFrame:
    """statsmodels macrodata: 100 diff log(realgdp, realcons, realinv), 202 quarters (spec 8.2)."""
    from statsmodels.datasets import macrodata  # local: statsmodels is a test and bench dependency, not a runtime one

    d = macrodata.load_pandas().data
    y = 100.0 * np.diff(np.log(d[["realgdp", "realcons", "realinv"]].to_numpy()), axis=0)
    if demean:
        y = y - y.mean(axis=0)
    idx = pd.PeriodIndex.from_fields(year=d["year"].astype(int).to_numpy()[1:],
                                     quarter=d["quarter"].astype(int).to_numpy()[1:], freq="Q")
    return pd.DataFrame(y, columns=["gdp", "consumption", "investment"], index=idx)
