"""The PCA-Gauss page's choices: data, task, release settings and the public inputs of strict mode.

Widgets only, filled into one :class:`Setup`; the page (pages/pca_gauss.py) fits and shows the release. Public
inputs (bounds, centre, label set, public data) are the user's declarations, never read off the private rows
unless the user picks that (and the ledger then says "not proven").
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import streamlit as st

from engine.data import DataError
from engine.methods.pca_gauss import ALPHA_GRID, N_PUBLIC_NOTE, TASKS
from engine.methods.pca_gauss.evaluation import default_task
from engine.methods.pca_gauss.utility import (
    BUNDLED_SETS,
    SOURCE_METHOD,
    arrays_from_frame,
    documented_public_inputs,
    load_bundled,
)
from ui.data_picker import data_picker
from ui.jobs_view import fit_wait
from ui.public_info import Y_HIGH_LABEL, Y_LOW_LABEL
from ui.runtime.jobs import JobError, parse_upload, run_upload

TASK_TEXT = {
    "unsupervised": "Unsupervised / clustering",
    "regression": "Regression",
    "classification": "Classification (one Gaussian per class)",
}
SOURCE_TEXT = {
    "public": "Pub-PCA: PCA of public data (free)",
    "laplace": "Lap-PCA: Laplace-noised covariance (ε_PCA = α·ε)",
    "analyze_gauss": "AG-PCA: Analyze-Gauss (ε_PCA = α·ε, δ)",
    "nonprivate": "Non-private W of the same data (the paper's clustering recipe)",
}
DATA_KINDS = ("scikit-learn data set", "Sample data or upload")
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
    """The uploaded public file's table, read in a worker with the job budgets (``ui.runtime.jobs``); DataError."""
    try:
        df, problem, _ = run_upload(True, parse_upload, data, file_name, label=f"Reading {file_name}")
    except JobError as err:
        raise DataError(str(err), file=file_name) from None
    if problem is not None:
        message, row, column, line = problem
        raise DataError(message, file=file_name, row=row, column=column, line=line)
    return df


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



@dataclass
class Setup:
    """The page's choices, filled section by section (data, task, settings, public inputs)."""

    df: pd.DataFrame = None
    name: str = ""
    origin: str = ""
    bundled_key: str | None = None
    task: str = ""
    target: str | None = None
    features: list = field(default_factory=list)
    P: int = 2
    source: str = ""
    split_seed: int = 0
    alpha: float = 0.5
    mean_share: float = 0.1
    K: int = 10
    delta: float | None = None
    bounds: object = None
    y_bounds: object = None
    labels: tuple | None = None
    public: tuple | None = None
    public_declared: bool = True
    public_text: dict = field(default_factory=dict)


def data_section(setup: Setup) -> tuple:
    """The data set; returns the default task and target column."""
    kind = st.radio("Data", DATA_KINDS, horizontal=True, key="pg_data_kind")
    if kind == DATA_KINDS[0]:
        keys = list(BUNDLED_SETS)
        key = st.selectbox("Data set (bundled with scikit-learn, read offline)", keys, key="pg_bundled",
                           format_func=lambda k: BUNDLED_SETS[k].title)
        setup.bundled_key = key
        setup.df, setup.name = bundled_frame(key), BUNDLED_SETS[key].title
        setup.origin = "scikit-learn bundled data set (sample)"
        if BUNDLED_SETS[key].stands_in_for != "-":
            st.caption(f"Stands in for the paper's {BUNDLED_SETS[key].stands_in_for} data, which cannot be had "
                       "offline.")
        return BUNDLED_SETS[key].task, "target"
    dataset = data_picker(key="pca_gauss_data",  # an upload must give a release: 2+ numeric columns, 20+ rows
                          check=lambda frame, file: arrays_from_frame(frame, "unsupervised", None, name=file))
    if dataset is None:
        st.info("Pick a sample set or upload a table with one row per record.")
        st.stop()
    setup.df, setup.name, setup.origin = dataset.df, dataset.name, dataset.origin
    # a text label column (e.g. the origin of coffee spectra) is the class; else a listed numeric response
    return default_task(dataset.df, dataset.response_columns)


def task_section(setup: Setup, default_task: str, default_target: str | None) -> None:
    df, name = setup.df, setup.name
    columns = list(df.columns)
    left, right = st.columns(2)
    task = left.radio("Task", TASKS, index=TASKS.index(default_task), format_func=TASK_TEXT.get,
                      key=f"pg_task_{name}")
    target_options = ["(none)"] + columns if task == "unsupervised" else columns
    target_default = target_options.index(default_target) if default_target in target_options else 0
    target = right.selectbox("Target column (y or labels; for clustering, optional true labels)", target_options,
                             index=target_default, key=f"pg_target_{name}_{task}")
    setup.task, setup.target = task, None if target == "(none)" else target
    setup.features = [c for c in columns if c != setup.target and pd.api.types.is_numeric_dtype(df[c])]


