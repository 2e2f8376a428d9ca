"""User choices kept in ``st.session_state`` across pages.

Streamlit deletes a widget's state when a page without that widget runs, so every shared
choice lives under a plain key (``pl_*``) and the widgets copy into it on change.

The chosen data set is ``pl_dataset`` (``ui.dataset.Dataset``). Each page's picker widgets have their own
keys (``<page>_data_source``, ...), dropped when another page runs; on its next visit the picker sets its
"Data source" radio from ``pl_dataset``'s origin before drawing it (never through the widget's default, which
Streamlit would ignore or warn about once the key holds a value).

A page's own choices (the response, the X columns, the preprocessing chain) keep their widget keys, which name the
data set, and are kept in ``pl_kept`` (widget key -> value when last drawn) by ``keep``; ``remembered`` gives it
back as the widget's default when the widget is drawn again after another page ran (``restore`` writes it back to
the widget's key, for widgets drawn without a default) (issue 31: a choice is not lost on a page switch).
"""
from __future__ import annotations

import streamlit as st

DEFAULTS = {
    "pl_epsilon": 1.0,
    "pl_delta": 1e-5,
    "pl_mode": "strict",
    "pl_calibration": "analytic",
    "pl_reproducible": False,
}


def use_app_navigation() -> None:
    """Make a deep link (``/edpls`` opened directly) run through app.py's ``st.navigation``.

    Streamlit decides once per server process, from the mere existence of a ``pages/`` folder, to treat
    the app as a legacy folder-of-pages app until some run calls ``st.navigation``. If the first request
    after a start is a deep link, Streamlit then runs ``pages/<name>.py`` on its own: no page config, no
    sections in the sidebar, page names from file names. Clearing that flag and rerunning once makes this
    and every later run go through app.py, whatever page the link names (the URL is kept).
    """
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # a Streamlit without the legacy mode: nothing to undo
        return
    if getattr(PagesManager, "uses_pages_directory", False):
        PagesManager.uses_pages_directory = False
        st.rerun()


def init_state() -> None:
    """Create the shared keys once per session (and route a deep link through app.py first)."""
    use_app_navigation()
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, value)


#: Widget values kept across pages: widget key -> the value the widget had when it was last drawn.
KEPT = "pl_kept"


def restore(key: str, valid=None) -> bool:
    """Before drawing the widget ``key``: when Streamlit dropped its state (a page without it ran), put back the
    value it had when last drawn (when ``valid(value)``, if given). Returns whether the key holds a value now: the
    widget is then drawn without a default (Streamlit warns when both are set)."""
    state = st.session_state
    if key not in state:
        kept = state.get(KEPT, {})
        if key in kept and (valid is None or valid(kept[key])):
            state[key] = kept[key]
    return key in state


def remembered(key: str, default, valid=None):
    """The value to draw the widget ``key`` with: the one it had when last drawn (kept across pages, when
    ``valid(value)``, if given), else ``default``. Streamlit ignores it while the widget's own state is alive."""
    kept = st.session_state.get(KEPT, {})
    if key in kept and (valid is None or valid(kept[key])):
        return kept[key]
    return default


def keep(key: str, value):
    """After drawing the widget ``key``: remember its value for ``restore``; returns ``value``."""
    st.session_state.setdefault(KEPT, {})[key] = value
    return value


def persisted(widget_key: str, store_key: str):
    """on_change callback copying a widget's value into its persistent key."""

    def _copy():
        st.session_state[store_key] = st.session_state[widget_key]

    return _copy
