"""The edPLS page: widgets -> engine.methods.edpls -> figures. No math here (``pages/edpls.py`` runs ``main``).

Strict mode offers two estimators (radio "Strict estimator"): the recommended one (issue #18,
``make_strict_edpls``: the default) and the plain Analyze-Gauss EDPLS, kept for comparison. The recommended
one's public inputs, choices and headline numbers are ``ui.edpls.strict``; before any fit the planner
(``ui.edpls.planner``, issue #31) says what to expect. The default sample set is the NIR consortium (5,000 rows
and published public spectra): the one where the default private model is useful.

Noise: see ``ui.edpls.fits``. The data split keeps its own fixed split seed (a split is not a release).
"""

import numpy as np
import streamlit as st

from engine.methods.edpls import chain_caveat
from engine.methods.edpls.pipeline import PAGE_DEFAULTS, default_x_bound, strict_params
from engine.methods.edpls.recommended_evaluation import choice_rows
from engine.privacy.wording import paper_label
from ui.budget import budget_picker
from ui.chemometrics import edpls_staples
from ui.column_choice import page_problem_or_stop, response_picker, x_picker
from ui.data_picker import usable_dataset
from ui.edpls.analysis import samples_needed_section, sweep_section
from ui.edpls.chain import chain_builder, chain_info
from ui.edpls.exports import export_section, recommended_exports
from ui.edpls.figures import edpls_coef_figure, edpls_pred_figure
from ui.edpls.fits import (
    PAPER_AUDIT_KEY,
    Choice,
    _upload_name,
    fit_pair,
    fit_recommended,
    preprocess,
)
from ui.edpls.planner import planner_section
from ui.edpls.strict import (
    recommended_metrics,
    recommended_settings,
    show_choices,
    strict_estimator_setting,
    utility_sentence,
)
from ui.exports import show_chart
from ui.jobs_view import fit_wait
from ui.large_data import ORIGIN as LARGE_ORIGIN
from ui.large_data import large_edpls_section
from ui.ledger_view import show_ledger
from ui.model_card import response_metric
from ui.progress import session_scope
from ui.public_info import private_range_note, public_info_panel, released_range, show_range_warning
from ui.run_history import history_section, record_run
from ui.runtime.jobs import JobError
from ui.setting_errors import setting_error

#: Where each setting an engine message can be about is on this page (ui.setting_errors), by its real label.
SETTING_PLACES = (
    (("n_components",), "in 'Latent variables'"),
    (("x_public", "public spectra", "reference spectra"), "in the public spectra of the Public information panel"),
    (("y_range", "range of y", "y range", "y_bound"), "in the Public information panel ('Lowest possible y', "
                                                      "'Highest possible y')"),
    (("x_bound", "bound on"), "in 'Bound on ‖x‖ (row L2 norm)' in the Public information panel"),
    (("preprocess", "chain"), "in the preprocessing chain"),
    (("epsilon", "delta"), "in 'ε (epsilon)' or 'δ (delta)' in the sidebar"),
)
SETTINGS_FALLBACK = "The settings are 'Latent variables', the Public information panel and the sidebar's budget."

#: The sample set the page offers first: pooled and with public spectra, the default private model is useful.
DEFAULT_SAMPLE = "nir_consortium"
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
                        two_files=True, large=True, default_sample=DEFAULT_SAMPLE)
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
    problem = page_problem_or_stop(ds, response, split_how, channels)
    try:
        axis = np.array([float(c) for c in problem.channels])
        axis_label = "channel (column name)"
    except ValueError:
        axis, axis_label = np.arange(len(problem.channels)), "channel index"
    return Choice(ds, response, split_how, n_components, problem, axis, axis_label)


def preprocessing_section(choice: Choice, budget, recommended: bool = False) -> tuple:
    """The chain built for the fit (``ui.edpls.chain``: it drives the private model in every mode), what it
    learns from the rows and the rows after it (the non-private reference and the plain fits use them)."""
    strict = budget.mode == "strict"
    chain = chain_builder(strict, recommended, PAGE_DEFAULTS["chain"])
    info = chain_info(chain)
    if strict and info.get("learns_from_data"):
        st.warning(f"'{chain}' learns from the private rows ({info['learned']}): {info['strict_note']}")
    try:
        with fit_wait("edpls_preprocess", "Preprocessing"):
            Xp = preprocess(choice.problem.X, chain, choice.problem.train, _upload_name(choice), session_scope())
    except (ValueError, JobError) as err:
        st.error(f"Preprocessing '{chain}' failed on {choice.ds.name}: {err} (change the preprocessing chain)")
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
        setting_error(f"The fit on {choice.ds.name} was refused", err, SETTING_PLACES, SETTINGS_FALLBACK)
        st.stop()
    except JobError as err:
        st.error(str(err))
        st.stop()


