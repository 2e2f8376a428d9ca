"""RMSECV against the number of latent variables, and the private fit's own choice (issue #19).

:func:`rmsecv_curve` cross-validates the non-private reference model (PLS1, or PCR for the DP-PCR page) for
k = 1..K on the training rows with scikit-learn's ``KFold`` and ``cross_val_predict``: the owner's view, not
private (computed on the owner's rows without noise). Two suggestions are returned:

- ``k_min``: the k of the smallest RMSECV;
- ``k_one_se``: the one-standard-error rule (Hastie, Tibshirani & Friedman, *Elements of Statistical Learning*,
  sec. 7.10): the smallest k whose RMSECV is at most the minimum's RMSECV plus its standard error, the
  standard error being the spread of the per-fold RMSEs, sd / sqrt(number of folds). The page suggests this one
  (fewer latent variables for an error within the noise of the minimum).

:func:`private_k_choice` reads what a fitted private model used, without recomputing anything on the rows.
Written by hand: the one-standard-error rule and the reading of the fitted models (the rest is scikit-learn).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.cross_decomposition import PLSRegression
from sklearn.decomposition import PCA
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import KFold, cross_val_predict
from sklearn.pipeline import make_pipeline

from engine.threads import one_blas_thread

__all__ = ["METHODS", "RMSECVCurve", "latent_model", "max_cv_components", "private_k_choice", "rmsecv_curve"]

#: latent-variable models: PLS1 (edPLS page) and principal component regression (DP-PCR page)
METHODS = {"pls": "PLS1", "pcr": "PCR"}


def latent_model(method: str, k: int):
    """The unfitted non-private model with ``k`` latent variables: ``PLSRegression(k, scale=False)`` (centring
    only: the page's preprocessing decides any scaling) or ``make_pipeline(PCA(k), LinearRegression())``."""
    if method == "pls":
        return PLSRegression(n_components=int(k), scale=False)
    if method == "pcr":
        return make_pipeline(PCA(int(k)), LinearRegression())
    raise ValueError(f"unknown latent-variable method {method!r}; choose from {sorted(METHODS)}")


def max_cv_components(n_rows: int, n_channels: int, n_splits: int, wanted: int) -> int:
    """The largest k every cross-validation fold can fit: at most ``wanted``, the channel count and the smallest
    fold's training rows minus one (after centring they span at most that many directions)."""
    fold_rows = n_rows - math.ceil(n_rows / n_splits)
    return int(max(0, min(int(wanted), int(n_channels), fold_rows - 1)))


@dataclass(frozen=True)
class RMSECVCurve:
    """RMSECV for k = 1..K: pooled over all held-out rows, with the per-fold RMSEs and their standard error."""

    ks: np.ndarray
    rmsecv: np.ndarray
    se: np.ndarray
    fold_rmse: np.ndarray  # (K, n_splits)
    k_min: int
    k_one_se: int
    n_splits: int
    method: str

    def table(self) -> pd.DataFrame:
        """RMSECV and its standard error per number of latent variables, with the two choices flagged."""
        return pd.DataFrame({"latent variables k": self.ks, "RMSECV": self.rmsecv, "standard error": self.se,
                             "minimum": self.ks == self.k_min, "one-SE rule": self.ks == self.k_one_se})


@one_blas_thread()
def rmsecv_curve(X, y, max_components: int, *, n_splits: int = 5, method: str = "pls",
                 random_state: int = 0) -> RMSECVCurve:
    """RMSECV of the non-private ``method`` model for k = 1..K by K-fold cross-validation on (X, y).

    Parameters
    ----------
    X : (n, m) training rows (already preprocessed); y : (n,).
    max_components : the largest k wanted (capped by :func:`max_cv_components`).
    n_splits : folds (capped at n); random_state : the shuffle of ``KFold`` (a split, not a noise seed).

    Returns
    -------
    RMSECVCurve. RMSECV(k) = sqrt(mean over all rows of (y_i - yhat_{-i}(k))^2), yhat_{-i} the prediction of
    the model fitted without row i's fold (``cross_val_predict``).
    """
    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float).ravel()
    n = len(y)
    if X.ndim != 2 or X.shape[0] != n:
        raise ValueError(f"X must be (n, m) with n = len(y) = {n}, got shape {X.shape}")
    n_splits = int(min(n_splits, n))
    if n_splits < 2:
        raise ValueError(f"cross-validation needs at least 2 training rows, got {n}")
    K = max_cv_components(n, X.shape[1], n_splits, max_components)
    if K < 1:
        raise ValueError(f"{n} training rows are too few for {n_splits}-fold cross-validation of one latent variable")
    kf = KFold(n_splits=n_splits, shuffle=True, random_state=random_state)
    folds = [test for _, test in kf.split(X)]
    ks = np.arange(1, K + 1)
    rmsecv, fold_rmse = np.empty(K), np.empty((K, n_splits))
    with warnings.catch_warnings():  # PLS warns when a fold's y residual is already constant: a valid fit
        warnings.simplefilter("ignore", UserWarning)
        for i, k in enumerate(ks):
            pred = np.ravel(cross_val_predict(latent_model(method, int(k)), X, y, cv=kf))
            err = y - pred
            rmsecv[i] = math.sqrt(float(np.mean(err**2)))
            fold_rmse[i] = [math.sqrt(float(np.mean(err[f] ** 2))) for f in folds]
    se = fold_rmse.std(axis=1, ddof=1) / math.sqrt(n_splits)
    i_min = int(np.argmin(rmsecv))
    i_one = int(np.flatnonzero(rmsecv <= rmsecv[i_min] + se[i_min])[0])
    return RMSECVCurve(ks, rmsecv, se, fold_rmse, int(ks[i_min]), int(ks[i_one]), n_splits, method)


def private_k_choice(model) -> dict:
    """What a fitted private model used for its number of latent variables, read off the model (nothing is
    recomputed on the rows): {"k": int or None (no k to mark), "text": one sentence}.

    A ``StrictEDPLS`` (``choices_``) chose by its own rule from public quantities and DP releases; a model with
    ``n_components`` used the number set on the page (a public setting)."""
    choices = getattr(model, "choices_", None)
    if isinstance(choices, dict) and "k" in choices:
        k, d, d_max = choices["k"], choices.get("d"), choices.get("d_max")
        axes = "" if d is None else f" on {d} of {d_max} public axes" if d_max is not None else f" on {d} axes"
        if k == 0:
            return {"k": None, "text": "the strict pipeline released no axis: it is the private constant predictor "
                                       "(no latent variables)"}
        if k == "ridge":
            return {"k": None, "text": f"the strict pipeline chose no number of latent variables: ridge{axes} with "
                                       "per-axis shrinkage of the axes the noise swamps (its own rule, from public "
                                       "quantities and its DP releases)"}
        return {"k": int(k), "text": f"the strict pipeline used k = {int(k)} PLS components{axes}"}
    k = getattr(model, "n_components_", None)
    if k is None and hasattr(model, "get_params"):
        k = model.get_params().get("n_components")
    if isinstance(k, (int, np.integer)):
        return {"k": int(k), "text": f"k = {int(k)}: the number of latent variables set on the page (a public "
                                     "setting, not chosen from the data)"}
    return {"k": None, "text": "the private model reports no number of latent variables"}
