"""The app's job runner: heavy work on an uploaded data set runs in a worker process with a memory and a time budget.

Why: parsing an upload and fitting on it ran inside the Streamlit server process with no limit, so one hostile
or merely huge file (a workbook that unpacks to 1.2 GB, a 10^6-column CSV) could take the server's memory or
both of its cores, and every other session went down with it (issue #20). Here each job runs in its own worker
process; exceeding a budget ends that one job with a :class:`JobError` whose message says which budget, and the
server and the other sessions carry on.

Budgets (environment variables, read once at import):

- ``PRIVALAB_JOB_MEMORY_MB`` (default 2048): the address space a job may add on top of its worker's start-up
  size (``resource.setrlimit(RLIMIT_AS)`` in the worker). A worker that has imported NumPy and pandas already
  maps ~380 MB of virtual memory (OpenBLAS reserves its buffers), so a cap counted from zero would measure the
  libraries, not the job. 2 GB holds the largest table the readers accept (10^7 cells as float64 is 80 MB, a
  few copies of it while parsing) and a fit on it, and leaves room on a machine that serves several sessions.
  An allocation past the budget raises MemoryError in the worker: "needed more than the 2048 MB budget".
- ``PRIVALAB_JOB_SECONDS`` (default 120): wall time of a running job, from its worker's start (time in the queue
  and the worker's start-up do not count; the start-up has its own 60 s allowance, ``STARTUP_SECONDS``, for the
  forkserver's first start on a loaded machine); the server kills the worker when it runs out: "took longer than
  120 s".
- ``PRIVALAB_SWEEP_SECONDS`` (default 600): wall time of a job that reports progress (a sweep or a simulation:
  dozens to thousands of fits, each a fraction of a second to a few seconds on an upload the readers accept); a
  single fit keeps ``PRIVALAB_JOB_SECONDS``.
- ``PRIVALAB_MAX_JOBS`` (default 2, this machine's cores): heavy jobs running at once in the whole server
  process; the others wait in line, first come first served, and know their place (:attr:`Job.position`,
  :func:`in_line`: "2nd in line"). :meth:`Job.cancel` removes a queued job or kills a running one.
- ``PRIVALAB_JOBS`` (or Dask's ``DASK_SCHEDULER_ADDRESS``): ``dask://host:port`` sends every job to that Dask
  cluster, where each runs under the same budgets with the same messages (``ui.runtime.dask_jobs``; the line and
  ``PRIVALAB_MAX_JOBS`` stay in the server); unset or ``local``: the worker processes below.

Design: one worker process per job, started from a *forkserver* that has NumPy, pandas and ``engine.data``
imported. Not plain fork: the Streamlit server is multi-threaded, and forking it copies locks held by other
threads. Not ``concurrent.futures.ProcessPoolExecutor(max_tasks_per_child=1, initializer=...)``: it would set
the limits, but a job past its time budget cannot be killed alone (``Future.cancel`` does not stop a running
task, and killing a pool worker breaks the whole pool, every queued job with it), and it has no queue positions.
A per-job ``Process`` is killed on its own and leaves nothing behind. Start-up cost, measured on this 2-core
machine (noisy: other processes were running): a *spawn* worker importing NumPy/pandas/``engine.data`` takes
~0.8 s before the job starts; a forkserver worker ~0.04-0.07 s once the forkserver is up. The forkserver's own
start (once per server process, at the first job, with ``PRELOAD`` imported) took 1.3-2.6 s. A strict edPLS fit
on 40 x 100 spectra took 0.18 s in a worker against 0.10 s in the server process. The job's function and
arguments must be picklable (a module-level function). Workers do not re-import the server's ``__main__``.

Progress: a job run with ``on_progress`` gets a ``progress`` keyword argument, a callable that sends its
arguments back through the pipe (at most every 0.1 s, the last one always); the server calls ``on_progress`` with
them in the waiting thread (a Streamlit page's script thread, which may update its elements). A page does not pass
``on_wait`` down through its cached functions: :func:`waiting` sets it for the calls inside the ``with`` block
(a context variable), and :func:`run_upload` uses it.

Results come back through a pipe. An exception raised by the job comes back as itself (a ``DataError`` keeps its
message, file, row and column); a MemoryError, a timeout or a worker killed by a signal come back as
:class:`JobError`.

Examples
--------
>>> import operator
>>> run(operator.add, 2, 3)
5
>>> in_line(2)
'2nd in line'
"""
from __future__ import annotations

