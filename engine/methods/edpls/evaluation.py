"""edPLS evaluation: one private fit beside the non-private one, scored on held-out rows.

``compare`` is the method contract's entry point (``engine.methods.contract``: the same call for every
method, one ``Comparison`` back); ``compare_private_plain`` is the page's older dict form with the owner's
private statistics (it feeds ``release.owner_sheets``).
"""
from __future__ import annotations

import numpy as np
from sklearn.metrics import r2_score, root_mean_squared_error

from engine.methods.contract import Comparison
from engine.methods.edpls.estimator import EDPLS
from engine.methods.edpls.sweeps import _as_float
from engine.privacy.wording import ledger_text

__all__ = ["compare", "compare_private_plain"]


def _xy(data, what: str) -> tuple[np.ndarray, np.ndarray]:
    X, y = data
    return _as_float(X, f"X_{what}"), _as_float(y, f"y_{what}").ravel()


def compare(train, test, *, epsilon, delta, mode: str = "strict", random_state=None, **params) -> Comparison:
    """A private EDPLS fitted on ``train`` beside plain PLS1 (EDPLS at epsilon = inf, equal to scikit-learn's
    ``PLSRegression(scale=False)``) with the same number of components, both scored on ``test``.

    Parameters
    ----------
    train, test : tuples (X (n, m), y (n,)).
    epsilon, delta : the budget of the private fit.
    mode : "strict" (provably DP: give ``x_bound`` and ``y_bound``) or "paper" (Algorithm 1, not proven).
    random_state : the private fit's noise (None: fresh OS entropy; a value: a known seed, not proven).
    **params : the other ``EDPLS`` parameters (n_components, x_bound, y_bound, calibration, ...).

    Returns
    -------
    Comparison: private (fitted EDPLS), reference (fitted plain PLS1), headline "RMSEP (private)",
    "RMSEP (non-private)", "R² (private)", "R² (non-private)" on the test rows, the private fit's ledger,
    its one-sentence guarantee (``engine.privacy.wording.ledger_text``) and the ledger's caveats as notes.
    """
    Xtr, ytr = _xy(train, "train")
    Xte, yte = _xy(test, "test")
    private = EDPLS(epsilon=epsilon, delta=delta, mode=mode, random_state=random_state, **params).fit(Xtr, ytr)
    reference = EDPLS(n_components=private.n_components, epsilon=np.inf, centering=private.centering).fit(Xtr, ytr)
    pred_p, pred_0 = private.predict(Xte), reference.predict(Xte)
    headline = {"RMSEP (private)": float(root_mean_squared_error(yte, pred_p)),
                "RMSEP (non-private)": float(root_mean_squared_error(yte, pred_0)),
                "R² (private)": float(r2_score(yte, pred_p)), "R² (non-private)": float(r2_score(yte, pred_0))}
    led = private.privacy_ledger_
    return Comparison(private, reference, headline, led, ledger_text(led), tuple(led.caveats))


def compare_private_plain(X, y, train_idx, test_idx, params: dict, random_state=None) -> dict:
    """Fit EDPLS(**params) and plain PLS1 (epsilon = inf) on the training rows; score both on the test rows.

    random_state: the private fit's noise (None: fresh OS entropy; a value: a known seed, not proven).

    Returns a dict: private, plain (fitted EDPLS), pred_private, pred_plain, y_test (arrays),
    rmsep_private, rmsep_plain, sigma_y_test (floats), and, for the data owner only (private
    statistics: show them to the owner or put them in the owner's workbook, never use them as public
    bounds): n_train, n_test, max_row_norm_train, max_abs_y_train, y_range_train (min, max).
    """
    X, y = _as_float(X, "X"), _as_float(y, "y")
    Xtr, ytr, Xte, yte = X[train_idx], y[train_idx], X[test_idx], y[test_idx]
    private = EDPLS(**params, random_state=random_state).fit(Xtr, ytr)
    plain = EDPLS(**{**params, "epsilon": np.inf, "mode": "paper"}).fit(Xtr, ytr)
    pred_p, pred_0 = private.predict(Xte), plain.predict(Xte)
    return {
        "private": private, "plain": plain, "pred_private": pred_p, "pred_plain": pred_0, "y_test": yte,
        "rmsep_private": float(np.sqrt(np.mean((yte - pred_p) ** 2))),
        "rmsep_plain": float(np.sqrt(np.mean((yte - pred_0) ** 2))),
        "sigma_y_test": float(yte.std()),
        "n_train": len(ytr), "n_test": len(yte),
        "max_row_norm_train": float(np.sqrt((Xtr**2).sum(axis=1)).max()),
        "max_abs_y_train": float(np.abs(ytr).max()),
        "y_range_train": (float(ytr.min()), float(ytr.max())),
    }

