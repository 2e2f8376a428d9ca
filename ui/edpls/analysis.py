"""The edPLS page's analyses after a fit: the RMSEP sweep, paper mode's curve note and the samples-needed
simulation (moved from pages/edpls.py, the bodies unchanged)."""

import numpy as np
import streamlit as st

from engine.data.preprocess import chain_names
from engine.methods.edpls import (
    paper_notes,
    samples_needed,
    samples_needed_curve,
)
from engine.methods.edpls.paper_notes import paper_curve_note
from engine.methods.edpls.sweeps import samples_needed_curve_recommended
from engine.privacy.wording import paper_claim
from ui.edpls.figures import edpls_rmsep_curve_figure, edpls_samples_needed_figure
from ui.edpls.fits import PAPER_AUDIT_KEY, Choice, _upload_name, preprocess
from ui.edpls.tasks import edpls_sweep as sweep
from ui.exports import show_chart
from ui.jobs_view import fit_wait
from ui.progress import Sweep, cached_sweep, session_scope
from ui.runtime.jobs import SWEEP_SECONDS, JobError, run_upload
from ui.tables import human_headers

#: The largest simulated training set of the samples-needed simulation.
SIMULATED_ROWS_MAX = 100_000


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
    options = chain_names() + ([chain] if chain not in chain_names() else [])  # the page's chain, e.g. "snv+sg1"
    chains = s1.multiselect("Preprocessing chains to compare", options, default=[chain], key="edpls_chains")
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
                        recommended=None if recommended is None else (recommended.y_range, recommended.X_public,
                                                                      chain),
                        progress=lambda f, msg: bar.progress(min(f, 1.0), text=msg)),
                    X_all, y_all, tr, te, repr((tuple(chains), tuple(eps_grid), n_components, reps,
                                                sorted(sweep_params.items()), budget.noise_seed,
                                                budget.session_noise_key)),
                    *(() if recommended is None else (repr((recommended.y_range, chain)),
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
                    upload is not None, paper_notes.paper_curve_diagnosis, Xp[tr], problem.y[tr], Xp[te], problem.y[te],
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
            X_public=recommended.X_public, random_state=budget.noise_seed, progress=progress, label=label,
            preprocessing=res["private"].preprocessing)
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
        # up to 1000 times the rows, at most SIMULATED_ROWS_MAX (the 3,500 training rows of the consortium sample
        # would otherwise ask for 3.5 million resampled rows in the server process)
        sizes = sorted({n0, *(min(int(n0 * f), max(n0, SIMULATED_ROWS_MAX)) for f in (2, 5, 10, 30, 100, 300, 1000))})
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

