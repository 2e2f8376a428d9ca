"""VAR-ADMM: collaborative forecasting across data owners, and what the ADMM leaks (issue #9;
spec var_admm.md). Thin page: widgets -> engine.methods.var_admm / engine.attacks.var_admm_attacks
-> ui.figures.
"""
from __future__ import annotations

import math
import secrets

import numpy as np
import pandas as pd
import streamlit as st

from engine.data import DataError
from engine.data.catalog import SAMPLE_SETS
from engine.methods.var_admm import (
    DEFENCES,
    DP_STATEMENTS,
    NOT_DP_MODEL,
    PER_VALUE_UNIT,
    SCHEME_LABELS,
    calibrated_noise_scale,
    calibrates_from_epsilon,
    neighbourhood,
    noise_range_declaration,
    owner_sheets,
    parse_lags,
    privacy_statement,
    release_refusal,
)
from engine.reporting.report import DataInfo, RunReport
from ui.budget import budget_picker
from ui.data_picker import data_picker
from ui.exports import export_bar, owner_secret, show_chart
from ui.federation_run import federation_section, var_flower_runs
from ui.jobs_view import fit_wait
from ui.ledger_view import show_ledger
from ui.progress import Sweep
from ui.runtime.jobs import JobError
from ui.setting_errors import setting_error
from ui.tables import human_headers
from ui.tabs import lazy_tabs
from ui.var_admm.attack import attack_tab
from ui.var_admm.figures import (
    var_convergence_figure,
    var_forecast_figure,
    var_message_flow_figure,
    var_privacy_curve_figure,
    var_skill_figure,
)
from ui.var_admm.runs import (
    MIN_STEPS,
    SCHEME_CHOICES,
    Defence,
    Setup,
    fit_and_forecast,
    own_units,
    read_panel,
    run_defence,
    sweep_point,
    usable_panel,
)

NOISE_LAWS = ("laplace", "gaussian", "uniform")
DP_NOISE = ("laplace", "gaussian", "uniform", "naive_laplace")  # noise on the values: a release of the data
#: Sample sets whose value range is a documented public rating (lo, hi, where it is documented).
SAMPLE_RATINGS = {SAMPLE_SETS["solar"].title: (0.0, 1.2, "the sample set's documented rating: its values are "
                                               "normalised output (power / clear-sky power), clipped to [0, 1.2] by "
                                               "construction (sample_data/README.md)")}
PUBLIC_RANGE_LABEL = "This range is public: it comes from the plant's rating, not from the data"


# --------------------------------------------------------------------------- page sections
def intro() -> None:
    st.warning(
        "**Guarantee, in words: the ADMM fit itself protects no owner's series; only values clipped into a "
        "range you declare public and noised before they leave their owner are private (local DP, for an "
        "owner's whole series).** No ADMM variant here is private: an owner rebuilds every other owner's series "
        "exactly after a handful of iterations, the central node too; random masks and noise on the coefficients "
        "do not stop it. Its guarantee is stated for an owner's whole series (the ε of one value, "
        "added up over the series); a single value alone gets a smaller ε, shown apart and labelled so. "
        "Multiplicative and linear transformations and noise inside ADMM are **not DP**.",
        icon=":material/lock_open:",
    )
    st.markdown(
        "Owners of neighbouring solar plants (or any geographically spread series) forecast better together: "
        "a vector autoregression (VAR) uses **every owner's recent values** to forecast each owner's next value. "
        "Pooling the data is what they want to avoid, so the paper's collaborative fit splits the VAR by owner and "
        "solves it by **ADMM** (Gonçalves, Bessa & Pinson): each owner keeps its series and exchanges only "
        "intermediate matrices with a central node. This page fits that model on your series, measures the skill "
        "over each owner's local model, and then shows what the exchanged matrices **leak**: the paper's "
        "three leak results, run live."
    )


