"""PCA-Gauss: differentially private synthetic data from a DP projection plus a DP Gaussian model
(issue #6; spec pca_gauss.md; issue #15: public inputs, fresh noise, shareable release vs owner's workbook).
Thin page: widgets -> engine.methods.synthetic_utility / pca_gauss -> figures."""
from __future__ import annotations

import math
import secrets

import numpy as np
import pandas as pd
import streamlit as st

from engine.data import DataError, load_table
from engine.methods.pca_gauss import (
    ALPHA_GRID,
    FINDINGS,
    N_PUBLIC_NOTE,
    TASKS,
    can_map_back,
    owner_sheets,
    shareable_release,
)
from engine.methods.synthetic_utility import (
    BUNDLED_SETS,
    METHOD_LABELS,
    METRICS,
    PRIMARY_METRIC,
    SOURCE_METHOD,
    arrays_from_frame,
    default_methods,
    documented_public_inputs,
    load_bundled,
    make_split,
    release_report,
    run_method,
    shareable_synthetic_frame,
    summarise,
)
from engine.release import release_to_json
from engine.report import DataInfo, RunReport
from ui.budget import budget_picker
from ui.data_picker import data_picker
from ui.exports import export_bar, show_chart
from ui.figures import (
    pca_gauss_correlation_figure,
    pca_gauss_marginals_figure,
    pca_gauss_scatter_figure,
    pca_gauss_utility_figure,
)
from ui.ledger_view import show_ledger
from ui.progress import Sweep

TASK_TEXT = {
    "unsupervised": "Unsupervised / clustering (Algorithm 1)",
    "regression": "Regression (Algorithm 2)",
    "classification": "Classification (Algorithm 3, one Gaussian per class)",
}
SOURCE_TEXT = {
    "public": "Pub-PCA: PCA of public data (free)",
    "laplace": "Lap-PCA: Laplace-noised covariance (ε_PCA = α·ε)",
    "analyze_gauss": "AG-PCA: Analyze-Gauss (ε_PCA = α·ε, δ)",
    "nonprivate": "Non-private W of the same data (Algorithm 1 as printed)",
}
DATA_KINDS = ("scikit-learn data set", "Sample data or upload")
EPS_GRID = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 1000.0)
BOUND_SOURCES = {
    "documented": "Documented ranges of this data set",
    "entered": "Values I enter (public knowledge)",
    "file": "A separate public file",
    "data": "Read off the private data (not proven)",
}


# --------------------------------------------------------------------------- cached engine calls
@st.cache_data(show_spinner=False)
def bundled_frame(key: str) -> pd.DataFrame:
    return load_bundled(key)


@st.cache_data(show_spinner=False)
def documented(key: str):
    return documented_public_inputs(key)


@st.cache_data(show_spinner=False, max_entries=8)
def public_table(data: bytes, file_name: str) -> pd.DataFrame:
    return load_table(data, name=file_name)


@st.cache_data(show_spinner="Fitting the private release ...", max_entries=32)
def fitted_release(df: pd.DataFrame, task: str, target: str | None, P: int, source: str, eps: float, mode: str,
                   delta: float | None, alpha: float, mean_share: float, K: int, split_seed: int, noise_seed,
                   fit_id: int, name: str, public: tuple | None, bounds, y_bounds, labels,
                   public_declared: bool) -> dict:
    """One release. ``fit_id`` is a per-session number (not a seed): with fresh noise every session, and every
    click of "New release", fits anew instead of reusing another session's cached noise."""
    X, y, features = arrays_from_frame(df, task, target, name=name)
    return release_report(X, y, task, P=P, pca_source=source, epsilon=eps, mode=mode, delta=delta, alpha=alpha,
                          mean_share=mean_share, K=K, random_state=split_seed, noise_seed=noise_seed,
                          feature_names=features, public=public, bounds=bounds, y_bounds=y_bounds, labels=labels,
                          public_declared=public_declared)


