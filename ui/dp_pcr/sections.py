"""The DP-PCR page: widgets -> engine.methods.dp_pcr -> figures. No math and no privacy policy here
(``pages/dp_pcr.py`` runs ``main``).

Noise: the private fit and the sweep draw through ``budget.noise_seed`` (None: fresh OS entropy; the
teaching switch: a known seed, recorded as not proven by the engine). The fit is kept per session and
settings (``budget.session_noise_key``). The data split keeps its own fixed seed (a split is no release).
Bounds are declared by the user (defaults: edPLS's page defaults, never read off uploaded rows). Before any
fit the planner (``ui.edpls.planner``, issue #31) says what private accuracy to expect for this shape.
"""
import numpy as np
import streamlit as st

from engine.methods.dp_pcr import (
    compare,
    no_release_reason,
    owner_sheets,
    public_parameters,
    reference_coefficients,
    rmsep_vs_epsilon,
    to_json,
)
from engine.methods.edpls import shareable_ledger
from engine.methods.edpls.pipeline import PAGE_DEFAULTS
from engine.reporting.report import DataInfo, RunReport
from ui.budget import budget_picker
from ui.chemometrics import dp_pcr_staples
from ui.column_choice import page_problem_or_stop, response_picker, x_picker
from ui.data_picker import usable_dataset
from ui.dp_pcr.figures import dp_pcr_coef_figure, dp_pcr_pred_figure, dp_pcr_rmsep_figure, dp_pcr_variance_figure
from ui.edpls.planner import planner_section
from ui.exports import export_bar, owner_secret, show_chart
from ui.figures.report import private_coefficients
from ui.jobs_view import fit_wait
from ui.ledger_view import show_ledger
from ui.model_card import model_card, response_metric
from ui.progress import Sweep, cached_sweep
from ui.public_info import public_info_panel, show_range_warning
from ui.run_history import history_section, record_run
from ui.runtime.jobs import JobError, run_upload
from ui.tables import human_headers

PAGE = "dp_pcr"
SPLIT_SEED = PAGE_DEFAULTS["split_seed"]  # the train/test split's seed (not a noise seed: a split is no release)
SPLITS = {"random": "random 30 %", "last": "last 30 % of rows"}
INTRO = (
    "**Principal component regression with one private release.** Every row is clipped to the public bounds "
    "below, the second-moment matrix [X y]'[X y] is released once with symmetric Gaussian noise (at its exact "
    "worst-case sensitivity), and the principal components of the noisy X block and the regression of y on "
    "their scores are computed from it as post-processing. Centring happens inside the same release. The "
    "whole fit is (ε, δ)-DP for add/remove-one neighbours, the same release as strict edPLS: the sweep below "
    "compares the two at every ε."
)


def pick_problem():
    """Data, response, split and number of components (stops the page when the data cannot be used)."""
    ds = usable_dataset("spectra", key="dp_pcr_data", hint="Pick a sample set or upload a spectra table to start.",
                        needs="DP-PCR needs a numeric response and at least two numeric channel columns")
    c1, c2, c3 = st.columns(3)
    response = response_picker(ds, "dp_pcr", c1)
    split = c2.radio("Test rows", tuple(SPLITS), horizontal=True, key="dp_pcr_split", format_func=SPLITS.get)
    channels = x_picker(ds, response, "dp_pcr")
    problem = page_problem_or_stop(ds, response, split, channels)
    n_max = max(1, min(20, len(problem.channels), len(problem.train) - 2))
    k = int(c3.number_input("Principal components", 1, n_max, min(PAGE_DEFAULTS["max_components"], n_max),
                            key="dp_pcr_k"))
    return ds, response, split, problem, k


def declare_bounds(ds, response, problem):
    """The public information the user declares (the shared panel: a range for y, the bound on |y| derived)."""
    st.markdown(INTRO)
    return public_info_panel(PAGE, ds, response, problem)


