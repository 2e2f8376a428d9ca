"""The job runner (ui.runtime.jobs): memory and time budgets end one job, not the server; a bounded line of jobs.

Small budgets (300 MB, 2 s) keep every test within a few seconds, the forkserver's start-up included.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.data import DataError
from tests.jobs_helpers import allocate, fail_with_data_error, load_upload, sleep_then
from ui.runtime.jobs import JobCancelled, JobError, JobRunner, in_line, ordinal

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def runner():
    return JobRunner(max_jobs=1)


def test_memory_past_the_budget_ends_that_job_only(runner):
    start = time.monotonic()
    with pytest.raises(JobError, match="more than the 300 MB memory budget"):
        runner.run(allocate, 600, memory_mb=300, seconds=30)
    assert time.monotonic() - start < 10
    assert np.ones(10).sum() == 10  # the parent carries on
    assert runner.run(allocate, 50, memory_mb=300, seconds=30) == 50 * 1024 * 1024 // 8


def test_a_job_past_its_time_is_killed(runner):
    start = time.monotonic()
    with pytest.raises(JobError, match="took longer than 2 s"):
        runner.run(sleep_then, 60, "late", seconds=2)
    assert time.monotonic() - start < 6
    assert runner.running() == 0


def test_the_second_job_waits_its_turn(runner):
    first = runner.submit(sleep_then, 1.0, "first", seconds=20)
    second = runner.submit(sleep_then, 0.0, "second", seconds=20)
    time.sleep(0.1)
    assert first.position == 0 and second.position == 1
    assert in_line(second.position) == "1st in line"
    assert second.result(timeout=20) == "second" and first.done()
    assert second.started >= first.started + 0.9  # it ran after the first one ended


def test_cancel_removes_a_queued_job(runner):
    first = runner.submit(sleep_then, 1.0, "first", seconds=20)
    second = runner.submit(sleep_then, 0.0, "second", seconds=20)
    third = runner.submit(sleep_then, 0.0, "third", seconds=20)
    time.sleep(0.1)
    assert third.position == 2
    second.cancel()
    assert third.position == 1 and runner.queued() == 1
    with pytest.raises(JobCancelled, match="cancelled before it started"):
        second.result(timeout=1)
    assert second.started is None
    assert third.result(timeout=20) == "third" and first.result(timeout=1) == "first"


def test_cancel_kills_a_running_job(runner):
    job = runner.submit(sleep_then, 60, "never", seconds=30)
    time.sleep(0.3)
    job.cancel()
    with pytest.raises(JobCancelled):
        job.result(timeout=5)


def test_a_data_error_comes_back_with_its_message(runner):
    with pytest.raises(DataError, match="no numeric column") as caught:
        runner.run(fail_with_data_error, "a.csv")
    assert caught.value.file == "a.csv" and caught.value.column == "x"


def test_an_exception_from_on_wait_cancels_the_job(runner):
    def stop(job):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        runner.run(sleep_then, 60, "x", on_wait=stop, every=0.05)
    deadline = time.monotonic() + 5
    while runner.running() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert runner.running() == 0


def test_a_million_columns_refused_with_the_file_name(runner):
    data = (",".join(f"c{i}" for i in range(10**6)) + "\n" + ",".join("1" for _ in range(10**6)) + "\n").encode()
    start = time.monotonic()
    with pytest.raises((DataError, JobError), match="wide.csv"):
        runner.run(load_upload, data, "wide.csv", memory_mb=300, seconds=20, label="wide.csv")
    assert time.monotonic() - start < 20


def test_ordinals():
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st"]


def test_budgets_from_the_environment():
    import subprocess
    import sys

    env = {**os.environ, "PRIVALAB_JOB_MEMORY_MB": "512", "PRIVALAB_JOB_SECONDS": "7", "PRIVALAB_MAX_JOBS": "x"}
    code = "import ui.runtime.jobs as j; print(j.MEMORY_MB, j.SECONDS, j.MAX_JOBS)"
    out = subprocess.run([sys.executable, "-c", code],
                         env=env, capture_output=True, text=True, check=True).stdout.split()
    assert out == ["512", "7.0", "2"]



def test_an_upload_past_the_budget_is_refused_on_the_page_and_the_data_stay(monkeypatch):
    from streamlit.testing.v1 import AppTest

    from tests.jobs_helpers import upload_good_then_past_budget

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.radio(key="home_data_source").set_value("Upload a file").run()
    errors = upload_good_then_past_budget(at, monkeypatch, "s")
    assert any("Reading bomb.csv needed more than the 300 MB memory budget" in e for e in errors), errors
    assert at.session_state["pl_dataset"].name == "good.csv"
    assert any("Still using the previous data: good.csv" in i.value for i in at.info)


def _wide_spectra(n: int, d: int):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d)) * 0.01 + 0.5
    y = X[:, :5].sum(axis=1) + 0.01 * rng.normal(size=n)
    return X, y, np.arange(n - 10), np.arange(n - 10, n)


def test_a_fit_that_needs_more_memory_than_the_budget_is_stopped(runner):
    """Strict edPLS releases the (d+1) x (d+1) second-moment matrix: 6000 channels need ~290 MB for it alone, and
    its noise as much again, past a 300 MB budget; the same fit on 100 channels runs in the worker."""
    from engine.methods.edpls import compare_private_plain
    from engine.methods.edpls.pipeline import strict_params

    params = strict_params(n_components=2, epsilon=1.0, delta=1e-5, calibration="analytic", x_bound=100.0,
                           y_bound=100.0)
    X, y, train, test = _wide_spectra(40, 6000)
    start = time.monotonic()
    with pytest.raises(JobError, match="needed more than the 300 MB memory budget"):
        runner.run(compare_private_plain, X, y, train, test, params, random_state=1, memory_mb=300, seconds=60,
                   label="The edPLS fit on wide.csv")
    assert time.monotonic() - start < 30
    X, y, train, test = _wide_spectra(40, 100)
    res = runner.run(compare_private_plain, X, y, train, test, params, random_state=1, memory_mb=300, seconds=60)
    here = compare_private_plain(X, y, train, test, params, random_state=1)
    assert res["rmsep_plain"] == pytest.approx(here["rmsep_plain"])
    assert res["rmsep_private"] == pytest.approx(here["rmsep_private"])


def test_an_edpls_fit_past_the_budget_is_refused_on_the_page(monkeypatch):
    """The edPLS page fits an upload in a worker: past the budget, the page says so (naming the file) and keeps
    the upload; the sample sets stay in the server process."""
    from streamlit.testing.v1 import AppTest

    import engine.methods.edpls as edpls
    from tests.jobs_helpers import fit_after_a_bomb
    from ui.runtime import jobs

    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 2)) @ rng.normal(size=(2, 12)) * 0.1 + 0.5 + 0.01 * rng.normal(size=(30, 12))
    frame = pd.DataFrame(X.round(5), columns=[str(1100 + 2 * j) for j in range(12)])
    frame["oil"] = (3 + X[:, 0]).round(4)
    monkeypatch.setattr(edpls, "compare_private_plain", fit_after_a_bomb)
    monkeypatch.setattr(jobs, "MEMORY_MB", 300)
    at = AppTest.from_file(str(ROOT / "pages" / "edpls.py"), default_timeout=60)
    at.session_state["pl_mode"] = "paper"  # paper mode fits an upload without a declared |y| bound
    at.session_state["edpls_data_source"] = "Upload a file"
    at.run()
    at.file_uploader(key="edpls_data_upload").set_value(("spectra.csv", frame.to_csv(index=False).encode(),
                                                          "text/csv")).run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert any("The edPLS fit on spectra.csv needed more than the 300 MB memory budget" in e for e in errors), errors
    assert at.session_state["pl_dataset"].name == "spectra.csv"


def _waiting_script():
    import streamlit as st

    from tests.jobs_helpers import sleep_then
    from ui.data_picker import _Waiting
    from ui.runtime.jobs import JobRunner

    runner = JobRunner(max_jobs=1)
    first = runner.submit(sleep_then, 3.0, "first", seconds=20)
    waiting = _Waiting("x.csv", "k", ("verdict",))
    waiting.t0 -= 1.0  # as if it had waited a second already

    def on_wait(job):
        waiting(job)
        if job.position == 1:
            raise RuntimeError("seen in line")

    try:
        runner.run(sleep_then, 0.0, "second", on_wait=on_wait, every=0.05)
    except RuntimeError:
        st.session_state["queued_after"] = runner.queued()
    first.cancel()


def test_a_read_waiting_in_line_shows_its_place_and_cancel():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_waiting_script, default_timeout=30).run()
    assert not at.exception, at.exception
    assert any("Reading x.csv: 1st in line for a worker" in i.value for i in at.info), [i.value for i in at.info]
    assert at.button(key="k_cancel_read").label == "Cancel"
    assert at.session_state["queued_after"] == 0  # leaving the wait took the job out of the line


def test_the_recommended_fit_in_a_worker_is_the_fit_in_the_server():
    """``run_upload`` (the edPLS page's route for an upload) gives the in-process result, fitted models included;
    a sample set (upload=False) never starts a worker."""
    from engine.methods.edpls.recommended_evaluation import compare_recommended
    from ui.runtime.jobs import run_upload

    X, y, train, test = _wide_spectra(40, 30)
    kw = dict(epsilon=1.0, delta=1e-5, y_range=(0.0, 100.0), random_state=3)
    there = run_upload(True, compare_recommended, X, y, train, test, label="The edPLS fit on s.csv", **kw)
    here = compare_recommended(X, y, train, test, **kw)
    assert there["rmsep_private"] == pytest.approx(here["rmsep_private"])
    np.testing.assert_allclose(there["private"].predict(X[test]), here["pred_private"])
    assert run_upload(False, os.getpid) == os.getpid()
    assert run_upload(True, os.getpid, label="x") != os.getpid()


def test_progress_of_a_job_in_a_worker_reaches_the_waiting_thread(runner):
    """A sweep in a worker reports through the pipe: the server sees increasing fractions in its own thread, the
    last one (1.0) included, and the same calls as in-process (``run_upload`` on a sample set)."""
    import threading

    from tests.jobs_helpers import steps_with_progress
    from ui.runtime.jobs import run_upload

    seen, threads = [], set()

    def on_progress(fraction, text):
        seen.append((fraction, text))
        threads.add(threading.get_ident())

    assert runner.run(steps_with_progress, 6, 0.15, on_progress=on_progress, every=0.02, seconds=20) == 6
    assert seen and threads == {threading.get_ident()}
    assert seen[-1] == (1.0, "step 6 of 6")  # the last report arrives, also when the job ended in between
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and len(fractions) >= 3
    assert seen[-1][1].startswith("step")
    here = []
    assert run_upload(False, steps_with_progress, 3, 0.0, progress=lambda f, t: here.append(f)) == 3
    assert here == [1 / 3, 2 / 3, 1.0]
    short = []
    assert runner.run(steps_with_progress, 1, 0.0, on_progress=lambda f, t: short.append(f), every=0.5) == 1
    assert short == [1.0]  # done before the first look: its report is still delivered


def test_waiting_hands_on_wait_to_run_upload_and_a_sweep_gets_its_own_time_budget(monkeypatch):
    from tests.jobs_helpers import steps_with_progress
    from ui.runtime import jobs

    monkeypatch.setattr(jobs, "RUNNER", JobRunner(max_jobs=1))
    blocker = jobs.RUNNER.submit(sleep_then, 1.0, "first", seconds=20)
    places, budgets = [], []

    def on_wait(job):
        places.append(job.position)
        budgets.append(job.seconds)

    with jobs.waiting(on_wait):
        assert jobs.run_upload(True, steps_with_progress, 2, 0.05, progress=lambda f, t: None, label="sweep") == 2
    assert 1 in places and budgets[0] == jobs.SWEEP_SECONDS
    assert blocker.result(timeout=1) == "first"
    places.clear()
    assert jobs.run_upload(True, sleep_then, 0.5, "x", label="fit") == "x"
    assert places == []  # outside the block: no on_wait


def test_the_cancel_of_a_queued_fit_leaves_the_running_job_alone(runner):
    """max_jobs=1: the second job is "1st in line"; Job.cancel takes it out and the first one finishes."""
    first = runner.submit(sleep_then, 0.8, "first", seconds=20)
    second = runner.submit(sleep_then, 0.0, "second", seconds=20, label="Fitting")
    time.sleep(0.1)
    assert in_line(second.position) == "1st in line"
    second.cancel()
    assert runner.queued() == 0 and second.done() and second.state == "cancelled"
    assert first.result(timeout=20) == "first"
