"""Fits and sweeps of an uploaded data set run in budgeted workers on every page (issue #20).

Oracles: the in-process result of the same call (a known noise seed), the runner's own counters (a job was
submitted, left the line), and the page's messages. Budgets are small (300 MB) so every test takes seconds.
"""
from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ui.runtime import jobs
from ui.runtime.jobs import JobRunner

ROOT = Path(__file__).resolve().parents[1]


class CountingRunner(JobRunner):
    """A JobRunner that remembers the labels of the jobs submitted to it."""

    def __init__(self, max_jobs: int = 2):
        super().__init__(max_jobs)
        self.labels = []

    def submit(self, fn, *args, **kwargs):
        self.labels.append(kwargs.get("label", ""))
        return super().submit(fn, *args, **kwargs)


def _spectra(n: int, d: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2)) @ rng.normal(size=(2, d)) * 0.1 + 0.5 + 0.01 * rng.normal(size=(n, d))
    frame = pd.DataFrame(X.round(5), columns=[str(1100 + 2 * j) for j in range(d)])
    frame["oil"] = (3 + X[:, 0]).round(4)
    return frame


@pytest.mark.slow  # among the suite's slowest (pytest --durations): out of the fast lane
def test_an_edpls_sweep_in_a_worker_is_the_sweep_in_process():
    """The page's sweep (ui.edpls.tasks.edpls_sweep) in a worker, progress included, equals the in-process one at
    a known noise seed."""
    from engine.methods.edpls.pipeline import strict_params
    from ui.edpls.tasks import edpls_sweep

    frame = _spectra(40, 20)
    X, y = frame.drop(columns="oil").to_numpy(), frame["oil"].to_numpy()
    train, test = np.arange(30), np.arange(30, 40)
    params = strict_params(n_components=2, epsilon=1.0, delta=1e-5, calibration="analytic", x_bound=10.0,
                           y_bound=10.0)
    sweep_params = {k: v for k, v in params.items() if k not in ("n_components", "epsilon", "caveats")}
    args = (X, y, train, test, ("none",), (1.0, 10.0), 2, 3, sweep_params, 7)
    seen = []
    there = JobRunner(1).run(edpls_sweep, *args, on_progress=lambda f, t: seen.append(f), every=0.02,
                             recommended=((0.0, 10.0), None))
    here = edpls_sweep(*args, recommended=((0.0, 10.0), None))
    pd.testing.assert_frame_equal(there, here)
    assert seen and max(seen) <= 1.0


@pytest.mark.slow  # among the suite's slowest (pytest --durations): out of the fast lane
def test_a_dp_pcr_sweep_of_an_upload_runs_in_a_worker_with_progress(monkeypatch):
    """DP-PCR on an upload: the fit and the RMSEP sweep are jobs of the runner; the sweep's progress reaches the
    page's bar (its texts carry the sweep's steps) and its curves are shown."""
    from streamlit.testing.v1 import AppTest

    import ui.progress as progress

    runner = CountingRunner()
    monkeypatch.setattr(jobs, "RUNNER", runner)
    texts = []
    original = progress._EtaBar.progress

    def spy(self, value, text=None):
        texts.append(text)
        return original(self, value, text)

    monkeypatch.setattr(progress._EtaBar, "progress", spy)
    frame = _spectra(30, 12, seed=3)
    at = AppTest.from_file(str(ROOT / "pages" / "dp_pcr.py"), default_timeout=120)
    at.session_state["dp_pcr_data_source"] = "Upload a file"
    at.run()
    at.file_uploader(key="dp_pcr_data_upload").set_value(("pcr.csv", frame.to_csv(index=False).encode(),
                                                          "text/csv")).run()
    # the "Public information" panel: a range for y (the bound on |y| is derived from it)
    low = [n for n in at.number_input if n.key.startswith("dp_pcr_y_low")]
    high = [n for n in at.number_input if n.key.startswith("dp_pcr_y_high")]
    assert low and high, [n.key for n in at.number_input]
    low[0].set_value(-10.0)
    high[0].set_value(10.0).run()
    assert not at.exception, at.exception
    assert "The DP-PCR fit on pcr.csv" in runner.labels, runner.labels
    at.number_input(key="dp_pcr_reps").set_value(5)
    at.text_input(key="dp_pcr_eps_grid").set_value("1, 10")
    at.button(key="dp_pcr_run_sweep").click().run()
    assert not at.exception, at.exception
    assert "The sweep on pcr.csv" in runner.labels, runner.labels
    assert at.session_state["dp_pcr_curves"] is not None and len(at.session_state["dp_pcr_curves"]) > 0
    assert any(t and ("ε" in t or "eps" in t.lower()) for t in texts), texts


def test_a_sample_set_fit_stays_in_the_server_process(monkeypatch):
    from streamlit.testing.v1 import AppTest

    runner = CountingRunner()
    monkeypatch.setattr(jobs, "RUNNER", runner)
    at = AppTest.from_file(str(ROOT / "pages" / "dp_pcr.py"), default_timeout=120).run()
    assert not at.exception, at.exception
    assert runner.labels == []


