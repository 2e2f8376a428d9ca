"""The job runner's jobs on a Dask cluster, when a setting names one (issue #33).

Which runner: ``PRIVALAB_JOBS`` = ``local`` (the server's own worker processes, ``ui.runtime.jobs``),
``dask://host:port`` or ``tcp://host:port`` (that ``dask.distributed`` scheduler); without it, Dask's own
``DASK_SCHEDULER_ADDRESS`` when set (the cluster the large-data fits already use), else local. Every job goes
there: reads of uploads, fits, sweeps (all pass through :class:`ui.runtime.jobs.JobRunner`); public sample sets
stay in the server as before.

Same budgets, same messages, by running the same code: the task a Dask worker runs (``jobs.run_on_worker``) is a
one-slot local :class:`~ui.runtime.jobs.JobRunner` on that worker, which starts the job in a process of its own
with the address-space limit (``PRIVALAB_JOB_MEMORY_MB`` or the job's ``memory_mb``), kills it past its time or on
cancel, and raises :class:`~ui.runtime.jobs.JobError` / :class:`~ui.runtime.jobs.JobCancelled` with the very texts
of a local run; the exception (or the job's own, e.g. a ``DataError`` with its file, row and column) comes back
through the future unchanged. Why not the task itself in the worker's thread: a Dask worker cannot stop a running
task (``Future.cancel`` leaves its thread running), and a memory limit set in it would bind every task of that
worker. The worker's own ``--memory-limit`` watches the worker's process (a result passes through it), not the
job's; its nanny restarts a worker past it, and the job then ends with "was ended with its Dask worker (likely past
its memory budget)".

Between the server and the task, per job: a ``distributed.Event`` the server sets on cancel (the task polls it and
kills its process) and a ``distributed.Variable`` through which the task reports its start and its progress (the
latest call, pickled). The worker enforces the budgets; the server keeps a backstop for a worker that stops
answering: time in the cluster's line has no limit (as in the local line), and from the task's start the server
waits the worker's own limit (``STARTUP_SECONDS`` for the job's process to start, then the budget) plus
``jobs.GRACE_SECONDS``, then sets the cancel event, cancels the future and gives the local message.

Workers: Dask's nanny runs a worker as a daemonic process by default, and a daemonic process may not start
processes; a PrivaLab worker runs with ``DASK_DISTRIBUTED__WORKER__DAEMON=False`` (docs/deployment.md), from a
checkout of the same version as the app (the job functions are imported by name). A daemonic worker refuses the
job with a message that names the setting. Written by hand: the hand-over (Dask does the scheduling and transport).

This module is the transport only (the cluster setting, the client, :class:`RemoteJob` on the server's side,
:class:`WorkerLink` on the worker's); the waiting loop and every message a user reads stay in ``ui.runtime.jobs``,
the one place of the jobs' texts (it imports this module; this module does not import it).
"""
from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import threading
import uuid

__all__ = ["JOBS_ENV", "RemoteJob", "WorkerLink", "client_for", "is_daemonic", "jobs_cluster"]

JOBS_ENV = "PRIVALAB_JOBS"
CONNECT_SECONDS = 30.0

_CLIENTS: dict = {}
_CLIENTS_LOCK = threading.Lock()


def jobs_cluster(environ=None) -> str | None:
    """The scheduler address the jobs go to (``tcp://host:port``), or None for the local workers.

    Raises ValueError naming the setting when ``PRIVALAB_JOBS`` is neither ``local`` nor an address.

    >>> jobs_cluster({"PRIVALAB_JOBS": "dask://10.0.0.5:8786", "DASK_SCHEDULER_ADDRESS": "tcp://h:1"})
    'tcp://10.0.0.5:8786'
    >>> jobs_cluster({"PRIVALAB_JOBS": "local", "DASK_SCHEDULER_ADDRESS": "tcp://h:1"}) is None
    True
    >>> jobs_cluster({"DASK_SCHEDULER_ADDRESS": "tcp://h:1"})
    'tcp://h:1'
    """
    env = os.environ if environ is None else environ
    setting = (env.get(JOBS_ENV) or "").strip()
    if not setting:
        from engine.data.scheduler import SCHEDULER_ENV

        return (env.get(SCHEDULER_ENV) or "").strip() or None
    if setting.lower() == "local":
        return None
    if setting.startswith("dask://"):
        return "tcp://" + setting[len("dask://"):]
    if "://" in setting:
        return setting
    raise ValueError(f"{JOBS_ENV}={setting!r}: use 'local' or a Dask scheduler address such as "
                     "'dask://host:8786' (in the environment of the app's processes)")


def client_for(address: str):
    """One ``distributed.Client`` per scheduler address in this process (made at the first job, then kept)."""
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(address)
        if client is None or client.status in ("closing", "closed"):
            from distributed import Client

            try:
                client = Client(address, timeout=CONNECT_SECONDS, set_as_default=False)
            except (OSError, TimeoutError) as err:
                raise ConnectionError(f"could not reach the Dask scheduler at {address} (set by {JOBS_ENV} or "
                                      f"DASK_SCHEDULER_ADDRESS) within {CONNECT_SECONDS:g} s: {err}") from None
            _CLIENTS[address] = client
        return client


class RemoteJob:
    """The server's side of one job on the cluster: ``task(*args, key)`` submitted, its cancel event, its reports."""

    def __init__(self, client, task, *args):
        from distributed import Event, Variable

        self.key = f"privalab-job-{uuid.uuid4().hex}"
        self._cancel = Event(f"{self.key}-cancel", client=client)
        self._report = Variable(f"{self.key}-report", client=client)
        self.future = client.submit(task, *args, self.key, key=self.key, pure=False)

    def done(self) -> bool:
        return self.future.done()

    def latest(self):
        """The task's last report, ``(count, progress args)`` (``(0, None)``: started), or None before it."""
        try:
            return pickle.loads(self._report.get(timeout=0.01))
        except Exception:  # noqa: BLE001 - not set yet (a time-out) or the scheduler busy: look again later
            return None

    def cancel(self) -> None:
        """Tell the task to kill its job's process (a cancelled future alone leaves a running task running)."""
        self._cancel.set()
        self.future.cancel()

    def outcome(self) -> tuple:
        """("ok", value), ("error", the task's exception), ("cancelled", None) or ("killed", None) (the worker
        died under the task: its nanny's memory limit, a crash)."""
        status = self.future.status
        if status == "finished":
            return "ok", self.future.result()
        if status == "cancelled":
            return "cancelled", None
        err = self.future.exception()
        if type(err).__name__ == "KilledWorker":
            return "killed", None
        return "error", err

    def close(self) -> None:
        if not self.future.done():
            self.future.cancel()
        try:
            self._report.delete()
        except Exception:  # noqa: BLE001 - the scheduler gone: nothing left to clean
            pass


class WorkerLink:
    """The task's side, on the Dask worker: report the start and progress; see a cancel."""

    def __init__(self, key: str):
        from distributed import Event, Variable

        self._cancel, self._report = Event(f"{key}-cancel"), Variable(f"{key}-report")

    def report(self, count: int, progress) -> None:
        self._report.set(pickle.dumps((count, progress)))

    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def close(self) -> None:
        try:
            self._cancel.clear()  # a set event stays on the scheduler until cleared
        except Exception:  # noqa: BLE001 - the scheduler gone
            pass


def is_daemonic() -> bool:
    """Whether this process may not start processes (a Dask worker under a nanny, by default)."""
    return bool(mp.current_process().daemon)