def data_section() -> Setup:
    dataset = data_picker(kind="timeseries", key="var_admm_data", check=usable_panel)
    if dataset is None:
        st.info("Pick the sample solar series or upload a wide (time + one column per site) or long (time, site, "
                "value) table.")
        st.stop()
    try:
        full = read_panel(dataset.df, dataset.name)
    except (DataError, ValueError) as err:
        st.error(f"{dataset.name} cannot be used as a set of time series: {err}")
        st.stop()
    if full.shape[1] < 2:
        st.error(f"{dataset.name}: a collaboration needs at least two series (owners); the table has "
                 f"{full.shape[1]}.")
        st.stop()
    # Widgets whose defaults are read off the data set are keyed on it: a choice made for one data set (the solar
    # switch, the range and its declaration, the span) must never silently carry over to another one.
    hourly = (isinstance(full.index, pd.DatetimeIndex) and len(full) > 48
              and (full.index[1] - full.index[0]) == pd.Timedelta("1h"))
    return Setup(dataset, full, f"{dataset.origin}:{dataset.name}", hourly)


def owners_and_span(setup: Setup) -> list:
    """The span and the owners (defaults small so the first charts appear fast); returns the chosen sites."""
    full, data_tag, hourly = setup.full, setup.data_tag, setup.hourly
    c1, c2, c3 = st.columns(3)
    sites_all = list(full.columns)
    rows_default = min(len(full), 24 * 120 if hourly else len(full))
    setup.n_rows = int(c1.number_input("Rows (time steps) from the start", min(MIN_STEPS, len(full)), len(full),
                                       rows_default, step=24 if hourly else 10, key=f"var_admm_rows_{data_tag}",
                                       help="A shorter span fits faster; enlarge it for the full study."))
    pick = c2.radio("Owners", ("Neighbourhood of a site", "First sites of the file", "Choose"), key="var_admm_pick",
                    help="Neighbourhood: the sites whose series correlate most with the chosen one (for solar "
                         "plants, its neighbours, where the lead-lag links are).")
    if pick == "Choose":
        return c3.multiselect("Sites (owners)", sites_all, default=sites_all[:min(8, len(sites_all))],
                              key=f"var_admm_sites_{data_tag}")
    n_sites = int(c3.slider("Number of owners", 2, len(sites_all), min(8, len(sites_all)),
                            key=f"var_admm_n_sites_{data_tag}"))
    if pick == "First sites of the file":
        return sites_all[:n_sites]
    centre = c3.selectbox("Centre site", sites_all, key=f"var_admm_centre_{data_tag}")
    return neighbourhood(full, centre, n_sites, setup.n_rows)


def model_options(setup: Setup) -> tuple[str, dict]:
    """The solar switch, the lags and the ADMM settings; returns the lags as typed and the settings."""
    data_tag, hourly = setup.data_tag, setup.hourly
    is_solar_like = bool((setup.full.to_numpy() == 0).mean() > 0.2)
    setup.solar = st.checkbox("Solar series (night = 0: fit and score daylight hours)", is_solar_like,
                              key=f"var_admm_solar_{data_tag}",
                              help="Spec 6.3: night values are 0, each site is centred on its daytime mean, and only "
                                   "hours in daylight at all sites are fitted and scored.")
    c4, c5, c6, c7 = st.columns(4)
    lags_text = c4.text_input("Lags", "1, 2, 24" if hourly else "1, 2", key=f"var_admm_lags_{data_tag}",
                              help="A number p (lags 1..p) or a list such as 1, 2, 24 (hour before, two hours "
                                   "before, same hour yesterday).")
    penalty = c5.selectbox("Penalty", ("none", "lasso", "ridge"), key="var_admm_penalty")
    alpha = float(c6.number_input("α (per row; λ = α T)", 0.0, 10.0, 0.0 if penalty == "none" else 0.001,
                                  format="%.4f", key="var_admm_alpha", disabled=penalty == "none"))
    rho = float(c7.slider("ρ (ADMM)", 0.1, 50.0, 2.0, step=0.1, key="var_admm_rho",
                          help="Spec default 2. Strongly correlated series converge faster with a smaller ρ."))
    c8, c9, c10, c11 = st.columns(4)
    stop_mode = c8.radio("Iterations", ("Boyd's stopping rule", "Fixed K (paper mode)"), key="var_admm_stop",
                         help="Boyd's rule (relative tolerance 1e-6, relative to the data's own scale), or exactly "
                              "K iterations with no check of convergence (the paper's fixed-K experiments).")
    max_iter = int(c9.number_input("Max iterations" if stop_mode.startswith("Boyd") else "K", 1, 20000,
                                   3000 if stop_mode.startswith("Boyd") else 50, key="var_admm_iter"))
    init = c10.selectbox("Initialisation", ("random", "zero"), key="var_admm_init",
                         help="zero: Boyd's default, the first broadcast is 2Y/(n + ρ) (every series leaks). "
                              "random: the setting in which the paper shows the owners' leak.")
    variant = c11.selectbox("Protocol", ("base: central node holds Y", "Y-free"), key="var_admm_variant")
    scheme = st.selectbox("ADMM scheme", list(SCHEME_CHOICES), format_func=SCHEME_CHOICES.get,
                          key="var_admm_scheme",
                          help="Automatic runs the accelerated scheme for the fit (ρ = n, where the broadcast no "
                               "longer depends on the dual, plus Anderson mixing of the owners' last updates: a few "
                               "iterations instead of hundreds) and the paper's plain scheme wherever the paper's "
                               "messages matter (fixed K, the attacks, noise inside ADMM). ρ applies to the paper's "
                               "schemes only. The Attack tab always runs the paper's scheme: the attacks read its "
                               "messages.")
    settings = {"penalty": penalty, "alpha": alpha if penalty != "none" else 0.0, "rho": rho, "init": init,
                "variant": "y_free" if variant.startswith("Y-free") else "base", "max_iter": max_iter,
                "tol": 1e-6 if stop_mode.startswith("Boyd") else None, "scheme": scheme,
                "init_seed": 0}  # ADMM's random start and the attack simulations only: never the defence's noise
    return lags_text, settings


