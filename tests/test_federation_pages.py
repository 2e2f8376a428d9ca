"""The pages' "Run over Flower (one process per party)" section (ui/federation_run.py), under AppTest.

One Flower run per page on the page's own sample data (slow: a SuperLink and one SuperNode process per
party start, a few rounds of seconds each). Oracle: the in-process run beside it (largest difference
<= 1e-9 for P3LS with the same log; VAR-ADMM: the page's converged fit in both, its own messages over Flower);
the federation is the browser session's (engine/federation/flower/session.py), stopped after each test here.
The data owner's verdict box (gain, risk, cost) is shown under the runs.

Progress and Cancel: the bar's texts are recorded where every page's sweep draws them (``ui.progress._EtaBar``);
a Cancel is what Streamlit does on the button's click (the script stops at its next progress report), and the
oracle of "no process left" is /proc: no process below this one, and none naming the federation's ports or
directory, still runs a Flower program.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from ui.federation_run import SECTION_TITLE, log_comparison, p3ls_has_flower, progress_text

ROOT = Path(__file__).resolve().parents[1]

pytest.importorskip("flwr")


@pytest.fixture(autouse=True)
def _stop_session_federations():
    from engine.federation.flower.session import stop_all

    yield
    stop_all()


def _verdict(at) -> str:
    return next((m.value for m in at.markdown if m.value.startswith("- **Gain.**")), "")


def _metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


@pytest.fixture
def bar_texts(monkeypatch):
    """Every text the sweep bars draw in this test (the Flower run's progress among them)."""
    import ui.progress

    texts: list[str] = []
    draw = ui.progress._EtaBar.progress

    def record(self, value, text=None):
        out = draw(self, value, text)
        texts.append(ui.progress.with_eta(text, time.perf_counter() - self._start, float(value)))
        return out

    monkeypatch.setattr(ui.progress._EtaBar, "progress", record)
    return texts


@pytest.fixture
def federations(monkeypatch):
    """The federations the session pool starts in this test."""
    from engine.federation.flower import session

    started = []
    running = session._running

    def spy(key, idle):
        entry = running(key, idle)
        started.append(entry.fed)
        return entry

    monkeypatch.setattr(session, "_running", spy)
    return started


def _flower_descendants() -> list[str]:
    """Command lines of this process's live descendants that run a Flower program (from /proc)."""
    parent, cmd = {}, {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if stat[0] == "Z":
                continue
            parent[int(entry.name)] = int(stat[1])
            cmd[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError, ValueError):
            continue
    mine, out = os.getpid(), []
    for pid, line in cmd.items():
        p, seen = parent.get(pid), 0
        while p not in (None, 0, 1, mine) and seen < 64:
            p, seen = parent.get(p), seen + 1
        if p == mine and ("flwr" in line or "flower" in line):
            out.append(f"{pid}: {line}")
    return out


def test_progress_text_counts_the_rounds_of_the_run():
    assert progress_text({"phase": "starting"})[0] == 0.0
    assert "SuperLink" in progress_text({"phase": "starting"})[1]
    assert "connect" in progress_text({"phase": "running"})[1]  # the ClientApps have not dialled in yet
    assert progress_text({"phase": "running", "connected": True, "rounds": 7, "iteration": 3}, iterations=6) == (
        0.5, "Over Flower: iteration 3 of about 6")
    assert progress_text({"phase": "running", "connected": True, "rounds": 1}, rounds=4) == (
        0.25, "Over Flower: channel round 1 of 4")
    # a run that needs more iterations than the in-process one never shows "done" before its result
    assert progress_text({"phase": "running", "connected": True, "iteration": 9}, iterations=6)[0] < 1


def test_log_comparison_says_same_when_counts_match_and_the_models_agree():
    import pandas as pd

    row = {"phase": "iteration", "sender": "a", "receiver": "central", "message": "m", "shape": "(3,)",
           "values sent": 3}
    local = pd.DataFrame([row, row])
    other = pd.DataFrame([row, {**row, "message": "Gram pieces"}])
    assert log_comparison(local, local.copy(), 1e-13, 1e-9).startswith("Same: the same messages")
    assert log_comparison(local, local.copy()).startswith("Same: the same messages")
    assert log_comparison(local, other, 4e-13, 1e-9).startswith("Same: 2 messages")
    assert log_comparison(local, other.iloc[:1], 0.0, 1e-9).startswith("Same model")
    assert "logs differ" in log_comparison(local, other.iloc[:1], 0.0, 1e-9)
    assert log_comparison(local, other, 1e-3, 1e-9).startswith("**The runs differ**")
    assert "models differ" in log_comparison(local, local.copy(), 1e-3, 1e-9)


def test_var_admm_page_runs_over_flower_beside_the_in_process_run(bar_texts, federations):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "pages" / "var_admm.py"), default_timeout=600)
    at.run()
    assert not at.exception, at.exception
    assert SECTION_TITLE in [h.value for h in at.subheader]
    at.button(key="var_admm_flower_button").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    metrics = _metrics(at)
    # the page's own fit (accelerated, tol 1e-6) in both runs: each stops when its next step moves no coefficient
    # by more than 1e-7 of the largest, so the two converged fits differ by about that, not by rounding
    assert float(metrics["Largest difference between the two runs"]) <= 1e-4
    assert int(metrics["Messages (log)"]) > 0 and int(metrics["Messages (log from the wire)"]) > 0
    assert int(metrics["Bytes measured on the wire"].replace(",", "")) > 0
    # same message count and the models within the stopping rule's tolerance: "Same"
    # the same fit in both runs (same iterations, models within rounding); the logs differ (the distributed
    # protocol's messages), and the page says which
    comparison = next(m.value for m in at.markdown if "message" in m.value and ("Same" in m.value or "differ" in
                                                                                  m.value))
    assert comparison.startswith("Same model") and "logs differ" in comparison, comparison
    # progress per round, with the time left (counted from the parties' connection)
    assert any("Starting the federation" in t for t in bar_texts), bar_texts
    rounds = [t for t in bar_texts if "Over Flower: iteration" in t]
    assert rounds and any("left" in t for t in rounds), bar_texts
    # the session's federation keeps running for the next run (stopped by the fixture, or when idle)
    assert federations and federations[0].processes["superlink"].poll() is None
    verdict = _verdict(at)
    assert "MAE" in verdict and "**Risk.**" in verdict and "bytes on the wire" in verdict, verdict
    # the result stays when another widget reruns the page
    at.run()
    assert "Flower wall time" in _metrics(at)


