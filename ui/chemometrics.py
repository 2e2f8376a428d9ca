"""The chemometrics staples on the edPLS and DP-PCR pages (issue #19): one lazy expander "Model diagnostics
(owner's view, not private)" with RMSECV vs latent variables, R² / RPD / bias, predictions outside the y range,
loadings and VIP, T² / Q outliers and raw vs preprocessed spectra; and, above it, the plain badge "Private model
no better than predicting the mean" where that holds.

Widgets only: the numbers are ``engine.methods.chemometrics``. Everything in the expander is computed on the
owner's rows without noise and is labelled so; the private model's own choice of latent variables is read off
the fitted model (``private_k_choice``), never recomputed. The expander computes nothing until it is opened
(``on_change="rerun"``), so the page's first chart does not wait for it; its tables go to the owner's workbook.

Pages call :func:`edpls_staples` or :func:`dp_pcr_staples` (one line each); both build a :class:`Staples` and
call :func:`staples_section`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from engine.methods.chemometrics import (
    example_rows,
    means_not_beaten,
    metrics_table,
    private_k_choice,
    range_check,
    rmsecv_curve,
)
from engine.methods.chemometrics.cv import METHODS
from ui.exports import show_chart
from ui.figures.chemometrics import (
    chemometrics_loadings_figure,
    chemometrics_prediction_figure,
    chemometrics_rmsecv_figure,
    chemometrics_spectra_figure,
    chemometrics_t2_q_figure,
    chemometrics_vip_figure,
)
from ui.jobs_view import fit_wait
from ui.progress import session_scope
from ui.runtime.jobs import run_upload
from ui.runtime.page_jobs import reference_diagnostics
from ui.tables import human_headers

TITLE = "Model diagnostics (owner's view, not private): RMSECV, R², RPD, bias, loadings, VIP, T² and Q"
OWNER_VIEW = "Owner's view, not private: computed on your rows without noise. For you only (owner's workbook)."
NO_BETTER = "Private model no better than predicting the mean"
TABS = ("RMSECV vs latent variables", "R², RPD, bias", "Outside the y range", "Loadings and VIP", "T² and Q outliers",
        "Raw vs preprocessed")  # PCR: "Loadings" and no spectra tab when nothing preprocesses the rows
MAX_K = 20
ONE_SE = "one-standard-error rule"


@dataclass
class Staples:
    """What the staples need from a page: the rows, the fit's test predictions and the public y range."""

    page: str
    X_raw: np.ndarray
    X_model: np.ndarray  # the rows the reference model sees (after the page's chain)
    y: np.ndarray
    train: np.ndarray
    test: np.ndarray
    axis: np.ndarray
    axis_label: str
    response: str
    k_page: int
    pred_private: np.ndarray
    pred_reference: np.ndarray
    private_label: str
    private_model: object
    method: str = "pls"  # "pls" (edPLS) or "pcr" (DP-PCR)
    declared_range: tuple | None = None
    range_label: str = "the declared public y range"
    dp_mean_pred: np.ndarray | None = None
    chain: str | None = None  # the reference's chain (None: the page fits raw rows)
    private_preprocess: object | None = None  # the private estimator's own fitted row-wise chain, if it has one
    private_chain: str | None = None
    upload: bool = False  # an uploaded data set: its reference fits run in a worker (ui.runtime.jobs)

    def tabs(self) -> list[str]:
        tabs = list(TABS[:5]) if self.method == "pls" else [*TABS[:3], "Loadings", TABS[4]]
        return tabs + ([TABS[5]] if self.chain is not None or self.private_preprocess is not None else [])


@st.cache_data(show_spinner=False, max_entries=16)
def _cv(X, y, max_k: int, method: str, upload: bool = False, scope: str = ""):
    """The RMSECV curve (``upload``: in a worker with the job budgets, ``ui.runtime.jobs``; ``scope``: the session's
    ``ui.progress.session_scope``, so a noise-free result is never a hit from another session)."""
    return run_upload(upload, rmsecv_curve, X, y, max_k, method=method, label="The cross-validation")


@st.cache_data(show_spinner=False, max_entries=16)
def _reference(X_train, y_train, X_test, k: int, method: str, train_rows, test_rows, upload: bool = False,
               scope: str = ""):
    """The reference fit's loadings, VIP (PLS only) and T² / Q diagnostics (pure: cached; ``upload``: in a
    worker)."""
    return run_upload(upload, reference_diagnostics, X_train, y_train, X_test, k, method, train_rows, test_rows,
                      label="The reference fit")