def settings_section(setup: Setup) -> None:
    with st.expander("Owners, span and model", expanded=True):
        chosen = owners_and_span(setup)
        lags_text, setup.settings = model_options(setup)
    try:
        setup.lags = parse_lags(lags_text)
    except ValueError as err:
        st.error(f"Lags: {err}")
        st.stop()
    if len(chosen) < 2:
        st.error("Choose at least two sites: a collaboration needs two owners.")
        st.stop()
    setup.Y = setup.full.iloc[:setup.n_rows][list(chosen)]


#: Where each setting an engine message can be about is on this page (ui.setting_errors), by its real label.
SETTING_PLACES = (
    (("lag",), "in 'Lags' under 'Owners, span and model'"),
    (("alpha", "penalty"), "in 'Penalty' or 'α (per row; λ = α T)' under 'Owners, span and model'"),
    (("rho", "ρ"), "in 'ρ (ADMM)' under 'Owners, span and model'"),
    (("max_iter", "iteration"), "in 'Iterations' under 'Owners, span and model'"),
    (("rows", "time steps", "sample"), "in 'Rows (time steps) from the start' under 'Owners, span and model'"),
)
SETTINGS_FALLBACK = "The settings are under 'Owners, span and model' above."


def fit_section(setup: Setup) -> dict:
    try:
        with fit_wait("var_admm_fit"):
            return fit_and_forecast(setup.Y, setup.solar, setup.lags, setup.settings, setup.upload)
    except (DataError, ValueError, ArithmeticError, JobError) as err:
        setting_error("The model cannot be fitted on this choice", err, SETTING_PLACES, SETTINGS_FALLBACK)
        st.stop()