@st.cache_data(show_spinner=False, max_entries=2048)
def sweep_point(df: pd.DataFrame, task: str, target: str | None, method: str, P: int, eps: float, mode: str,
                delta: float | None, alpha: float, K: int, split_seed: int, noise_seed, fit_id: int, rep: int,
                real_sc: float | None, name: str, public: tuple | None, options: dict) -> dict:
    """One (method, ε, replicate) cell of the utility sweep; cached so a re-run only computes new cells."""
    X, y, _ = arrays_from_frame(df, task, target, name=name)
    split = make_split(X, y, task, random_state=split_seed, public=public)
    P_eff = split.X_train.shape[1] if method == "liu" else P
    row = run_method(method, split, P=P_eff, epsilon=eps if method not in ("real", "public_only") else math.inf,
                     alpha=alpha, mode=mode, delta=delta, K=K,
                     random_state=(split_seed, rep, list(METHOD_LABELS).index(method)),
                     noise_seed=noise_seed, real_silhouette=real_sc, **options)
    row.update(epsilon=eps, rep=rep)
    return row


def parse_labels(text: str, y) -> tuple | None:
    """The declared label set typed as "a, b, c" (None when empty), in the type of the labels of y."""
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        return None
    kind = np.asarray(y).dtype.kind
    try:
        return tuple(int(t) if kind in "iu" else float(t) if kind == "f" else t for t in items)
    except ValueError:
        raise DataError(f"the label set {text!r} does not match the target's values (numbers expected)") from None


# --------------------------------------------------------------------------- page
st.title("PCA-Gauss")
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
        f"- **Algorithm 1.** {FINDINGS['alg1_blob']}\n- **Algorithm 3.** {FINDINGS['alg3_centring']}",
        icon=":material/fact_check:")
budget = budget_picker("pca_gauss", show_calibration=False)
strict = budget.mode == "strict"
if not strict:
    st.info("**Paper-faithful mode is on**: scaling from the private training data, the paper's sensitivity "
            "formulas, Lap-PCA at the printed scale (the ledger shows its true ε = M·ε_PCA), exact class counts, "
            "and numpy's sampler on the raw noisy matrix. The totals are not a proven guarantee.",
            icon=":material/menu_book:")
else:
    st.success("**Strict mode is on**: bounds and centre you declare public (documented ranges, values you enter "
               "or a separate public file), every release calibrated to a proven sensitivity, a public label set, "
               "noisy class counts and means, and every release inside the one total ε shown in the ledger.",
               icon=":material/verified_user:")

# --- data
kind = st.radio("Data", DATA_KINDS, horizontal=True, key="pg_data_kind")
bundled_key = None
if kind == DATA_KINDS[0]:
    keys = list(BUNDLED_SETS)
    bundled_key = st.selectbox("Data set (bundled with scikit-learn, read offline)", keys, key="pg_bundled",
                               format_func=lambda k: BUNDLED_SETS[k].title)
    df, name = bundled_frame(bundled_key), BUNDLED_SETS[bundled_key].title
    default_task, default_target = BUNDLED_SETS[bundled_key].task, "target"
    origin = "scikit-learn bundled data set (sample)"
    if BUNDLED_SETS[bundled_key].stands_in_for != "-":
        st.caption(f"Stands in for the paper's {BUNDLED_SETS[bundled_key].stands_in_for} data, which cannot be had "
                   "offline.")
else:
    dataset = data_picker(key="pca_gauss_data",  # an upload must give a release: 2+ numeric columns, 20+ rows
                          check=lambda frame, file: arrays_from_frame(frame, "unsupervised", None, name=file))
    if dataset is None:
        st.info("Pick a sample set or upload a table with one row per record.")
        st.stop()
    df, name, origin = dataset.df, dataset.name, dataset.origin
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
features = [c for c in columns if c != target and pd.api.types.is_numeric_dtype(df[c])]

