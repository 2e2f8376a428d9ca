"""The edPLS page's data choice and its cached fits (moved from pages/edpls.py, the bodies unchanged).

Noise: every private fit draws its noise through ``budget.noise_seed`` (None: fresh OS entropy; the "reproducible
noise" switch: a known seed, recorded as not proven). The fit is kept per session for the same data and settings
(``budget.session_noise_key``), so a rerun of the page shows the same release instead of drawing a new one, and two
sessions never share a noise draw. The engine functions are called through their modules (``pipeline.preprocess``,
``edpls_engine.compare_private_plain``, ...) so that a test's monkeypatch reaches them.
"""
from dataclasses import dataclass

import numpy as np
import streamlit as st

import engine.methods.edpls as edpls_engine
from engine.methods.edpls import (
    pipeline,
    recommended_evaluation,
)
from engine.methods.edpls.pipeline import PAGE_DEFAULTS
from engine.methods.edpls.recommended_evaluation import compare_recommended
from ui.progress import session_scope
from ui.runtime.jobs import run_upload

PAPER_AUDIT_KEY = {"sigma": "edpls"}
SPLIT_SEED = PAGE_DEFAULTS["split_seed"]  # the train/test split's seed (not a noise seed: a split is no release)


@st.cache_data(show_spinner=False, max_entries=32)
def preprocess(X, chain_name, train_idx, upload=None, scope=""):
    """The chain fitted on the training rows (``upload``: the uploaded file's name, fitted in a worker). ``scope``:
    the session's ``ui.progress.session_scope``: a noise-free result on private data is cached per session only
    (a cross-session hit would be faster, telling one session that another fitted the same table)."""
    return run_upload(upload is not None, pipeline.preprocess, X, chain_name, train_idx,
                      label=f"Preprocessing {upload} ('{chain_name}')")


@st.cache_data(show_spinner=False, max_entries=32)
def fit_pair(X, y, train_idx, test_idx, params, noise_seed, session_noise_key, upload=None):
    """The private fit beside the plain one. ``session_noise_key`` keeps one release per session and settings: a
    rerun shows the same release, another session (or the teaching switch) draws its own. ``upload``: the
    uploaded file's name; its fit runs in a worker with the job budgets (``ui.runtime.jobs``)."""
    return run_upload(upload is not None, edpls_engine.compare_private_plain, X, y, train_idx, test_idx, params,
                      random_state=noise_seed, label=f"The edPLS fit on {upload}")


@st.cache_data(show_spinner=False, max_entries=32)
def references_recommended(X, y, train_idx, Xp, settings, X_public, upload=None, scope=""):
    """The recommended fit's two noise-free references (``recommended_references``), kept per session (``scope``,
    as ``preprocess``) and settings: they draw no noise, but a cache hit across sessions would reveal by its speed
    that another session fitted the same table. ``settings``: the fit's settings; epsilon is left out (the
    references do not use it)."""
    kept = {k: v for k, v in settings if k != "epsilon"}
    return run_upload(upload is not None, recommended_evaluation.recommended_references, X, y, train_idx,
                      X_reference=Xp, X_public=X_public, label=f"The edPLS reference fits on {upload}", **kept)


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



def _upload_name(choice: Choice) -> str | None:
    """The uploaded file's name (its fits run with the job budgets), None for a sample set."""
    return choice.ds.name if choice.ds.origin == "upload" else None

