"""DP-CCA held-out evaluation: the page's defaults, its train/test split and the private-vs-reference fit.

The reference is the non-private CCA of the same training rows through the same preprocessing
(``DPCCA`` at eps = inf: no noise, no regularisation, an empty ledger).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from engine.data.split import split_indices
from engine.methods.contract import Comparison
from engine.methods.dp_cca.estimator import DPCCA, NOT_DP_PROJECTIONS
from engine.methods.dp_cca.metrics import captured_correlation, held_out_correlations, subspace_similarity
from engine.privacy import as_generator
from engine.privacy.wording import ledger_text

__all__ = ["PAGE_DEFAULTS", "compare", "compare_fit", "default_bound", "split_rows"]

#: The page's defaults (pages/dp_cca.py reads them; ``pipeline_audit_case`` reproduces them).
PAGE_DEFAULTS: dict[str, Any] = {"n_rows": 5000, "data_seed": 3, "test_fraction": 0.3, "split_seed": 0,
                                 "n_components": 3, "centring": "private", "calibration": "analytic",
                                 "regularization": "auto"}


def default_bound(dim: int) -> float:
    """The page's default public bound on a view's row norm: 3 sqrt(dim), rounded to 0.1.

    It depends on the number of columns only (public), never on the rows; the user overrides it.
    """
    return float(round(3.0 * math.sqrt(int(dim)), 1))



def split_rows(n: int, test_fraction: float, random_state=None) -> tuple[np.ndarray, np.ndarray]:
    """Random (train, test) row indices; test holds round(test_fraction n) rows (>= 2, leaving >= 2)."""
    n = int(n)
    if not 0 < float(test_fraction) < 1:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    n_test = int(round(float(test_fraction) * n))
    if n_test < 2 or n - n_test < 2:
        raise ValueError(f"{n} rows are too few to hold out {test_fraction:.0%} for testing")
    # engine.data.split cuts one permutation test-first; a Generator keeps this helper's own draws (NumPy's
    # default_rng(seed), not scikit-learn's RandomState), so the same seed gives the same rows as before.
    test, train = split_indices(n, (n_test / n, 1 - n_test / n), random_state=as_generator(random_state))
    return train, test


def compare_fit(X_train, Y_train, X_test, Y_test, **params) -> dict:
    """A private fit and its non-private reference (eps = inf, same preprocessing) on the same rows.

    Returns dict: private (fitted DPCCA), nonprivate (fitted DPCCA), captured (float),
    similarity (dict from ``subspace_similarity``), held_out_private (K,), held_out_nonprivate (K,).
    """
    private = DPCCA(**params).fit(X_train, Y_train)
    reference = DPCCA(**{**params, "epsilon": np.inf}).fit(X_train, Y_train)
    return {
        "private": private,
        "nonprivate": reference,
        "captured": captured_correlation(private, reference, X_test, Y_test),
        "similarity": subspace_similarity(private, reference),
        "held_out_private": held_out_correlations(private.x_weights_, private.y_weights_, X_test, Y_test),
        "held_out_nonprivate": held_out_correlations(reference.x_weights_, reference.y_weights_, X_test, Y_test),
    }



def _views(data, what: str) -> tuple:
    try:
        X, Y = data
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a tuple (X, Y) of the two views") from None
    return X, Y


def compare(train, test, *, epsilon, delta, mode="strict", random_state=None, **params) -> Comparison:
    """The method contract (``engine.methods.contract``): a private DPCCA beside non-private CCA, scored on test.

    Parameters
    ----------
    train, test : tuples (X (n, Dx), Y (n, Dy) or Y (n,)) of the two views, the same columns in both.
    epsilon, delta : the budget of the one release (epsilon = inf: no noise, the private fit is the reference).
    mode : "strict" (public bounds, proven) or "paper" (the poster's data-dependent scaling, not proven).
    random_state : the noise seed of the private fit (None: fresh OS entropy; a seed makes it "not proven").
    params : further DPCCA parameters (n_components, calibration, bounds, centre, regularization). In
        strict mode without any bound the page's public defaults are used: x_bound = ``default_bound(Dx)``,
        y_bound = ``default_bound(Dy)`` (they depend on the number of columns only), and a note says so.

    Returns
    -------
    Comparison: private (fitted DPCCA), reference (fitted DPCCA at eps = inf, same preprocessing), headline
    (the held-out canonical correlation of each pair, private and non-private, the captured correlation and
    the subspace similarity: mean cosine of the principal angles between private and non-private weights,
    1 = the same subspaces), the private fit's ledger (None at eps = inf), its guarantee sentence and notes.
    """
    X_train, Y_train = _views(train, "train")
    X_test, Y_test = _views(test, "test")
    notes = [NOT_DP_PROJECTIONS]
    if mode == "strict" and all(params.get(k) is None for k in ("row_bound", "x_bound", "y_bound")):
        dx, dy = np.shape(X_train)[1], (np.shape(Y_train)[1] if np.ndim(Y_train) == 2 else 1)
        params = {**params, "x_bound": default_bound(dx), "y_bound": default_bound(dy)}
        notes.append(f"No bound was declared: the page's public defaults x_bound = {params['x_bound']:g}, "
                     f"y_bound = {params['y_bound']:g} (3 sqrt(columns)) were used; rows beyond them are clipped.")
    fit = compare_fit(X_train, Y_train, X_test, Y_test, epsilon=epsilon, delta=delta, mode=mode,
                      random_state=random_state, **params)
    private, reference = fit["private"], fit["nonprivate"]
    headline = {}
    for k, (p, r) in enumerate(zip(fit["held_out_private"], fit["held_out_nonprivate"], strict=False), start=1):
        headline[f"held-out correlation {k} (private)"] = float(p)
        headline[f"held-out correlation {k} (non-private)"] = float(r)
    headline["captured correlation (held-out)"] = float(fit["captured"])
    headline["subspace similarity"] = float(fit["similarity"]["angle_cos"])
    ledger = private.privacy_ledger_
    return Comparison(private, reference, headline, ledger if len(ledger) else None, ledger_text(ledger),
                      tuple(notes))