@st.cache_data(show_spinner=False, max_entries=32)
def fit(X, y, train_idx, test_idx, params, noise_seed, session_noise_key, upload=None):
    """The private fit beside the non-private PCR (one release per session and settings; ``upload``: the uploaded
    file's name, its fit runs in a worker with the job budgets, ``ui.runtime.jobs``)."""
    return run_upload(upload is not None, compare, (X[train_idx], y[train_idx]), (X[test_idx], y[test_idx]),
                      random_state=noise_seed, label=f"The DP-PCR fit on {upload}", **params)


def show_fit(problem, result, response, label):
    """Headline numbers, the ledger and the figures of one fit."""
    private, reference = result.private, result.reference
    X_te, y_te = problem.X[problem.test], problem.y[problem.test]
    m1, m2, m3, m4 = st.columns(4)
    response_metric(m1, "RMSEP, private", f"{result.headline['RMSEP (private)']:.4g}", response)
    response_metric(m2, "RMSEP, non-private", f"{result.headline['RMSEP (non-private)']:.4g}", response)
    response_metric(m3, "σ_y (test)", f"{float(y_te.std()):.4g}", response,
                    "Standard deviation of the response on the test rows.")
    m4.metric("Rows clipped", f"{private.n_clipped_} of {len(problem.train)}")
    st.caption("For you only: the RMSEPs, σ_y and the row counts are computed on your private rows without noise; "
               "they are in the owner's workbook, never in the shareable files.")
    show_ledger(private.privacy_ledger_)
    try:
        axis, axis_label = np.array([float(c) for c in problem.channels]), "channel (column name)"
    except ValueError:
        axis, axis_label = np.arange(len(problem.channels)), "channel index"
    f1, f2 = st.columns(2)
    show_chart(f1, dp_pcr_coef_figure(axis, private.coef_, reference_coefficients(reference)[0],
                                      axis_label=axis_label, private_label=label), "coefficients", page=PAGE)
    show_chart(f2, dp_pcr_pred_figure(y_te, private.predict(X_te), reference.predict(X_te), response=response,
                                      private_label=label), "predictions", page=PAGE)
    show_chart(st, dp_pcr_variance_figure(private.explained_variance_ratio_,
                                          reference[0].explained_variance_ratio_), "explained_variance", page=PAGE)


def show_exports(ds, response, split, problem, result, params, budget, label, later_sheets):
    """The shareable release (JSON, report) and the owner's workbook."""
    private = result.private
    report = RunReport(
        page=PAGE, method=label, data=DataInfo.from_frame(ds.df, ds.name, ds.origin, [response, *problem.channels],
                                                           owner_secret=owner_secret()),
        parameters={**params, "test rows": SPLITS[split], "split seed": SPLIT_SEED,
                    "noise": ("reproducible (teaching): known noise seed " + str(budget.noise_seed))
                    if budget.noise_seed is not None else "fresh (operating-system entropy)",
                    "n_train": len(problem.train), "n_test": len(problem.test)},
        public_parameters=public_parameters(private, response=response, test_split=SPLITS[split]),
        mode="strict", ledger=shareable_ledger(private.privacy_ledger_), ledger_delta=budget.delta,
        figures=private_coefficients(problem.channels, private.coef_, label=label,
                                     shareable=not no_release_reason(private)),
        headline={**result.headline, "rows clipped": f"{private.n_clipped_} of {len(problem.train)}"})
    why_not = no_release_reason(private)
    test = (problem.X[problem.test], problem.y[problem.test])
    card = model_card(PAGE, problem.channels, response)
    export_bar(report, release_json=None if why_not else (lambda: to_json(private, card=card, indent=1)),
               no_release_reason=why_not,
               owner_sheets=lambda: owner_sheets(result, test, feature_names=problem.channels,
                                                 test_rows=problem.test, sweeps=later_sheets))


def sweep_settings():
    """Replicates and the ε grid of the side-by-side sweep (None for a bad grid)."""
    s1, s2 = st.columns(2)
    reps = int(s1.number_input("Replicates per ε", 5, 500, 20, key="dp_pcr_reps"))
    text = s2.text_input("ε grid", "0.5, 1, 2, 5, 10, 50, 100", key="dp_pcr_eps_grid")
    try:
        grid = sorted({float(v) for v in text.replace(";", ",").split(",") if v.strip()})
        if not grid or min(grid) <= 0:
            raise ValueError
    except ValueError:
        st.error(f"The ε grid '{text}' must be positive numbers separated by commas.")
        return reps, None
    return reps, grid


