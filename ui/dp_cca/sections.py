"""DP-CCA: private canonical correlation between two views (issue #7; spec dp_cca.md).
Thin page: widgets -> engine.methods.dp_cca -> figures.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import pandas as pd
import streamlit as st

from engine.data import DataError, load_table
from engine.data.catalog import SAMPLE_SETS
from engine.data.samples import make_two_views
from engine.methods.dp_cca import (
    NOT_DP_PROJECTIONS,
    PAGE_DEFAULTS,
    channel_split_views,
    columns_by_prefix,
    default_bound,
    no_release_reason,
    owner_sheets,
    public_parameters,
    to_json,
    views_from_frame,
)
from engine.privacy.wording import paper_claim, paper_label
from engine.reporting.report import DataInfo, RunReport
from ui.budget import budget_picker
from ui.data_picker import data_picker
from ui.dp_cca.figures import dp_cca_correlation_bars, dp_cca_loadings_figure, dp_cca_scores_figure, dp_cca_sweep_figure
from ui.dp_cca.tasks import dp_cca_fit, dp_cca_sweeps, dp_cca_two_files
from ui.exports import export_bar, owner_secret, show_chart
from ui.figures.report import private_values
from ui.jobs_view import fit_wait
from ui.ledger_view import show_ledger
from ui.progress import Sweep, session_scope
from ui.run_history import history_section, record_release
from ui.runtime.jobs import JobError, run_upload
from ui.setting_errors import setting_error
from ui.tables import human_headers
from ui.tabs import lazy_tabs

SOURCES = {
    "synthetic": "Synthetic: planted correlations (true values known)",
    "instruments": "Two instruments of the same samples (NIR sample, two channel ranges)",
    "split": "Block split of one table (sample or upload)",
    "files": "Two uploaded files (same rows, same order)",
}
EPS_GRID = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
DELTA_GRID = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2)


# --------------------------------------------------------------------------- cached data and fits
@st.cache_data(show_spinner=False, max_entries=8)
def synthetic_views(n_samples: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame, tuple]:
    tv = make_two_views(n_samples=n_samples, random_state=seed)
    X = pd.DataFrame(tv.X, columns=[f"x{i + 1:02d}" for i in range(tv.X.shape[1])])
    Y = pd.DataFrame(tv.Y, columns=[f"y{i + 1:02d}" for i in range(tv.Y.shape[1])])
    return X, Y, tuple(float(v) for v in tv.true_correlations)


@st.cache_data(show_spinner=False)
def nir_sample() -> pd.DataFrame:
    return load_table(SAMPLE_SETS["nir"].path)


@st.cache_data(show_spinner=False, max_entries=8)
def two_files(x_bytes: bytes, x_name: str, y_bytes: bytes, y_name: str,
              scope: str = "") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two uploaded views, read in a worker with the job budgets (``ui.runtime.jobs``); cached per session
    (``scope``: ``ui.progress.session_scope``)."""
    return run_upload(True, dp_cca_two_files, x_bytes, x_name, y_bytes, y_name, label=f"Reading {x_name} and {y_name}")


@st.cache_data(show_spinner="Fitting private and non-private CCA ...", max_entries=16)
def fit_views(X: pd.DataFrame, Y: pd.DataFrame, test_fraction: float, split_seed: int, params: tuple,
              noise_seed: int | None, noise_key: str, upload: bool = False) -> dict:
    """The private fit and its non-private reference (``ui.dp_cca.tasks.dp_cca_fit``; an upload's in a worker
    with the job budgets). ``split_seed`` splits the rows (not a release); the noise is fresh (``noise_seed``
    None) or the teaching switch's known seed. ``noise_key`` (the session's token) keeps two sessions from sharing
    one cached noise draw."""
    return run_upload(upload, dp_cca_fit, X, Y, test_fraction, split_seed, params, noise_seed,
                      label="The DP-CCA fit")


