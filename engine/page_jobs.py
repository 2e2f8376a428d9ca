"""The pages' compositions of engine calls that run as one job on an uploaded data set (``engine.jobs``).

A job's function must be importable by name in a worker process; a page module draws itself when imported, so
what a page composed from engine calls (a sweep over several chains, a fit with its derived tables) lives here.
Each function is the page's former code unchanged, with its ``progress`` reports as ``progress(fraction, text)``.
Nothing here decides what runs where: that is ``engine.jobs.run_upload`` (uploads in a worker, sample sets in the
server process).
"""
from __future__ import annotations

import io

import numpy as np
import pandas as pd

__all__ = [
    "RECOMMENDED_CURVE",
    "dp_cca_fit",
    "dp_cca_sweeps",
    "dp_cca_two_files",
    "edpls_sweep",
    "p3ls_federation",
    "pca_gauss_release",
    "pca_gauss_sweep",
    "pca_gauss_sweep_point",
    "reference_diagnostics",
]

RECOMMENDED_CURVE = "recommended estimator"


def edpls_sweep(X, y, train_idx, test_idx, chain_list, eps, k, reps, params, noise_seed, progress=None,
                recommended=None) -> pd.DataFrame:
    """edPLS's RMSEP sweep: the plain strict (or paper) fit after each chain; with ``recommended``, the declared
    ``(y_range, X_public)`` of the recommended estimator, its curve too, on its own noise stream (a known seed gives
    it a second known stream).

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
    y_range, X_public = recommended
    rec = rmsep_curve_recommended(X[train_idx], y[train_idx], X[test_idx], y[test_idx], eps, reps,
                                  delta=params["delta"], calibration=params["calibration"],
                                  y_range=y_range, X_public=X_public,
                                  random_state=None if noise_seed is None else np.random.SeedSequence([noise_seed, 1]),
                                  progress=part(1))
    rec.insert(0, "chain", RECOMMENDED_CURVE)
    out = pd.concat([rec, curves], ignore_index=True)
    out["n_components"] = out["n_components"].astype(str)  # "auto" beside the plain fits' k
    return out


def dp_cca_two_files(x_bytes: bytes, x_name: str, y_bytes: bytes, y_name: str) -> tuple:
    """DP-CCA's two uploaded views (``load_two_view_files``): (X, Y) frames, or DataError naming the file."""
    from engine.data import load_two_view_files

    def upload(data, name):
        buf = io.BytesIO(data)
        buf.name, buf.size = name, len(data)
        return buf

    pair = load_two_view_files(upload(x_bytes, x_name), upload(y_bytes, y_name), x_name, y_name)
    return pair.X, pair.Y


def dp_cca_fit(X: pd.DataFrame, Y: pd.DataFrame, test_fraction: float, split_seed: int, params: tuple,
               noise_seed: int | None) -> dict:
    """DP-CCA's private fit and its non-private reference on a row split (``split_seed``: rows, not a release),
    with the first pair's weights and the training scores. X : (n, p), Y : (n, q)."""
    from engine.methods.dp_cca import compare_fit, first_pair_weights, split_rows

    train, test = split_rows(len(X), test_fraction, split_seed)
    Xa, Ya = X.to_numpy(dtype=float), Y.to_numpy(dtype=float)
    out = compare_fit(Xa[train], Ya[train], Xa[test], Ya[test], random_state=noise_seed, **dict(params))
    out["weights"] = first_pair_weights(out["private"], out["nonprivate"])
    out["n_train"], out["n_test"] = len(train), len(test)
    out["train_scores"] = out["private"].transform(Xa[train], Ya[train])
    return out


def dp_cca_sweeps(X: pd.DataFrame, Y: pd.DataFrame, test_fraction: float, split_seed: int, params: dict,
                  epsilon: float, delta: float, n_replicates: int, noise_seed: int | None, eps_grid: tuple,
                  delta_grid: tuple, progress=None) -> pd.DataFrame:
    """The DP-CCA poster's three sweeps (ε over ``eps_grid``, N, δ over ``delta_grid``), progress in thirds.
    ``split_seed``: rows and subsets; ``noise_seed``: None (fresh noise) or the teaching switch's known seed."""
    from engine.methods.dp_cca import (
        sample_size_grid,
        split_rows,
        summarise_sweep,
        sweep_delta,
        sweep_epsilon,
        sweep_n_samples,
    )

    train, test = split_rows(len(X), test_fraction, split_seed)
    Xa, Ya = X.to_numpy(dtype=float), Y.to_numpy(dtype=float)
    args = (Xa[train], Ya[train], Xa[test], Ya[test])
    common = dict(n_replicates=n_replicates, epsilon=epsilon, delta=delta, random_state=split_seed,
                  noise_random_state=noise_seed, **params)
    parts = []
    for i, (name, fn, grid) in enumerate((
            ("ε", sweep_epsilon, eps_grid), ("N", sweep_n_samples, sample_size_grid(len(train))),
            ("δ", sweep_delta, delta_grid))):
        def report(fraction, message, i=i, name=name):
            if progress is not None:
                progress(min(1.0, (i + fraction) / 3), f"Sweep over {name}: {message}")
        parts.append(fn(*args, grid, progress=report, **common))
    return summarise_sweep(pd.concat(parts, ignore_index=True))


