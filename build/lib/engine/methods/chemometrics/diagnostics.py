"""The reference model's loadings and VIP, and Hotelling T² / Q residual outlier diagnostics (issue #19).

All on the owner's rows without noise (owner's view, not private). The reference model is scikit-learn's
(``PLSRegression(k, scale=False)``, or ``PCA(k)`` + ``LinearRegression`` for PCR); written by hand:

- VIP (Variable Importance in Projection, Wold's formula), for PLS1 with A components, p channels,
  normalised weights w_a = W[:, a] / ||W[:, a]||, scores t_a and y-loadings q_a:
  SS_a = q_a^2 t_a't_a (the y variance component a explains) and
  VIP_j = sqrt(p * sum_a SS_a w_ja^2 / sum_a SS_a). Since every w_a has unit norm, mean_j VIP_j^2 = 1;
  channels with VIP > 1 matter more than average.
- Hotelling T² of a row with scores t (on the model's k latent variables): T² = sum_a t_a^2 / s_a^2, s_a^2 the
  variance (ddof = 1) of the training scores of component a. Limits (F distribution, A components, n training
  rows, level alpha): for a training row A (n-1) / (n-A) F_alpha(A, n-A); for a new (test) row
  A (n-1)(n+1) / (n (n-A)) F_alpha(A, n-A) (Jackson, *A User's Guide to Principal Components*, 1991; MacGregor &
  Kourti 1995).
- Q residual (SPE) of a row x: Q = ||x - x_hat||^2, x_hat its reconstruction from its k scores. Limit: the
  Jackson-Mudholkar (1979) approximation from theta_i = sum_j lambda_j^i (i = 1, 2, 3) of the eigenvalues
  lambda_j of the training residuals' covariance: h0 = 1 - 2 theta1 theta3 / (3 theta2^2),
  Q_alpha = theta1 (z_alpha sqrt(2 theta2 h0^2) / theta1 + 1 + theta2 h0 (h0 - 1) / theta1^2)^(1 / h0);
  where that formula breaks (h0 <= 0), Box's (1954) approximation Q ~ g chi2_h with g = theta2 / theta1,
  h = theta1^2 / theta2. The method used is reported.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from engine.methods.chemometrics.cv import latent_model
from engine.threads import one_blas_thread

__all__ = ["ALPHAS", "OutlierDiagnostics", "example_rows", "fit_reference", "outlier_diagnostics", "q_limit",
           "reference_loadings", "t2_limit", "vip", "vip_from_weights"]

ALPHAS = (0.95, 0.99)
JACKSON_MUDHOLKAR = "Jackson-Mudholkar"
BOX = "Box (chi² approximation)"


@one_blas_thread()
def fit_reference(X_train, y_train, k: int, method: str = "pls"):
    """The non-private reference model (``cv.latent_model``) with ``k`` latent variables, fitted on the training
    rows."""
    return latent_model(method, k).fit(np.asarray(X_train, dtype=float), np.asarray(y_train, dtype=float).ravel())


def _projection(model):
    """The fitted step with ``transform`` (scores) and ``inverse_transform`` (reconstruction): the PLS model
    itself, or the PCA step of a PCR pipeline."""
    return model[0] if hasattr(model, "steps") else model


def reference_loadings(model) -> np.ndarray:
    """(m, k) X-loadings: PLS ``x_loadings_`` or the PCA axes (``components_.T``)."""
    proj = _projection(model)
    return np.asarray(proj.x_loadings_ if hasattr(proj, "x_loadings_") else proj.components_.T)


def vip_from_weights(W, T, q) -> np.ndarray:
    """VIP (Wold's formula, module docstring) from weights W (p, A), scores T (n, A) and y-loadings q (A,)."""
    W, T, q = np.asarray(W, dtype=float), np.asarray(T, dtype=float), np.asarray(q, dtype=float).ravel()
    ss = q**2 * np.sum(T**2, axis=0)
    if not ss.sum() > 0:
        raise ValueError("the components explain no variance of y: VIP is undefined")
    wn = W / np.linalg.norm(W, axis=0)
    return np.sqrt(W.shape[0] * (wn**2 @ ss) / ss.sum())


def vip(pls) -> np.ndarray:
    """VIP of every channel of a fitted scikit-learn ``PLSRegression`` (PLS1)."""
    return vip_from_weights(pls.x_weights_, pls.x_scores_, pls.y_loadings_[0])


def t2_limit(n: int, n_components: int, alpha: float, *, new: bool = False) -> float:
    """Hotelling T² limit at level ``alpha`` from the F distribution (module docstring); ``new``: for a row that
    was not in the training set."""
    n, A = int(n), int(n_components)
    if n <= A:
        return math.nan
    f = float(stats.f.ppf(alpha, A, n - A))
    return A * (n - 1) * (n + 1) / (n * (n - A)) * f if new else A * (n - 1) / (n - A) * f


def q_limit(eigenvalues, alpha: float) -> tuple[float, str]:
    """(Q limit at level ``alpha``, method) from the eigenvalues of the residual covariance (module docstring):
    Jackson-Mudholkar, or Box's chi² approximation where Jackson-Mudholkar's h0 <= 0. NaN when there is no
    residual variance."""
    lam = np.asarray(eigenvalues, dtype=float)
    lam = lam[lam > 0]
    if lam.size == 0:
        return math.nan, JACKSON_MUDHOLKAR
    t1, t2, t3 = (float(np.sum(lam**i)) for i in (1, 2, 3))
    h0 = 1.0 - 2.0 * t1 * t3 / (3.0 * t2**2)
    if h0 > 0:
        z = float(stats.norm.ppf(alpha))
        base = z * math.sqrt(2.0 * t2 * h0**2) / t1 + 1.0 + t2 * h0 * (h0 - 1.0) / t1**2
        if base > 0:
            return t1 * base ** (1.0 / h0), JACKSON_MUDHOLKAR
    g, h = t2 / t1, t1**2 / t2
    return g * float(stats.chi2.ppf(alpha, h)), BOX


@dataclass(frozen=True)
class OutlierDiagnostics:
    """T² and Q of the training (and test) rows, with the limits at each level of ``ALPHAS``.

    ``table``: one row per data row: row (index in the data), set ("training"/"test"), T², Q, and for each level
    "T² over 95 %", "Q over 95 %", ... (a test row's T² against the new-row limit)."""

    table: pd.DataFrame
    t2_limits: dict  # alpha -> limit for training rows
    t2_limits_new: dict  # alpha -> limit for new (test) rows
    q_limits: dict  # alpha -> limit
    q_method: str
    n_components: int
    n_train: int
    counts: dict = field(default_factory=dict)  # (set, statistic, alpha) -> rows over the limit


def _flag_name(stat: str, alpha: float) -> str:
    return f"{stat} over {alpha:.0%}"


@one_blas_thread()
def outlier_diagnostics(model, X_train, X_test=None, *, train_rows=None, test_rows=None,
                        alphas=ALPHAS) -> OutlierDiagnostics:
    """Hotelling T² and Q residuals of the rows under a fitted reference model (``fit_reference``).

    Parameters
    ----------
    model : fitted ``PLSRegression`` or PCR pipeline (its PCA step is used).
    X_train : (n, m) the rows it was fitted on; X_test : (n_test, m) or None.
    train_rows, test_rows : the rows' indices in the data (for the table; default 0..n-1).
    """
    proj = _projection(model)
    Xtr = np.asarray(X_train, dtype=float)
    Ttr = proj.transform(Xtr)
    n, A = Ttr.shape
    s2 = Ttr.var(axis=0, ddof=1)
    s2 = np.where(s2 > 0, s2, np.inf)  # a component with no spread adds nothing to T²

    def t2_q(X, T):
        return np.sum(T**2 / s2, axis=1), np.sum((X - proj.inverse_transform(T)) ** 2, axis=1)

    t2_tr, q_tr = t2_q(Xtr, Ttr)
    resid = Xtr - proj.inverse_transform(Ttr)
    lam = np.linalg.svd(resid - resid.mean(axis=0), compute_uv=False) ** 2 / max(n - 1, 1)
    q_lims, methods = {}, []
    for a in alphas:
        q_lims[a], used = q_limit(lam, a)
        methods.append(used)
    method = ", ".join(dict.fromkeys(methods))
    t2_lims = {a: t2_limit(n, A, a) for a in alphas}
    t2_new = {a: t2_limit(n, A, a, new=True) for a in alphas}
    parts = [pd.DataFrame({"row": np.arange(n) if train_rows is None else np.asarray(train_rows),
                           "set": "training", "T²": t2_tr, "Q": q_tr})]
    if X_test is not None and len(X_test):
        Xte = np.asarray(X_test, dtype=float)
        t2_te, q_te = t2_q(Xte, proj.transform(Xte))
        parts.append(pd.DataFrame({"row": np.arange(len(Xte)) if test_rows is None else np.asarray(test_rows),
                                   "set": "test", "T²": t2_te, "Q": q_te}))
    table = pd.concat(parts, ignore_index=True)
    is_test = (table["set"] == "test").to_numpy()
    counts = {}
    for a in alphas:
        t2_lim = np.where(is_test, t2_new[a], t2_lims[a])
        table[_flag_name("T²", a)] = table["T²"].to_numpy() > t2_lim
        table[_flag_name("Q", a)] = table["Q"].to_numpy() > q_lims[a]
        for s in ("training", "test"):
            mask = (table["set"] == s).to_numpy()
            for stat in ("T²", "Q"):
                counts[(s, stat, a)] = int(table.loc[mask, _flag_name(stat, a)].sum())
    return OutlierDiagnostics(table, t2_lims, t2_new, q_lims, method, A, n, counts)


def example_rows(train_rows, n: int = 5) -> np.ndarray:
    """Up to ``n`` training rows spread evenly over the training set (the spectra drawn raw and preprocessed)."""
    rows = np.asarray(train_rows)
    if rows.size == 0:
        return rows
    pick = np.unique(np.round(np.linspace(0, rows.size - 1, min(n, rows.size))).astype(int))
    return rows[pick]
