"""Attack lab (PLS): what shared PLS components reveal about another party's data, and how
edPLS stops it (issue #5; spec edpls.md Sec. 5). Thin page: widgets -> engine -> figures.

Noise (issue #15): every private fit and every sweep draws fresh privacy noise
(``random_state=budget.noise_seed``: None unless the sidebar's teaching switch is on). Private
results are therefore kept per session (``st.session_state``), never in the process-wide cache: a
rerun shows the same release, a new session draws a new one. The "Data seed" box seeds only the
simulated data. Labels come from each fit's own ledger; the shareable model is edPLS's own release
(never for plain PLS or a known noise seed); everything computed on the rows (attack results,
reconstructions, the plain model, the sweep) goes to the owner's workbook.
"""
from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd
import streamlit as st

from engine.attacks.pls_subspace import (
    COMPONENTS,
    SETTINGS,
    AttackSetupError,
    SimulationScenario,
    attack_success_sweep,
    leak_exclusivity,
    run_attack,
    simulation_problem,
    split_parties,
    summarise_sweep,
    verdict,
)
from engine.data import check_usable
from engine.data.attack_sim import PAPER_BANDS, make_attack_spectra
from engine.methods.edpls import EDPLS, shareable_ledger, to_json
from engine.methods.edpls import no_release_reason as edpls_no_release_reason
from engine.privacy.noise import SEED_KNOWN_CAVEAT
from engine.privacy.wording import paper_label
from engine.reporting.report import DataInfo, RunReport
from ui.attack_lab.figures import attack_party_spectra_figure, attack_reconstruction_figure, attack_success_figure
from ui.budget import budget_picker
from ui.data_picker import data_picker
from ui.exports import export_bar, owner_secret, show_chart
from ui.jobs_view import fit_wait
from ui.ledger_view import show_ledger
from ui.progress import Sweep, session_scope
from ui.public_info import STORE, Y_HIGH_LABEL, Y_LOW_LABEL, PublicInfo, data_key
from ui.run_history import history_section, record_release
from ui.runtime.jobs import SWEEP_SECONDS, JobError, run_upload
from ui.setting_errors import setting_error
from ui.tables import human_headers

DEFAULT_GRID = (1.0, 3.0, 10.0, 30.0, 100.0, 300.0)
GRID_CHOICES = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0)
#: Session stores of private results (fresh noise: never shared between sessions).
FITS_KEY, SWEEPS_KEY = "attack_lab_private_fits", "attack_lab_private_sweeps"


# --------------------------------------------------------------------------- cached engine calls (no noise)
@st.cache_data(show_spinner=False, max_entries=32)
def simulated_problem(gen: tuple, attacker: int, data_seed: int):
    params = dict(gen)
    data = make_attack_spectra(random_state=data_seed, **params)
    test = make_attack_spectra(random_state=data_seed + 1, **params)
    return simulation_problem(data, attacker, test)


@st.cache_data(show_spinner=False, max_entries=16)
def own_problem(df: pd.DataFrame, features: tuple, response: str, split: tuple, bounds: tuple, n_components: int,
                scope: str = ""):
    """The owner's table split between the parties; ``scope``: ``ui.progress.session_scope`` (per session)."""
    by, arg1, arg2 = split
    kwargs = dict(by=by, n_components=n_components, x_bound=bounds[0], y_bound=bounds[1])
    if by == "column":
        kwargs.update(group_column=arg1, attacker_groups=list(arg2))
    else:
        kwargs.update(attacker_rows=(arg1, arg2))
    return split_parties(df, list(features), response, **kwargs)


@st.cache_data(show_spinner=False, max_entries=64)
def plain_attack(_problem, problem_key: tuple, delta: float, n_components: int, lv: int, calibration: str,
                 upload: bool = False, scope: str = ""):
    """Plain PLS has no noise: one fit per data set and session (``scope``: ``ui.progress.session_scope``; a hit
    from another session would reveal by its speed that the same table was attacked there). ``upload``: in a
    worker."""
    return run_upload(upload, run_attack, _problem, "plain", math.inf, delta=delta, n_components=n_components, lv=lv,
                      calibration=calibration, label="The plain-PLS attack")