def results_section(choice: Choice, res: dict, budget, label: str) -> None:
    private, plain, tr = res["private"], res["plain"], choice.problem.train
    strict = budget.mode == "strict"
    m1, m2, m3, m4 = st.columns(4)
    response_metric(m1, "RMSEP, private", f"{res['rmsep_private']:.4g}", choice.response)
    response_metric(m2, "RMSEP, non-private", f"{res['rmsep_plain']:.4g}", choice.response)
    response_metric(m3, "σ_y (test)", f"{res['sigma_y_test']:.4g}", choice.response,
                    "Standard deviation of the response on the test rows.")
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


def recommended_page(choice: Choice, budget, chain: str, Xp) -> None:
    """Strict mode with the recommended estimator: public inputs, fit, choices, ledger, exports, simulation."""
    setup = recommended_settings(choice)
    problem = choice.problem
    settings = dict(epsilon=budget.epsilon, delta=budget.delta, y_range=setup.y_range,
                    n_components_reference=choice.n_components, preprocessing=chain)
    try:
        with fit_wait("edpls_fit"):
            res = fit_recommended(problem.X, problem.y, problem.train, problem.test, Xp,
                                  tuple(sorted(settings.items())), setup.X_public, budget.noise_seed,
                                  budget.session_noise_key, _upload_name(choice))
    except ValueError as err:
        explained = _where_to_change(err, chain)
        if explained != str(err):  # the chain's refusal, with the two ways out on this page
            st.error(f"The recommended strict fit on {choice.ds.name} was refused: {explained}")
        else:
            setting_error(f"The recommended strict fit on {choice.ds.name} was refused", err, SETTING_PLACES,
                          SETTINGS_FALLBACK)
        st.stop()
    except JobError as err:
        st.error(str(err))
        st.stop()
    label = f"edPLS (strict, recommended, ε = {budget.epsilon:g})"
    private = res["private"]
    recommended_metrics(res, len(problem.train), choice.response)
    st.markdown(utility_sentence(res, budget.epsilon))
    show_range_warning(setup.y_range, private)
    if setup.y_range is None and private_range_note(private):
        st.info(private_range_note(private))
    show_choices(choice_rows(private))
    show_ledger(private.privacy_ledger_)
    _record(choice, res, budget, label, {"estimator": "recommended", "chain": chain,
                                         "y range": setup.y_range or "estimated privately",
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
    # the sweep compares preprocessing chains for the plain estimator, at bounds from the declared range (or, with
    # none declared, the range this fit released: a DP output, so post-processing)
    y_range = setup.y_range if setup.y_range is not None else released_range(private) or (0.0, 1.0)
    params = strict_params(n_components=choice.n_components, epsilon=budget.epsilon, delta=budget.delta,
                           calibration=budget.calibration, x_bound=default_x_bound(len(problem.channels)),
                           y_bound=max(abs(v) for v in y_range), chain=chain)
    sweep_section(choice, res, budget, chain, params, later_sheets, recommended=setup)
    samples_needed_section(choice, res, budget, Xp, params, later_sheets, recommended=setup)


def _where_to_change(err: ValueError, chain: str) -> str:
    """The engine's refusal, with where the settings it names are on this page (the recommended estimator's panel
    asks for no bound on x: a chain that does not start with SNV needs public spectra)."""
    text = str(err)
    if "start the chain with 'snv'" in text:
        return (f"the chain '{chain}' leaves the rows without a bound known before seeing them (SNV rows have norm "
                "√m, a derivative of raw spectra has none). Start the chain with snv in 'Preprocessing chain' above, "
                "or upload public spectra in the Public information panel (their bound is public).")
    return text


def _record(choice: Choice, res: dict, budget, label: str, settings: dict) -> None:
    """This fit in the session's run history, then the odometer and the history (``ui.run_history``)."""
    private = res["private"]
    record_run("edPLS", choice.ds, method=label, response=choice.response, settings=settings,
               rmsep=res["rmsep_private"], sigma_y=res["sigma_y_test"], epsilon=budget.epsilon, delta=budget.delta,
               ledger=private.privacy_ledger_, model=private, axis=choice.axis,
               companions=[res["constant"]] if "constant" in res else [])
    history_section("edpls", choice.ds)


def main() -> None:
    """The page below its title and documentation link (drawn by the entry point)."""
    budget = budget_picker("edpls")
    noise_std = noise_std_setting(budget)
    choice = data_section(budget)
    if budget.mode == "strict":  # before any fit (and before the panel that waits for a declared range)
        planner_section("edpls", choice.ds, choice.response, choice.problem, budget)
    recommended = budget.mode == "strict" and strict_estimator_setting() == "recommended"
    chain, info, Xp = preprocessing_section(choice, budget, recommended)
    if recommended:
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