sources = list(SOURCE_METHOD) if task == "unsupervised" else [s for s in SOURCE_METHOD if s != "nonprivate"]
c1, c2, c3 = st.columns(3)
P = int(c1.number_input("k = P, released dimension", 1, max(1, min(len(features), 64)), min(2, max(1, len(features))),
                        key="pg_P"))
source = c2.selectbox("Projection W", sources, format_func=SOURCE_TEXT.get, key=f"pg_source_{task}")
split_seed = int(c3.number_input("Split seed (data split and evaluation only)", 0, 2**31 - 1, 0, key="pg_seed",
                                 help="Seeds which rows are held out and the evaluation models. It is never used "
                                      "for the release's noise, which is fresh unless 'Reproducible noise' is on."))
c4, c5, c6 = st.columns(3)
alpha = c4.select_slider("α: share of ε for the projection", ALPHA_GRID, value=0.5, key="pg_alpha",
                         disabled=source not in ("laplace", "analyze_gauss"),
                         help="Lap-PCA and AG-PCA spend ε_PCA = α·ε; the Gaussian gets the rest.")
mean_share = c5.select_slider("Share of the Gaussian budget for means", (0.05, 0.1, 0.2, 0.3), value=0.1,
                              key="pg_mean_share", help="The paper: ε_μ = 0.1, ε_Σ = 0.9 of the Gaussian budget.")
K = int(c6.number_input("K (clusters, clustering only)", 2, 30, 10, key="pg_K", disabled=task != "unsupervised"))
delta = budget.delta
if not strict and source == "analyze_gauss":
    if st.checkbox("δ = 1/N for AG-PCA (the paper's choice; weak)", True, key="pg_delta_paper"):
        delta = None

