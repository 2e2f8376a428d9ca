"""The session's run history and privacy odometer, shared by every page that releases on the user's data.

Every fit a page shows is recorded once in ``st.session_state["pl_runs"]`` (settings, RMSEP, σ_y, ε, status,
and the private coefficient curve for the overlay), keyed by the release itself: a hash of the fit's ledger and
of the released values' bytes. A rerun that hits ``st.cache_data`` returns the same release, so the same key:
it is neither listed nor counted twice. A refit with fresh noise is a new release and spends budget. Pages whose
release has no regression metrics (PCA-Gauss, DP-CCA, the large-data edPLS fit, the attack lab on own data) record
it with ``record_release``: same store, same key rule, RMSEP and σ_y empty.

The odometer composes the ledgers of every release recorded on the same data set (whatever the page or the
response) into one ``PrivacyLedger`` and totals it with the ledger's own accountants (``ledger_totals`` and the
headline rule ``headline_total``: the tightest valid one). Nothing is composed by hand here. Releases under
different neighbouring relations (add/remove for edPLS and DP-PCR, replace-one for PCA-Gauss and DP-CCA) are
composed under replace-one, the add/remove ones restated by ``engine.privacy.ledger.under_replace_one``.

What this history holds is for the data owner: RMSEPs and σ_y are measured on private rows; it is never
exported in a shareable file.
"""
from __future__ import annotations

import functools
import hashlib
import json
import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from engine.privacy.ledger import Neighbouring, PrivacyLedger, Release, ledger_totals, under_replace_one
from engine.privacy.wording import headline_total

STORE = "pl_runs"


def release_id(ledger: PrivacyLedger, *released) -> str:
    """A key unique to one release: its ledger and the bytes of the values it released."""
    h = hashlib.sha256(json.dumps(ledger.to_dict(), sort_keys=True, default=str).encode())
    for v in released:
        if v is not None:
            h.update(np.ascontiguousarray(np.asarray(v, dtype=float)).tobytes())
    return h.hexdigest()[:16]


def dataset_of(ds) -> str:
    """The data set a release was made on (every response of one table counts against the same rows)."""
    return f"{ds.origin}: {ds.name}"


def record_run(page: str, ds, *, method: str, response: str, settings: dict, rmsep: float, sigma_y: float,
               epsilon: float, delta: float, ledger: PrivacyLedger, model, axis=None, companions=()) -> str:
    """Add this fit to the history unless the same release is already there; return its id.

    ``companions``: other private fits shown with this one on the same rows (e.g. the private constant predictor
    beside the recommended edPLS): their ledgers count in the odometer with this run."""
    coef = getattr(model, "coef_", None)
    rid = release_id(ledger, coef, getattr(model, "intercept_", None),
                     *(getattr(c, "intercept_", None) for c in companions))
    runs = st.session_state.setdefault(STORE, {})
    if rid not in runs:
        runs[rid] = {
            "number": len(runs) + 1, "page": page, "data set": dataset_of(ds), "method": method,
            "response": response, "settings": dict(settings), "rmsep": float(rmsep), "sigma_y": float(sigma_y),
            "epsilon": float(epsilon), "delta": float(delta), "status": ledger.status, "ledger": ledger,
            "companion_ledgers": [c.privacy_ledger_ for c in companions],
            "dp_y_scale": getattr(model, "y_scale_", None),  # a DP output (post-processing), for the range check
            "curve": None if coef is None else (np.arange(len(coef)) if axis is None else np.asarray(axis),
                                                np.asarray(coef, dtype=float)),
        }
    return rid


