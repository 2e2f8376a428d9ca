"""edPLS page: widgets -> engine.methods.edpls -> figures. No math here.

Strict mode offers two estimators (radio "Strict estimator"): the recommended one (issue #18,
``make_strict_edpls``: the default) and the plain Analyze-Gauss EDPLS, kept for comparison. The recommended
one's public inputs, choices and headline numbers are ``ui.edpls.strict``.

Noise: every private fit, sweep and simulation draws its noise through ``budget.noise_seed`` (None:
fresh OS entropy; the "reproducible noise" switch: a known seed, recorded as not proven). The data
split keeps its own fixed split seed (a split is not a release). The fit is kept per session for the
same data and settings (``budget.session_noise_key``), so a rerun of the page shows the same release
instead of drawing a new one, and two sessions never share a noise draw.
"""
from dataclasses import dataclass

import numpy as np
import streamlit as st

from engine.data.preprocess import CHAIN_INFO, chain_names
from engine.methods.edpls import (
    chain_caveat,
    compare_private_plain,
    no_release_reason,
    owner_sheets,
    public_parameters,
    samples_needed,
    samples_needed_curve,
    shareable_ledger,
    to_json,
)
from engine.methods.edpls.paper_notes import paper_curve_diagnosis, paper_curve_note
from engine.methods.edpls.pipeline import PAGE_DEFAULTS, default_x_bound, page_problem, strict_params
from engine.methods.edpls.pipeline import preprocess as _preprocess
from engine.methods.edpls.recommended import to_json as recommended_to_json
from engine.methods.edpls.recommended_evaluation import (
    choice_rows,
    compare_recommended,
    recommended_no_release_reason,
    recommended_owner_sheets,
    recommended_public_parameters,
    recommended_references,
)
from engine.methods.edpls.sweeps import samples_needed_curve_recommended
from engine.privacy.wording import paper_claim, paper_label
from engine.reporting.report import DataInfo, RunReport
from ui.budget import budget_picker
from ui.chemometrics import edpls_staples
from ui.column_choice import response_picker, x_picker
from ui.data_picker import usable_dataset
from ui.doc_link import doc_link
from ui.edpls.figures import edpls_coef_figure, edpls_pred_figure, edpls_rmsep_curve_figure, edpls_samples_needed_figure
from ui.edpls.strict import (
    recommended_metrics,
    recommended_settings,
    show_choices,
    strict_estimator_setting,
    utility_sentence,
)
from ui.edpls.tasks import edpls_sweep as sweep
from ui.exports import export_bar, owner_secret, show_chart
from ui.figures.report import private_coefficients
from ui.jobs_view import fit_wait
from ui.large_data import ORIGIN as LARGE_ORIGIN
from ui.large_data import large_edpls_section
from ui.ledger_view import show_ledger
from ui.model_card import model_card
from ui.progress import Sweep, cached_sweep, session_scope
from ui.public_info import public_info_panel, show_range_warning
from ui.run_history import history_section, record_run
from ui.runtime.jobs import SWEEP_SECONDS, JobError, run_upload
from ui.tables import human_headers, in_response_unit

#: The stored audit behind paper mode's label, per noise variant (the σ² variant of the authors' code has none).
PAPER_AUDIT_KEY = {"sigma": "edpls"}
PAPER_FLAWS = (
    "**What paper-faithful mode does and does not guarantee.** It runs the edPLS paper's algorithm as published: "
    "noise is added to the weights, scores, X-loadings and y-loading of every component, each release "
    "with the full (ε, δ), as the paper's accounting says. Its sensitivities are the largest row norm and "
    "largest |y| of the private residuals, so the noise scale itself depends on the private data; the "
    "bounds assume that other rows' terms cancel, which they do not; and after the first deflation two "
    "neighbouring data sets differ in every row, so the per-component bounds no longer apply. The 4k "
    "releases compose to the total shown below, far above the nominal ε, and even that total is not a "
    "proven guarantee. Use strict mode for a guarantee."
)
STRICT_TEXT = (
    "**Strict mode** clips every row to the public bounds below, releases the second-moment matrix "
    "[X y]'[X y] once with symmetric Gaussian noise (Analyze-Gauss at the exact worst-case sensitivity of "
    "the scaled rows, at most √3/2), and computes PLS from the noisy moments as post-processing. Centring "
    "happens inside the same release. The whole fit is (ε, δ)-DP for add/remove-one neighbours."
)
SPLIT_SEED = PAGE_DEFAULTS["split_seed"]  # the train/test split's seed (not a noise seed: a split is no release)