# --- public inputs (strict mode): declared, never read off the private rows
bounds = y_bounds = labels = None
public = None
public_declared = True
public_text = {}
y_col = df[target] if target is not None else None
with st.expander("Public inputs: bounds, centre, label set, public data" + (" (strict mode)" if strict else ""),
                 expanded=strict):
    st.markdown(f"{N_PUBLIC_NOTE} **This page treats N as public**: the ledger's neighbouring relation is "
                "replace-one.")
    pub_file = st.file_uploader("Separate public file (optional: same feature columns; used for Pub-PCA and, if "
                                "you choose it, for the bounds)", type=["csv", "tsv", "txt", "xlsx"],
                                key="pg_public_file")
    pub_ok = st.checkbox("This file is public: it is not part of the private data, and anyone may see it",
                         False, key="pg_public_file_ok", disabled=pub_file is None)
    if pub_file is not None and pub_ok:
        try:
            pdf = public_table(pub_file.getvalue(), pub_file.name)
            missing = [c for c in features if c not in pdf.columns]
            if missing:
                raise DataError(f"{pub_file.name}: the public file lacks the feature column(s) {missing[:5]}")
            Xp = pdf[features].to_numpy(dtype=float)
            yp = pdf[target].to_numpy() if target is not None and target in pdf.columns else None
            public = (Xp, yp)
            public_text["public data"] = f"separate public file {pub_file.name!r} (declared public)"
        except (DataError, ValueError) as err:
            st.error(f"Public file not used: {err}")
    elif pub_file is not None:
        st.caption("Tick the declaration to use the file.")
    if public is None and source == "public":
        public_declared = st.checkbox(
            "Pub-PCA without a public file: the rows of the public slice split off this table may be treated as "
            "public (they get no protection and are not used for training)", bundled_key is not None,
            key=f"pg_slice_ok_{name}",
            help="The paper's Pub-PCA uses a small public data set. Without a separate public file the page sets "
                 "a slice of your table aside; untick this when those rows are private: W is then not released "
                 "and the ledger says 'not proven'.")
        public_text["public data"] = ("public slice of this table, declared public" if public_declared
                                      else "public slice of this table, NOT declared public")
    if strict:
        doc = documented(bundled_key) if bundled_key is not None else None
        options = ([] if doc is None or doc.bounds is None else ["documented"]) + ["entered", "file", "data"]
        choice = st.radio("Bounds and centre of the features (the centre is their midpoint)", options,
                          format_func=BOUND_SOURCES.get, key=f"pg_bounds_src_{name}",
                          index=0 if doc is not None else options.index("data"))
        if choice == "documented":
            if len(doc.bounds[0]) == len(features):
                bounds = doc.bounds
                public_text["bounds"] = f"documented ranges ({doc.bounds_source})"
                st.caption(f"Source: {doc.bounds_source}.")
            else:
                st.warning("The documented ranges cover the data set's own feature columns only.")
                st.stop()
        elif choice == "entered":
            same = st.checkbox("Same range for every feature", True, key="pg_bounds_same")
            if same:
                b1, b2 = st.columns(2)
                lo = b1.number_input("Lower bound", value=None, key="pg_bound_lo", placeholder="e.g. 0")
                hi = b2.number_input("Upper bound", value=None, key="pg_bound_hi", placeholder="e.g. 100")
                entered = None if lo is None or hi is None else (np.full(len(features), lo), np.full(len(features), hi))
            else:
                table = st.data_editor(pd.DataFrame({"feature": features, "lower": np.nan, "upper": np.nan}),
                                       key=f"pg_bounds_table_{name}", disabled=["feature"], hide_index=True)
                vals = table[["lower", "upper"]].to_numpy(dtype=float)
                entered = None if not np.isfinite(vals).all() else (vals[:, 0], vals[:, 1])
            declared_ok = st.checkbox("These bounds are public: they come from documentation, a standard or domain "
                                      "knowledge, not from this data", False, key="pg_bounds_ok")
            if entered is None or not declared_ok:
                st.info("Enter a lower and an upper bound for every feature and tick the declaration.")
                st.stop()
            if np.any(entered[1] <= entered[0]):
                st.error("Every upper bound must be above its lower bound.")
                st.stop()
            bounds = entered
            if same:
                public_text["bounds"] = f"declared: every feature in [{entered[0][0]:g}, {entered[1][0]:g}]"
            else:
                public_text["bounds"] = "declared: " + ", ".join(f"{f} in [{a:g}, {b:g}]"
                                                                 for f, a, b in zip(features, *entered))
        elif choice == "file":
            if public is None:
                st.info("Upload the separate public file above and tick its declaration.")
                st.stop()
            bounds = "public"
            public_text["bounds"] = "range of the separate public file (declared public)"
        else:
            bounds = "data"
            public_text["bounds"] = "read off the private data (not public)"
            st.warning("**Not proven**: bounds read off your private rows leak their extremes; the ledger says so "
                       "and the shareable files hold no bounds.", icon=":material/warning:")
        if task == "regression":
            y_opts = ["entered"] + (["file"] if public is not None and public[1] is not None else []) + ["data"]
            y_choice = st.radio(f"Bounds of the target {target!r}", y_opts, format_func=BOUND_SOURCES.get,
                                index=y_opts.index("data"), key=f"pg_ybounds_src_{name}")
            if y_choice == "entered":
                b1, b2 = st.columns(2)
                ylo = b1.number_input("Lower bound of y", value=None, key="pg_ybound_lo")
                yhi = b2.number_input("Upper bound of y", value=None, key="pg_ybound_hi")
                y_ok = st.checkbox("These bounds of y are public", False, key="pg_ybounds_ok")
                if ylo is None or yhi is None or not y_ok or yhi <= ylo:
                    st.info("Enter lower < upper bounds of y and tick the declaration.")
                    st.stop()
                y_bounds = (float(ylo), float(yhi))
                public_text["bounds of y"] = f"declared: [{ylo:g}, {yhi:g}]"
            elif y_choice == "file":
                y_bounds = "public"
                public_text["bounds of y"] = "range of the separate public file (declared public)"
            else:
                y_bounds = "data"
                public_text["bounds of y"] = "read off the private data (not public)"
                st.caption("Not proven: the bounds of y are read off the private rows (scikit-learn documents no "
                           "range for this target; enter one you know to make the release provable).")
        if task == "classification":
            default_labels = "" if doc is None or doc.labels is None else ", ".join(map(str, doc.labels))
            text = st.text_input("Label set (public), comma-separated: every class value", default_labels,
                                 key=f"pg_labels_{name}_{target}",
                                 help="The set of classes is a public parameter: a class absent from your data is "
                                      "still released (with a noisy count near 0). Leave empty to read it from the "
                                      "private labels (not proven, and nothing is shareable).")
            try:
                labels = parse_labels(text, y_col)
            except DataError as err:
                st.error(f"No release on this choice: {err}")
                st.stop()
            if labels is None:
                st.warning("Not proven: the label set will be read from the private labels.", icon=":material/warning:")
                public_text["label set"] = "read from the private labels (not public)"
            else:
                public_text["label set"] = ", ".join(map(str, labels))
    else:
        st.caption("Paper-faithful mode centres and scales with the private training rows (the paper's "
                   "pre-processing): nothing here is declared public.")