def record_release(page: str, ds, *, method: str, ledger: PrivacyLedger, released=(), settings: dict,
                   epsilon: float, delta: float | None, response: str | None = None) -> str:
    """Add a DP release without regression metrics (RMSEP and σ_y empty) unless it is already there; its id.

    ``released``: the noisy values it released (their bytes key the release with its ledger, as in
    ``record_run``: a cached rerun is the same release, fresh noise a new one)."""
    rid = release_id(ledger, *released)
    runs = st.session_state.setdefault(STORE, {})
    if rid not in runs:
        runs[rid] = {
            "number": len(runs) + 1, "page": page, "data set": dataset_of(ds), "method": method, "response": response,
            "settings": dict(settings), "rmsep": None, "sigma_y": None, "epsilon": float(epsilon),
            "delta": None if delta is None else float(delta), "status": ledger.status, "ledger": ledger,
            "companion_ledgers": [], "dp_y_scale": None, "curve": None,
        }
    return rid


def _settings_text(settings: dict) -> str:
    return "; ".join(f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}" for k, v in settings.items())


#: The history's numeric columns a release without regression metrics leaves empty ("—").
METRIC_COLUMNS = ("δ", "RMSEP", "σ_y (test)")


def history_frame(runs: dict) -> pd.DataFrame:
    """The history as a table with human headers."""
    def number(v):  # a release without regression metrics (``record_release``): missing, shown "—"
        return math.nan if v is None else v

    rows = [{"Run": r["number"], "Page": r["page"], "Method": r["method"], "Data set": r["data set"],
             "Response": r["response"] or "—", "ε": r["epsilon"], "δ": number(r["delta"]), "RMSEP": number(r["rmsep"]),
             "σ_y (test)": number(r["sigma_y"]), "Status": r["status"], "Settings": _settings_text(r["settings"])}
            for r in runs.values()]
    return pd.DataFrame(rows, columns=["Run", "Page", "Method", "Data set", "Response", "ε", "δ", "RMSEP",
                                       "σ_y (test)", "Status", "Settings"])


@functools.lru_cache(maxsize=256)
def composed_summary(neighbouring: Neighbouring, entries: tuple[Release, ...], caveats: tuple[str, ...]) -> dict:
    """``ledger_totals(..., pld=True)`` of the ledger holding ``entries`` and ``caveats`` (read-only: shared).

    Kept per process, keyed by the releases themselves (frozen, hashable): the odometer totals the same ledger on
    every rerun of every page that shows it, and the PLD accountant took 0.076 of the PCA-Gauss page's 0.40 CPU s
    per rerun. A pure function of its arguments, so a cached total is the total."""
    led = PrivacyLedger(neighbouring=neighbouring)
    led.extend(entries)
    for c in caveats:
        led.add_caveat(c)
    return ledger_totals(led, pld=True, as_json=False)


def composed_total(runs: dict, data_set: str) -> dict | None:
    """The composition of every release on ``data_set``: n fits, n releases, ε, δ, accountant, status."""
    mine = [r for r in runs.values() if r["data set"] == data_set]
    if not mine:
        return None
    ledgers = [x for r in mine for x in [r["ledger"], *r.get("companion_ledgers", [])]]
    relations = {x.neighbouring for x in ledgers if len(x)}  # an empty ledger (ε = ∞, nothing released) binds no rule
    if len(relations) > 1:  # compose where both hold: one row replaced (a replacement is a removal and an addition)
        ledgers = [under_replace_one(x) for x in ledgers]
    only = next(iter(relations)) if len(relations) == 1 else ledgers[0].neighbouring
    if any(ledger.unit != ledgers[0].unit for ledger in ledgers):
        raise ValueError("releases protecting different units (a row, a whole series) do not compose")
    neighbouring = Neighbouring.REPLACE_ONE if len(relations) > 1 else only
    caveats = dict.fromkeys(c for ledger in ledgers for c in ledger.caveats if c)
    summary = composed_summary(neighbouring, tuple(e for ledger in ledgers for e in ledger.entries), tuple(caveats))
    if not summary.get("n_releases"):
        return {"fits": len(mine), "releases": 0, "epsilon": 0.0, "delta": 0.0, "accountant": None,
                "status": "no privacy", "neighbouring": neighbouring, "restated": False}
    eps, dl, key = headline_total(summary)
    return {"fits": len(mine), "releases": summary["n_releases"], "epsilon": eps, "delta": dl, "accountant": key,
            "status": summary["status"], "neighbouring": neighbouring, "restated": len(relations) > 1}