def show_sweep(problem, k, params, budget, later_sheets, upload=None):
    """RMSEP vs ε for DP-PCR and strict edPLS on the same split and bounds."""
    st.subheader("Privacy vs accuracy: PCR and PLS side by side")
    reps, grid = sweep_settings()
    X, y, tr, te = problem.X, problem.y, problem.train, problem.test
    sweep_params = {key: v for key, v in params.items() if key not in ("n_components", "epsilon")}
    runner = Sweep("dp_pcr_sweep", "RMSEP sweep")
    if st.button("Run RMSEP sweep", type="primary", key="dp_pcr_run_sweep", disabled=grid is None):
        try:
            with runner.running("starting") as bar:
                st.session_state["dp_pcr_curves"] = cached_sweep(
                    "dp_pcr_rmsep", lambda: run_upload(
                        upload is not None, rmsep_vs_epsilon, X[tr], y[tr], X[te], y[te], grid, k, reps,
                        random_state=budget.noise_seed, label=f"The sweep on {upload}",
                        progress=lambda f, msg: bar.progress(min(f, 1.0), text=msg), **sweep_params),
                    X, y, tr, te, repr((tuple(grid), k, reps, sorted(sweep_params.items()), budget.noise_seed,
                                        budget.session_noise_key)))
        except (ValueError, JobError) as err:
            st.error(f"The sweep was refused: {err}")
    curves = st.session_state.get("dp_pcr_curves")
    if curves is not None:
        show_chart(st, dp_pcr_rmsep_figure(curves, sigma_y=float(y[te].std())), "rmsep_pcr_pls", page=PAGE)
        st.caption("Both methods spend one strict release per fit at the same public bounds and centring. The "
                   "status column is each fit's own ledger. RMSEPs are measured on your private test rows: the "
                   "table is in the owner's workbook, not in the shareable files.")
        st.dataframe(human_headers(curves), hide_index=True)
        later_sheets["RMSEP vs epsilon"] = curves


def main():
    """The page below its title and documentation link (drawn by the entry point)."""
    budget = budget_picker(PAGE, modes=("strict",))
    ds, response, split, problem, k = pick_problem()
    planner_section(PAGE, ds, response, problem, budget)  # before any fit and before the panel waits for a range
    info = declare_bounds(ds, response, problem)
    x_bound, y_bound = info.x_bound, info.y_bound
    params = dict(n_components=k, epsilon=budget.epsilon, delta=budget.delta, calibration=budget.calibration,
                  x_bound=x_bound, y_bound=y_bound)
    upload = ds.name if ds.origin == "upload" else None  # an upload's fits run in a worker (ui.runtime.jobs)
    try:
        with fit_wait("dp_pcr_fit"):
            result = fit(problem.X, problem.y, problem.train, problem.test, params, budget.noise_seed,
                         budget.session_noise_key, upload)
    except ValueError as err:
        st.error(f"The fit on {ds.name} was refused: {err}")
        st.stop()
    except JobError as err:
        st.error(str(err))
        st.stop()
    label = f"DP-PCR (ε = {budget.epsilon:g})"
    show_fit(problem, result, response, label)
    show_range_warning(info.y_range, result.private)
    record_run("DP-PCR", ds, method=label, response=response,
               settings={"components": k, "y range": info.y_range, "x bound": x_bound},
               rmsep=result.headline["RMSEP (private)"], sigma_y=float(problem.y[problem.test].std()),
               epsilon=budget.epsilon, delta=budget.delta, ledger=result.private.privacy_ledger_, model=result.private,
               axis=None)
    history_section(PAGE, ds)
    later_sheets = {}  # filled by the sweep below; the workbook is built on click, after this run
    dp_pcr_staples(problem, result, response=response, label=label, k=k, y_bound=y_bound, later_sheets=later_sheets,
                   upload=upload is not None)
    show_exports(ds, response, split, problem, result, params, budget, label, later_sheets)
    show_sweep(problem, k, params, budget, later_sheets, upload)
