"""ui.tabs.lazy_tabs under AppTest: only the open tab runs, a hidden tab keeps its settings, buttons included."""
from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _app():
    import streamlit as st

    from ui.tabs import lazy_tabs

    runs = st.session_state.setdefault("runs", {"A": 0, "B": 0, "C": 0})

    def a():
        runs["A"] += 1
        return st.number_input("n", 1, 50, 3, key="n_a")

    def b():
        runs["B"] += 1
        st.button("go", key="b_go")  # a button's state may not be written back: the helper must skip it
        st.file_uploader("file", key="b_file")
        return st.multiselect("m", ["x", "y", "z"], default=["x"], key="m_b")

    tabs = lazy_tabs(["A", "B", "C"], key="tt")
    st.write(f"a={tabs.show('A', a)} b={tabs.show('B', b)}")
    for label, tab, is_open in lazy_tabs(["C", "D"], key="loop"):  # the loop form
        if is_open:
            runs["C"] += 1
            with tab:
                st.write(f"open {label}")


def _text(at) -> str:
    return " | ".join(m.value for m in at.markdown)


def _open(at, key, label):
    at.session_state[key] = label
    at.run()
    assert not at.exception, at.exception


def test_only_the_open_tab_runs_and_hidden_settings_are_kept():
    at = AppTest.from_function(_app, default_timeout=30)
    at.run()
    assert not at.exception, at.exception
    assert "a=3 b=None" in _text(at) and "open C" in _text(at)
    assert at.session_state["runs"] == {"A": 1, "B": 0, "C": 1}  # the hidden tab B never ran
    at.number_input(key="n_a").set_value(7).run()
    _open(at, "tt", "B")
    assert "a=None b=['x']" in _text(at)
    assert at.session_state["runs"]["A"] == 2  # the first run and the set_value rerun, not the run that opened B
    at.multiselect(key="m_b").set_value(["y", "z"]).run()
    at.button(key="b_go").click().run()
    assert not at.exception, at.exception
    _open(at, "tt", "A")
    assert "a=7 b=None" in _text(at)  # A's setting survived its time hidden
    _open(at, "tt", "B")
    assert "b=['y', 'z']" in _text(at)  # and B's (the button and the uploader were skipped)
    assert not at.warning  # no "default value and session state" warning
    _open(at, "loop", "D")
    assert "open C" not in _text(at)
