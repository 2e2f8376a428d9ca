"""edPLS sweeps: RMSEP against epsilon, the number of components, the preprocessing and the training-set size.

Every sweep prepares the clean part of the fit once (``prepared._Prepared``) and draws R private releases
per setting in one batch; each row's ``status`` column comes from the ledger of the very fit of that row.
The noise comes from ``engine.privacy.noise_generator(random_state)``: fresh by default, a known seed makes
every row "not proven".

The recommended strict estimator (``make_strict_edpls``, issue #18) has its own two: ``rmsep_curve_recommended``
and ``samples_needed_curve_recommended``. Every replicate is the estimator's public ``fit``; a fit on rows drawn
with replacement is ``fit(X_distinct, y_distinct, sample_weight=counts)`` (its releases are sums over rows, so
integer counts give exactly the fit on the materialised rows; tests check it with the same generator).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from sklearn.base import clone

from engine.data.preprocess import CHAIN_INFO, make_chain
from engine.methods.column_checks import frame_names, raise_if_non_numeric, series_name
from engine.methods.edpls.estimator import EDPLS
from engine.methods.edpls.recommended import make_strict_edpls
from engine.methods.edpls.strict import _STRICT_CHUNK_ENTRIES, _strict_postprocess
from engine.privacy import PrivacyLedger, ledger_totals, noise_generator, sample_symmetric_gaussian
from engine.threads import one_blas_thread

__all__ = [
    "chain_caveat",
    "rmsep_curve",
    "rmsep_curve_recommended",
    "rmsep_vs_components",
    "rmsep_vs_preprocessing",
    "samples_needed",
    "samples_needed_curve",
    "samples_needed_curve_recommended",
]


def _rmsep_stats(rmsep: np.ndarray) -> dict:
    r = np.asarray(rmsep, dtype=float)
    r = np.where(np.isfinite(r), r, np.inf)
    fin = r[np.isfinite(r)]
    return {
        "median": float(np.median(r)),
        "q25": float(np.quantile(r, 0.25)),
        "q75": float(np.quantile(r, 0.75)),
        "mean": float(r.mean()) if fin.size == r.size else math.inf,
        "sem": float(r.std(ddof=1) / math.sqrt(r.size)) if r.size > 1 and fin.size == r.size else math.nan,
        "n_failed": int(r.size - fin.size),
    }


def _rmsep_of(out: dict, X_test: np.ndarray, y_test: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        pred = X_test @ out["coef"].T + out["intercept"][None, :]
        return np.sqrt(np.mean((pred - y_test[:, None]) ** 2, axis=0))


def _status_columns(led: PrivacyLedger) -> dict:
    """The guarantee of one fit, from its own ledger (``ledger_totals``): total (epsilon, delta) under
    basic composition, ``epsilon_total`` under the ledger's own ``accountant`` (the fit's budget), ``status``
    ("proven", "not proven", "no privacy") and ``proven``. A fit without
    noise (epsilon = inf) reads "no privacy" with an infinite total epsilon, never "epsilon = 0, proven"."""
    tot = ledger_totals(led, as_json=False)
    if tot["status"] == "no privacy":
        return {"epsilon_total_basic": math.inf, "delta_total_basic": math.nan, "epsilon_total": math.inf,
                "accountant": None, "status": "no privacy", "proven": False}
    eps_b, delta_b = tot["basic"]
    # the total under the accountant the fit was calibrated for (jointly calibrated fits: "gdp", exact)
    acc = getattr(led, "accountant", "basic")
    eps_t = eps_b if acc == "basic" or not 0 < delta_b < 1 else float(led.total(acc, delta_b)[0])
    return {"epsilon_total_basic": eps_b, "delta_total_basic": min(delta_b, 1.0), "epsilon_total": eps_t,
            "accountant": acc, "status": tot["status"], "proven": bool(tot["proven"])}


def _as_float(A, what: str) -> np.ndarray:
    """np.asarray(A, float), or a ValueError naming the non-numeric column (never numpy's bare message)."""
    try:
        return np.asarray(A, dtype=float)
    except (ValueError, TypeError) as exc:
        single = what.startswith("y")
        names = [series_name(A)] if single else frame_names(A)
        raise_if_non_numeric(A, what, names, single=single, cause=exc)
        raise


def _as_test_arrays(est, X_test, y_test):
    X_test = _as_float(X_test, "X_test")
    y_test = _as_float(y_test, "y_test").ravel()
    if X_test.ndim != 2 or X_test.shape[0] != y_test.shape[0]:
        raise ValueError("X_test must be 2-D with as many rows as y_test")
    return X_test, y_test


def _sweep(X_train, y_train, X_test, y_test, epsilons, components, n_replicates, noise, progress,
           params, extra=None, frac=(0.0, 1.0)):
    """noise: ``(generator, seed_known)`` from ``noise_generator``.

    One BLAS thread in both modes (``engine.threads.one_blas_thread``). Strict mode used to keep OpenBLAS's
    threads for its large eigendecompositions (one ``eigh`` of the (m+1) x (m+1) noisy Gram per replicate), and
    that was the 238 s against 22 s of the same 4-chain sweep: multi-threaded OpenBLAS is fast only on idle
    cores. Once anything else runs (another session, a second run of the page, another process), its threads
    spin-wait for cores they do not get, and every call is about ten times slower: measured here, two eigh of
    700 x 700, median 6.8 s with OpenBLAS's 2 threads against 0.57 s with one (2 cores, loaded); 9 eigh of
    1040 x 1040 (the fermentation spectra), 126.5 s against 10.6 s. The page's 4-chain sweep with the recommended
    curve (fermentation, 2 values of ε, 2 replicates) took 208 s with the threads at a load of 12 and 4.5 s on
    nearly idle cores, against 16-38 s and 6.0 s on one thread: no cache was cold, the machine was busy. One thread
    costs at most the second core's share on idle cores. ``bench/bench_sweep.py`` measures the sweep cold, warm
    and beside a second one.
    """
    with one_blas_thread():
        return _sweep_inner(X_train, y_train, X_test, y_test, epsilons, components, n_replicates, noise,
                            progress, params, extra, frac)


def _sweep_inner(X_train, y_train, X_test, y_test, epsilons, components, n_replicates, noise, progress,
                 params, extra=None, frac=(0.0, 1.0)):
    rng, seed_known = noise
    comps = sorted({int(c) for c in components})
    est = EDPLS(**{**params, "n_components": max(comps)})
    prep = est._prepare(X_train, y_train, full_checks=True)
    X_test, y_test = _as_test_arrays(est, X_test, y_test)
    eps_list = [float(e) for e in epsilons]
    total = len(comps) * len(eps_list)
    rows, done = [], 0
    for k in comps:
        clean = prep.draw(k, math.inf, 1, rng, want_scores=False)
        nonprivate = float(_rmsep_of(clean, X_test, y_test)[0])
        for eps in eps_list:
            out = prep.draw(k, eps, int(n_replicates), rng, want_scores=False)
            stats = _rmsep_stats(_rmsep_of(out, X_test, y_test))
            row = {**(extra or {}), "n_components": k, "epsilon": eps, **stats, "nonprivate": nonprivate,
                   "cond_median": float(np.median(out["cond"])), "n_replicates": int(n_replicates),
                   **_status_columns(prep.ledger(k, eps, seed_known=seed_known))}
            rows.append(row)
            done += 1
            if progress is not None:
                lo, hi = frac
                progress(lo + (hi - lo) * done / total, f"k={k}, eps={eps:g}")
    return rows


_CURVE_COLS = ["epsilon", "median", "q25", "q75", "mean", "sem", "nonprivate"]


def rmsep_curve(X_train, y_train, X_test, y_test, epsilons, n_components, n_replicates, *, random_state=None,
                progress=None, **edpls_params) -> pd.DataFrame:
    """RMSEP over R private fits for each epsilon (one split; the clean path is computed once).

    The noise comes from ``noise_generator(random_state)``: fresh by default; a known seed makes
    every row "not proven".

    Columns: epsilon, median, q25, q75, mean, sem, nonprivate (the eps = inf RMSEP), then
    n_failed, cond_median, n_replicates, n_components, epsilon_total_basic, delta_total_basic,
    status ("proven", "not proven", "no privacy": from the ledger of each fit) and proven.
    """
    rows = _sweep(X_train, y_train, X_test, y_test, epsilons, [n_components], n_replicates,
                  noise_generator(random_state), progress, edpls_params)
    df = pd.DataFrame(rows)
    return df[_CURVE_COLS + [c for c in df.columns if c not in _CURVE_COLS]]


def rmsep_vs_components(X_train, y_train, X_test, y_test, components, epsilons, n_replicates, *, random_state=None,
                        progress=None, **edpls_params) -> pd.DataFrame:
    """``rmsep_curve`` for several numbers of components (one clean path for the largest)."""
    rows = _sweep(X_train, y_train, X_test, y_test, epsilons, components, n_replicates,
                  noise_generator(random_state), progress, edpls_params)
    df = pd.DataFrame(rows)
    first = ["n_components", *_CURVE_COLS]
    return df[first + [c for c in df.columns if c not in first]]


def chain_caveat(name: str) -> str | None:
    """The ledger caveat of a preprocessing chain of ``engine.data.preprocess`` fitted on the private
    training rows, or None when the chain learns nothing from them (row-wise steps only).

    A chain that learns from the training rows (MSC's reference, column means or scales) couples every
    transformed row to every private row: one row's change moves all of them, so the per-row
    sensitivity no longer bounds the release. Unknown steps count as learning (conservative).
    """
    steps = [p.strip() for p in str(name).split("+") if p.strip()]
    learned = [p for p in steps if CHAIN_INFO.get(p, {"learns_from_data": True}).get("learns_from_data", True)]
    if not learned:
        return None
    what = "; ".join(f"{p}: {CHAIN_INFO[p]['learned']}" if p in CHAIN_INFO else f"{p}: unknown step" for p in learned)
    return f"not proven: the preprocessing '{name}' was fitted on the private training rows ({what})"


@one_blas_thread()  # see _sweep
def rmsep_vs_preprocessing(chains: dict, X_train, y_train, X_test, y_test, epsilons, n_components, n_replicates, *,
                           random_state=None, progress=None, **edpls_params) -> pd.DataFrame:
    """``rmsep_curve`` after each preprocessing chain, fitted on the training rows only.

    chains: name -> a zero-argument factory returning an (unfitted) transformer/Pipeline, a
    chain name of ``engine.data.preprocess.make_chain``, or a transformer (cloned). A chain that
    learns from the training rows (``chain_caveat``; any transformer or factory, which cannot be
    checked) adds its caveat to the ledger of that chain's fits: those rows read "not proven".
    """
    rng, seed_known = noise_generator(random_state)
    base_caveats = tuple(edpls_params.pop("caveats", ()) or ())
    rows = []
    names = list(chains)
    for i, name in enumerate(names):
        spec = chains[name]
        if isinstance(spec, str):
            tr = make_chain(spec)
            why = chain_caveat(spec)
        else:
            tr = clone(spec) if hasattr(spec, "fit") and hasattr(spec, "transform") else spec()
            why = (f"not proven: the preprocessing '{name}' was fitted on the private training rows (a custom "
                   "transformer: what it learns from them is not known)")
        Xtr = tr.fit_transform(np.asarray(X_train, dtype=float))
        Xte = tr.transform(np.asarray(X_test, dtype=float))
        params = {**edpls_params, "caveats": base_caveats + ((why,) if why else ())}
        rows += _sweep(Xtr, y_train, Xte, y_test, epsilons, [n_components], n_replicates, (rng, seed_known),
                       progress, params, extra={"chain": name}, frac=(i / len(names), (i + 1) / len(names)))
    df = pd.DataFrame(rows)
    first = ["chain", *_CURVE_COLS]
    return df[first + [c for c in df.columns if c not in first]]


@one_blas_thread()  # see _sweep: BLAS threads make a sweep ~10x slower on busy cores
def samples_needed_curve(X_train, y_train, X_test, y_test, sample_sizes, epsilon, n_components, n_replicates, *,
                         random_state=None, progress=None, **edpls_params) -> pd.DataFrame:
    """Strict mode: RMSEP against the training-set size n, by simulation.

    A training set of size n' is simulated by drawing n' rows with replacement from the
    (clipped, scaled) training rows, i.e. the Gram matrix is Z' diag(counts) Z with multinomial
    counts; then the strict mechanism is applied exactly as in a real fit (Analyze-Gauss with
    the same sigma, PLS1 from the noisy moments) and the RMSEP is measured on the test rows.
    The noise part is exact (the noise does not depend on n while the signal grows with n);
    the data part assumes new samples look like the existing ones (growth beyond n repeats
    rows), so read the curve as optimistic. ``nonprivate`` is the median RMSEP of the same
    resampled sets without noise. Noise and resampling draw from ``noise_generator(random_state)``.

    Columns: n, median, q25, q75, mean, sem, nonprivate, n_failed, epsilon, n_components, status
    (the ledger status a real fit with these settings would have).
    """
    params = {**edpls_params, "mode": "strict", "n_components": int(n_components), "epsilon": float(epsilon)}
    est = EDPLS(**params)
    prep = est._prepare(X_train, y_train, full_checks=True)
    X_test, y_test = _as_test_arrays(est, X_test, y_test)
    state = prep.strict
    rng, seed_known = noise_generator(random_state)
    n0, d = state.Z.shape
    k = int(n_components)
    noisy = not math.isinf(float(epsilon))
    sigma = prep.strict_release(float(epsilon)).sigma  # 0 for eps = inf
    status = _status_columns(prep.ledger(k, float(epsilon), seed_known=seed_known))["status"]
    R = int(n_replicates)
    chunk = max(1, min(R, _STRICT_CHUNK_ENTRIES // (d * d)))
    rows = []
    sizes = [int(s) for s in sample_sizes]
    for i, n_new in enumerate(sizes):
        if n_new < 2:
            raise ValueError("sample sizes must be >= 2")
        rm_priv, rm_clean = [], []
        for start in range(0, R, chunk):
            rc = min(chunk, R - start)
            counts = rng.multinomial(n_new, np.full(n0, 1.0 / n0), size=rc).astype(float)
            G0 = np.matmul(state.Z.T[None] * counts[:, None, :], state.Z)
            clean = _strict_postprocess(G0, state, k, noisy=False)
            rm_clean.append(_rmsep_of(clean, X_test, y_test))
            if noisy:
                G = G0 + sample_symmetric_gaussian(sigma, d, rng, rc)
                rm_priv.append(_rmsep_of(_strict_postprocess(G, state, k, noisy=True), X_test, y_test))
            else:
                rm_priv.append(rm_clean[-1])
        stats = _rmsep_stats(np.concatenate(rm_priv))
        rows.append({"n": n_new, **stats, "nonprivate": float(np.median(np.concatenate(rm_clean))),
                     "epsilon": float(epsilon), "n_components": k, "status": status})
        if progress is not None:
            progress((i + 1) / len(sizes), f"n={n_new}")
    df = pd.DataFrame(rows)
    first = ["n", "median", "q25", "q75", "mean", "sem", "nonprivate"]
    return df[first + [c for c in df.columns if c not in first]]


def samples_needed(curve: pd.DataFrame, target: float, stat: str = "median") -> float:
    """Smallest n at which ``curve[stat] <= target`` (log-log interpolation between grid points).

    Returns math.inf when the target is not reached on the simulated grid.
    """
    df = curve.sort_values("n")
    n = df["n"].to_numpy(dtype=float)
    v = df[stat].to_numpy(dtype=float)
    hit = np.nonzero(v <= target)[0]
    if hit.size == 0:
        return math.inf
    i = int(hit[0])
    if i == 0:
        return float(n[0])
    n0, n1, v0, v1 = n[i - 1], n[i], v[i - 1], v[i]
    if not (np.isfinite(v0) and v0 > 0 and v1 > 0) or v0 == v1:
        return float(n1)
    frac = (math.log(target) - math.log(v0)) / (math.log(v1) - math.log(v0))
    return float(math.exp(math.log(n0) + frac * (math.log(n1) - math.log(n0))))



def _recommended_setup(X_train, y_train, X_test, y_test, epsilon, delta, y_range, X_public, x_bound, n_components,
                       params):
    """The estimator and its noise-free twin, the checked training arrays and the test RMSEP of a fitted model."""
    est = make_strict_edpls(epsilon, delta, y_range=y_range, X_public=X_public, x_bound=x_bound,
                            n_components=n_components, **params)
    est._validate_params()
    X_train, y_train = _as_float(X_train, "X_train"), _as_float(y_train, "y_train").ravel()
    X_test, y_test = _as_test_arrays(est, X_test, y_test)
    if X_train.ndim != 2 or X_train.shape[0] != y_train.shape[0] or X_train.shape[0] < 2:
        raise ValueError("X_train must be 2-D with as many rows (at least 2) as y_train")
    free = clone(est).set_params(epsilon=math.inf)

    def rmsep(model):
        with np.errstate(all="ignore"):
            return float(np.sqrt(np.mean((model.predict(X_test) - y_test) ** 2)))

    return est, free, X_train, y_train, rmsep


@one_blas_thread()  # see _sweep: BLAS threads make a sweep ~10x slower on busy cores
def rmsep_curve_recommended(X_train, y_train, X_test, y_test, epsilons, n_replicates, *, delta, y_range,
                            X_public=None, x_bound=None, n_components="auto", random_state=None, progress=None,
                            **params) -> pd.DataFrame:
    """RMSEP of the recommended strict estimator (``make_strict_edpls``) over R private fits for each epsilon.

    Each replicate is the estimator's ``fit`` on the training rows, its noise drawn in order from one
    generator, ``noise_generator(random_state)``.

    Columns: as :func:`rmsep_curve` (epsilon, median, q25, q75, mean, sem, nonprivate: the same estimator
    at epsilon = inf; n_failed, n_replicates, n_components, epsilon_total_basic, delta_total_basic, status,
    proven from the ledger of the last fit at that epsilon).
    """
    rng, _ = noise_generator(random_state)
    rows, eps_list = [], [float(e) for e in epsilons]
    for i, eps in enumerate(eps_list):
        est, free, X_tr, y_tr, rmsep = _recommended_setup(
            X_train, y_train, X_test, y_test, eps, delta, y_range, X_public, x_bound, n_components, params)
        nonprivate = rmsep(free.fit(X_tr, y_tr))
        rm, led = [], PrivacyLedger()
        for _ in range(int(n_replicates)):
            fitted = est.set_params(random_state=rng).fit(X_tr, y_tr)
            rm.append(rmsep(fitted))
            led = fitted.privacy_ledger_
        rows.append({"epsilon": eps, **_rmsep_stats(np.array(rm)), "nonprivate": nonprivate,
                     "n_replicates": int(n_replicates), "n_components": str(n_components), **_status_columns(led)})
        if progress is not None:
            progress((i + 1) / len(eps_list), f"recommended, eps={eps:g}")
    df = pd.DataFrame(rows)
    return df[_CURVE_COLS + [c for c in df.columns if c not in _CURVE_COLS]]


@one_blas_thread()  # see _sweep: BLAS threads make a sweep ~10x slower on busy cores
def samples_needed_curve_recommended(X_train, y_train, X_test, y_test, sample_sizes, epsilon, delta, n_replicates, *,
                                     y_range, X_public=None, x_bound=None, n_components="auto", random_state=None,
                                     progress=None, **params) -> pd.DataFrame:
    """The recommended strict estimator (``make_strict_edpls``): RMSEP against the training-set size n.

    As :func:`samples_needed_curve`: a training set of size n' is n' rows drawn with replacement from the
    training rows, then the estimator's own ``fit`` on the distinct rows with ``sample_weight`` = how often
    each was drawn (its releases are sums over rows, so integer counts are exact): replicate r equals
    ``make_strict_edpls(..., random_state=g).fit(X_train[idx], y_train[idx])`` with ``idx`` the replicate's
    draw from the same generator ``g`` (a test checks it), at the cost of the distinct rows only.
    ``nonprivate`` is the median RMSEP of the same estimator without noise (epsilon = inf) on the same
    resampled sets. Noise and resampling draw from ``noise_generator(random_state)``; read the curve as
    optimistic (new samples are assumed to look like the existing ones).

    Columns: n, median, q25, q75, mean, sem, nonprivate, n_failed, epsilon, n_components, status (from the
    ledgers of the fits).
    """
    est, free, X_train, y_train, rmsep = _recommended_setup(
        X_train, y_train, X_test, y_test, epsilon, delta, y_range, X_public, x_bound, n_components, params)
    rng, _ = noise_generator(random_state)
    est.set_params(random_state=rng)
    status, n0, rows = None, y_train.size, []
    sizes = [int(s) for s in sample_sizes]
    for i, n_new in enumerate(sizes):
        if n_new < 2:
            raise ValueError("sample sizes must be >= 2")
        rm_priv, rm_clean = [], []
        for _ in range(int(n_replicates)):
            counts = np.bincount(rng.integers(0, n0, n_new), minlength=n0)
            fitted = est.fit(X_train, y_train, sample_weight=counts)
            status = _status_columns(fitted.privacy_ledger_)["status"]
            rm_priv.append(rmsep(fitted))
            rm_clean.append(rmsep(free.fit(X_train, y_train, sample_weight=counts)))
        rows.append({"n": n_new, **_rmsep_stats(np.array(rm_priv)), "nonprivate": float(np.median(rm_clean)),
                     "epsilon": float(epsilon), "n_components": str(n_components), "status": status})
        if progress is not None:
            progress((i + 1) / len(sizes), f"n={n_new}")
    df = pd.DataFrame(rows)
    first = ["n", "median", "q25", "q75", "mean", "sem", "nonprivate"]
    return df[first + [c for c in df.columns if c not in first]]
