"""One widget for a page waiting on a job of ``engine.jobs``: its place in line or its running time, and Cancel.

Used by the data picker (reading an upload), by every page's fit of an uploaded data set (:func:`fit_wait`) and by
``ui.progress.Sweep`` for a sweep in a worker (:class:`SweepWait`: the place in line in the progress bar's text,
the remaining-time estimate counted from the job's start, not from the time it spent in line).

Cancel: the button's ``on_click`` records the cancellation before the rerun its click starts; the run that waits is
stopped (Streamlit's stop check, called on every look at the job, or the next element update), and
``JobRunner.run`` then cancels its job: a queued job leaves the line, a running one has its worker killed. The
rerun says so, keeps everything above the fit (data, settings) and offers "Fit again".

The fits are ``st.cache_data`` functions, which record the elements drawn while they run and replay them on a
hit, onto blocks that do not exist in that run. The wait is drawn outside that recording (:func:`_unrecorded`,
Streamlit's ``in_cached_function`` context variable; nothing to record when Streamlit lacks it). Written here
because Streamlit has no queue widget; the queue itself is ``engine.jobs``.
"""
from __future__ import annotations

import time
from contextlib import contextmanager, nullcontext

import streamlit as st

from engine import jobs


def _unrecorded():
    """Element calls inside are not recorded by a running ``st.cache_data`` function (see the module docstring)."""
    try:
        from streamlit.runtime.scriptrunner_utils.script_run_context import in_cached_function
    except ImportError:  # another Streamlit: nothing to switch off
        return nullcontext()

    @contextmanager
    def off():
        token = in_cached_function.set(False)
        try:
            yield
        finally:
            in_cached_function.reset(token)

    return off()


def stop_check() -> None:
    """Raise Streamlit's stop or rerun now when one is pending (a click on Cancel), without drawing anything."""
    try:
        from streamlit.runtime.scriptrunner_utils.script_run_context import get_run_yield_check
    except ImportError:
        return
    check = get_run_yield_check()
    if check is not None:
        check()


def wait_text(what: str, job) -> str:
    """'Fitting: 2nd in line for a worker (at most 2 files or fits at once).' while queued; its running time and
    budgets once it runs."""
    if job.position:
        return (f"{what}: {jobs.in_line(job.position)} for a worker (at most {jobs.RUNNER.max_jobs} files or fits "
                "at once).")
    run = 0.0 if job.started is None else time.monotonic() - job.started
    return f"{what}: {run:.0f} s (stopped after {job.seconds:g} s or {job.memory_mb} MB)."


class JobWait:
    """``on_wait`` of a job: after ``delay`` s, :func:`wait_text` and a Cancel button (``cancel_key``, its
    ``on_click(*args)``); :meth:`clear` removes them."""

    def __init__(self, what: str, cancel_key: str, on_click=None, args: tuple = (), delay: float = 1.0):
        self.what, self.cancel_key, self.on_click, self.args, self.delay = what, cancel_key, on_click, args, delay
        self.t0 = time.monotonic()
        self.slot = self.text = None

    def __call__(self, job) -> None:
        stop_check()
        if time.monotonic() - self.t0 < self.delay:
            return
        with _unrecorded():
            if self.slot is None:
                self.slot = st.empty()
                box = self.slot.container()
                self.text = box.empty()
                box.button("Cancel", key=self.cancel_key, on_click=self.on_click, args=self.args,
                           icon=":material/cancel:")
            self.text.info(wait_text(self.what, job), icon=":material/hourglass:")

    def clear(self) -> None:
        if self.slot is not None:
            with _unrecorded():
                self.slot.empty()


def _mark_cancelled(key: str) -> None:
    """on_click of a fit's Cancel: only a fit still waiting is cancelled (a late click cancels nothing)."""
    if st.session_state.get(f"{key}_job") == "waiting":
        st.session_state[f"{key}_job"] = "cancelled"


def _fit_again(key: str) -> None:
    st.session_state[f"{key}_job"] = None


@contextmanager
def fit_wait(key: str, what: str = "Fitting"):
    """The fits of uploads inside the block (``engine.jobs.run_upload``) wait with their place in line and Cancel.

    After Cancel the page says so and stops at this point (``st.stop``): everything above it (data, settings) is
    kept, and "Fit again" runs the fit on the next run. A sample set's fit runs in the server process and never
    waits here.
    """
    state_key = f"{key}_job"
    if st.session_state.get(state_key) == "cancelled":
        st.info(f"{what} was cancelled before it finished. The data and settings above are kept.",
                icon=":material/cancel:")
        st.button("Fit again", key=f"{key}_again", on_click=_fit_again, args=(key,), icon=":material/replay:")
        st.stop()
    st.session_state[state_key] = "waiting"
    waiter = JobWait(what, f"{key}_cancel_job", on_click=_mark_cancelled, args=(key,))
    try:
        with jobs.waiting(waiter):
            yield waiter
    except Exception:
        st.session_state[state_key] = None
        raise
    finally:
        waiter.clear()
    # a stop (Cancel, another widget) is no Exception: the state stays "waiting" or "cancelled" for the next run
    st.session_state[state_key] = None


class SweepWait:
    """``on_wait`` of a sweep in a worker: its place in line in the sweep's progress bar (a ``ui.progress`` bar,
    whose own Cancel button stops it); once it runs, the remaining-time estimate counts from its start."""

    def __init__(self, bar, what: str):
        self.bar, self.what = bar, what
        self.shown, self.running = None, False

    def __call__(self, job) -> None:
        stop_check()
        if job.position:
            text = wait_text(self.what[:1].upper() + self.what[1:], job)
        elif not self.running:
            self.running = True
            if hasattr(self.bar, "restart"):
                self.bar.restart()
            if job.progress_count:  # its first steps are shown already
                return
            text = f"Running the {self.what} in a worker (stopped after {job.seconds:g} s or {job.memory_mb} MB)"
        else:
            return
        if text != self.shown:
            self.shown = text
            with _unrecorded():
                self.bar.progress(0.0, text=text)