def run_sweeps(X: pd.DataFrame, Y: pd.DataFrame, test_fraction: float, split_seed: int, params: dict,
               epsilon: float, delta: float, n_replicates: int, noise_seed: int | None, bar,
               upload: bool = False) -> pd.DataFrame:
    """The poster's three sweeps (eps, N, delta), progress shown in thirds (``ui.dp_cca.tasks.dp_cca_sweeps``;
    an upload's in a worker). ``split_seed``: rows and subsets; ``noise_seed``: None (fresh noise) or the
    teaching switch's known seed."""
    out = run_upload(upload, dp_cca_sweeps, X, Y, test_fraction, split_seed, params, epsilon, delta, n_replicates,
                     noise_seed, EPS_GRID, DELTA_GRID, label="The DP-CCA sweeps",
                     progress=lambda f, msg: bar.progress(min(1.0, f), text=msg))
    bar.empty()
    return out


# --------------------------------------------------------------------------- page sections
@dataclass
class Views:
    """The two views the data section built, with their display names."""

    X: pd.DataFrame
    Y: pd.DataFrame
    name: str
    truth: tuple | None = None
    x_title: str = "X variable"
    y_title: str = "Y variable"
    origin: str | None = None  # the data picker's origin (block split only)


def intro() -> None:
    st.markdown(
        "**Canonical correlation analysis** finds directions U in one block of variables and V in another so "
        "that the projected blocks are as correlated as possible: how strongly do two instruments, two sites, or "
        "spectra and properties measured on the **same samples** agree? The second-moment matrix behind it "
        "leaks the samples. **DP-CCA** (Imtiaz & Sarwate, after Analyze-Gauss) adds symmetric Gaussian noise "
        "once to the joint second-moment matrix C = ZᵀZ / N of rows scaled into the unit ball, and computes CCA "
        "from the noisy blocks; everything after the noise is post-processing, so U, V and the correlations are "
        "(ε, δ)-DP."
    )


def mode_notice(budget) -> None:
    if budget.mode == "strict":
        st.info("**Strict mode**: rows are clipped to the public bounds below and the release is provably "
                f"(ε = {budget.epsilon:g}, δ = {budget.delta:.1e})-DP (replace-one neighbours, public N).",
                icon=":material/verified_user:")
    else:
        st.warning("**Paper-faithful mode**: each view is centred at its sample mean and scaled by its largest "
                   "row norm, as the DP-CCA paper assumes. Those numbers come from the private data, so the (ε, δ) "
                   "shown is claimed, not proven.", icon=":material/science:")


def synthetic_source() -> Views:
    c1, c2 = st.columns(2)
    n_rows = int(c1.number_input("Rows N (training + held-out)", 200, 60000, PAGE_DEFAULTS["n_rows"], step=500,
                                 key="dp_cca_syn_n", help="DP needs many rows: the noise on C shrinks like 1/N."))
    syn_seed = int(c2.number_input("Data seed", 0, 10_000, PAGE_DEFAULTS["data_seed"], key="dp_cca_syn_seed",
                                   help="Seeds the simulated data only (not the noise)."))
    X_df, Y_df, truth = synthetic_views(n_rows, syn_seed)
    st.caption(f"{X_df.shape[1]} X and {Y_df.shape[1]} Y variables, mixed by random invertible matrices; planted "
               f"canonical correlations {', '.join(f'{v:g}' for v in truth if v > 0)}, the rest 0.")
    return Views(X_df, Y_df, f"synthetic two views (make_two_views, N = {n_rows}, draw #{syn_seed})", truth)


def instruments_source() -> Views:
    try:
        nir = nir_sample()
    except (DataError, OSError) as err:
        st.error(f"The NIR sample could not be read ({err}). Regenerate the samples with "
                 "`python -m engine.data.samples`.")
        st.stop()
    responses = [c for c in SAMPLE_SETS["nir"].response_columns if c in nir.columns]
    channels = [c for c in nir.select_dtypes(include="number").columns if c not in responses]
    c1, c2 = st.columns(2)
    y_kind = c1.radio("Second view", ("channels", "constituents"), key="dp_cca_nir_y",
                      format_func={"channels": "second half of the wavelength range",
                                   "constituents": "the four constituents"}.get)
    n_bands = int(c2.number_input("Bands per spectral view", 2, 40, 6, key="dp_cca_nir_bands",
                                  help="Consecutive channels are averaged into bands (public, data-independent): "
                                       "CCA on 350 channels and 120 samples would find correlation 1 everywhere."))
    st.caption("PrivaLab ships no second instrument, so the two halves of the NIR range of the same 120 "
               "samples stand in for two instruments (or pick the constituents as the second view). "
               "120 rows is far too few for useful DP: expect noise-dominated private results.")
    try:
        if y_kind == "channels":
            X_df, Y_df = channel_split_views(nir, channels, n_bands)
        else:
            X_df, _ = channel_split_views(nir, channels, n_bands)
            X_df.columns = [f"{c} nm" for c in X_df.columns]
            Y_df = nir[responses].reset_index(drop=True)
    except (ValueError, KeyError) as err:
        st.error(f"The NIR views cannot be built: {err}")
        st.stop()
    return Views(X_df, Y_df, f"NIR sample, {n_bands} bands", None, "band (nm)",
                 "band (nm)" if y_kind == "channels" else "constituent")


