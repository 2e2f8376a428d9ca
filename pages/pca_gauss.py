"""PCA-Gauss: differentially private synthetic data from a DP projection plus a DP Gaussian model
(issue #6; spec pca_gauss.md). Thin page: widgets -> engine.methods.synthetic_utility -> figures."""
from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from engine.data import DataError
from engine.methods.pca_gauss import ALPHA_GRID, FINDINGS, TASKS, to_json
from engine.methods.synthetic_utility import (
    BUNDLED_SETS,
    METHOD_LABELS,
    METRICS,
    PRIMARY_METRIC,
    SOURCE_METHOD,
    arrays_from_frame,
    default_methods,
    load_bundled,
    make_split,
    release_report,
    run_method,
    summarise,
)
from ui.budget import budget_picker
from ui.data_picker import data_picker
from ui.figures import (
    pca_gauss_correlation_figure,
    pca_gauss_marginals_figure,
    pca_gauss_scatter_figure,
    pca_gauss_utility_figure,
)
from engine.report import DataInfo, RunReport
from ui.exports import export_bar, show_chart
from ui.ledger_view import show_ledger
from ui.progress import Sweep

TASK_TEXT = {
    "unsupervised": "Unsupervised / clustering (Algorithm 1)",
    "regression": "Regression (Algorithm 2)",
    "classification": "Classification (Algorithm 3, one Gaussian per class)",
}
SOURCE_TEXT = {
    "public": "Pub-PCA: PCA of a disjoint public slice (free)",
    "laplace": "Lap-PCA: Laplace-noised covariance (ε_PCA = α·ε)",
    "analyze_gauss": "AG-PCA: Analyze-Gauss (ε_PCA = α·ε, δ)",
    "nonprivate": "Non-private W of the same data (Algorithm 1 as printed)",
}
DATA_KINDS = ("scikit-learn data set", "Sample data or upload")
EPS_GRID = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 1000.0)


# --------------------------------------------------------------------------- cached engine calls
@st.cache_data(show_spinner=False)
def bundled_frame(key: str) -> pd.DataFrame:
    return load_bundled(key)


@st.cache_data(show_spinner="Fitting the private release ...", max_entries=32)
def fitted_release(df: pd.DataFrame, task: str, target: str | None, P: int, source: str, eps: float, mode: str,
                   delta: float | None, alpha: float, mean_share: float, K: int, seed: int, name: str) -> dict:
    X, y, features = arrays_from_frame(df, task, target, name=name)
    return release_report(X, y, task, P=P, pca_source=source, epsilon=eps, mode=mode, delta=delta, alpha=alpha,
                          mean_share=mean_share, K=K, random_state=seed, feature_names=features)


@st.cache_data(show_spinner=False, max_entries=2048)
def sweep_point(df: pd.DataFrame, task: str, target: str | None, method: str, P: int, eps: float, mode: str,
                delta: float | None, alpha: float, K: int, seed: int, rep: int, real_sc: float | None,
                name: str) -> dict:
    """One (method, ε, replicate) cell of the utility sweep; cached so a re-run only computes new cells."""
    X, y, _ = arrays_from_frame(df, task, target, name=name)
    split = make_split(X, y, task, random_state=seed)
    P_eff = split.X_train.shape[1] if method == "liu" else P
    row = run_method(method, split, P=P_eff, epsilon=eps if method not in ("real", "public_only") else math.inf,
                     alpha=alpha, mode=mode, delta=delta, K=K, random_state=(seed, rep, list(METHOD_LABELS).index(method)),
                     real_silhouette=real_sc)
    row.update(epsilon=eps, rep=rep)
    return row


# --------------------------------------------------------------------------- page
st.title("PCA-Gauss")
st.markdown(
    "A data owner who wants to hand out **data, not a model** can release differentially private synthetic "
    "rows: project the records with a projection W that is itself private or public, fit a Gaussian (one per "
    "class for classification) to the projected records with Laplace noise on its moments, and sample from it "
    "(Chanyaswad, Liu & Mittal). Below: real against synthetic rows, their utility when a model is **trained "
    "on synthetic and tested on real held-out rows**, the baselines of the paper, and the privacy ledger."
)
st.info(f"**What our analysis of the paper found.**\n- **Lap-PCA.** {FINDINGS['lap_pca']}\n"
        f"- **Algorithm 1.** {FINDINGS['alg1_blob']}\n- **Algorithm 3.** {FINDINGS['alg3_centring']}",
        icon=":material/fact_check:")