def pca_gauss_release(df: pd.DataFrame, task: str, target: str | None, name: str, **kwargs) -> dict:
    """PCA-Gauss's release report on a table (``arrays_from_frame`` then ``release_report`` with ``kwargs``)."""
    from engine.methods.synthetic_utility import arrays_from_frame, release_report

    X, y, features = arrays_from_frame(df, task, target, name=name)
    return release_report(X, y, task, feature_names=features, **kwargs)


def pca_gauss_sweep_point(df: pd.DataFrame, task: str, target: str | None, method: str, P: int, eps: float,
                          mode: str, delta: float | None, alpha: float, K: int, split_seed: int, noise_seed, rep: int,
                          real_sc: float | None, name: str, public: tuple | None, options: dict) -> dict:
    """One (method, ε, replicate) cell of PCA-Gauss's utility sweep: its utility row."""
    import math

    from engine.methods.synthetic_utility import METHOD_LABELS, arrays_from_frame, make_split, run_method

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
    from engine.methods.synthetic_utility import METHOD_LABELS

    rows = []
    for i, (m, e, r) in enumerate(cells, start=1):
        rows.append(pca_gauss_sweep_point(df, task, target, m, eps=float(e), rep=r, **point))
        if progress is not None:
            progress(i / len(cells), f"{i}/{len(cells)}: {METHOD_LABELS[m]}, ε = {e:g}")
    return rows


def p3ls_federation(df: pd.DataFrame, party_columns: tuple, responses: tuple, label_holder: int, k_max: int,
                    split_seed: int, secure_aggregation: bool, block_size: int | None, file: str) -> dict:
    """Everything the P3LS page shows, from one protocol run (``split_seed``: the row split only; the masks come
    from fresh OS entropy)."""
    from engine.methods.p3ls import blocks_from_frame, coefficient_frame, compare_models, leakage_report, owner_sheets

    blocks, Y, names, column_names = blocks_from_frame(df, dict(party_columns), responses, file=file)
    comparison = compare_models(blocks, Y, label_holder=label_holder, k_max=k_max, party_names=names,
                                kpi_names=list(responses), row_mask_block_size=block_size,
                                secure_aggregation=secure_aggregation, random_state=split_seed)
    fed = comparison.federated
    test_rows = comparison.split[2]
    relevance_train = fed.relevance()
    relevance_test = fed.relevance([b[test_rows] for b in blocks], Y[test_rows])
    relevance = {"training rows": relevance_train.table, "test rows": relevance_test.table}
    return {
        "overall": comparison.overall,
        "per_kpi": comparison.per_kpi,
        "validation": comparison.validation,
        "equivalence": comparison.equivalence,
        "messages": fed.log_.to_frame(),
        "volume": fed.log_.volume(),
        "roles": [fed.authority_.name, *[h.name for h in fed.holders_], fed.server_.name],
        "holdings": fed.holdings(),
        "leakage": leakage_report(fed),
        "coefficients": coefficient_frame(fed, column_names, list(responses)),
        "relevance": relevance,
        "r2_y": relevance_train.r2_y,
        "r2_x": relevance_train.r2_x_total,
        "sizes": {"train": len(comparison.split[0]), "validation": len(comparison.split[1]), "test": len(test_rows)},
        "owner_sheets": owner_sheets(comparison, column_names, relevance),
    }


def reference_diagnostics(X_train, y_train, X_test, k: int, method: str, train_rows, test_rows) -> tuple:
    """The chemometric staples' reference fit (PLS or PCR, ``k`` components): its loadings, VIP (PLS only) and
    T² / Q diagnostics. X_train : (n_train, m), y_train : (n_train,), X_test : (n_test, m)."""
    from engine.methods.chemometrics import fit_reference, outlier_diagnostics, reference_loadings, vip

    model = fit_reference(X_train, y_train, k, method)
    return (reference_loadings(model), vip(model) if method == "pls" else None,
            outlier_diagnostics(model, X_train, X_test, train_rows=train_rows, test_rows=test_rows))