# --------------------------------------------------------------------------- private results (per session)
def _session_cached(store: str, key: tuple, compute, max_entries: int):
    """``compute()`` once per session and key (most recent ``max_entries`` kept)."""
    cache = st.session_state.setdefault(store, OrderedDict())
    if key in cache:
        cache.move_to_end(key)
        return cache[key]
    value = compute()
    cache[key] = value
    while len(cache) > max_entries:
        cache.popitem(last=False)
    return value


def private_attack(problem, problem_key: tuple, setting: str, epsilon: float, delta: float, n_components: int,
                   lv: int, calibration: str, noise_seed, upload: bool = False):
    key = (problem_key, setting, epsilon, delta, n_components, lv, calibration, noise_seed)
    return _session_cached(FITS_KEY, key, lambda: run_upload(
        upload, run_attack, problem, setting, epsilon, delta=delta, n_components=n_components, lv=lv,
        calibration=calibration, random_state=noise_seed, label="The attack"), 8)


def sweep_chunk(scenario, scenario_key: tuple, setting: str, epsilons: tuple, n_replicates: int, delta: float,
                n_components: int, lv: int, calibration: str, noise_seed, data_seed: int, upload: bool = False):
    key = (scenario_key, setting, epsilons, n_replicates, delta, n_components, lv, calibration, noise_seed, data_seed)
    return _session_cached(SWEEPS_KEY, key, lambda: run_upload(
        upload, attack_success_sweep, scenario, epsilons, settings=(setting,), n_replicates=n_replicates, delta=delta,
        n_components=n_components, lv=lv, calibration=calibration, random_state=noise_seed,
        data_random_state=data_seed, label="The attack sweep", seconds=SWEEP_SECONDS), 16)


def shareable_model(outcome):
    """(zero-argument callable returning the release JSON, None) when the model shown has a shareable
    release, else (None, the reason).

    Plain PLS and ε = ∞ have none (no privacy); nor has a fit whose noise seed is known (the teaching
    switch: anyone who knows the seed can subtract the noise). Anything else goes through edPLS's own
    ``no_release_reason`` and ``to_json`` (the release states its guarantee, proven or not)."""
    model, ledger = outcome.model, outcome.ledger
    if not isinstance(model, EDPLS) or ledger is None or not len(ledger):
        return None, ("the model shown is plain PLS (no privacy): it is not a shareable release; its coefficients "
                      "are in the owner's workbook.")
    why = edpls_no_release_reason(model)
    if why:
        return None, why
    if SEED_KNOWN_CAVEAT in ledger.caveats:
        return None, ("the noise seed is known (sidebar: 'Reproducible noise'), so anyone who knows it can subtract "
                      "the noise: switch it off for a shareable model.")
    try:
        text = to_json(model)  # built now (small), so that a refusal is shown instead of failing on the click
    except ValueError as err:
        return None, f"the release could not be built ({err})."
    return (lambda: text), None


# --------------------------------------------------------------------------- labels
#: Paper-mode variants: their title and the stored audit behind their label (the σ² variant has none).
PAPER_VARIANTS = {"paper_sigma": ("edPLS, noise std σ", "edpls"),
                  "paper_sigma_squared": ("edPLS, noise std σ² (authors' code)", None)}


def model_label(setting: str, epsilon: float, outcome=None) -> str:
    """The label of a fitted model: paper mode's claim with the audit's figure, strict mode's ε with the status
    of that very fit's ledger (never "proven" unless its ledger says so), plain PLS as such."""
    if setting in PAPER_VARIANTS:
        title, audit_key = PAPER_VARIANTS[setting]
        return paper_label(title, epsilon, audit_key)
    if setting == "strict":
        status = "" if outcome is None else f", {outcome.status}"
        return f"edPLS strict mode, ε = {epsilon:g}{status}"
    return SETTINGS.get(setting, setting)


def sweep_labels() -> dict:
    """The sweep's legend: paper variants say their ε is a claim (the status column holds each fit's ledger)."""
    return {**SETTINGS, **{k: paper_label(title, None, key) for k, (title, key) in PAPER_VARIANTS.items()}}