# --- fresh noise: the release's noise seed is the teaching switch's, never the split seed
noise_seed = budget.noise_seed
if noise_seed is None and "pg_fit_id" not in st.session_state:
    st.session_state["pg_fit_id"] = secrets.randbits(62)
if st.button("New release (fresh noise)", key="pg_refit", disabled=noise_seed is not None,
             help="Draws the release again with new noise. Each release you publish spends its own budget."):
    st.session_state["pg_fit_id"] = secrets.randbits(62)
fit_id = 0 if noise_seed is not None else st.session_state["pg_fit_id"]
public_key = None if public is None else (public[0], public[1])

try:
    result = fitted_release(df, task, target, P, source, budget.epsilon, budget.mode, delta, float(alpha),
                            float(mean_share), K, split_seed, noise_seed, fit_id, name, public_key, bounds, y_bounds,
                            labels, public_declared)
except (DataError, ValueError) as err:
    st.error(f"No release on this choice: {err}")
    st.stop()

model, split = result["model"], result["split"]
sizes = split.sizes
b = result["budget"]
status = b["status"]
metric = PRIMARY_METRIC[task]
m1, m2, m3, m4 = st.columns(4)
label, higher = METRICS[metric]
m1.metric(f"Synthetic → real: {label.split(' (')[0]}", f"{result['utility'][metric]:.3f}",
          delta=f"{result['utility'][metric] - result['utility_real'][metric]:+.3f} vs real data",
          delta_color="normal" if higher else "inverse",
          help=f"Trained on synthetic rows, evaluated on the {result['evaluated_on']} (owner's view: computed on "
               "private rows without noise).")
m2.metric("Total ε in the ledger (basic composition)",
          f"{b['epsilon_ledger_basic']:.4g}" if math.isfinite(b["epsilon_ledger_basic"]) else "∞ (no privacy)",
          help="Sum of every release's ε. For Lap-PCA at the printed scale this is larger than the nominal ε.")
m3.metric("Nominal ε / δ", f"{b['epsilon_nominal']:.4g} / {b['delta']:.2g}")
m4.metric("PSD fix needed", "yes" if model.psd_fixed_ else "no",
          help=f"Smallest eigenvalue of the noisy matrix before the fix: {model.min_eig_before_fix_:.3g}")
reasons = "; ".join(r.removeprefix("not proven: ") for r in b["reasons_not_proven"])
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
    rows_text = (f"Rows: {sizes['train']} private training rows (N, treated as public), {sizes['public']} public, "
                 f"{sizes['test']} held-out test rows.")
st.caption(rows_text + f" Budget split: ε_PCA = {b['epsilon_pca']:.3g}, ε_count = {b['epsilon_count']:.3g}, "
                       f"ε_μ = {b['epsilon_mu']:.3g}, ε_Σ = {b['epsilon_sigma']:.3g}.")
if source == "laplace" and not strict:
    st.warning(FINDINGS["lap_pca"], icon=":material/warning:")
