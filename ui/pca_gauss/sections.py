"""PCA-Gauss: differentially private synthetic data from a DP projection plus a DP Gaussian model
(issue #6; spec pca_gauss.md; issue #15: public inputs, fresh noise, shareable release vs owner's workbook).
Thin page: widgets -> engine.methods.pca_gauss.utility / pca_gauss -> figures.
"""
from __future__ import annotations

import math
import secrets

import numpy as np
import pandas as pd
import streamlit as st

from engine.data import DataError
from engine.methods.pca_gauss import (
    FINDINGS,
    N_PUBLIC_NOTE,
    can_map_back,
    owner_sheets,
    shareable_release,
)
from engine.methods.pca_gauss.evaluation import UNFAIR_METRICS
from engine.methods.pca_gauss.utility import (
    METHOD_LABELS,
    METRICS,
    PRIMARY_METRIC,
    default_methods,
    shareable_synthetic_frame,
    summarise,
)
from engine.privacy.wording import paper_claim, paper_label
from engine.release.manifest import release_to_json
from engine.reporting.report import DataInfo, RunReport
from ui.budget import budget_picker
from ui.exports import export_bar, owner_secret, show_chart
from ui.figures.report import synthetic_rows
from ui.jobs_view import fit_wait
from ui.ledger_view import show_ledger
from ui.pca_gauss.figures import (
    pca_gauss_correlation_figure,
    pca_gauss_marginals_figure,
    pca_gauss_scatter_figure,
    pca_gauss_utility_figure,
)
from ui.pca_gauss.notes import degenerate_note
from ui.pca_gauss.setup import (
    SOURCE_TEXT,
    TASK_TEXT,
    Setup,
    data_section,
    public_inputs_section,
    settings_section,
    task_section,
)
from ui.pca_gauss.tasks import pca_gauss_release, pca_gauss_sweep, pca_gauss_sweep_point
from ui.progress import Sweep
from ui.run_history import history_section, record_release
from ui.runtime.jobs import JobError, run_upload
from ui.setting_errors import setting_error
from ui.tables import human_headers
from ui.tabs import lazy_tabs

EPS_GRID = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 1000.0)


# --------------------------------------------------------------------------- cached engine calls
@st.cache_data(show_spinner="Fitting the private release ...", max_entries=32)
def fitted_release(df: pd.DataFrame, task: str, target: str | None, P: int, source: str, eps: float, mode: str,
                   delta: float | None, alpha: float, mean_share: float, K: int, split_seed: int, noise_seed,
                   fit_id: int, name: str, public: tuple | None, bounds, y_bounds, labels,
                   public_declared: bool, upload: bool = False) -> dict:
    """One release. ``fit_id`` is a per-session number (not a seed): with fresh noise every session, and every
    click of "New release", fits anew instead of reusing another session's cached noise. ``upload``: in a worker
    with the job budgets (``ui.runtime.jobs``)."""
    return run_upload(upload, pca_gauss_release, df, task, target, name, P=P, pca_source=source, epsilon=eps,
                      mode=mode, delta=delta, alpha=alpha, mean_share=mean_share, K=K, random_state=split_seed,
                      noise_seed=noise_seed, public=public, bounds=bounds, y_bounds=y_bounds, labels=labels,
                      public_declared=public_declared, label=f"The PCA-Gauss release of {name}")


@st.cache_data(show_spinner=False, max_entries=2048)
def sweep_point(df: pd.DataFrame, task: str, target: str | None, method: str, P: int, eps: float, mode: str,
                delta: float | None, alpha: float, K: int, split_seed: int, noise_seed, fit_id: int, rep: int,
                real_sc: float | None, name: str, public: tuple | None, options: dict) -> dict:
    """One (method, ε, replicate) cell of the utility sweep; cached so a re-run only computes new cells."""
    return pca_gauss_sweep_point(df, task, target, method, P, eps, mode, delta, alpha, K, split_seed, noise_seed, rep,
                                 real_sc, name, public, options)


