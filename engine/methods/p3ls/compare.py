"""The method contract's entry point for P3LS: the federation beside centralised PLS on the pooled columns.

P3LS adds no noise, so there is no privacy budget: the comparison is exactness (the federated model equals
pooled PLS up to rounding) and the guarantee sentence says that masking is not differential privacy.
"""
from __future__ import annotations

import math

import numpy as np
from sklearn.cross_decomposition import PLSRegression
from sklearn.metrics import mean_squared_error, r2_score

from engine.methods.contract import Comparison
from engine.methods.p3ls.leakage import NOT_DP_STATEMENT
from engine.methods.p3ls.regressor import P3LSRegressor

__all__ = ["compare"]

#: scikit-learn's NIPALS run to convergence (its default tol=1e-6 bounds the squared change of the weights, so
#: with several responses it agrees only to ~1e-4): the reference must be as exact as the federation it
#: checks. The same setting as the oracle of tests/test_p3ls.py.
REFERENCE_NIPALS = {"tol": 1e-25, "max_iter": 100_000}


def _scores(y_true: np.ndarray, y_pred: np.ndarray) -> tuple[float, float]:
    """(RMSEP over every response, R² pooled over responses) on the test rows."""
    y_true = np.asarray(y_true, dtype=float).reshape(len(y_true), -1)
    y_pred = np.asarray(y_pred, dtype=float).reshape(y_true.shape)
    rmsep = float(np.sqrt(mean_squared_error(y_true, y_pred)))
    return rmsep, float(r2_score(y_true, y_pred, multioutput="variance_weighted"))


def compare(train, test, *, epsilon=None, delta=None, mode: str = "strict", random_state=None,
            **params) -> Comparison:
    """Fit the P3LS federation and centralised PLS on ``train``; score both on ``test``.

    Parameters
    ----------
    train, test : (X, y) tuples; X (m, n) holds every party's columns, y (m,) or (m, l) the label
        contributor's responses.
    epsilon : None or inf. P3LS adds no noise, so a finite epsilon cannot be honoured (ValueError).
    delta : ignored (there is no noise to calibrate); accepted for the uniform call.
    mode : "strict" only (P3LS has no paper/strict variants); accepted for the uniform call.
    random_state : the masks' seed (None: fresh OS entropy; a fixed value makes the masks removable by
        whoever knows it: tests only).
    **params : :class:`P3LSRegressor` parameters: n_components (default 2, the same k for both models),
        column_split (default 2 parties), label_holder, row_mask_block_size, secure_aggregation, party_names.

    Returns
    -------
    :class:`engine.methods.contract.Comparison`: private = the fitted :class:`P3LSRegressor` (its ``p3ls_`` is
    the federation: roles, message log), reference = scikit-learn ``PLSRegression(scale=True)`` on the
    pooled columns, headline = RMSEP and R² of both on the test rows and their differences, ledger = None,
    guarantee = :data:`NOT_DP_STATEMENT`.
    """
    if epsilon is not None and not (isinstance(epsilon, (int, float)) and math.isinf(epsilon) and epsilon > 0):
        raise ValueError(f"P3LS adds no noise, so it cannot give epsilon = {epsilon}: pass epsilon=None "
                         "(masks are not differential privacy)")
    if mode != "strict":
        raise ValueError(f"P3LS has one mode (masking); got mode={mode!r}")
    (X_train, y_train), (X_test, y_test) = train, test
    private = P3LSRegressor(**params, random_state=random_state).fit(X_train, y_train)
    reference = PLSRegression(private.n_components_, scale=True, **REFERENCE_NIPALS).fit(X_train, y_train)
    pred_fed, pred_ref = private.predict(X_test), reference.predict(X_test)
    rmsep_fed, r2_fed = _scores(y_test, pred_fed)
    rmsep_ref, r2_ref = _scores(y_test, pred_ref)
    headline = {
        "RMSEP (federated)": rmsep_fed, "RMSEP (centralised)": rmsep_ref,
        "R² (federated)": r2_fed, "R² (centralised)": r2_ref,
        "|ΔRMSEP|": abs(rmsep_fed - rmsep_ref), "|ΔR²|": abs(r2_fed - r2_ref),
        "max |Δ prediction|": float(np.max(np.abs(np.reshape(pred_fed, np.shape(pred_ref)) - pred_ref))),
    }
    notes: tuple[str, ...] = (
        "k is the same for both models (n_components); choose it on validation rows with compare_models",)
    if private.p3ls_.mask_seed_known_:
        notes += ("the masks come from a known seed: whoever knows it can remove them (tests only)",)
    return Comparison(private, reference, headline, None, NOT_DP_STATEMENT, notes)