import contextvars
import multiprocessing as mp
import os
import resource
import signal
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from engine.methods import registry
from ui.runtime import dask_jobs

__all__ = ["JobError", "JobCancelled", "Job", "JobRunner", "submit", "run", "in_line", "ordinal", "parse_upload",
           "run_upload", "waiting", "run_on_worker",
           "MEMORY_MB", "SECONDS", "SWEEP_SECONDS", "MAX_JOBS"]


def _env_number(name: str, default: float, kind=int):
    try:
        value = kind(os.environ.get(name, default))
    except ValueError:
        return default
    return value if value > 0 else default


MEMORY_MB: int = _env_number("PRIVALAB_JOB_MEMORY_MB", 2048)
SECONDS: float = _env_number("PRIVALAB_JOB_SECONDS", 120.0, float)
SWEEP_SECONDS: float = _env_number("PRIVALAB_SWEEP_SECONDS", 600.0, float)
MAX_JOBS: int = _env_number("PRIVALAB_MAX_JOBS", 2)
STARTUP_SECONDS: float = 60.0  # to start a worker (the forkserver's first start included), before its budget
GRACE_SECONDS: float = 10.0  # on a cluster: past the worker's own limit, its stop and its answer's trip
# imported once by the forkserver, inherited by every worker
# (the method modules the pages' jobs use: imported once there, not in every worker; each took 0.05-0.9 s to import
# on this machine, ~2 s together, paid once by the forkserver's start instead of by every job)
def preload_modules() -> list[str]:
    """What the forkserver imports: the libraries, each method's ``MethodSpec.preload`` (the registry, read when
    called) and the tools' modules."""
    return ["numpy", "pandas", "engine.data", *(m for spec in registry.METHODS for m in spec.preload),
            "ui.runtime.page_jobs", "engine.attacks.pls_subspace", "engine.methods.chemometrics"]


PRELOAD = preload_modules()


class JobError(RuntimeError):
    """A job ended by its budget (memory, time), by a signal, or cancelled; the message says which."""


class JobCancelled(JobError):
    """The job was cancelled (in the queue or while running)."""


_CONTEXT = None
_CONTEXT_LOCK = threading.Lock()


WORKER_NAME = "privalab-job"


def _without_main(get_preparation_data):
    """multiprocessing re-imports the parent's ``__main__`` in every worker (the Streamlit or pytest command line,
    or a script without a ``__main__`` guard, which would run again); a job's function lives in an importable
    module, so this app's workers skip it (other processes are left as they are)."""
    def prepare(name):
        data = get_preparation_data(name)
        if str(name).startswith(WORKER_NAME):
            data.pop("init_main_from_path", None)
            data.pop("init_main_from_name", None)
        return data

    prepare.privalab = True
    return prepare


def _context():
    """The forkserver context, with the heavy libraries preloaded (set once, before the forkserver starts)."""
    global _CONTEXT
    with _CONTEXT_LOCK:
        if _CONTEXT is None:
            from multiprocessing import spawn

            if not getattr(spawn.get_preparation_data, "privalab", False):
                spawn.get_preparation_data = _without_main(spawn.get_preparation_data)
            # The forkserver (Python 3.11) imports PRELOAD with its own sys.path, not the server's: put this
            # checkout first, so that it preloads the same ``engine`` package as the server imports.
            root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
            paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
            if root not in paths:
                os.environ["PYTHONPATH"] = os.pathsep.join([root, *paths])
            ctx = mp.get_context("forkserver")
            ctx.set_forkserver_preload(preload_modules())
            _CONTEXT = ctx
        return _CONTEXT