def intro() -> None:
    st.markdown(
        "A data owner who wants to hand out **data, not a model** can release differentially private synthetic "
        "rows: project the records with a projection W that is itself private or public, fit a Gaussian (one per "
        "class for classification) to the projected records with Laplace noise on its moments, and sample from it "
        "(Chanyaswad, Liu & Mittal). Below: real against synthetic rows, their utility when a model is **trained "
        "on synthetic rows and tested on real rows** (held-out test rows for classification and regression; the "
        "private training rows themselves for clustering, which has no test split), the baselines of the paper, "
        "and the privacy ledger."
    )
    st.info(f"**What our analysis of the paper found.**\n- **Lap-PCA.** {FINDINGS['lap_pca']}\n"
            f"- **Clustering recipe.** {FINDINGS['alg1_blob']}\n"
            f"- **Classification recipe.** {FINDINGS['alg3_centring']}",
            icon=":material/fact_check:")


def mode_notice(strict: bool) -> None:
    if not strict:
        st.info("**Paper-faithful mode is on**: scaling from the private training data, the paper's sensitivity "
                "formulas, Lap-PCA at the printed scale (the ledger shows its true ε = M·ε_PCA), exact class "
                "counts, and numpy's sampler on the raw noisy matrix. The totals are not a proven guarantee.",
                icon=":material/menu_book:")
    else:
        st.success("**Strict mode is on**: bounds and centre you declare public (documented ranges, values you "
                   "enter or a separate public file), every release calibrated to a proven sensitivity, a public "
                   "label set, noisy class counts and means, and every release inside the one total ε shown in "
                   "the ledger.", icon=":material/verified_user:")


#: Where each setting an engine message can be about is on this page (ui.setting_errors), by its real label.
PUBLIC_INPUTS = "under 'Public inputs: bounds, centre, label set, public data'"
SETTING_PLACES = (
    (("n_components", "exceeds the number of features"), "in 'k = P, released dimension'"),
    (("mean_share",), "in 'Share of the Gaussian budget for means'"),
    (("delta",), "in 'δ (delta)' in the sidebar"),
    (("public", "label", "slice", "rows aside", "bound"), PUBLIC_INPUTS),
    (("task", "target", "requires y"), "in 'Task' or 'Target column (y or labels; for clustering, optional true "
                                       "labels)'"),
)
SETTINGS_FALLBACK = ("The settings are 'Task', 'k = P, released dimension', 'Projection W' and 'Public inputs: "
                     "bounds, centre, label set, public data' above.")


def fit_section(setup: Setup, budget) -> tuple:
    """The release, with fresh noise: its noise seed is the teaching switch's, never the split seed."""
    noise_seed = budget.noise_seed
    if noise_seed is None and "pg_fit_id" not in st.session_state:
        st.session_state["pg_fit_id"] = secrets.randbits(62)
    if st.button("New release (fresh noise)", key="pg_refit", disabled=noise_seed is not None,
                 help="Draws the release again with new noise. Each release you publish spends its own budget."):
        st.session_state["pg_fit_id"] = secrets.randbits(62)
    fit_id = 0 if noise_seed is not None else st.session_state["pg_fit_id"]
    s = setup
    try:
        with fit_wait("pg_fit"):
            result = fitted_release(s.df, s.task, s.target, s.P, s.source, budget.epsilon, budget.mode, s.delta,
                                    float(s.alpha), float(s.mean_share), s.K, s.split_seed, noise_seed, fit_id,
                                    s.name, public_key(s), s.bounds, s.y_bounds, s.labels, s.public_declared,
                                    s.origin == "upload")
    except (DataError, ValueError) as err:
        setting_error("No release on this choice", err, SETTING_PLACES, SETTINGS_FALLBACK)
        st.stop()
    except JobError as err:
        st.error(str(err))
        st.stop()
    return result, noise_seed, fit_id


def public_key(setup: Setup):
    return None if setup.public is None else (setup.public[0], setup.public[1])


def not_proven_reasons(result: dict) -> str:
    return "; ".join(r.removeprefix("not proven: ") for r in result["budget"]["reasons_not_proven"])


