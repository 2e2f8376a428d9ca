"""The VAR-ADMM page's fits, defence runs, sweep points and attacks as plain functions (``ui.runtime.jobs``).

``ui.var_admm.runs`` caches them per arguments and runs an uploaded panel's in a worker with the job budgets
(``ui.runtime.jobs.run_upload``); a worker imports them by name from here. The bodies are the page's, unchanged.
"""
from __future__ import annotations

import pandas as pd

from engine.attacks.var_admm_attacks import central_node_attack, owner_attack, zero_init_leak
from engine.methods.var_admm import (
    CollaborativeVAR,
    coef_table,
    defence_comparison,
    evaluate_forecasts,
    noise_sweep,
    prepare_series,
    release_refusal,
    shareable_release,
    to_json,
)

CENTRAL_ATTACKER = "central node (Y-free variant)"


def panel_of(Y: pd.DataFrame, solar: bool, lags: tuple):
    """The prepared panel of the series Y."""
    return prepare_series(Y, solar=solar, lags=lags)


def model_kw(settings: dict) -> dict:
    """The VAR-ADMM model settings taken from the page's settings."""
    return {k: settings[k] for k in ("penalty", "alpha", "rho", "init", "variant")}


def raw_scale(panel):
    """The values the defence releases: the series as prepared (solar: night = 0) before any centring
    (centring on a private mean before the noise would leak it; the model's intercept does it afterwards)."""
    return panel.Y + panel.means


def fit_and_forecast(Y: pd.DataFrame, solar: bool, lags: tuple, settings: dict) -> dict:
    """Central and ADMM fits on the training rows, and the rolling one-step forecasts (spec 6.3).
    Nothing here is a release: the ADMM's random start uses the fixed initialisation seed."""
    panel = panel_of(Y, solar, lags)
    train = panel.Y[:panel.train_end]
    mask = panel.fit_mask[:panel.train_end]
    central = CollaborativeVAR(lags, penalty=settings["penalty"], alpha=settings["alpha"]).fit(train, row_mask=mask)
    admm_kw = dict(solver="admm", max_iter=settings["max_iter"], tol=settings["tol"], scheme=settings["scheme"],
                   random_state=settings["init_seed"], owner_names=panel.sites, **model_kw(settings))
    ev = evaluate_forecasts(panel.Y, lags, panel.train_end, model=CollaborativeVAR(lags, **admm_kw),
                            test_rows=panel.test_rows, score_mask=panel.score_mask, fit_mask=panel.fit_mask,
                            owner_names=panel.sites)  # a fit that stops early warns and says why (below)
    admm = ev.model
    trace = admm.trace_
    log = trace.log.to_frame(max_step=3)
    return {
        "table": ev.table, "actual": ev.actual, "var_pred": ev.var_pred, "ar_pred": ev.ar_pred,
        "times": panel.index[ev.target_rows], "score_mask": panel.score_mask,
        "residuals": trace.residual_frame(), "coef_error": trace.coef_error_path(central.coef_owner_major_),
        "coef_iterations": trace.path_iterations,
        "gap": float(abs(admm.coefs_ - central.coefs_).max()), "n_iter": admm.n_iter_, "converged": admm.converged_,
        "scheme": admm.scheme_, "rho_used": trace.rho, "rejected": trace.rejected_steps,
        "convergence_warning": admm.convergence_message_,
        "n_obs": admm.n_obs_, "messages": log, "volume": trace.log.volume(by=("sender",)), "sites": panel.sites,
        "train_end": panel.train_end, "n_test_scored": int(panel.score_mask.sum()), "T_total": len(panel.Y),
        "coef_table": coef_table(admm),
        # Owner's view: the centre each site was fitted around (its own training (daytime) mean, private) and, for
        # solar series, where its own output is 0 (night), to draw the forecasts in the series' own units.
        "centres": panel.means.copy(), "night": None if not solar else ~panel.daylight[ev.target_rows],
    }


def run_defence(Y: pd.DataFrame, solar: bool, lags: tuple, settings: dict, defence: str, strength: float,
                eval_inputs: str, public_range: tuple, declared: bool, delta: float, noise_seed, draw: str,
                calibration: str) -> dict:
    """One defence run. Noise on the values: clip into ``public_range``, fresh noise (``noise_seed`` None;
    ``draw`` only tells this session's draw apart in the cache, it seeds nothing), then the VAR fit."""
    panel = panel_of(Y, solar, lags)
    ev = defence_comparison(raw_scale(panel), lags, panel.train_end, defence, strength, params=settings,
                            score_mask=panel.score_mask, test_rows=panel.test_rows, fit_mask=panel.fit_mask,
                            eval_inputs=eval_inputs, random_state=noise_seed, owner_names=panel.sites,
                            public_range=public_range, declared_public=declared, delta=delta)
    rel = ev.release
    reason = release_refusal(rel)
    release_json = None
    if reason is None:
        # The coefficients are post-processing of the noisy series only when the fitted rows are public: every
        # row for ordinary series; for solar series the daylight rows are read from the private data.
        model = None if solar else ev.model
        release_json = to_json(shareable_release(rel, owner_names=panel.sites, lags=lags, model=model,
                                                 calibration=calibration))
    return {"table": ev.table, "var_pred": ev.var_pred - panel.means, "release": rel,
            "release_json": release_json, "no_release_reason": reason}


def sweep_point(Y: pd.DataFrame, solar: bool, lags: tuple, settings: dict, law: str, b: float, public_range: tuple,
                declared: bool, delta: float, noise_seed, draw: str) -> pd.DataFrame:
    """One point of the noise sweep: the defence at noise level b, as a one-row frame."""
    panel = panel_of(Y, solar, lags)
    return noise_sweep(raw_scale(panel), lags, panel.train_end, law, [b], params=settings,
                       score_mask=panel.score_mask, test_rows=panel.test_rows, fit_mask=panel.fit_mask,
                       public_range=public_range, declared_public=declared, delta=delta, random_state=noise_seed)


def run_attack(Y: pd.DataFrame, solar: bool, lags: tuple, settings: dict, attacker: str, victim: str, K_max: int,
               coef_noise: float, message_noise: float, init: str) -> dict:
    """The attack of ``attacker`` on ``victim`` over K_max ADMM iterations, with the defence's noise."""
    panel = panel_of(Y, solar, lags)
    train = panel.Y[:panel.train_end]
    mask = panel.fit_mask[:panel.train_end]
    kw = model_kw(settings)
    kw.update(init=init, variant="y_free" if attacker == CENTRAL_ATTACKER else settings["variant"])
    model = CollaborativeVAR(lags, solver="admm", tol=None, max_iter=K_max, keep_values=K_max,
                             coef_noise=coef_noise, message_noise=message_noise, random_state=settings["init_seed"],
                             owner_names=panel.sites, **kw).fit(train, row_mask=mask)
    if attacker == CENTRAL_ATTACKER:
        res = central_node_attack(model, victim)
    else:
        res = owner_attack(model, attacker)
    leak = zero_init_leak(model)
    return {"result": res, "times": panel.index[model.fit_rows_], "T": model.n_obs_,
            "zero_leak_err": float(leak.relerr.max()), "zero_leak_note": leak.note}