def fit_summary(setup: Setup, fit: dict) -> None:
    table, settings = fit["table"], setup.settings
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("ADMM iterations",
              f"{fit['n_iter']}" + ("" if fit["converged"] or settings["tol"] is None else " (no convergence)"),
              help="Boyd's rule: primal and dual residuals below their thresholds (relative tolerance 1e-6, relative "
                   "to the data's own scale), or the fixed K.")
    m2.metric("max |B_ADMM − B_central|", f"{fit['gap']:.1e}",
              help="Largest coefficient difference between the distributed fit and the pooled fit of the same "
                   "settings.")
    m3.metric("Median MAE gain over local AR", f"{table['mae_gain_pct'].median():.1f} %",
              help="100 (1 − MAE_VAR / MAE_AR) per owner; AR = each owner's own lags only.")
    m4.metric("Owners gaining ≥ 10 % (MAE)", f"{int((table['mae_gain_pct'] >= 10).sum())} of {len(table)}")
    scheme_text = (f"**ADMM scheme that ran: {fit['scheme']}**, {SCHEME_LABELS[fit['scheme']]}"
                   + (f" (ρ = n = {fit['rho_used']:g}; ρ above is not used" if fit["scheme"] == "anderson" else
                      f" (ρ = {fit['rho_used']:g}")
                   + (f"; {fit['rejected']} mixed steps refused by the safeguard)" if fit["rejected"] else ")") + ". "
                   + ("Stopping: Boyd's rule, relative tolerance 1e-6." if settings["tol"] is not None else
                      f"Fixed K = {settings['max_iter']} iterations (paper mode): no stopping rule, convergence is "
                      "not checked."))
    st.markdown(scheme_text)
    if fit["convergence_warning"]:
        st.warning(f"**Not converged.** {fit['convergence_warning']}. The coefficients and forecasts below are those "
                   "of the last iteration.", icon=":material/warning:")
    st.caption(f"{len(setup.Y.columns)} owners, {fit['n_obs']} training rows fitted, {fit['n_test_scored']} test rows "
               f"scored (one step ahead, rolling, coefficients fixed). Lags {', '.join(map(str, setup.lags))}. These "
               "evaluations use your private rows: they are for you (owner's workbook), not for sharing.")


def session_noise_draw() -> str:
    """Fresh noise: every session draws its own noise (the cache tells draws apart by this tag; it seeds nothing)."""
    if "var_admm_noise_draw" not in st.session_state:
        st.session_state["var_admm_noise_draw"] = secrets.token_hex(8)
    return st.session_state["var_admm_noise_draw"]


def _outward(x: float, up: bool) -> float:
    """x rounded outward to two significant digits (a prefill, not a statistic to publish)."""
    if x == 0 or not math.isfinite(x):
        return 0.0
    step = 10 ** (math.floor(math.log10(abs(x))) - 1)
    return float((math.ceil(x / step) if up else math.floor(x / step)) * step)


def range_inputs(setup: Setup) -> tuple[tuple, float, bool]:
    """The range every value is clipped into before the noise. Public only by the user's declaration."""
    dataset, data_tag = setup.dataset, setup.data_tag
    rating = SAMPLE_RATINGS.get(dataset.name) if dataset.origin == "sample" else None
    if rating is not None:
        lo_default, width_default, range_note = rating[0], rating[1] - rating[0], f"Prefilled with {rating[2]}."
    else:
        values = setup.full.to_numpy(dtype=float)
        obs_lo, obs_hi = float(np.nanmin(values)), float(np.nanmax(values))  # a suggestion only
        lo_default = _outward(obs_lo, up=False)
        width_default = max(_outward(obs_hi, up=True) - lo_default, 0.001)
        range_note = (f"Prefilled from your file: Δ is the observed range of the data (about [{obs_lo:.4g}, "
                      f"{obs_hi:.4g}], private, shown to you only). Replace it with the plants' rating (e.g. 0 to "
                      "the rated power) before you declare it public.")
    r1, r2, r3 = st.columns([1, 1, 2])
    range_lo = float(r1.number_input("Lowest value of the range", -1e9, 1e9, float(lo_default),
                                     key=f"var_admm_range_lo_{data_tag}",
                                     help="Every value is clipped into [lowest, lowest + Δ] before the noise."))
    range_width = float(r2.number_input("Public range Δ of one value", 0.001, 1e9, float(width_default),
                                        key=f"var_admm_range_{data_tag}",
                                        help="The noise is calibrated to this width: one value can move the noisy "
                                             "output by at most Δ once it is clipped."))
    declared = r3.checkbox(PUBLIC_RANGE_LABEL, value=False, key=f"var_admm_range_public_{data_tag}",
                           help="Tick only when the range is known without looking at the data (a plant's rated "
                                "power, a normalisation's bounds). Without this declaration the guarantee is not "
                                "proven and nothing is shareable.")
    st.caption(range_note + " " + noise_range_declaration((range_lo, range_lo + range_width), declared).summary)
    return (range_lo, range_lo + range_width), range_width, declared