def summary_section(setup: Setup, result: dict, strict: bool) -> None:
    model, sizes, b = result["model"], result["split"].sizes, result["budget"]
    status, metric, task, source = b["status"], PRIMARY_METRIC[setup.task], setup.task, setup.source
    m1, m2, m3, m4 = st.columns(4)
    label, higher = METRICS[metric]
    m1.metric(f"Synthetic → real: {label.split(' (')[0]}", f"{result['utility'][metric]:.3f}",
              delta=f"{result['utility'][metric] - result['utility_real'][metric]:+.3f} vs real data",
              delta_color="normal" if higher else "inverse",
              help=f"Trained on synthetic rows, evaluated on the {result['evaluated_on']} (owner's view: computed on "
                   "private rows without noise).")
    m2.metric("Total ε (basic composition)",
              f"{b['epsilon_ledger_basic']:.4g}" if math.isfinite(b["epsilon_ledger_basic"]) else "∞ (no privacy)",
              help="The ledger's total: the sum of every release's ε."
                   " For Lap-PCA at the printed scale this is larger than the nominal ε.")
    m3.metric("Nominal ε / δ", f"{b['epsilon_nominal']:.4g} / {b['delta']:.2g}")
    m4.metric("PSD fix needed", "yes" if model.psd_fixed_ else "no",
              help=f"Smallest eigenvalue of the noisy matrix before the fix: {model.min_eig_before_fix_:.3g}")
    reasons = not_proven_reasons(result)
    if status == "proven":
        st.success("**Guarantee of this release: proven.**", icon=":material/verified_user:")
    else:
        st.warning(f"**Guarantee of this release: {status}**" + (f": {reasons}." if reasons else "."),
                   icon=":material/warning:")
    if task == "unsupervised":
        rows_text = f"Rows: {sizes['train']} private training rows (N, treated as public)"
        rows_text += f", {sizes['public']} public." if source == "public" else "."
        rows_text += " Clustering has no test split: utility is evaluated on the training rows themselves."
    else:
        rows_text = (f"Rows: {sizes['train']} private training rows (N, treated as public), {sizes['public']} "
                     f"public, {sizes['test']} held-out test rows.")
    st.caption(rows_text + f" Budget split: ε_PCA = {b['epsilon_pca']:.3g}, ε_count = {b['epsilon_count']:.3g}, "
                           f"ε_μ = {b['epsilon_mu']:.3g}, ε_Σ = {b['epsilon_sigma']:.3g}.")
    if source == "laplace" and not strict:
        st.warning(FINDINGS["lap_pca"], icon=":material/warning:")
    if source == "nonprivate":
        st.warning(FINDINGS["alg1_blob"] + " W is used below only to map your real rows for comparison on this "
                   "screen; it is never exported.", icon=":material/warning:")


def real_rows_text(task: str) -> str:
    return "private training rows" if task == "unsupervised" else "held-out test rows"


def utility_table(result: dict) -> pd.DataFrame:
    return pd.DataFrame({"synthetic → real": result["utility"], "real → real": result["utility_real"]})


def real_with_labels(setup: Setup, result: dict) -> tuple[pd.DataFrame, str | None]:
    """The real rows to draw and the column to colour them by: the class (classification), y (regression), or for
    clustering the optional true labels of the real rows (owner's view; the synthetic rows carry none)."""
    real, task = result["real"], setup.task
    if task == "classification":
        return real, "label"
    if task == "regression":
        return real, "y"
    labels = result["split"].y_test
    if labels is None or len(labels) != len(real):
        return real, None
    return real.assign(label=np.asarray(labels).astype(str)), "label"