if source == "nonprivate":
    st.warning(FINDINGS["alg1_blob"] + " W is used below only to map your real rows for comparison on this screen; "
               "it is never exported.", icon=":material/warning:")

tabs = st.tabs(["Real vs synthetic", "Utility vs ε", "Privacy ledger", "Export"])
real, synthetic = result["real"], result["synthetic"]
released_cols = [c for c in synthetic.columns if c.startswith("c")]
colour = "label" if task == "classification" else "y" if task == "regression" else None
real_rows = "private training rows" if task == "unsupervised" else "held-out test rows"
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
               + (" (W = identity, no reduction)" if source == "identity" else "")
               + f". Real rows (your {real_rows}, shown on your screen only) are mapped by the same W.")
    util = pd.DataFrame({"synthetic → real": result["utility"], "real → real": result["utility_real"]})
    st.dataframe(util.rename(index=lambda k: METRICS.get(k, (k,))[0]), width="stretch")
    st.caption(f"Evaluated on the {result['evaluated_on']}. References: "
               + ", ".join(f"{k.replace('_', ' ')} = {v:.3f}" for k, v in result["references"].items()))

with tabs[1]:
    st.markdown("Every method trained on its release and tested on the same real rows, at the k and α above; "
                "mean and 95 % interval over replicates; each cell's status comes from its own fits' ledgers "
                "(ε = ∞ references: no privacy). The paper reports the best over k and α, which is tuned on test "
                "data and spends privacy no ledger counts.")
    methods = st.multiselect("Methods", default_methods(task), default=list(default_methods(task)),
                             format_func=METHOD_LABELS.get, key=f"pg_methods_{task}")
    e1, e2 = st.columns([3, 1])
    eps_grid = e1.multiselect("ε grid", EPS_GRID, default=[0.1, 1.0, 10.0, 100.0, 1000.0], key="pg_eps_grid")
    reps = int(e2.number_input("Replicates", 1, 20, 3, key="pg_reps"))
    metric_choice = st.selectbox("Metric", [m for m in METRICS if m in result["utility"]], key=f"pg_metric_{task}",
                                 format_func=lambda m: METRICS[m][0])
    sweep_options = {"bounds": bounds, "y_bounds": y_bounds, "public_declared": public_declared}
    if task == "classification":
        sweep_options["labels"] = labels
    sweep_key = (name, task, target, P, source, budget.mode, delta, float(alpha), K, split_seed, noise_seed, fit_id,
                 tuple(methods), tuple(sorted(eps_grid)), reps, repr(bounds), repr(y_bounds), labels,
                 public_declared, public is None)
    utility_sweep = Sweep("pg_sweep", "sweep")
    if st.button("Run the sweep", key="pg_run_sweep", type="primary", disabled=not (methods and eps_grid)):
        cells = [(m, e, r) for r in range(reps) for m in methods for e in sorted(eps_grid)]
        real_sc = result["utility_real"].get("silhouette")
        rows = []
        try:
            with utility_sweep.running("Sweeping ε ...") as bar:
                for i, (m, e, r) in enumerate(cells, start=1):
                    rows.append(sweep_point(df, task, target, m, P, float(e), budget.mode, delta, float(alpha), K,
                                            split_seed, noise_seed, fit_id, r, real_sc, name, public_key,
                                            sweep_options))
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
            if not strict and "pca_gauss_laplace" in methods:
                st.caption("Paper mode: the Lap-PCA line uses the printed scale, so its true ε is M·α·ε + (1 − α)·ε, "
                           "not the ε on the axis.")
            cells = summary.assign(cell=[f"{m:.3f} ({s})" for m, s in zip(summary["mean"], summary["status"])])
            table = cells.pivot_table(index="label", columns="epsilon", values="cell", aggfunc="first")
            st.dataframe(table, width="stretch")
            st.caption("Cells: mean over replicates (status of the fits from their own ledgers). Results on your "
                       "private rows: they go to the owner's workbook, not to the shareable files.")
    elif stored is not None:
        st.caption("The settings changed since the last sweep: run it again.")

