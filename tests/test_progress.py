"""ui.progress.Sweep: the cancel path of every sweep behind a progress bar, under AppTest.

AppTest cannot click while a script runs, so a run is cut short the way Streamlit does it when the
browser sends a click: the script stops at a progress update (here ``st.stop()`` at step 3), with
the Cancel button already on the page; the test then clicks Cancel, which starts the next run.
"""
from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
PAGES_USING_IT = {
    "pages/edpls.py": ("edpls_sweep", "edpls_simulate"),
    "pages/pca_gauss.py": ("pg_sweep",),
    "pages/dp_cca.py": ("dp_cca_sweeps",),
    "pages/attack_lab.py": ("attack_sweep",),
    "pages/privacy_audit.py": ("audit",),
    "pages/var_admm.py": ("var_admm_sweep",),
}


def _button_app():

    import streamlit as st

    from ui.progress import Sweep

    sweep = Sweep("demo", "demo sweep")
    if st.button("Run", key="run"):
        try:
            with sweep.running("starting") as bar:
                for i in range(5):
                    bar.progress((i + 1) / 5, text=f"step {i + 1}")
                    if i == 2 and st.session_state.get("cut"):
                        st.stop()  # what a click in the browser does at this progress update
                    if i == 2 and st.session_state.get("fail"):
                        raise ValueError("bad input")
        except ValueError as err:
            st.error(f"refused: {err}")
        else:
            st.session_state["results"] = st.session_state.get("results", 0) + 1
    st.write(f"results: {st.session_state.get('results', 0)}")


def _auto_app():

    import streamlit as st

    from ui.progress import Sweep

    sweep = Sweep("auto", "auto sweep", auto=True)
    if sweep.should_run():
        with sweep.running() as bar:
            for i in range(3):
                bar.progress((i + 1) / 3)
                if i == 1 and st.session_state.get("cut"):
                    st.stop()
        st.session_state["runs"] = st.session_state.get("runs", 0) + 1
    st.write(f"runs: {st.session_state.get('runs', 0)}")


def _app(fn) -> AppTest:
    at = AppTest.from_function(fn, default_timeout=30)
    at.session_state["root"] = str(ROOT)
    at.run()
    assert not at.exception, at.exception
    return at


def _text(at) -> str:
    return " ".join(m.value for m in at.markdown)


def _infos(at) -> str:
    return " ".join(i.value for i in at.info)


def test_a_finished_sweep_leaves_no_cancel_button_and_no_notice():
    at = _app(_button_app)
    at.button(key="run").click().run()
    assert not at.exception
    assert "results: 1" in _text(at)
    assert at.session_state["demo__sweep"] is None
    assert not any(b.key == "demo_cancel" for b in at.button)  # bar and button are removed at the end
    at.run()
    assert not at.info


def test_cancel_click_stops_the_sweep_says_so_and_keeps_the_previous_results():
    at = _app(_button_app)
    at.button(key="run").click().run()  # one complete run: the "previous results"
    at.session_state["cut"] = True
    at.button(key="run").click().run()  # the next run is stopped at step 3 ...
    assert at.session_state["demo__sweep"] == "running"
    cancel = at.button(key="demo_cancel")  # ... with the Cancel button on the page
    assert cancel.label == "Cancel"
    at.session_state["cut"] = False
    cancel.click().run()
    assert not at.exception
    assert "demo sweep was cancelled" in _infos(at)
    assert "results: 1" in _text(at)  # the interrupted run stored nothing; the earlier result stays
    assert at.session_state["demo__sweep"] is None
    at.run()  # said once
    assert "cancelled" not in _infos(at)
    at.button(key="run").click().run()  # and the sweep still works
    assert "results: 2" in _text(at) and not at.exception


def test_a_run_stopped_by_another_widget_is_reported_as_interrupted():
    at = _app(_button_app)
    at.session_state["cut"] = True
    at.button(key="run").click().run()
    at.session_state["cut"] = False
    at.run()  # any rerun that is not the Cancel click (another widget, leaving the page)
    assert "demo sweep was interrupted" in _infos(at) and "cancelled" not in _infos(at)
    assert "results: 0" in _text(at) and not at.exception


def test_an_error_inside_the_sweep_is_the_page_s_error_not_a_cancellation():
    at = _app(_button_app)
    at.session_state["fail"] = True
    at.button(key="run").click().run()
    assert "refused: bad input" in " ".join(e.value for e in at.error)
    assert at.session_state["demo__sweep"] is None
    at.run()
    assert not at.info and not at.exception


def test_an_automatic_sweep_stays_paused_after_cancel_until_restarted():
    at = _app(_auto_app)
    assert "runs: 1" in _text(at)
    at.session_state["cut"] = True
    at.run()  # stopped in the middle
    at.session_state["cut"] = False
    at.button(key="auto_cancel").click().run()
    assert "auto sweep was cancelled" in _infos(at) and "runs: 1" in _text(at)
    at.run()  # still paused: reruns do not start it again
    assert "auto sweep was cancelled" in _infos(at) and "runs: 1" in _text(at)
    at.button(key="auto_rerun").click().run()
    assert "runs: 2" in _text(at) and not at.info and not at.exception
    at.session_state["cut"] = True
    at.run()
    at.session_state["cut"] = False
    at.run()  # stopped by another widget: an automatic sweep simply runs again, quietly
    assert "runs: 3" in _text(at) and not at.info


def test_every_sweep_behind_a_progress_bar_uses_the_helper():
    for page, keys in PAGES_USING_IT.items():
        src = (ROOT / page).read_text()
        assert "from ui.progress import Sweep" in src, page
        for key in keys:
            assert f'Sweep("{key}"' in src, (page, key)
        assert "st.progress(" not in src, f"{page}: a progress bar without the cancel path"