def real_vs_synthetic_tab(setup: Setup, result: dict) -> None:
    task, source = setup.task, setup.source
    synthetic = result["synthetic"]
    real, colour = real_with_labels(setup, result)
    released_cols = [c for c in synthetic.columns if c.startswith("c")]
    if len(released_cols) >= 2:
        axes = st.columns(2)
        x_col = axes[0].selectbox("x axis", released_cols, 0, key="pg_x")
        y_col = axes[1].selectbox("y axis", released_cols, 1, key="pg_y")
    else:
        x_col, y_col = released_cols[0], "y" if task == "regression" else released_cols[0]
    show_chart(st, pca_gauss_scatter_figure(real, synthetic, x=x_col, y=y_col, colour=colour), "scatter",
               page="pca_gauss")
    note = degenerate_note(result["model"], x_col, y_col, released_cols + (["y"] if task == "regression" else []))
    if note:
        st.info(note)
    if task == "unsupervised" and colour is not None:
        st.caption(f"Real rows coloured by the true labels of {setup.target!r} (your view); a clustering release "
                   "has no labels, so its synthetic rows are drawn in one colour.")
    shown = released_cols[:6] + (["y"] if task == "regression" else [])
    show_chart(st, pca_gauss_marginals_figure(real, synthetic, shown), "marginals", page="pca_gauss")
    show_chart(st, pca_gauss_correlation_figure(result["corr_real"], result["corr_synthetic"]), "correlations",
               page="pca_gauss")
    st.caption("Released space: c_i = (W'x)_i/√M of the box-scaled record"
               + (" (W = identity, no reduction)" if source == "identity" else "")
               + f". Real rows (your {real_rows_text(task)}, shown on your screen only) are mapped by the same W.")
    st.dataframe(human_headers(utility_table(result).rename(index=lambda k: METRICS.get(k, (k,))[0])), width="stretch")
    st.caption(f"Evaluated on the {result['evaluated_on']}. References: "
               + ", ".join(f"{k.replace('_', ' ')} = {v:.3f}" for k, v in result["references"].items()))


def run_utility_sweep(setup: Setup, result: dict, budget, noise_seed, fit_id: int, cells: list,
                      sweep_options: dict, utility_sweep: Sweep) -> list:
    s = setup
    real_sc = result["utility_real"].get("silhouette")
    rows = []
    try:
        with utility_sweep.running("Sweeping ε ...") as bar:
            if s.origin == "upload":  # the whole sweep in one worker with the job budgets (ui.runtime.jobs)
                return run_upload(True, pca_gauss_sweep, s.df, s.task, s.target, cells, P=s.P, mode=budget.mode,
                                  delta=s.delta, alpha=float(s.alpha), K=s.K, split_seed=s.split_seed,
                                  noise_seed=noise_seed, real_sc=real_sc, name=s.name, public=public_key(s),
                                  options=sweep_options, label=f"The sweep on {s.name}",
                                  progress=lambda f, text: bar.progress(min(f, 1.0), text=text))
            for i, (m, e, r) in enumerate(cells, start=1):
                rows.append(sweep_point(s.df, s.task, s.target, m, s.P, float(e), budget.mode, s.delta,
                                        float(s.alpha), s.K, s.split_seed, noise_seed, fit_id, r, real_sc, s.name,
                                        public_key(s), sweep_options))
                bar.progress(i / len(cells), text=f"{i}/{len(cells)}: {METHOD_LABELS[m]}, ε = {e:g}")
    except (DataError, ValueError, JobError) as err:
        st.error(f"The sweep stopped: {err}")
    return rows


def utility_title(setup: Setup, metric: str) -> str:
    """The utility chart's title: the data set, the metric and, for a fair metric, how it compares."""
    how = "not comparable with the real data" if metric in UNFAIR_METRICS else \
        "trained on synthetic rows, tested on real rows"
    return f"{setup.name}: {METRICS[metric][0].split(' (')[0]} ({how})"


def show_utility_sweep(setup: Setup, result: dict, frame: pd.DataFrame, metric_choice: str, methods: list,
                       strict: bool) -> None:
    if metric_choice not in frame.columns:
        return
    summary = summarise(frame, metric_choice, by=("method", "epsilon"))
    refs = {k.replace("_", " "): v for k, v in result["references"].items() if "silhouette" not in k
            or metric_choice == "silhouette"}
    show_chart(st, pca_gauss_utility_figure(summary, metric_label=METRICS[metric_choice][0], references=refs,
                                            title=utility_title(setup, metric_choice) + (
                                                "" if strict else f", against the {paper_claim(None, 'pca_gauss')}")),
               "utility_vs_epsilon", page="pca_gauss")
    if metric_choice in UNFAIR_METRICS:
        st.warning(f"**Not a fair comparison with the real data**: {UNFAIR_METRICS[metric_choice]}. The default "
                   f"metric, {METRICS[PRIMARY_METRIC[setup.task]][0]}, trains on synthetic rows and tests on real "
                   "rows.", icon=":material/warning:")
    if not strict and "pca_gauss_laplace" in methods:
        st.caption("Paper mode: the Lap-PCA line uses the printed scale, so its true ε is M·α·ε + (1 − α)·ε, "
                   "not the ε on the axis.")
    cells = summary.assign(cell=[f"{m:.3f} ({s})" for m, s in zip(summary["mean"], summary["status"])])
    table = cells.pivot_table(index="label", columns="epsilon", values="cell", aggfunc="first")
    st.dataframe(human_headers(table), width="stretch")
    st.caption("Cells: mean over replicates (status of the fits from their own ledgers). Results on your "
               "private rows: they go to the owner's workbook, not to the shareable files.")


