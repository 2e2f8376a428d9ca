"""Sweeps behind a progress bar, with a Cancel button (one helper for every page).

Streamlit reruns the script whenever a widget is used, and a script that is still running is
stopped at its next element update (for a sweep: the next progress-bar update). So a sweep can
be cancelled by a plain button shown next to its progress bar: clicking it stops the run, the
button's ``on_click`` callback records the cancellation before the rerun starts, and the rerun
says so. Results of the last complete run stay where the page keeps them (``st.session_state``),
because a page stores a sweep's results only once the sweep has finished.

State per sweep, in ``st.session_state[f"{key}__sweep"]``:

* ``"running"`` while the ``with sweep.running(...)`` block runs; left as is when the run is
  stopped from outside (a rerun or a stop), so the next run knows it was **interrupted**;
* ``"cancelled"`` once the Cancel button was clicked (set by its callback);
* ``None`` (idle) after a complete run, an error inside the block, or once the notice was shown.

Usage, a sweep behind a button::

    sweep = Sweep("edpls_sweep", "RMSEP sweep")      # every run, before the Run button
    if st.button("Run RMSEP sweep"):
        with sweep.running("starting") as bar:
            curves = long_call(progress=lambda f, msg: bar.progress(f, text=msg))
        st.session_state["edpls_curves"] = curves   # only reached when the sweep finished

A sweep that runs by itself on every run (``auto=True``) stays paused after Cancel until the
user presses its "Run the … again" button; an interruption by another widget just reruns it::

    sweep = Sweep("attack_sweep", "attack sweep", auto=True)
    if sweep.should_run():
        with sweep.running("Running the attack sweep ...") as bar:
            ...

The Cancel button's key is ``f"{key}_cancel"`` (stable per page, for tests).

Remaining time: the bar that ``running`` yields adds an estimate to each progress text once a first part has
finished ("k=2, eps=1 · about 40 s left"): the time measured so far divided by the fraction done, times the
fraction left (:func:`remaining_seconds`, :func:`eta_text`; pure functions, tested without Streamlit).

Sweeps of an uploaded data set run in a worker of ``ui.runtime.jobs`` (``run_upload`` with ``progress=``): inside
``running``, such a job shows its place in line in the bar (``ui.jobs_view.SweepWait``), its progress comes back
through the worker's pipe, and Cancel stops the wait, which cancels the job (out of the line, or its worker
killed).
"""
from __future__ import annotations

import copy
import math
import secrets
import threading
import time
from collections import OrderedDict
from contextlib import contextmanager

import streamlit as st

from ui.jobs_view import SweepWait, _unrecorded
from ui.runtime import jobs

CANCELLED, INTERRUPTED, RUNNING = "cancelled", "interrupted", "running"


def _mark_cancelled(state_key: str) -> None:
    """on_click of the Cancel button: runs before the rerun the click triggers. A click that lands
    after the sweep's last step (it finished, results stored) cancels nothing."""
    if st.session_state.get(state_key) == RUNNING:
        st.session_state[state_key] = CANCELLED


def remaining_seconds(elapsed_s: float, fraction_done: float) -> float | None:
    """Seconds left, from the mean time per unit of progress measured so far; None before a first part has
    finished (nothing measured yet) or once everything is done."""
    if not (math.isfinite(elapsed_s) and math.isfinite(fraction_done)) or elapsed_s <= 0:
        return None
    if fraction_done <= 0 or fraction_done >= 1:
        return None
    return elapsed_s * (1.0 - fraction_done) / fraction_done


def eta_text(seconds: float | None) -> str:
    """A remaining time in words a user reads at a glance ("about 40 s left", "about 3 min left"); "" for None."""
    if seconds is None or not math.isfinite(seconds) or seconds < 0:
        return ""
    if seconds < 10:
        return "a few seconds left"
    if seconds < 60:
        return f"about {int(5 * round(seconds / 5))} s left"
    if seconds < 3600:
        minutes = seconds / 60
        if minutes < 10:
            half = round(minutes * 2) / 2
            return f"about {half:g} min left"
        return f"about {round(minutes)} min left"
    return f"about {seconds / 3600:.1f} h left"