STRICT_LEAKY_CHAIN = (
    "**Strict mode, but not a proven guarantee:** the preprocessing '{chain}' was fitted on the private rows "
    "({note}), so the clipped release is no longer (ε, δ)-DP as a whole; the ledger records it as not proven."
)

@st.cache_data(show_spinner=False, max_entries=32)
def preprocess(X, chain_name, train_idx, upload=None, scope=""):
    """The chain fitted on the training rows (``upload``: the uploaded file's name, fitted in a worker). ``scope``:
    the session's ``ui.progress.session_scope``: a noise-free result on private data is cached per session only
    (a cross-session hit would be faster, telling one session that another fitted the same table)."""
    return run_upload(upload is not None, _preprocess, X, chain_name, train_idx,
                      label=f"Preprocessing {upload} ('{chain_name}')")


@st.cache_data(show_spinner=False, max_entries=32)
def fit_pair(X, y, train_idx, test_idx, params, noise_seed, session_noise_key, upload=None):
    """The private fit beside the plain one. ``session_noise_key`` keeps one release per session and settings: a
    rerun shows the same release, another session (or the teaching switch) draws its own. ``upload``: the
    uploaded file's name; its fit runs in a worker with the job budgets (``ui.runtime.jobs``)."""
    return run_upload(upload is not None, compare_private_plain, X, y, train_idx, test_idx, params,
                      random_state=noise_seed, label=f"The edPLS fit on {upload}")


@st.cache_data(show_spinner=False, max_entries=32)
def references_recommended(X, y, train_idx, Xp, settings, X_public, upload=None, scope=""):
    """The recommended fit's two noise-free references (``recommended_references``), kept per session (``scope``,
    as ``preprocess``) and settings: they draw no noise, but a cache hit across sessions would reveal by its speed
    that another session fitted the same table. ``settings``: the fit's settings; epsilon is left out (the
    references do not use it)."""
    kept = {k: v for k, v in settings if k != "epsilon"}
    return run_upload(upload is not None, recommended_references, X, y, train_idx, X_reference=Xp,
                      X_public=X_public, label=f"The edPLS reference fits on {upload}", **kept)


@st.cache_data(show_spinner=False, max_entries=32)
def fit_recommended(X, y, train_idx, test_idx, Xp, settings, X_public, noise_seed, session_noise_key, upload=None):
    """The recommended strict fit beside the non-private PLS1 (on the page's chain and k) and the private
    constant predictor; one release per session and settings, as ``fit_pair`` (``upload``: in a worker). Never
    shared across sessions: that would hand every user the same noise draw (``session_noise_key``)."""
    references = references_recommended(X, y, train_idx, Xp, settings, X_public, upload, session_scope())
    return run_upload(upload is not None, compare_recommended, X, y, train_idx, test_idx, X_reference=Xp,
                      X_public=X_public, random_state=noise_seed, label=f"The edPLS fit on {upload}",
                      references=references, **dict(settings))


@dataclass
class Choice:
    """What the data section picked: the data set, the response and the problem (rows, split, channels)."""

    ds: object
    response: str
    split_how: str
    n_components: int
    problem: object
    axis: np.ndarray
    axis_label: str


def noise_std_setting(budget) -> str:
    with st.sidebar:
        if budget.mode == "paper":
            return st.radio(
                "Noise std applied", ("sigma", "sigma_squared"), key="edpls_noise_std",
                format_func=lambda v: {"sigma": "σ (correct Gaussian mechanism)",
                                       "sigma_squared": "σ² (the authors' code, to reproduce the figures)"}[v],
            )
    return "sigma"


