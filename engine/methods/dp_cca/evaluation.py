"""DP-CCA held-out evaluation: the page's defaults, its train/test split and the private-vs-reference fit.

The reference is the non-private CCA of the same training rows through the same preprocessing
(``DPCCA`` at eps = inf: no noise, no regularisation, an empty ledger).
"""
from __future__ import annotations

import math

import numpy as np

from engine.methods.dp_cca.estimator import DPCCA
from engine.methods.dp_cca.metrics import captured_correlation, held_out_correlations, subspace_similarity
from engine.privacy import as_generator

__all__ = ["PAGE_DEFAULTS", "compare_fit", "default_bound", "split_rows"]

#: The page's defaults (pages/dp_cca.py reads them; ``pipeline_audit_case`` reproduces them).
PAGE_DEFAULTS = {"n_rows": 5000, "data_seed": 3, "test_fraction": 0.3, "split_seed": 0, "n_components": 3,
                 "centring": "private", "calibration": "analytic", "regularization": "auto"}


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
    perm = as_generator(random_state).permutation(n)
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


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