def with_eta(text: str | None, elapsed_s: float, fraction_done: float) -> str | None:
    """``text`` with the remaining-time estimate appended (text alone while there is no estimate)."""
    eta = eta_text(remaining_seconds(elapsed_s, fraction_done))
    if not eta:
        return text
    return f"{text} · {eta}" if text else eta


class _EtaBar:
    """The progress bar of a running sweep: ``progress(value, text)`` as ``st.progress``'s, with the remaining
    time appended to the text; anything else is the bar's own."""

    def __init__(self, bar, start: float):
        self._bar, self._start = bar, start

    def progress(self, value, text: str | None = None):
        try:
            fraction = float(value) / 100 if isinstance(value, int) and not isinstance(value, bool) else float(value)
        except (TypeError, ValueError):
            fraction = math.nan
        with _unrecorded():  # drawn from inside a cached function too (a sweep point): never replayed
            return self._bar.progress(value, text=with_eta(text, time.perf_counter() - self._start, fraction))

    def restart(self) -> None:
        """Count the remaining time from now (a sweep in a worker: from its start, not from its time in line)."""
        self._start = time.perf_counter()

    def __getattr__(self, name):
        return getattr(self._bar, name)


class Sweep:
    """One cancellable sweep of a page (see the module docstring).

    key : stable prefix, unique per sweep (e.g. "edpls_sweep"); the Cancel button is ``f"{key}_cancel"``.
    what : how the messages name the sweep ("RMSEP sweep", "audit", ...).
    auto : the sweep runs on every page run by itself (no Run button): after Cancel it stays
        paused until the user restarts it.
    """

    def __init__(self, key: str, what: str = "sweep", *, auto: bool = False, notice: bool = True):
        self.key, self.what, self.auto = key, what, auto
        self.state_key = f"{key}__sweep"
        self.cancel_key = f"{key}_cancel"
        self.rerun_key = f"{key}_rerun"
        state = st.session_state.get(self.state_key)
        if state == RUNNING:  # the last run of this sweep never reached its end
            state = INTERRUPTED
        #: what happened to the last run: "cancelled", "interrupted" or None (finished / never ran)
        self.status = state
        if state == INTERRUPTED or (state == CANCELLED and not auto):
            st.session_state[self.state_key] = None  # say it once
        elif state == CANCELLED:
            st.session_state[self.state_key] = CANCELLED  # auto: paused until restarted
        self._notice_box = None
        if notice:
            self.notice()

    @property
    def cancelled(self) -> bool:
        return self.status == CANCELLED

    @property
    def interrupted(self) -> bool:
        """Stopped before its end: cancelled, or stopped by another widget or by leaving the page."""
        return self.status in (CANCELLED, INTERRUPTED)

    def message(self) -> str | None:
        if self.status == CANCELLED:
            return (f"The {self.what} was cancelled before it finished. Results of the last complete run, "
                    "if any, are kept below.")
        if self.status == INTERRUPTED and not self.auto:
            return (f"The {self.what} was interrupted before it finished (a setting was changed or the page "
                    "was left while it ran). Results of the last complete run, if any, are kept below.")
        return None

    def notice(self) -> None:
        text = self.message()
        if text:
            self._notice_box = st.empty()  # cleared when an automatic sweep is restarted
            self._notice_box.info(text, icon=":material/cancel:")

    def should_run(self) -> bool:
        """For an ``auto`` sweep: False while it is paused by Cancel; a button restarts it."""
        if self.status != CANCELLED:
            return True
        slot = st.empty()
        if slot.button(f"Run the {self.what} again", key=self.rerun_key, icon=":material/replay:"):
            slot.empty()
            st.session_state[self.state_key] = None
            self.status = None
            if self._notice_box is not None:
                self._notice_box.empty()
            return True
        return False

    @contextmanager
    def running(self, text: str = "Starting ..."):
        """Progress bar with a Cancel button next to it; yields the progress bar (its texts carry the estimated
        remaining time once a first part has finished).

        The block's end (normal or by an error) marks the sweep idle and removes bar and button;
        a stop from outside (Cancel, another widget, leaving the page) leaves the state to the next run.
        """
        st.session_state[self.state_key] = RUNNING
        self.status = None
        box = st.empty()
        with box.container():
            left, right = st.columns([6, 1], vertical_alignment="center")
            bar = left.progress(0.0, text=text)
            right.button("Cancel", key=self.cancel_key, icon=":material/cancel:",
                         help=f"Stop the {self.what}; results of the last complete run are kept.",
                         on_click=_mark_cancelled, args=(self.state_key,))
        eta_bar = _EtaBar(bar, time.perf_counter())
        try:
            # a sweep of an upload runs in a worker (ui.runtime.jobs.run_upload): its place in line shows in the bar
            with jobs.waiting(SweepWait(eta_bar, self.what)):
                yield eta_bar
        except Exception:
            st.session_state[self.state_key] = None
            box.empty()
            raise
        # Streamlit's rerun/stop signals derive from BaseException, not Exception: they pass
        # through untouched and leave the state "running" for the next run to report.
        st.session_state[self.state_key] = None
        box.empty()


