"""Forecast scoring of the collaborative VAR (spec 6.3) and the defences compared on the same forecasts.

Rolling-origin h-step forecasts with fixed coefficients, each owner's local AR as the baseline, MAE /
RMSE per owner and the gain over AR; :func:`defence_comparison` runs one defence at one strength on
the same test rows and :func:`noise_sweep` traces accuracy against ε. Hand-written: the spec's
evaluation protocol (statsmodels' forecasts are the tests' oracle). No streamlit here.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.privacy import noise_generator
from engine.threads import one_blas_thread

from .defence import NoiseRelease, naive_noisy_design, noise_defence
from .estimator import CollaborativeVAR
from .layout import coefs_from_owner_major, normalise_lags
from .transforms import orthogonal_rows_demo, post_multiplication_demo

__all__ = [
    "DEFENCES",
    "ForecastEvaluation",
    "defence_comparison",
    "evaluate_forecasts",
    "local_ar_forecasts",
    "noise_sweep",
    "var_forecasts",
]


def var_forecasts(model: CollaborativeVAR, Y_inputs: np.ndarray, target_rows: np.ndarray,
                  horizon: int = 1) -> np.ndarray:
    """h-step forecasts of the rows ``target_rows`` of Y from inputs up to row t - h (rolling
    origin, fixed coefficients, recursive for h > 1). Returns (len(target_rows), n)."""
    Y_inputs = np.asarray(Y_inputs, dtype=float)
    L = model.coefs_.shape[0]
    rows = np.asarray(target_rows)
    if rows.size and rows.min() - horizon - L + 1 < 0:
        raise ValueError("a forecast target is too early: it needs max(lags) + horizon - 1 earlier rows")
    # buffer[:, s] holds y at time (t - horizon - L + 1 + s) for each target t
    n = Y_inputs.shape[1]
    width = L + horizon
    buf = np.empty((rows.size, width, n))
    for s in range(L):
        buf[:, s, :] = Y_inputs[rows - horizon - L + 1 + s]
    for h in range(horizon):
        pos = L + h
        yhat = np.broadcast_to(model.intercept_, (rows.size, n)).copy()
        for ell in model.lags_:
            yhat += buf[:, pos - ell, :] @ model.coefs_[ell - 1].T
        buf[:, pos, :] = yhat
    return buf[:, -1, :]


@one_blas_thread()
def local_ar_forecasts(Y_train: np.ndarray, Y_inputs: np.ndarray, target_rows, lags, trend="c",
                       horizon: int = 1, row_mask=None) -> tuple[np.ndarray, list]:
    """Each owner's own AR on its own lags (LS on clean training data): forecasts and models."""
    Y_train = np.asarray(Y_train, dtype=float)
    preds, models = [], []
    for i in range(Y_train.shape[1]):
        m = CollaborativeVAR(lags, trend=trend).fit(Y_train[:, [i]], row_mask=row_mask)
        preds.append(var_forecasts(m, np.asarray(Y_inputs, dtype=float)[:, [i]], target_rows, horizon)[:, 0])
        models.append(m)
    return np.column_stack(preds), models


@dataclass
class ForecastEvaluation:
    """Per-owner scores of one forecast run (spec 6.3). ``table`` columns: owner, mae_var,
    rmse_var, mae_ar, rmse_ar, mae_gain_pct, rmse_gain_pct (100 (1 - err_VAR/err_AR))."""

    table: pd.DataFrame
    actual: np.ndarray
    var_pred: np.ndarray
    ar_pred: np.ndarray
    target_rows: np.ndarray
    model: CollaborativeVAR
    release: NoiseRelease | None = None  # the noise defence's release, when one ran

    @property
    def median_mae_gain(self) -> float:
        """The median MAE gain over the series, in percent."""
        return float(np.median(self.table["mae_gain_pct"]))

    @property
    def median_rmse_gain(self) -> float:
        """The median RMSE gain over the series, in percent."""
        return float(np.median(self.table["rmse_gain_pct"]))

    def count(self, column="mae_gain_pct", at_least=None, below=None) -> int:
        """The number of series whose ``column`` is at least ``at_least`` (or, without it, below ``below``)."""
        v = self.table[column].to_numpy()
        if at_least is not None:
            return int(np.sum(v >= at_least))
        return int(np.sum(v < below))