def mean_badge(s: Staples) -> None:
    """The plain badge when the private model's test RMSEP is at least that of predicting the mean: the DP mean
    (the private constant predictor, when the page has one) or the training mean (owner's view)."""
    yte = s.y[s.test]
    missed = means_not_beaten(yte, s.pred_private, dp_pred=s.dp_mean_pred, y_train=s.y[s.train])
    if missed:
        rmsep = float(np.sqrt(np.mean((s.pred_private - yte) ** 2)))
        st.badge(NO_BETTER, icon=":material/warning:", color="orange")
        st.caption(f"Its test RMSEP {rmsep:.4g} is not below the RMSEP of predicting "
                   + " nor of predicting ".join(f"{label} ({base:.4g})" for label, base in missed)
                   + ". Measured on your test rows (owner's view, not private).")


def _labels(s: Staples) -> tuple[str, str]:
    model = METHODS[s.method]
    return s.private_label, f"non-private {model} (k = {s.k_page})"


def _rmsecv_tab(s: Staples, sheets: dict) -> None:
    Xtr, ytr = s.X_model[s.train], s.y[s.train]
    with fit_wait(f"{s.page}_cv", "Cross-validating"):
        curve = _cv(Xtr, ytr, MAX_K, s.method, s.upload, session_scope())
    choice = private_k_choice(s.private_model)
    marks = {f"page's k = {s.k_page}": s.k_page}
    if choice["k"] is not None and choice["k"] != s.k_page:
        marks[f"private fit's k = {choice['k']}"] = choice["k"]
    show_chart(st, chemometrics_rmsecv_figure(curve.ks, curve.rmsecv, curve.se, k_suggested=curve.k_one_se,
                                              rule=ONE_SE, marks=marks, model=METHODS[s.method]),
               "rmsecv", page=s.page)
    st.markdown(
        f"**Owner's view (not private):** {curve.n_splits}-fold cross-validation of non-private {METHODS[s.method]} "
        f"on your {len(s.train)} training rows, without noise. Suggested: **k = {curve.k_one_se}** by the "
        f"{ONE_SE} (the fewest latent variables whose RMSECV is within one standard error of the minimum); the "
        f"minimum RMSECV is at k = {curve.k_min}.")
    st.markdown(f"**Private choice of k, as the private fit made it:** {choice['text']}. Nothing here is recomputed "
                "privately: choosing k from this curve would use your rows without noise.")
    sheets["RMSECV"] = curve.table()


def _metrics_tab(s: Staples, sheets: dict) -> None:
    yte = s.y[s.test]
    private, reference = _labels(s)
    preds = {private: s.pred_private, reference: s.pred_reference}
    if s.dp_mean_pred is not None:
        preds["private constant predictor (DP mean)"] = s.dp_mean_pred
    preds["training mean of y (owner's view)"] = np.full(len(yte), float(np.mean(s.y[s.train])))
    table = metrics_table(yte, preds)
    st.dataframe(table, hide_index=True, column_config={c: st.column_config.NumberColumn(format="%.4g")
                                                        for c in ("RMSEP", "R²", "RPD", "bias")})
    st.caption(f"{OWNER_VIEW} On your {len(s.test)} test rows: R² = 1 − SSE / SST; RPD = SD of the reference values "
               "(ddof 1) / RMSEP; bias = mean of (prediction − reference), positive when the model over-predicts.")
    sheets["metrics (test rows)"] = table


def _range_tab(s: Staples, sheets: dict) -> None:
    yte, ytr = s.y[s.test], s.y[s.train]
    private, reference = _labels(s)
    checks = {label: range_check(pred, declared=s.declared_range, y_train=ytr)
              for label, pred in ((private, s.pred_private), (reference, s.pred_reference))}
    first = checks[private]
    lo, hi = first["range"]
    where = s.range_label if s.declared_range is not None else first["source"]
    show_chart(st, chemometrics_prediction_figure(yte, {private: s.pred_private, reference: s.pred_reference},
                                                  {k: c["outside"] for k, c in checks.items()}, y_range=(lo, hi),
                                                  range_label=f"[{lo:.4g}, {hi:.4g}]", response=s.response),
               "outside_range", page=s.page)
    lines = [f"- {label}: **{c['n_outside']} of {len(yte)}** test predictions outside {where} [{lo:.4g}, {hi:.4g}]"
             + (f"; {c['n_outside_train']} outside the training y range (owner's view)" if "n_outside_train" in c
                else "") for label, c in checks.items()]
    st.markdown("\n".join(lines))
    st.caption(OWNER_VIEW if s.declared_range is None else
               "The range checked is the one you declared (public); the training y range beside it is the owner's "
               "view, not private.")
    sheets["outside y range"] = pd.DataFrame({"row": s.test, "y_test": yte, "pred_private": s.pred_private,
                                              "outside (private)": first["outside"],
                                              "outside (non-private)": checks[reference]["outside"]})


