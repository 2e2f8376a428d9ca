"""The job runner on a Dask cluster (ui.runtime.jobs with a ``cluster``, ui.runtime.dask_jobs): a job runs there
(a page's upload read included), a cancel stops it, and a job past its time or its memory budget ends with the very
message of a local run.

Oracle: the local runner itself: each budget is hit once locally and once on the cluster, and the two messages
must be equal strings (the cluster path cannot pass by producing some other error). The cluster is a
``LocalCluster`` on 127.0.0.1 with its worker in this process (``processes=False``: no daemonic nanny, no
second interpreter to import the libraries; the job's own process is started on the worker exactly as on a
remote one), no dashboard, always closed.
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from engine.data import DataError
from tests.jobs_helpers import allocate, fail_with_data_error, sleep_then, steps_with_progress, tick_to_file
from ui.runtime import dask_jobs
from ui.runtime.jobs import JobCancelled, JobError, JobRunner

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def cluster():
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=4, processes=False, protocol="tcp", host="127.0.0.1",
                      dashboard_address=None) as lc:
        try:
            yield lc.scheduler_address
        finally:  # the runner's client to this cluster: closed before it
            client = dask_jobs._CLIENTS.pop(lc.scheduler_address, None)
            if client is not None:
                client.close()


@pytest.fixture()
def remote(cluster):
    return JobRunner(max_jobs=2, cluster=cluster)


def _message(runner, *args, **kwargs) -> tuple[type, str]:
    with pytest.raises(JobError) as info:
        runner.run(*args, **kwargs)
    return type(info.value), str(info.value)


def test_a_job_runs_on_the_cluster_and_reports_progress(remote, cluster):
    seen = []
    assert remote.run(steps_with_progress, 3, 0.05, on_progress=lambda *a: seen.append(a), label="Sweep") == 3
    assert seen and seen[-1] == (1.0, "step 3 of 3")
    from distributed import Client

    with Client(cluster, set_as_default=False) as client:  # it ran there: the scheduler saw the task
        assert "privalab-job" in client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.task_prefixes))


def test_a_job_s_own_error_comes_back_as_itself(remote):
    with pytest.raises(DataError, match="no numeric column") as info:
        remote.run(fail_with_data_error, "data.csv", seconds=30)
    assert info.value.file == "data.csv" and info.value.column == "x"


def test_past_its_time_the_same_message_as_locally(remote):
    local = _message(JobRunner(1), sleep_then, 60, "late", seconds=2, label="Reading late.csv")
    start = time.monotonic()
    on_cluster = _message(remote, sleep_then, 60, "late", seconds=2, label="Reading late.csv")
    assert on_cluster == local == (JobError, "Reading late.csv took longer than 2 s and was stopped.")
    assert time.monotonic() - start < 15


def test_past_its_memory_the_same_message_as_locally(remote):
    local = _message(JobRunner(1), allocate, 600, memory_mb=300, seconds=30, label="Fitting big.csv")
    on_cluster = _message(remote, allocate, 600, memory_mb=300, seconds=30, label="Fitting big.csv")
    assert on_cluster == local == (JobError, "Fitting big.csv needed more than the 300 MB memory budget and was "
                                             "stopped.")


def test_a_cancel_stops_the_job_on_the_worker(remote, tmp_path):
    ticks = tmp_path / "ticks.txt"
    job = remote.submit(tick_to_file, str(ticks), 600, 0.1, seconds=120, label="Sweep", reports=True)
    deadline = time.monotonic() + 30
    while job.progress_count == 0 and time.monotonic() < deadline:  # its progress proves it runs on the worker
        time.sleep(0.05)
    assert job.progress_count > 0 and not job.done()
    start = time.monotonic()
    job.cancel()
    with pytest.raises(JobCancelled, match="Sweep was cancelled."):
        job.result(timeout=10)
    assert time.monotonic() - start < 5
    time.sleep(1.0)  # the worker's look at the cancel event (every 0.1 s) and the kill
    written = ticks.read_text()
    time.sleep(1.0)  # a job still running would have written ~10 more lines by now
    assert ticks.read_text() == written


def test_the_setting_names_the_cluster_or_says_what_is_wrong():
    assert dask_jobs.jobs_cluster({"PRIVALAB_JOBS": "dask://127.0.0.1:8786"}) == "tcp://127.0.0.1:8786"
    assert dask_jobs.jobs_cluster({"PRIVALAB_JOBS": "local", "DASK_SCHEDULER_ADDRESS": "tcp://h:1"}) is None
    assert dask_jobs.jobs_cluster({"DASK_SCHEDULER_ADDRESS": " tcp://h:1 "}) == "tcp://h:1"
    assert dask_jobs.jobs_cluster({}) is None
    with pytest.raises(ValueError, match="PRIVALAB_JOBS='8786'"):
        dask_jobs.jobs_cluster({"PRIVALAB_JOBS": "8786"})
    runner = JobRunner(1, cluster=ValueError("PRIVALAB_JOBS='8786': use 'local' or ..."))
    with pytest.raises(JobError, match="Reading a.csv could not run: PRIVALAB_JOBS='8786'"):
        runner.run(sleep_then, 0, 1, label="Reading a.csv")


def _jobs_seen(cluster: str) -> int:
    """How many job tasks the scheduler has had (any state, forgotten ones included)."""
    from distributed import Client

    def count(dask_scheduler):
        prefix = dask_scheduler.task_prefixes.get("privalab-job")
        return sum(prefix.state_counts.values()) if prefix is not None else 0

    with Client(cluster, set_as_default=False) as client:
        return client.run_on_scheduler(count)


def test_a_page_reads_its_uploads_on_the_cluster_with_the_local_message(cluster, monkeypatch):
    """Home's data picker with the server's runner on the cluster: a good upload is read there, a read past the
    memory budget is refused with the message of a local run and the previous data stay."""
    from streamlit.testing.v1 import AppTest

    from tests.jobs_helpers import upload_good_then_past_budget
    from ui.runtime import jobs

    monkeypatch.setattr(jobs.RUNNER, "cluster", cluster)
    before = _jobs_seen(cluster)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90).run()
    at.radio(key="home_data_source").set_value("Upload a file").run()

    def read_on_the_cluster():
        assert _jobs_seen(cluster) > before

    errors = upload_good_then_past_budget(at, monkeypatch, "t", after_good=read_on_the_cluster)
    assert any("Reading bomb.csv needed more than the 300 MB memory budget and was stopped." in e for e in errors), \
        errors
    assert at.session_state["pl_dataset"].name == "good.csv"
