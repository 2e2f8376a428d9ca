"""User choices kept in ``st.session_state`` across pages.

Streamlit deletes a widget's state when a page without that widget runs, so every shared
choice lives under a plain key (``pl_*``) and the widgets copy into it on change.
"""
from __future__ import annotations

import streamlit as st

DEFAULTS = {
    "pl_epsilon": 1.0,
    "pl_delta": 1e-5,
    "pl_mode": "strict",
    "pl_calibration": "analytic",
}


def init_state() -> None:
    """Create the shared keys once per session."""
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, value)


def persisted(widget_key: str, store_key: str):
    """on_change callback copying a widget's value into its persistent key."""

    def _copy():
        st.session_state[store_key] = st.session_state[widget_key]

    return _copy