def odometer(ds) -> None:
    """The session's total ε on this data set, with the note that a refit spends budget."""
    runs = st.session_state.get(STORE, {})
    try:
        total = composed_total(runs, dataset_of(ds))
    except ValueError as err:
        st.warning(f"The privacy odometer cannot total this session: {err}.")
        return
    if total is None:
        return
    c1, c2 = st.columns(2)
    c1.metric("Privacy spent on this data set", f"ε = {total['epsilon']:.3g}",
              help=f"All {total['fits']} fits of this session on {dataset_of(ds)} ({total['releases']} noisy "
                   f"releases) composed by the ledger's tightest valid accountant, at δ = {total['delta']:.2g}.")
    c2.metric("Fits on this data set", f"{total['fits']}")
    st.caption(f"Session privacy odometer: {total['fits']} fits composed, total ε = {total['epsilon']:.3g} at "
               f"δ = {total['delta']:.2g} ({total['status']}). Refitting with fresh noise (a new ε, new bounds, "
               "another estimator, a new session) is a new release and spends budget: everyone who sees several "
               "releases of the same rows learns more than from one. Showing the same fit again does not. A private "
               "fit shown beside another (the private constant predictor) counts; sweeps and simulations (for you "
               "only) are not counted here."
               + (" Releases for one row added or removed and for one row replaced are composed for one row replaced "
                  "(a replacement is a removal and an addition: the add/remove releases count twice their "
                  "sensitivity)." if total["restated"] else ""))


def _overlay(chosen: list) -> go.Figure | None:
    curves = [r for r in chosen if r["curve"] is not None]
    if len(curves) < 2 or len({len(r["curve"][1]) for r in curves}) != 1:
        return None
    fig = go.Figure()
    for r in curves:
        fig.add_trace(go.Scatter(x=r["curve"][0], y=r["curve"][1], mode="lines", name=f"Run {r['number']}"))
    fig.update_layout(title="Private coefficients of the selected runs", xaxis_title="channel",
                      yaxis_title="coefficient", height=360)
    return fig


def run_history(page: str) -> None:
    """The history table and "compare selected" (side-by-side metrics, overlaid coefficient curves)."""
    opened = st.session_state.get("pl_opened_runs")  # ui.session_file.OPENED_RUNS: settings only
    if opened:
        st.caption("Runs listed in the session file you opened (their settings; refit to see results):")
        st.dataframe(pd.DataFrame(opened), hide_index=True)
    runs = st.session_state.get(STORE, {})
    if not runs:
        return
    st.subheader("Runs in this session")
    frame = history_frame(runs)
    st.dataframe(frame.style.format("{:.4g}", subset=list(METRIC_COLUMNS), na_rep="—"), hide_index=True)
    st.caption("For you only: RMSEP and σ_y are measured on your private test rows; this history stays in this "
               "browser session and is never in a shareable file.")
    by_number = {r["number"]: r for r in runs.values()}
    picked = st.multiselect("Compare selected runs", list(by_number), key=f"{page}_compare_runs",
                            format_func=lambda n: (f"Run {n}: {by_number[n]['method']} · {by_number[n]['response']} · "
                                                   f"{by_number[n]['data set']}"),
                            help="Pick two runs or more: their numbers side by side and their coefficient curves "
                                 "overlaid.")
    chosen = [by_number[n] for n in picked]
    if len(chosen) < 2:
        st.caption("Pick two runs or more to compare them.")
        return
    side = frame[frame["Run"].isin(picked)].set_index("Run").T
    side.columns = [f"Run {n}" for n in side.columns]
    st.dataframe(side.fillna("—").astype(str))
    fig = _overlay(chosen)
    if fig is not None:
        st.plotly_chart(fig, key=f"{page}_compare_chart")
    else:
        st.caption("No overlaid curves: the selected runs have coefficients on different channels.")


def history_section(page: str, ds) -> None:
    """The odometer, then the history (the pages call this after a release on the user's data)."""
    odometer(ds)
    run_history(page)