# --------------------------------------------------------------------------- cached results, per session
def session_scope() -> str:
    """This browser session's cache scope: 8 random bytes (hex) kept in ``st.session_state``.

    Every cached result computed from a session's data without noise (preprocessing, noise-free references,
    plain attacks, cross-validation, parsed uploads, sweeps) takes it as part of its key, so a cache hit in
    one session never comes from another. Why: ``st.cache_data`` is shared by every session of the server
    process, and a hit is faster, so a shared noise-free cache would tell session B that some session already
    fitted the identical table (review N6). Unlike ``session_noise_key`` it stays random in teaching mode.
    The cost: a new session computes its noise-free results once (the noisy fits were per session already).
    """
    return st.session_state.setdefault("pl_cache_scope", secrets.token_hex(8))


@st.cache_resource(show_spinner=False)
def _sweep_results() -> "OrderedDict[str, object]":
    """One store per server process; its keys carry the session's :func:`session_scope`."""
    return OrderedDict()


_STORE_LOCK = threading.Lock()


def cached_sweep(name: str, compute, *key_parts, max_entries: int = 16):
    """``compute()``'s result, computed once per ``key_parts`` and session (:func:`session_scope`).

    For a sweep whose function updates a progress bar created outside it: ``st.cache_data`` records
    such element calls and, on a cache hit in another session, replays them onto a block that does not
    exist there and raises. Here nothing is replayed: a hit skips the sweep (and its progress bar). A hit comes
    only from the same session: the key holds :func:`session_scope`.
    key_parts: arrays, frames, bytes or text (e.g. ``repr`` of the parameters), hashed by content with
    :func:`engine.release.fingerprint.data_sha256`. That hash is an in-process cache key only: it stays in this
    server's memory and is never shown, stored in a report or exported (a plain hash of private data can
    be confirmed by enumerating candidates). A copy is returned, so a caller cannot alter the stored result.
    """
    from engine.release.fingerprint import data_sha256

    key = f"{name}:{session_scope()}:{data_sha256(*key_parts)}"
    store = _sweep_results()
    with _STORE_LOCK:
        if key in store:
            store.move_to_end(key)
            return copy.deepcopy(store[key])
    value = compute()  # a stop (Cancel, rerun) raises here: nothing is stored
    with _STORE_LOCK:
        store[key] = value
        while len(store) > max_entries:
            store.popitem(last=False)
    return copy.deepcopy(value)
