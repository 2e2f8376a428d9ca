"""DP-CCA: the poster's three sweeps (utility against epsilon, N and delta), batched over replicates.

Sweeps over eps, N and delta draw R replicates at once (``sample_symmetric_gaussian(..., n_replicates=R)``)
from one prepared data set; every row of a sweep carries the ``status`` of its own ledger ("proven",
"not proven", or "no privacy" at eps = inf). The data seed (row subsets) and the noise seed are separate
(``random_state`` / ``noise_random_state``).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_array

from engine.methods.dp_cca.core import _Prepared, as_view
from engine.methods.dp_cca.estimator import DPCCA
from engine.methods.dp_cca.metrics import _cov_blocks, _mean_cos, _pair_correlations
from engine.privacy import as_generator, noise_generator

__all__ = ["SWEEP_PARAMETERS", "sample_size_grid", "summarise_sweep", "sweep_delta", "sweep_epsilon",
           "sweep_n_samples", "utility_sweep"]

#: The three sweep parameters of the poster's figures.
SWEEP_PARAMETERS = ("epsilon", "n_samples", "delta")


def _evaluate(models: dict, ref: dict, test_cov) -> dict:
    """Per replicate: captured correlation and subspace similarity against the reference fit."""
    Sxx, Syy, Sxy = test_cov
    corr_p = _pair_correlations(models["U"], models["V"], Sxx, Syy, Sxy)  # (R, K)
    corr_r = _pair_correlations(ref["U"][0], ref["V"][0], Sxx, Syy, Sxy)  # (K,)
    R = corr_p.shape[0]
    cx = np.array([_mean_cos(models["U"][r], ref["U"][0]) for r in range(R)])
    cy = np.array([_mean_cos(models["V"][r], ref["V"][0]) for r in range(R)])
    return {
        "captured": corr_p.sum(axis=1) / corr_r.sum(),
        "angle_cos": 0.5 * (cx + cy), "angle_cos_x": cx, "angle_cos_y": cy,
        "corr_sum_private": corr_p.sum(axis=1), "corr_sum_reference": np.full(R, corr_r.sum()),
        "rho1_private": models["rho"][:, 0], "indefinite": models["indefinite"].astype(bool),
    }


def _as_arrays(X, Y, name):
    X = check_array(X, dtype=np.float64, ensure_min_samples=2, input_name=f"X_{name}")
    Y = check_array(as_view(Y, f"Y_{name}")[0], dtype=np.float64, ensure_min_samples=2, input_name=f"Y_{name}")
    if X.shape[0] != Y.shape[0]:
        raise ValueError(f"X_{name} and Y_{name} must have the same number of rows")
    return X, Y


def utility_sweep(X_train, Y_train, X_test, Y_test, parameter: str, values, *, n_replicates: int = 20,
                  epsilon: float = 1.0, delta: float = 1e-5, n_samples: int | None = None, random_state=None,
                  noise_random_state=None, progress=None, **params) -> pd.DataFrame:
    """Utility of R private fits for each value of one parameter (the poster's figures).

    Parameters
    ----------
    X_train (N, Dx), Y_train (N, Dy) : rows the models are fitted on.
    X_test (M, Dx), Y_test (M, Dy) : held-out rows for the captured correlation.
    parameter : "epsilon", "n_samples" or "delta"; ``values`` its grid.
    epsilon, delta, n_samples : the values of the two parameters not swept (n_samples None =
        all training rows). For "n_samples", every replicate fits a fresh random subset of N
        training rows (and its own non-private reference); otherwise one prepared data set is
        reused and the R noise matrices are drawn at once.
    params : DPCCA parameters (n_components, mode, calibration, bounds, regularization).
    random_state : seed of the row subsets (data, not noise).
    noise_random_state : None (fresh OS entropy, the default) or a known noise seed (every row's
        status is then "not proven").
    progress : callable(fraction in [0, 1], message) or None.

    Returns
    -------
    Long DataFrame, one row per value and replicate: parameter, value, replicate, epsilon, delta,
    n_samples, tau, calibration, regularization, captured, angle_cos, angle_cos_x, angle_cos_y,
    corr_sum_private, corr_sum_reference, rho1_private, indefinite, status (the ledger status of
    that fit: "proven", "not proven", or "no privacy" at eps = inf).
    """
    if parameter not in SWEEP_PARAMETERS:
        raise ValueError(f"parameter must be one of {SWEEP_PARAMETERS}, got {parameter!r}")
    X_train, Y_train = _as_arrays(X_train, Y_train, "train")
    X_test, Y_test = _as_arrays(X_test, Y_test, "test")
    if X_test.shape[1] != X_train.shape[1] or Y_test.shape[1] != Y_train.shape[1]:
        raise ValueError("the held-out views must have the same columns as the training views")
    R = int(n_replicates)
    if R < 1:
        raise ValueError("n_replicates must be >= 1")
    values = list(values)
    if not values:
        raise ValueError("values must not be empty")
    n_train = X_train.shape[0]
    n_fixed = n_train if n_samples is None else int(n_samples)
    if parameter == "n_samples":
        bad = [v for v in values if not (2 <= int(v) <= n_train)]
        if bad:
            raise ValueError(f"sample sizes {bad} are outside 2..{n_train} (the training rows available)")
        # the whole training set once (constant, duplicate columns); the row subsets then only get value checks
        DPCCA(**{**params, "random_state": None})._validate_xy(X_train, Y_train)
    elif not 2 <= n_fixed <= n_train:
        raise ValueError(f"n_samples={n_fixed} is outside 2..{n_train}")
    test_cov = _cov_blocks(X_test, Y_test)
    rng = as_generator(random_state)  # row subsets only
    noise_rng, seed_known = noise_generator(noise_random_state)
    base = DPCCA(**{**params, "random_state": None})
    rows = []
    shared: tuple[_Prepared, np.ndarray, dict] | None = None  # (prep, G, ref) of the one data set, n fixed
    if parameter != "n_samples":
        idx = np.arange(n_train) if n_fixed == n_train else rng.choice(n_train, n_fixed, replace=False)
        est = _with_params(base, epsilon=epsilon, delta=delta)
        prep = est._prepare(X_train[idx], Y_train[idx], full_checks=True)
        G = prep.gram()
        ref = est._models(prep, G[None], est._lambda(0.0, prep.D), clean=True)
        shared = (prep, G, ref)
    for i, value in enumerate(values):
        eps = float(value) if parameter == "epsilon" else float(epsilon)
        dlt = float(value) if parameter == "delta" else float(delta)
        if parameter == "n_samples":
            n_i = int(value)
            est = _with_params(base, epsilon=eps, delta=dlt)
            results = []
            for r in range(R):
                sub = np.arange(n_train) if n_i == n_train else rng.choice(n_train, n_i, replace=False)
                prep = est._prepare(X_train[sub], Y_train[sub])
                G = prep.gram()
                noise = est._noise(prep.n)
                ref = est._models(prep, G[None], est._lambda(0.0, prep.D), clean=True)
                ledger = est._new_ledger(seed_known)  # each replicate is a fit of its own: the last one's status
                models = est._models(prep, est._draw(prep, noise, 1, noise_rng, G, ledger=ledger),
                                     est._lambda(noise["tau"], prep.D))
                results.append(_evaluate(models, ref, test_cov))
                if progress is not None:
                    progress((i + (r + 1) / R) / len(values), f"N = {n_i}: replicate {r + 1}/{R}")
            res = {k: np.concatenate([np.atleast_1d(x[k]) for x in results]) for k in results[0]}
        else:
            assert shared is not None  # built above for every parameter but n_samples
            prep, G, ref = shared
            est = _with_params(base, epsilon=eps, delta=dlt)
            noise = est._noise(prep.n)
            ledger = est._new_ledger(seed_known)
            models = est._models(prep, est._draw(prep, noise, R, noise_rng, G, ledger=ledger),
                                 est._lambda(noise["tau"], prep.D))
            res = _evaluate(models, ref, test_cov)
            n_i = prep.n
            if progress is not None:
                progress((i + 1) / len(values), f"{parameter} = {value:g}")
        noise = est._noise(n_i)
        status = ledger.status  # recorded by the draw of this very fit
        for r in range(R):
            rows.append({
                "parameter": parameter, "value": float(value), "replicate": r, "epsilon": eps, "delta": dlt,
                "n_samples": n_i, "tau": noise["tau"], "calibration": noise["calibration"],
                "regularization": est._lambda(noise["tau"], X_train.shape[1] + Y_train.shape[1]),
                **{k: (bool(v[r]) if k == "indefinite" else float(v[r])) for k, v in res.items()},
                "status": status,
            })
    return pd.DataFrame(rows)


def _with_params(est: DPCCA, **changes) -> DPCCA:
    """A new DPCCA with the same parameters except ``changes`` (sklearn.clone without deep copies)."""
    return DPCCA(**{**est.get_params(deep=False), **changes})


def sweep_epsilon(X_train, Y_train, X_test, Y_test, epsilons=(0.1, 0.25, 0.5, 1, 2, 4, 8), **kwargs) -> pd.DataFrame:
    """``utility_sweep`` over epsilon (spec grid by default)."""
    return utility_sweep(X_train, Y_train, X_test, Y_test, "epsilon", epsilons, **kwargs)


def sweep_n_samples(X_train, Y_train, X_test, Y_test, sample_sizes=(500, 1000, 2000, 5000, 10000, 50000),
                    **kwargs) -> pd.DataFrame:
    """``utility_sweep`` over the number of training rows N (random subsets per replicate)."""
    return utility_sweep(X_train, Y_train, X_test, Y_test, "n_samples", sample_sizes, **kwargs)


def sweep_delta(X_train, Y_train, X_test, Y_test, deltas=(1e-6, 1e-5, 1e-4, 1e-3, 1e-2), **kwargs) -> pd.DataFrame:
    """``utility_sweep`` over delta (spec grid by default)."""
    return utility_sweep(X_train, Y_train, X_test, Y_test, "delta", deltas, **kwargs)


def summarise_sweep(long: pd.DataFrame) -> pd.DataFrame:
    """Mean, sd, quartiles per swept value of captured correlation and subspace similarity.

    Columns: parameter, value, n_replicates, tau, captured_mean, captured_sd, captured_q25,
    captured_q75, angle_cos_mean, angle_cos_sd, angle_cos_q25, angle_cos_q75, indefinite_share, status
    (the fits' ledger status: "proven", "not proven" or "no privacy"; "mixed" if they differ).
    """
    rows = []
    for (param, value), part in long.groupby(["parameter", "value"], sort=True):
        row = {"parameter": param, "value": value, "n_replicates": len(part), "tau": float(part["tau"].iloc[0])}
        for m in ("captured", "angle_cos"):
            x = part[m].to_numpy(dtype=float)
            row[f"{m}_mean"] = float(np.nanmean(x))
            row[f"{m}_sd"] = float(np.nanstd(x, ddof=1)) if len(x) > 1 else 0.0
            row[f"{m}_q25"] = float(np.nanquantile(x, 0.25))
            row[f"{m}_q75"] = float(np.nanquantile(x, 0.75))
        row["indefinite_share"] = float(part["indefinite"].mean())
        statuses = set(part["status"])
        row["status"] = statuses.pop() if len(statuses) == 1 else "mixed"
        rows.append(row)
    return pd.DataFrame(rows)



def sample_size_grid(n_train: int, grid=(20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000)) -> list:
    """Sample sizes for the N sweep: the grid values below n_train, then n_train itself."""
    n_train = int(n_train)
    return [int(v) for v in grid if v < n_train] + [n_train]