# --------------------------------------------------------------------------- page sections
@dataclass
class Attack:
    """The attacked problem a scenario section built, with what the figures and the report say about it."""

    problem: object
    problem_key: tuple
    scenario: object  # what the sweep runs on: the problem, or a simulation that draws fresh data
    data_seed: int
    axis_title: str
    secret_label: str
    data_info: Callable  # the run report's DataInfo, built only when the report is
    upload: bool = False  # an uploaded table: its attacks run in a worker with the job budgets (ui.runtime.jobs)
    data_set: object = None  # the user's data set (own data only): its private fits count in the odometer


def intro() -> None:
    st.markdown(
        "Two data holders send their rows to a server that fits **one PLS model** and sends the model "
        "components (weights W, loadings P) back to both. The edPLS paper shows that each party can then "
        "recover the **source of variability only the other party has**: it fits a local PLS on its own rows "
        "and removes from the shared components everything its own rows can explain; latent variable k of what is left "
        "is the other party's secret. Below: the attack on plain PLS and on edPLS, and how its success falls "
        "with ε."
    )


def simulation_scenario() -> Attack:
    with st.expander("Simulation settings (defaults = the paper's numbers)", expanded=False):
        c1, c2, c3, c4 = st.columns(4)
        n_per_party = c1.number_input("Rows per party", 10, 1000, 100, key="attack_n")
        height = c2.radio("Band height means", ("pdf", "peak"), key="attack_height",
                          format_func=lambda h: {"pdf": "h·pdf (authors' code)", "peak": "peak height"}[h])
        noise = c3.number_input("Measurement noise (std)", 0.0, 1.0, 0.0, step=0.001, format="%.3f",
                                key="attack_noise")
        seed = c4.number_input("Data seed", 0, 10**6, 0, key="attack_seed",
                               help="Seeds the simulated data only. The privacy noise is fresh on every run "
                                    "(sidebar: 'Reproducible noise' fixes it for teaching).")
        st.caption(
            "Bands (centre, width, height): "
            + "; ".join(f"{b.name} ({b.centre:g}, {b.width:g}, {b.height:g})" for b in PAPER_BANDS)
            + ". Both parties have the analyte and interferent 1; party 1 alone has interferent 2 (centre 40), "
            "party 2 alone interferent 3 (centre 30). Concentrations U[0, 10), y = analyte. The paper used "
            "δ = 0.01 and ε ∈ {100, 10, 1}; set δ in the sidebar to match."
        )
    attacker = st.radio("Attacker", (1, 2), horizontal=True, key="attack_party",
                        format_func=lambda p: f"party {p} (tries to recover party {3 - p}'s unique band)")
    gen = (("n_per_party", int(n_per_party)), ("height", height), ("noise", float(noise)))
    data_seed = int(seed)
    problem = simulated_problem(gen, int(attacker), data_seed)
    redraw = st.checkbox("Sweep: draw fresh data for every run (as in the reproduction; slower)", value=False,
                         key="attack_redraw",
                         help="Off: every run of the sweep uses the data set shown and only the privacy noise "
                              "changes.")
    scenario = SimulationScenario(generator=dict(gen), attacker=int(attacker)) if redraw else problem
    problem_key = ("sim", gen, int(attacker), data_seed, bool(redraw))
    secret = owner_secret()
    return Attack(problem, problem_key, scenario, data_seed, "channel",
                  f"{problem.other_label}'s unique band (the secret)",
                  lambda: DataInfo.from_parts("paper's simulation (make_attack_spectra)", "generated",
                                              [problem.X, problem.y],
                                              note=f"{dict(gen)}, data seed {data_seed}; attacker party "
                                                   f"{int(attacker)}", owner_secret=secret))


def default_response(ds) -> str:
    numeric = ds.numeric_columns
    named = [c for c in numeric if str(c).lower() in ("y", "response", "target")]
    continuous = [c for c in numeric if ds.df[c].nunique() > 20]  # a label column is no response
    return next((c for c in list(ds.response_columns) + named + continuous[-1:] if c in numeric), numeric[-1])