budget = budget_picker("pca_gauss", show_calibration=False)
if budget.mode == "paper":
    st.info("**Paper-faithful mode is on**: scaling from the private training data, the paper's sensitivity "
            "formulas, Lap-PCA at the printed scale (the ledger shows its true ε = M·ε_PCA), exact class counts, "
            "and numpy's sampler on the raw noisy matrix. The totals are not a proven guarantee.",
            icon=":material/menu_book:")
else:
    st.success("**Strict mode is on**: public bounds and centre (the public slice's range), every release "
               "calibrated to a proven sensitivity, noisy class counts and means, and every release inside the one "
               "total ε shown in the ledger.", icon=":material/verified_user:")

# --- data
kind = st.radio("Data", DATA_KINDS, horizontal=True, key="pg_data_kind")
if kind == DATA_KINDS[0]:
    keys = list(BUNDLED_SETS)
    key = st.selectbox("Data set (bundled with scikit-learn, read offline)", keys, key="pg_bundled",
                       format_func=lambda k: BUNDLED_SETS[k].title)
    df, name = bundled_frame(key), BUNDLED_SETS[key].title
    default_task, default_target = BUNDLED_SETS[key].task, "target"
    if BUNDLED_SETS[key].stands_in_for != "-":
        st.caption(f"Stands in for the paper's {BUNDLED_SETS[key].stands_in_for} data, which cannot be had offline.")
else:
    dataset = data_picker(key="pca_gauss_data",  # an upload must give a release: 2+ numeric columns, 20+ rows
                          check=lambda frame, file: arrays_from_frame(frame, "unsupervised", None, name=file))
    if dataset is None:
        st.info("Pick a sample set or upload a table with one row per record.")
        st.stop()
    df, name = dataset.df, dataset.name
    default_target = next(iter(dataset.response_columns), None)
    default_task = "regression" if default_target else "unsupervised"

columns = list(df.columns)
left, right = st.columns(2)
task = left.radio("Task", TASKS, index=TASKS.index(default_task), format_func=TASK_TEXT.get,
                  key=f"pg_task_{name}")
target_options = ["(none)"] + columns if task == "unsupervised" else columns
target_default = target_options.index(default_target) if default_target in target_options else 0
target = right.selectbox("Target column (y or labels; for clustering, optional true labels)", target_options,
                         index=target_default, key=f"pg_target_{name}_{task}")
target = None if target == "(none)" else target

n_numeric = sum(pd.api.types.is_numeric_dtype(df[c]) for c in columns if c != target)
sources = list(SOURCE_METHOD) if task == "unsupervised" else [s for s in SOURCE_METHOD if s != "nonprivate"]
c1, c2, c3 = st.columns(3)
P = int(c1.number_input("k = P, released dimension", 1, max(1, min(n_numeric, 64)), min(2, max(1, n_numeric)),
                        key="pg_P"))
source = c2.selectbox("Projection W", sources, format_func=SOURCE_TEXT.get, key=f"pg_source_{task}")
seed = int(c3.number_input("Seed", 0, 2**31 - 1, 0, key="pg_seed"))
c4, c5, c6 = st.columns(3)
alpha = c4.select_slider("α: share of ε for the projection", ALPHA_GRID, value=0.5, key="pg_alpha",
                         disabled=source not in ("laplace", "analyze_gauss"),
                         help="Lap-PCA and AG-PCA spend ε_PCA = α·ε; the Gaussian gets the rest.")
mean_share = c5.select_slider("Share of the Gaussian budget for means", (0.05, 0.1, 0.2, 0.3), value=0.1,
                              key="pg_mean_share", help="The paper: ε_μ = 0.1, ε_Σ = 0.9 of the Gaussian budget.")
K = int(c6.number_input("K (clusters, clustering only)", 2, 30, 10, key="pg_K", disabled=task != "unsupervised"))
delta = budget.delta
if budget.mode == "paper" and source == "analyze_gauss":
    if st.checkbox("δ = 1/N for AG-PCA (the paper's choice; weak)", True, key="pg_delta_paper"):
        delta = None

try:
    result = fitted_release(df, task, target, P, source, budget.epsilon, budget.mode, delta, float(alpha),
                            float(mean_share), K, seed, name)
except (DataError, ValueError) as err:
    st.error(f"No release on this choice: {err}")
    st.stop()

model, split = result["model"], result["split"]
sizes = split.sizes
b = result["budget"]
metric = PRIMARY_METRIC[task]
m1, m2, m3, m4 = st.columns(4)
label, higher = METRICS[metric]
m1.metric(f"Synthetic → real: {label.split(' (')[0]}", f"{result['utility'][metric]:.3f}",
          delta=f"{result['utility'][metric] - result['utility_real'][metric]:+.3f} vs real data",
          delta_color="normal" if higher else "inverse")
m2.metric("Total ε in the ledger (basic composition)", f"{b['epsilon_ledger_basic']:.4g}",
          help="Sum of every release's ε. For Lap-PCA at the printed scale this is larger than the nominal ε.")
