"""ui.progress.Sweep: the cancel path of every sweep behind a progress bar, under AppTest.

AppTest cannot click while a script runs, so a run is cut short the way Streamlit does it when the
browser sends a click: the script stops at a progress update (here ``st.stop()`` at step 3), with
the Cancel button already on the page; the test then clicks Cancel, which starts the next run.
"""
from __future__ import annotations

import math
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
PAGES_USING_IT = {
    "ui/edpls/analysis.py": ("edpls_sweep", "edpls_simulate"),  # the edPLS page's sweeps (pages/edpls.py: entry)
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
        body = ROOT / "ui" / Path(page).stem / "sections.py"  # the page's body, beside its entry point
        src = (ROOT / page).read_text() + (body.read_text() if body.exists() else "")
        assert "from ui.progress import Sweep" in src, page
        for key in keys:
            assert f'Sweep("{key}"' in src, (page, key)
        assert "st.progress(" not in src, f"{page}: a progress bar without the cancel path"


# ----------------------------------------------------------------------------------- remaining-time estimate
def test_remaining_time_is_the_measured_rate_times_what_is_left():
    from ui.progress import remaining_seconds

    assert remaining_seconds(10.0, 0.25) == pytest.approx(30.0)  # 10 s for a quarter: 30 s for the rest
    assert remaining_seconds(22.0, 0.5) == pytest.approx(22.0)
    assert remaining_seconds(1.0, 0.999) == pytest.approx(0.001 / 0.999)
    # nothing measured yet (before the first part), done, or nonsense: no estimate
    for elapsed, done in [(0.0, 0.5), (5.0, 0.0), (5.0, 1.0), (5.0, 1.2), (5.0, -0.1), (math.nan, 0.5),
                          (5.0, math.nan), (-1.0, 0.5)]:
        assert remaining_seconds(elapsed, done) is None, (elapsed, done)


def test_remaining_time_in_words():
    from ui.progress import eta_text

    assert eta_text(None) == "" and eta_text(math.inf) == "" and eta_text(-3.0) == ""
    assert eta_text(3.2) == "a few seconds left"
    assert eta_text(38.0) == "about 40 s left"
    assert eta_text(12.4) == "about 10 s left"
    assert eta_text(95.0) == "about 1.5 min left"
    assert eta_text(200.0) == "about 3.5 min left"
    assert eta_text(1500.0) == "about 25 min left"
    assert eta_text(2.5 * 3600) == "about 2.5 h left"


def test_the_estimate_follows_each_part_and_keeps_the_page_s_text(monkeypatch):
    import ui.progress as progress

    shown = []

    class Bar:
        def progress(self, value, text=None):
            shown.append((value, text))

        def empty(self):
            return "emptied"

    clock = iter([100.0, 120.0, 140.0])  # 4-part sweep: 10 s at its start, 20 s per part after
    monkeypatch.setattr(progress.time, "perf_counter", lambda: next(clock))
    bar = progress._EtaBar(Bar(), start=90.0)
    bar.progress(0.0, text="chain 1")  # nothing measured yet
    bar.progress(0.25, text="chain 1 done")  # 30 s for a quarter
    bar.progress(50, text=None)  # an int is a percentage, as in st.progress
    assert shown == [(0.0, "chain 1"), (0.25, "chain 1 done · about 1.5 min left"), (50, "about 50 s left")]
    assert bar.empty() == "emptied"  # the bar's other methods pass through


def test_a_running_sweep_shows_its_remaining_time():
    at = _app(_slow_app)
    at.session_state["cut"] = True
    at.button(key="run").click().run()  # stopped at step 3 of 5: the bar is still on the page
    texts = [p.proto.text for p in at.get("progress")]
    assert any(t.startswith("step 3 · ") and t.endswith("left") for t in texts), texts


def _slow_app():
    import time

    import streamlit as st

    from ui.progress import Sweep

    sweep = Sweep("slow", "slow sweep")
    if st.button("Run", key="run"):
        with sweep.running("starting") as bar:
            for i in range(5):
                time.sleep(0.05)
                bar.progress((i + 1) / 5, text=f"step {i + 1}")
                if i == 2 and st.session_state.get("cut"):
                    st.stop()