def _scores(actual, pred, score_mask):
    err = pred - actual
    if score_mask is not None:
        err = err[score_mask]
    return np.mean(np.abs(err), axis=0), np.sqrt(np.mean(err**2, axis=0))


@one_blas_thread()
def evaluate_forecasts(Y, lags, train_end: int, *, model: CollaborativeVAR | None = None, Y_fit=None,
                       Y_inputs=None, test_rows=None, score_mask=None, fit_mask=None, horizon: int = 1,
                       ar_trend=None, ar=None, owner_names=None) -> ForecastEvaluation:
    """Fit on rows [0, train_end) and score h-step forecasts of the test rows (spec 6.3).

    Y : clean series (T_total x n), the targets scored. Y_fit : the data the VAR is fitted
    on (default Y; e.g. noisy copies). Y_inputs : the covariates used at forecast time
    (default Y_fit: "noisy inputs"; pass Y for "clean inputs"). ``model``: an unfitted
    CollaborativeVAR (default central LS, trend "c"). score_mask : boolean (len(test_rows),)
    rows that count (solar: target hour in daylight at all sites). fit_mask : boolean
    (T_total,) training rows whose targets are fitted (default all). AR: each owner's LS on its
    own lags, fitted on the same clean training rows (reusable via ``ar=(pred, models)``).
    """
    Y = np.asarray(Y, dtype=float)
    lags = normalise_lags(lags)
    Y_fit = Y if Y_fit is None else np.asarray(Y_fit, dtype=float)
    Y_inputs = Y_fit if Y_inputs is None else np.asarray(Y_inputs, dtype=float)
    L = max(lags)
    if test_rows is None:
        test_rows = np.arange(max(train_end, L + horizon - 1), Y.shape[0])
    test_rows = np.asarray(test_rows)
    model = CollaborativeVAR(lags) if model is None else model
    train_mask = None if fit_mask is None else np.asarray(fit_mask, dtype=bool)[:train_end]
    model.fit(Y_fit[:train_end], row_mask=train_mask)
    var_pred = var_forecasts(model, Y_inputs, test_rows, horizon)
    trend = ar_trend or model.trend
    ar_pred = ar[0] if ar is not None else local_ar_forecasts(Y[:train_end], Y, test_rows, lags, trend, horizon,
                                                              row_mask=train_mask)[0]
    actual = Y[test_rows]
    mae_v, rmse_v = _scores(actual, var_pred, score_mask)
    mae_a, rmse_a = _scores(actual, ar_pred, score_mask)
    names = owner_names or getattr(model, "owner_names_", None) or [f"owner {i + 1}" for i in range(Y.shape[1])]
    table = pd.DataFrame({"owner": names, "mae_var": mae_v, "rmse_var": rmse_v, "mae_ar": mae_a, "rmse_ar": rmse_a,
                          "mae_gain_pct": 100.0 * (1.0 - mae_v / mae_a),
                          "rmse_gain_pct": 100.0 * (1.0 - rmse_v / rmse_a)})
    return ForecastEvaluation(table, actual, var_pred, ar_pred, test_rows, model)



DEFENCES = {
    "none": "No defence (exact collaborative VAR)",
    "laplace": "Laplace noise on every value, L(0, b)",
    "gaussian": "Gaussian noise on every value, N(0, b²)",
    "uniform": "Uniform noise on every value, U(-b, b)",
    "naive_laplace": "Naive: independent Laplace noise on every entry of Z and Y",
    "coef_noise": "ADMM with noise on the shared coefficients, sd b",
    "message_noise": "ADMM with noise on every message, sd b",
    "orthogonal_rows": "Orthogonal row mixing M (T x T), records-split transformation",
    "compressed_rows": "Row compression M (k x T, k = T/2), Zhou et al.",
    "post_multiplication": "Post-multiplication Z N_z, Y N_y (features split), inverted with the N's",
}


def _admm_model(lags, params, **extra):
    kw = dict(solver="admm", tol=None, max_iter=int(params.get("max_iter", 50)))
    kw.update({k: v for k, v in params.items() if k in ("penalty", "alpha", "trend", "rho", "init", "variant",
                                                      "random_state")})
    kw.update(extra)
    return CollaborativeVAR(lags, store_path=False, **kw)