def utility_sweep_key(s: Setup, budget, noise_seed, fit_id: int, methods, eps_grid, reps: int) -> tuple:
    """What a stored sweep must match to be shown and exported: the fit's settings and the sweep's own."""
    return (s.name, s.task, s.target, s.P, s.source, budget.mode, s.delta, float(s.alpha), s.K, s.split_seed,
            noise_seed, fit_id, tuple(methods), tuple(sorted(eps_grid)), int(reps), repr(s.bounds),
            repr(s.y_bounds), s.labels, s.public_declared, s.public is None)


def hidden_utility_sweep_key(s: Setup, budget, noise_seed, fit_id: int) -> tuple | None:
    """The sweep key while the "Utility vs ε" tab is hidden (lazy tabs): from its settings, which the tab helper
    keeps in the session; None before the tab was ever opened (no sweep can exist then)."""
    keys = (f"pg_methods_{s.task}", "pg_eps_grid", "pg_reps")
    if not all(k in st.session_state for k in keys):
        return None
    methods, eps_grid, reps = (st.session_state[k] for k in keys)
    return utility_sweep_key(s, budget, noise_seed, fit_id, methods, eps_grid, reps)


def utility_tab(setup: Setup, result: dict, budget, noise_seed, fit_id: int, strict: bool) -> tuple:
    """Every method's utility against ε; returns the sweep's key (the owner's workbook takes a matching sweep)."""
    s, task = setup, setup.task
    st.markdown("Every method trained on its release and tested on the same real rows, at the k and α above; "
                "mean and 95 % interval over replicates; each cell's status comes from its own fits' ledgers "
                "(ε = ∞ references: no privacy). The paper reports the best over k and α, which is tuned on test "
                "data and spends privacy no ledger counts.")
    methods = st.multiselect("Methods", default_methods(task), default=list(default_methods(task)),
                             format_func=METHOD_LABELS.get, key=f"pg_methods_{task}")
    e1, e2 = st.columns([3, 1])
    eps_grid = e1.multiselect("ε grid", EPS_GRID, default=[0.1, 1.0, 10.0, 100.0, 1000.0], key="pg_eps_grid")
    reps = int(e2.number_input("Replicates", 1, 20, 3, key="pg_reps"))
    metric_options = [m for m in METRICS if m in result["utility"]]
    primary = PRIMARY_METRIC[task]
    metric_choice = st.selectbox("Metric", metric_options, key=f"pg_metric_{task}",
                                 index=metric_options.index(primary) if primary in metric_options else 0,
                                 format_func=lambda m: METRICS[m][0] + (" (fair: trained on synthetic, tested on "
                                                                         "real)" if m == primary else ""))
    sweep_options = {"bounds": s.bounds, "y_bounds": s.y_bounds, "public_declared": s.public_declared}
    if task == "classification":
        sweep_options["labels"] = s.labels
    sweep_key = utility_sweep_key(s, budget, noise_seed, fit_id, methods, eps_grid, reps)
    utility_sweep = Sweep("pg_sweep", "sweep")
    if st.button("Run the sweep", key="pg_run_sweep", type="primary", disabled=not (methods and eps_grid)):
        cells = [(m, e, r) for r in range(reps) for m in methods for e in sorted(eps_grid)]
        rows = run_utility_sweep(setup, result, budget, noise_seed, fit_id, cells, sweep_options, utility_sweep)
        if rows:
            frame = pd.DataFrame(rows)
            frame["label"] = frame["method"].map(METHOD_LABELS)
            st.session_state["pg_sweep"] = (sweep_key, frame)
    stored = st.session_state.get("pg_sweep")
    if stored is not None and stored[0] == sweep_key:
        show_utility_sweep(setup, result, stored[1], metric_choice, methods, strict)
    elif stored is not None:
        st.caption("The settings changed since the last sweep: run it again.")
    return sweep_key


