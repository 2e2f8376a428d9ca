"""DP-PCR beside its references: the method contract's ``compare`` and RMSEP-vs-epsilon beside strict edPLS.

- :func:`compare`: one private fit and the non-private reference (scikit-learn's ``PCA`` +
  ``LinearRegression``), both scored on the test rows (``engine.methods.contract.Comparison``).
- :func:`rmsep_vs_epsilon`: RMSEP over replicate private fits per epsilon, for DP-PCR AND strict edPLS on
  the same split with the same public bounds and centring, the question chemometricians ask first
  ("PCR or PLS at my budget?"). DP-PCR's replicates share one Gram matrix (only the noise and the
  eigen-decompositions are per replicate); edPLS's come from ``engine.methods.edpls.rmsep_curve``.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.decomposition import PCA
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import make_pipeline

from engine.methods.contract import Comparison
from engine.methods.edpls import rmsep_curve as edpls_rmsep_curve
from engine.privacy import ledger_totals, noise_generator, resolve_calibration
from engine.privacy.wording import ledger_text
from engine.threads import one_blas_thread

from .estimator import DPPCR, pcr_from_moments

__all__ = ["CURVE_COLUMNS", "METHOD_LABELS", "compare", "reference_coefficients", "reference_model",
           "rmsep_vs_epsilon", "scores"]

#: The method column of :func:`rmsep_vs_epsilon`.
METHOD_LABELS = {"pcr": "DP-PCR", "pls": "edPLS (strict)"}
#: Columns of :func:`rmsep_vs_epsilon`, in order.
CURVE_COLUMNS = ["method", "epsilon", "median", "q25", "q75", "mean", "sem", "nonprivate", "n_failed",
                 "n_replicates", "n_components", "status"]


def reference_model(n_components: int):
    """The non-private reference: ``make_pipeline(PCA(k), LinearRegression())`` (unfitted)."""
    return make_pipeline(PCA(int(n_components)), LinearRegression())


def reference_coefficients(pipe) -> tuple[np.ndarray, float]:
    """(coef (m,), intercept) of a fitted PCA + LinearRegression pipeline in the units of X."""
    pca, lr = pipe[0], pipe[-1]
    coef = pca.components_.T @ lr.coef_
    return coef, float(lr.intercept_ - coef @ pca.mean_)


def _arrays(data, what: str):
    X, y = data
    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float).ravel()
    if X.ndim != 2 or X.shape[0] != y.shape[0]:
        raise ValueError(f"{what}: X must be 2-D with as many rows as y")
    return X, y


def scores(y_true, y_pred) -> tuple[float, float]:
    """(RMSEP, R²) of predictions on test rows."""
    y_true, y_pred = np.asarray(y_true, dtype=float), np.asarray(y_pred, dtype=float)
    rmsep = float(np.sqrt(np.mean((y_true - y_pred) ** 2)))
    ss = float(np.sum((y_true - y_true.mean()) ** 2))
    return rmsep, (1.0 - float(np.sum((y_true - y_pred) ** 2)) / ss) if ss > 0 else math.nan


def compare(train, test, *, epsilon, delta, mode: str = "strict", random_state=None, **params) -> Comparison:
    """DP-PCR fitted on ``train = (X, y)`` beside PCA + LinearRegression, both scored on ``test``.

    Parameters
    ----------
    train, test : tuples (X (n, m), y (n,)).
    epsilon, delta : the budget of the private fit.
    mode : "strict" (DP-PCR has no other mode).
    random_state : the private fit's noise (None: fresh OS entropy; a value: a known seed, not proven).
    **params : the other ``DPPCR`` parameters (n_components, x_bound, y_bound, ...).

    Returns
    -------
    Comparison with headline "RMSEP (private)", "RMSEP (non-private)", "R² (private)", "R² (non-private)".
    """
    if mode != "strict":
        raise ValueError(f"DP-PCR has one mode, 'strict'; got {mode!r}")
    Xtr, ytr = _arrays(train, "train")
    Xte, yte = _arrays(test, "test")
    private = DPPCR(epsilon=epsilon, delta=delta, random_state=random_state, **params).fit(Xtr, ytr)
    reference = reference_model(private.n_components_).fit(Xtr, ytr)
    rm_p, r2_p = scores(yte, private.predict(Xte))
    rm_0, r2_0 = scores(yte, reference.predict(Xte))
    led = private.privacy_ledger_
    headline = {"RMSEP (private)": rm_p, "RMSEP (non-private)": rm_0, "R² (private)": r2_p, "R² (non-private)": r2_0}
    return Comparison(private, reference, headline, led, ledger_text(led), tuple(led.caveats))


# ============================================================================ RMSEP vs epsilon
def _rmsep_columns(rmsep: np.ndarray) -> dict:
    """Median, quartiles, mean and its standard error of replicate RMSEPs (a failed fit counts as inf)."""
    r = np.where(np.isfinite(rmsep), rmsep, np.inf)
    ok = bool(np.isfinite(r).all())
    q25, median, q75 = (float(v) for v in np.quantile(r, [0.25, 0.5, 0.75]))
    sem = float(r.std(ddof=1) / math.sqrt(r.size)) if ok and r.size > 1 else math.nan
    return {"median": median, "q25": q25, "q75": q75, "mean": float(r.mean()) if ok else math.inf, "sem": sem,
            "n_failed": int((~np.isfinite(r)).sum())}


def _test_rmsep(out: dict, X_test: np.ndarray, y_test: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        pred = X_test @ out["coef"].T + out["intercept"][None, :]
        return np.sqrt(np.mean((pred - y_test[:, None]) ** 2, axis=0))


def _pcr_rows(est: DPPCR, train, test, eps_list, R: int, noise, progress) -> list[dict]:
    X_test, y_test = test
    prep, (rng, seed_known) = est._prepare(*train), noise
    G0, k = prep.gram(), est.n_components_
    nonprivate = float(_test_rmsep(pcr_from_moments(G0[None], prep, k), X_test, y_test)[0])
    rows = []
    for i, eps in enumerate(eps_list):
        fit = clone(est).set_params(epsilon=eps)
        fit._check_cross_params()
        release = fit._release(prep)
        rm = np.concatenate([_test_rmsep(pcr_from_moments(G, prep, k), X_test, y_test)
                             for G in release.iter_noisy(G0, R, rng)])
        status = ledger_totals(fit._replicate_ledger(prep, release, seed_known=seed_known))["status"]
        rows.append({"method": METHOD_LABELS["pcr"], "epsilon": eps, **_rmsep_columns(rm), "nonprivate": nonprivate,
                     "n_replicates": R, "n_components": k, "status": status})
        if progress is not None:
            progress(0.5 * (i + 1) / len(eps_list), f"DP-PCR, ε = {eps:g}")
    return rows


def _edpls_params(est: DPPCR) -> dict:
    """The strict edPLS parameters that mean the same as this DP-PCR's (bounds, centre, source, caveats)."""
    params = dict(mode="strict", delta=est.delta, x_bound=est.x_bound, y_bound=est.y_bound, centering=est.centring,
                  x_center=est.x_center, y_center=est.y_center, sensitivity_source=est.sensitivity_source)
    if est.caveats:
        params["caveats"] = tuple(est.caveats)
    return params