def data_section(budget) -> Choice:
    ds = usable_dataset("spectra", key="edpls_data", hint="Pick a sample set or upload a spectra table to start.",
                        needs="edPLS needs a numeric response and at least two numeric channel columns",
                        two_files=True, large=True)
    if ds.origin == LARGE_ORIGIN:  # a data set beyond memory: its own strict fit, chunk by chunk
        large_edpls_section(ds, budget)
        st.stop()
    c1, c2, c3 = st.columns(3)
    response = response_picker(ds, "edpls", c1)
    split_how = c2.radio("Test rows", ("random", "last"), horizontal=True, key="edpls_split",
                         format_func=lambda v: {"random": "random 30 %", "last": "last 30 % of rows"}[v])
    channels = x_picker(ds, response, "edpls")
    n_max = max(1, min(20, len(channels), len(ds.df) - 3))
    n_components = int(c3.number_input("Latent variables", 1, n_max, min(PAGE_DEFAULTS["max_components"], n_max),
                                       key="edpls_k"))
    if len(channels) < 2:
        st.error(f"{ds.name}: with '{response}' as the response, fewer than two X columns are chosen.")
        st.stop()
    try:
        problem = page_problem(ds.df, response, ds.response_columns, split=split_how,
                               test_fraction=PAGE_DEFAULTS["test_fraction"], split_seed=SPLIT_SEED,
                               x_columns=channels)
    except ValueError as err:
        st.error(f"{ds.name}: {err}")
        st.stop()
    try:
        axis = np.array([float(c) for c in problem.channels])
        axis_label = "channel (column name)"
    except ValueError:
        axis, axis_label = np.arange(len(problem.channels)), "channel index"
    return Choice(ds, response, split_how, n_components, problem, axis, axis_label)


def preprocessing_section(choice: Choice, budget) -> tuple:
    """The chain picked for the fit, its CHAIN_INFO and the preprocessed rows."""
    chain = st.selectbox("Preprocessing for the fit", chain_names(),
                         index=chain_names().index(PAGE_DEFAULTS["chain"]),
                         key="edpls_chain", help="chemotools transformers, fitted on the training rows only")
    info = CHAIN_INFO.get(chain, {})
    if budget.mode == "strict" and info.get("learns_from_data"):
        st.warning(f"'{chain}' learns from the private rows ({info['learned']}): {info['strict_note']}")
    try:
        with fit_wait("edpls_preprocess", "Preprocessing"):
            Xp = preprocess(choice.problem.X, chain, choice.problem.train, _upload_name(choice), session_scope())
    except (ValueError, JobError) as err:
        st.error(f"Preprocessing '{chain}' failed on {choice.ds.name}: {err}")
        st.stop()
    return chain, info, Xp


def strict_settings(choice: Choice, budget, chain: str) -> tuple[dict, str | None, tuple]:
    """Strict mode: the public bounds the user declares (never read off private rows): the shared panel."""
    st.markdown(STRICT_TEXT)
    info = public_info_panel("edpls", choice.ds, choice.response, choice.problem)
    params = strict_params(n_components=choice.n_components, epsilon=budget.epsilon, delta=budget.delta,
                           calibration=budget.calibration, x_bound=info.x_bound, y_bound=info.y_bound, chain=chain)
    return params, info.range_note, info.y_range


def paper_settings(choice: Choice, budget, chain: str, noise_std: str) -> dict:
    st.markdown(PAPER_FLAWS)
    params = dict(n_components=choice.n_components, epsilon=budget.epsilon, delta=budget.delta, mode="paper",
                  calibration=budget.calibration, noise_std=noise_std)
    if chain_caveat(chain):
        params["caveats"] = (chain_caveat(chain),)
    return params


def fit_section(choice: Choice, Xp, params: dict, budget) -> dict:
    problem = choice.problem
    try:
        with fit_wait("edpls_fit"):
            return fit_pair(Xp, problem.y, problem.train, problem.test, params, budget.noise_seed,
                            budget.session_noise_key, _upload_name(choice))
    except ValueError as err:
        st.error(f"The fit on {choice.ds.name} was refused: {err}")
        st.stop()
    except JobError as err:
        st.error(str(err))
        st.stop()


def _upload_name(choice: Choice) -> str | None:
    """The uploaded file's name (its fits run with the job budgets), None for a sample set."""
    return choice.ds.name if choice.ds.origin == "upload" else None


