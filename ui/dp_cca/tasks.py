"""The DP-CCA page's worker tasks: its two uploaded views, its fit and its sweeps.

Run by ``ui.runtime.jobs`` (moved from ``ui.runtime.page_jobs``, the bodies unchanged).
A job's function must be importable by name in a worker process; a page module draws itself when imported.
"""
from __future__ import annotations

import io

import pandas as pd

__all__ = ["dp_cca_fit", "dp_cca_sweeps", "dp_cca_two_files"]


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