def ledger_tab(result: dict, budget, strict: bool) -> None:
    model = result["model"]
    show_ledger(result["ledger"], delta=budget.delta if len(result["ledger"]) else None, expanded=True)
    st.caption(N_PUBLIC_NOTE)
    st.markdown("**Every noise draw** (one row per release; per class for classification; owner's view):")
    st.dataframe(human_headers(result["noise_log"]), hide_index=True, width="stretch")
    st.caption(f"Scaling: {model.scaling_['source']}. Smallest eigenvalue of the noisy matrix before the PSD fix: "
               f"{model.min_eig_before_fix_:.4g} ({'clipped at 0' if strict else 'numpy SVD sampler'}).")


def synthetic_downloads(setup: Setup, result: dict, target_name: str) -> None:
    """What the shareable synthetic data are, and the released-space CSV when they can be mapped back."""
    mapped = can_map_back(result["model"])
    st.markdown("The shareable synthetic data are drawn from the DP model only"
                + (", mapped back to your columns with the released W and the public box."
                   if mapped else ", in the released space c1..ck (" + (
                       "the clustering recipe's W is not released" if setup.source == "nonprivate" else
                       "W or the box is not public") + ", so they cannot be mapped back to your columns)."))
    if mapped:
        st.download_button("Synthetic data, released space (CSV, shareable)",
                           lambda: result["csv_released"].rename(columns={"y": target_name, "label": target_name})
                           .to_csv(index=False),
                           file_name=f"pca_gauss_synthetic_{setup.task}_released_space.csv", mime="text/csv",
                           key="pg_dl_released", on_click="ignore")


def run_report(setup: Setup, result: dict, budget, noise_seed) -> RunReport:
    s, model, b = setup, result["model"], result["budget"]
    source, task = s.source, s.task
    public_parameters = {"epsilon": budget.epsilon, "delta": s.delta if source == "analyze_gauss" else None,
                         "mode": budget.mode, "task": task, "k = P": s.P, "projection W": SOURCE_TEXT[source],
                         "alpha": float(s.alpha) if source in ("laplace", "analyze_gauss") else None,
                         "mean share": float(s.mean_share), "K (clusters)": s.K if task == "unsupervised" else None,
                         "number of training rows N": "public (replace-one neighbours)", **s.public_text}
    return RunReport(
        page="pca_gauss", method=f"PCA-Gauss ({SOURCE_TEXT[source].split(':')[0]}, {TASK_TEXT[task]})" + (
            "" if budget.mode == "strict" else f"; {paper_label('PCA-Gauss', budget.epsilon, 'pca_gauss')}"),
        data=DataInfo.from_frame(s.df, s.name, s.origin, owner_secret=owner_secret()),
        preprocessing=f"box scaling: {model.scaling_['source']}; centre = midpoint of the bounds; every entry "
                      "clipped to the box",
        parameters={"task": task, "target": s.target, "k = P": s.P, "projection W": source,
                    "epsilon": budget.epsilon, "delta": s.delta, "mode": budget.mode, "alpha": float(s.alpha),
                    "mean_share": float(s.mean_share), "K (clusters)": s.K, "split seed": s.split_seed,
                    "reproducible noise": noise_seed is not None,
                    "bounds": s.public_text.get("bounds", "paper scaling"),
                    "label set": s.public_text.get("label set")},
        public_parameters={k: v for k, v in public_parameters.items() if v is not None},
        mode=budget.mode, ledger=result["ledger"], ledger_delta=budget.delta if len(result["ledger"]) else None,
        headline={**{f"synthetic → real: {METRICS.get(k, (k,))[0]}": v for k, v in result["utility"].items()},
                  **{f"real → real: {METRICS.get(k, (k,))[0]}": v for k, v in result["utility_real"].items()},
                  "evaluated on": result["evaluated_on"],
                  "total ε in the ledger (basic)": b["epsilon_ledger_basic"], "PSD fix needed": model.psd_fixed_})