def results_section(choice: Choice, res: dict, budget, label: str) -> None:
    private, plain, tr = res["private"], res["plain"], choice.problem.train
    strict = budget.mode == "strict"
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("RMSEP, private", f"{res['rmsep_private']:.4g}", help=in_response_unit(choice.response))
    m2.metric("RMSEP, non-private", f"{res['rmsep_plain']:.4g}", help=in_response_unit(choice.response))
    m3.metric("σ_y (test)", f"{res['sigma_y_test']:.4g}",
              help=in_response_unit(choice.response, "Standard deviation of the response on the test rows."))
    m4.metric("Rows clipped" if strict else "cond(P'W)",
              f"{private.n_clipped_} of {len(tr)}" if strict else f"{private.condition_number_:.3g}")
    st.caption("For you only: the RMSEPs, σ_y and the row counts are computed on your private rows without noise; "
               "they are in the owner's workbook, never in the shareable files.")
    if strict:
        st.caption(
            "Bounds must come from domain knowledge, not from the data: a bound read off the private rows is "
            f"itself a leak. For the data owner only: the largest training row norm here is "
            f"{res['max_row_norm_train']:.4g} and the largest |y| is {res['max_abs_y_train']:.4g}."
        )
    if strict and private.n_clipped_ > len(tr) / 2:
        st.warning(f"{private.n_clipped_} of {len(tr)} training rows exceed the public bounds and were clipped: "
                   "the bounds are far below the data's scale, so the model is fitted to squashed rows.")
    show_ledger(private.privacy_ledger_)

    f1, f2 = st.columns(2)
    show_chart(f1, edpls_coef_figure(choice.axis, private.coef_, plain.coef_, axis_label=choice.axis_label,
                                     private_label=label), "coefficients", page="edpls")
    show_chart(f2, edpls_pred_figure(res["y_test"], res["pred_private"], res["pred_plain"], response=choice.response,
                                     private_label=label), "predictions", page="edpls")


def export_section(choice: Choice, res: dict, budget, *, label: str, chain: str, info: dict, params: dict,
                   bounds_note: str | None, later_sheets: dict) -> None:
    """The shareable release and the owner's workbook; ``later_sheets`` is filled by the sections below
    (the workbook is built on click, after this run)."""
    ds, problem, private = choice.ds, choice.problem, res["private"]
    tr, te, strict = problem.train, problem.test, budget.mode == "strict"
    split_text = {"random": "random 30 %", "last": "last 30 % of rows"}[choice.split_how]
    report = RunReport(
        page="edpls", method=label,
        data=DataInfo.from_frame(ds.df, ds.name, ds.origin, [choice.response, *problem.channels],
                                 owner_secret=owner_secret()),
        preprocessing=f"{chain} (fitted on the training rows only)",
        parameters={**params, "test rows": split_text, "split seed": SPLIT_SEED,
                    "noise": ("reproducible (teaching): known noise seed " + str(budget.noise_seed))
                    if budget.noise_seed is not None else "fresh (operating-system entropy)",
                    "n_train": len(tr), "n_test": len(te), **({"bounds": bounds_note} if bounds_note else {})},
        public_parameters=public_parameters(private, preprocessing=chain, response=choice.response,
                                            test_split=split_text),
        mode=budget.mode, ledger=shareable_ledger(private), ledger_delta=budget.delta,
        figures=private_coefficients(problem.channels, private.coef_, label=label,
                                     shareable=not no_release_reason(private)),
        mode_text=(STRICT_LEAKY_CHAIN.format(chain=chain, note=info.get("strict_note", ""))
                   if strict and info.get("learns_from_data") else None),
        headline={"RMSEP, private": res["rmsep_private"], "RMSEP, non-private": res["rmsep_plain"],
                  "σ_y (test)": res["sigma_y_test"],
                  **({"rows clipped": f"{private.n_clipped_} of {len(tr)}"} if strict
                     else {"cond(P'W)": private.condition_number_})})
    why_not = no_release_reason(private)
    card = model_card("edpls", problem.channels, choice.response, chain)
    export_bar(report, release_json=None if why_not else (lambda: to_json(private, card=card, indent=1)),
               no_release_reason=why_not,
               owner_sheets=lambda: owner_sheets(res, feature_names=problem.channels, test_rows=te,
                                                 sweeps=later_sheets))


