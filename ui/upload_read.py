"""Reading an upload in a worker (``ui.runtime.jobs.parse_upload``): cached per content, and kept across a page switch.

Why kept: the read ran inside the page's script run and was cancelled with it, so a click on a page link while a
file was still being read (a method card on Home, right after uploading a lab export) dropped the file, and the
page the user landed on showed the sample set (issue 31). Now the running read is a :class:`PendingRead` in
``st.session_state`` (one per data slot) until a data picker takes its answer: the same page's next run waits on
the same job (no second read of the file), and another page's picker (``ui.data_picker``) waits for it with its
place in line or running time and uses the file. A stop of the page (a page link, another widget) leaves the job
running; its Cancel button, another file, or another data source on the page it was uploaded on end it. The read
starts in the uploader's ``on_change`` (the data picker's ``_start_read``), before the run the upload causes draws
anything: a click that stops that run before it reaches the picker finds the read kept as well. Written here:
Streamlit keeps values across runs (``st.session_state``) but no work in progress; the job queue is ``ui.runtime.jobs``.
"""
from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable

import streamlit as st

from ui.runtime import jobs

__all__ = ["PendingRead", "try_load", "read_kept", "start_read", "finish", "reading", "drop_read", "cancel_read"]

_LOADS: OrderedDict = OrderedDict()  # (content hash, name, sheet) -> parse_upload's answer, most recent last
_LOADS_LOCK = threading.Lock()
_LOADS_MAX = 32


@dataclass(eq=False)
class PendingRead:
    """A file being read for the data slot ``slot``: its job, and what the picker it was uploaded on needs to make it
    the chosen data set (its key, kind and check; the uploader's verdict tuple)."""

    job: jobs.Job
    cache_key: tuple
    name: str
    display: str
    key: str
    kind: str | None
    check: Callable | None
    verdict: tuple


def _cache_key(data: bytes, name: str, sheet: str | None) -> tuple:
    return hashlib.sha256(data).hexdigest(), name, sheet


def _cached(key: tuple):
    with _LOADS_LOCK:
        hit = _LOADS.get(key)
        if hit is not None:
            _LOADS.move_to_end(key)
        return hit


def _remember(key: tuple, hit: tuple) -> None:
    with _LOADS_LOCK:
        _LOADS[key] = hit
        while len(_LOADS) > _LOADS_MAX:
            _LOADS.popitem(last=False)


def _refusal(err: jobs.JobError) -> tuple:
    """A read past a budget: refused with the runner's message, cached like any refusal."""
    return None, (str(err), None, None, None), None


def _copies(hit: tuple) -> tuple:
    df, problem, raw = hit  # copies: the cache is shared by every session
    return (None if df is None else df.copy()), problem, (None if raw is None else raw.copy())


def try_load(data: bytes, name: str, sheet: str | None = None, on_wait: Callable | None = None) -> tuple:
    """(DataFrame, None, None) or (None, the refusal (message, row, column, line), the frame with NaN when missing
    cells are the only problem), cached per content: a refused file (e.g. a million columns) is parsed once, not on
    every rerun or page.

    The parse runs in a worker process of ``ui.runtime.jobs`` (memory and time budget, a bounded line of jobs): a
    file past a budget is refused with the runner's message, naming the file. ``on_wait(job)`` is called while it
    waits or runs; JobCancelled (not cached) when the page stops waiting (this read is not kept: :func:`read_kept`
    is). Not ``st.cache_data``: the wait shows elements, which a cached function would record and replay.
    """
    key = _cache_key(data, name, sheet)
    hit = _cached(key)
    if hit is None:
        try:
            hit = jobs.run(jobs.parse_upload, data, name, sheet, on_wait=on_wait, label=f"Reading {name}")
        except jobs.JobCancelled:
            raise
        except jobs.JobError as err:
            hit = _refusal(err)
        _remember(key, hit)
    return _copies(hit)


def _slot_key(slot: str) -> str:
    return f"{slot}_reading"


def reading(slot: str) -> PendingRead | None:
    """The read kept for ``slot``, if any."""
    return st.session_state.get(_slot_key(slot))


def drop_read(slot: str, cancel: bool = True) -> None:
    """Forget the read kept for ``slot`` (and end its job unless ``cancel`` is False)."""
    pending = st.session_state.pop(_slot_key(slot), None)
    if pending is not None and cancel:
        pending.job.cancel()


def cancel_read(slot: str, verdict: tuple) -> None:
    """The wait's Cancel (an ``on_click``): end the kept read of that upload; the next run says it was cancelled."""
    pending = reading(slot)
    if pending is not None and pending.verdict == verdict:
        pending.job.cancel()


def read_kept(data: bytes, name: str, sheet: str | None, slot: str, *, display: str, key: str, kind: str | None,
              check: Callable | None, verdict: tuple, on_wait: Callable | None = None) -> tuple:
    """:func:`try_load`'s answer, read by a job kept for ``slot`` until it is done: a stop of this run leaves it
    running, and the next run (this page's or another page's picker, :func:`finish`) waits for the same job."""
    pending = start_read(data, name, sheet, slot, display=display, key=key, kind=kind, check=check, verdict=verdict)
    if pending is None:
        return _copies(_cached(_cache_key(data, name, sheet)))
    return finish(pending, slot, on_wait)


def start_read(data: bytes, name: str, sheet: str | None, slot: str, *, display: str, key: str, kind: str | None,
               check: Callable | None, verdict: tuple) -> PendingRead | None:
    """The read of this file kept for ``slot``: the one already running, or a new job (ending the read of another
    file); None when the answer is cached. Returns at once."""
    cache_key = _cache_key(data, name, sheet)
    if _cached(cache_key) is not None:
        return None
    pending = reading(slot)
    if pending is None or pending.cache_key != cache_key:
        drop_read(slot)  # another file replaces the one being read
        job = jobs.submit(jobs.parse_upload, data, name, sheet, label=f"Reading {name}")
        pending = PendingRead(job, cache_key, name, display, key, kind, check, verdict)
        st.session_state[_slot_key(slot)] = pending
    return pending


def finish(pending: PendingRead, slot: str, on_wait: Callable | None = None) -> tuple:
    """Wait for a kept read (``on_wait(job)`` every 0.25 s while it is not done) and return its answer, cached; it is
    then no longer kept. JobCancelled when it was cancelled. An exception from ``on_wait`` (Streamlit stopping the
    run: a page link, another widget) leaves the job running and kept."""
    job = pending.job
    while not job.wait(0.25):
        if on_wait is not None:
            on_wait(job)
    if reading(slot) is pending:
        drop_read(slot, cancel=False)
    try:
        hit = job.result()
    except jobs.JobCancelled:
        raise
    except jobs.JobError as err:
        hit = _refusal(err)
    _remember(pending.cache_key, hit)
    return _copies(hit)