def _reference_tab(s: Staples, loadings, vips, sheets: dict) -> None:
    f1, f2 = st.columns(2)
    show_chart(f1, chemometrics_loadings_figure(s.axis, loadings, axis_label=s.axis_label, model=METHODS[s.method],
                                                prefix="LV" if s.method == "pls" else "PC"), "loadings", page=s.page)
    if vips is not None:
        show_chart(f2, chemometrics_vip_figure(s.axis, vips, axis_label=s.axis_label), "vip", page=s.page)
        top = np.argsort(vips)[::-1][:5]
        st.caption(f"{OWNER_VIEW} VIP (variable importance in projection, Wold's formula) of the non-private PLS "
                   f"with k = {s.k_page}; the mean of VIP² is 1, so channels above 1 matter more than average. "
                   "Highest: " + ", ".join(f"{s.axis[j]:g} ({vips[j]:.2f})" for j in top) + ".")
        sheets["VIP"] = pd.DataFrame({"channel": s.axis, "VIP": vips})
    else:
        f2.info("VIP (variable importance in projection) is defined for PLS; principal component regression has "
                "the PCA loadings only.")
        st.caption(OWNER_VIEW)
    sheets["loadings"] = pd.DataFrame(loadings, columns=[f"LV {a + 1}" for a in range(loadings.shape[1])]).assign(
        channel=s.axis)


def _outlier_tab(s: Staples, diag, sheets: dict) -> None:
    show_chart(st, chemometrics_t2_q_figure(diag.table, diag.t2_limits, diag.q_limits), "t2_q", page=s.page)
    c = diag.counts
    st.markdown(
        f"**Over the 95 % / 99 % limits:** training rows: T² {c[('training', 'T²', 0.95)]} / "
        f"{c[('training', 'T²', 0.99)]}, Q {c[('training', 'Q', 0.95)]} / {c[('training', 'Q', 0.99)]} of "
        f"{diag.n_train}; test rows: T² {c.get(('test', 'T²', 0.95), 0)} / {c.get(('test', 'T²', 0.99), 0)}, "
        f"Q {c.get(('test', 'Q', 0.95), 0)} / {c.get(('test', 'Q', 0.99), 0)} of {len(s.test)}.")
    st.caption(f"{OWNER_VIEW} Hotelling T² on the {diag.n_components} latent variables of the non-private "
               f"{METHODS[s.method]}, limit A(n−1)/(n−A)·F(A, n−A) for training rows (for test rows the new-row "
               f"limit A(n²−1)/(n(n−A))·F, a little higher); Q residual (SPE) limit by {diag.q_method}. At 95 % about "
               "one row in twenty is over a limit by chance.")
    over = [col for col in diag.table.columns if col.endswith("over 99%")]
    flagged = diag.table[diag.table[over].any(axis=1)]
    if len(flagged):
        st.dataframe(human_headers(flagged), hide_index=True)
    sheets["T2 and Q"] = diag.table


def _spectra_tab(s: Staples) -> None:
    rows = example_rows(s.train, 5)
    panels = {}
    if s.chain is not None and s.chain != "none":
        panels[f"after '{s.chain}' (the non-private reference's chain)"] = s.X_model[rows]
    if s.private_preprocess is not None:
        panels[f"after '{s.private_chain}' (the private estimator's own, row-wise)"] = \
            s.private_preprocess.transform(s.X_raw[rows])
    if not panels:
        st.info("The rows are used as they are (chain 'none'): there is no preprocessing to compare.")
        return
    show_chart(st, chemometrics_spectra_figure(s.axis, s.X_raw[rows], panels, axis_label=s.axis_label,
                                               row_labels=[f"row {r}" for r in rows]),
               "raw_vs_preprocessed", page=s.page)
    st.caption(f"{OWNER_VIEW} Five training rows spread over the training set."
               + (" The non-private reference uses the raw spectra (chain 'none')." if s.chain == "none" else ""))


def _in_tab(tab, name: str, draw, *args) -> None:
    """Draw one staple in its tab; data it cannot use gives a message there, never an exception box."""
    with tab:
        try:
            draw(*args)
        except (ValueError, np.linalg.LinAlgError) as err:
            st.info(f"{name}: not available on these rows ({err}).")