def _address_space() -> int:
    """The current process's mapped address space in bytes (VmSize), 0 when /proc is not there."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class _Progress:
    """The ``progress`` callable a worker hands to its job: its arguments go back through the pipe, at most every
    ``every`` s (a sweep may report thousands of steps), a step that reaches 1 (everything done) always."""

    def __init__(self, conn, every: float = 0.1):
        self.conn, self.every, self.last = conn, every, -float("inf")

    def __call__(self, *args) -> None:
        now = time.monotonic()
        done = bool(args) and isinstance(args[0], (int, float)) and (
            args[0] >= 1 if len(args) < 2 or not isinstance(args[1], (int, float)) else args[0] >= args[1])
        if now - self.last >= self.every or done:
            self.last = now
            self.conn.send(("progress", args))


def _worker(conn, fn, args, kwargs, memory_mb, progress=False) -> None:
    """The worker process: the budget, one BLAS thread, the job (with a ``progress`` callable when asked), its
    outcome sent back."""
    conn.send(("started", None))
    limit = _address_space() + int(memory_mb) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        from threadpoolctl import threadpool_limits  # one BLAS thread: the cores are shared by the jobs

        threadpool_limits(1)
    except Exception:  # noqa: BLE001 - only a speed setting
        pass
    if progress:
        kwargs = {**kwargs, "progress": _Progress(conn)}
    try:
        outcome = ("ok", fn(*args, **kwargs))
    except MemoryError:
        outcome = ("memory", None)
    except BaseException as err:  # noqa: BLE001 - every failure goes back to the server
        outcome = ("error", err)
    try:
        conn.send(outcome)
    except MemoryError:
        conn.send(("memory", None))
    except Exception as err:  # noqa: BLE001 - an unpicklable result or exception
        conn.send(("error", RuntimeError(f"{type(err).__name__}: {err}")))
    finally:
        conn.close()


def ordinal(n: int) -> str:
    """'1st', '2nd', '3rd', '4th', ..., '11th', '21st'."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def in_line(position: int) -> str:
    """The place of a queued job for the user: 'next in line' is not used, the number is ('1st in line')."""
    return f"{ordinal(position)} in line"