def split_source() -> Views:
    dataset = data_picker(kind="two_views", key="dp_cca_data")
    if dataset is None:
        st.info("Pick the sample two-view table or upload a table with the columns of both views.")
        st.stop()
    numeric = dataset.numeric_columns
    how = st.radio("Split the columns", ("prefix", "choose"), horizontal=True, key="dp_cca_split_how",
                   format_func={"prefix": "by column prefix", "choose": "choose the columns"}.get)
    if how == "prefix":
        c1, c2 = st.columns(2)
        x_prefix = c1.text_input("X columns start with", "x", key="dp_cca_x_prefix")
        y_prefix = c2.text_input("Y columns start with", "y", key="dp_cca_y_prefix")
        x_cols, y_cols = columns_by_prefix(numeric, x_prefix), columns_by_prefix(numeric, y_prefix)
    else:
        half = max(1, len(numeric) // 2)
        x_cols = st.multiselect("X view", numeric, default=numeric[:half], key=f"dp_cca_x_cols_{dataset.name}")
        y_cols = st.multiselect("Y view", [c for c in numeric if c not in x_cols],
                                default=[c for c in numeric[half:] if c not in x_cols],
                                key=f"dp_cca_y_cols_{dataset.name}")
    try:
        X_df, Y_df = views_from_frame(dataset.df, x_cols, y_cols, dataset.name)
    except DataError as err:
        st.error(f"These two views cannot be used: {err}")
        st.stop()
    st.caption(f"X: {X_df.shape[1]} columns · Y: {Y_df.shape[1]} columns · {len(X_df)} rows.")
    return Views(X_df, Y_df, dataset.name, origin=dataset.origin)


def files_source() -> Views:
    c1, c2 = st.columns(2)
    up_x = c1.file_uploader("File with the X view", type=None, key="dp_cca_file_x")
    up_y = c2.file_uploader("File with the Y view", type=None, key="dp_cca_file_y")
    if up_x is not None and up_y is not None:
        try:
            with fit_wait("dp_cca_files", f"Reading {up_x.name} and {up_y.name}"):
                pair = two_files(up_x.getvalue(), up_x.name, up_y.getvalue(), up_y.name, session_scope())
        except (DataError, JobError) as err:
            st.error(f"Upload rejected: {err}")
            if st.session_state.get("dp_cca_files_pair") is not None:
                st.info(f"Still using the previous pair: {st.session_state['dp_cca_files_pair'][0]}.")
        else:
            st.session_state["dp_cca_files_pair"] = (f"{up_x.name} + {up_y.name}", *pair)
    kept = st.session_state.get("dp_cca_files_pair")
    if kept is None:
        st.info("Upload two files with one row per sample, the samples in the same order in both; every numeric "
                "column is used.")
        st.stop()
    view_name, X_df, Y_df = kept
    if up_x is None or up_y is None:
        st.caption(f"Using the last valid pair: {view_name}.")
    return Views(X_df, Y_df, view_name, origin="upload")


VIEW_SOURCES = {"synthetic": synthetic_source, "instruments": instruments_source, "split": split_source,
                "files": files_source}


def model_settings(views: Views, budget, calibration: str) -> tuple[dict, float, int]:
    """The fit's parameters, the held-out share and the split seed."""
    d_x, d_y = views.X.shape[1], views.Y.shape[1]
    with st.expander("Model settings", expanded=False):
        c1, c2, c3, c4 = st.columns(4)
        k_max = min(d_x, d_y)
        n_components = int(c1.number_input("Canonical pairs K", 1, k_max,
                                           min(PAGE_DEFAULTS["n_components"], k_max), key="dp_cca_k"))
        test_fraction = float(c2.slider("Held-out share", 0.1, 0.5, PAGE_DEFAULTS["test_fraction"], 0.05,
                                        key="dp_cca_test",
                                        help="Rows kept out of the fit to measure the captured correlation."))
        seed = int(c3.number_input("Split seed", 0, 2**31 - 1, PAGE_DEFAULTS["split_seed"], key="dp_cca_seed",
                                   help="Which rows are held out (and the row subsets of the N sweep). The noise "
                                        "never comes from this seed: it is fresh unless 'Reproducible noise' is on."))
        reg_mode = c4.radio("Regularisation λ", ("auto", "fixed"), key="dp_cca_reg_mode",
                            help="auto: λ = 2√D·τ, the typical size of the noise; added to the noisy diagonal "
                                 "blocks, which also replaces eigenvalues the noise pushed below λ.")
        regularization = "auto"
        if reg_mode == "fixed":
            regularization = float(st.number_input("λ (units of C, rows of norm ≤ 1)", 0.0, 1.0, 0.01,
                                                   format="%.4g", key="dp_cca_reg"))
    params = {"n_components": n_components, "epsilon": budget.epsilon, "delta": budget.delta, "mode": budget.mode,
              "calibration": calibration, "regularization": regularization}
    return params, test_fraction, seed


def public_bounds(views: Views, params: dict) -> None:
    """Strict mode: the bounds and centre the user declares public (added to ``params``)."""
    d_x, d_y = views.X.shape[1], views.Y.shape[1]
    with st.expander("Public bounds (strict mode)", expanded=True):
        st.caption("These are **your declarations of public values**: set them from what is known **before** "
                   "looking at the data (instrument ranges, units), never from these rows. The defaults "
                   "(3·√columns) depend only on the number of columns. Rows beyond a bound are scaled back onto "
                   "it; the number clipped is shown to you, the data owner, below. The bounds go into the "
                   "shareable release.")
        c1, c2, c3 = st.columns(3)
        x_bound = float(c1.number_input("Largest ‖x‖ (X row norm)", 1e-6, 1e9, default_bound(d_x),
                                        key=f"dp_cca_xb_{views.name}_{d_x}"))
        y_bound = float(c2.number_input("Largest ‖y‖ (Y row norm)", 1e-6, 1e9, default_bound(d_y),
                                        key=f"dp_cca_yb_{views.name}_{d_y}"))
        centring = c3.radio("Centre", ("private", "zero"), key="dp_cca_centre",
                            format_func={"private": "private, from the same release",
                                         "zero": "public: 0 (known before seeing the data)"}.get,
                            help="Private centring appends a constant column to every row, so the same noisy "
                                 "release also carries the column means (no budget split; bounds then apply to "
                                 "the raw rows). A public centre of 0 is right only if 0 is the centre by design "
                                 "(e.g. a zero-mean signal), not because the rows were centred on their own mean.")
    params.update(x_bound=x_bound, y_bound=y_bound)
    if centring == "zero":
        params.update(x_center=0.0, y_center=0.0)


#: Where each setting an engine message can be about is on this page (ui.setting_errors), by its real label.
SETTING_PLACES = (
    (("n_components",), "in 'Canonical pairs K' under 'Model settings'"),
    (("regulari", "λ"), "in 'Regularisation λ' under 'Model settings'"),
    (("test_fraction", "held-out", "test rows"), "in 'Held-out share' under 'Model settings'"),
    (("x_bound", "y_bound", "bound", "norm"), "in 'Public bounds (strict mode)'"),
    (("epsilon", "delta", "ε", "δ"), "in the privacy budget in the sidebar"),
)
SETTINGS_FALLBACK = "The settings are under 'Model settings' and 'Public bounds (strict mode)' above."


def fit_section(views: Views, test_fraction: float, seed: int, params: dict, budget) -> dict:
    try:
        with fit_wait("dp_cca_fit"):
            return fit_views(views.X, views.Y, test_fraction, seed, tuple(sorted(params.items())), budget.noise_seed,
                             budget.session_noise_key, views.origin == "upload")
    except (DataError, ValueError) as err:
        setting_error("DP-CCA cannot run on this choice", err, SETTING_PLACES, SETTINGS_FALLBACK)
        st.stop()
    except JobError as err:
        st.error(f"{views.name}: {err}")
        st.stop()


def results_section(views: Views, result: dict, budget) -> None:
    private, sim = result["private"], result["similarity"]
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Captured correlation (held-out)", f"{result['captured']:.3f}",
              help="Σ_k corr(X_test u_k, Y_test v_k) of the private U, V divided by the same for non-private CCA.")
    c2.metric("Subspace similarity", f"{sim['angle_cos']:.3f}",
              help=f"Mean cosine of the principal angles to the non-private U (X: {sim['angle_cos_x']:.3f}) and V "
                   f"(Y: {sim['angle_cos_y']:.3f}).")
    c3.metric("Noise τ on C", f"{private.tau_:.3g}",
              help=f"{private.calibration_} Gaussian calibration; worst-case change {private.sensitivity_:.4g}/N of "
                   f"the released numbers of C = ZᵀZ/N; λ = {private.regularization_:.3g}.")
    if budget.mode == "strict":
        c4.metric("Rows clipped", f"{private.n_clipped_} of {result['n_train']}",
                  help=" · ".join(private.clip_report_["notes"]))
    else:
        c4.metric("Training / held-out rows", f"{result['n_train']} / {result['n_test']}")
    if budget.mode == "strict" and private.n_clipped_ > 0.1 * result["n_train"]:
        st.warning(f"{private.n_clipped_} of {result['n_train']} training rows were clipped: the bounds are tight "
                   "for these data and distort the correlations. (This count is for you, the data owner; it is not "
                   "released privately.)")
    st.caption(f"Data: {views.name} · {len(views.X)} rows, {views.X.shape[1]} X and {views.Y.shape[1]} Y "
               f"variables · {result['n_train']} rows fit the model, {result['n_test']} are held out. "
               f"Preprocessing: {private.preprocessing_}.")


