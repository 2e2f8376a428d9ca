"""The PCA-Gauss page's worker tasks: its release and its sweep.

Run by ``ui.runtime.jobs`` (moved from ``ui.runtime.page_jobs``, the bodies unchanged).
A job's function must be importable by name in a worker process; a page module draws itself when imported.
"""
from __future__ import annotations

import pandas as pd

__all__ = ["pca_gauss_release", "pca_gauss_sweep", "pca_gauss_sweep_point"]


def pca_gauss_release(df: pd.DataFrame, task: str, target: str | None, name: str, **kwargs) -> dict:
    """PCA-Gauss's release report on a table (``arrays_from_frame`` then ``release_report`` with ``kwargs``)."""
    from engine.methods.pca_gauss.utility import arrays_from_frame, release_report

    X, y, features = arrays_from_frame(df, task, target, name=name)
    return release_report(X, y, task, feature_names=features, **kwargs)


def pca_gauss_sweep_point(df: pd.DataFrame, task: str, target: str | None, method: str, P: int, eps: float,
                          mode: str, delta: float | None, alpha: float, K: int, split_seed: int, noise_seed, rep: int,
                          real_sc: float | None, name: str, public: tuple | None, options: dict) -> dict:
    """One (method, ε, replicate) cell of PCA-Gauss's utility sweep: its utility row."""
    import math

    from engine.methods.pca_gauss.utility import METHOD_LABELS, arrays_from_frame, make_split, run_method

    X, y, _ = arrays_from_frame(df, task, target, name=name)
    split = make_split(X, y, task, random_state=split_seed, public=public)
    P_eff = split.X_train.shape[1] if method == "liu" else P
    row = run_method(method, split, P=P_eff, epsilon=eps if method not in ("real", "public_only") else math.inf,
                     alpha=alpha, mode=mode, delta=delta, K=K,
                     random_state=(split_seed, rep, list(METHOD_LABELS).index(method)),
                     noise_seed=noise_seed, real_silhouette=real_sc, **options)
    row.update(epsilon=eps, rep=rep)
    return row


def pca_gauss_sweep(df: pd.DataFrame, task: str, target: str | None, cells: list, progress=None, **point) -> list:
    """Every ``(method, ε, replicate)`` cell of ``cells`` (:func:`pca_gauss_sweep_point` with ``point``'s other
    arguments), ``progress(i / len(cells), text)`` after each; the rows in the cells' order."""
    from engine.methods.pca_gauss.utility import METHOD_LABELS

    rows = []
    for i, (m, e, r) in enumerate(cells, start=1):
        rows.append(pca_gauss_sweep_point(df, task, target, m, eps=float(e), rep=r, **point))
        if progress is not None:
            progress(i / len(cells), f"{i}/{len(cells)}: {METHOD_LABELS[m]}, ε = {e:g}")
    return rows
