"""Local federations kept running between fits: one per party set and owner, stopped after ``idle`` seconds unused.

Why: starting a SuperLink, one SuperNode per party and their SuperExecs costs more CPU than a whole converged fit
over the run's channel (every one of those processes imports flwr: about 2 s CPU each; 3 owners start 8 of them,
10 owners 22). A page or a bench that fits several times on the same parties starts them once:

    with shared_federation(["0", "1", "2"], owner=session_id) as fed:
        CollaborativeVAR(..., transport="flower", superlink=fed.address).fit(Y)

The federation is registered with :func:`engine.federation.flower.driver.register` while it runs, so the
estimators' ``superlink=fed.address`` finds it. Lifetime: a timer stops it ``idle`` seconds after its last use
(default :data:`IDLE_SECONDS`), :func:`stop_all` stops every one (registered with ``atexit``), and a use that
raised stops it at once (a failed run may leave a party's state unknown). Uses of one federation take turns (a
lock): each fit writes its parties' files into the same directories. The parties' directories are the
federation's private temporary directory (removed when it stops); they hold the last fit's per-party input files
until then, as a fit with its own federation holds them until its end.

Written by hand: Flower has no launcher for a local federation (see :mod:`.runtime`), let alone a pool of them.
"""
from __future__ import annotations

import atexit
import threading
import time
from contextlib import contextmanager

from engine.federation.flower.driver import register, unregister
from engine.federation.flower.runtime import LocalFederation

__all__ = ["IDLE_SECONDS", "shared_federation", "stop_all"]

IDLE_SECONDS = 300.0  # a federation nobody used for this long is stopped

_LOCK = threading.Lock()
_POOL: dict[tuple, _Entry] = {}


class _Entry:
    def __init__(self, fed: LocalFederation, idle: float):
        self.fed, self.idle, self.use = fed, float(idle), threading.Lock()
        self.last_used = time.monotonic()
        self.timer: threading.Timer | None = None


def _stop(key: tuple, entry: _Entry) -> None:
    with _LOCK:
        if _POOL.get(key) is entry:
            del _POOL[key]
    if entry.timer is not None:
        entry.timer.cancel()
    unregister(entry.fed)
    entry.fed.stop()


def _expire(key: tuple, entry: _Entry) -> None:
    """The idle timer: stop the federation unless it was used (or is in use) since the timer was set."""
    if not entry.use.acquire(blocking=False):
        return  # in use: the use's end sets a new timer
    try:
        if time.monotonic() - entry.last_used >= entry.idle - 0.5:
            _stop(key, entry)
    finally:
        entry.use.release()


def _running(key: tuple, idle: float) -> _Entry:
    """The pool's live federation of ``key``, or a new one (a federation one of whose processes died is stopped)."""
    with _LOCK:
        entry = _POOL.get(key)
    if entry is not None:
        try:
            entry.fed.check_alive()
            return entry
        except Exception:  # noqa: BLE001 (a dead party or SuperLink: replaced below)
            _stop(key, entry)
    fed = LocalFederation(list(key[0]))
    try:
        fed.start()
    except BaseException:
        fed.stop()
        raise
    register(fed)
    entry = _Entry(fed, idle)
    with _LOCK:
        _POOL[key] = entry
    return entry


@contextmanager
def shared_federation(parties, owner: str = "", idle: float = IDLE_SECONDS):
    """The running local federation of ``parties`` for ``owner`` (started now if none runs or it died); see the
    module docstring."""
    key = (tuple(str(p) for p in parties), str(owner))
    entry = _running(key, idle)
    with entry.use:
        if entry.timer is not None:
            entry.timer.cancel()
        try:
            yield entry.fed
        except BaseException:
            _stop(key, entry)
            raise
        entry.last_used = time.monotonic()
        entry.timer = threading.Timer(entry.idle, _expire, (key, entry))
        entry.timer.daemon = True
        entry.timer.start()


def stop_all() -> None:
    """Stop every pooled federation (at exit, and for tests)."""
    with _LOCK:
        entries = list(_POOL.items())
    for key, entry in entries:
        _stop(key, entry)


atexit.register(stop_all)
