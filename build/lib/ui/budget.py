"""Privacy budget picker shared by every page (epsilon, delta, mode, calibration)."""
from __future__ import annotations

import secrets
from dataclasses import dataclass

import streamlit as st

# the wording lives in the engine: the run report says the same
from engine.privacy.calibration import resolve_calibration
from engine.privacy.wording import MODE_TEXT

from .state import init_state, persisted

#: The fixed noise seed of the teaching switch (public by construction: that is the point of the caveat).
TEACHING_NOISE_SEED = 0


@dataclass(frozen=True)
class Budget:
    """The sidebar's choice. ``noise_seed`` is None (fresh OS entropy: the default) or the fixed seed of
    the "reproducible noise" teaching switch; pages pass it as the release's ``random_state``, and the
    fit's ledger then says "not proven: the noise seed is known"."""

    epsilon: float
    delta: float
    mode: str
    calibration: str
    noise_seed: int | None = None
    #: Part of every cache key of a cached noisy fit (``@st.cache_data`` is shared by all sessions of the
    #: server): a random token per browser session with fresh noise, so two sessions never share one noise
    #: draw while reruns of one session show the same release (a redraw per rerun would spend budget);
    #: "teaching" with the reproducible switch. Never exported.
    session_noise_key: str = ""


def budget_picker(key: str = "budget", *, modes=("strict", "paper"), show_calibration: bool = True) -> Budget:
    """Render the budget widgets (in the sidebar) and return the current choice.

    The values persist across pages through ``st.session_state`` (keys ``pl_epsilon``,
    ``pl_delta``, ``pl_mode``, ``pl_calibration``).
    """
    init_state()
    sb = st.sidebar
    sb.subheader("Privacy budget")
    eps = sb.number_input(
        "ε (epsilon)", min_value=0.01, max_value=1000.0, value=float(st.session_state["pl_epsilon"]),
        step=0.1, format="%.3g", key=f"{key}_eps",
        on_change=persisted(f"{key}_eps", "pl_epsilon"),
        help="Smaller ε means more noise and stronger privacy. ε ≤ 1 is strong; ε ≥ 10 is weak.",
    )
    delta = sb.number_input(
        "δ (delta)", min_value=1e-12, max_value=0.5, value=float(st.session_state["pl_delta"]),
        format="%.1e", key=f"{key}_delta", on_change=persisted(f"{key}_delta", "pl_delta"),
        help="Probability that the ε guarantee fails. Keep it well below 1/n (n = number of rows).",
    )
    mode_now = st.session_state["pl_mode"] if st.session_state["pl_mode"] in modes else modes[0]
    mode = sb.radio(
        "Mode", modes, index=list(modes).index(mode_now), key=f"{key}_mode",
        on_change=persisted(f"{key}_mode", "pl_mode"),
        format_func=lambda m: {"strict": "Strict (provable)", "paper": "Paper-faithful"}.get(m, m),
    )
    calibration = st.session_state["pl_calibration"]
    if show_calibration:
        calibration = sb.radio(
            "Gaussian calibration", ("analytic", "classic"),
            index=("analytic", "classic").index(calibration), key=f"{key}_cal",
            on_change=persisted(f"{key}_cal", "pl_calibration"),
            help="Analytic (Balle & Wang 2018) is exact for every ε. Classic is proven only for ε ≤ 1.",
        )
        # "classic" in the sidebar means classic where its proof holds: the engine's "auto" rule.
        resolved = resolve_calibration("auto" if calibration == "classic" else "analytic", eps)
        if resolved != calibration:
            sb.warning("The classic Gaussian formula is proven only for ε ≤ 1: the analytic calibration will be used.")
        calibration = resolved
    sb.caption(MODE_TEXT[mode])
    reproducible = sb.checkbox(
        "Reproducible noise (teaching)", value=bool(st.session_state["pl_reproducible"]), key=f"{key}_repro",
        on_change=persisted(f"{key}_repro", "pl_reproducible"),
        help="Fixes the noise seed so that every run draws the same noise. Anyone who knows the seed can "
             "subtract the noise, so the fit's ledger then says 'not proven: the noise seed is known'. "
             "Off (the default), every release draws fresh noise from the operating system.")
    if reproducible:
        sb.warning("Reproducible noise: the noise seed is known, so no result on this page is a proven guarantee.")
    key_now = "teaching" if reproducible else st.session_state.setdefault("pl_noise_key", secrets.token_hex(8))
    return Budget(float(eps), float(delta), mode, calibration, TEACHING_NOISE_SEED if reproducible else None, key_now)