def export_tab(setup: Setup, result: dict, budget, noise_seed, sweep_key: tuple) -> None:
    model, split, b = result["model"], result["split"], result["budget"]
    task, status = setup.task, b["status"]
    target_name = setup.target or "target"
    try:
        release_text = release_to_json(shareable_release(model), indent=1)
        no_release = None
    except ValueError as err:
        release_text, no_release = None, str(err)
    synthetic_csv = None
    if no_release is None:
        def synthetic_csv() -> str:
            return shareable_synthetic_frame(model, feature_names=split.feature_names,
                                             target_name=target_name).to_csv(index=False)
        synthetic_downloads(setup, result, target_name)
    reasons = not_proven_reasons(result)
    guarantee = "proven" if status == "proven" else f"{status} ({reasons or 'see the ledger'})"
    st.caption(f"The guarantee covers the synthetic rows and the model as a whole "
               f"(ε = {b['epsilon_ledger_basic']:.4g} in the ledger): {guarantee}.")
    report = run_report(setup, result, budget, noise_seed)
    report.add_figures(synthetic_rows(result["synthetic"], shareable=no_release is None))

    def private_sheets() -> dict:
        sheets = owner_sheets(model, split.feature_names)
        sheets["utility (private rows)"] = utility_table(result).rename(index=lambda k: METRICS.get(k, (k,))[0])
        sheets[f"real {real_rows_text(task)} (released space)"] = result["real"]
        sheets["split sizes (exact)"] = {**split.sizes, "evaluated on": result["evaluated_on"]}
        if task == "classification":
            cls, cnt = np.unique(np.asarray(split.y_train).astype(str), return_counts=True)
            sheets["class counts (exact)"] = pd.DataFrame({"label": cls, "training rows": cnt})
        stored_sweep = st.session_state.get("pg_sweep")
        if stored_sweep is not None and stored_sweep[0] == sweep_key:
            sheets["utility sweep (private rows)"] = stored_sweep[1]
        return sheets

    # What the buttons below hand out, kept for this session's tests and notebooks (built only when called).
    st.session_state["pg_exports"] = {"release_json": release_text, "synthetic_csv": synthetic_csv,
                                      "owner_sheets": private_sheets}
    export_bar(report, release_json=release_text, no_release_reason=no_release, synthetic_csv=synthetic_csv,
               owner_sheets=private_sheets)


def odometer_section(setup: Setup, result: dict, budget) -> None:
    """This release in the session's history (``ui.run_history``), then the odometer of its data set."""
    model, s = result["model"], setup
    record_release("PCA-Gauss", s, method=f"PCA-Gauss (ε = {budget.epsilon:g})", ledger=result["ledger"],
                   released=(result["synthetic"].select_dtypes("number").to_numpy(), model.min_eig_before_fix_),
                   settings={"task": s.task, "P": s.P, "projection": s.source, "mode": budget.mode},
                   epsilon=budget.epsilon, delta=s.delta)
    history_section("pca_gauss", s)


def main() -> None:
    intro()
    budget = budget_picker("pca_gauss", show_calibration=False)
    strict = budget.mode == "strict"
    mode_notice(strict)
    setup = Setup()
    default_task, default_target = data_section(setup)
    task_section(setup, default_task, default_target)
    settings_section(setup, budget, strict)
    public_inputs_section(setup, strict)
    result, noise_seed, fit_id = fit_section(setup, budget)
    summary_section(setup, result, strict)
    odometer_section(setup, result, budget)
    # lazy: only the open tab computes (hidden tabs no longer delay the first chart)
    tabs = lazy_tabs(["Real vs synthetic", "Utility vs ε", "Privacy ledger", "Export"], key="pca_gauss_tabs")
    tabs.show("Real vs synthetic", real_vs_synthetic_tab, setup, result)
    sweep_key = tabs.show("Utility vs ε", utility_tab, setup, result, budget, noise_seed, fit_id, strict)
    if not tabs.is_open("Utility vs ε"):
        sweep_key = hidden_utility_sweep_key(setup, budget, noise_seed, fit_id)
    tabs.show("Privacy ledger", ledger_tab, result, budget, strict)
    tabs.show("Export", export_tab, setup, result, budget, noise_seed, sweep_key)
