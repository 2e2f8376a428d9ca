"""Lazy tabs under AppTest (ui/tabs.py): only the open tab's content is run, so a test opens a tab the way the
browser does, by its key in the session state, then reads that tab's elements."""
from __future__ import annotations


def open_tab(at, key: str, label: str):
    """Open the tab ``label`` of the lazy tabs ``key`` (one rerun); returns the tab block."""
    at.session_state[key] = label
    at.run()
    assert not at.exception, at.exception
    return tab_block(at, label)


def tab_block(at, label: str):
    found = [t for t in at.tabs if t.label == label]
    assert found, f"no tab {label!r} among {[t.label for t in at.tabs]}"
    return found[0]


def charts_in(block) -> int:
    return len(block.get("plotly_chart"))