def data_set_of(views: Views, source: str) -> SimpleNamespace | None:
    """The data set whose rows this release is made on, as the other pages name it (``ui.run_history``); None
    for simulated views (a simulation, not a release on the user's data)."""
    if source == "instruments":  # the rows of the NIR sample set, as the data picker names it
        return SimpleNamespace(origin="sample", name=SAMPLE_SETS["nir"].title)
    if views.origin is None:
        return None
    return SimpleNamespace(origin=views.origin, name=views.name)


def odometer_section(views: Views, source: str, result: dict, params: dict, budget) -> None:
    """This release in the session's history, then the odometer of its data set (``ui.run_history``)."""
    ds = data_set_of(views, source)
    if ds is None:
        return
    private = result["private"]
    record_release("DP-CCA", ds, method=f"DP-CCA (ε = {budget.epsilon:g})", ledger=private.privacy_ledger_,
                   released=(private.released_moments_,),
                   settings={"views": views.name, "pairs K": params["n_components"], "mode": budget.mode},
                   epsilon=budget.epsilon, delta=budget.delta)
    history_section("dp_cca", ds)


def private_label(private) -> str:
    """The private fit's legend: strict's ε, or paper mode's claim with the audit's figure."""
    return "private (DP)" if private.mode == "strict" else paper_label("DP-CCA", private.epsilon, "dp_cca")