def _reference_tabs(s: Staples, tabs, sheets: dict) -> None:
    Xtr, Xte = s.X_model[s.train], s.X_model[s.test]
    try:
        with fit_wait(f"{s.page}_reference", "Fitting the reference"):
            loadings, vips, diag = _reference(Xtr, s.y[s.train], Xte, s.k_page, s.method, s.train, s.test,
                                              s.upload, session_scope())
    except (ValueError, np.linalg.LinAlgError) as err:
        for tab in tabs:
            tab.info(f"The non-private reference could not be fitted on these rows: {err}.")
        return
    _in_tab(tabs[0], "Loadings", _reference_tab, s, loadings, vips, sheets)
    _in_tab(tabs[1], "T² and Q", _outlier_tab, s, diag, sheets)


def staples_section(s: Staples, later_sheets: dict | None = None) -> None:
    """The badge, then the lazy expander with the staples in tabs (tables into ``later_sheets``)."""
    mean_badge(s)
    box = st.expander(TITLE, key=f"{s.page}_staples", on_change="rerun")
    if not box.open:
        return
    sheets = {}
    with box:
        st.caption(OWNER_VIEW)
        names = s.tabs()
        tabs = st.tabs(names)
        _in_tab(tabs[0], "RMSECV", _rmsecv_tab, s, sheets)
        _in_tab(tabs[1], "Metrics", _metrics_tab, s, sheets)
        _in_tab(tabs[2], "Predictions outside the y range", _range_tab, s, sheets)
        _reference_tabs(s, tabs[3:5], sheets)
        if len(names) > 5:
            _in_tab(tabs[5], "Raw vs preprocessed", _spectra_tab, s)
    if later_sheets is not None:
        later_sheets.update({f"diagnostics {k}"[:31]: v for k, v in sheets.items()})


def _channel_axis(channels) -> tuple[np.ndarray, str]:
    try:
        return np.array([float(c) for c in channels]), "channel (column name)"
    except ValueError:
        return np.arange(len(channels)), "channel index"


def edpls_staples(choice, res: dict, Xp, *, label: str, chain: str, y_range=None, y_bound=None,
                  later_sheets: dict | None = None) -> None:
    """The staples on the edPLS page: ``choice`` (its data section), ``res`` (``fit_pair`` or
    ``fit_recommended`` output), ``Xp`` (the rows after the page's chain). The declared public range is
    ``y_range`` (recommended estimator) or [−y_bound, y_bound] (plain strict); none in paper mode."""
    p = choice.problem
    declared, where = None, "the declared public y range"
    if y_range is not None:
        declared = tuple(float(v) for v in y_range)
    elif y_bound is not None:
        declared, where = (-float(y_bound), float(y_bound)), "the declared public bound on |y|"
    s = Staples(page="edpls", X_raw=p.X, X_model=np.asarray(Xp, dtype=float), y=p.y, train=p.train, test=p.test,
                axis=choice.axis, axis_label=choice.axis_label, response=choice.response,
                k_page=int(choice.n_components), pred_private=np.asarray(res["pred_private"]),
                pred_reference=np.asarray(res["pred_plain"]), private_label=label, private_model=res["private"],
                declared_range=declared, range_label=where, dp_mean_pred=res.get("pred_constant"), chain=chain,
                private_preprocess=getattr(res["private"], "preprocess_", None),
                private_chain=getattr(res["private"], "preprocessing", None), upload=choice.ds.origin == "upload")
    staples_section(s, later_sheets)


def dp_pcr_staples(problem, result, *, response: str, label: str, k: int, y_bound=None,
                   later_sheets: dict | None = None, upload: bool = False) -> None:
    """The staples on the DP-PCR page (raw spectra, PCR reference, the declared bound on |y|)."""
    axis, axis_label = _channel_axis(problem.channels)
    X_te = problem.X[problem.test]
    s = Staples(page="dp_pcr", X_raw=problem.X, X_model=problem.X, y=problem.y, train=problem.train,
                test=problem.test, axis=axis, axis_label=axis_label, response=response,
                k_page=int(getattr(result.private, "n_components_", k)),
                pred_private=np.asarray(result.private.predict(X_te)),
                pred_reference=np.asarray(result.reference.predict(X_te)), private_label=label,
                private_model=result.private, method="pcr",
                declared_range=None if y_bound is None else (-float(y_bound), float(y_bound)),
                range_label="the declared public bound on |y|", upload=upload)
    staples_section(s, later_sheets)