def recommended_exports(choice: Choice, res: dict, budget, *, label: str, chain: str, setup, later_sheets: dict):
    """The recommended fit's shareable files and the owner's workbook (``later_sheets``: filled below)."""
    ds, problem, private = choice.ds, choice.problem, res["private"]
    tr, te = problem.train, problem.test
    split_text = {"random": "random 30 %", "last": "last 30 % of rows"}[choice.split_how]
    declared = dict(response=choice.response, test_split=split_text, y_range=list(setup.y_range),
                    public_spectra=setup.public_name or "none")
    report = RunReport(
        page="edpls", method=label,
        data=DataInfo.from_frame(ds.df, ds.name, ds.origin, [choice.response, *problem.channels],
                                 owner_secret=owner_secret()),
        preprocessing="chosen by the recommended estimator among the row-wise chains (see its choices)",
        parameters={"epsilon": budget.epsilon, "delta": budget.delta, "y_range": setup.y_range,
                    "public spectra": setup.public_name or "none", "test rows": split_text, "split seed": SPLIT_SEED,
                    "noise": ("reproducible (teaching): known noise seed " + str(budget.noise_seed))
                    if budget.noise_seed is not None else "fresh (operating-system entropy)",
                    "reference (non-private)": f"PLS1, {choice.n_components} LVs, chain {chain}",
                    "n_train": len(tr), "n_test": len(te), **({"y range": setup.range_note} if setup.range_note
                                                              else {})},
        public_parameters=recommended_public_parameters(private, **declared),
        mode="strict", ledger=shareable_ledger(private.privacy_ledger_), ledger_delta=budget.delta,
        figures=private_coefficients(problem.channels, getattr(private, "coef_", None), label=label,
                                     shareable=not recommended_no_release_reason(private)),
        headline={"RMSEP, private": res["rmsep_private"], "RMSEP, non-private": res["rmsep_plain"],
                  "RMSEP, private constant predictor": res["rmsep_constant"], "σ_y (test)": res["sigma_y_test"]})
    why_not = recommended_no_release_reason(private)
    card = model_card("edpls", problem.channels, choice.response)
    export_bar(report, release_json=None if why_not else (lambda: recommended_to_json(private, card=card, indent=1)),
               no_release_reason=why_not,
               owner_sheets=lambda: recommended_owner_sheets(res, feature_names=problem.channels, test_rows=te,
                                                             sweeps=later_sheets))


def eps_grid_from(eps_text: str) -> list:
    try:
        eps_grid = sorted({float(v) for v in eps_text.replace(";", ",").split(",") if v.strip()})
        if not eps_grid or min(eps_grid) <= 0:
            raise ValueError
    except ValueError:
        st.error(f"The ε grid '{eps_text}' must be positive numbers separated by commas.")
        eps_grid = []
    return eps_grid