with tabs[2]:
    show_ledger(result["ledger"], delta=budget.delta if len(result["ledger"]) else None, expanded=True)
    st.caption(N_PUBLIC_NOTE)
    st.markdown("**Every noise draw** (one row per release; per class for Algorithm 3; owner's view):")
    st.dataframe(result["noise_log"], hide_index=True, width="stretch")
    st.caption(f"Scaling: {model.scaling_['source']}. Smallest eigenvalue of the noisy matrix before the PSD fix: "
               f"{model.min_eig_before_fix_:.4g} ({'clipped at 0' if strict else 'numpy SVD sampler'}).")

with tabs[3]:
    target_name = target or "target"
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
    mapped = can_map_back(model)
    if no_release is None:
        st.markdown("The shareable synthetic data are drawn from the DP model only"
                    + (", mapped back to your columns with the released W and the public box."
                       if mapped else ", in the released space c1..ck (" + (
                           "Algorithm 1's W is not released" if source == "nonprivate" else
                           "W or the box is not public") + ", so they cannot be mapped back to your columns)."))
        if mapped:
            st.download_button("Synthetic data, released space (CSV, shareable)",
                               lambda: result["csv_released"].rename(columns={"y": target_name, "label": target_name})
                               .to_csv(index=False),
                               file_name=f"pca_gauss_synthetic_{task}_released_space.csv", mime="text/csv",
                               key="pg_dl_released", on_click="ignore")
    guarantee = "proven" if status == "proven" else f"{status} ({reasons or 'see the ledger'})"
    st.caption(f"The guarantee covers the synthetic rows and the model as a whole "
               f"(ε = {b['epsilon_ledger_basic']:.4g} in the ledger): {guarantee}.")
    public_parameters = {"epsilon": budget.epsilon, "delta": delta if source == "analyze_gauss" else None,
                         "mode": budget.mode, "task": task, "k = P": P, "projection W": SOURCE_TEXT[source],
                         "alpha": float(alpha) if source in ("laplace", "analyze_gauss") else None,
                         "mean share": float(mean_share), "K (clusters)": K if task == "unsupervised" else None,
                         "number of training rows N": "public (replace-one neighbours)", **public_text}
    report = RunReport(
        page="pca_gauss", method=f"PCA-Gauss ({SOURCE_TEXT[source].split(':')[0]}, {TASK_TEXT[task]})",
        data=DataInfo.from_frame(df, name, origin),
        preprocessing=f"box scaling: {model.scaling_['source']}; centre = midpoint of the bounds; every entry "
                      "clipped to the box",
        parameters={"task": task, "target": target, "k = P": P, "projection W": source, "epsilon": budget.epsilon,
                    "delta": delta, "mode": budget.mode, "alpha": float(alpha), "mean_share": float(mean_share),
                    "K (clusters)": K, "split seed": split_seed, "reproducible noise": noise_seed is not None,
                    "bounds": public_text.get("bounds", "paper scaling"), "label set": public_text.get("label set")},
        public_parameters={k: v for k, v in public_parameters.items() if v is not None},
        mode=budget.mode, ledger=result["ledger"], ledger_delta=budget.delta if len(result["ledger"]) else None,
        headline={**{f"synthetic → real: {METRICS.get(k, (k,))[0]}": v for k, v in result["utility"].items()},
                  **{f"real → real: {METRICS.get(k, (k,))[0]}": v for k, v in result["utility_real"].items()},
                  "evaluated on": result["evaluated_on"],
                  "total ε in the ledger (basic)": b["epsilon_ledger_basic"], "PSD fix needed": model.psd_fixed_})

    def private_sheets() -> dict:
        sheets = owner_sheets(model, split.feature_names)
        sheets["utility (private rows)"] = util.rename(index=lambda k: METRICS.get(k, (k,))[0])
        sheets[f"real {real_rows} (released space)"] = real
        sheets["split sizes (exact)"] = {**sizes, "evaluated on": result["evaluated_on"]}
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
