"""The edPLS page's worker task: its RMSEP sweep.

Run by ``ui.runtime.jobs`` (moved from ``ui.runtime.page_jobs``, the bodies unchanged).
A job's function must be importable by name in a worker process; a page module draws itself when imported.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["RECOMMENDED_CURVE", "edpls_sweep"]


RECOMMENDED_CURVE = "recommended estimator"


def edpls_sweep(X, y, train_idx, test_idx, chain_list, eps, k, reps, params, noise_seed, progress=None,
                recommended=None) -> pd.DataFrame:
    """edPLS's RMSEP sweep: the plain strict (or paper) fit after each chain; with ``recommended``, the declared
    ``(y_range, X_public[, preprocessing])`` of the recommended estimator (the page's chain), its curve too, on its
    own noise stream (a known seed gives it a second known stream).

    X : (n, m) spectra; y : (n,); train_idx, test_idx : row indices; returns one row per (curve, ε, replicate set).
    """
    from engine.methods.edpls import rmsep_vs_preprocessing
    from engine.methods.edpls.sweeps import rmsep_curve_recommended

    parts = 2 if recommended is not None else 1

    def part(i):
        return None if progress is None else (lambda f, msg: progress((i + f) / parts, msg))

    curves = rmsep_vs_preprocessing({c: c for c in chain_list}, X[train_idx], y[train_idx], X[test_idx],
                                    y[test_idx], eps, k, reps, random_state=noise_seed, progress=part(0), **params)
    if recommended is None:
        return curves
    y_range, X_public, *chain = recommended  # the chain is optional: the estimator's default without it
    preprocessing = chain[0] if chain else "snv+sg1"
    rec = rmsep_curve_recommended(X[train_idx], y[train_idx], X[test_idx], y[test_idx], eps, reps,
                                  delta=params["delta"], calibration=params["calibration"],
                                  y_range=y_range, X_public=X_public, preprocessing=preprocessing,
                                  random_state=None if noise_seed is None else np.random.SeedSequence([noise_seed, 1]),
                                  progress=part(1))
    rec.insert(0, "chain", RECOMMENDED_CURVE)
    out = pd.concat([rec, curves], ignore_index=True)
    out["n_components"] = out["n_components"].astype(str)  # "auto" beside the plain fits' k
    return out
