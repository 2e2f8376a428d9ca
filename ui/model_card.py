"""The declared-public names a page's regression release carries (``engine.release.travel.ModelCard``).

The channels and the response are the columns the user chose (names: structure, not values); the unit is typed
by the user (a public input, empty by default) and kept across pages under ``pl_response_unit``.
"""
from __future__ import annotations

import streamlit as st

from engine.release.travel import ModelCard
from ui.state import persisted

__all__ = ["model_card", "declared_unit", "response_metric", "MAX_LABEL"]

#: Longest metric label a tile shows uncut at 1280 px (four tiles a row); a unit that would push a label past it
#: goes into the value instead.
MAX_LABEL = 40


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


def declared_unit() -> str:
    """The response's unit the user declared (``pl_response_unit``, kept across pages), or "" when none."""
    return str(st.session_state.get("pl_response_unit", "") or "").strip()


def response_metric(col, label: str, value: str, response: str, what: str = "") -> None:
    """A metric tile measured in the response's unit (RMSEP, σ_y): the declared unit in the label, e.g.
    "RMSEP, private (% w/w)", or after the value when the label would exceed ``MAX_LABEL``; without a declared
    unit the help says the value is in the response's unit."""
    unit = declared_unit()
    lead = f"{what} " if what else ""
    if not unit:
        col.metric(label, value, help=f"{lead}In the unit of the response '{response}' (the unit of your data).")
        return
    help_ = f"{lead}In {unit}, the unit declared for the response '{response}'."
    with_unit = f"{label} ({unit})"
    if len(with_unit) <= MAX_LABEL:
        col.metric(with_unit, value, help=help_)
    else:
        col.metric(label, f"{value} {unit}", help=help_)