def sweep_section(choice: Choice, res: dict, budget, chain: str, params: dict, later_sheets: dict,
                  recommended=None) -> None:
    """RMSEP against ε after each chain; with ``recommended`` (its setup) the recommended estimator beside."""
    st.subheader("Privacy vs accuracy")
    if recommended is not None:
        st.caption("The recommended estimator's curve (its own preprocessing and projection) beside the plain "
                   "Analyze-Gauss strict fit after each chain below (its bounds: √m and the largest |y| of the "
                   "declared range).")
    problem, n_components = choice.problem, choice.n_components
    s1, s2, s3 = st.columns(3)
    chains = s1.multiselect("Preprocessing chains to compare", chain_names(), default=[chain], key="edpls_chains")
    reps = int(s2.number_input("Replicates per ε", 5, 500, 30, key="edpls_reps"))
    eps_text = s3.text_input("ε grid", "0.5, 1, 2, 5, 10, 50, 100", key="edpls_eps_grid")
    eps_grid = eps_grid_from(eps_text)
    # each chain's own caveat is added by the sweep (the page's chain is not the only one compared)
    sweep_params = {k: v for k, v in params.items() if k not in ("n_components", "epsilon", "caveats")}
    rmsep_sweep = Sweep("edpls_sweep", "RMSEP sweep")
    X_all, y_all, tr, te = problem.X, problem.y, problem.train, problem.test
    upload = _upload_name(choice)  # an upload's sweep runs in a worker with the job budgets
    if st.button("Run RMSEP sweep", type="primary", key="edpls_run_sweep", disabled=not (chains and eps_grid)):
        try:
            with rmsep_sweep.running("starting") as bar:
                # kept per session and settings (session_noise_key: sessions never share a noise draw), not with
                # st.cache_data: its replay of the progress bar fails on a hit
                st.session_state["edpls_curves"] = cached_sweep(
                    "edpls_rmsep", lambda: run_upload(
                        upload is not None, sweep, X_all, y_all, tr, te, tuple(chains), tuple(eps_grid), n_components,
                        reps, sweep_params, budget.noise_seed, label=f"The sweep on {upload}",
                        recommended=None if recommended is None else (recommended.y_range, recommended.X_public),
                        progress=lambda f, msg: bar.progress(min(f, 1.0), text=msg)),
                    X_all, y_all, tr, te, repr((tuple(chains), tuple(eps_grid), n_components, reps,
                                                sorted(sweep_params.items()), budget.noise_seed,
                                                budget.session_noise_key)),
                    *(() if recommended is None else (repr(recommended.y_range),
                                                      b"" if recommended.X_public is None else recommended.X_public)))
        except (ValueError, JobError) as err:
            st.error(f"The sweep was refused: {err}")
    curves = st.session_state.get("edpls_curves")
    if curves is not None:
        x_title = ("ε per the chosen accounting" if budget.mode == "strict" else
                   paper_claim(None, PAPER_AUDIT_KEY.get(sweep_params.get("noise_std", "sigma"))))
        show_chart(st, edpls_rmsep_curve_figure(curves, sigma_y=res["sigma_y_test"], x_title=x_title),
                   "rmsep_curves", page="edpls")
        st.caption("Each ε is the per-fit budget of the chosen mode; in paper mode the composed total is in the "
                   "table's \"ε total (basic sum)\" column. The status column is each fit's own ledger: \"proven\", "
                   "\"not proven\" (data-derived sensitivities, a chain fitted on the private rows, a known noise "
                   "seed) or \"no privacy\" (ε = ∞). RMSEPs are measured on your private test rows: the table is in "
                   "the owner's workbook, not in the shareable files.")
        st.dataframe(human_headers(curves), hide_index=True)
        later_sheets["RMSEP sweep"] = curves
        if budget.mode == "paper":
            paper_curve_section(choice, chain, eps_grid, reps, sweep_params, budget)


def paper_curve_section(choice: Choice, chain: str, eps_grid, reps: int, sweep_params: dict, budget) -> None:
    """Why paper mode's RMSEP can rise with ε: the engine's diagnosis, measured on these rows (owner only)."""
    problem = choice.problem
    tr, te = problem.train, problem.test
    Xp = preprocess(problem.X, chain, tr, _upload_name(choice), session_scope())  # cached by the preprocessing
    params = {k: v for k, v in sweep_params.items() if k != "mode"}
    upload = _upload_name(choice)
    try:
        with fit_wait("edpls_paper_note", "Diagnosing the paper curve"):
            diag = cached_sweep(
                "edpls_paper_note", lambda: run_upload(
                    upload is not None, paper_curve_diagnosis, Xp[tr], problem.y[tr], Xp[te], problem.y[te],
                    list(eps_grid), choice.n_components, min(reps, 100), random_state=budget.noise_seed,
                    label=f"The paper-curve diagnosis on {upload}", seconds=SWEEP_SECONDS, **params),
                Xp, problem.y, tr, te, repr((tuple(eps_grid), choice.n_components, min(reps, 100),
                                             sorted(params.items()), budget.noise_seed, budget.session_noise_key)))
    except JobError as err:
        st.error(str(err))
        return
    note = paper_curve_note(diag)
    if note:
        st.info(note)


