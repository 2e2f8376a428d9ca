"""The VAR-ADMM page's cached engine calls and the choices they take (pages/var_admm.py).

Every call is cached per arguments (``st.cache_data``): a rerun of the page reuses the fit, the defence, the
sweep points and the attack. Noise is fresh unless the teaching switch fixes its seed; the ``draw`` tag only tells
one session's draw apart in the cache (it seeds nothing).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import streamlit as st

from engine import var_admm_jobs as jobs_fns
from engine.data import DataError
from engine.jobs import run_upload
from engine.methods.var_admm import load_panel
from engine.var_admm_jobs import CENTRAL_ATTACKER, model_kw, panel_of, raw_scale  # noqa: F401 - the page's names


@st.cache_data(show_spinner="Reading the series ...", max_entries=8)
def read_panel(df: pd.DataFrame, name: str) -> pd.DataFrame:
    return load_panel(df, name).Y


MIN_STEPS = 50  # fewest time steps the page fits on (the span input starts there)


def usable_panel(df: pd.DataFrame, name: str) -> None:
    """The data picker's check for this page: a panel of at least two series and MIN_STEPS steps."""
    try:
        Y = read_panel(df, name)
    except ValueError as err:  # DataError (a ValueError) keeps its file, row and column
        raise err if isinstance(err, DataError) else DataError(f"{name}: {err}", file=name) from None
    if Y.shape[1] < 2:
        raise DataError(f"{name}: a collaboration needs at least two series (owners); the table has "
                        f"{Y.shape[1]}.", file=name)
    if len(Y) < MIN_STEPS:
        raise DataError(f"{name}: the collaborative VAR here needs at least {MIN_STEPS} time steps; the table has "
                        f"{len(Y)}.", file=name)


SCHEME_CHOICES = {
    "auto": "Automatic: accelerated for the fit, the paper's scheme for the attacks",
    "anderson": "Accelerated: ρ = n with Anderson mixing",
    "paper": "The paper's plain scheme",
    "balanced": "Paper's scheme + residual balancing of ρ",
    "relaxed": "Paper's scheme + over-relaxation (α = 1.6)",
}


@st.cache_data(show_spinner="Fitting the collaborative VAR by ADMM ...", max_entries=16)
def fit_and_forecast(Y: pd.DataFrame, solar: bool, lags: tuple, settings: dict, upload: bool = False) -> dict:
    """Central and ADMM fits on the training rows, and the rolling one-step forecasts (spec 6.3;
    ``engine.var_admm_jobs``; ``upload``: in a worker with the job budgets). Nothing here is a release."""
    return run_upload(upload, jobs_fns.fit_and_forecast, Y, solar, lags, settings, label="The VAR-ADMM fit")


def own_units(values, centre: float):
    """Forecasts or actual values of one site in the series' own units: the centred values plus the centre the fit
    subtracted (post-processing of the forecasts; the centre is that owner's own training mean, so the result is
    the owner's view of their own series)."""
    return np.asarray(values, dtype=float) + float(centre)


@st.cache_data(show_spinner="Running the defence on the same forecasts ...", max_entries=32)
def run_defence(Y: pd.DataFrame, solar: bool, lags: tuple, settings: dict, defence: str, strength: float,
                eval_inputs: str, public_range: tuple, declared: bool, delta: float, noise_seed, draw: str,
                calibration: str, upload: bool = False) -> dict:
    """One defence run (``engine.var_admm_jobs.run_defence``; ``upload``: in a worker). Noise on the values: clip
    into ``public_range``, fresh noise (``noise_seed`` None; ``draw`` only tells this session's draw apart in the
    cache, it seeds nothing), then the VAR fit."""
    return run_upload(upload, jobs_fns.run_defence, Y, solar, lags, settings, defence, strength, eval_inputs,
                      public_range, declared, delta, noise_seed, draw, calibration, label="The defence run")


@st.cache_data(show_spinner=False, max_entries=64)
def sweep_point(Y: pd.DataFrame, solar: bool, lags: tuple, settings: dict, law: str, b: float, public_range: tuple,
                declared: bool, delta: float, noise_seed, draw: str, upload: bool = False) -> pd.DataFrame:
    return run_upload(upload, jobs_fns.sweep_point, Y, solar, lags, settings, law, b, public_range, declared, delta,
                      noise_seed, draw, label="The noise sweep point")


@st.cache_data(show_spinner="Running the protocol and the attack ...", max_entries=16)
def run_attack(Y: pd.DataFrame, solar: bool, lags: tuple, settings: dict, attacker: str, victim: str, K_max: int,
               coef_noise: float, message_noise: float, init: str, upload: bool = False) -> dict:
    return run_upload(upload, jobs_fns.run_attack, Y, solar, lags, settings, attacker, victim, K_max, coef_noise,
                      message_noise, init, label="The attack")


@dataclass
class Setup:
    """The data and model choices: the owners' series, the lags and the ADMM settings."""

    dataset: object
    full: pd.DataFrame
    data_tag: str
    hourly: bool
    Y: pd.DataFrame = None
    n_rows: int = 0
    solar: bool = False
    lags: tuple = ()
    settings: dict = field(default_factory=dict)

    @property
    def upload(self) -> bool:
        """An uploaded panel: its fits run in a worker with the job budgets (``engine.jobs``)."""
        return getattr(self.dataset, "origin", None) == "upload"


@dataclass
class Defence:
    """The defence chosen in its expander and what it produced (``defended`` None: no defence ran)."""

    name: str
    eval_inputs: str
    public_range: tuple
    declared: bool
    strength: float
    defended: dict | None
    release: object