def settings_section(setup: Setup, budget, strict: bool) -> None:
    task, features = setup.task, setup.features
    sources = list(SOURCE_METHOD) if task == "unsupervised" else [s for s in SOURCE_METHOD if s != "nonprivate"]
    c1, c2, c3 = st.columns(3)
    setup.P = int(c1.number_input("k = P, released dimension", 1, max(1, min(len(features), 64)),
                                  min(2, max(1, len(features))), key="pg_P"))
    setup.source = source = c2.selectbox("Projection W", sources, format_func=SOURCE_TEXT.get,
                                         key=f"pg_source_{task}")
    setup.split_seed = int(c3.number_input(
        "Split seed (data split and evaluation only)", 0, 2**31 - 1, 0, key="pg_seed",
        help="Seeds which rows are held out and the evaluation models. It is never used "
             "for the release's noise, which is fresh unless 'Reproducible noise' is on."))
    c4, c5, c6 = st.columns(3)
    setup.alpha = c4.select_slider("α: share of ε for the projection", ALPHA_GRID, value=0.5, key="pg_alpha",
                                   disabled=source not in ("laplace", "analyze_gauss"),
                                   help="Lap-PCA and AG-PCA spend ε_PCA = α·ε; the Gaussian gets the rest.")
    setup.mean_share = c5.select_slider("Share of the Gaussian budget for means", (0.05, 0.1, 0.2, 0.3), value=0.1,
                                        key="pg_mean_share",
                                        help="The paper: ε_μ = 0.1, ε_Σ = 0.9 of the Gaussian budget.")
    setup.K = int(c6.number_input("K (clusters, clustering only)", 2, 30, 10, key="pg_K",
                                  disabled=task != "unsupervised"))
    setup.delta = budget.delta
    if not strict and source == "analyze_gauss":
        if st.checkbox("δ = 1/N for AG-PCA (the paper's choice; weak)", True, key="pg_delta_paper"):
            setup.delta = None


def public_file_input(setup: Setup) -> None:
    """A separate public file, used once its declaration is ticked."""
    features, target = setup.features, setup.target
    pub_file = st.file_uploader("Separate public file (optional: same feature columns; used for Pub-PCA and, if "
                                "you choose it, for the bounds)", type=["csv", "tsv", "txt", "xlsx"],
                                key="pg_public_file")
    pub_ok = st.checkbox("This file is public: it is not part of the private data, and anyone may see it",
                         False, key="pg_public_file_ok", disabled=pub_file is None)
    if pub_file is not None and pub_ok:
        try:
            with fit_wait("pg_public_file", f"Reading {pub_file.name}"):
                pdf = public_table(pub_file.getvalue(), pub_file.name)
            missing = [c for c in features if c not in pdf.columns]
            if missing:
                raise DataError(f"{pub_file.name}: the public file lacks the feature column(s) {missing[:5]}")
            Xp = pdf[features].to_numpy(dtype=float)
            yp = pdf[target].to_numpy() if target is not None and target in pdf.columns else None
            setup.public = (Xp, yp)
            setup.public_text["public data"] = f"separate public file {pub_file.name!r} (declared public)"
        except (DataError, ValueError) as err:
            st.error(f"Public file not used: {err}")
    elif pub_file is not None:
        st.caption("Tick the declaration to use the file.")


def public_slice_declaration(setup: Setup) -> None:
    setup.public_declared = st.checkbox(
        "Pub-PCA without a public file: the rows of the public slice split off this table may be treated as "
        "public (they get no protection and are not used for training)", setup.bundled_key is not None,
        key=f"pg_slice_ok_{setup.name}",
        help="The paper's Pub-PCA uses a small public data set. Without a separate public file the page sets "
             "a slice of your table aside; untick this when those rows are private: W is then not released "
             "and the ledger says 'not proven'.")
    setup.public_text["public data"] = ("public slice of this table, declared public" if setup.public_declared
                                        else "public slice of this table, NOT declared public")


def entered_bounds(setup: Setup) -> None:
    """Bounds typed by the user, with their declaration that the values are public."""
    features = setup.features
    same = st.checkbox("Same range for every feature", True, key="pg_bounds_same")
    if same:
        b1, b2 = st.columns(2)
        lo = b1.number_input("Lower bound", value=None, key="pg_bound_lo", placeholder="e.g. 0")
        hi = b2.number_input("Upper bound", value=None, key="pg_bound_hi", placeholder="e.g. 100")
        entered = None if lo is None or hi is None else (np.full(len(features), lo), np.full(len(features), hi))
    else:
        table = st.data_editor(pd.DataFrame({"feature": features, "lower": np.nan, "upper": np.nan}),
                               key=f"pg_bounds_table_{setup.name}", disabled=["feature"], hide_index=True)
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
    setup.bounds = entered
    if same:
        setup.public_text["bounds"] = f"declared: every feature in [{entered[0][0]:g}, {entered[1][0]:g}]"
    else:
        setup.public_text["bounds"] = "declared: " + ", ".join(f"{f} in [{a:g}, {b:g}]"
                                                               for f, a, b in zip(features, *entered))