def defence_strength(defence: str, budget, range_width: float, where) -> tuple[float, bool]:
    """The noise scale b: calibrated from ε in strict mode for the DP noise laws, else the user's slider."""
    if calibrates_from_epsilon(defence, budget.mode):
        strength = calibrated_noise_scale(defence, budget.epsilon, budget.delta, range_width)
        where.metric("Noise scale b (from ε)", f"{strength:.4g}")
        return strength, True
    if defence in ("orthogonal_rows", "compressed_rows", "post_multiplication", "none"):
        where.caption("No strength to set.")
        return 0.0, False
    return float(where.slider("Strength b", 0.0, 1.0,
                              0.15 if defence not in ("coef_noise", "message_noise") else 0.05,
                              step=0.01, key="var_admm_strength")), False


def defence_statement(defence: Defence, budget, calibrated: bool) -> None:
    """What the chosen defence guarantees, and the ledger of the noise defence."""
    name, release = defence.name, defence.release
    if name in DP_NOISE:
        law = "laplace" if name == "naive_laplace" else name
        mode_text = ("Strict mode: b calibrated to the range Δ and ε per value." if calibrated else
                     "You set b; ε follows from the range Δ.")
        st.markdown(f"**{mode_text}** {DP_STATEMENTS[name if name == 'naive_laplace' else law]}")
        if release is not None:
            led = release.defence
            if len(led.ledger):  # the headline: one owner's whole series (the T values composed)
                show_ledger(led.ledger, budget.delta)
                with st.expander(f"A smaller ε for a single value ({PER_VALUE_UNIT}): not the guarantee for an "
                                 "owner's whole series"):
                    st.caption(f"Event level: this ε protects one value only. An owner's whole series of {led.T} "
                               "values is protected by the larger ε above.")
                    show_ledger(led.per_value, budget.delta, note=False)
                    st.dataframe(human_headers(led.to_frame()), hide_index=True)
            else:
                st.markdown(led.headline())
            if release.n_outside:
                st.info(f"{release.n_outside} of {release.noisy.size} values lay outside "
                        f"[{defence.public_range[0]:.4g}, {defence.public_range[1]:.4g}] and were clipped before the "
                        "noise (exact count: private, shown to you only).")
    elif name in ("orthogonal_rows", "compressed_rows", "post_multiplication"):
        st.markdown(f"**Not DP.** {DP_STATEMENTS['transform']} Least squares is unchanged by an orthogonal M and by "
                    "post-multiplication once the N's are inverted, i.e. once every owner's secret is shared.")
    elif name in ("coef_noise", "message_noise"):
        st.markdown(f"**Not DP.** {DP_STATEMENTS['admm_noise']}")


def defence_section(setup: Setup, budget, noise_draw: str) -> Defence:
    """The defence (computed once, used by several tabs)."""
    with st.expander("Defence and its strength", expanded=True):
        d1, d2, d3 = st.columns([2, 1, 1])
        name = d1.selectbox("Defence", list(DEFENCES), format_func=DEFENCES.get, index=1, key="var_admm_defence")
        eval_inputs = d3.radio("Forecast inputs", ("noisy", "clean"), key="var_admm_eval_inputs",
                               help="noisy: forecast from the noisy covariates, scored against clean targets "
                                    "(default).")
        public_range, range_width, declared = range_inputs(setup)
        strength, calibrated = defence_strength(name, budget, range_width, d2)
        calibration = "calibrated from ε and the declared range" if calibrated else "chosen by the user"
        try:
            with fit_wait("var_admm_defence", "Running the defence"):
                defended = run_defence(setup.Y, setup.solar, setup.lags, setup.settings, name, strength,
                                       eval_inputs, public_range, declared, budget.delta, budget.noise_seed,
                                       noise_draw, calibration, setup.upload) if name != "none" else None
        except (ValueError, ArithmeticError, JobError) as err:
            st.error(f"The defence cannot run on this choice: {err}")
            defended = None
        release = None if defended is None else defended["release"]
        defence = Defence(name, eval_inputs, public_range, declared, strength, defended, release)
        defence_statement(defence, budget, calibrated)
    return defence


