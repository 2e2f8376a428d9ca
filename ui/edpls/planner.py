"""The planner section (issue #31): before any fit, what private accuracy to expect and how many rows it would take.

Shown on the edPLS and DP-PCR pages right after the data choice, before the Public information panel (which stops
the page until a range is declared): the plan is ``engine.methods.edpls.planner.plan_for_problem``, computed from
the training rows' count, the channel count, the budget and what the user has declared so far (read from the
panel's widgets and store, never from the data). Widgets only, no math.
"""
from __future__ import annotations

import streamlit as st

from engine.data.catalog import SAMPLE_SETS
from engine.methods.edpls.planner import Plan, plan_for_problem
from ui.public_info import STORE, data_key

DP_PCR_NOTE = (
    "The plan is the recommended strict estimator's (edPLS page, strict mode), which can use public spectra; DP-PCR "
    "has none and releases the whole moment matrix of the clipped rows (compared side by side in "
    "bench/bench_strict_utility.py)."
)


def _declared_range(page: str, ds, response: str) -> bool:
    """Whether a usable y range is declared now: the panel's widgets when drawn, else its store, else the sample
    set's documented default (an upload has none until the user types one)."""
    where = data_key(ds, response)
    state = st.session_state
    lo_key, hi_key = f"{page}_y_low_{where}", f"{page}_y_high_{where}"
    if lo_key in state and hi_key in state:
        lo, hi = state[lo_key], state[hi_key]
    else:
        kept = state.get(STORE, {}).get(where, {}).get("y_range")
        lo, hi = kept if kept else ((0.0, 1.0) if ds.origin == "sample" else (None, None))
    return lo is not None and hi is not None and hi > lo


def _declared_public_spectra(ds, response: str) -> bool:
    """Whether public spectra are declared for the edPLS fit: kept from an upload, being uploaded, or a sample
    set's published reference spectra with their checkbox on (its default)."""
    state = st.session_state
    if state.get(STORE, {}).get(data_key(ds, response), {}).get("public_spectra") or state.get("edpls_public_upload"):
        return True
    sample = SAMPLE_SETS.get(getattr(ds, "key", None) or "") if ds.origin == "sample" else None
    return bool(sample and sample.public_reference and state.get(f"edpls_public_reference_{sample.key}", True))


def planner_section(page: str, ds, response: str, problem, budget) -> Plan:
    """The plan in a box titled "Before you fit" (edPLS: public spectra as declared; DP-PCR: none)."""
    public = page == "edpls" and _declared_public_spectra(ds, response)
    plan = plan_for_problem(problem, budget.epsilon, budget.delta,
                            y_range_declared=_declared_range(page, ds, response), public_spectra=public)
    with st.container(border=True):
        st.markdown("**Before you fit: what to expect**")
        if not plan.applicable:
            st.caption(plan.text)
            return plan
        rows = plan.rows_to_half_sd
        need = ("reached already" if plan.expected_ratio <= 0.5 else
                f"more than {plan.max_rows:,}" if rows is None else f"about {rows:,}")
        st.markdown(f"Expected private RMSEP **≈ {plan.expected_ratio:.2g} σ_y** · training rows for RMSEP = 0.5 σ_y "
                    f"at ε = {budget.epsilon:g}: **{need}**")
        st.markdown(plan.text)
        if page == "dp_pcr":
            st.caption(DP_PCR_NOTE)
    return plan