def correlations_tab(views: Views, result: dict, n_components: int) -> None:
    private, nonprivate = result["private"], result["nonprivate"]
    show_chart(st, dp_cca_correlation_bars(private.canonical_correlations_, nonprivate.canonical_correlations_,
                                           views.truth, private_label=private_label(private)),
               "canonical_correlations", page="dp_cca")
    table = pd.DataFrame({
        "pair": range(1, n_components + 1),
        "private (training)": private.canonical_correlations_,
        "non-private (training)": nonprivate.canonical_correlations_,
        "private U,V on held-out rows": result["held_out_private"],
        "non-private U,V on held-out rows": result["held_out_nonprivate"],
    })
    if views.truth is not None:
        table["true (planted)"] = list(views.truth)[:n_components]
    st.dataframe(human_headers(table), hide_index=True, width="stretch")
    st.caption("The private correlations are singular values of the whitened noisy cross block (released, DP); "
               "with much noise they drift towards noise-driven values, which is why the held-out columns "
               "matter.")


def sweeps_tab(views: Views, result: dict, budget, params: dict, test_fraction: float, seed: int) -> None:
    X_df, Y_df = views.X, views.Y
    c1, c2 = st.columns([1, 3])
    n_rep = int(c1.number_input("Replicates per point", 2, 200, 10, key="dp_cca_reps"))
    c2.caption(f"Grids as in the DP-CCA paper: ε ∈ {{{', '.join(f'{e:g}' for e in EPS_GRID)}}} (N, δ fixed), "
               f"N up to the {result['n_train']} training rows (ε, δ fixed), δ ∈ {{1e-6 … 1e-2}} (ε, N fixed); "
               "the fixed values are the budget and data above.")
    config = (views.name, len(X_df), X_df.shape[1], Y_df.shape[1], test_fraction, seed,
              tuple(sorted(params.items())), n_rep, budget.noise_seed)
    three_sweeps = Sweep("dp_cca_sweeps", "sweeps")
    if st.button("Run the three sweeps", key="dp_cca_run_sweeps", type="primary"):
        try:
            sweep_params = {k: v for k, v in params.items() if k not in ("epsilon", "delta")}
            with three_sweeps.running("Starting sweeps ...") as bar:
                summary = run_sweeps(X_df, Y_df, test_fraction, seed, sweep_params, budget.epsilon, budget.delta,
                                     n_rep, budget.noise_seed, bar, views.origin == "upload")
        except (DataError, ValueError, JobError) as err:
            st.error(f"The sweeps cannot run: {err}")
        else:
            st.session_state["dp_cca_sweeps"] = {"config": config, "summary": summary}
    stored = st.session_state.get("dp_cca_sweeps")
    if stored is not None and stored["config"] == config:
        summary = stored["summary"]
        for parameter in ("epsilon", "n_samples", "delta"):
            title = (f"Utility vs {paper_claim(None, 'dp_cca')}" if parameter == "epsilon" and
                     budget.mode == "paper" else None)
            show_chart(st, dp_cca_sweep_figure(summary, parameter, title=title), f"sweep_{parameter}",
                       page="dp_cca")
        with st.expander("Sweep table"):
            st.caption("status: the guarantee of each point's fits, from their own ledger (ε = ∞: no privacy). "
                       "The table is evaluated on your private rows: it is for you, not for sharing.")
            st.dataframe(human_headers(summary), hide_index=True, width="stretch")
    elif stored is not None:
        st.caption("The settings changed since the last sweep: run it again to see the curves.")
    else:
        st.caption("Press the button to compute the poster's three curves on these data.")