def _simulate(choice: Choice, res: dict, budget, Xp, params: dict, sizes, recommended, progress):
    """The simulation's curve: the recommended estimator (``recommended``: its setup) or the plain one."""
    problem = choice.problem
    tr, te = problem.train, problem.test
    upload, label = _upload_name(choice), f"The simulation on {choice.ds.name}"
    if recommended is not None:
        return run_upload(
            upload is not None, samples_needed_curve_recommended, problem.X[tr], problem.y[tr], problem.X[te],
            res["y_test"], sizes, budget.epsilon, budget.delta, 20, y_range=recommended.y_range,
            X_public=recommended.X_public, random_state=budget.noise_seed, progress=progress, label=label)
    return run_upload(
        upload is not None, samples_needed_curve, Xp[tr], problem.y[tr], Xp[te], res["y_test"], sizes, budget.epsilon,
        choice.n_components, 20, random_state=budget.noise_seed, progress=progress, label=label,
        **{k: v for k, v in params.items() if k not in ("n_components", "epsilon", "mode")})


def samples_needed_section(choice: Choice, res: dict, budget, Xp, params: dict, later_sheets: dict,
                           recommended=None) -> None:
    """Strict mode: how many training rows the chosen budget would need for a target RMSEP, for the chosen
    strict estimator (``recommended``: the recommended estimator's setup; None: the plain one)."""
    st.subheader("How many samples would strict mode need?")
    problem = choice.problem
    tr = problem.train
    which = "the recommended strict estimator" if recommended is not None else "plain strict edPLS"
    target = st.number_input("Target RMSEP", min_value=1e-9, value=float(max(2 * res["rmsep_plain"], 1e-6)),
                             format="%.4g", key="edpls_target")
    simulation = Sweep("edpls_simulate", "simulation")
    if st.button("Simulate", key="edpls_samples"):
        n0 = len(tr)
        sizes = sorted({n0, *(int(n0 * f) for f in (2, 5, 10, 30, 100, 300, 1000))})
        try:
            with simulation.running("starting") as bar:
                curve = _simulate(choice, res, budget, Xp, params, sizes, recommended,
                                  lambda f, msg: bar.progress(min(f, 1.0), text=msg))
        except (ValueError, JobError) as err:
            st.error(f"The simulation was refused: {err}")
        else:
            st.session_state["edpls_needed"] = (curve, target, which)
    stored = st.session_state.get("edpls_needed")
    if stored is not None and stored[2] == which:
        curve, tgt, _ = stored
        need = samples_needed(curve, tgt)
        show_chart(st, edpls_samples_needed_figure(curve, target=tgt, name=which), "samples_needed", page="edpls")
        st.markdown(
            f"At ε = {budget.epsilon:g} {which} reaches a median RMSEP of {tgt:.4g} with about "
            f"**{need:,.0f}** training rows (you have {len(tr)})." if np.isfinite(need) else
            f"At ε = {budget.epsilon:g} {which} does not reach RMSEP {tgt:.4g} even with "
            f"{int(curve['n'].max()):,} rows in this simulation: not enough data for this budget."
        )
        st.caption("Simulated by resampling your training rows (optimistic: new samples are assumed to look like "
                   "the ones you have); the noise part is exact. The table is in the owner's workbook.")
        later_sheets["samples needed"] = curve