def party_split(ds, response: str) -> tuple[tuple, str | None]:
    """How the rows are split between the attacker and the other party: by a column's values or a row range."""
    candidates = [c for c in ds.df.columns if c != response and 1 < ds.df[c].nunique() <= 20]
    split_options = ("By a column", "By row range") if candidates else ("By row range",)
    split_by = st.radio("Split into parties", split_options, horizontal=True, key="attack_split")
    if not candidates:
        st.caption("No column has between 2 and 20 distinct values to define parties, so the split is by rows.")
    if split_by == "By a column":
        party_column = st.selectbox("Party column", candidates, key="attack_party_col")
        values = sorted(ds.df[party_column].dropna().unique().tolist(), key=str)
        mine = st.multiselect("The attacker's rows have value(s)", values, default=values[:1],
                              key="attack_party_vals")
        return ("column", party_column, tuple(mine)), party_column
    n_rows = len(ds.df)
    start, stop = st.slider("The attacker's rows (the rest belong to the other party)", 0, n_rows,
                            (0, n_rows // 2), key="attack_rows")
    return ("rows", int(start), int(stop)), None


def strict_bounds(ds, response: str) -> tuple:
    """(bound on ‖x‖, bound on |y|) or None for each: the response's public range is asked for as on the Public
    information panel (same labels, same store per data set and response) and |y| is bounded by its larger end."""
    store = st.session_state.setdefault(STORE, {}).setdefault(data_key(ds, response), {})
    kept = store.get("y_range") or (None, None)
    with st.expander("Strict-mode bounds (public clipping bounds)", expanded=False):
        st.caption(
            "Strict mode clips every row to ‖x‖ ≤ the bound and y to the public range. For a real guarantee these "
            "must be fixed without looking at the data. Leave them empty to use the data's own maxima "
            "(fine for exploring the attack, but then the strict guarantee does not hold)."
        )
        b1, b2, b3 = st.columns(3)
        cx = b1.number_input("Bound on ‖x‖ (row L2 norm)", 0.0, 1e9, 0.0, key="attack_cx",
                             help="0: the data's own largest row norm (not public).")
        lo = b2.number_input(Y_LOW_LABEL, value=kept[0], format="%.4g", key=f"attack_y_low_{data_key(ds, response)}")
        hi = b3.number_input(Y_HIGH_LABEL, value=kept[1], format="%.4g", key=f"attack_y_high_{data_key(ds, response)}")
    cy = None
    if lo is not None and hi is not None:
        if not hi > lo:
            st.error(f"The public range of y must have its highest value above its lowest ({lo:g} ≥ {hi:g}): "
                     "change it under 'Strict-mode bounds (public clipping bounds)'.")
            st.stop()
        store["y_range"] = (float(lo), float(hi))
        cy = PublicInfo(store["y_range"], None).y_bound
        st.caption(f"Bound on |y| used by the attack's fits: max(|{lo:g}|, |{hi:g}|) = {cy:g}.")
    return (cx or None, cy)


#: Where each setting the attack's setup messages can be about is on this page (ui.setting_errors), by label.
K_LABEL = "Latent variables of the shared model (k)"
SETTING_PLACES = (
    (("latent variables", "directions"), f"in '{K_LABEL}'"),
    (("party column", "which party", "values of", "value(s) of"),
     "in 'Split into parties' (the party column and the attacker's values)"),
    (("row range", "rows; "), "in 'Split into parties' (the attacker's rows)"),
    (("variable column", "cannot also be a variable"), "in 'Response y' or 'Leave out these variables'"),
    (("constant",), "in 'Response y' or 'Split into parties'"),
    (("bounds",), "under 'Strict-mode bounds (public clipping bounds)'"),
)
SETTINGS_FALLBACK = "The settings are 'Response y', 'Split into parties' and 'Leave out these variables' above."


def own_data_scenario(n_components: int) -> Attack:
    ds = data_picker(key="attack_lab_data", check=lambda frame, file: check_usable(frame, file, "pls_attack"))
    if ds is None:
        st.info("Pick a sample set or upload a table to attack.")
        st.stop()
    numeric = ds.numeric_columns
    if len(numeric) < 3:
        st.error(f"'{ds.name}' has {len(numeric)} numeric columns; the attack needs a response and at least 2 "
                 "variables.")
        st.stop()
    response = st.selectbox("Response y", numeric, index=numeric.index(default_response(ds)), key="attack_response")
    split, party_column = party_split(ds, response)
    excluded = set(ds.response_columns) | {response} | ({party_column} if party_column else set())
    features = [c for c in numeric if c not in excluded]
    drop = st.multiselect("Leave out these variables", features, key="attack_drop")
    features = [c for c in features if c not in drop]
    bounds = strict_bounds(ds, response)
    try:
        problem = own_problem(ds.df, tuple(features), response, split, bounds, n_components, session_scope())
    except AttackSetupError as err:
        setting_error(f"Cannot run the attack on '{ds.name}'", err, SETTING_PLACES, SETTINGS_FALLBACK)
        st.stop()
    st.caption(
        f"Attacker: {problem.attacker_label} ({len(problem.y_own)} training rows); other party: "
        f"{problem.other_label} ({len(problem.y_other)} training rows); "
        f"{0 if problem.y_test is None else len(problem.y_test)} rows held out for RMSEP. "
        "The other party's secret is unknown on your data, so success is measured against what the attacker "
        "recovers from plain PLS: how much of that leak survives the noise."
    )
    secret = owner_secret()
    # problem_key: in-process cache key only, never exported; data_seed 0: the data are the owner's, only the
    # held-out split is seeded (split_parties)
    return Attack(problem, ("own", problem.fingerprint()), problem, 0, "variable", "leak from plain PLS (reference)",
                  lambda: DataInfo.from_frame(ds.df, ds.name, ds.origin, [response, *features],
                                              note=f"attacker: {problem.attacker_label}; other party: "
                                                   f"{problem.other_label}", owner_secret=secret),
                  ds.origin == "upload", ds)


def shown_model(budget, problem) -> str:
    """Which edPLS the page shows at the chosen epsilon (the budget's mode; paper mode has two noise variants)."""
    if budget.mode == "paper":
        return st.radio(
            "Paper mode noise", ("paper_sigma_squared", "paper_sigma"), horizontal=True, key="attack_noise_std",
            format_func=lambda s: {"paper_sigma_squared": "std σ² (authors' code, reproduces the paper's figures)",
                                   "paper_sigma": "std σ (correct Gaussian mechanism)"}[s],
        )
    if not problem.bounds_public:
        st.warning("Strict mode here uses bounds taken from the data (set public bounds above): "
                   "the (ε, δ) guarantee shown is then not proven for these data.")
    return "strict"


def reconstruction_section(attack: Attack, budget, chosen: str, n_components: int, lv: int) -> tuple:
    """1. The reconstruction at the chosen epsilon; returns the plain and the private outcome."""
    problem, eps, delta, calibration = attack.problem, budget.epsilon, budget.delta, budget.calibration
    noise_seed = budget.noise_seed  # None: fresh noise for every release (the default)
    st.subheader(f"What the attacker recovers at ε = {eps:g}")
    try:
        with fit_wait("attack_fit", "Running the attack"):
            plain = plain_attack(problem, attack.problem_key, delta, n_components, lv, calibration, attack.upload,
                                 session_scope())
            private = private_attack(problem, attack.problem_key, chosen, eps, delta, n_components, lv, calibration,
                                     noise_seed, attack.upload)
    except (AttackSetupError, ValueError, JobError) as err:
        st.error(f"The attack could not run: {err}")
        st.stop()
    show_chart(
        st, attack_reconstruction_figure(problem.axis, plain.secret_display, plain.display, private.display,
                                         private_label=f"recovered from {model_label(chosen, eps, private)}",
                                         secret_label=attack.secret_label, secret_centre=problem.secret_centre,
                                         axis_title=attack.axis_title),
        "reconstruction", page="attack_lab", key="attack_recon_chart",
    )
    cols = st.columns(4)
    for i, comp in enumerate(COMPONENTS):
        plain_corr, private_corr = plain.measures[comp]["correlation"], private.measures[comp]["correlation"]
        cols[2 * i].metric(f"Plain PLS, {COMPONENTS[comp]}: |corr|", f"{plain_corr:.2f}")
        cols[2 * i + 1].metric(f"edPLS ε = {eps:g}, {COMPONENTS[comp]}: |corr|", f"{private_corr:.2f}",
                               delta=f"{private_corr - plain_corr:+.2f}", delta_color="inverse")
    if problem.secret is None:
        ratio = leak_exclusivity(plain.recovered["P"], problem.X_own, problem.X_other)
        st.metric("Leak specific to the other party", f"{ratio:.3g}×",
                  help="How specific the plain-PLS leak is to the other party. "
                       "Variance of the other party's rows along the leaked direction (from the loadings) over the "
                       "variance of your own rows along it. Far above 1: the leak is variation only they have.")
    st.caption(
        f"RMSEP on held-out rows: plain PLS {plain.rmsep:.3g}, {SETTINGS[chosen]} {private.rmsep:.3g}, predicting "
        f"the training mean {private.rmsep_mean_model:.3g}. One random draw of the noise"
        + (" (fresh: a new session draws another)" if noise_seed is None else
           " (reproducible: the noise seed is known)")
        + "; the sweep below averages many."
    )
    if private.ledger is not None:  # the label is this fit's own ledger's headline, nothing else
        st.markdown(f"**Guarantee of this edPLS model** ({model_label(chosen, eps, private)}):")
        show_ledger(private.ledger, delta=delta)
    with st.expander("The two parties' data", expanded=False):
        show_chart(st, attack_party_spectra_figure(problem.axis, problem.X_own, problem.X_other,
                                                   problem.attacker_label, problem.other_label,
                                                   secret_centre=problem.secret_centre,
                                                   axis_title=attack.axis_title),
                   "party_data", page="attack_lab", key="attack_parties_chart")
    return plain, private


def sweep_inputs(budget) -> tuple:
    s1, s2, s3 = st.columns([3, 1, 2])
    grid = s1.multiselect("ε grid", GRID_CHOICES, default=list(DEFAULT_GRID), key="attack_grid")
    n_reps = s2.number_input("Runs per ε", 2, 200, 20, key="attack_reps")
    compared = s3.multiselect("Models", list(SETTINGS), default=list(SETTINGS), format_func=SETTINGS.get,
                              key="attack_settings")
    grid = tuple(sorted(set(float(e) for e in grid) | {float(budget.epsilon)}))
    if "plain" not in compared:
        compared = ["plain"] + compared
    if budget.mode == "strict" and "strict" not in compared:
        compared.append("strict")
    return grid, int(n_reps), compared


def run_sweep(attack: Attack, budget, sweep: tuple, n_components: int, lv: int):
    """The sweep (auto: it runs by itself; Cancel pauses it); None when there is no result to show."""
    grid, n_reps, compared = sweep
    delta, calibration, noise_seed = budget.delta, budget.calibration, budget.noise_seed
    attack_sweep = Sweep("attack_sweep", "attack sweep", auto=True)  # Cancel pauses it until restarted
    summary = None
    # A paused sweep's last result is shown only for the very settings it was run with (data included).
    sweep_settings = (attack.problem_key, tuple(grid), tuple(compared), n_reps, delta, n_components, lv,
                      calibration, noise_seed)
    if attack_sweep.should_run():
        chunks = []
        with attack_sweep.running("Running the attack sweep…") as progress:
            for i, setting in enumerate(compared):
                progress.progress(i / len(compared), text=f"Attack sweep: {SETTINGS[setting]}")
                try:
                    chunks.append(sweep_chunk(attack.scenario, attack.problem_key, setting, grid, n_reps, delta,
                                              n_components, lv, calibration, noise_seed, attack.data_seed,
                                              attack.upload))
                except (AttackSetupError, ValueError, JobError) as err:
                    st.error(f"{SETTINGS[setting]}: {err}")
        if chunks:
            summary = summarise_sweep(pd.concat(chunks, ignore_index=True))
            st.session_state["attack_sweep_last"] = (sweep_settings, summary)
        return summary
    last_settings, summary = st.session_state.get("attack_sweep_last") or (None, None)
    if summary is not None and last_settings != sweep_settings:
        summary = None
        st.info("The sweep is paused and its last complete run used other data or settings: press "
                "**Run the attack sweep again** to see results for these.")
    elif summary is not None:
        st.caption("Below: the last complete attack sweep, run with the settings above.")
    return summary


def success_section(attack: Attack, summary, chosen: str, eps: float) -> str:
    """2. Success against epsilon; returns the verdict."""
    m1, m2 = st.columns(2)
    component = m1.radio("Attack on", list(COMPONENTS), format_func=COMPONENTS.get, index=1, horizontal=True,
                         key="attack_component")
    metric = m2.radio("Success measure", ("correlation", "hit", "cosine"), horizontal=True, key="attack_metric",
                      format_func=lambda m: {"correlation": "|correlation|", "hit": "peak found (±2)",
                                             "cosine": "|cos| (reachable part)"}[m])
    show_chart(st, attack_success_figure(summary, component=component, metric=metric, labels=sweep_labels(),
                                         component_label=COMPONENTS[component]),
               f"success_{component}_{metric}", page="attack_lab", key="attack_success_chart")
    verdict_text = verdict(summary, chosen, eps, secret_is_truth=attack.problem.secret is not None)
    if "no longer works" in verdict_text and "no better than predicting the mean" not in verdict_text \
            and "unknown" not in verdict_text:
        st.success(verdict_text)
    else:  # the attack still works, or it fails only because the private model predicts nothing
        st.warning(verdict_text)
    st.caption(
        "Paper mode gives every one of the 4k noisy releases the full (ε, δ) and computes its sensitivities from "
        "the data, so its ε is not a proven total guarantee; strict mode's ε is the total for the whole release "
        "(see the ledger above). The status column says, for each row, what the ledgers of its fits say: "
        "\"no privacy\" (plain PLS, ε = ∞), \"proven\" or \"not proven\". Hit = the largest entry of the "
        "reconstruction lies within ±2 variables of the secret's peak (chance ≈ 5/m)."
    )
    with st.expander("Table of the sweep", expanded=False):
        st.dataframe(human_headers(summary), width="stretch", hide_index=True)
        st.caption("The sweep's results are evaluations on your rows: download them with the owner's workbook "
                   "below.")
    return verdict_text


def run_report(attack: Attack, budget, outcomes: tuple, *, scenario_name: str, chosen: str, n_components: int,
               lv: int, sweep: tuple, verdict_text: str) -> RunReport:
    problem, (plain, private), (grid, n_reps, compared) = attack.problem, outcomes, sweep
    eps, delta, calibration, noise_seed = budget.epsilon, budget.delta, budget.calibration, budget.noise_seed
    bounds_public = bool(problem.bounds_public)
    public_parameters = {"epsilon": eps, "delta": delta, "mode": budget.mode, "calibration": calibration,
                         "latent variables k": n_components, "model": SETTINGS[chosen]}
    if bounds_public:
        public_parameters["public bounds (‖x‖, |y|)"] = [problem.x_bound, problem.y_bound]
    return RunReport(
        page="attack_lab", method=f"Attack lab (PLS): {model_label(chosen, eps, private)} against plain PLS",
        data=attack.data_info(), preprocessing="none (the attack uses the rows as given)",
        parameters={"scenario": scenario_name, "latent variables k": n_components, "latent variable read": lv,
                    "epsilon": eps, "delta": delta, "calibration": calibration, "model shown": chosen,
                    "privacy noise": "fresh (OS entropy)" if noise_seed is None else
                    "fixed (teaching switch: not proven)",
                    **({"data seed (simulation)": attack.data_seed} if scenario_name == "Paper's simulation" else {}),
                    "ε grid": list(grid), "runs per ε": n_reps, "models compared": list(compared),
                    "bounds (‖x‖, |y|)": [problem.x_bound, problem.y_bound], "bounds public": bounds_public},
        public_parameters=public_parameters,
        # the shareable report shows the ledger as it may be published (data-derived sensitivities per unit);
        # its status and caveats are the fit's own; the exact ledger goes to the owner's workbook
        mode=budget.mode,
        ledger=shareable_ledger(private.model) if isinstance(private.model, EDPLS) else private.ledger,
        ledger_delta=delta,
        headline={"RMSEP plain PLS": plain.rmsep, f"RMSEP {SETTINGS[chosen]}": private.rmsep,
                  "RMSEP predicting the training mean": private.rmsep_mean_model,
                  **{f"|corr| plain PLS, {COMPONENTS[c]}": plain.measures[c]["correlation"] for c in COMPONENTS},
                  **{f"|corr| {SETTINGS[chosen]}, {COMPONENTS[c]}": private.measures[c]["correlation"]
                     for c in COMPONENTS},
                  "verdict": verdict_text})


def owner_sheets(problem, plain, private, summary, chosen: str, eps: float) -> dict:
    """Everything computed on the rows without noise: attack results, reconstructions, the plain model, the sweep."""
    rows = [{"model": SETTINGS[o.setting], "ε": o.epsilon, "guarantee of this fit": o.status, "component": c,
             **{k: o.measures[c][k] for k in ("correlation", "cosine", "hit", "peak")},
             "RMSEP (held-out rows)": o.rmsep, "RMSEP predicting the mean": o.rmsep_mean_model}
            for o in (plain, private) for c in COMPONENTS]
    recon = pd.DataFrame({"axis": np.asarray(problem.axis)})
    for c in COMPONENTS:
        recon[f"reference {c} ({'true secret' if problem.secret is not None else 'plain-PLS leak'})"] = plain.secret[c]
        recon[f"plain PLS {c}"] = plain.recovered[c]
        recon[f"{chosen} ε={eps:g} {c}"] = private.recovered[c]
    pm = plain.model
    plain_model = pd.DataFrame({"variable": problem.variable_names or list(range(problem.X.shape[1])),
                                "coef": np.ravel(pm.coef_)})
    for j in range(pm.x_weights_.shape[1]):
        plain_model[f"W{j + 1}"] = pm.x_weights_[:, j]
        plain_model[f"P{j + 1}"] = pm.x_loadings_[:, j]
    sheets = {"attack at ε (your rows)": pd.DataFrame(rows), "reconstructions": recon,
              "plain PLS model (no privacy)": plain_model, "sweep summary (your rows)": summary}
    ledger = private.ledger
    if ledger is not None and len(ledger):
        sheets["ledger (exact)"] = ledger.to_frame()
    if not bool(problem.bounds_public):
        sheets["bounds read off the rows"] = {"max ‖x‖ (training rows)": problem.x_bound,
                                               "max |y| (training rows)": problem.y_bound,
                                               "note": "exact private statistics: the strict fit is not proven"}
    if problem.secret is None:
        sheets["leak specificity"] = {"other/own variance along the leak": leak_exclusivity(
            plain.recovered["P"], problem.X_own, problem.X_other)}
    return sheets


def odometer_section(attack: Attack, private, chosen: str, budget, n_components: int) -> None:
    """On the user's own data, the private fit shown (a release: it can be exported) in the session's history and
    odometer (``ui.run_history``). The sweep's fits are for the owner only and are not counted, as elsewhere."""
    ledger = private.ledger
    if attack.data_set is None or ledger is None or not len(ledger):
        return
    model = private.model
    record_release("Attack lab", attack.data_set, method=model_label(chosen, budget.epsilon, private), ledger=ledger,
                   released=(getattr(model, "coef_", None), getattr(model, "intercept_", None)),
                   settings={"components": n_components, "attacker": getattr(attack.problem, "attacker_label", "")},
                   epsilon=budget.epsilon, delta=budget.delta)
    history_section("attack_lab", attack.data_set)


def main() -> None:
    intro()
    budget = budget_picker("attack_lab")
    scenario_name = st.radio("Scenario", ("Paper's simulation", "Own data"), horizontal=True, key="attack_scenario")
    left, right = st.columns(2)
    n_components = left.number_input(K_LABEL, 1, 10, 3, key="attack_k")
    lv = right.number_input("Latent variable the attacker reads", 1, int(n_components), int(n_components),
                            key="attack_lv", help="The paper reads LV 3 of a 3-LV model.")
    n_components, lv = int(n_components), int(lv)
    if scenario_name == "Paper's simulation":
        attack = simulation_scenario()
    else:
        attack = own_data_scenario(n_components)
    chosen = shown_model(budget, attack.problem)
    plain, private = reconstruction_section(attack, budget, chosen, n_components, lv)
    odometer_section(attack, private, chosen, budget, n_components)
    st.subheader("Attack success against ε")
    sweep = sweep_inputs(budget)
    summary = run_sweep(attack, budget, sweep, n_components, lv)
    if summary is None:
        st.stop()
    verdict_text = success_section(attack, summary, chosen, budget.epsilon)
    report = run_report(attack, budget, (plain, private), scenario_name=scenario_name, chosen=chosen,
                        n_components=n_components, lv=lv, sweep=sweep, verdict_text=verdict_text)
    release_json, no_release_reason = shareable_model(private)
    export_bar(report, release_json=release_json, no_release_reason=no_release_reason,
               owner_sheets=lambda: owner_sheets(attack.problem, plain, private, summary, chosen, budget.epsilon))
