"""edPLS evaluation: one private fit beside the non-private one, scored on held-out rows."""
from __future__ import annotations

import numpy as np

from engine.methods.edpls.estimator import EDPLS
from engine.methods.edpls.sweeps import _as_float

__all__ = ["compare_private_plain"]


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
        "n_train": int(len(ytr)), "n_test": int(len(yte)),
        "max_row_norm_train": float(np.sqrt((Xtr**2).sum(axis=1)).max()),
        "max_abs_y_train": float(np.abs(ytr).max()),
        "y_range_train": (float(ytr.min()), float(ytr.max())),
    }