def test_p3ls_page_shows_the_flower_section(bar_texts):
    from streamlit.testing.v1 import AppTest

    if not (ROOT / "sample_data" / "value_chain.csv").exists():
        pytest.skip("sample_data/value_chain.csv not generated yet")
    at = AppTest.from_file(str(ROOT / "pages" / "p3ls.py"), default_timeout=600)
    at.run()
    assert not at.exception, at.exception
    assert SECTION_TITLE in [h.value for h in at.subheader]
    if not p3ls_has_flower():
        assert any("not in this build" in i.value for i in at.info)
        return
    at.button(key="p3ls_flower_button").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    metrics = _metrics(at)
    assert float(metrics["Largest difference between the two runs"]) <= 1e-9
    assert int(metrics["Messages (log)"]) == int(metrics["Messages (log from the wire)"]) > 0
    verdict = _verdict(at)
    assert "R²" in verdict and "must not collude" in verdict, verdict
    assert any(m.value.startswith("Same: the same messages") for m in at.markdown)
    assert any("Over Flower: channel round" in t for t in bar_texts), bar_texts


def test_cancel_stops_every_flower_process_of_the_run(federations, monkeypatch):
    """Cancel during the channel's rounds: the page says it was cancelled, and no process of the run is left."""
    from streamlit.runtime.scriptrunner_utils.exceptions import StopException
    from streamlit.testing.v1 import AppTest

    import ui.federation_run

    shown = ui.federation_run.FlowerProgress.__call__

    def cancel_at_first_round(self, status):
        shown(self, status)
        if status.get("connected"):  # as the Cancel button's click does: its on_click, then the script stops
            import streamlit as st

            st.session_state["var_admm_flower_run__sweep"] = "cancelled"
            raise StopException()

    monkeypatch.setattr(ui.federation_run.FlowerProgress, "__call__", cancel_at_first_round)
    at = AppTest.from_file(str(ROOT / "pages" / "var_admm.py"), default_timeout=600)
    at.run()
    at.button(key="var_admm_flower_button").click().run()
    assert not at.exception, at.exception
    assert federations, "the run never started a federation"
    fed = federations[-1]
    assert all(proc.poll() is not None for proc in fed.processes.values()), fed.processes
    assert fed.leftover_processes() == []
    assert _flower_descendants() == []
    assert not fed.workdir.exists()
    assert "Flower wall time" not in _metrics(at)
    at.run()
    assert any("cancelled" in i.value for i in at.info), [i.value for i in at.info]


def test_cancel_while_the_federation_starts_leaves_no_process(monkeypatch):
    """Cancel during the first run's longest phase (the SuperLink and SuperNodes starting): the start's waits
    report too, so the stop comes at once, and the half-started federation is stopped whole."""
    from engine.federation.flower.runtime import LocalFederation, watching
    from engine.federation.flower.session import shared_federation

    class Cancelled(BaseException):  # as Streamlit's stop: not an Exception
        pass

    started: list[LocalFederation] = []
    start = LocalFederation.start

    def remember(self):
        started.append(self)
        return start(self)

    def cancel_once_the_superlink_runs(status):
        if status["phase"] == "starting" and started and "superlink" in started[0].processes:
            raise Cancelled()

    monkeypatch.setattr(LocalFederation, "start", remember)
    with pytest.raises(Cancelled), watching(cancel_once_the_superlink_runs), \
            shared_federation(["0", "1"], owner="cancel-start-test"):
        pass
    fed = started[0]
    assert fed.processes and all(proc.poll() is not None for proc in fed.processes.values())
    assert fed.leftover_processes() == []
    assert _flower_descendants() == []
    assert not fed.workdir.exists()