m3.metric("Nominal ε / δ", f"{b['epsilon_nominal']:.4g} / {b['delta']:.2g}")
m4.metric("PSD fix needed", "yes" if model.psd_fixed_ else "no",
          help=f"Smallest eigenvalue of the noisy matrix before the fix: {model.min_eig_before_fix_:.3g}")
st.caption(f"Rows: {sizes['train']} private training, {sizes['public']} public"
           + (f", {sizes['test']} real test rows." if sizes["test"] else " (clustering: evaluated on the training rows).")
           + f" Budget split: ε_PCA = {b['epsilon_pca']:.3g}, ε_count = {b['epsilon_count']:.3g}, "
             f"ε_μ = {b['epsilon_mu']:.3g}, ε_Σ = {b['epsilon_sigma']:.3g}.")
if source == "laplace" and budget.mode == "paper":
    st.warning(FINDINGS["lap_pca"], icon=":material/warning:")
if source == "nonprivate":
    st.warning(FINDINGS["alg1_blob"] + " W is used below only to map the real rows for comparison; it is not "
               "part of the release.", icon=":material/warning:")

tabs = st.tabs(["Real vs synthetic", "Utility vs ε", "Privacy ledger", "Download"])
real, synthetic = result["real"], result["synthetic"]
released_cols = [c for c in synthetic.columns if c.startswith("c")]
colour = "label" if task == "classification" else "y" if task == "regression" else None
with tabs[0]:
    if len(released_cols) >= 2:
        axes = st.columns(2)
        x_col = axes[0].selectbox("x axis", released_cols, 0, key="pg_x")
        y_col = axes[1].selectbox("y axis", released_cols, 1, key="pg_y")
    else:
        x_col, y_col = released_cols[0], "y" if task == "regression" else released_cols[0]
    show_chart(st, pca_gauss_scatter_figure(real, synthetic, x=x_col, y=y_col, colour=colour), "scatter",
               page="pca_gauss")
    shown = released_cols[:6] + (["y"] if task == "regression" else [])
    show_chart(st, pca_gauss_marginals_figure(real, synthetic, shown), "marginals", page="pca_gauss")
    show_chart(st, pca_gauss_correlation_figure(result["corr_real"], result["corr_synthetic"]), "correlations",
               page="pca_gauss")
    st.caption("Released space: c_i = (W'x)_i/√M of the box-scaled record"
               + (" (W = identity, no reduction)" if model.components_.shape[0] == len(released_cols) and
                  source == "identity" else "") + ". Real rows are the held-out test rows mapped by the same W.")
    util = pd.DataFrame({"synthetic → real": result["utility"], "real → real": result["utility_real"]})
    st.dataframe(util.rename(index=lambda k: METRICS.get(k, (k,))[0]), width="stretch")
    st.caption("References: " + ", ".join(f"{k.replace('_', ' ')} = {v:.3f}" for k, v in result["references"].items()))

with tabs[1]:
    st.markdown("Every method trained on its release and tested on the same real rows, at the k and α above; "
                "mean and 95 % interval over replicates. The paper reports the best over k and α, which is tuned on "
                "test data and spends privacy no ledger counts.")
    methods = st.multiselect("Methods", default_methods(task), default=list(default_methods(task)),
                             format_func=METHOD_LABELS.get, key=f"pg_methods_{task}")
    e1, e2 = st.columns([3, 1])
    eps_grid = e1.multiselect("ε grid", EPS_GRID, default=[0.1, 1.0, 10.0, 100.0, 1000.0], key="pg_eps_grid")
    reps = int(e2.number_input("Replicates", 1, 20, 3, key="pg_reps"))
    metric_choice = st.selectbox("Metric", [m for m in METRICS if m in result["utility"]], key=f"pg_metric_{task}",
                                 format_func=lambda m: METRICS[m][0])
    sweep_key = (name, task, target, P, source, budget.mode, delta, float(alpha), K, seed, tuple(methods),
                 tuple(sorted(eps_grid)), reps)
    utility_sweep = Sweep("pg_sweep", "sweep")
    if st.button("Run the sweep", key="pg_run_sweep", type="primary", disabled=not (methods and eps_grid)):
        cells = [(m, e, r) for r in range(reps) for m in methods for e in sorted(eps_grid)]
        real_sc = result["utility_real"].get("silhouette")
        rows = []
        try:
            with utility_sweep.running("Sweeping ε ...") as bar:
                for i, (m, e, r) in enumerate(cells, start=1):
                    rows.append(sweep_point(df, task, target, m, P, float(e), budget.mode, delta, float(alpha), K,
                                            seed, r, real_sc, name))
                    bar.progress(i / len(cells), text=f"{i}/{len(cells)}: {METHOD_LABELS[m]}, ε = {e:g}")
        except (DataError, ValueError) as err:
            st.error(f"The sweep stopped: {err}")
        if rows:
            frame = pd.DataFrame(rows)
            frame["label"] = frame["method"].map(METHOD_LABELS)
            st.session_state["pg_sweep"] = (sweep_key, frame)
    stored = st.session_state.get("pg_sweep")
    if stored is not None and stored[0] == sweep_key:
        frame = stored[1]
        if metric_choice in frame.columns:
            summary = summarise(frame, metric_choice, by=("method", "epsilon"))
            refs = {k.replace("_", " "): v for k, v in result["references"].items() if "silhouette" not in k
                    or metric_choice == "silhouette"}
            show_chart(st, pca_gauss_utility_figure(summary, metric_label=METRICS[metric_choice][0], references=refs,
                                                    title=f"{name}: {METRICS[metric_choice][0]}"),
                       "utility_vs_epsilon", page="pca_gauss")
            if budget.mode == "paper" and "pca_gauss_laplace" in methods:
                st.caption("Paper mode: the Lap-PCA line uses the printed scale, so its true ε is M·α·ε + (1 − α)·ε, "
                           "not the ε on the axis.")
            table = summary.pivot_table(index="label", columns="epsilon", values="mean")
            st.dataframe(table.style.format("{:.3f}"), width="stretch")
    elif stored is not None:
        st.caption("The settings changed since the last sweep: run it again.")