@dataclass(eq=False)
class Job:
    """One submitted job. ``state``: "queued", "running", "done", "cancelled"."""

    fn: Callable
    args: tuple
    kwargs: dict
    memory_mb: int
    seconds: float
    label: str = ""  # what the job does, as the start of a sentence ("Reading data.csv"), in its messages
    runner: Any = field(default=None, repr=False)
    state: str = "queued"
    started: float | None = None
    reports: bool = False  # the job function gets a ``progress`` callable
    progress: tuple | None = None  # the arguments of its last progress call
    progress_count: int = 0  # how many progress messages have arrived
    _outcome: tuple | None = field(default=None, repr=False)
    _done: threading.Event = field(default_factory=threading.Event, repr=False)
    _cancel: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def position(self) -> int:
        """1 for the next job to start, 2 for the one after it, ...; 0 once running or finished."""
        return self.runner.position(self)

    def cancel(self) -> None:
        """Remove a queued job from the line, or kill its worker when it runs; no-op once finished."""
        self._cancel.set()
        self.runner._cancelled(self)

    def done(self) -> bool:
        """Whether the job has finished (result, error or cancellation)."""
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the job has finished or ``timeout`` seconds passed; True when it finished."""
        return self._done.wait(timeout)

    def result(self, timeout: float | None = None):
        """The job's return value; its exception re-raised; JobError for a budget, a signal or a cancel."""
        if not self._done.wait(timeout):
            raise TimeoutError("the job has not finished yet")
        kind, value = self._outcome
        if kind == "ok":
            return value
        raise value

    # -- inside the job's thread
    def _execute(self) -> None:
        cluster = self.runner.cluster
        if isinstance(cluster, Exception):  # a PRIVALAB_JOBS that names no cluster: every job says so
            raise cluster
        if cluster:
            self._outcome = self._execute_remote(cluster)
            return
        ctx = _context()
        receive, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_worker, args=(send, self.fn, self.args, self.kwargs, self.memory_mb, self.reports),
                           daemon=True, name=f"{WORKER_NAME} {self.label}".strip())
        self.started = time.monotonic()
        proc.start()
        send.close()
        # the budget counts from the worker's start; starting it (the forkserver's first start, a loaded machine)
        # has its own allowance
        deadline = self.started + STARTUP_SECONDS + self.seconds
        try:
            self._outcome = self._watch(proc, receive, deadline)
        finally:
            if proc.is_alive():
                proc.kill()
            proc.join(5)
            receive.close()

    def _watch(self, proc, receive, deadline: float) -> tuple:
        what = self.label or "The job"
        while True:
            if receive.poll(0.05):
                try:
                    kind, value = receive.recv()
                except (EOFError, OSError):
                    break  # the worker died while sending: judged by its exit code below
                if kind == "started":
                    self.started = time.monotonic()
                    deadline = self.started + self.seconds
                    continue
                if kind == "progress":
                    self.progress, self.progress_count = value, self.progress_count + 1
                    continue
                if kind == "memory":
                    return "error", JobError(f"{what} needed more than the {self.memory_mb} MB memory budget and "
                                             "was stopped.")
                return kind, value
            if self._cancel.is_set():
                proc.kill()
                return "error", JobCancelled(f"{what} was cancelled.")
            if time.monotonic() > deadline:
                proc.kill()
                return "error", JobError(f"{what} took longer than {self.seconds:g} s and was stopped.")
            if not proc.is_alive() and not receive.poll(0):
                break
        proc.join(5)
        code = proc.exitcode
        if code is not None and code < 0:
            name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else f"signal {-code}"
            hint = " (likely past its memory budget)" if -code in (signal.SIGKILL, signal.SIGSEGV,
                                                                  signal.SIGABRT) else ""
            return "error", JobError(f"{what} was ended by {name}{hint}.")
        return "error", JobError(f"{what} ended (exit code {code}) without a result.")

    def _execute_remote(self, address: str) -> tuple:
        """The job on the Dask cluster at ``address`` (:func:`run_on_worker` there, which enforces the budgets and
        gives their messages exactly as here); a cancel kills it. Waiting in the cluster's line has no limit, as in
        the local line; once the task runs, the server stops waiting ``GRACE_SECONDS`` after the worker's own limit
        (its start-up allowance and the budget), a backstop for a worker that stopped answering."""
        what = self.label or "The job"
        remote = dask_jobs.RemoteJob(dask_jobs.client_for(address), run_on_worker, self.fn, self.args, self.kwargs,
                                     self.memory_mb, self.seconds, self.label, self.reports)
        deadline = None
        try:
            while not remote.done():
                time.sleep(0.1)
                if self._cancel.is_set():
                    remote.cancel()
                    return "error", JobCancelled(f"{what} was cancelled.")
                latest = remote.latest()
                if latest is not None and deadline is None:  # the task runs on a worker
                    self.started = time.monotonic()
                    deadline = self.started + STARTUP_SECONDS + self.seconds + GRACE_SECONDS
                self._take_report(latest)
                if deadline is not None and time.monotonic() > deadline:
                    remote.cancel()
                    return "error", JobError(f"{what} took longer than {self.seconds:g} s and was stopped.")
            self._take_report(remote.latest())  # the last progress call (a short job: the only one)
            kind, value = remote.outcome()
        finally:
            remote.close()
        if kind == "cancelled":
            return "error", JobCancelled(f"{what} was cancelled.")
        if kind == "killed":
            return "error", JobError(f"{what} was ended with its Dask worker (likely past its memory budget).")
        return kind, value

    def _take_report(self, latest) -> None:
        if latest is not None and latest[0] != self.progress_count:
            self.progress_count, self.progress = latest