def _pls_rows(est: DPPCR, train: tuple[np.ndarray, np.ndarray], test: tuple[np.ndarray, np.ndarray], eps_list,
              R: int, noise, progress) -> list[dict]:
    """Strict edPLS at each epsilon; its calibration resolved per epsilon by the one rule."""
    by_cal: dict = {}
    for eps in eps_list:
        cal = "analytic" if math.isinf(eps) else resolve_calibration(est.calibration, eps)
        by_cal.setdefault(cal, []).append(eps)
    frames = []
    for j, (cal, group) in enumerate(by_cal.items()):
        def step(f, msg, j=j):
            if progress is not None:
                progress(0.5 + 0.5 * (j + f) / len(by_cal), f"edPLS, {msg}")

        with one_blas_thread():  # edPLS strict's k x k solves per replicate: as for DP-PCR, one thread is faster
            frames.append(edpls_rmsep_curve(*train, *test, group, est.n_components_, R, random_state=noise[0],
                                            progress=step, calibration=cal, **_edpls_params(est)))
    df = pd.concat(frames, ignore_index=True).sort_values("epsilon", kind="stable")
    df["method"] = METHOD_LABELS["pls"]
    return df.to_dict("records")


def rmsep_vs_epsilon(X_train, y_train, X_test, y_test, epsilons, n_components: int, n_replicates: int, *,
                     random_state=None, progress=None, **params) -> pd.DataFrame:
    """RMSEP over replicate private fits per epsilon, DP-PCR and strict edPLS on the same split and bounds.

    Parameters
    ----------
    X_train (n, m), y_train (n,), X_test, y_test : one split.
    epsilons : iterable of float > 0 (np.inf: the non-private fit, status "no privacy").
    n_components : k for both methods.
    n_replicates : private fits per epsilon and method.
    random_state : the noise of every fit (None: fresh OS entropy; a value: a known seed, every row "not proven").
    progress : optional callback ``progress(fraction, message)``.
    **params : the other ``DPPCR`` parameters (x_bound, y_bound, delta, calibration, centring, x_center,
        y_center, sensitivity_source, caveats); edPLS gets the same ones (its calibration resolved per epsilon
        by ``resolve_calibration``).

    Returns
    -------
    DataFrame with columns :data:`CURVE_COLUMNS`: method ("DP-PCR" or "edPLS (strict)"), epsilon, median, q25,
    q75, mean, sem (of the test RMSEP over replicates), nonprivate (the same method without noise), n_failed,
    n_replicates, n_components, status (each fit's own ledger: "proven", "not proven" or "no privacy").
    """
    est = DPPCR(n_components=int(n_components), **params)
    train = (np.asarray(X_train, dtype=float), np.asarray(y_train, dtype=float))
    test = _arrays((X_test, y_test), "test")
    eps_list = sorted(float(e) for e in epsilons)
    if not eps_list or min(eps_list) <= 0:
        raise ValueError("the epsilon grid must be numbers > 0 (np.inf for no noise)")
    R = int(n_replicates)
    if R < 1:
        raise ValueError("n_replicates must be >= 1")
    noise = noise_generator(random_state)
    rows = _pcr_rows(est, train, test, eps_list, R, noise, progress)
    rows += _pls_rows(est, train, test, eps_list, R, noise, progress)
    return pd.DataFrame(rows)[CURVE_COLUMNS]