def _other_session(results: list) -> None:
    """Another user's session on DP-PCR with a sample set, run while the first one's job is in its worker."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "pages" / "dp_pcr.py"), default_timeout=120).run()
    results.append((at.exception, [m.label for m in at.metric]))


@pytest.mark.slow  # among the suite's slowest (pytest --durations): out of the fast lane
def test_a_strict_edpls_fit_past_the_memory_budget_ends_on_its_page_and_another_session_carries_on(monkeypatch):
    """A real fit that needs more memory than the budget: strict edPLS releases the (d+1) x (d+1) second-moment
    matrix, ~290 MB for 6000 channels and its noise as much again, past a 300 MB budget. The page names the file and
    the budget and keeps the upload; a second session, run at the same time, fits its sample set."""
    from streamlit.testing.v1 import AppTest

    monkeypatch.setattr(jobs, "MEMORY_MB", 300)
    frame = _spectra(40, 6000, seed=1)
    at = AppTest.from_file(str(ROOT / "pages" / "edpls.py"), default_timeout=180)
    at.session_state["pl_mode"] = "strict"
    at.session_state["edpls_strict_estimator"] = "plain"
    at.session_state["edpls_data_source"] = "Upload a file"
    at.run()
    at.file_uploader(key="edpls_data_upload").set_value(("wide.csv", frame.to_csv(index=False).encode(),
                                                          "text/csv")).run()
    assert not at.exception, at.exception
    # the "Public information" panel: a range for y (the bound on |y| is derived from it)
    low = [n for n in at.number_input if n.key.startswith("edpls_y_low")]
    high = [n for n in at.number_input if n.key.startswith("edpls_y_high")]
    assert low and high, [n.key for n in at.number_input]
    low[0].set_value(-10.0)
    other = []
    thread = threading.Thread(target=_other_session, args=(other,))
    start = time.monotonic()
    thread.start()
    high[0].set_value(10.0).run()
    thread.join(180)
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert any("The edPLS fit on wide.csv needed more than the 300 MB memory budget" in e for e in errors), errors
    assert at.session_state["pl_dataset"].name == "wide.csv"
    assert time.monotonic() - start < 150
    assert other and not other[0][0], other
    assert any("RMSEP" in label for label in other[0][1]), other


def _queued_fit_script():
    import streamlit as st

    from tests.jobs_helpers import sleep_then
    from ui.jobs_view import fit_wait
    from ui.runtime import jobs

    st.text_input("A setting", "kept", key="setting")
    with fit_wait("demo_fit"):
        st.session_state["result"] = jobs.run_upload(True, sleep_then, 0.0, "fitted", label="The demo fit")
    st.write("done")


@pytest.mark.slow  # among the suite's slowest (pytest --durations): out of the fast lane
def test_cancel_of_a_queued_fit_takes_it_out_of_the_line_and_keeps_the_page(monkeypatch):
    """max_jobs=1 and a job running: the page's fit shows "Fitting: 1st in line"; Cancel (its on_click, then the
    stop the click causes) takes it out of the line while the other job runs on; the next run says it was cancelled,
    keeps the page's settings and offers "Fit again", which fits."""
    from streamlit.runtime.scriptrunner_utils.exceptions import StopException
    from streamlit.testing.v1 import AppTest

    import ui.jobs_view as view
    from tests.jobs_helpers import sleep_then

    runner = JobRunner(max_jobs=1)
    monkeypatch.setattr(jobs, "RUNNER", runner)
    blocker = runner.submit(sleep_then, 6.0, "first", seconds=30)
    shown, t0 = [], time.monotonic()
    original_text = view.wait_text

    def spy_text(what, job):
        text = original_text(what, job)
        shown.append(text)
        return text

    def click_cancel_after_a_while():
        import streamlit as st

        if shown and time.monotonic() - t0 > 1.5:
            view._mark_cancelled("demo_fit")  # the Cancel button's on_click
            assert st.session_state["demo_fit_job"] == "cancelled"
            raise StopException()  # the stop its click causes in the waiting run

    monkeypatch.setattr(view, "wait_text", spy_text)
    monkeypatch.setattr(view, "stop_check", click_cancel_after_a_while)
    at = AppTest.from_function(_queued_fit_script, default_timeout=30).run()
    first = "Fitting: 1st in line for a worker (at most 1 files or fits at once)"
    assert any(t.startswith(first) for t in shown), shown
    assert runner.queued() == 0 and runner.running() == 1  # out of the line; the other job runs on
    assert not blocker.done()
    assert "result" not in at.session_state
    monkeypatch.setattr(view, "stop_check", lambda: None)
    at.run()
    assert any("was cancelled before it finished" in i.value for i in at.info), [i.value for i in at.info]
    assert at.text_input(key="setting").value == "kept"
    assert not [m for m in at.markdown if m.value == "done"]
    at.button(key="demo_fit_again").click().run(timeout=30)
    assert at.session_state["result"] == "fitted"
    assert blocker.result(timeout=10) == "first"


@pytest.mark.slow  # 11 s (pytest --durations, load 7-15, 2026-11-27): out of the fast lane
def test_uploaded_public_files_are_read_in_a_worker(monkeypatch):
    """The public spectra (edPLS) and public rows (PCA-Gauss) uploads go through the runner: a table comes back, a
    10^6-column file comes back as its refusal naming the file."""
    from tests.bombs import csv_million_columns
    from ui.edpls.strict import _read_public
    from ui.pca_gauss.setup import public_table

    runner = CountingRunner()
    monkeypatch.setattr(jobs, "RUNNER", runner)
    good = b"a,b\n1.0,2.0\n3.0,4.0\n5.0,6.5\n"
    _read_public.clear()
    public_table.clear()
    df, problem = _read_public(good, "pub.csv")
    assert problem is None and df.shape == (3, 2)
    df, problem = _read_public(csv_million_columns(), "wide_pub.csv")
    assert df is None and problem.startswith("wide_pub.csv: ") and "1,000,000 columns" in problem
    assert public_table(good, "rows.csv")["b"].tolist() == [2.0, 4.0, 6.5]
    assert runner.labels == ["Reading pub.csv", "Reading wide_pub.csv", "Reading rows.csv"]