def recommended_page(choice: Choice, budget, chain: str, Xp) -> None:
    """Strict mode with the recommended estimator: public inputs, fit, choices, ledger, exports, simulation."""
    setup = recommended_settings(choice)
    problem = choice.problem
    settings = dict(epsilon=budget.epsilon, delta=budget.delta, y_range=setup.y_range,
                    n_components_reference=choice.n_components)
    try:
        with fit_wait("edpls_fit"):
            res = fit_recommended(problem.X, problem.y, problem.train, problem.test, Xp,
                                  tuple(sorted(settings.items())), setup.X_public, budget.noise_seed,
                                  budget.session_noise_key, _upload_name(choice))
    except ValueError as err:
        st.error(f"The recommended strict fit on {choice.ds.name} was refused: {err}")
        st.stop()
    except JobError as err:
        st.error(str(err))
        st.stop()
    label = f"edPLS (strict, recommended, ε = {budget.epsilon:g})"
    private = res["private"]
    recommended_metrics(res, len(problem.train), choice.response)
    st.markdown(utility_sentence(res, budget.epsilon))
    show_range_warning(setup.y_range, private)
    show_choices(choice_rows(private))
    show_ledger(private.privacy_ledger_)
    _record(choice, res, budget, label, {"estimator": "recommended", "y range": setup.y_range,
                                         "public spectra": setup.public_name or "none"})
    f1, f2 = st.columns(2)
    # the recommended model is linear in the preprocessed spectra: its coefficients beside the same estimator's
    # without noise (plain PLS on the page's chain is another model on other inputs)
    show_chart(f1, edpls_coef_figure(choice.axis, private.coef_, res["noise_free"].coef_,
                                     axis_label=f"{choice.axis_label}, after its preprocessing", private_label=label,
                                     reference_label="same estimator, no noise (ε = ∞)"), "coefficients",
               page="edpls")
    show_chart(f2, edpls_pred_figure(res["y_test"], res["pred_private"], res["pred_plain"], response=choice.response,
                                     private_label=label), "predictions", page="edpls")
    later_sheets = {}
    edpls_staples(choice, res, Xp, label=label, chain=chain, y_range=setup.y_range, later_sheets=later_sheets)
    recommended_exports(choice, res, budget, label=label, chain=chain, setup=setup, later_sheets=later_sheets)
    # the sweep compares preprocessing chains for the plain estimator, at bounds from the declared range
    params = strict_params(n_components=choice.n_components, epsilon=budget.epsilon, delta=budget.delta,
                           calibration=budget.calibration, x_bound=default_x_bound(len(problem.channels)),
                           y_bound=max(abs(v) for v in setup.y_range), chain=chain)
    sweep_section(choice, res, budget, chain, params, later_sheets, recommended=setup)
    samples_needed_section(choice, res, budget, Xp, params, later_sheets, recommended=setup)


def _record(choice: Choice, res: dict, budget, label: str, settings: dict) -> None:
    """This fit in the session's run history, then the odometer and the history (``ui.run_history``)."""
    private = res["private"]
    record_run("edPLS", choice.ds, method=label, response=choice.response, settings=settings,
               rmsep=res["rmsep_private"], sigma_y=res["sigma_y_test"], epsilon=budget.epsilon, delta=budget.delta,
               ledger=private.privacy_ledger_, model=private, axis=choice.axis,
               companions=[res["constant"]] if "constant" in res else [])
    history_section("edpls", choice.ds)


def main() -> None:
    st.title("edPLS: differentially private PLS1 regression")
    doc_link("edpls")
    budget = budget_picker("edpls")
    noise_std = noise_std_setting(budget)
    choice = data_section(budget)
    chain, info, Xp = preprocessing_section(choice, budget)
    if budget.mode == "strict" and strict_estimator_setting() == "recommended":
        recommended_page(choice, budget, chain, Xp)
        return
    y_range = None
    if budget.mode == "strict":
        params, bounds_note, y_range = strict_settings(choice, budget, chain)
    else:
        params, bounds_note = paper_settings(choice, budget, chain, noise_std), None
    res = fit_section(choice, Xp, params, budget)
    label = (f"edPLS (strict, ε = {budget.epsilon:g})" if budget.mode == "strict" else
             paper_label("edPLS", budget.epsilon, PAPER_AUDIT_KEY.get(noise_std)))
    results_section(choice, res, budget, label)
    _record(choice, res, budget, label, {"mode": budget.mode, "chain": chain, "latent variables": choice.n_components,
                                         **({"y range": y_range, "x bound": params["x_bound"]} if y_range else {})})
    later_sheets = {}  # filled below (sweep, simulation); the workbook is built on click, after this run
    edpls_staples(choice, res, Xp, label=label, chain=chain, y_bound=params.get("y_bound"), later_sheets=later_sheets)
    export_section(choice, res, budget, label=label, chain=chain, info=info, params=params,
                   bounds_note=bounds_note, later_sheets=later_sheets)
    sweep_section(choice, res, budget, chain, params, later_sheets)
    if budget.mode == "strict":
        samples_needed_section(choice, res, budget, Xp, params, later_sheets)


main()