@one_blas_thread()
def defence_comparison(Y, lags, train_end: int, defence: str, strength: float, *, params=None, score_mask=None,
                       test_rows=None, fit_mask=None, eval_inputs: str = "noisy", random_state=None, ar=None,
                       owner_names=None, public_range=None, declared_public: bool = False,
                       delta: float = 1e-5) -> ForecastEvaluation:
    """Forecasts of one defence at one strength on the same test rows (spec 2, 4.3, 6.3).

    Y : (T_total x n) the owners' values on the raw scale the public range is declared on (never
    centred on a private mean: centring is the model's intercept, fitted on the noisy values).
    params: CollaborativeVAR settings (penalty, alpha, trend, rho, max_iter, ...). Noise on the
    data (laplace, gaussian, uniform, naive_laplace) is :func:`noise_defence`: clip into
    ``public_range``, fresh noise (``random_state=None``), then the VAR is fitted by the central
    solver, which equals the ADMM fit (spec 4.4); the result's ``release`` holds the noisy series
    and its :class:`DefenceLedger`. Noise inside ADMM runs ``max_iter`` ADMM iterations (fixed K).
    eval_inputs: "noisy" (forecast from the noisy covariates, scored against clean targets) or
    "clean".
    """
    params = dict(params or {})
    Y = np.asarray(Y, dtype=float)
    rng, _ = noise_generator(random_state)  # a fresh generator stays fresh when passed on
    central = dict(penalty=params.get("penalty", "none"), alpha=params.get("alpha", 0.0),
                   trend=params.get("trend", "c"))
    kw = dict(score_mask=score_mask, test_rows=test_rows, ar=ar, owner_names=owner_names, fit_mask=fit_mask)
    if defence == "none" or (strength == 0 and defence in ("laplace", "gaussian", "uniform", "naive_laplace",
                                                          "coef_noise", "message_noise")):
        return evaluate_forecasts(Y, lags, train_end, model=CollaborativeVAR(lags, **central), **kw)
    if defence in ("laplace", "gaussian", "uniform"):
        rel = noise_defence(Y, defence, strength, public_range=public_range, declared_public=declared_public,
                            delta=delta, random_state=rng)
        ev = evaluate_forecasts(Y, lags, train_end, model=CollaborativeVAR(lags, **central), Y_fit=rel.noisy,
                                Y_inputs=rel.noisy if eval_inputs == "noisy" else Y, **kw)
        ev.release = rel
        return ev
    if defence == "naive_laplace":
        lags_t = normalise_lags(lags)
        # p + 1 copies in the design, and one more when the forecasts read noisy inputs
        copies = len(lags_t) + (2 if eval_inputs == "noisy" else 1)
        rel = noise_defence(Y, "laplace", strength, public_range=public_range, declared_public=declared_public,
                            delta=delta, random_state=rng, copies=copies)
        rel.naive = True
        Yn = rel.noisy  # inputs at forecast time: one noisy copy
        ev = evaluate_forecasts(Y, lags, train_end, model=CollaborativeVAR(lags, **central), Y_fit=Yn,
                                Y_inputs=Yn if eval_inputs == "noisy" else Y, **kw)
        Z, target = naive_noisy_design(Y[:train_end], lags, "laplace", strength, rng, public_range=public_range)
        if fit_mask is not None:
            keep = np.asarray(fit_mask, dtype=bool)[max(lags_t):train_end]
            Z, target = Z[keep], target[keep]
        ev.model.fit_design(Z, target)
        ev.var_pred = var_forecasts(ev.model, Yn if eval_inputs == "noisy" else Y, ev.target_rows)
        ev.release = rel
        return _rescore(ev, score_mask)
    if defence in ("coef_noise", "message_noise"):
        model = _admm_model(lags, params, random_state=rng, **{defence: strength})
        return evaluate_forecasts(Y, lags, train_end, model=model, **kw)
    if defence in ("orthogonal_rows", "compressed_rows", "post_multiplication"):
        ev = evaluate_forecasts(Y, lags, train_end, model=CollaborativeVAR(lags, **central), **kw)
        m = ev.model
        Zc, Yc = m.design_  # the training design, centred for trend "c"
        lags_t = normalise_lags(lags)
        if defence == "post_multiplication":
            B = post_multiplication_demo(Zc, Yc, lags_t, penalty=central["penalty"], alpha=central["alpha"],
                                         random_state=rng)["coef_recovered"]
        else:
            rows_kept = None if defence == "orthogonal_rows" else max(Zc.shape[0] // 2, Zc.shape[1] + 2)
            B = orthogonal_rows_demo(Zc, Yc, lags_t, rows_kept=rows_kept, penalty=central["penalty"],
                                     alpha=central["alpha"], random_state=rng)["coef_transformed"]
        m.coef_owner_major_ = B
        m.coefs_ = coefs_from_owner_major(B, lags_t)
        m.intercept_ = m.y_mean_ - m.z_mean_ @ B
        ev.var_pred = var_forecasts(m, Y, ev.target_rows)
        return _rescore(ev, score_mask)
    raise ValueError(f"unknown defence {defence!r}; choose one of {list(DEFENCES)}")


def _rescore(ev: ForecastEvaluation, score_mask) -> ForecastEvaluation:
    mae_v, rmse_v = _scores(ev.actual, ev.var_pred, score_mask)
    t = ev.table
    t["mae_var"], t["rmse_var"] = mae_v, rmse_v
    t["mae_gain_pct"] = 100.0 * (1.0 - mae_v / t["mae_ar"].to_numpy())
    t["rmse_gain_pct"] = 100.0 * (1.0 - rmse_v / t["rmse_ar"].to_numpy())
    return ev


@one_blas_thread()
def noise_sweep(Y, lags, train_end: int, law: str, strengths, *, params=None, score_mask=None, test_rows=None,
                fit_mask=None, eval_inputs="noisy", public_range=None, declared_public: bool = False, delta=1e-5,
                random_state=None, progress=None, owner_names=None) -> pd.DataFrame:
    """Accuracy against privacy of the noise defence: one row per b (b = 0 is the clean VAR).

    Y : raw-scale series (T_total x n), clipped into ``public_range`` before the noise (see
    :func:`defence_comparison`). Each b is a separate fit with its own fresh noise
    (``random_state=None``) and its own :class:`DefenceLedger`.

    Columns: b, eps_per_value (event level), eps_per_series (one owner's whole series), status
    (from that fit's ledger: "proven", "not proven", or "no privacy" for b = 0 and uniform noise),
    median MAE/RMSE gain over AR, owners worse than AR (MAE, RMSE), owners gaining >= 10 % (MAE),
    mean MAE of the VAR. ``progress(i, total)`` is called after each point.
    """
    Y = np.asarray(Y, dtype=float)
    lags = normalise_lags(lags)
    rng, _ = noise_generator(random_state)
    L = max(lags)
    rows = np.arange(max(train_end, L), Y.shape[0]) if test_rows is None else np.asarray(test_rows)
    ar = local_ar_forecasts(Y[:train_end], Y, rows, lags, (params or {}).get("trend", "c"),
                            row_mask=None if fit_mask is None else np.asarray(fit_mask, dtype=bool)[:train_end])
    out = []
    strengths = list(strengths)
    for j, b in enumerate(strengths):
        ev = defence_comparison(Y, lags, train_end, law if b > 0 else "none", b, params=params, score_mask=score_mask,
                                test_rows=rows, fit_mask=fit_mask, eval_inputs=eval_inputs, random_state=rng, ar=ar,
                                owner_names=owner_names, public_range=public_range,
                                declared_public=declared_public, delta=delta)
        if ev.release is not None:
            led = ev.release.defence
            eps_v, eps_s, status = led.eps_per_value, led.eps_per_series, led.status
        else:
            eps_v, eps_s, status = math.inf, math.inf, "no privacy"
        out.append({"b": b, "eps_per_value": eps_v, "eps_per_series": eps_s, "status": status,
                    "median_mae_gain_pct": ev.median_mae_gain, "median_rmse_gain_pct": ev.median_rmse_gain,
                    "owners_worse_mae": ev.count(below=0.0), "owners_worse_rmse": ev.count("rmse_gain_pct", below=0.0),
                    "owners_gain_10pct_mae": ev.count(at_least=10.0),
                    "mean_mae_var": float(ev.table["mae_var"].mean())})
        if progress is not None:
            progress(j + 1, len(strengths))
    return pd.DataFrame(out)