class JobRunner:
    """A bounded line of jobs: at most ``max_jobs`` worker processes at once, the rest queued in order.
    ``cluster``: a Dask scheduler's address to run the jobs on (:func:`run_on_worker` there), None for local."""

    def __init__(self, max_jobs: int = MAX_JOBS, cluster: str | Exception | None = None):
        self.max_jobs = max(1, int(max_jobs))
        self.cluster = cluster
        self._cond = threading.Condition()
        self._queue: list[Job] = []
        self._running: set[Job] = set()

    def submit(self, fn: Callable, *args, memory_mb: int | None = None, seconds: float | None = None,
               label: str = "", reports: bool = False, **kwargs) -> Job:
        """Queue ``fn(*args, **kwargs)`` (picklable) and return its :class:`Job` at once. ``reports``: the job is
        called with a ``progress`` keyword (a callable; its calls arrive in :attr:`Job.progress`)."""
        job = Job(fn, args, kwargs, int(memory_mb or MEMORY_MB), float(seconds or SECONDS), label, runner=self,
                  reports=reports)
        with self._cond:
            self._queue.append(job)
        threading.Thread(target=self._serve, args=(job,), daemon=True, name="privalab-job").start()
        return job

    def run(self, fn: Callable, *args, on_wait: Callable | None = None, on_progress: Callable | None = None,
            every: float = 0.25, memory_mb: int | None = None, seconds: float | None = None, label: str = "",
            **kwargs):
        """Submit and wait for the result. ``on_wait(job)`` is called every ``every`` s while the job is not done
        (show its place or elapsed time); with ``on_progress`` the job gets a ``progress`` keyword and each of its
        calls (the latest one since the last look) is repeated as ``on_progress(*args)`` here, in the waiting
        thread. An exception from either (e.g. the page stopping) cancels the job."""
        job = self.submit(fn, *args, memory_mb=memory_mb, seconds=seconds, label=label,
                          reports=on_progress is not None, **kwargs)
        seen = 0
        try:
            while not job.wait(every):
                if on_progress is not None and job.progress_count != seen:
                    seen = job.progress_count
                    on_progress(*job.progress)
                if on_wait is not None:
                    on_wait(job)
            if on_progress is not None and job.progress_count != seen:  # the last report (a short job: the only)
                on_progress(*job.progress)
        except BaseException:
            job.cancel()
            raise
        return job.result()

    def position(self, job: Job) -> int:
        """The job's 1-based place in the queue, 0 when it is not queued."""
        with self._cond:
            return self._queue.index(job) + 1 if job in self._queue else 0

    def queued(self) -> int:
        """The number of jobs waiting in the queue."""
        with self._cond:
            return len(self._queue)

    def running(self) -> int:
        """The number of jobs running now."""
        with self._cond:
            return len(self._running)

    def _cancelled(self, job: Job) -> None:
        with self._cond:
            if job in self._queue:
                self._queue.remove(job)
                job.state = "cancelled"
                job._outcome = ("error", JobCancelled(f"{job.label or 'The job'} was cancelled before it started."))
                job._done.set()
            self._cond.notify_all()

    def _serve(self, job: Job) -> None:
        with self._cond:
            while job in self._queue and (self._queue[0] is not job or len(self._running) >= self.max_jobs):
                self._cond.wait()
            if job not in self._queue:  # cancelled while queued
                return
            self._queue.pop(0)
            self._running.add(job)
            job.state = "running"
            self._cond.notify_all()
        try:
            job._execute()
        except BaseException as err:  # noqa: BLE001 - a failure to start the worker ends this job only
            job._outcome = ("error", JobError(f"{job.label or 'The job'} could not run: {err}"))
        finally:
            with self._cond:
                self._running.discard(job)
                job.state = "cancelled" if job._cancel.is_set() else "done"
                job._done.set()
                self._cond.notify_all()


def _cluster_setting() -> str | Exception | None:
    """``PRIVALAB_JOBS`` / ``DASK_SCHEDULER_ADDRESS``, read once at import; a wrong value is kept as the error
    every job then reports (naming the setting), not raised here: the server starts and its pages say why."""
    try:
        return dask_jobs.jobs_cluster()
    except ValueError as err:
        return err