def guarantee_text(shared: bool, release) -> str:
    """The page's one sentence on what is private: the engine decides it (``privacy_statement``)."""
    return privacy_statement(release)


def run_report(setup: Setup, fit: dict, defence: Defence, budget, shared: bool) -> RunReport:
    settings, lags, Y, defended, release = setup.settings, setup.lags, setup.Y, defence.defended, defence.release
    report_ledger = release.defence.ledger if shared else None
    public_parameters = {"lags": list(lags), "penalty": settings["penalty"], "alpha": settings["alpha"],
                         "defence": defence.name, "forecast inputs": defence.eval_inputs}
    if shared:
        led = release.defence
        public_parameters.update({"noise law": led.law, "noise scale b": led.b,
                                  "declared public range": list(defence.public_range),
                                  "epsilon per value (event level)": led.eps_per_value,
                                  "epsilon for one owner's whole series": led.eps_per_series,
                                  "delta": 0.0 if led.law == "laplace" else led.delta})
    return RunReport(
        page="var_admm", method="VAR-ADMM (collaborative VAR fitted by ADMM)",
        data=DataInfo.from_frame(Y, setup.dataset.name, setup.dataset.origin, list(Y.columns),
                                 note=f"first {setup.n_rows} time steps of {len(setup.full)}; one owner per column "
                                      "used", owner_secret=owner_secret()),
        preprocessing=("solar: night = 0, daylight hours fitted and scored; the intercept (centring) is fitted after "
                       "the noise" if setup.solar else "the intercept (centring) is fitted after the noise"),
        parameters={"lags": list(lags), **settings, "ADMM initialisation seed (not the noise)": settings["init_seed"],
                    "defence": defence.name, "defence strength b": defence.strength,
                    "forecast inputs": defence.eval_inputs,
                    "range the values are clipped into": list(defence.public_range),
                    "range declared public": defence.declared,
                    "noise": "fresh" if budget.noise_seed is None else "reproducible (teaching): known noise seed"},
        public_parameters=public_parameters,
        # The model itself is never DP; only the defence's noise on clipped values can be (its ledger says whether
        # proven).
        mode=None, ledger=report_ledger, ledger_delta=budget.delta, mode_text=guarantee_text(shared, release),
        headline={"ADMM scheme": fit["scheme"], "ADMM iterations": fit["n_iter"], "converged": fit["converged"],
                  "max |B_ADMM − B_central|": fit["gap"],
                  "median MAE gain over local AR (%)": fit["table"]["mae_gain_pct"].median(),
                  **({"median MAE gain with the defence (%)": defended["table"]["mae_gain_pct"].median()}
                     if defended is not None else {})},
        notes=[f"Defence: {DEFENCES[defence.name]}.", NOT_DP_MODEL])


def export_section(setup: Setup, fit: dict, defence: Defence, budget) -> None:
    """Report and exports: the shareable release only when a DP defence ran on a declared range."""
    defended, Y = defence.defended, setup.Y
    # the engine builds release_json only when the release is shareable
    shared = defended is not None and defended["release_json"] is not None
    report = run_report(setup, fit, defence, budget, shared)

    def _owner_sheets() -> dict:
        forecasts = pd.DataFrame({"time": fit["times"]})  # in the series' own units, as on the forecast tab
        for i, site in enumerate(fit["sites"]):
            forecasts[f"{site} actual"] = fit["actual"][:, i] + fit["centres"][i]
            forecasts[f"{site} VAR"] = fit["var_pred"][:, i] + fit["centres"][i]
            forecasts[f"{site} AR"] = fit["ar_pred"][:, i] + fit["centres"][i]
            if defended is not None:
                forecasts[f"{site} VAR defended"] = defended["var_pred"][:, i] + fit["centres"][i]
        return owner_sheets(reference_model=fit["coef_table"], skill=fit["table"],
                            defended_skill=None if defended is None else defended["table"], release=defence.release,
                            Y=Y.to_numpy(dtype=float), owner_names=list(Y.columns), forecasts=forecasts)

    export_bar(report, release_json=defended["release_json"] if shared else None,
               no_release_reason=(defended["no_release_reason"] if defended is not None else
                                  release_refusal(None)), owner_sheets=_owner_sheets)