with tabs[2]:
    show_ledger(result["ledger"], delta=budget.delta if len(result["ledger"]) else None, expanded=True)
    st.markdown("**Every noise draw** (one row per release; per class for Algorithm 3):")
    st.dataframe(result["noise_log"], hide_index=True, width="stretch")
    st.caption(f"Scaling: {model.scaling_['source']}. Smallest eigenvalue of the noisy matrix before the PSD fix: "
               f"{model.min_eig_before_fix_:.4g} ({'clipped at 0' if budget.mode == 'strict' else 'numpy SVD sampler'}).")

with tabs[3]:
    st.download_button("Synthetic data, released space (CSV)", result["csv_released"].to_csv(index=False),
                       file_name=f"pca_gauss_synthetic_{task}.csv", mime="text/csv", key="pg_dl_released")
    if result["csv_reconstructed"] is not None:
        st.download_button("Synthetic data mapped back to the original columns (CSV)",
                           result["csv_reconstructed"].to_csv(index=False),
                           file_name=f"pca_gauss_synthetic_{task}_features.csv", mime="text/csv", key="pg_dl_features")
        st.caption("Mapped back with x = centre + scale·√M·W·c (post-processing of the release; rank k).")
    else:
        st.caption("Algorithm 1's W is not released, so its synthetic rows cannot be mapped back to the original "
                   "columns.")
    guarantee = "proven (strict mode)." if b["proven"] else "paper-faithful mode: not a proven guarantee."
    st.caption(f"The guarantee covers these rows as a whole (ε = {b['epsilon_ledger_basic']:.4g} in the ledger): "
               f"{guarantee}")
    report = RunReport(
        page="pca_gauss", method=f"PCA-Gauss ({SOURCE_TEXT[source].split(':')[0]}, {TASK_TEXT[task]})",
        data=DataInfo.from_frame(df, name, "scikit-learn bundled data set (sample)" if kind == DATA_KINDS[0]
                                 else dataset.origin),
        preprocessing=f"box scaling: {model.scaling_['source']}; rows: {sizes['train']} private training, "
                      f"{sizes['public']} public, {sizes['test']} real test",
        parameters={"task": task, "target": target, "k = P": P, "projection W": source, "epsilon": budget.epsilon,
                    "delta": delta, "mode": budget.mode, "alpha": float(alpha), "mean_share": float(mean_share),
                    "K (clusters)": K, "random_state": seed},
        mode=budget.mode, ledger=result["ledger"], ledger_delta=budget.delta if len(result["ledger"]) else None,
        headline={**{f"synthetic → real: {METRICS.get(k, (k,))[0]}": v for k, v in result["utility"].items()},
                  **{f"real → real: {METRICS.get(k, (k,))[0]}": v for k, v in result["utility_real"].items()},
                  "total ε in the ledger (basic)": b["epsilon_ledger_basic"], "PSD fix needed": model.psd_fixed_})
    export_bar(report, results_csv=lambda: pd.DataFrame(
        {"synthetic → real": result["utility"], "real → real": result["utility_real"]}).to_csv(index_label="metric"),
        model_json=lambda: to_json(model, indent=1))
