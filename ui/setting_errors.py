"""Errors about a setting say where the setting is (issue 31, item 7).

The engine's messages name parameters (``n_components``, ``block_size``, "response"); a page passes its own
widget labels and the words of the engine message that point at each one, and the message shown ends with where
to change it. Written by hand: no kept library maps messages to widgets.
"""
from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

__all__ = ["where_to_change", "setting_error"]

#: (words of an engine message, lower case; where the setting is, with its real label: "in 'Penalty' under ...")
Places = Sequence[tuple[Sequence[str], str]]


def where_to_change(err: object, places: Places, fallback: str) -> str:
    """The sentence naming where to change what ``err`` is about: the first place (in the page's order, most
    specific first) whose words occur in the message, else ``fallback`` (the page's settings, by label)."""
    text = str(err).lower()
    found = next((place for words, place in places if any(w in text for w in words)), None)
    return f"Change it {found}." if found else fallback


def setting_error(prefix: str, err: object, places: Places, fallback: str) -> None:
    """``st.error`` with the engine's message and where to change the setting it is about."""
    st.error(f"{prefix}: {str(err).rstrip('.')}. {where_to_change(err, places, fallback)}")