def run_on_worker(fn, args, kwargs, memory_mb, seconds, label, reports, key):
    """The task a Dask worker runs for a job of a server whose runner has a ``cluster``: the job in a one-slot local
    runner on that worker, so with the budgets and the messages of a local run; its start, progress and cancel
    through :class:`ui.runtime.dask_jobs.WorkerLink`."""
    if dask_jobs.is_daemonic():
        raise JobError(f"{label or 'The job'} could not run: its Dask worker is a daemonic process, which may not "
                       "start the job's process; start the workers with DASK_DISTRIBUTED__WORKER__DAEMON=False.")
    link = dask_jobs.WorkerLink(key)
    job = JobRunner(1).submit(fn, *args, memory_mb=memory_mb, seconds=seconds, label=label, reports=reports,
                              **kwargs)
    try:
        link.report(0, None)  # the task runs: the server's backstop clock starts here
        seen = 0
        while not job.wait(0.1):
            if link.cancelled():
                job.cancel()
            if job.progress_count != seen:
                seen = job.progress_count
                link.report(seen, job.progress)
        if job.progress_count != seen:
            link.report(job.progress_count, job.progress)
        return job.result()
    finally:
        job.cancel()  # no-op once finished; kills the process when this task is left early
        link.close()


RUNNER = JobRunner(MAX_JOBS, cluster=_cluster_setting())  # the server's one line of heavy jobs


def submit(fn: Callable, *args, **kwargs) -> Job:
    """:meth:`JobRunner.submit` on the server's runner."""
    return RUNNER.submit(fn, *args, **kwargs)


def run(fn: Callable, *args, **kwargs):
    """:meth:`JobRunner.run` on the server's runner."""
    return RUNNER.run(fn, *args, **kwargs)


_ON_WAIT: contextvars.ContextVar = contextvars.ContextVar("privalab_job_on_wait", default=None)


@contextmanager
def waiting(on_wait: Callable | None):
    """``on_wait`` for the :func:`run_upload` calls inside the block (also through cached functions between)."""
    token = _ON_WAIT.set(on_wait)
    try:
        yield on_wait
    finally:
        _ON_WAIT.reset(token)


def run_upload(upload: bool, fn: Callable, *args, label: str = "", progress: Callable | None = None, **kwargs):
    """``fn(*args, **kwargs)`` in a worker of the server's runner for an uploaded data set (``upload``), in this
    process for a sample set (public, of known size: no budget needed, and sample pages stay fast). The one place
    of that rule: every page's fit and sweep of a data set goes through here.

    ``seconds``, ``memory_mb``: the job's budgets (not passed to ``fn``). ``progress``: a sweep's progress
    callable (``fn`` takes it as its ``progress`` keyword); in a worker, its calls come back through the pipe and
    are repeated here, and the job has the sweep time budget (``PRIVALAB_SWEEP_SECONDS``). The job waits with the
    ``on_wait`` of the enclosing :func:`waiting` block.
    """
    seconds, memory_mb = kwargs.pop("seconds", None), kwargs.pop("memory_mb", None)  # budgets, not fn's
    if not upload:
        return fn(*args, **kwargs) if progress is None else fn(*args, progress=progress, **kwargs)
    seconds = seconds or (SWEEP_SECONDS if progress is not None else None)
    return RUNNER.run(fn, *args, label=label, on_wait=_ON_WAIT.get(), on_progress=progress, seconds=seconds,
                      memory_mb=memory_mb, **kwargs)


def parse_upload(data: bytes, name: str, sheet: str | None = None):
    """An upload's table, as the data picker wants it (run in a worker): (DataFrame, None, None), or (None, the
    refusal (message, row, column, line), the frame with NaN when missing cells are the only problem)."""
    import io

    from engine.data import DataError, load_table

    buf = io.BytesIO(data)
    buf.name, buf.size = name, len(data)
    try:
        return load_table(buf, name=name, sheet=sheet), None, None
    except DataError as err:
        problem = (str(err), err.row, err.column, err.line)
        if err.row is None:  # not about a cell (size, structure, a bomb): the keep-missing read refuses it alike
            return None, problem, None
    try:
        raw = load_table(buf, name=name, sheet=sheet, missing="keep")
    except DataError:
        raw = None
    return None, problem, raw