def defended_label(defence: Defence) -> str:
    """The defence's whole label (never cut), its first letter lower-cased unless it starts an acronym."""
    label = DEFENCES[defence.name]
    return label if label[:2].isupper() else label[0].lower() + label[1:]


def forecasts_tab(setup: Setup, fit: dict, defence: Defence) -> None:
    defended = defence.defended
    site = st.selectbox("Site", fit["sites"], key="var_admm_site")
    j = fit["sites"].index(site)
    n_show = min(len(fit["times"]), 24 * 7 if setup.hourly else 200)
    centre = fit["centres"][j]
    night = None if fit["night"] is None else fit["night"][:n_show, j]
    show_chart(st, var_forecast_figure(
        fit["times"][:n_show], own_units(fit["actual"][:n_show, j], centre),
        own_units(fit["var_pred"][:n_show, j], centre), own_units(fit["ar_pred"][:n_show, j], centre),
        site=site, defended=None if defended is None else own_units(defended["var_pred"][:n_show, j], centre),
        defended_label=f"with {defended_label(defence)}", night=night,
        y_title=f"{site} (the series' own units)"), f"forecast_{site}", page="var_admm")
    st.caption("First week (or 200 steps) of the test period, in the series' own units: the model forecasts each "
               "site centred on its training " + ("daytime " if setup.solar else "") + "mean, and that mean is "
               f"added back here ({centre:.4g} for {site}). The mean is {site}'s own private statistic: this is "
               f"{site}'s owner's view of their own series, not a released value."
               + (" Shaded: night (hours the site's output is 0; the solar fit scores daylight hours only)."
                  if night is not None else ""))


def skill_tab(fit: dict, defence: Defence) -> None:
    table, defended = fit["table"], defence.defended
    metric = st.radio("Error measure", ("mae", "rmse"), format_func=str.upper, horizontal=True,
                      key="var_admm_metric")
    tables = {"collaborative VAR (ADMM)": table}
    if defended is not None:
        tables[f"VAR with {defended_label(defence)}"] = defended["table"]
    show_chart(st, var_skill_figure(tables, metric), f"skill_{metric}", page="var_admm")
    show = table[["owner", "mae_var", "mae_ar", "mae_gain_pct", "rmse_var", "rmse_ar", "rmse_gain_pct"]].copy()
    if defended is not None:
        show["mae_gain_pct (defended)"] = defended["table"]["mae_gain_pct"].to_numpy()
        st.caption(f"Defence cost: median MAE gain {table['mae_gain_pct'].median():.1f} % → "
                   f"{defended['table']['mae_gain_pct'].median():.1f} %; owners worse than their AR: "
                   f"{int((defended['table']['mae_gain_pct'] < 0).sum())} of {len(table)}.")
    st.dataframe(human_headers(show.round(3)), hide_index=True, width="stretch")


def convergence_tab(fit: dict) -> None:
    show_chart(st, var_convergence_figure(fit["residuals"], fit["coef_error"], coef_iterations=fit["coef_iterations"]),
               "convergence", page="var_admm")
    st.caption("Primal residual r^k = √n ‖ZB̄^k − H̄^k‖ and dual residual s^k (Boyd et al. 2011, 3.3), in units of "
               "the internally scaled data (so they read the same in any units); dotted: the stopping thresholds. "
               + ("Accelerated scheme: at ρ = n the dual is eliminated, the primal residual is zero by construction "
                  "(not drawn on the log axis) and s^k is n times the change of the owners' contributions. "
                  if fit["scheme"] == "anderson" else "")
               + "Bottom: distance of the ADMM coefficients to the pooled fit of the same settings.")


def messages_tab(fit: dict) -> None:
    show_chart(st, var_message_flow_figure(fit["messages"], fit["sites"], max_rows=min(40, len(fit["messages"]))),
               "messages", page="var_admm")
    st.dataframe(human_headers(fit["messages"].drop(columns=["values sent"])), hide_index=True, width="stretch")
    st.caption("Every message of the first three iterations (all iterations are recorded; shapes always, values "
               "only when an attack needs them). Values sent over the whole run:")
    st.dataframe(human_headers(fit["volume"]), hide_index=True)


