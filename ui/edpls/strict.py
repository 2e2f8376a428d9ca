"""The edPLS page's strict-estimator section (issue #18): which strict estimator, its public inputs, its fit
beside the non-private PLS1 and the private constant predictor, what it chose and why. Widgets only: the
fit, the choices' wording and the owner's sheets are ``engine.methods.edpls.pipeline``.

The recommended estimator (``make_strict_edpls``) is the default in strict mode; the plain Analyze-Gauss
EDPLS stays selectable for comparison (``pages/edpls.py`` keeps its widgets and keys). Public inputs are
declared by the user: the property's physical range ``y_range`` (on a public sample set a documented
default, the power of ten above its |y|; an upload gets none) and, optionally, a spectra table the user
declares public (``X_public``: another instrument, a library, unlabelled spectra), or, on a sample set that
ships published unlabelled spectra (the fermentation set's 1629), those, declared public as a published data
set. Nothing public is read off the private rows.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

from engine.data import DataError
from engine.data.catalog import SAMPLE_SETS, public_reference
from engine.methods.edpls.pipeline import STRICT_ESTIMATORS, public_spectra
from engine.privacy.wording import ledger_text
from ui.jobs_view import fit_wait
from ui.model_card import response_metric
from ui.public_info import STORE, data_key, public_info_panel
from ui.runtime.jobs import JobError, parse_upload, run_upload

ESTIMATOR_LABELS = {
    "recommended": "recommended (public preprocessing and projection, separate moment releases, ridge)",
    "plain": "plain Analyze-Gauss (the strict fit of earlier versions, for comparison)",
}
RECOMMENDED_TEXT = (
    "**Recommended strict estimator.** It fits nothing on your private rows before the release: it applies a "
    "row-wise preprocessing (each spectrum transformed on its own), projects the spectra on a public basis "
    "(principal components of the public spectra when you give some, else a basis along the wavelength axis) so "
    "that the noise grows with the projected dimension and not with the channel count, releases the X-moments "
    "and the X-y cross-moments each with its own share of the budget, and regularises the noisy moments with a "
    "ridge scaled to the noise. What it chose, and why, is listed below the results. Every release, the noisy "
    "count that sets the projected dimension included, is in the ledger: the whole fit is (ε, δ)-DP for "
    "add/remove-one neighbours."
)


@dataclass(frozen=True)
class RecommendedSetup:
    """The public inputs of the recommended fit: the declared y range, optional public spectra (and where
    they came from), and the sentence saying where the y range came from (None: the user typed it). ``y_range``
    None: "none: estimate privately" (the estimator's private range)."""

    y_range: tuple | None
    X_public: np.ndarray | None
    public_name: str | None
    range_note: str | None


def strict_estimator_setting() -> str:
    """The radio "Strict estimator": recommended (default) or plain Analyze-Gauss."""
    return st.radio("Strict estimator", STRICT_ESTIMATORS, horizontal=True, key="edpls_strict_estimator",
                    format_func=ESTIMATOR_LABELS.get,
                    help="The recommended estimator is the default; the plain one is kept for comparison.")


@st.cache_data(show_spinner=False, max_entries=8)
def _read_public(data: bytes, name: str):
    """(table, None) or (None, the refusal): read in a worker with the job budgets (``ui.runtime.jobs``)."""
    try:
        df, problem, _ = run_upload(True, parse_upload, data, name, label=f"Reading {name}")
    except (DataError, JobError) as err:
        return None, str(err)
    return (df, None) if problem is None else (None, problem[0])


@st.cache_data(show_spinner=False, max_entries=2)
def _sample_reference(key: str):
    return public_reference(key)


def _published_reference(ds, channels) -> tuple[np.ndarray | None, str | None]:
    """A sample set's published unlabelled spectra (the fermentation set's 1629), offered as public spectra:
    declared public because they are a published data set; recorded as such in the report."""
    sample = SAMPLE_SETS.get(ds.key) if ds.origin == "sample" and getattr(ds, "key", None) else None
    if sample is None or not sample.public_reference:
        return None, None
    if not st.checkbox(f"Use {sample.public_reference_text} as the public spectra", True,
                       key=f"edpls_public_reference_{sample.key}",
                       help="They are published with the data set, so they are public: the projection basis, "
                            "the centre and the bounds may be computed from them."):
        return None, None
    try:
        X_public = public_spectra(_sample_reference(sample.key), channels)
    except (ValueError, ImportError, OSError) as err:
        st.error(f"The published reference spectra are not used: {err}")
        return None, None
    st.caption(f"Public spectra: {X_public.shape[0]} rows, {sample.public_reference_text}.")
    return X_public, f"{sample.public_reference_text}, {X_public.shape[0]} rows"


def _public_spectra_input(channels, ds=None, response=None) -> tuple[np.ndarray | None, str | None]:
    if ds is not None:
        X_public, name = _published_reference(ds, channels)
        if X_public is not None:
            return X_public, name
    up = st.file_uploader("Public spectra (optional): a table with the same channel columns that you declare "
                          "public (another instrument, a spectral library, unlabelled spectra)",
                          key="edpls_public_upload",
                          help="Used for the projection basis, the centre and the bounds. Declare public only "
                               "data you may publish: everything computed from it is treated as public.")
    store = st.session_state.setdefault(STORE, {}).setdefault(data_key(ds, response), {}) if ds else {}
    if up is not None:
        store["public_spectra"] = (up.name, up.getvalue())  # declared public: kept across modes and pages
    elif store.get("public_spectra") and not st.button("Forget the public spectra", key="edpls_public_forget"):
        st.caption(f"Public spectra kept from earlier in this session: {store['public_spectra'][0]}.")
    else:
        store.pop("public_spectra", None)
        return None, None
    name, data = store["public_spectra"]
    with fit_wait("edpls_public_file", f"Reading {name}"):
        df, problem = _read_public(data, name)
    try:
        if problem is not None:
            raise ValueError(problem)
        X_public = public_spectra(df, channels)
    except ValueError as err:
        st.error(f"Public spectra {name} not used: {err}")
        return None, None
    st.caption(f"Public spectra: {name}, {X_public.shape[0]} rows (declared public by you).")
    return X_public, name


def recommended_settings(choice) -> RecommendedSetup:
    """The recommended estimator's text and public inputs (the shared "Public information" panel)."""
    st.markdown(RECOMMENDED_TEXT)
    info, (X_public, name) = public_info_panel(
        "edpls", choice.ds, choice.response, choice.problem, x_bound=False,
        extra=lambda: _public_spectra_input(choice.problem.channels, choice.ds, choice.response), allow_private=True)
    return RecommendedSetup(info.y_range, X_public, name, info.range_note)


def utility_sentence(res: dict, epsilon: float) -> str:
    """The fit's utility in one sentence: private, non-private, private constant predictor and σ_y."""
    p, n, c, s = res["rmsep_private"], res["rmsep_plain"], res["rmsep_constant"], res["sigma_y_test"]
    if p < c:
        verdict = (f"better than the private constant predictor ({c:.4g}) at the same budget"
                   + (f", and {1 - (p / s) ** 2:.0%} of the test variance explained" if p < s else
                      ", though not better than predicting the test mean (σ_y)"))
    else:
        verdict = f"no better than the private constant predictor ({c:.4g}) at the same budget"
    return (f"**Recommended strict fit at ε = {epsilon:g}:** RMSEP {p:.4g} against {n:.4g} for non-private PLS "
            f"(σ_y = {s:.4g}): {verdict}.")


def show_choices(rows) -> None:
    """What the estimator chose and why: one line per decision (``pipeline.choice_rows``)."""
    st.markdown("**What the recommended estimator chose, and why**")
    st.markdown("\n".join(f"- **{r['what']}**: {r['chose']}" + (f" ({r['why']})" if r["why"] else "")
                          for r in rows))


def recommended_metrics(res: dict, n_train: int, response: str = "y") -> None:
    private = res["private"]
    m1, m2, m3, m4 = st.columns(4)
    response_metric(m1, "RMSEP, private", f"{res['rmsep_private']:.4g}", response)
    response_metric(m2, "RMSEP, non-private", f"{res['rmsep_plain']:.4g}", response)
    response_metric(m3, "RMSEP, private constant", f"{res['rmsep_constant']:.4g}", response,
                    "Predicting a DP mean of y (clipped to the public range) at the same "
                    "(ε, δ): what a private model must beat to be worth using.")
    response_metric(m4, "σ_y (test)", f"{res['sigma_y_test']:.4g}", response,
                    "Standard deviation of the response on the test rows.")
    st.caption("For you only: the RMSEPs and σ_y are computed on your private test rows without noise; they are in "
               "the owner's workbook, never in the shareable files. The private constant predictor is a separate "
               "fit for comparison, not part of the recommended model's release.")
    n_clipped = getattr(private, "n_clipped_", None)
    if n_clipped is not None:
        st.caption(f"For you only: {n_clipped} of {n_train} training rows exceeded the public bounds and were "
                   "clipped.")


def ledger_sentence(res: dict, delta: float) -> str:
    return ledger_text(res["private"].privacy_ledger_, delta)
