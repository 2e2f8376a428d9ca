"""Lazy tabs: only the open tab's content is computed (one helper for every page).

``st.tabs`` computes and sends every tab's content on each run, so a page's hidden tabs (sweeps, ledgers,
scores) delay its first chart. With ``on_change="rerun"`` and a key (Streamlit 1.67), a click on a tab reruns
the page and each ``TabContainer.open`` says whether it is the open one; this module builds on that.

Widgets in a tab that is not open are not created during that run, and Streamlit drops the state of widgets a
run did not create: switching tabs would reset a tab's own settings (an ε grid, a replicate count). So the
helper notes the keys of the widgets each tab created while it was open and, while it is hidden, writes their
values back into ``st.session_state`` (Streamlit's documented way to keep a widget's value while it is not
shown); they come back unchanged when the tab opens again.

Usage::

    tabs = lazy_tabs(["Forecasts", "Skill"], key="var_admm_tabs")
    tabs.show("Forecasts", forecasts_tab, setup, fit)   # runs forecasts_tab only while its tab is open
    tabs.show("Skill", skill_tab, fit)

or, as a loop::

    for label, tab, is_open in lazy_tabs(labels, key="..."):
        if is_open:
            with tab:
                ...

The open tab is ``st.session_state[key]`` (a label); setting it before the page runs opens that tab (AppTest,
links). ``tabs.is_open(label)`` tells whether a tab is the open one.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import streamlit as st
from streamlit.errors import StreamlitAPIException

__all__ = ["LazyTabs", "lazy_tabs"]


def _widget_ids_this_run() -> frozenset:
    """Ids of the widgets created so far in this run (empty outside a Streamlit run)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None:
        return frozenset()
    # Streamlit internals, not API: from about 1.60 the set sits behind ``ctx.shared`` with a snapshot();
    # older ones kept a plain set on the context.
    ids = getattr(ctx, "shared", ctx).widget_ids_this_run
    return frozenset(ids.snapshot() if hasattr(ids, "snapshot") else ids)


# Widget values that st.session_state may be given (buttons, uploads, editors and chart selections may not)
_WRITABLE = {"bool_value", "double_value", "int_value", "string_value", "double_array_value", "int_array_value",
             "string_array_value"}


def _user_key(widget_id: str) -> str | None:
    """The user key inside a keyed widget's id (``$$ID-<hash>-<key>``), None for a widget without key."""
    parts = str(widget_id).split("-", 2)
    if len(parts) != 3 or parts[2] == "None":
        return None
    return parts[2]


def _kept_keys(widget_ids) -> list:
    """User keys of the widgets among ``widget_ids`` whose values can be written back (settings, not triggers).
    Streamlit's widget metadata is internal: when it cannot be read, nothing is kept (the settings of a hidden
    tab then reset to their defaults; nothing breaks)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    try:
        meta = get_script_run_ctx().session_state._state._new_widget_state.widget_metadata
    except AttributeError:
        return []
    keys = set()
    for wid in widget_ids:
        key, info = _user_key(wid), meta.get(wid)
        if key is not None and info is not None and getattr(info, "value_type", None) in _WRITABLE:
            keys.add(key)
    return sorted(keys)


class LazyTabs:
    """``st.tabs`` whose hidden tabs compute nothing (see the module docstring)."""

    def __init__(self, labels: Sequence[str], key: str):
        self.labels = list(labels)
        self.key = key
        self._registry_key = f"{key}__widget_keys"
        containers = st.tabs(self.labels, key=key, on_change="rerun")
        self._tabs = dict(zip(self.labels, containers))
        self._widget_keys: dict = st.session_state.setdefault(self._registry_key, {})

    def tab(self, label: str):
        return self._tabs[label]

    def is_open(self, label: str) -> bool:
        state = self._tabs[label].open
        return True if state is None else bool(state)  # None: the tabs track no state (never here)

    def show(self, label: str, render: Callable, *args, **kwargs):
        """``render(*args, **kwargs)`` inside the tab when it is open (its result returned); else None, and the
        tab's widget values are kept for when it opens again."""
        if not self.is_open(label):
            self._keep_hidden_widgets(label)
            return None
        before = _widget_ids_this_run()
        with self._tabs[label]:
            result = render(*args, **kwargs)
        self._widget_keys[label] = _kept_keys(_widget_ids_this_run() - before)
        return result

    def _keep_hidden_widgets(self, label: str) -> None:
        for k in self._widget_keys.get(label, ()):
            try:
                if k in st.session_state:
                    st.session_state[k] = st.session_state[k]
            except StreamlitAPIException:  # the same key was already created elsewhere in this run
                pass

    def __iter__(self) -> Iterator[tuple]:
        """(label, tab, is_open) per tab; a hidden tab's widget values are kept, an open tab's widgets noted
        once the loop body has run."""
        for label in self.labels:
            if not self.is_open(label):
                self._keep_hidden_widgets(label)
                yield label, self._tabs[label], False
                continue
            before = _widget_ids_this_run()
            yield label, self._tabs[label], True
            self._widget_keys[label] = _kept_keys(_widget_ids_this_run() - before)


def lazy_tabs(labels: Sequence[str], key: str) -> LazyTabs:
    """Tabs of which only the open one computes its content; ``key`` is stable per page (e.g. "p3ls_tabs")."""
    return LazyTabs(labels, key)
