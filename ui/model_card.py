"""The declared-public names a page's regression release carries (``engine.release.travel.ModelCard``).

The channels and the response are the columns the user chose (names: structure, not values); the unit is typed
by the user (a public input, empty by default) and kept across pages under ``pl_response_unit``.
"""
from __future__ import annotations

import streamlit as st

from engine.release.travel import ModelCard
from ui.state import persisted

__all__ = ["model_card"]


def model_card(page: str, channels, response: str, chain: str = "none") -> ModelCard:
    """A text input for the response's unit (public) and the ModelCard of this fit's release."""
    key = f"{page}_unit"
    if key not in st.session_state:
        st.session_state[key] = st.session_state.get("pl_response_unit", "")
    unit = st.text_input(f"Unit of {response} (public, written into the model file)", key=key,
                         on_change=persisted(key, "pl_response_unit"),
                         help="e.g. '% w/w'; the shareable release carries it beside the channel and response names, "
                              "so that the model can be applied elsewhere (Apply a model, `privalab predict`)")
    return ModelCard([str(c) for c in channels], str(response), unit.strip(), chain)