def noise_grid(grid_text: str) -> list:
    try:
        grid = sorted({float(t) for t in grid_text.replace(";", ",").split(",") if t.strip()})
        if not grid or min(grid) < 0:
            raise ValueError
    except ValueError:
        st.error("Noise scales: give non-negative numbers separated by commas.")
        grid = []
    return grid


def privacy_sweep_tab(setup: Setup, defence: Defence, budget, noise_draw: str) -> None:
    s1, s2 = st.columns(2)
    sweep_law = s1.selectbox("Noise law", NOISE_LAWS, key="var_admm_sweep_law")
    grid_text = s2.text_input("Noise scales b", "0, 0.1, 0.2, 0.3, 0.5", key="var_admm_sweep_grid")
    grid = noise_grid(grid_text)
    public_range, declared = defence.public_range, defence.declared
    noise_sweep_run = Sweep("var_admm_sweep", "noise sweep", auto=True)  # Cancel pauses it until restarted
    sweep = None
    if grid:
        if noise_sweep_run.should_run():
            parts = []
            with noise_sweep_run.running("Fitting one model per noise scale ...") as progress:
                for i, b in enumerate(grid):
                    parts.append(sweep_point(setup.Y, setup.solar, setup.lags, setup.settings, sweep_law, b,
                                             public_range, declared, budget.delta, budget.noise_seed, noise_draw,
                                             setup.upload))
                    progress.progress((i + 1) / len(grid), text=f"b = {b:g} done")
            sweep = pd.concat(parts, ignore_index=True)
            st.session_state["var_admm_sweep_last"] = (sweep, sweep_law, public_range, declared)
        elif st.session_state.get("var_admm_sweep_last") is not None:
            sweep, sweep_law = st.session_state["var_admm_sweep_last"][:2]
            st.caption("Below: the last complete noise sweep (its settings may differ from the ones above).")
    if sweep is not None:
        swept_range, swept_declared = st.session_state["var_admm_sweep_last"][2:]
        show_chart(st, var_privacy_curve_figure(sweep, law=sweep_law), f"accuracy_vs_privacy_{sweep_law}",
                   page="var_admm")
        st.dataframe(human_headers(sweep.round(4)), hide_index=True, width="stretch")
        st.caption(
            f"Each value clipped into [{swept_range[0]:.4g}, {swept_range[1]:.4g}] and noised once (fresh noise per "
            f"scale), VAR fitted centrally (it equals the ADMM fit), forecasts from noisy inputs scored against the "
            f"clean series. ε per value = Δ/b (event level); ε per series composes the T values of one owner. "
            f"Status from each fit's own ledger: "
            f"{'range declared public' if swept_declared else 'range not declared public, so not proven'}. "
            f"{DP_STATEMENTS[sweep_law]}")


def flower_section(setup: Setup) -> None:
    """Run over Flower (one process per party): the training fit local and over a local Flower federation."""
    federation_section("var_admm_flower",
                       lambda progress: var_flower_runs(setup.Y, setup.lags, setup.settings, setup.solar,
                                                        progress=progress),
                       note="Both runs are the page's fit: its scheme, stopping rule, iterations, penalty and start.")


def main() -> None:
    intro()
    budget = budget_picker("var_admm")
    setup = data_section()
    settings_section(setup)
    fit = fit_section(setup)
    fit_summary(setup, fit)
    noise_draw = session_noise_draw()
    defence = defence_section(setup, budget, noise_draw)
    export_section(setup, fit, defence, budget)
    # lazy: only the open tab computes (hidden tabs no longer delay the first chart)
    tabs = lazy_tabs(["Forecasts", "Skill", "Convergence", "Messages", "Attack", "Accuracy vs privacy"],
                     key="var_admm_tabs")
    tabs.show("Forecasts", forecasts_tab, setup, fit, defence)
    tabs.show("Skill", skill_tab, fit, defence)
    tabs.show("Convergence", convergence_tab, fit)
    tabs.show("Messages", messages_tab, fit)
    tabs.show("Attack", attack_tab, setup, fit, defence)
    tabs.show("Accuracy vs privacy", privacy_sweep_tab, setup, defence, budget, noise_draw)
    flower_section(setup)