def feature_bounds(setup: Setup, doc) -> None:
    """Where the bounds and centre of the features come from (declared public, or read off the data)."""
    options = ([] if doc is None or doc.bounds is None else ["documented"]) + ["entered", "file", "data"]
    choice = st.radio("Bounds and centre of the features (the centre is their midpoint)", options,
                      format_func=BOUND_SOURCES.get, key=f"pg_bounds_src_{setup.name}",
                      index=0 if doc is not None else options.index("data"))
    if choice == "documented":
        if len(doc.bounds[0]) == len(setup.features):
            setup.bounds = doc.bounds
            setup.public_text["bounds"] = f"documented ranges ({doc.bounds_source})"
            st.caption(f"Source: {doc.bounds_source}.")
        else:
            st.warning("The documented ranges cover the data set's own feature columns only.")
            st.stop()
    elif choice == "entered":
        entered_bounds(setup)
    elif choice == "file":
        if setup.public is None:
            st.info("Upload the separate public file above and tick its declaration.")
            st.stop()
        setup.bounds = "public"
        setup.public_text["bounds"] = "range of the separate public file (declared public)"
    else:
        setup.bounds = "data"
        setup.public_text["bounds"] = "read off the private data (not public)"
        st.warning("**Not proven**: bounds read off your private rows leak their extremes; the ledger says so "
                   "and the shareable files hold no bounds.", icon=":material/warning:")


def target_bounds(setup: Setup) -> None:
    public = setup.public
    y_opts = ["entered"] + (["file"] if public is not None and public[1] is not None else []) + ["data"]
    y_choice = st.radio(f"Bounds of the target {setup.target!r}", y_opts, format_func=BOUND_SOURCES.get,
                        index=y_opts.index("data"), key=f"pg_ybounds_src_{setup.name}")
    if y_choice == "entered":
        b1, b2 = st.columns(2)
        ylo = b1.number_input(Y_LOW_LABEL, value=None, key="pg_ybound_lo")
        yhi = b2.number_input(Y_HIGH_LABEL, value=None, key="pg_ybound_hi")
        y_ok = st.checkbox("These bounds of y are public", False, key="pg_ybounds_ok")
        if ylo is None or yhi is None or not y_ok or yhi <= ylo:
            st.info("Enter lower < upper bounds of y and tick the declaration.")
            st.stop()
        setup.y_bounds = (float(ylo), float(yhi))
        setup.public_text["bounds of y"] = f"declared: [{ylo:g}, {yhi:g}]"
    elif y_choice == "file":
        setup.y_bounds = "public"
        setup.public_text["bounds of y"] = "range of the separate public file (declared public)"
    else:
        setup.y_bounds = "data"
        setup.public_text["bounds of y"] = "read off the private data (not public)"
        st.caption("Not proven: the bounds of y are read off the private rows (scikit-learn documents no "
                   "range for this target; enter one you know to make the release provable).")


LABEL_SET = "Label set (public), comma-separated: every class value"


def label_set(setup: Setup, doc) -> None:
    default_labels = "" if doc is None or doc.labels is None else ", ".join(map(str, doc.labels))
    text = st.text_input(LABEL_SET, default_labels,
                         key=f"pg_labels_{setup.name}_{setup.target}",
                         help="The set of classes is a public parameter: a class absent from your data is "
                              "still released (with a noisy count near 0). Leave empty to read it from the "
                              "private labels (not proven, and nothing is shareable).")
    y_col = setup.df[setup.target] if setup.target is not None else None
    try:
        setup.labels = parse_labels(text, y_col)
    except DataError as err:
        st.error(f"No release on this choice: {str(err).rstrip('.')}. Change it in '{LABEL_SET}'.")
        st.stop()
    if setup.labels is None:
        st.warning("Not proven: the label set will be read from the private labels.", icon=":material/warning:")
        setup.public_text["label set"] = "read from the private labels (not public)"
    else:
        setup.public_text["label set"] = ", ".join(map(str, setup.labels))


def public_inputs_section(setup: Setup, strict: bool) -> None:
    """Strict mode: bounds, centre, label set and public data, declared, never read off the private rows."""
    with st.expander("Public inputs: bounds, centre, label set, public data" + (" (strict mode)" if strict else ""),
                     expanded=strict):
        st.markdown(f"{N_PUBLIC_NOTE} **This page treats N as public**: the ledger's neighbouring relation is "
                    "replace-one.")
        public_file_input(setup)
        if setup.public is None and setup.source == "public":
            public_slice_declaration(setup)
        if not strict:
            st.caption("Paper-faithful mode centres and scales with the private training rows (the paper's "
                       "pre-processing): nothing here is declared public.")
            return
        doc = documented(setup.bundled_key) if setup.bundled_key is not None else None
        feature_bounds(setup, doc)
        if setup.task == "regression":
            target_bounds(setup)
        if setup.task == "classification":
            label_set(setup, doc)