def loadings_tab(views: Views, result: dict) -> None:
    w = result["weights"]
    show_chart(st, dp_cca_loadings_figure(list(views.X.columns), w["u_private"], w["u_nonprivate"],
                                          list(views.Y.columns), w["v_private"], w["v_nonprivate"],
                                          x_title=views.x_title, y_title=views.y_title), "loadings", page="dp_cca")
    st.caption("Weights u₁ and v₁ in the units of the columns, each scaled to max |·| = 1; the private pair's sign "
               "is aligned to the non-private one for display.")


def scores_tab(result: dict) -> None:
    st.warning(NOT_DP_PROJECTIONS, icon=":material/lock_open:")
    if st.checkbox("Show the canonical scores of the training rows (for the data owner only)", False,
                   key="dp_cca_show_scores"):
        x_scores, y_scores = result["train_scores"]
        show_chart(st, dp_cca_scores_figure(x_scores[:, 0], y_scores[:, 0]), "scores", page="dp_cca")


def ledger_tab(result: dict, budget) -> None:
    private = result["private"]
    show_ledger(private.privacy_ledger_, budget.delta, expanded=True)
    st.caption("One Analyze-Gauss release of the joint second-moment matrix; U, V and the correlations are "
               "post-processing of it. Neighbouring data sets differ by replacing one row (N public), as in the DP-CCA "
               "paper; the record holds the "
               f"worst-case change of the released numbers for this construction ({private.sensitivity_:.4g}: √2 "
               "for a joint bound, √(32/27) for per-view bounds with private centring). The headline's ε is the exact "
               "ε of this single Gaussian release at its δ"
               + (" (below the ε asked for: the classic calibration is conservative)"
                  if private.calibration_ == "classic" else "")
               + ("; paper mode: this holds only if the data-dependent centre and scale were public." if
                  budget.mode == "paper" else "."))


def export_section(views: Views, result: dict, budget, source: str, params: dict, test_fraction: float,
                   seed: int) -> None:
    st.subheader("Downloads")
    X_df, Y_df = views.X, views.Y
    d_x, d_y = X_df.shape[1], Y_df.shape[1]
    private, nonprivate, sim = result["private"], result["nonprivate"], result["similarity"]
    declared = {"two views from": source, "held-out share": test_fraction}
    report = RunReport(
        page="dp_cca", method=(f"DP-CCA (strict, ε = {budget.epsilon:g})" if budget.mode == "strict" else
                               paper_label("DP-CCA", budget.epsilon, "dp_cca")),
        data=DataInfo.from_parts(views.name, {"synthetic": "generated (make_two_views)", "instruments": "sample",
                                              "files": "upload"}.get(source) or views.origin,
                                 [X_df, Y_df], columns=[*X_df.columns, *Y_df.columns], shape=(len(X_df), d_x + d_y),
                                 note=f"X view: {d_x} columns, Y view: {d_y} columns; the fingerprint covers both "
                                      "views.", owner_secret=owner_secret()),
        preprocessing=private.preprocessing_,
        parameters={**params, **declared, "split seed": seed, "n_train": result["n_train"],
                    "n_test": result["n_test"]},
        public_parameters=public_parameters(private, **declared),
        mode=budget.mode, ledger=private.privacy_ledger_, ledger_delta=budget.delta,
        figures=private_values("canonical correlation", private.canonical_correlations_,
                               shareable=not no_release_reason(private)),
        headline={"captured correlation (held-out)": result["captured"], "subspace similarity": sim["angle_cos"],
                  "noise τ on C": private.tau_, "regularisation λ": private.regularization_,
                  "rows clipped": private.n_clipped_,
                  **{f"canonical correlation {i + 1}, private": v
                     for i, v in enumerate(private.canonical_correlations_)}})
    why_none = no_release_reason(private)
    export_bar(report, release_json=None if why_none else (lambda: to_json(private, indent=1)),
               no_release_reason=why_none,
               owner_sheets=lambda: owner_sheets(private, nonprivate, comparison=result, n_test=result["n_test"],
                                                 x_names=list(X_df.columns), y_names=list(Y_df.columns)))


def main() -> None:
    intro()
    budget = budget_picker("dp_cca")
    # The sidebar already resolved the rule (engine.privacy.calibration.resolve_calibration); "auto" names
    # it for DPCCA's parameters and ledger ("classic" only where proven, eps <= 1).
    calibration = "auto" if budget.calibration == "classic" else "analytic"
    mode_notice(budget)
    source = st.radio("Two views from", list(SOURCES), format_func=SOURCES.get, key="dp_cca_source")
    views = VIEW_SOURCES[source]()
    params, test_fraction, seed = model_settings(views, budget, calibration)
    if budget.mode == "strict":
        public_bounds(views, params)
    result = fit_section(views, test_fraction, seed, params, budget)
    results_section(views, result, budget)
    odometer_section(views, source, result, params, budget)
    # lazy: only the open tab computes (a hidden sweep or score table no longer delays the first chart)
    tabs = lazy_tabs(["Canonical correlations", "Sweeps (ε, N, δ)", "Loadings", "Scores (not DP)", "Privacy ledger"],
                     key="dp_cca_tabs")
    tabs.show("Canonical correlations", correlations_tab, views, result, params["n_components"])
    tabs.show("Sweeps (ε, N, δ)", sweeps_tab, views, result, budget, params, test_fraction, seed)
    tabs.show("Loadings", loadings_tab, views, result)
    tabs.show("Scores (not DP)", scores_tab, result)
    tabs.show("Privacy ledger", ledger_tab, result, budget)
    export_section(views, result, budget, source, params, test_fraction, seed)
